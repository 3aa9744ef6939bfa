; @kernel     sigmoid
; @summary    1 / (1 + e^-x) with 1 + e^-x kept as an exact pair and the reciprocal corrected once; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  sigmoid
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2 abs=0x1p-126
; @note       fp32 goal 5 instructions, 2 ULP: the short form (exp, add, rcp: sigmoid_fast, 4
; @note       instructions) rounds e^-x, 1 + e^-x and 1/(1 + e^-x): 2.16 ULP measured. Here
; @note       1 + e^-x = hi + lo exactly (Fast2Sum on max/min, 5 instructions: the plain
; @note       lo = t - (hi - 1) is not exact once hi > 2^24) and 1/(hi + lo) = r - r (r lo),
; @note       r = RN(1/hi): 12 instructions per fp32 vector (the correction is chosen by a vsel
; @note       where r lo is not NaN), 1.79 ULP measured (2 ULP met). A full Newton step
; @note       (r + r (1 - r hi - r lo)) gives 1.47.
; @note       fp16 takes the short form: its three roundings are far inside an fp16 ULP.
; @note       fp32: for x < -88.72, e^-x overflows and the result is 0 where the true value is
; @note       subnormal (below 2^-128): the absolute tolerance 2^-126 covers only those.
; @note       Padded channels are zeroed by the skeleton (f(0) = 1/2).
.include "lib/lin_sigmoid.s"

.macro sigmoid_math y, x
.if DT_BYTES == 2
    LIN_WIDE LIN_SIGMOID, \y, \x
.else
    LIN_SIGMOID_PAIR \y, \x
.endif
.endm

    ELTWISE_1IN_PAD_LINEAR sigmoid_math
    halt
