; @kernel     safe_gelu
; @summary    gelu_erf(clamp(x, -3, 3)); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  safe_gelu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=6
; @note       gelu_erf (lib/act.s) after a clamp (two more instructions; NaN propagates, as the
; @note       reference's clamp does): see gelu_erf.s for the accuracy.
.include "lib/act.s"

.macro SAFE_GELU N, o, x, a, b, c
    vbcasti.f32 v25, 3.0                 ; (v24/v25 carry gelu_erf's coefficients after)
    \N\()_3 vmax.f32, \x, \x, 26
    \N\()_3 vmin.f32, \x, \x, 25
    GELU_ERF \N, \o, \x, \a, \b, \c
.endm
.macro safe_gelu_math N, MEM
    ACT_APPLY_PIPE \N, \MEM, SAFE_GELU, 3
.endm

    ACT_ONE
    vbcasti.f32 v30, 14.5
    vbcasti.f32 v29, -0.5
    vbcasti.f32 v28, 0.5
    vbcasti.f32 v27, 0.0
    vbcasti.f32 v26, -3.0
    ELTWISE_1IN_PIPE safe_gelu_math
    halt
