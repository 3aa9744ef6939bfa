; Shared math of the activation kernels, written once for fp32 lanes and
; used by the fp32 path (four interleaved vectors) and by the fp16 path,
; which widens each half of a vector to fp32, computes, and narrows once
; (vcvtl/vcvth ... vcvtn), so fp16 results carry one rounding.
;
; A math macro here has the signature `name N, o, x, a, b, c`: N is the width
; (X4 or X1, lib/x4.s), o the bank register that receives f(x), x the input,
; a, b, c bank temporaries. o may be x (it is written last); x may be
; clobbered. Predicated steps use p1..p4 (one per copy). Shared constants:
; v31 = 1.0 always (ACT_ONE sets it); others are named per macro.
.include "lib/eltwise.s"

.macro ACT_ONE
    vbcasti.f32 v31, 1.0
.endm

; Runs `f N, o, x, a, b, c` over a vector of the kernel's type:
;   fp32: o = 1, x = 0, temporaries 2, 3, 4;
;   fp16: low half widened to 2, high half to 3; low computes with 4, 5, 1,
;         high with 4, 5, 0; vcvtn packs them into 1.
.macro ACT_APPLY N, f
.if DT_BYTES == 2
    \N\()_2 vcvtl.f32, 2, 0
    \N\()_2 vcvth.f32, 3, 0
    \f \N, 2, 2, 4, 5, 1
    \f \N, 3, 3, 4, 5, 0
    \N\()_3 vcvtn.f16, 1, 2, 3
.else
    \f \N, 1, 0, 2, 3, 4
.endif
.endm

; ACT_APPLY for the software-pipelined skeletons (lib/eltwise.s, _PIPE),
; `ACT_APPLY_PIPE N, MEM, f, T`, for an f without predicated steps that
; needs T (1 or 2) temporaries:
;   fp16: both halves widened first, then f once at double width (X8 over
;         X4, X2 over X1: lib/x4.s), the low half in 2 with temporaries 4
;         and 0, the high half in the registers one up (3; 5 and 1), so the
;         halves' chains interleave instead of running one after the other.
;         The previous outputs are stored while the halves are widened; the
;         next inputs load behind the widening (T = 1) or behind f (T = 2,
;         which uses bank register 0).
;   fp32: the previous outputs are stored first, the next inputs load after
;         f: x may be read to its end.
; T = 3 (f with three temporaries, or predicated steps) keeps ACT_APPLY's
; layout, the halves one after the other: the previous outputs are stored
; while the halves are widened, the next inputs load after the high half.
.macro ACT_APPLY_PIPE N, MEM, f, T
.if DT_BYTES == 2
.if \T == 3
    \N\()_2 vcvtl.f32, 2, 0
    \MEM   0
    \MEM   1
    \N\()_2 vcvth.f32, 3, 0
    \MEM   2
    \MEM   3
    \f \N, 2, 2, 4, 5, 1
    \f \N, 3, 3, 4, 5, 0
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
    \N\()_3 vcvtn.f16, 1, 2, 3
.else
    \N\()_2 vcvtl.f32, 2, 0
    \MEM   0
    \MEM   1
    \N\()_2 vcvth.f32, 3, 0
    \MEM   2
    \MEM   3
.if \T == 1
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
.endif
    ACT_WIDE_\N \f
.if \T == 2
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
.endif
    \N\()_3 vcvtn.f16, 1, 2, 3
.endif
.else
    \MEM   0
    \MEM   1
    \MEM   2
    \MEM   3
    \f \N, 1, 0, 2, 3, 4
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
.endif
.endm
.macro ACT_WIDE_X4 f
    \f X8, 2, 2, 4, 0, 0
.endm
.macro ACT_WIDE_X1 f
    \f X2, 2, 2, 4, 0, 0
.endm

; Runs `o = f(a) * b` over a vector of the kernel's type, for the gated units
; (ELTWISE_2IN: a in bank register 0, b in 2; the result in 1). fp16: both
; halves of a and of b are widened, f and the product computed in fp32, and
; vcvtn packs them once.
.macro GATED_APPLY N, f
.if DT_BYTES == 2
    \N\()_2 vcvtl.f32, 3, 0
    \N\()_2 vcvth.f32, 4, 0
    \f \N, 3, 3, 0, 1, 5
    \f \N, 4, 4, 0, 1, 5
    \N\()_2 vcvtl.f32, 0, 2
    \N\()_2 vcvth.f32, 1, 2
    \N\()_3 vmul.f32, 3, 3, 0
    \N\()_3 vmul.f32, 4, 4, 1
    \N\()_3 vcvtn.f16, 1, 3, 4
.else
    \f \N, 1, 0, 3, 4, 5
    \N\()_3 vmul.f32, 1, 1, 2
.endif
.endm

; ---- sigmoid family ------------------------------------------------------
; o = 1 / (1 + e^-x): three roundings after exp, each at most half an ULP of
; a value the result is proportional to.
.macro SIGMOID N, o, x, a, b, c
    \N\()_2 vneg.f32, \a, \x
    \N\()_2 vexp.f32, \a, \a
    \N\()_3 vadd.f32, \a, \a, 31
    \N\()_2 vrcp.f32, \o, \a
.endm

; SIGMOID on fp16 lanes as a two-stage loop body for ELTWISE_*_PIPE2
; (lib/eltwise.s; N = X4 only, S selects the stages): stage one widens group
; i and forms e^-x (low half in bank register 2, high in 3), stage two forms
; 1 + e^-x and its reciprocal for group i-1 (in 4 and 5) and narrows it into
; bank register 1. One copy at a time (X8_2C/X8_3C, lib/x4.s), so group i-1's
; reciprocals and group i's exponentials follow each other on the SFU with
; no gap: each copy's add comes two reciprocals ahead of its own, the
; widening and negation fill the VALU slots beside them. SIGMOID's steps,
; in its order, for every lane.
.macro SIGMOID16_LOOP N, MEM, S
.if \S != 1
    X8_3C vadd.f32, 4, 2, 31, 0
    X8_3C vadd.f32, 4, 2, 31, 1
    X8_3C vadd.f32, 4, 2, 31, 2
    X8_2C vrcp.f32, 4, 4, 0
.endif
    \MEM   0
.if \S != 1
    X8_3C vadd.f32, 4, 2, 31, 3
.endif
.if \S != 2
    X4_2K vcvtl.f32, 2, 0, 0
.endif
.if \S != 1
    X8_2C vrcp.f32, 4, 4, 1
.endif
    \MEM   1
.if \S != 1
    X8_3C vadd.f32, 4, 2, 31, 4
.endif
.if \S != 2
    X4_2K vcvtl.f32, 2, 0, 1
.endif
.if \S != 1
    X8_2C vrcp.f32, 4, 4, 2
.endif
    \MEM   2
.if \S != 1
    X8_3C vadd.f32, 4, 2, 31, 5
.endif
.if \S != 2
    X4_2K vcvtl.f32, 2, 0, 2
    X4_2K vcvth.f32, 3, 0, 0
.endif
.if \S != 1
    X8_2C vrcp.f32, 4, 4, 3
.endif
    \MEM   3
.if \S != 1
    X8_3C vadd.f32, 4, 2, 31, 6
.endif
.if \S != 2
    X4_2K vcvtl.f32, 2, 0, 3
    X4_2K vcvth.f32, 3, 0, 1
.endif
    \MEM   4
.if \S != 1
    X8_2C vrcp.f32, 4, 4, 4
    X8_3C vadd.f32, 4, 2, 31, 7
.endif
.if \S != 2
    X4_2K vcvth.f32, 3, 0, 2
.endif
    \MEM   5
.if \S != 2
    X8_2C vneg.f32, 2, 2, 0
.endif
.if \S != 1
    X8_2C vrcp.f32, 4, 4, 5
.endif
.if \S != 2
    X4_2K vcvth.f32, 3, 0, 3
.endif
    \MEM   6
.if \S != 2
    X8_2C vneg.f32, 2, 2, 1
    X8_2C vneg.f32, 2, 2, 4
.endif
.if \S != 1
    X8_2C vrcp.f32, 4, 4, 6
.endif
    \MEM   7
.if \S != 2
    X8_2C vneg.f32, 2, 2, 2
    X8_2C vneg.f32, 2, 2, 5
.endif
.if \S != 1
    X8_2C vrcp.f32, 4, 4, 7
.endif
.if \S != 2
    X8_2C vneg.f32, 2, 2, 3
    X8_2C vneg.f32, 2, 2, 6
    X8_2C vneg.f32, 2, 2, 7
    X8_2C vexp.f32, 2, 2, 0
    X8_2C vexp.f32, 2, 2, 1
    X8_2C vexp.f32, 2, 2, 2
    X8_2C vexp.f32, 2, 2, 3
    X8_2C vexp.f32, 2, 2, 4
    X8_2C vexp.f32, 2, 2, 5
    X8_2C vexp.f32, 2, 2, 6
    X8_2C vexp.f32, 2, 2, 7
.endif
.if \S != 1
    X4_3 vcvtn.f16, 1, 4, 5
.endif
.endm

; The same on fp32 lanes (x in bank register 0, e^-x handed over in 2, 1 +
; e^-x in 3, the reciprocal into 1): x is dead after the negation, so each
; copy's next input loads right behind it.
.macro SIGMOID32_LOOP N, MEM, S
.if \S != 1
    X4_3K vadd.f32, 3, 2, 31, 0
    X4_3K vadd.f32, 3, 2, 31, 1
.endif
    \MEM   0
.if \S != 1
    X4_2K vrcp.f32, 1, 3, 0
    X4_3K vadd.f32, 3, 2, 31, 2
.endif
.if \S != 2
    X4_2K vneg.f32, 2, 0, 0
.endif
    \MEM   1
.if \S != 1
    X4_2K vrcp.f32, 1, 3, 1
    X4_3K vadd.f32, 3, 2, 31, 3
.endif
.if \S != 2
    X4_2K vneg.f32, 2, 0, 1
.endif
    \MEM   2
.if \S != 1
    X4_2K vrcp.f32, 1, 3, 2
.endif
.if \S != 2
    X4_2K vneg.f32, 2, 0, 2
.endif
    \MEM   3
.if \S != 1
    X4_2K vrcp.f32, 1, 3, 3
.endif
.if \S != 2
    X4_2K vneg.f32, 2, 0, 3
.endif
    \MEM   4
.if \S != 2
    X4_2K vexp.f32, 2, 2, 0
.endif
    \MEM   5
.if \S != 2
    X4_2K vexp.f32, 2, 2, 1
.endif
    \MEM   6
.if \S != 2
    X4_2K vexp.f32, 2, 2, 2
.endif
    \MEM   7
.if \S != 2
    X4_2K vexp.f32, 2, 2, 3
.endif
.endm

; SIGMOID_PAIR on fp32 lanes as a two-stage loop body (ELTWISE_*_PIPE2):
; stage one forms t = e^-x of group i in bank register 5 (x is dead after
; the negation: the next inputs load behind it); stage two, for group i-1,
; splits 1 + t into hi (3) + lo (2) as ONE_PLUS_PAIR does but with lo in 2,
; so t is dead after min(t, 1) and stage one may overwrite it, then forms
; the corrected reciprocal into 1. SIGMOID_PAIR's steps and roundings.
.macro SIGMOID_PAIR32_LOOP N, MEM, S
.if \S != 1
    \N\()_3 vadd.f32, 3, 5, 31          ; hi = RN(1 + t)
    \N\()_3 vmax.f32, 4, 5, 31
    \N\()_3 vmin.f32, 2, 5, 31
.endif
.if \S != 2
    \N\()_2 vneg.f32, 5, 0
.endif
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
    \MEM   0
    \MEM   1
    \MEM   2
    \MEM   3
.if \S != 1
    \N\()_2 vrcp.f32, 1, 3              ; r = RN(1/hi)
    \N\()_3 vsub.f32, 4, 3, 4           ; hi - max(1, t), exact
    \N\()_3 vsub.f32, 2, 2, 4           ; lo, exact
.endif
.if \S != 2
    \N\()_2 vexp.f32, 5, 5              ; t of group i
.endif
.if \S != 1
    \N\()_3 vmul.f32, 4, 1, 2           ; r lo
    \N\()_C vceq.f32, 1, 4, 4
    \N\()_4P vfnma.f32, 1, 4, 1, 1, 1   ; r - r (r lo)
.endif
.endm

; o = x * sigmoid(k x) for k = -v29 exactly representable in the product
; (k a power of two: -k x is exact).
.macro SWISH_EXACT N, o, x, a, b, c
    \N\()_3 vmul.f32, \a, \x, 29          ; -k x, exact
    \N\()_2 vexp.f32, \a, \a
    \N\()_3 vadd.f32, \a, \a, 31
    \N\()_2 vrcp.f32, \a, \a
    \N\()_3 vmul.f32, \o, \a, \x
.endm

; 1 + t = hi + lo exactly (Fast2Sum on max(1, t), min(1, t)): hi into h,
; lo into t; uses c.
.macro ONE_PLUS_PAIR N, h, t, c
    \N\()_3 vadd.f32, \h, \t, 31          ; hi = RN(1 + t)
    \N\()_3 vmax.f32, \c, \t, 31
    \N\()_3 vsub.f32, \c, \h, \c          ; hi - max(1, t), exact
    \N\()_3 vmin.f32, \t, \t, 31
    \N\()_3 vsub.f32, \t, \t, \c          ; lo = min(1, t) - that, exact
.endm
; o = sigmoid(x) to under 2 ULP: 1 / (hi + lo) = r - r (r lo) to first order,
; r = RN(1/hi), so the rounding of 1 + e^-x never enters; e^-x's own rounding,
; r's and the last one remain. The step is skipped where r lo is NaN (e^-x =
; inf, x < -88.7: r = 0 there). The fp16 path (o = x) takes SIGMOID: its three
; roundings are far inside an fp16 ULP.
.macro SIGMOID_PAIR N, o, x, a, b, c
.if \o == \x
    SIGMOID \N, \o, \x, \a, \b, \c
.else
    \N\()_2 vneg.f32, \a, \x
    \N\()_2 vexp.f32, \a, \a              ; t
    ONE_PLUS_PAIR \N, \b, \a, \c
    \N\()_2 vrcp.f32, \o, \b              ; r = RN(1/hi)
    \N\()_3 vmul.f32, \c, \o, \a          ; r lo
    \N\()_C vceq.f32, 1, \c, \c
    \N\()_4P vfnma.f32, \o, \c, \o, \o, 1  ; r - r (r lo)
.endif
.endm
; o = x * sigmoid(k x) to about an ULP (fp32 path; the fp16 path, o = x, takes
; SWISH_EXACT): t = e^(-k x) (k a power of two, -k = v29), 1 + t = hi + lo
; exactly (ONE_PLUS_PAIR), y = RN(x RN(1/hi)), and one correction step
; y + (x - y hi - y lo) / hi. The step is skipped where its residual is NaN:
; t = inf (x < -88.7 / k: y = -0 there) and x = +-inf (y is right there).
.macro SWISH_PAIR N, o, x, a, b, c
.if \o != \x
    \N\()_3 vmul.f32, \a, \x, 29          ; -k x, exact
    \N\()_2 vexp.f32, \a, \a              ; t
    ONE_PLUS_PAIR \N, \b, \a, \c
    \N\()_2 vrcp.f32, \c, \b              ; r
    \N\()_3 vmul.f32, \o, \x, \c          ; y = RN(x r)
    \N\()_4 vfnma.f32, \x, \o, \b, \x     ; x - y hi, exact
    \N\()_4 vfnma.f32, \x, \o, \a, \x     ; R = x - y (hi + lo)
    \N\()_C vceq.f32, 1, \x, \x
    \N\()_4P vfma.f32, \o, \x, \c, \o, 1  ; y + R / hi: one rounding
.else
    SWISH_EXACT \N, \o, \x, \a, \b, \c
.endif
.endm

; o = x * sigmoid(k x) for any k > 0: -k x = h + l exactly (l by fma), and
; e^(h + l) = e^h (1 + l) to well below an ULP, so the rounding of k x (which
; e^ would multiply by |k x|) never enters. v29 = -k, v28 = 88 / k, v27 = 88.
; x is capped at 88/k (beyond, sigmoid is 1: e^h stays normal and l finite)
; and h at 88 (beyond, l > 0 and e^h (1 + l) overflows to inf as it should),
; so no lane ever forms inf - inf or 0 * inf except for x = -inf (NaN, as the
; reference: -inf * 0). With SWISH_K_LO = 1, k is a constant given as the
; pair -k = v29 + v26 and the low part joins l.
.macro SWISH_SPLIT N, o, x, a, b, c
    \N\()_3 vmin.f32, \b, \x, 28
    \N\()_3 vmul.f32, \a, \b, 29          ; h = RN(-k x)
    \N\()_3 vmin.f32, \a, \a, 27
.if SWISH_K_LO == 1
    \N\()_4 vfms.f32, \c, \b, 29, \a      ; -k_hi x - h, exact while h is not capped
    \N\()_4 vfma.f32, \b, \b, 26, \c      ; l = that + (-k_lo) x: k is not a binary32
.else
    \N\()_4 vfms.f32, \b, \b, 29, \a      ; l = -k x - h, exact while h is not capped
.endif
    \N\()_2 vexp.f32, \a, \a              ; e^h
    \N\()_3 vadd.f32, \c, \a, 31          ; 1 + e^h
    \N\()_4 vfma.f32, \a, \a, \b, \c      ; 1 + e^h + e^h l
    \N\()_2 vrcp.f32, \a, \a
    \N\()_3 vmul.f32, \o, \a, \x
.endm
; The same for k < 0 (v28 = 88 / k < 0: x is floored there instead).
.macro SWISH_SPLIT_NEG N, o, x, a, b, c
    \N\()_3 vmax.f32, \b, \x, 28
    \N\()_3 vmul.f32, \a, \b, 29
    \N\()_3 vmin.f32, \a, \a, 27
    \N\()_4 vfms.f32, \b, \b, 29, \a
    \N\()_2 vexp.f32, \a, \a
    \N\()_3 vadd.f32, \c, \a, 31
    \N\()_4 vfma.f32, \a, \a, \b, \c
    \N\()_2 vrcp.f32, \a, \a
    \N\()_3 vmul.f32, \o, \a, \x
.endm

; o = x * sigmoid(k x) for any k to about an ULP (fp32): SWISH_SPLIT's
; t = e^h (1 + l) with the fma's rounding error kept (E - t exact, then
; fma(E, l, E - t)), SWISH_PAIR's exact 1 + t, the error joining lo, and the
; corrected quotient. Where h is capped (x beyond -88/k) t overflows, the
; residual is NaN and the result is y = x * 0 as in SWISH_SPLIT. k > 0 caps x
; from above (vmin), k < 0 from below (vmax); constants as SWISH_SPLIT.
.macro SWISH_SPLIT_PAIR_CAP cap, N, o, x, a, b, c
    \N\()_3 \cap\().f32, \b, \x, 28
    \N\()_3 vmul.f32, \a, \b, 29          ; h = RN(-k x)
    \N\()_3 vmin.f32, \a, \a, 27
.if SWISH_K_LO == 1
    \N\()_4 vfms.f32, \c, \b, 29, \a
    \N\()_4 vfma.f32, \b, \b, 26, \c      ; l
.else
    \N\()_4 vfms.f32, \b, \b, 29, \a      ; l = -k x - h
.endif
    \N\()_2 vexp.f32, \a, \a              ; E = e^h
    \N\()_4 vfma.f32, \c, \a, \b, \a      ; t = RN(E (1 + l))
    \N\()_3 vsub.f32, \o, \a, \c          ; E - t, exact
    \N\()_4 vfma.f32, \b, \a, \b, \o      ; t's rounding error: E l + E - t
    ONE_PLUS_PAIR \N, \a, \c, \o
    \N\()_3 vadd.f32, \c, \c, \b          ; lo: 1 + e^(-k x) = hi + lo
    \N\()_2 vrcp.f32, \b, \a              ; r
    \N\()_3 vmul.f32, \o, \x, \b          ; y = RN(x r)
    \N\()_4 vfnma.f32, \x, \o, \a, \x     ; x - y hi, exact
    \N\()_4 vfnma.f32, \x, \o, \c, \x     ; R = x - y (hi + lo)
    \N\()_C vceq.f32, 1, \x, \x
    \N\()_4P vfma.f32, \o, \x, \b, \o, 1  ; y + R / hi
.endm
.macro SWISH_SPLIT_PAIR N, o, x, a, b, c
    SWISH_SPLIT_PAIR_CAP vmin, \N, \o, \x, \a, \b, \c
.endm
.macro SWISH_SPLIT_PAIR_NEG N, o, x, a, b, c
    SWISH_SPLIT_PAIR_CAP vmax, \N, \o, \x, \a, \b, \c
.endm

; ---- exponential family --------------------------------------------------
; a = expm1(a) for a in [-88, 0], to about an ULP: u = RN(e^a) loses the low
; bits of e^a - 1 near 0, but ln(u) recovers them: e^a - 1 = (u - 1) + u (a -
; ln u) with a - ln u the (tiny) relative error of u, exact by Sterbenz.
; Uses b, c.
.macro EXPM1_NEG N, a, b, c
    \N\()_2 vexp.f32, \b, \a              ; u
    \N\()_2 vln.f32, \c, \b               ; ln u
    \N\()_3 vsub.f32, \a, \a, \c          ; a - ln u
    \N\()_3 vsub.f32, \c, \b, 31          ; u - 1, exact
    \N\()_4 vfma.f32, \a, \b, \a, \c      ; (u - 1) + u (a - ln u)
.endm

; a = expm1(max(min(x, 0), -88)): the negative half of the ELU family.
; v30 = 0, v25 = -88 (below it expm1 is -1 in fp32; ln(u) needs u > 0).
.macro ELU_NEG N, x, a, b, c
    \N\()_3 vmin.f32, \a, \x, 30
    \N\()_3 vmax.f32, \a, \a, 25
    EXPM1_NEG \N, \a, \b, \c
.endm

; o = max(x, 0) + alpha expm1(min(x, 0)), alpha = v26: ELU. The halves never
; overlap (x > 0 makes the expm1 term 0, x <= 0 the linear one): no select.
.macro ELU_CORE N, o, x, a, b, c
    ELU_NEG \N, \x, \a, \b, \c
    \N\()_3 vmax.f32, \b, \x, 30
    \N\()_4 vfma.f32, \o, \a, 26, \b
.endm

; The same with expm1 as RN(e^x) - 1 (exact subtraction, Sterbenz): e^x's
; rounding (at most 2^-25 absolute) is all the error, so near 0- the result
; is good only to 2^-25 absolute, not relatively (elu_fast). v30 = 0, v26 = alpha.
.macro ELU_FAST N, o, x, a, b, c
    \N\()_3 vmin.f32, \a, \x, 30
    \N\()_2 vexp.f32, \a, \a
    \N\()_3 vsub.f32, \a, \a, 31          ; e^min(x, 0) - 1, exact
    \N\()_3 vmax.f32, \b, \x, 30
    \N\()_4 vfma.f32, \o, \a, 26, \b
.endm

; o = scale max(x, 0) + (scale alpha) expm1(min(x, 0)): SELU, v27 = scale,
; v26 + v24 = scale * alpha as a binary32 pair (hi, lo), so the constant adds
; no rounding of its own.
.macro SELU_CORE N, o, x, a, b, c
    ELU_NEG \N, \x, \a, \b, \c
    \N\()_3 vmax.f32, \b, \x, 30
    \N\()_3 vmul.f32, \b, \b, 27
    \N\()_4 vfma.f32, \b, \a, 24, \b      ; + expm1 * lo(scale * alpha)
    \N\()_4 vfma.f32, \o, \a, 26, \b      ; + expm1 * hi(scale * alpha): one rounding
.endm

; o = max(x, 0) + alpha expm1(min(x, 0) / alpha), CELU, when 1/alpha = v24 is
; exact (alpha a power of two); v26 = alpha, v30 = 0, v25 = -88.
.macro CELU_CORE N, o, x, a, b, c
    \N\()_3 vmin.f32, \a, \x, 30
    \N\()_3 vmul.f32, \a, \a, 24
    \N\()_3 vmax.f32, \a, \a, 25
    EXPM1_NEG \N, \a, \b, \c
    \N\()_3 vmax.f32, \b, \x, 30
    \N\()_4 vfma.f32, \o, \a, 26, \b
.endm
; The same for any alpha: y = min(x, 0) / alpha = y0 + ylo with y0 = RN(y),
; ylo from the exact remainder (fma), and expm1(y0 + ylo) = expm1(y0) + e^y0 ylo.
; v24 = RN(1/alpha), v27 = -88 alpha (alpha > 0). Needs o distinct from x (the
; fp32 path).
.macro CELU_SPLIT N, o, x, a, b, c
    \N\()_3 vmin.f32, \a, \x, 30
    \N\()_3 vmax.f32, \a, \a, 27          ; >= -88 alpha (v27)
    \N\()_3 vmul.f32, \b, \a, 24          ; y0
    \N\()_4 vfnma.f32, \c, \b, 26, \a     ; min(x, 0) - y0 alpha, exact
    \N\()_3 vmul.f32, \o, \c, 24          ; ylo
    \N\()_2 vexp.f32, \a, \b              ; u
    \N\()_2 vln.f32, \c, \a
    \N\()_3 vsub.f32, \b, \b, \c
    \N\()_3 vsub.f32, \c, \a, 31
    \N\()_4 vfma.f32, \b, \a, \b, \c      ; expm1(y0)
    \N\()_4 vfma.f32, \b, \a, \o, \b      ; + u ylo
    \N\()_3 vmax.f32, \a, \x, 30
    \N\()_4 vfma.f32, \o, \b, 26, \a
.endm

; ---- softplus ------------------------------------------------------------
; log1p(t) for t = a >= 0 into b: u = RN(1 + t) loses the low bits of t;
; c = t - (u - 1) is what it lost (exact while u <= 2^24; beyond, c is at most
; 2 against ln u > 16), and log1p(t) = ln u + c/u. For small t, c is the
; whole result, so 1/u must be good to an ULP there: it is one more SFU op
; (vrcp), which no ALU estimate of the same cost matches. Leaves b = ln u,
; a = c, c = 1/u: the caller adds fma(a, c, b).
.macro LOG1P N, b, a, c
    \N\()_3 vadd.f32, \b, \a, 31          ; u = 1 + t
    \N\()_3 vsub.f32, \c, \b, 31          ; u - 1
    \N\()_3 vsub.f32, \a, \a, \c          ; c
    \N\()_2 vrcp.f32, \c, \b              ; 1/u
    \N\()_2 vln.f32, \b, \b
.endm
; o = beta x > threshold ? x : log1p(e^(beta x)) / beta for beta = 1:
; v29 = threshold. The linear lanes keep x (o starts as x; the last fma is
; masked to the other lanes), so the threshold costs one compare.
.macro SOFTPLUS_ONE N, o, x, a, b, c
    \N\()_2 vexp.f32, \a, \x
    LOG1P \N, \b, \a, \c
    \N\()_C vcle.f32, 1, \x, 29
.if \o != \x
    \N\()_2 vmov.f32, \o, \x
.endif
    \N\()_4P vfma.f32, \o, \a, \c, \b, 1
.endm
; o = ln(RN(1 + e^x)) below the threshold v29, x above (softplus_fast):
; the rounding of 1 + e^x (2^-24 absolute) is not given back, so for x < 0
; the result is good to about 2^-24 absolute only (0 from x < -17 on).
.macro SOFTPLUS_FAST N, o, x, a, b, c
    \N\()_2 vexp.f32, \a, \x
    \N\()_3 vadd.f32, \a, \a, 31
    \N\()_C vcle.f32, 1, \x, 29
.if \o != \x
    \N\()_2 vmov.f32, \o, \x
.endif
    \N\()_2P vln.f32, \o, \a, 1
.endm
; Power-of-two beta: beta x and the division by beta are exact. v28 = beta,
; v27 = 1/beta.
.macro SOFTPLUS_POW2 N, o, x, a, b, c
    \N\()_3 vmul.f32, \a, \x, 28
    \N\()_C vcle.f32, 1, \a, 29
    \N\()_2 vexp.f32, \a, \a
    LOG1P \N, \b, \a, \c
    \N\()_4 vfma.f32, \b, \a, \c, \b
.if \o != \x
    \N\()_2 vmov.f32, \o, \x
.endif
    \N\()_3P vmul.f32, \o, \b, 27, 1
.endm
; Any beta (fp32): beta x = h + l (fma) with e^(h+l) = e^h + e^h l, and the
; division by beta corrected by one fma step. The threshold compares h. x is
; floored at -2^100 so l is never inf - inf (the result there is 0 anyway).
; v22.. are not touched; v26 = -2^100.
.macro SOFTPLUS_ANY N, o, x, a, b, c
    \N\()_2 vmov.f32, \o, \x
    \N\()_3 vmax.f32, \b, \x, 26
    \N\()_3 vmul.f32, \a, \b, 28          ; h
    \N\()_C vcle.f32, 1, \a, 29
    \N\()_4 vfms.f32, \b, \b, 28, \a      ; l
    \N\()_2 vexp.f32, \a, \a
    \N\()_4 vfma.f32, \a, \a, \b, \a      ; e^h (1 + l)
    LOG1P \N, \b, \a, \c
    \N\()_3 vmul.f32, \x, \b, 27          ; q = RN(ln u * RN(1/beta)) (x is kept in o)
    \N\()_4 vfnma.f32, \b, \x, 28, \b     ; ln u - q beta, exact
    \N\()_4 vfma.f32, \b, \a, \c, \b      ; + c / u: log1p - q beta, not rounded on its own
    \N\()_4P vfma.f32, \o, \b, 27, \x, 1  ; q + that / beta
.endm

; ---- mish ----------------------------------------------------------------
; o = x tanh(softplus(x)) = x n / (n + 2), n = e (e + 2), e = e^min(x, 20)
; (n = (1 + e)^2 - 1 without the cancellation). v28 = 20, v27 = 2. Where o is
; not x (the fp32 path) the quotient n / (n + 2) gets one fma correction step.
.macro MISH N, o, x, a, b, c
    MISH_N \N, \x, \a, \b
.if \o != \x
    \N\()_3 vadd.f32, \b, \a, 27          ; d = n + 2
    \N\()_2 vrcp.f32, \c, \b
    \N\()_3 vmul.f32, \o, \a, \c          ; q = n / d, two roundings
    \N\()_4 vfnma.f32, \a, \o, \b, \a     ; n - q d, exact
    \N\()_4 vfma.f32, \o, \a, \c, \o      ; one rounding
    \N\()_3 vmul.f32, \o, \o, \x
.else
    MISH_TAIL \N, \o, \x, \a, \b
.endif
.endm
; a = n = e^2 + 2e, e = e^min(x, 20), rounded once (fma; 2e is exact).
.macro MISH_N N, x, a, b
    \N\()_3 vmin.f32, \a, \x, 28
    \N\()_2 vexp.f32, \a, \a
    \N\()_3 vadd.f32, \b, \a, \a
    \N\()_4 vfma.f32, \a, \a, \a, \b     ; n
.endm
; o = x n / (n + 2) from n = a, with the quotient rounded twice (rcp, mul).
.macro MISH_TAIL N, o, x, a, b
    \N\()_3 vadd.f32, \b, \a, 27
    \N\()_2 vrcp.f32, \b, \b
    \N\()_3 vmul.f32, \a, \a, \b
    \N\()_3 vmul.f32, \o, \a, \x
.endm
; mish_fast: the same without the correction step, for every o (8 instructions).
.macro MISH_FAST N, o, x, a, b, c
    MISH_N \N, \x, \a, \b
    MISH_TAIL \N, \o, \x, \a, \b
.endm

; ---- GELU (erf form) -----------------------------------------------------
; o = x Phi(x), Phi the normal CDF, from the tail q = Phi(-|x|) = e^(-x^2/2) S(|x|):
;   S(a) = t g(t), t = 1 / (1 + a/2), g a degree-10 polynomial fitted (relative
;   error 2^-25.4 on a in [0, 14.5]) for this kernel;
;   e^(-a^2/2) = e^h (1 + l) with h + l = -a^2/2 split exactly by fma, so the
;   rounding of a^2 (which e^ would multiply by a^2/2, up to 105) never enters.
; x >= 0: x (1 - q); x < 0: (x S) e^(-a^2/2), multiplied in that order so no
; intermediate goes subnormal before the result does. a is capped at 14.5
; (beyond, the result is 0 or x). The coefficients stream through v24/v25
; (vbcasti, shared by the four copies): the polynomial needs more constants
; than the eight shared registers hold. v30 = 14.5, v29 = -0.5, v28 = 0.5,
; v27 = 0.
.macro GELU_ERF N, o, x, a, b, c
    \N\()_2 vabs.f32, \a, \x
    \N\()_3 vmin.f32, \a, \a, 30
    \N\()_3 vmul.f32, \b, \a, 29          ; -a/2, exact
    \N\()_3 vmul.f32, \c, \a, \b          ; h = RN(-a^2/2)
    \N\()_4 vfms.f32, \b, \a, \b, \c      ; l = -a^2/2 - h, exact
    \N\()_2 vexp.f32, \c, \c
    \N\()_4 vfma.f32, \c, \c, \b, \c      ; e^(-a^2/2) = e^h (1 + l)
    \N\()_4 vfma.f32, \a, \a, 28, 31       ; 1 + a/2
    \N\()_2 vrcp.f32, \a, \a              ; t
    vbcasti.f32 v24, -0.039069101214408875
    vbcasti.f32 v25, 0.1874707043170929
    \N\()_4 vfma.f32, \b, \a, 24, 25
    vbcasti.f32 v24, -0.3114001154899597
    \N\()_4 vfma.f32, \b, \b, \a, 24
    vbcasti.f32 v25, 0.08781144767999649
    \N\()_4 vfma.f32, \b, \b, \a, 25
    vbcasti.f32 v24, 0.35630109906196594
    \N\()_4 vfma.f32, \b, \b, \a, 24
    vbcasti.f32 v25, -0.4107499420642853
    \N\()_4 vfma.f32, \b, \b, \a, 25
    vbcasti.f32 v24, 0.055110108107328415
    \N\()_4 vfma.f32, \b, \b, \a, 24
    vbcasti.f32 v25, 0.022450176998972893
    \N\()_4 vfma.f32, \b, \b, \a, 25
    vbcasti.f32 v24, 0.1534142792224884
    \N\()_4 vfma.f32, \b, \b, \a, 24
    vbcasti.f32 v25, 0.19918093085289001
    \N\()_4 vfma.f32, \b, \b, \a, 25
    vbcasti.f32 v24, 0.19948041439056396
    \N\()_4 vfma.f32, \b, \b, \a, 24
    \N\()_3 vmul.f32, \b, \b, \a          ; S = t g(t)
    \N\()_3 vmul.f32, \a, \b, \c          ; q
    \N\()_3 vsub.f32, \a, 31, \a          ; 1 - q
    \N\()_3 vmul.f32, \a, \a, \x          ; x >= 0: x (1 - q)
    \N\()_3 vmul.f32, \b, \b, \x
    \N\()_3 vmul.f32, \b, \b, \c          ; x < 0: (x S) e^(-a^2/2)
    \N\()_C vcge.f32, 1, \x, 27           ; v27 = 0
    \N\()_3P vsel.f32, \o, \a, \b, 1
.endm

; o = x Phi(x) to under 3 ULP (fp32, gelu_erf): two forms, both computed, the
; series chosen per lane by a predicated last product (p1 = |x| < 7/8):
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
; Coefficients stream through v24/v25 as in GELU_ERF; v31 = 1.0, v30 = 14.5,
; v29 = -0.5, v28 = 0.5, v27 = 0, v26 = 0.875. Needs a sixth register, e
; (the fp32 bank has six; the fp16 path takes GELU_ERF).
.macro GELU_ERF_ACC N, o, x, a, b, c, e
    \N\()_2 vabs.f32, \a, \x
    \N\()_3 vmin.f32, \a, \a, 30
    \N\()_C vclt.f32, 1, \a, 26           ; p1: the series form
    \N\()_3 vmul.f32, \b, \a, 29          ; -a/2, exact
    \N\()_3 vmul.f32, \c, \a, \b          ; h = RN(-a^2/2)
    \N\()_4 vfms.f32, \a, \a, \b, \c      ; l = -a^2/2 - h, exact
    \N\()_2 vexp.f32, \c, \c              ; E = e^h
    \N\()_3 vsub.f32, \e, 31, \b          ; 1 + a/2
    \N\()_2 vrcp.f32, \e, \e              ; t
    \N\()_3 vsub.f32, \o, 31, \e          ; 1 - t
    \N\()_4 vfma.f32, \b, \e, \b, \o      ; rr = 1 - t - t a/2
    vbcasti.f32 v24, -2.52706241607666
    vbcasti.f32 v25, 0.5852155089378357
    \N\()_4 vfma.f32, \o, \e, 24, 25      ; kappa
    \N\()_4 vfma.f32, \a, \o, \b, \a      ; m = kappa rr + l
    vbcasti.f32 v24, 0.3109723925590515
    vbcasti.f32 v25, -1.1807849407196045
    \N\()_4 vfma.f32, \b, \e, 24, 25
    vbcasti.f32 v24, 1.669677734375
    \N\()_4 vfma.f32, \b, \b, \e, 24
    vbcasti.f32 v25, -0.8716920614242554
    \N\()_4 vfma.f32, \b, \b, \e, 25
    vbcasti.f32 v24, 0.01359582506120205
    \N\()_4 vfma.f32, \b, \b, \e, 24
    vbcasti.f32 v25, -0.24544663727283478
    \N\()_4 vfma.f32, \b, \b, \e, 25
    vbcasti.f32 v24, -0.0943082794547081
    \N\()_4 vfma.f32, \b, \b, \e, 24
    vbcasti.f32 v25, -0.0003564812650438398
    \N\()_4 vfma.f32, \b, \b, \e, 25
    vbcasti.f32 v24, 0.3989522159099579
    \N\()_4 vfma.f32, \b, \b, \e, 24      ; H(t)
    \N\()_3 vmul.f32, \a, \b, \a          ; H m
    \N\()_3 vmin.f32, \o, \x, 27
    \N\()_3 vsub.f32, \o, \x, \o          ; max(x, 0); NaN for x = -inf
    \N\()_4 vfnma.f32, \o, \c, \a, \o     ; - E H m
    \N\()_4 vfnma.f32, \o, \c, \b, \o     ; - E H: the tail form, one rounding
    \N\()_3 vmul.f32, \a, \x, \x          ; w = x^2
    vbcasti.f32 v24, 9.277846402255818e-05
    vbcasti.f32 v25, -0.0011674345005303621
    \N\()_4 vfma.f32, \b, \a, 24, 25
    vbcasti.f32 v24, 0.009966415353119373
    \N\()_4 vfma.f32, \b, \b, \a, 24
    vbcasti.f32 v25, -0.06648948043584824
    \N\()_4 vfma.f32, \b, \b, \a, 25
    vbcasti.f32 v24, 0.3989422619342804
    \N\()_4 vfma.f32, \b, \b, \a, 24      ; R(w)
    \N\()_4 vfma.f32, \b, \x, \b, 28      ; 1/2 + x R
    \N\()_3P vmul.f32, \o, \x, \b, 1      ; the series form where p1
.endm

; ---- tanh ----------------------------------------------------------------
; (fp16 path of tanh; TANH_PAIR below is the fp32 one.)
; o = tanh(x) = sign(x) E / (E + 2), E = expm1(2 min(|x|, 9)) >= 0 (EXPM1_NEG
; works for positive arguments too). E >= 0 keeps the quotient's sensitivity
; to E's error at most 1; the quotient gets one fma correction step (one
; rounding instead of two); the sign is put back with one OR. v28 = 2, v27 = 9,
; v26 = sign mask (i32 0x80000000).
.macro TANH N, o, x, a, b, c
    \N\()_2 vabs.f32, \a, \x
    \N\()_3 vmin.f32, \a, \a, 27
    \N\()_3 vadd.f32, \a, \a, \a
    EXPM1_NEG \N, \a, \b, \c
    \N\()_3 vadd.f32, \b, \a, 28          ; d = E + 2
    \N\()_3 vand.i32, \c, \x, 26
    \N\()_3 vor.i32, \a, \a, \c           ; sign(x) E (x is dead from here: o may be x)
    \N\()_2 vrcp.f32, \c, \b
    \N\()_3 vmul.f32, \o, \a, \c          ; y = E / d, two roundings
    \N\()_4 vfnma.f32, \a, \o, \b, \a     ; E - y d, exact
    \N\()_4 vfma.f32, \o, \a, \c, \o      ; y + (E - y d) / d: one rounding
.endm

; tanh_fast: o = (E - 1) / (E + 1) = E r - r, E = e^(2 min(x, 20)), r =
; RN(1 / RN(E + 1)), with E r - r rounded once (fms). No cancellation for
; |x| > 1/2 (2.15 ULP measured); near 0 the rounding of E (up to 2^-24
; absolute) leaves the result good to about 2^-24 absolute only. The cap keeps E finite
; (E r - r would be inf * 0); tanh(20) rounds to 1. v27 = 20.
.macro TANH_FAST N, o, x, a, b, c
    \N\()_3 vmin.f32, \a, \x, 27
    \N\()_3 vadd.f32, \a, \a, \a
    \N\()_2 vexp.f32, \a, \a
    \N\()_3 vadd.f32, \b, \a, 31
    \N\()_2 vrcp.f32, \b, \b
    \N\()_4 vfms.f32, \o, \a, \b, \b
.endm

; The same to 2 ULP (fp32; needs a sixth register, e): E is kept as the
; unevaluated pair E_hi + E_lo = (u - 1) + u (2|x| - ln u), d = RN(E_hi + 2)
; with its exact remainder, and the quotient (E_hi + E_lo) / (E_hi + E_lo + 2)
; gets one correction step against both parts, so neither E nor E + 2 is
; rounded: what is left is ln u's rounding (carried by u (2|x| - ln u)) and the
; last fma. Past |x| = 8.3 (u > 2^24) u - 1 and d - 2 may round, where tanh
; is within 2^-23 of 1: the result stays within an ULP there. The sign goes
; to predicate p1 (vclt), so x is free for 1/d. v30 = 0, v28 = 2, v27 = 9.
.macro TANH_PAIR N, o, x, a, b, c, e
    \N\()_C vclt.f32, 1, \x, 30
    \N\()_2 vabs.f32, \a, \x
    \N\()_3 vmin.f32, \a, \a, 27
    \N\()_3 vadd.f32, \a, \a, \a          ; s = 2 min(|x|, 9)
    \N\()_2 vexp.f32, \b, \a              ; u
    \N\()_2 vln.f32, \c, \b
    \N\()_3 vsub.f32, \a, \a, \c          ; s - ln u, exact
    \N\()_3 vsub.f32, \c, \b, 31          ; E_hi = u - 1, exact (1 <= u <= 2^24)
    \N\()_3 vmul.f32, \a, \b, \a          ; E_lo = u (s - ln u)
    \N\()_3 vadd.f32, \b, \c, 28          ; d = RN(E_hi + 2)
    \N\()_3 vsub.f32, \e, \b, 28          ; d - 2, exact (d <= 2^24)
    \N\()_3 vsub.f32, \e, \c, \e          ; E_hi + 2 - d, exact
    \N\()_3 vadd.f32, \e, \e, \a          ; d_lo: E + 2 = d + d_lo
    \N\()_2 vrcp.f32, \x, \b              ; 1/d
    \N\()_3 vmul.f32, \o, \c, \x          ; y = E_hi / d, two roundings
    \N\()_4 vfnma.f32, \c, \o, \b, \c     ; E_hi - y d, exact
    \N\()_3 vadd.f32, \c, \c, \a          ; + E_lo
    \N\()_4 vfnma.f32, \c, \o, \e, \c     ; - y d_lo: E - y (E + 2)
    \N\()_4 vfma.f32, \o, \c, \x, \o      ; y + that / d: one rounding
    \N\()_2P vneg.f32, \o, \o, 1
.endm
