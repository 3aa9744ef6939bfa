; @kernel     celu
; @summary    max(x, 0) + alpha * expm1(min(x, 0) / alpha), expm1 from exp corrected by ln; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @param      alpha 1.0 divisor scale of the negative branch
; @dtypes     fp16 fp32
; @split      blocks
; @reference  celu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2.5
; @note       alpha = 1 (the default) is elu: the linear branch rides through the expm1 chain
; @note       (LIN_ELU_PASS), 7 instructions per fp32 vector. Any other power-of-two alpha divides
; @note       exactly: 10 (max(x, 0) then waits beside the chain for the final fma).
; @note       Any other alpha: min(x, 0) / alpha is kept as y0 + ylo (remainder by fma) and
; @note       expm1(y0 + ylo) = expm1(y0) + e^y0 ylo: 13 per fp32 vector. fp16 needs neither.
; @note       fp32 goal 2 ULP: met for alpha = 1 (1.46 measured); a non-power-of-two alpha adds the
; @note       rounding of the product by alpha (2.3 measured near x = 0-).
; @note       x is read again for its late uses (lib/eltwise.s, LIN_WIDE_X) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): with SFU latency
; @note       30 at 1x64x56x56, fp32 208,299 -> 145,677 cycles, fp16 217,784 -> 167,708 (alpha = 1);
; @note       the default config is unchanged.
.include "lib/lin_exp.s"

; One fp32 vector, alpha = 1: celu is elu there, and E = x > 0 ? x : expm1(x)
; (LIN_ELU_PASS) is the result.
.macro celu_one_f32 y, x, xl
    LIN_ELU_PASS \y, \x, \xl
.endm

; One fp32 vector, alpha a power of two; v26 = alpha, v24 = 1/alpha (exact).
.macro celu_pow2_f32 y, x, xl
    vmini.f32 %m\@, \x, 0.0
    vmul.f32  %q\@, %m\@, v24           ; min(x, 0) / alpha, exact
    vmaxi.f32 %c\@, %q\@, -88.0
    LIN_EXPM1 %e\@, %c\@
    vmaxi.f32 %p\@, \xl, -0.0           ; -0 for x <= 0: the sum keeps expm1's sign
    vfma.f32  \y, %e\@, v26, %p\@       ; max(x, 0) + alpha expm1(...)
.endm

; Any alpha > 0 (fp32): min(x, 0) / alpha = y0 + ylo with y0 = RN(that) and
; ylo from the exact remainder (fma), and expm1(y0 + ylo) = expm1(y0) +
; e^y0 ylo. v24 = RN(1/alpha), v27 = -88 alpha.
.macro celu_any_f32 y, x, xl
    vmini.f32 %m\@, \x, 0.0
    vmax.f32  %c\@, %m\@, v27           ; >= -88 alpha
    vmul.f32  %y0\@, %c\@, v24          ; y0
    vfms.f32  %r\@, %y0\@, v26, %c\@    ; y0 alpha - min(x, 0), exact
    vmul.f32  %lo\@, %r\@, v24          ; -ylo
    vexp.f32  %u\@, %y0\@               ; u
    vln.f32   %l\@, %u\@
    vsub.f32  %d\@, %y0\@, %l\@
    vrsubi.f32 %w\@, %u\@, 1.0
    vfms.f32  %e0\@, %u\@, %d\@, %w\@   ; expm1(y0)
    vfnma.f32 %e\@, %u\@, %lo\@, %e0\@  ; + u ylo (the negated forms keep a zero's sign)
    vmaxi.f32 %p\@, \xl, -0.0
    vfma.f32  \y, %e\@, v26, %p\@
.endm

.macro celu_one y, x
    LIN_WIDE_X celu_one_f32, \y, \x     ; x read again for its late uses
.endm
.macro celu_pow2 y, x
    LIN_WIDE_X celu_pow2_f32, \y, \x
.endm
.macro celu_any y, x
.if DT_BYTES == 2
    LIN_WIDE_X celu_pow2_f32, \y, \x    ; fp16: the rounding of 1/alpha is negligible
.else
    LIN_WIDE_X celu_any_f32, \y, \x
.endif
.endm

    vbcast.f32 v26, s3                   ; alpha
    vrcp.f32 v24, v26                    ; 1 / alpha (exact for a power of two)
    vmuli.f32 v27, v26, -88.0            ; -88 alpha
    lf      s7, 1.0
    beq     s3, s7, one
    li      s7, 0x7fffff
    and     s7, s3, s7
    bnez    s7, general
    ELTWISE_1IN_LINEAR celu_pow2
    halt
one:
    ELTWISE_1IN_LINEAR celu_one
    halt
general:
    ELTWISE_1IN_LINEAR celu_any
    halt
