; @kernel     tanh
; @summary    sign(x) * E / (E + 2), E = expm1(2|x|) from exp corrected by ln; fp16 computes in fp32
; @input      x range=-6,6
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  tanh
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2
; @note       fp32 goal 7 instructions, 2 ULP: 1 - 2/(1 + e^2x) cancels for small |x| (all
; @note       relative accuracy lost as x -> 0), so E = expm1(2|x|) is computed accurately: u = e^2|x|
; @note       rounded, then E = (u - 1) + u (2|x| - ln u) kept as that unevaluated pair, d = E + 2 as
; @note       RN(E_hi + 2) plus its exact remainder, and tanh = E / (E + 2) from one reciprocal with
; @note       one correction step against both pairs; the sign of x is put back last (and, or).
; @note       Only ln u's rounding and the last fma are left. Bound 2 ULP: ln u's half ULP reaches
; @note       E as a relative error of at most 2^-24 s e^s / (e^s - 1) and the quotient with a
; @note       further 2 / (E + 2), s / sinh(s) < 1 in all; an ULP is 2^-24 of a result just below a
; @note       power of two (2^-23 at its binade's bottom), so it counts up to 1 ULP there, and the
; @note       last fma 0.5 more, or up to 1 where it rounds past the power of two: < 2 (the goal
; @note       met). Measured: 1.48 ULP at x = -0.125570223 (0xbe00957b), the worst of 35M inputs
; @note       (tools/ulp_scan.py on -6..6 and -100..100, dense around every power-of-two crossing
; @note       of y), within 1.4% of the 1.5 ULP tolerance this replaces. 20
; @note       instructions per fp32 vector, three of them SFU. Rounding E and E + 2 (15 instructions)
; @note       gave 2.7 ULP, with E + 2's remainder only (18) 2.04: both roundings are magnified near
; @note       |x| = 2^-k, where the result's ULP halves. fp16 rounds E and keeps x's sign through
; @note       the chain (13 instructions per fp32 half, far inside an fp16 ULP: 0.50 ULP on all
; @note       65536 inputs), so no register holds a sign mask and x is not read again: with SFU
; @note       latency 30 at 1x64x56x56, 348,137 -> 325,938 cycles. fp32 takes the sign from x
; @note       loaded again at the end (LIN_X_AGAIN): kept in a register, x or its sign bit would
; @note       wait beside the whole chain, and the loop would run out of vector registers before
; @note       it runs out of issue slots (301,830 -> 270,470 cycles, 1x64x56x56, default config).
; @note       tanh_fast (6 instructions) is the short form.
.include "lib/lin_exp.s"

; s = 2 min(|x|, 9) (tanh(9) rounds to 1).
.macro tanh_arg s, x
    vabs.f32  %a\@, \x
    vmini.f32 %c\@, %a\@, 9.0
    vadd.f32  \s, %c\@, %c\@
.endm

; fp16 path, one fp32 half: y = tanh(x) = E / (E + 2), E = expm1(s) rounded,
; s = 2 x clamped to [-18, 18], the sign kept through the chain: for x < 0,
; E is in (-1, 0) and E + 2 in (1, 2), where the quotient's sensitivity to
; E's error is at most 2 (at most 1 for E >= 0), some 2^-21 of the result
; against an fp16 ULP of 2^-10. The quotient takes one fma correction step
; (one rounding instead of two).
.macro tanh_signed_f32 y, x
    vmaxi.f32 %a\@, \x, -9.0
    vmini.f32 %c\@, %a\@, 9.0
    vadd.f32  %s\@, %c\@, %c\@
    LIN_EXPM1 %E\@, %s\@
    vaddi.f32 %d\@, %E\@, 2.0           ; d = E + 2
    vrcp.f32  %r\@, %d\@
    vmul.f32  %q\@, %E\@, %r\@          ; E / d, two roundings
    vfms.f32  %e\@, %q\@, %d\@, %E\@     ; q d - E, exact
    vfnma.f32 \y, %e\@, %r\@, %q\@      ; q - (q d - E) / d: one rounding, and
                                        ; -0 for x = -0 (q = -0, q d - E = +0)
.endm

; fp32 path: E = E_hi + E_lo = (u - 1) + u (s - ln u) and E + 2 = d + d_lo,
; both exact pairs, and the quotient corrected once against both, so neither
; E nor E + 2 is rounded. Past |x| = 8.3 (u > 2^24) u - 1 and d - 2 may
; round, where tanh is within 2^-23 of 1: the result stays within an ULP.
; v26 = sign mask (i32 0x80000000).
.macro tanh_pair_f32 y, x
    tanh_arg  %s\@, \x
    LIN_X_AGAIN %xl\@                   ; x again: its sign is needed last
    vand.i32  %sg\@, %xl\@, v26          ; sign of x
    vexp.f32  %u\@, %s\@                ; u
    vln.f32   %l\@, %u\@
    vsub.f32  %g\@, %s\@, %l\@          ; s - ln u, exact
    vsubi.f32 %Eh\@, %u\@, 1.0          ; E_hi = u - 1, exact (1 <= u <= 2^24)
    vmul.f32  %El\@, %u\@, %g\@         ; E_lo = u (s - ln u)
    vaddi.f32 %d\@, %Eh\@, 2.0          ; d = RN(E_hi + 2)
    vsubi.f32 %d2\@, %d\@, 2.0          ; d - 2, exact (d <= 2^24)
    vsub.f32  %dr\@, %Eh\@, %d2\@       ; E_hi + 2 - d, exact
    vadd.f32  %dl\@, %dr\@, %El\@       ; d_lo: E + 2 = d + d_lo
    vrcp.f32  %r\@, %d\@                ; 1/d
    vmul.f32  %q\@, %Eh\@, %r\@         ; q = E_hi / d, two roundings
    vfnma.f32 %e1\@, %q\@, %d\@, %Eh\@  ; E_hi - q d, exact
    vadd.f32  %e2\@, %e1\@, %El\@       ; + E_lo
    vfnma.f32 %e3\@, %q\@, %dl\@, %e2\@ ; - q d_lo: E - q (E + 2)
    vfma.f32  %t\@, %e3\@, %r\@, %q\@   ; q + that / d: one rounding
    vor.i32   \y, %t\@, %sg\@           ; sign(x) tanh(|x|)
.endm

; fp16: both halves' tanh(x), narrowed once.
.macro tanh_math y, x
.if DT_BYTES == 2
    LIN_WIDE  tanh_signed_f32, \y, \x
.else
    tanh_pair_f32 \y, \x
.endif
.endm

    vbcasti.i32 v26, 0x80000000
    ELTWISE_1IN_LINEAR tanh_math
    halt
