; @kernel     softplus
; @summary    beta x > threshold ? x : log1p(e^(beta x)) / beta (PyTorch), log1p from ln(1 + t) plus the rounding of 1 + t; fp16 computes in fp32
; @input      x range=-10,30
; @output     y
; @param      beta 1.0 scale inside the exponential
; @param      threshold 20.0 above it (in beta x) the result is x
; @dtypes     fp16 fp32
; @split      blocks
; @reference  softplus
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=3 abs=0x1p-126
; @note       fp32 goal 7 instructions: ln(1 + t) alone loses t's low bits when t = e^(beta x) is
; @note       small (relative error 2^-24 / t); adding back c / (1 + t), c = t - (RN(1 + t) - 1),
; @note       costs two subtractions, a reciprocal (SFU: for small t, c is the whole result) and
; @note       an fma: 9 instructions per fp32 vector for beta = 1 (the threshold costs a compare and
; @note       a select of x), 11 for a power-of-two beta, 16 for any other (beta x and the division
; @note       by beta need an fma correction each; c / u joins the division's remainder, so log1p is
; @note       never rounded on its own). The threshold compares RN(beta x) for non-power-of-two
; @note       beta: a product within half an ULP of the threshold may pick the other branch.
; @note       fp32 goal 2 ULP: met for beta = 1 and powers of two (1.80 measured over 2^20 inputs).
; @note       Any other beta divides ln u, rounded by the SFU to half an ULP of itself, by beta,
; @note       which can move the result to a binade where that half ULP counts double: 2.5 measured
; @note       for beta = 0.7 and 1.702, 2.9 for 0.3 and 1.1; no ALU step recovers ln's rounding, so
; @note       the tolerance (one for every beta) stays 3. Where beta x < -87 (e^(beta x) subnormal) the
; @note       absolute tolerance 2^-126 applies. softplus_fast (5 instructions) is the short form.
; @note       beta must be positive (the caps that keep inf - inf out assume it).
; @note       Padded channels are zeroed by the skeleton (f(0) = ln 2 / beta).
; @note       x is read again for its late uses (lib/eltwise.s, LIN_WIDE_X) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): with SFU latency
; @note       30 at 1x64x56x56, fp32 258,336 -> 183,317 cycles, fp16 260,228 -> 199,101; the default
; @note       config is unchanged.
; @note       fp16 needs no correction: ln(RN(1 + t)) where t >= 2^-8, else t - t^2/2 (both within
; @note       2^-16 of log1p, lib/lin_exp.s LIN_LOG1P_HALF), one SFU step fewer per fp32 half (0.51
; @note       ULP on all 65536 inputs, 0.50 before): 1x64x56x56 fp16 152,252 -> 133,475 cycles on
; @note       the default config, 184,251 -> 146,580 with SFU latency 30. The threshold and beta
; @note       are read from scalar registers (vcles, vmuls), so no vector register holds them.
.include "lib/lin_exp.s"

; Any beta (fp32): beta x = h + l (fma) with e^(h + l) = e^h + e^h l, and the
; division by beta corrected by one fma step: q = RN(ln u RN(1/beta)), then
; q + (ln u - q beta + c / u) / beta, so log1p is never rounded on its own.
; The threshold compares h. x is floored at -2^100 so l is never inf - inf
; (the result there is 0 anyway). v28 = beta, v27 = RN(1/beta), s4 = threshold.
.macro softplus_any_f32 y, x, xl
    vmaxi.f32 %b\@, \x, -0x1p100
    vmuls.f32 %h\@, %b\@, s3          ; h = RN(beta x)
    vfms.f32  %l\@, %b\@, v28, %h\@    ; l = beta x - h, exact
    vexp.f32  %E\@, %h\@
    vfma.f32  %t\@, %E\@, %l\@, %E\@   ; t = e^h (1 + l)
    LIN_LOG1P_PARTS %ln\@, %c\@, %r\@, %t\@
    vmul.f32  %q\@, %ln\@, v27         ; q = RN(ln u RN(1/beta))
    vfnma.f32 %m\@, %q\@, v28, %ln\@   ; ln u - q beta, exact
    vfma.f32  %n\@, %c\@, %r\@, %m\@   ; + c / u: log1p - q beta, not rounded on its own
    vfma.f32  %s\@, %n\@, v27, %q\@    ; q + that / beta
    vmaxi.f32 %bl\@, \xl, -0x1p100     ; h again, from x read again (xl)
    vmuls.f32 %hl\@, %bl\@, s3
    vcles.f32 %k\@, %hl\@, s4          ; the log1p lanes
    vsel.f32  \y, %s\@, \xl, %k\@
.endm

; beta = 1 and powers of two (exact), any beta on fp16 lanes (the roundings of
; beta x and 1/beta are negligible there).
.macro softplus_one_f32 y, x, xl
    LIN_SOFTPLUS \y, \x, \xl, s4
.endm
.macro softplus_pow2_f32 y, x, xl
    LIN_SOFTPLUS_POW2 \y, \x, \xl, s4, s3, v27
.endm

.macro softplus_one y, x
    LIN_WIDE_X softplus_one_f32, \y, \x     ; x read again for the choice
.endm
.macro softplus_pow2 y, x
    LIN_WIDE_X softplus_pow2_f32, \y, \x
.endm
.macro softplus_any y, x
.if DT_BYTES == 2
    LIN_WIDE_X softplus_pow2_f32, \y, \x
.else
    LIN_WIDE_X softplus_any_f32, \y, \x
.endif
.endm

    vbcast.f32 v28, s3                   ; beta
    vrcp.f32 v27, v28                    ; 1 / beta
    lf      s7, 1.0
    beq     s3, s7, one
    li      s7, 0x7fffff
    and     s7, s3, s7
    bnez    s7, general
    ELTWISE_1IN_PAD_LINEAR softplus_pow2
    halt
one:
    ELTWISE_1IN_PAD_LINEAR softplus_one
    halt
general:
    ELTWISE_1IN_PAD_LINEAR softplus_any
    halt
