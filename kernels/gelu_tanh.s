; @kernel     gelu_tanh
; @summary    GELU, tanh form, as x * sigmoid(2z) = x / (1 + e^(-2z)), z = sqrt(2/pi)(x + 0.044715 x^3); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  gelu_tanh
; @tolerance  fp16 ulp=1 abs=0x1p-24
; @tolerance  fp32 ulp=3 abs=0x1p-24
; @note       fp16 I/O widens to fp32 inside (vcvtl/vcvth ... vcvtn), as production GELU kernels keep
; @note       their constants in fp32: two fp32 halves cost 17 instructions per fp16 vector instead of 7.
; @note       For x << 0 the result is x * e^(-2|z|): the rounding error of -2z (a few ULP) is multiplied
; @note       by |2z| in e^(-2z), so the ULP tolerance holds only where the result is not tiny; there the
; @note       absolute tolerance 2^-24 applies instead.
; @note       x is read again for the product (lib/eltwise.s, LIN_WIDE_X) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): with SFU latency
; @note       30 at 1x64x56x56, fp32 170,853 -> 116,267 cycles, fp16 180,342 -> 136,638; the default
; @note       and edge configs are unchanged.
.include "lib/eltwise.s"

; -2z = x * (A + B x^2) with A = -2 sqrt(2/pi), B = -2 * 0.044715 * sqrt(2/pi)
.equ SQRT_2_OVER_PI, 0.7978845608028654
.equ GELU_A, -2.0 * SQRT_2_OVER_PI
.equ GELU_B, -2.0 * 0.044715 * SQRT_2_OVER_PI

; One fp32 vector: y = x * sigmoid(2z) = x / (1 + e^(-2z)); v29, v28 hold B, A.
.macro gelu_tanh_f32 y, x, xl
    vmul.f32  %sq\@, \x, \x               ; x^2
    vfma.f32  %p\@, %sq\@, v29, v28        ; A + B x^2
    vmul.f32  %z\@, %p\@, \x               ; -2z
    vexp.f32  %e\@, %z\@                    ; e^(-2z)
    vaddi.f32 %d\@, %e\@, 1.0               ; 1 + e^(-2z)
    vrcp.f32  %r\@, %d\@                    ; sigmoid(2z)
    vmul.f32  \y, %r\@, \xl                ; x * sigmoid(2z)
.endm

.macro gelu_tanh_math y, x
    LIN_WIDE_X gelu_tanh_f32, \y, \x  ; x read again for the product
.endm

    vbcasti.f32 v29, GELU_B
    vbcasti.f32 v28, GELU_A
    ELTWISE_1IN_LINEAR gelu_tanh_math
    halt
