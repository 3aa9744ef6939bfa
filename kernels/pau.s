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
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=6 abs=0x1p-24
; @note       Defaults: "pade_optimized_leakyrelu" of the PAU authors' code (ml-research/pau,
; @note       Molina et al., ICLR 2020): leaky ReLU (slope 0.01) within 0.034 on [-3, 3].
; @note       fp32: twelve roundings (nine Horner fmas/products, 1 + |Q|, the reciprocal, the
; @note       product); measured on 2^20 inputs over every binade: at most 5.6 ULP wherever the
; @note       error exceeds 2^-24. On [-3.8, -0.07] y is small (|y| < 0.13) next to P's terms
; @note       (|a_k x^k| up to 200): the Horner sum cancels, and the error is absolute, at most
; @note       2^-24.2 measured. fp16: the fp32 result rounded once, all 65536 inputs: at most
; @note       0.59 ULP. fp32: where a5 x^5 overflows binary32 (|x| > 6e7 with the defaults) the
; @note       result is recomputed in u = 1/x as (P/x^4) / ((1 + |Q|)/x^4). The loop only flags
; @note       such vectors (y - y is NaN: a masked store into a flag vector at the top of the UB);
; @note       when the flag is set, a pass after the tensor reloads the core's x and y and fixes
; @note       those lanes. A coefficient set whose b4 x^4 overflows first (e.g. a5 = 0) is not
; @note       covered beyond that point. fp16 inputs (|x| <= 65504) never overflow fp32 unless a
; @note       coefficient exceeds 1e14.
.equ ELT_UB_RESERVE, VLENB         ; the overflow flag (PAU_FLAG, below)
.include "lib/eltwise.s"

; Parameters: a0..a4 stay in s3..s7 (the skeleton keeps them) and enter as the
; scalar addends of vfmas; a5 and b4 multiply, and b1..b3 would be in s9..s11,
; which the skeleton takes: those five live in vector registers.
;   v31 = a5, v30 = b4, v29 = b3, v28 = b2, v27 = b1
.macro pau_rational y, x
    vfmas.f32 %p5\@, v31, \x, s7        ; a5 x + a4
    vfma.f32  %q3\@, v30, \x, v29       ; b4 x + b3
    vfmas.f32 %p4\@, %p5\@, \x, s6
    vfma.f32  %q2\@, %q3\@, \x, v28
    vfmas.f32 %p3\@, %p4\@, \x, s5
    vfma.f32  %q1\@, %q2\@, \x, v27
    vfmas.f32 %p2\@, %p3\@, \x, s4
    vmul.f32  %Q\@, %q1\@, \x           ; Q(x)
    vfmas.f32 %P\@, %p2\@, \x, s3       ; P(x)
    vabs.f32  %aq\@, %Q\@
    vaddi.f32 %d\@, %aq\@, 1.0          ; 1 + |Q(x)|
    vrcp.f32  %r\@, %d\@
    vmul.f32  \y, %P\@, %r\@
.endm

; The overflow flag: one vector at the top of the UB, above the skeleton's
; tile buffers (lib/eltwise.s: six of T3 bytes), aligned to a whole vector:
; core.ub_bytes need only be a multiple of ub.banks x ub.bank_bytes (32770
; with 5 banks of 2 bytes), and the flag's sld and vst need 8-byte and
; element alignment. The tile buffers end on a 256-byte step, below it.
.equ PAU_FLAG, (UB_BYTES - VLENB) / VLENB * VLENB
.ifdef T3
.if 6 * T3 > PAU_FLAG
.error "pau: no room above the tile buffers for the overflow flag"
.endif
.endif

.macro pau_math y, x
.if DT_BYTES == 2
    LIN_WIDE pau_rational, \y, \x
.else
    pau_rational \y, \x
    vsub.f32  %z\@, \y, \y              ; 0, or NaN where y is not finite
    vcne.f32  %bad\@, %z\@, %z\@
    vst.f32   \y, [s0 + PAU_FLAG], %bad\@  ; flags the tensor (non-zero bits)
.endif
.endm

; fp32, where x is finite and y is not (a5 x^5 overflowed): y = (P(x) / x^4) /
; ((1 + |Q(x)|) / x^4) in u = 1/x, whose terms stay small: P/x^4 = a5 x + a4 +
; a3 u + a2 u^2 + a1 u^3 + a0 u^4 and (1 + |Q|)/x^4 = u^4 + |b4 + b3 u + b2 u^2
; + b1 u^3|. x in v0, y in v1, v7 = a0; uses v2..v5, p1, p2.
.macro PAU_FIX
    vsub.f32    v2, v0, v0
    vceq.f32    p1, v2, v2              ; x finite
    vsub.f32    v2, v1, v1
    vcne.f32    p2, v2, v2              ; y not finite
    pand        p1, p1, p2
    vrcp.f32    v2, v0                  ; u
    vfmas.f32   v3, v7, v2, s4          ; a0 u + a1
    vfmas.f32   v3, v3, v2, s5
    vfmas.f32   v3, v3, v2, s6
    vfmas.f32   v3, v3, v2, s7
    vfma.f32    v3, v31, v0, v3         ; P / x^4
    vfma.f32    v4, v27, v2, v28        ; b1 u + b2
    vfma.f32    v4, v4, v2, v29
    vfma.f32    v4, v4, v2, v30         ; Q / x^4
    vabs.f32    v4, v4
    vmul.f32    v5, v2, v2
    vmul.f32    v5, v5, v5              ; u^4
    vadd.f32    v4, v4, v5
    vrcp.f32    v4, v4
    vmul.f32    v1, v3, v4, p1
.endm

; The pass after the tensor, when the flag is set: this core's x and y, in
; chunks of PAU_CHUNK bytes (x at UB 0, y above it), every lane through PAU_FIX.
.equ PAU_CHUNK, 4096
.macro PAU_FIX_PASS done
    SPLIT_BLOCKS \done
    add     s21, s1, s25            ; GM x
    add     s22, s2, s25            ; GM y
    srd     s14, vlenb
    divu    s15, s14, s17           ; lanes per vector
    vbcast.f32 v7, s3               ; a0
chunk\@:
    li      s23, PAU_CHUNK
    min     s24, s20, s23
    li      s8, 0
    dmald   s8, s21, s24, 0
    li      s9, PAU_CHUNK
    dmald   s9, s22, s24, 0
    dmawait 0
    divu    s13, s24, s17           ; elements
    li      s10, 0
    li      s11, PAU_CHUNK
vec\@:
    pwhile.f32 p7, s13
    vld.f32 v0, [s10], p7
    vld.f32 v1, [s11], p7
    PAU_FIX
    vst.f32 v1, [s11], p7
    add     s10, s10, s14
    add     s11, s11, s14
    sub     s13, s13, s15
    blt     s0, s13, vec\@
    li      s9, PAU_CHUNK
    dmast   s9, s22, s24, 1
    dmawait 1
    add     s21, s21, s24
    add     s22, s22, s24
    sub     s20, s20, s24
    bnez    s20, chunk\@
.endm

    vbcast.f32  v31, s8                 ; a5
    vbcast.f32  v30, s12                ; b4
    vbcast.f32  v29, s11                ; b3
    vbcast.f32  v28, s10                ; b2
    vbcast.f32  v27, s9                 ; b1
.if DT_BYTES == 4
    vbcasti.i32 v0, 0
    li          s8, PAU_FLAG
    vst.i32     v0, [s8]                ; clear the overflow flag
.endif
    ELTWISE_1IN_PAD_LINEAR pau_math
.if DT_BYTES == 4
    li          s8, PAU_FLAG            ; any non-zero bits in the flag?
    li          s9, VLENB / 8
    li          s10, 0
scan:
    sld         s11, [s8]
    or          s10, s10, s11
    addi        s8, s8, 8
    loop        s9, scan
    beqz        s10, done
    PAU_FIX_PASS done
.endif
done:
    halt
