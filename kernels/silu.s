; @kernel     silu
; @summary    x * sigmoid(x) = x / (1 + e^-x), 1 + e^-x as an exact pair and the quotient corrected once; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  silu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=1.5 abs=0x1p-120
; @note       fp32 goal 5 instructions, 2 ULP: the short form (silu_fast, 5 instructions) rounds
; @note       e^-x, 1 + e^-x, the reciprocal and the product by x: 2.42 ULP measured. Here
; @note       1 + e^-x = hi + lo exactly (Fast2Sum on max/min), y = RN(x RN(1/hi)) and one
; @note       correction y + (x - y hi - y lo) / hi leave e^-x's rounding and one more: 13
; @note       instructions per fp32 vector, 1.38 ULP measured (2 ULP met). The correction is skipped
; @note       where its residual is NaN (x = +-inf, e^-x = inf); fp16 keeps the short form (1 ULP).
; @note       fp32: for x < -88.72, e^-x overflows and the result is -0 where the true value is
; @note       below 104 * 2^-128 in magnitude: the absolute bound covers only those.
.include "lib/act.s"

.macro silu_math N, MEM
    ACT_APPLY_PIPE \N, \MEM, SWISH_PAIR, 1    ; fp16: SWISH_EXACT
.endm

    ACT_ONE
    vbcasti.f32 v29, -1.0
    ELTWISE_1IN_PIPE silu_math
    halt
