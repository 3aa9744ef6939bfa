; @kernel     leaky_relu
; @summary    x >= 0 ? x : alpha*x, as max(x, alpha*x) (alpha <= 1) or min(x, alpha*x) (alpha > 1)
; @input      x range=-8,8
; @output     y
; @param      alpha 0.01 slope for negative inputs
; @dtypes     fp16 fp32
; @split      blocks
; @reference  leaky_relu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=0
; @note       fp16: alpha is rounded to binary16 on broadcast, so alpha*x can differ from the
; @note       reference (which uses alpha as binary32) by the rounding of alpha: at most 1 ULP.
.include "lib/eltwise.s"

; s3 = alpha (binary32 bits), read as vbcast reads it.
.macro leaky_max_math y, x
    vmuls.DT %ax\@, \x, s3          ; alpha * x
    vmax.DT  \y, \x, %ax\@
.endm
.macro leaky_min_math y, x
    vmuls.DT %ax\@, \x, s3
    vmin.DT  \y, \x, %ax\@
.endm

    srli    s5, s3, 31              ; alpha < 0: max(x, alpha*x) is still right
    bnez    s5, gentle
    lf      s4, 1.0
    blt     s4, s3, steep           ; binary32 bits of non-negative floats order like their values
gentle:
    ELTWISE_1IN_LINEAR leaky_max_math
    halt
steep:
    ELTWISE_1IN_LINEAR leaky_min_math
    halt
