; @kernel     prelu
; @summary    x > 0 ? x : alpha[c] * x, one alpha per channel, as the reference writes it: a product, a compare and a select
; @input      x range=-8,8
; @input      alpha per_channel range=-0.5,1.5
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  prelu
; @tolerance  fp16 ulp=0
; @tolerance  fp32 ulp=0
; @note       Exact, signed zeros included: alpha*x rounded once is the reference's one rounding, and
; @note       the select keeps x where x > 0, alpha*x elsewhere, so x = +0 with alpha < 0 gives -0 as
; @note       the reference does (it gave +0 as fma(alpha, min(x,0), max(x,0)), the same three
; @note       VALU instructions: 1024 of 1024 zeros of the wrong sign with alpha = -0.25). At
; @note       1x64x56x56 the same cycles on the default config (29,307 fp16, 57,848 fp32); on edge
; @note       the select's predicates unroll the loop twice: 117,711 -> 118,286 fp16, 228,326 ->
; @note       229,399 fp32.
; @note       alpha is a per-channel tensor in the run's dtype (--input alpha=FILE.npy, shape [C]);
; @note       its C0 block is loaded once per C1 block a core touches (lib/perchan.s).
.include "lib/perchan.s"

; a: the vector register holding alpha of x's channels (lib/perchan.s).
.macro prelu_math y, x, a
    vmul.DT   %ax\@, \a, \x             ; alpha * x
    vcgti.DT  %pos\@, \x, 0.0           ; x > 0: not for +-0 or NaN
    vsel.DT   \y, \x, %ax\@, %pos\@      ; x > 0 ? x : alpha * x
.endm

    PERCHAN_1IN prelu_math
    halt
