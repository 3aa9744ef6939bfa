; @kernel     softsign
; @summary    x / (1 + |x|) as x * rcp(1 + |x|); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  softsign
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2
; @note       Three roundings (1 + |x|, the correctly rounded reciprocal, the product).
.include "lib/act.s"

; Software-pipelined (lib/eltwise.s, _PIPE). fp32: the previous outputs are
; stored first; x is read until the last product, so copy k's next input
; loads right behind its product. fp16: both halves widened at once and
; computed interleaved (eight independent chains), the next inputs loading
; once both halves are out of bank register 0.
.macro softsign_math N, MEM
.if DT_BYTES == 2
    \N\()_2 vcvtl.f32, 2, 0
    \N\()_2 vcvth.f32, 3, 0
    \MEM   4
    \MEM   5
    \N\()_2 vabs.f32, 4, 2
    \MEM   6
    \MEM   7
    \N\()_2 vabs.f32, 5, 3
    \MEM   0
    \MEM   1
    \N\()_3 vadd.f32, 4, 4, 31          ; 1 + |x|
    \MEM   2
    \MEM   3
    \N\()_3 vadd.f32, 5, 5, 31
    \N\()_2 vrcp.f32, 4, 4
    \N\()_2 vrcp.f32, 5, 5
    \N\()_3 vmul.f32, 2, 4, 2
    \N\()_3 vmul.f32, 3, 5, 3
    \N\()_3 vcvtn.f16, 1, 2, 3
.else
    \MEM   0
    \MEM   1
    \N\()_2 vabs.f32, 2, 0
    \MEM   2
    \MEM   3
    \N\()_3 vadd.f32, 2, 2, 31          ; 1 + |x|
    \N\()_2 vrcp.f32, 2, 2
    \N\()_3K vmul.f32, 1, 2, 0, 0
    \MEM   4
    \N\()_3K vmul.f32, 1, 2, 0, 1
    \MEM   5
    \N\()_3K vmul.f32, 1, 2, 0, 2
    \MEM   6
    \N\()_3K vmul.f32, 1, 2, 0, 3
    \MEM   7
.endif
.endm

    ACT_ONE
    ELTWISE_1IN_PIPE softsign_math
    halt
