; The sigmoid family's fp32 math in linear form (lib/eltwise.s, the _LINEAR
; skeletons and LIN_WIDE): each macro is one vector's dataflow on virtual
; registers, `name y, x, ...`, with its temporaries named per expansion
; (`%t\@`), so the assembler schedules it for the machine. Constants are
; literals (vaddi, vmuli, vmini ...) wherever the instruction set has the
; form, so they take no vector register; a constant that is a multiplier
; inside an fma is a vector register the kernel sets.
;
; The roundings are those of the hand-scheduled kernels these replace, step
; for step, so results are bit-identical to them. One difference in form: a
; linear block cannot write a virtual register under a merging mask, so the
; correction steps that were skipped by a predicate (where the residual is
; NaN) are computed everywhere and chosen by a vsel: one instruction more.
;
; x * sigmoid(k x) needs x again at its very end, after two SFU latencies
; (e^, then the reciprocal): kept in a register, x alone would hold a third
; of the register file once the SFU is slow, and the loop's II would rise to
; make room. So the swish forms take x twice, `name y, x, xl`: x for the
; sigmoid and xl, the same values, for the late uses. A kernel passes x as
; xl, or reads the input again (lib/eltwise.s: LIN_X_AGAIN, LIN_WIDE_X): a
; load is cheap where the SFU binds, and the value it gives lives a few cycles.
.include "lib/eltwise.s"

; ---- sigmoid ---------------------------------------------------------------
; y = 1 / (1 + e^-x), with e^-x, 1 + e^-x and the reciprocal each rounded.
.macro LIN_SIGMOID y, x
    vneg.f32  %n\@, \x
    vexp.f32  %t\@, %n\@                ; e^-x
    vaddi.f32 %d\@, %t\@, 1.0
    vrcp.f32  \y, %d\@
.endm

; 1 + t = hi + lo exactly: Fast2Sum on max(1, t) and min(1, t) (the plain
; lo = t - (hi - 1) is not exact once hi > 2^24).
.macro LIN_ONE_PLUS_PAIR hi, lo, t
    vaddi.f32 \hi, \t, 1.0              ; hi = RN(1 + t)
    vmaxi.f32 %mx\@, \t, 1.0
    vsub.f32  %c\@, \hi, %mx\@          ; hi - max(1, t), exact
    vmini.f32 %mn\@, \t, 1.0
    vsub.f32  \lo, %mn\@, %c\@          ; lo = min(1, t) - that, exact
.endm

; y = sigmoid(x) to under 2 ULP: 1 + e^-x = hi + lo (LIN_ONE_PLUS_PAIR) and
; 1 / (hi + lo) = r - r (r lo) to first order, r = RN(1/hi), so the rounding
; of 1 + e^-x never enters. Where r lo is NaN (e^-x = inf, x < -88.7) the
; result is r (0 there).
.macro LIN_SIGMOID_PAIR y, x
    vneg.f32  %n\@, \x
    vexp.f32  %t\@, %n\@                ; t = e^-x
    LIN_ONE_PLUS_PAIR %hi\@, %lo\@, %t\@
    vrcp.f32  %r\@, %hi\@               ; r = RN(1/hi)
    vmul.f32  %c\@, %r\@, %lo\@         ; r lo
    vceq.f32  %ok\@, %c\@, %c\@
    vfnma.f32 %f\@, %c\@, %r\@, %r\@    ; r - r (r lo)
    vsel.f32  \y, %f\@, %r\@, %ok\@
.endm

; ---- swish: x * sigmoid(k x) -------------------------------------------------
; y = x * sigmoid(k x) = x * RN(1 / RN(1 + e^(-k x))), each step rounded:
; `\mul %a, x, nk` forms -k x (exact when k is a power of two), e.g.
; `vmuli.f32, -1.0`, `vmul.f32, v29` or `vmuls.f32, s6`; xl is x again.
.macro LIN_SWISH y, x, xl, mul, nk
    \mul      %a\@, \x, \nk             ; -k x
    vexp.f32  %t\@, %a\@
    vaddi.f32 %d\@, %t\@, 1.0
    vrcp.f32  %r\@, %d\@
    vmul.f32  \y, %r\@, \xl
.endm

; y = x / (1 + t) to about an ULP, from the pair 1 + t = hi + lo (x given
; as xl): y0 = RN(x RN(1/hi)) and one correction step
; y0 + (x - y0 hi - y0 lo) / hi, one rounding. Where the residual is NaN
; (t = inf: y0 = -0; x = +-inf: y0 is right) the result is y0.
.macro LIN_QUOTIENT_PAIR y, xl, hi, lo
    vrcp.f32  %r\@, \hi                 ; r = RN(1/hi)
    vmul.f32  %y0\@, \xl, %r\@          ; y0 = RN(x r)
    vfms.f32  %e\@, %y0\@, \hi, \xl     ; y0 hi - x, exact
    vfma.f32  %R\@, %y0\@, \lo, %e\@    ; -R = y0 (hi + lo) - x
    vceq.f32  %ok\@, %R\@, %R\@
    vfnma.f32 %f\@, %R\@, %r\@, %y0\@   ; y0 + R / hi (negated: y0 = -0 stays -0)
    vsel.f32  \y, %f\@, %y0\@, %ok\@
.endm

; y = x * sigmoid(k x) to about an ULP, k a power of two (-k x exact):
; t = e^(-k x), 1 + t = hi + lo exactly, the quotient x / (hi + lo) corrected
; once (LIN_QUOTIENT_PAIR). \mul, \nk as in LIN_SWISH.
.macro LIN_SWISH_PAIR y, x, xl, mul, nk
    \mul      %a\@, \x, \nk             ; -k x, exact
    vexp.f32  %t\@, %a\@                ; t
    LIN_ONE_PLUS_PAIR %hi\@, %lo\@, %t\@
    LIN_QUOTIENT_PAIR \y, \xl, %hi\@, %lo\@
.endm

; The head of -k x = h + l for any k: b = x capped at \xcap (88 / k) by \cap
; (vmini.f32 for k > 0, vmaxi.f32 for k < 0; or their register forms), and
; h = RN(-k b) capped at 88, so e^h stays finite below the cap and the
; remainder l = -k b - h (one fms, exact while h is not capped) is never
; inf - inf. v29 = -k (a multiplier inside the fms: a register).
.macro LIN_SPLIT_H h, b, x, cap, xcap
    \cap      \b, \x, \xcap
    vmul.f32  %p\@, \b, v29             ; RN(-k x)
    vmini.f32 \h, %p\@, 88.0
.endm

; y = x * sigmoid(k x) for a constant k > 0 that is not a binary32, given as
; the pair -k = v29 + \klo: -k x = h + l (LIN_SPLIT_H, with \klo x joining l)
; and e^(h + l) = e^h (1 + l) to well below an ULP, so the rounding of k x
; (which e^ would multiply by |k x|) never enters.
.macro LIN_SWISH_SPLIT y, x, xl, xcap, klo
    LIN_SPLIT_H %h\@, %b\@, \x, vmini.f32, \xcap
    vfms.f32  %c\@, %b\@, v29, %h\@     ; -k_hi x - h, exact
    vfma.f32  %l\@, %b\@, \klo, %c\@    ; l = that + (-k_lo) x
    vexp.f32  %E\@, %h\@                ; e^h
    vaddi.f32 %d\@, %E\@, 1.0           ; 1 + e^h
    vfma.f32  %s\@, %E\@, %l\@, %d\@    ; 1 + e^h + e^h l
    vrcp.f32  %r\@, %s\@
    vmul.f32  \y, %r\@, \xl
.endm

; y = x * sigmoid(k x) for any k to about an ULP: -k x = h + l (LIN_SPLIT_H),
; t = e^h (1 + l) by an fma whose rounding error is kept (E - t exact, then
; fma(E, l, E - t)) and joins the exact pair 1 + t = hi + lo, then the
; corrected quotient (LIN_QUOTIENT_PAIR). Where h is capped (x beyond -88/k)
; t overflows and the result is x * 0. \cap, \xcap as LIN_SPLIT_H.
.macro LIN_SWISH_SPLIT_PAIR y, x, xl, cap, xcap
    LIN_SPLIT_H %h\@, %b\@, \x, \cap, \xcap
    vfms.f32  %l\@, %b\@, v29, %h\@     ; l = -k x - h, exact
    vexp.f32  %E\@, %h\@                ; E = e^h
    vfma.f32  %t\@, %E\@, %l\@, %E\@    ; t = RN(E (1 + l))
    vsub.f32  %g\@, %E\@, %t\@          ; E - t, exact
    vfma.f32  %err\@, %E\@, %l\@, %g\@  ; t's rounding error: E l + E - t
    LIN_ONE_PLUS_PAIR %hi\@, %lo0\@, %t\@
    vadd.f32  %lo\@, %lo0\@, %err\@     ; lo: 1 + e^(-k x) = hi + lo
    LIN_QUOTIENT_PAIR \y, \xl, %hi\@, %lo\@
.endm
