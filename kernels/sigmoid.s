; @kernel     sigmoid
; @summary    1 / (1 + e^-x) with 1 + e^-x kept as an exact pair and the reciprocal corrected once; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  sigmoid
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=3 abs=0x1p-126
; @note       fp32 goal 5 instructions, 2 ULP: the short form (exp, add, rcp: sigmoid_fast, 4
; @note       instructions) rounds e^-x, 1 + e^-x and 1/(1 + e^-x): bound 3, 2.48 measured. Here
; @note       1 + e^-x = hi + lo exactly (Fast2Sum on max/min, 5 instructions: the plain
; @note       lo = t - (hi - 1) is not exact once hi > 2^24) and 1/(hi + lo) = r - r (r lo),
; @note       r = RN(1/hi): 12 instructions per fp32 vector (the correction is chosen by a vsel
; @note       where r lo is not NaN). Bound 3 ULP: r - r (r lo) corrects lo but keeps r's own
; @note       rounding, so e^-x (weight < 1) and r are each off by up to 2^-24 relative; an ULP is
; @note       2^-24 of a result just below a power of two (2^-23 at its binade's bottom), so each
; @note       counts up to 1 ULP there: 2, and the last rounding 0.5 more, or up to 1 where it rounds
; @note       past the power of two: < 3 (2 within a binade, r's error being at most half an ULP of
; @note       1/hi: the 2 ULP goal holds except next to a power of two). Measured: 1.96 ULP at x =
; @note       -17.3375244 (0xc18ab340), the worst of 21M inputs (tools/ulp_scan.py on -10..10 and
; @note       -100..100, dense around every power-of-two crossing of y). A full Newton step
; @note       (r + r (1 - r hi - r lo)), one instruction more, would remove r's rounding: bound 2.
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
