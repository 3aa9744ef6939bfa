; The exponential family's shared fp32 math in linear form (lib/eltwise.s,
; the _LINEAR skeletons and LIN_WIDE): expm1 and the ELU family's two
; branches in one chain, log1p's parts, softplus, and mish's n = e (e + 2).
; Each macro is one vector's dataflow on virtual registers, `name y, x, ...`,
; with its temporaries named per expansion (`%t\@`), so the assembler
; schedules it for the machine. Constants are literals (vaddi, vmini, vmaxi
; ...) wherever the instruction set has the form, so they take no vector
; register; a parameter, or a constant that is a multiplier inside an fma,
; is a vector register the kernel sets.
;
; The roundings are those of the hand-scheduled kernels these replace,
; step for step, so results are bit-identical to them. Two differences in form: a linear block cannot
; write a virtual register under a merging mask, so where the old kernels
; wrote one branch's result into the other's lanes under a predicate, both
; are computed and a vsel picks per lane; and the ELU family passes its
; linear branch through the expm1 chain (LIN_ELU_PASS) instead of keeping
; max(x, 0) beside it, which saves the registers that value held.
.include "lib/eltwise.s"

; ---- expm1 -------------------------------------------------------------------
; y = e^a - 1 to about an ULP, for u = e^a normal and finite (a in [-88, 88]):
; u = RN(e^a) loses the low bits of e^a - 1 near 0, but ln u recovers them:
; e^a - 1 = (u - 1) + u (a - ln u), with a - ln u the (tiny) relative error
; of u, exact by Sterbenz, as is u - 1.
.macro LIN_EXPM1 y, a
    vexp.f32  %u\@, \a                  ; u
    vln.f32   %l\@, %u\@                ; ln u
    vsub.f32  %d\@, \a, %l\@            ; a - ln u
    vrsubi.f32 %w\@, %u\@, 1.0          ; 1 - u, exact
    vfms.f32  \y, %u\@, %d\@, %w\@      ; (u - 1) + u (a - ln u): - (1 - u) keeps a zero's sign
.endm

; y = x > 0 ? x : expm1(max(x, -88)): both branches of the ELU family in one
; chain (below -88, expm1 is -1 in fp32 and e^x would leave the normal
; range). With c = max(x, -88), u = e^min(c, 0) and (u - 1) + u (c - ln u),
; the lanes with c > 0 get u = 1, ln u = 0 and c itself, exactly (also with
; an approximate SFU: e^0 and ln 1 are exact there too); the others get
; LIN_EXPM1(max(min(x, 0), -88)), bit for bit. So nothing selects, and no
; value waits beside the exponential for the linear branch: x or max(x, 0)
; would span the whole chain, one vector register per iteration in flight.
; c is needed again after the two SFU steps: xl is x read again for it
; (LIN_WIDE_X), or x; the assembler merges the second c into the first where
; holding it schedules as fast (docs/scheduling.md).
.macro LIN_ELU_PASS y, x, xl
    vmaxi.f32 %c\@, \x, -88.0
    vmini.f32 %m\@, %c\@, 0.0
    vexp.f32  %u\@, %m\@                ; u = e^min(c, 0)
    vln.f32   %l\@, %u\@
    vmaxi.f32 %cl\@, \xl, -88.0         ; c again
    vsub.f32  %d\@, %cl\@, %l\@         ; c - ln u
    vrsubi.f32 %w\@, %u\@, 1.0          ; 1 - u
    vfms.f32  \y, %u\@, %d\@, %w\@      ; u d - (1 - u): x = -0 gives -0
.endm

; ---- log1p and softplus ---------------------------------------------------------
; log1p(t) for t >= 0 in three parts, log1p(t) = ln u + c / u to well under
; an ULP: u = RN(1 + t) loses the low bits of t, c = t - (u - 1) is what it
; lost (exact while u <= 2^24; beyond, c is at most 2 against ln u > 16). For
; small t, c is the whole result, so 1/u must be good to an ULP: one more SFU
; operation (vrcp), which no ALU estimate of the same cost matches. The
; caller adds fma(c, r, ln), alone or together with a remainder of its own.
.macro LIN_LOG1P_PARTS ln, c, r, t
    vaddi.f32 %u\@, \t, 1.0             ; u = RN(1 + t)
    vsubi.f32 %m\@, %u\@, 1.0           ; u - 1, exact
    vsub.f32  \c, \t, %m\@              ; c
    vrcp.f32  \r, %u\@                  ; 1/u
    vln.f32   \ln, %u\@                 ; ln u
.endm

; y = log1p(t) for t >= 0 (LIN_LOG1P_PARTS, added with one rounding).
.macro LIN_LOG1P y, t
    LIN_LOG1P_PARTS %ln\@, %c\@, %r\@, \t
    vfma.f32  \y, %c\@, %r\@, %ln\@
.endm

; y = log1p(t) for t >= 0, for a result narrowed to fp16 (one SFU step
; fewer than LIN_LOG1P): ln u, u = RN(1 + t), is off by up to 2^-24 / t
; relative from u's rounding, so it is taken where t >= 2^-8 (2^-16); below,
; the series t - t^2/2 (one fma), off by t^2/3 (under 2^-17). Both are far
; inside the 2^-11 of the result that an fp16 ULP is at least.
.macro LIN_LOG1P_HALF y, t
    vaddi.f32 %u\@, \t, 1.0             ; u = RN(1 + t)
    vln.f32   %ln\@, %u\@                ; ln u
    vmuli.f32 %h\@, \t, -0.5
    vfma.f32  %s\@, \t, %h\@, \t          ; t - t^2/2
    vclti.f32 %k\@, \t, 0x1p-8
    vsel.f32  \y, %s\@, %ln\@, %k\@
.endm

; LIN_LOG1P, or on fp16 lanes LIN_LOG1P_HALF.
.macro LIN_LOG1P_DT y, t
.if DT_BYTES == 2
    LIN_LOG1P_HALF \y, \t
.else
    LIN_LOG1P \y, \t
.endif
.endm

; y = x > threshold ? x : log1p(e^x) (PyTorch's softplus for beta = 1): both
; branches are computed and a vsel picks (beyond the threshold e^x may
; overflow; those lanes are not chosen). \thr is the threshold's register.
; The choice needs x after the SFU steps: xl is x read again (LIN_WIDE_X),
; or x; the assembler merges the repeat where holding x schedules as fast.
; \thr is a scalar register, so no vector register holds it in the loop.
.macro LIN_SOFTPLUS y, x, xl, thr
    vexp.f32  %t\@, \x
    LIN_LOG1P_DT %s\@, %t\@
    vcles.f32 %k\@, \xl, \thr           ; the log1p lanes
    vsel.f32  \y, %s\@, \xl, %k\@
.endm

; The same for beta x, beta a power of two (beta x and the division by beta
; exact): y = beta x > threshold ? x : log1p(e^(beta x)) / beta. \thr and
; \beta are scalar registers (threshold and beta), \rbeta the vector
; register of 1/beta.
.macro LIN_SOFTPLUS_POW2 y, x, xl, thr, beta, rbeta
    vmuls.f32 %a\@, \x, \beta           ; beta x
    vexp.f32  %t\@, %a\@
    LIN_LOG1P_DT %l\@, %t\@
    vmul.f32  %s\@, %l\@, \rbeta         ; / beta
    vmuls.f32 %al\@, \xl, \beta         ; beta x again
    vcles.f32 %k\@, %al\@, \thr
    vsel.f32  \y, %s\@, \xl, %k\@
.endm

; ---- mish ------------------------------------------------------------------------
; n = e^2 + 2e = (1 + e)^2 - 1 without the cancellation, e = e^min(x, 20),
; rounded once (fma; 2e is exact). x n / (n + 2) is mish (x tanh(softplus(x))).
.macro LIN_MISH_N n, x
    vmini.f32 %m\@, \x, 20.0
    vexp.f32  %e\@, %m\@                ; e
    vadd.f32  %t\@, %e\@, %e\@          ; 2e
    vfma.f32  \n, %e\@, %e\@, %t\@      ; n
.endm

; y = x n / (n + 2) with the quotient rounded twice (rcp, mul): mish_fast,
; and mish's fp16 path. xl is x again for the product (LIN_WIDE_X), or x.
.macro LIN_MISH_FAST y, x, xl
    LIN_MISH_N %n\@, \x
    vaddi.f32 %d\@, %n\@, 2.0           ; n + 2
    vrcp.f32  %r\@, %d\@
    vmul.f32  %q\@, %n\@, %r\@          ; n / (n + 2)
    vmul.f32  \y, %q\@, \xl
.endm

