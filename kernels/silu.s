; @kernel     silu
; @summary    x * sigmoid(x) = x * rcp(1 + e^-x); fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @reference  silu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=3.5 abs=0x1p-120
; @note       fp32 goal 2 ULP: the roundings of e^-x, 1 + e^-x, the reciprocal and the product by x add
; @note       up to 3.5 ULP in theory (2.2 measured). An exact 1 + t (Fast2Sum) plus a corrected division would
; @note       remove two of them for 7 more instructions per vector; the kernel keeps the short form.
; @note       fp32: for x < -88.72, e^-x overflows and the result is -0 where the true value is
; @note       below 104 * 2^-128 in magnitude: the absolute bound covers only those.
.include "lib/act.s"

.macro silu_math N
    ACT_APPLY \N, SWISH_EXACT
.endm

    ACT_ONE
    vbcasti.f32 v29, -1.0
    ELTWISE_1IN silu_math
    halt
