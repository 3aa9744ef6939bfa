; @kernel     sparse_gelu
; @summary    x < threshold ? 0 : gelu_erf(x); fp16 computes in fp32
; @input      x range=-4,4
; @output     y
; @param      threshold 0.0 inputs below it give 0
; @dtypes     fp16 fp32
; @split      blocks
; @reference  sparse_gelu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=6
; @note       Lanes below the threshold are replaced by -20 before gelu_erf, whose result there is
; @note       -0 (two instructions, no select after). See gelu_erf.s for the accuracy. A positive
; @note       threshold makes f(0) = -0, so the skeleton zeroes padded channels.
.include "lib/act.s"

.macro SPARSE_GELU N, o, x, a, b, c
    \N\()_C vclt.f32, 1, \x, 26
    vbcasti.f32 v25, -20.0                   ; (v24/v25 carry gelu_erf's coefficients after)
    \N\()_3P vsel.f32, \x, 25, \x, 1
    GELU_ERF \N, \o, \x, \a, \b, \c
.endm
.macro sparse_gelu_math N, MEM
    ACT_APPLY_PIPE \N, \MEM, SPARSE_GELU, 3
.endm

    ACT_ONE
    vbcasti.f32 v30, 14.5
    vbcasti.f32 v29, -0.5
    vbcasti.f32 v28, 0.5
    vbcasti.f32 v27, 0.0
    vbcast.f32 v26, s3                   ; threshold
    ELTWISE_1IN_PAD_PIPE sparse_gelu_math
    halt
