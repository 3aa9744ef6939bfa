; @kernel     safe_gelu
; @summary    gelu_erf(clamp(x, -3, 3)); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  safe_gelu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=6
; @note       The short form of gelu_erf (lib/lin_erf.s) after a clamp (two more instructions; NaN
; @note       propagates, as the reference's clamp does): see gelu_erf_fast.s for the accuracy.
; @note       x is read again for its late uses (lib/eltwise.s, LIN_X_AGAIN) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): at 1x64x56x56,
; @note       fp32 536,491 -> 456,670 cycles with SFU latency 30; the default config is unchanged.
.include "lib/lin_erf.s"

.macro safe_gelu_f32 y, x, xl
    vmaxi.f32 %lo\@, \x, -3.0
    vmini.f32 %c\@, %lo\@, 3.0
    vmaxi.f32 %lol\@, \xl, -3.0          ; the clamp again, for the late uses
    vmini.f32 %cl\@, %lol\@, 3.0
    LIN_GELU_ERF \y, %c\@, %cl\@
.endm
.macro safe_gelu_math y, x
    LIN_WIDE_X safe_gelu_f32, \y, \x
.endm

    LIN_GELU_ERF_INIT
    ELTWISE_1IN_LINEAR safe_gelu_math
    halt
