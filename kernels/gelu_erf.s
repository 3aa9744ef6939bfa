; @kernel     gelu_erf
; @summary    x * Phi(x) (exact GELU, erf form): a series for |x| < 7/8, max(x, 0) - e^(-x^2/2) H(t) beyond, t = 1/(1 + |x|/2); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  gelu_erf
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=3 zero_sign=any
; @note       zero_sign=any (fp32): below x = -14.42 the tail underflows and max(x, 0) - E H, with
; @note       max(x, 0) formed as x - min(x, 0) (+0) so that x = -inf gives NaN, is +0 where binary64
; @note       rounds to -0. A -0 there costs two more instructions per vector (min(T, max(x, -0)));
; @note       x = -0 itself gives -0 (the series), and fp16 keeps every sign (the short form).
; @note       fp32 goal 3 ULP: met, 34 instructions per fp32 vector (gelu_erf_fast: 27, 5.35 ULP).
; @note       Both forms are computed and a select picks one per lane. |x| < 7/8: x (1/2 +
; @note       x R(x^2)), R of degree 4 (2^-24.4; x R is at most 1.6 times Phi there). Beyond:
; @note       max(x, 0) - E H, E = e^(-x^2/2) from the exact split h + l, H = |x| Q(|x|) e^(x^2/2) of
; @note       degree 8 in t = 1/(1 + |x|/2) (2^-26.3), so no 1 - Q and no product by |x| is rounded:
; @note       one fnma makes the result. t's two roundings come back to first order (rr = 1 - t - t|x|/2,
; @note       one fma; H moves by kappa rr, kappa a line in t) and join l in one correction term.
; @note       Left: e^h's rounding, H's fit and Horner, R near x = -7/8, the last rounding: 2.13 ULP
; @note       on the 2^20-input sweep; 2.59 at worst over every float with 1/8 <= |x| <= 16 (x = -0.9465,
; @note       where kappa's line is least exact), from a float32 model of the chain that matches the
; @note       simulator bit for bit on the sweep. Specials as the reference: -inf gives NaN, +inf inf.
; @note       fp16 takes the short form in fp32 (LIN_GELU_ERF, 57 instructions per vector): 0.5 ULP.
; @note       The series test reads n = -a/2 (n > -7/16, exact, so the same lanes as a < 7/8): n
; @note       lives until the reciprocal's residual anyway, and a then dies early; with SFU latency 30,
; @note       fp32 527,748 -> 518,340 cycles at 1x64x56x56 (with the swing placement's relief).
; @note       x is read again for its late uses (lib/eltwise.s, LIN_X_AGAIN) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): at 1x64x56x56,
; @note       fp32 464,462 -> 445,695 cycles on the default config, 710,932 -> 635,864 with SFU
; @note       latency 30.
.include "lib/lin_erf.s"

.macro gelu_erf_math y, x
.if DT_BYTES == 2
    LIN_WIDE_X LIN_GELU_ERF, \y, \x      ; fp16: the short form is far inside 1 ULP
.else
    LIN_WIDE_X LIN_GELU_ERF_ACC, \y, \x  ; x read again for its late uses
.endif
.endm

.if DT_BYTES == 2
    LIN_GELU_ERF_INIT
.else
    LIN_GELU_ERF_ACC_INIT
.endif
    ELTWISE_1IN_LINEAR gelu_erf_math
    halt
