; @kernel     safe_gelu
; @summary    gelu_erf(clamp(x, -3, 3)); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  safe_gelu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=6
; @note       The short form of gelu_erf (lib/lin_erf.s) after a clamp (two more instructions; NaN
; @note       propagates, as the reference's clamp does): see gelu_erf_fast.s for the accuracy.
.include "lib/lin_erf.s"

.macro safe_gelu_f32 y, x
    vmaxi.f32 %lo\@, \x, -3.0
    vmini.f32 %c\@, %lo\@, 3.0
    LIN_GELU_ERF \y, %c\@
.endm
.macro safe_gelu_math y, x
    LIN_WIDE safe_gelu_f32, \y, \x
.endm

    LIN_GELU_ERF_INIT
    ELTWISE_1IN_LINEAR safe_gelu_math
    halt
