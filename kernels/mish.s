; @kernel     mish
; @summary    x * tanh(softplus(x)) = x * n / (n + 2), n = e (e + 2), e = e^min(x, 20); fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  mish
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=5 abs=0x1p-120
; @note       ((1 + e)^2 - 1) / ((1 + e)^2 + 1) written as e (e + 2) / (e (e + 2) + 2), with
; @note       e (e + 2) = fma(e, e, 2e) rounded once: no cancellation for x << 0. x is capped at 20
; @note       for e^x (tanh(softplus(x)) rounds to 1 from x = 9 on). fp32: where e^x underflows the
; @note       result is tiny (abs tolerance 2^-120).
; @note       fp32 goal 8 instructions, 4 ULP: the quotient n / (n + 2) takes one fma correction step
; @note       (two more instructions, 10 per fp32 vector), rounded once. Bound 5 ULP: e, n, n + 2 and
; @note       the corrected quotient are each rounded to within 2^-24 relative and reach the
; @note       quotient with a weight of at most 1 (mish_fast's note); an ULP is 2^-24 of a result
; @note       just below a power of two (2^-23 at its binade's bottom), so each counts up to 1 ULP
; @note       there: 4, and the product by x 0.5 more, or up to 1 where it rounds past the power of
; @note       two: < 5 (the 4 ULP goal is not met). Measured: 3.92 ULP at x = -6.8172226
; @note       (0xc0da26b0), the worst of 39M inputs (tools/ulp_scan.py on -10..10 and -100..100,
; @note       dense around every power-of-two crossing of y); the former 4 ULP tolerance held
; @note       there by 2%. The short form (mish_fast, 8 instructions): bound 6, 4.30 measured.
; @note       fp16 takes the short form: its roundings are far
; @note       inside an fp16 ULP. x is loaded a second time for the last product instead of held
; @note       through the SFU chain (lib/eltwise.s, LIN_WIDE_X; fp16 widens it twice); where holding
; @note       x schedules as fast (fp16 on the default config) the assembler merges the repeat
; @note       (docs/scheduling.md). At 1x64x56x56 it took fp32 from 169,481 to 131,996 cycles on the
; @note       default config and 309,082 to 215,541 with SFU latency 30, fp16 from 227,432 to
; @note       171,084 with SFU latency 30.
.include "lib/lin_exp.s"

; fp32: x n / (n + 2) with the quotient corrected by one fma step (one
; rounding instead of two); fp16 takes LIN_MISH_FAST (two roundings).
.macro mish_f32 y, x, xl
    LIN_MISH_N %n\@, \x
    vaddi.f32 %d\@, %n\@, 2.0           ; d = n + 2
    vrcp.f32  %r\@, %d\@
    vmul.f32  %q\@, %n\@, %r\@          ; q = n / d, two roundings
    vfnma.f32 %e\@, %q\@, %d\@, %n\@    ; n - q d, exact
    vfma.f32  %t\@, %e\@, %r\@, %q\@    ; q + (n - q d) / d: one rounding
    vmul.f32  \y, %t\@, \xl
.endm

.macro mish_math y, x
.if DT_BYTES == 2
    LIN_WIDE_X LIN_MISH_FAST, \y, \x     ; x read again for the product
.else
    LIN_WIDE_X mish_f32, \y, \x          ; x read again for the product
.endif
.endm

    ELTWISE_1IN_LINEAR mish_math
    halt
