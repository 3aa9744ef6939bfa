; @kernel     gelu_erf
; @summary    x * Phi(x) (exact GELU, erf form) from Phi(-|x|) = e^(-x^2/2) t g(t), t = 1/(1 + |x|/2), fitted g; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  gelu_erf
; @bound      fp16 ulp=1
; @bound      fp32 ulp=6
; @note       fp32 goal 3 ULP: missed. The tail form has no cancellation anywhere (relative accuracy
; @note       down to x = -13, where the result underflows), and -x^2/2 is split exactly so e^ adds
; @note       half an ULP, but the chain still holds about ten roundings (1 + |x|/2, its reciprocal,
; @note       Horner, the products): 5.35 ULP measured at worst (|x| near 0.03; 4.8 for x < -2, under
; @note       1 ULP for x > 2). A float32 model of this chain splits the budget: with t = 1/(1 + |x|/2)
; @note       exact it would still reach 3.8 ULP, with t, Horner and t g(t) all exact 3.0, and only
; @note       with every step compensated 0.7. Reaching 3 takes an exact t (Fast2Sum and a Newton
; @note       step), a compensated Horner tail and double-float products, about 20 more instructions
; @note       per vector (~47), plus a series branch for |x| < 1/2; the kernel keeps 27.
.include "lib/act.s"

.macro gelu_erf_math N, MEM
    ACT_APPLY_PIPE \N, \MEM, GELU_ERF, 3
.endm

    ACT_ONE
    vbcasti.f32 v30, 14.5
    vbcasti.f32 v29, -0.5
    vbcasti.f32 v28, 0.5
    vbcasti.f32 v27, 0.0
    ELTWISE_1IN_PIPE gelu_erf_math
    halt
