; @kernel     sigmoid_fast
; @summary    1 / (1 + e^-x): exp, add, rcp, each rounded: the short form of sigmoid; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  sigmoid
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2.5 abs=0x1p-126
; @note       4 instructions per fp32 vector (goal 5): the roundings of e^-x, 1 + e^-x and the
; @note       reciprocal add up to 2.5 ULP in theory, 2.16 measured over 2^20 inputs. sigmoid
; @note       (12 instructions) keeps 1 + e^-x as an exact pair and corrects the reciprocal: 1.79 ULP.
; @note       fp32: for x < -88.72, e^-x overflows and the result is 0 where the true value is
; @note       subnormal (below 2^-128): the absolute tolerance 2^-126 covers only those. fp16: 1 ULP.
; @note       Padded channels are zeroed by the skeleton (f(0) = 1/2).
.include "lib/lin_sigmoid.s"

.macro sigmoid_fast_math y, x
    LIN_WIDE LIN_SIGMOID, \y, \x
.endm

    ELTWISE_1IN_PAD_LINEAR sigmoid_fast_math
    halt
