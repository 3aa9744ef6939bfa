; GELU, erf form, as linear fp32 macros (`name y, x`: one vector's dataflow on
; virtual registers, for the _LINEAR skeletons of lib/eltwise.s and LIN_WIDE).
; The same math, constants and order of roundings as the hand-scheduled
; kernels had (bit-identical results); the derivations and fits follow.
;
; The short form:
; o = x Phi(x), Phi the normal CDF, from the tail q = Phi(-|x|) = e^(-x^2/2) S(|x|):
;   S(a) = t g(t), t = 1 / (1 + a/2), g a degree-10 polynomial fitted (relative
;   error 2^-25.4 on a in [0, 14.5]) for this kernel;
;   e^(-a^2/2) = e^h (1 + l) with h + l = -a^2/2 split exactly by fma, so the
;   rounding of a^2 (which e^ would multiply by a^2/2, up to 105) never enters.
; x >= 0: x (1 - q); x < 0: (x S) e^(-a^2/2), multiplied in that order so no
; intermediate goes subnormal before the result does. a is capped at 14.5
; (beyond, the result is 0 or x).
;
; The accurate form:
; o = x Phi(x) to under 3 ULP (fp32, gelu_erf): two forms, both computed, the
; series chosen per lane where |x| < 7/8 (a vsel; the hand-scheduled form used a
; predicated last product):
; * |x| < 7/8: x (1/2 + x R(x^2)), R a degree-4 polynomial for (Phi(x) - 1/2) / x,
;   relative error 2^-24.4; x R is at most 1.6 times Phi there (x = -7/8).
; * |x| >= 7/8, a = min(|x|, 14.5): x Phi(x) = max(x, 0) - E H, E = e^(-a^2/2) and
;   H = a Q(a) e^(a^2/2) (Q the upper tail) a degree-8 polynomial in
;   t = 1/(1 + a/2), relative error 2^-26.3 on a in [7/8, 14.5]. One fnma makes
;   x - E H for x > 0 (Q / (1 - Q) <= 0.24 damps E H's error) and -E H for
;   x < 0: no product by a and no 1 - Q is rounded. Two first-order corrections ride on
;   m, added as - E (H m) before - E H: l, the exact remainder of
;   -a^2/2 = h + l (e^(h + l) = e^h (1 + l)), and t's two roundings:
;   1/(1 + a/2) = t (1 + rr), rr = (1 - t) - t a/2 by one fma (1 - t is exact
;   for t >= 1/2; beyond, H hardly depends on t), which moves H by kappa rr,
;   kappa = t H'(t) / H from -1.7 at a = 7/8 to 0, fitted by a line in t to
;   0.53: m = l + kappa rr. Without kappa rr the sweep's worst is 3.13 ULP.
; max(x, 0) is formed as x - min(x, 0), so x = -inf gives NaN as the reference
; does (-inf * 0), while +inf gives inf. a is capped at 14.5 (E = 0 beyond).
; Coefficients: fitted offline with numpy, scipy's erfcx and erf as the
; binary64 truth: Lawson's iteratively reweighted least squares for the
; relative minimax error on 3000 Chebyshev points, rounded to binary32 from the
; lowest degree up with the higher ones refitted after each rounding (errors
; above are after rounding); kappa by least squares on t H'/H. A float32 model
; of this chain, bit-exact against the simulator on the fp32 sweep, picked the
; split point and degrees: 2.13 ULP on the sweep, 2.59 at worst over every
; float with 1/8 <= |x| <= 16 (x = -0.9465).
;
;   LIN_GELU_ERF y, x      the short form (27 instructions): tail formula
;                          everywhere; reads v31 (LIN_GELU_ERF_INIT)
;   LIN_GELU_ERF_ACC y, x  the accurate form (34 instructions): a series for
;                          |x| < 7/8, the corrected tail beyond; reads v29..v31
;                          (LIN_GELU_ERF_ACC_INIT)
;
; Constants are literals of the vector-immediate forms (vmini, vmuli, vfmai,
; vrsubi, vclti, ...) wherever an instruction takes one. Each polynomial's
; first Horner step, c_n t + c_(n-1), multiplies by a constant and adds
; another: c_n lives in a vector register the kernel sets once (the INIT
; macros) and the block only reads.
.include "lib/eltwise.s"

; Leading coefficients (the rest are literals below).
.equ GELU_ERF_G10, -0.039069101214408875   ; g(t), short form
.equ GELU_ERF_KAPPA1, -2.52706241607666    ; kappa(t), accurate form
.equ GELU_ERF_H8, 0.3109723925590515       ; H(t)
.equ GELU_ERF_R4, 9.277846402255818e-05    ; R(w)

.macro LIN_GELU_ERF_INIT
    vbcasti.f32 v31, GELU_ERF_G10
.endm
.macro LIN_GELU_ERF_ACC_INIT
    vbcasti.f32 v31, GELU_ERF_KAPPA1
    vbcasti.f32 v30, GELU_ERF_H8
    vbcasti.f32 v29, GELU_ERF_R4
.endm

; y = x Phi(x) from the tail q = Phi(-a) = e^(-a^2/2) t g(t), a = min(|x|,
; 14.5), t = 1 / (1 + a/2): x >= 0 gives x (1 - q), x < 0 gives (x S) E with
; S = t g(t) and E = e^(-a^2/2) = e^h (1 + l), h + l = -a^2/2 split exactly.
; xl is x again for the late uses (LIN_WIDE_X), or x: the assembler merges
; the repeat where holding x schedules as fast (docs/scheduling.md).
.macro LIN_GELU_ERF y, x, xl
    vabs.f32   %ab\@, \x
    vmini.f32  %a\@, %ab\@, 14.5
    vmuli.f32  %n\@, %a\@, -0.5             ; -a/2, exact
    vmul.f32   %h\@, %a\@, %n\@              ; h = RN(-a^2/2)
    vfms.f32   %l\@, %a\@, %n\@, %h\@        ; l = -a^2/2 - h, exact
    vexp.f32   %eh\@, %h\@
    vfma.f32   %E\@, %eh\@, %l\@, %eh\@      ; E = e^h (1 + l)
    vrsubi.f32 %d\@, %n\@, 1.0              ; 1 + a/2
    vrcp.f32   %t\@, %d\@                    ; t
    vfmai.f32  %g0\@, %t\@, v31, 0.1874707043170929
    vfmai.f32  %g1\@, %g0\@, %t\@, -0.3114001154899597
    vfmai.f32  %g2\@, %g1\@, %t\@, 0.08781144767999649
    vfmai.f32  %g3\@, %g2\@, %t\@, 0.35630109906196594
    vfmai.f32  %g4\@, %g3\@, %t\@, -0.4107499420642853
    vfmai.f32  %g5\@, %g4\@, %t\@, 0.055110108107328415
    vfmai.f32  %g6\@, %g5\@, %t\@, 0.022450176998972893
    vfmai.f32  %g7\@, %g6\@, %t\@, 0.1534142792224884
    vfmai.f32  %g8\@, %g7\@, %t\@, 0.19918093085289001
    vfmai.f32  %g\@, %g8\@, %t\@, 0.19948041439056396
    vmul.f32   %S\@, %g\@, %t\@              ; S = t g(t)
    vmul.f32   %q\@, %S\@, %E\@              ; q
    vrsubi.f32 %omq\@, %q\@, 1.0             ; 1 - q
    vmul.f32   %pos\@, %omq\@, \xl           ; x >= 0: x (1 - q)
    vmul.f32   %xs\@, %S\@, \xl
    vmul.f32   %neg\@, %xs\@, %E\@           ; x < 0: (x S) E
    vcgei.f32  %p\@, \xl, 0.0
    vsel.f32   \y, %pos\@, %neg\@, %p\@
.endm

; y = x Phi(x) to under 3 ULP (gelu_erf, fp32): the series x (1/2 + x R(x^2))
; where |x| < 7/8, else max(x, 0) - E H with H = a Q(a) e^(a^2/2) a polynomial
; in t and two first-order corrections riding on m = l + kappa rr (l from
; -a^2/2 = h + l, rr = 1 - t - t a/2 the reciprocal's error), added as
; - E (H m) before - E H. A select takes the series where it applies (the
; X4 form's predicated product). xl as in LIN_GELU_ERF.
.macro LIN_GELU_ERF_ACC y, x, xl
    vabs.f32   %ab\@, \x
    vmini.f32  %a\@, %ab\@, 14.5
    vmuli.f32  %n\@, %a\@, -0.5             ; -a/2, exact
    vcgti.f32  %ser\@, %n\@, -0.4375        ; the series form: a < 7/8 (n exact)
    vmul.f32   %h\@, %a\@, %n\@              ; h = RN(-a^2/2)
    vfms.f32   %l\@, %a\@, %n\@, %h\@        ; l = -a^2/2 - h, exact
    vexp.f32   %E\@, %h\@                    ; E = e^h
    vrsubi.f32 %d\@, %n\@, 1.0              ; 1 + a/2
    vrcp.f32   %t\@, %d\@                    ; t
    vrsubi.f32 %omt\@, %t\@, 1.0            ; 1 - t
    vfma.f32   %rr\@, %t\@, %n\@, %omt\@     ; rr = 1 - t - t a/2
    vfmai.f32  %k\@, %t\@, v31, 0.5852155089378357   ; kappa
    vfma.f32   %m\@, %k\@, %rr\@, %l\@       ; m = kappa rr + l
    vfmai.f32  %H0\@, %t\@, v30, -1.1807849407196045
    vfmai.f32  %H1\@, %H0\@, %t\@, 1.669677734375
    vfmai.f32  %H2\@, %H1\@, %t\@, -0.8716920614242554
    vfmai.f32  %H3\@, %H2\@, %t\@, 0.01359582506120205
    vfmai.f32  %H4\@, %H3\@, %t\@, -0.24544663727283478
    vfmai.f32  %H5\@, %H4\@, %t\@, -0.0943082794547081
    vfmai.f32  %H6\@, %H5\@, %t\@, -0.0003564812650438398
    vfmai.f32  %H\@, %H6\@, %t\@, 0.3989522159099579  ; H(t)
    vmul.f32   %Hm\@, %H\@, %m\@             ; H m
    vmini.f32  %mn\@, \xl, 0.0
    vsub.f32   %mx\@, \xl, %mn\@             ; max(x, 0); NaN for x = -inf
    vfnma.f32  %T1\@, %E\@, %Hm\@, %mx\@     ; - E H m
    vfnma.f32  %T\@, %E\@, %H\@, %T1\@       ; - E H: the tail form, one rounding
    vmul.f32   %w\@, \xl, \xl                ; w = x^2
    vfmai.f32  %R0\@, %w\@, v29, -0.0011674345005303621
    vfmai.f32  %R1\@, %R0\@, %w\@, 0.009966415353119373
    vfmai.f32  %R2\@, %R1\@, %w\@, -0.06648948043584824
    vfmai.f32  %R\@, %R2\@, %w\@, 0.3989422619342804  ; R(w)
    vfmai.f32  %B\@, \xl, %R\@, 0.5         ; 1/2 + x R
    vmul.f32   %s\@, \xl, %B\@               ; the series form
    vsel.f32   \y, %s\@, %T\@, %ser\@
.endm
