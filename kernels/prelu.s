; @kernel     prelu
; @summary    x > 0 ? x : alpha[c] * x, one alpha per channel, as alpha*min(x,0) + max(x,0) in one fma
; @input      x range=-8,8
; @input      alpha per_channel range=-0.5,1.5
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  prelu
; @tolerance  fp16 ulp=0
; @tolerance  fp32 ulp=0
; @note       Exact: max(x,0) and min(x,0) are exact, and fma(alpha, min(x,0), max(x,0)) is either
; @note       x + alpha*0 = x (x > 0) or alpha*x + 0 rounded once, the reference rounded once.
; @note       alpha is a per-channel tensor in the run's dtype (--input alpha=FILE.npy, shape [C]);
; @note       its C0 block is loaded once per C1 block a core touches (lib/perchan.s).
.include "lib/perchan.s"

; a: the vector register holding alpha of x's channels (lib/perchan.s).
.macro prelu_math y, x, a
    vmaxi.DT %pos\@, \x, -0.0          ; -0 for x <= 0: the sum keeps alpha * x exactly there
    vmini.DT %neg\@, \x, 0.0
    vfma.DT  \y, \a, %neg\@, %pos\@  ; alpha * min(x, 0) + max(x, 0)
.endm

    PERCHAN_1IN prelu_math
    halt
