; @kernel     hardsigmoid
; @summary    clamp((x + 3) / 6, 0, 1) as min(max((x + 3) * RN(1/6), 0), 1); fp16 computes in fp32
; @input      x range=-5,5
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  hardsigmoid
; @bound      fp16 ulp=1
; @bound      fp32 ulp=1.5
; @note       (x + 3) is exact near x = -3, where the result goes to 0, so the error stays relative:
; @note       at most the roundings of x + 3 and of the product plus the error of RN(1/6).
; @note       Padded channels are zeroed by the skeleton (f(0) = 1/2).
.include "lib/act.s"

; Software-pipelined (lib/eltwise.s, _PIPE). fp32: copy by copy, x + 3 frees
; x (the next input loads behind it) and the output is written last, after
; its previous value is stored. fp16: both halves widened at once and
; computed interleaved (eight independent chains), the next inputs loading
; once both halves are out of bank register 0.
.macro hsig_math N, MEM
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
    \N\()_3 vmul.f32, 4, 4, 28          ; * RN(1/6)
    \MEM   2
    \MEM   3
    \N\()_3 vmul.f32, 5, 5, 28
    \N\()_3 vmax.f32, 4, 4, 30
    \N\()_3 vmax.f32, 5, 5, 30
    \N\()_3 vmin.f32, 2, 4, 31
    \N\()_3 vmin.f32, 3, 5, 31
    \N\()_3 vcvtn.f16, 1, 2, 3
.else
    \N\()_3 vadd.f32, 2, 0, 29          ; x + 3
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
    \N\()_3 vmul.f32, 2, 2, 28          ; * RN(1/6)
    \MEM   0
    \MEM   1
    \MEM   2
    \MEM   3
    \N\()_3 vmax.f32, 2, 2, 30
    \N\()_3 vmin.f32, 1, 2, 31
.endif
.endm

; fp32 in two stages (lib/eltwise.s, _PIPE2): stage one forms (x + 3) *
; RN(1/6) of group i (x + 3 in bank register 4, so x is dead at once and
; the product goes to 2), stage two clamps group i-1's (reading 2 before
; stage one writes it). One copy at a time, each copy's steps four cycles
; apart: the loop issues a memory instruction every cycle. fp16 keeps the
; one-stage form (VALU-bound already).
.macro hsig_loop N, MEM, S
.if \S != 2
    X4_3K vadd.f32, 4, 0, 29, 0          ; stage one: x + 3
.endif
.if \S != 1
    X4_3K vmax.f32, 3, 2, 30, 0          ; stage two: max(., 0)
.endif
    \MEM   4
.if \S != 2
    X4_3K vadd.f32, 4, 0, 29, 1
.endif
.if \S != 1
    X4_3K vmax.f32, 3, 2, 30, 1
.endif
    \MEM   5
.if \S != 2
    X4_3K vadd.f32, 4, 0, 29, 2
.endif
.if \S != 1
    X4_3K vmax.f32, 3, 2, 30, 2
.endif
    \MEM   6
.if \S != 2
    X4_3K vadd.f32, 4, 0, 29, 3
.endif
.if \S != 1
    X4_3K vmax.f32, 3, 2, 30, 3
.endif
    \MEM   7
    \MEM   0
.if \S != 2
    X4_3K vmul.f32, 2, 4, 28, 0          ; * RN(1/6), handed over in 2
.endif
.if \S != 1
    X4_3K vmin.f32, 1, 3, 31, 0          ; min(., 1)
.endif
    \MEM   1
.if \S != 2
    X4_3K vmul.f32, 2, 4, 28, 1
.endif
.if \S != 1
    X4_3K vmin.f32, 1, 3, 31, 1
.endif
    \MEM   2
.if \S != 2
    X4_3K vmul.f32, 2, 4, 28, 2
.endif
.if \S != 1
    X4_3K vmin.f32, 1, 3, 31, 2
.endif
    \MEM   3
.if \S != 2
    X4_3K vmul.f32, 2, 4, 28, 3
.endif
.if \S != 1
    X4_3K vmin.f32, 1, 3, 31, 3
.endif
.endm
.macro hsig_plain N
    hsig_math \N, ELT_MEM_NONE
.endm

    ACT_ONE
    vbcasti.f32 v30, 0.0
    vbcasti.f32 v29, 3.0
    vbcasti.f32 v28, 1.0 / 6.0
.if DT_BYTES == 2
    ELTWISE_1IN_PAD_PIPE hsig_math
.else
    ELTWISE_1IN_PAD_PIPE2 hsig_loop, hsig_plain
.endif
    halt
