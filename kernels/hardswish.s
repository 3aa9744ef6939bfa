; @kernel     hardswish
; @summary    x * clamp(x + 3, 0, 6) / 6 as (x * RN(1/6)) * min(max(x + 3, 0), 6); fp16 computes in fp32
; @input      x range=-5,5
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  hardswish
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2.5
; @note       Four roundings (x + 3, the RN(1/6) constant, two products), each relative to the result.
.include "lib/act.s"

; Software-pipelined (lib/eltwise.s, _PIPE). fp32: x's two uses first, so
; the next input loads early; the output is written last, after its previous
; value is stored. fp16: both halves widened at once and computed
; interleaved (eight independent chains); each half needs two registers, as
; x * RN(1/6) goes back into x.
.macro hswish_math N, MEM
.if DT_BYTES == 2
    \N\()_2 vcvtl.f32, 2, 0
    \N\()_2 vcvth.f32, 3, 0
    \MEM   4
    \MEM   5
    \N\()_3 vadd.f32, 4, 2, 29          ; x + 3
    \MEM   6
    \MEM   7
    \N\()_3 vadd.f32, 5, 3, 29
    \MEM   0
    \MEM   1
    \N\()_3 vmul.f32, 2, 2, 28          ; x * RN(1/6)
    \MEM   2
    \MEM   3
    \N\()_3 vmul.f32, 3, 3, 28
    \N\()_3 vmax.f32, 4, 4, 30
    \N\()_3 vmax.f32, 5, 5, 30
    \N\()_3 vmin.f32, 4, 4, 27          ; clamp(x + 3, 0, 6)
    \N\()_3 vmin.f32, 5, 5, 27
    \N\()_3 vmul.f32, 2, 4, 2
    \N\()_3 vmul.f32, 3, 5, 3
    \N\()_3 vcvtn.f16, 1, 2, 3
.else
    \N\()_3 vadd.f32, 2, 0, 29          ; x + 3
    \N\()_3 vmul.f32, 3, 0, 28          ; x * RN(1/6)
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
    \N\()_3 vmax.f32, 2, 2, 30
    \MEM   0
    \MEM   1
    \MEM   2
    \MEM   3
    \N\()_3 vmin.f32, 2, 2, 27          ; clamp(x + 3, 0, 6)
    \N\()_3 vmul.f32, 1, 2, 3
.endif
.endm

    vbcasti.f32 v30, 0.0
    vbcasti.f32 v29, 3.0
    vbcasti.f32 v28, 1.0 / 6.0
    vbcasti.f32 v27, 6.0
    ELTWISE_1IN_PIPE hswish_math
    halt
