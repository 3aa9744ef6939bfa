; @kernel     gelu_erf
; @summary    x * Phi(x) (exact GELU, erf form) from Phi(-|x|) = e^(-x^2/2) t g(t), t = 1/(1 + |x|/2), fitted g; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @reference  gelu_erf
; @bound      fp16 ulp=1
; @bound      fp32 ulp=6
; @note       fp32 goal 3 ULP: missed. The tail form has no cancellation anywhere (relative accuracy
; @note       down to x = -13, where the result underflows), and -x^2/2 is split exactly so e^ adds
; @note       half an ULP, but the chain still holds about ten roundings (1 + |x|/2, its reciprocal,
; @note       Horner, the products): 5.5 ULP measured at worst, under 1 ULP for x > 2. A compensated
; @note       reciprocal and a Horner step in double-float would buy about 2 ULP for ~8 instructions.
; @note       27 instructions per fp32 vector; the 11 coefficients are broadcast as they are used.
.include "lib/act.s"

.macro gelu_erf_math N
    ACT_APPLY \N, GELU_ERF
.endm

    ACT_ONE
    vbcasti.f32 v30, 14.5
    vbcasti.f32 v29, -0.5
    vbcasti.f32 v28, 0.5
    vbcasti.f32 v27, 0.0
    ELTWISE_1IN gelu_erf_math
    halt
