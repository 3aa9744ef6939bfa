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

.macro HSIG N, o, x, a, b, c
    \N\()_3 vadd.f32, \a, \x, 29        ; x + 3
    \N\()_3 vmul.f32, \a, \a, 28        ; * RN(1/6)
    \N\()_3 vmax.f32, \a, \a, 30
    \N\()_3 vmin.f32, \o, \a, 31
.endm
.macro hsig_math N
    ACT_APPLY \N, HSIG
.endm

    ACT_ONE
    vbcasti.f32 v30, 0.0
    vbcasti.f32 v29, 3.0
    vbcasti.f32 v28, 1.0 / 6.0
    ELTWISE_1IN_PAD hsig_math
    halt
