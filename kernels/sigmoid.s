; @kernel     sigmoid
; @summary    1 / (1 + e^-x): exp, add, rcp; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @reference  sigmoid
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2.5 abs=0x1p-126
; @note       fp32 goal 2 ULP: the roundings of e^-x, 1 + e^-x and the reciprocal add up to 2.5 ULP
; @note       in theory (2.2 measured). An exact 1 + t (Fast2Sum) plus a Newton correction would
; @note       remove one of them for 6-7 more instructions per vector; the kernel keeps the short form.
; @note       fp32: for x < -88.72, e^-x overflows and the result is 0 where the true value is
; @note       subnormal (below 2^-128): the absolute bound 2^-126 covers only those.
; @note       Padded channels are zeroed by the skeleton (f(0) = 1/2).
.include "lib/act.s"

.macro sigmoid_math N
    ACT_APPLY \N, SIGMOID
.endm

    ACT_ONE
    ELTWISE_1IN_PAD sigmoid_math
    halt
