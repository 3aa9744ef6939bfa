; @kernel     selu
; @summary    scale * max(x, 0) + RN(scale * alpha) * expm1(min(x, 0)), expm1 from exp corrected by ln; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  selu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2
; @note       As elu (the linear branch rides through the expm1 chain), plus a multiply by scale on
; @note       the linear half and scale * alpha kept as a binary32 pair (two fmas) so the constant
; @note       adds no rounding: 12 instructions per fp32 vector.
; @note       x is read again for its late uses (lib/eltwise.s, LIN_WIDE_X) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): with SFU latency
; @note       30 at 1x64x56x56, fp32 247,048 -> 203,193 cycles, fp16 274,822 -> 230,918; the default
; @note       config is unchanged.
.include "lib/lin_exp.s"

.equ SELU_ALPHA, 1.6732632423543772848170429916717
.equ SELU_SCALE, 1.0507009873554804934193349852946
.equ SELU_SA_HI, 1.7580993175506592     ; RN32(scale * alpha)

; One fp32 vector: E = x > 0 ? x : expm1(x) (LIN_ELU_PASS), then
; scale max(E, 0) + (hi + lo) min(E, 0); v26, v24 = hi, lo of scale * alpha.
.macro selu_f32 y, x, xl
    LIN_ELU_PASS %e\@, \x, \xl
    vmuli.f32 %t\@, %e\@, SELU_SCALE
    vmaxi.f32 %s\@, %t\@, -0.0          ; scale max(x, 0), -0 for x <= 0
    vmini.f32 %n\@, %e\@, 0.0           ; expm1(min(x, 0))
    vfma.f32  %l\@, %n\@, v24, %s\@     ; + expm1 lo(scale alpha)
    vfma.f32  \y, %n\@, v26, %l\@       ; + expm1 hi(scale alpha): one rounding
.endm

.macro selu_math y, x
    LIN_WIDE_X selu_f32, \y, \x         ; x read again for c (LIN_ELU_PASS)
.endm

    vbcasti.f32 v26, SELU_SA_HI
    vbcasti.f32 v24, SELU_SCALE * SELU_ALPHA - SELU_SA_HI
    ELTWISE_1IN_LINEAR selu_math
    halt
