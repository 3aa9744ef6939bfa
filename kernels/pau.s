; @kernel     pau
; @summary    Pade activation unit P(x) / (1 + |Q(x)|), P degree 5, Q degree 4, Horner with fma; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @param      a0 0.0335583603 P(x) = a0 + a1 x + ... + a5 x^5 (defaults: PAU's leaky ReLU init)
; @param      a1 0.505000375
; @param      a2 1.65343934
; @param      a3 2.01001052
; @param      a4 0.931901999
; @param      a5 0.152424124
; @param      b1 3.30847488e-06 Q(x) = b1 x + b2 x^2 + b3 x^3 + b4 x^4
; @param      b2 3.98021568
; @param      b3 5.12471206e-07
; @param      b4 0.301830109
; @dtypes     fp16 fp32
; @split      blocks
; @reference  pau
; @bound      fp16 ulp=1
; @bound      fp32 ulp=6 abs=0x1p-24
; @note       Defaults: "pade_optimized_leakyrelu" of the PAU authors' code (ml-research/pau,
; @note       Molina et al., ICLR 2020): leaky ReLU (slope 0.01) within 0.034 on [-3, 3].
; @note       fp32: twelve roundings (nine Horner fmas/products, 1 + |Q|, the reciprocal, the
; @note       product); measured on 2^20 inputs over every binade: at most 5.6 ULP wherever the
; @note       error exceeds 2^-24. On [-3.8, -0.07] y is small (|y| < 0.13) next to P's terms
; @note       (|a_k x^k| up to 200): the Horner sum cancels, and the error is absolute, at most
; @note       2^-24.2 measured. fp16: the fp32 result rounded once, all 65536 inputs: at most
; @note       0.59 ULP. fp32: where a5 x^5 overflows binary32 (|x| > 6e7 with the defaults) a
; @note       group is recomputed in u = 1/x as (P/x^4) / ((1 + |Q|)/x^4); a coefficient set
; @note       whose b4 x^4 overflows first (e.g. a5 = 0) is not covered beyond that point. fp16
; @note       inputs (|x| <= 65504) never overflow fp32 unless a coefficient exceeds 1e14.
.include "lib/eltwise.s"

; Register plan. The X4 banks (lib/x4.s) leave v24..v31 for shared
; constants, but PAU needs 11 (a0..a5, b1..b4, 1.0). It only needs three
; working registers per copy in fp32 (x, P, Q: bank registers 0, 1, 2), so
; bank registers 3..5 hold constants too, broadcast once into every copy:
;   v24..v29 = a0..a5, v30 = b4, v31 = b3,
;   fp32: bank 3 = b2, bank 4 = b1, bank 5 = 1.0;
;   fp16: bank 4 = b1, bank 5 = b2; each half needs x16, x, P, Q (banks
;         0..3), so 1.0 is broadcast into the dead x at its one use.
; The skeleton never writes bank registers 2..5 of a one-input kernel.

.macro PAU_ONE_X4 d
    vbcasti.f32 v[\d], 1.0
    vbcasti.f32 v[\d + 6], 1.0
    vbcasti.f32 v[\d + 12], 1.0
    vbcasti.f32 v[\d + 18], 1.0
.endm
.macro PAU_ONE_X1 d
    vbcasti.f32 v[\d], 1.0
.endm

; o = P(x) / (1 + |Q(x)|) on fp32 lanes, Horner with fma; q is a temporary.
; B2, B1, ONE: the bank registers of b2, b1 and 1.0 (ONE = 0: broadcast
; 1.0 into x once x is dead).
.macro PAU_RATIONAL N, o, x, q, B2, B1, ONE
    \N\()_4 vfma.f32, \o, 29, \x, 28    ; a5 x + a4
    \N\()_4 vfma.f32, \q, 30, \x, 31    ; b4 x + b3
    \N\()_4 vfma.f32, \o, \o, \x, 27
    \N\()_4 vfma.f32, \q, \q, \x, \B2
    \N\()_4 vfma.f32, \o, \o, \x, 26
    \N\()_4 vfma.f32, \q, \q, \x, \B1
    \N\()_4 vfma.f32, \o, \o, \x, 25
    \N\()_3 vmul.f32, \q, \q, \x        ; Q(x)
    \N\()_4 vfma.f32, \o, \o, \x, 24    ; P(x)
    \N\()_2 vabs.f32, \q, \q
.if \ONE == 0
    PAU_ONE_\N \x
    \N\()_3 vadd.f32, \q, \q, \x        ; 1 + |Q(x)|
.else
    \N\()_3 vadd.f32, \q, \q, \ONE
.endif
    \N\()_2 vrcp.f32, \q, \q
    \N\()_3 vmul.f32, \o, \o, \q
.endm

; fp32, for lanes where x is finite and y is not (a5 x^5 overflowed):
; y = (P(x) / x^4) / ((1 + |Q(x)|) / x^4) in u = 1/x, whose terms stay
; small: P/x^4 = a5 x + a4 + a3 u + a2 u^2 + a1 u^3 + a0 u^4 and
; (1 + |Q|)/x^4 = u^4 + |b4 + b3 u + b2 u^2 + b1 u^3|. Temporaries: the
; bank-2 registers of all four copies (dead once y is formed).
.macro PAU_FIX x, y, b2, b1
    vsub.f32    v2, \x, \x
    vceq.f32    p1, v2, v2              ; x finite
    vsub.f32    v2, \y, \y
    vcne.f32    p2, v2, v2              ; y not finite
    pand        p1, p1, p2
    vrcp.f32    v2, \x                  ; u
    vfma.f32    v8, v24, v2, v25        ; a0 u + a1
    vfma.f32    v8, v8, v2, v26
    vfma.f32    v8, v8, v2, v27
    vfma.f32    v8, v8, v2, v28
    vfma.f32    v8, v29, \x, v8         ; P / x^4
    vfma.f32    v14, \b1, v2, \b2       ; b1 u + b2
    vfma.f32    v14, v14, v2, v31
    vfma.f32    v14, v14, v2, v30       ; Q / x^4
    vabs.f32    v14, v14
    vmul.f32    v20, v2, v2
    vmul.f32    v20, v20, v20           ; u^4
    vadd.f32    v14, v14, v20
    vrcp.f32    v14, v14
    vmul.f32    \y, v8, v14, p1
.endm

; A group whose results are all finite (y - y is 0, not NaN, in every lane
; of its four vectors) takes one not-taken branch; others are fixed copy by
; copy. Each copy's check starts as soon as its y is ready.
.macro PAU_FIX_X4
    vsub.f32    v2, v1, v1
    vsub.f32    v8, v7, v7
    vsub.f32    v14, v13, v13
    vsub.f32    v20, v19, v19
    vcne.f32    p1, v2, v2
    vcne.f32    p2, v8, v8
    vcne.f32    p3, v14, v14
    vcne.f32    p4, v20, v20
    por         p1, p1, p2
    por         p3, p3, p4
    por         p1, p1, p3
    pcnt.f32    s4, p1
    beqz        s4, fine\@
    PAU_FIX     v0, v1, v3, v4
    PAU_FIX     v6, v7, v9, v10
    PAU_FIX     v12, v13, v15, v16
    PAU_FIX     v18, v19, v21, v22
fine\@:
.endm
.macro PAU_FIX_X1
    vsub.f32    v2, v1, v1
    vcne.f32    p1, v2, v2
    pcnt.f32    s4, p1
    beqz        s4, fine\@
    PAU_FIX     v0, v1, v3, v4
fine\@:
.endm

; Software-pipelined (lib/eltwise.s, _PIPE): both paths write bank register
; 1 at their first step and read (fp16: write) bank register 0 to their
; last, so MEM stores the previous outputs first and loads the next inputs
; last.
.macro pau_math N, MEM
    \MEM   0
    \MEM   1
    \MEM   2
    \MEM   3
.if DT_BYTES == 2
    \N\()_2 vcvtl.f32, 2, 0
    PAU_RATIONAL \N, 1, 2, 3, 5, 4, 0   ; low half into bank 1
    \N\()_2 vcvth.f32, 2, 0
    PAU_RATIONAL \N, 0, 2, 3, 5, 4, 0   ; high half into bank 0 (x16 is dead)
    \N\()_3 vcvtn.f16, 1, 1, 0
.else
    PAU_RATIONAL \N, 1, 0, 2, 3, 4, 5
    PAU_FIX_\N
.endif
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
.endm

    vbcast.f32  v24, s3                 ; a0
    vbcast.f32  v25, s4
    vbcast.f32  v26, s5
    vbcast.f32  v27, s6
    vbcast.f32  v28, s7
    vbcast.f32  v29, s8                 ; a5
    vbcast.f32  v30, s12                ; b4
    vbcast.f32  v31, s11                ; b3
.if DT_BYTES == 2
    vbcast.f32  v4, s9                  ; bank 4 = b1
    vbcast.f32  v10, s9
    vbcast.f32  v16, s9
    vbcast.f32  v22, s9
    vbcast.f32  v5, s10                 ; bank 5 = b2
    vbcast.f32  v11, s10
    vbcast.f32  v17, s10
    vbcast.f32  v23, s10
.else
    vbcast.f32  v3, s10                 ; bank 3 = b2
    vbcast.f32  v9, s10
    vbcast.f32  v15, s10
    vbcast.f32  v21, s10
    vbcast.f32  v4, s9                  ; bank 4 = b1
    vbcast.f32  v10, s9
    vbcast.f32  v16, s9
    vbcast.f32  v22, s9
    vbcasti.f32 v5, 1.0                 ; bank 5 = 1.0
    vbcasti.f32 v11, 1.0
    vbcasti.f32 v17, 1.0
    vbcasti.f32 v23, 1.0
.endif
    ELTWISE_1IN_PAD_PIPE pau_math
    halt
