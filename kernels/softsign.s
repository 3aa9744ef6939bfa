; @kernel     softsign
; @summary    x / (1 + |x|) as x * rcp(1 + |x|); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  softsign
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2
; @note       Three roundings (1 + |x|, the correctly rounded reciprocal, the product).
.include "lib/eltwise.s"

.macro softsign_f32 y, x
    vabs.f32  %a\@, \x
    vaddi.f32 %d\@, %a\@, 1.0           ; 1 + |x|
    vrcp.f32  %r\@, %d\@
    vmul.f32  \y, %r\@, \x
.endm

.macro softsign_math y, x
    LIN_WIDE softsign_f32, \y, \x
.endm

    ELTWISE_1IN_LINEAR softsign_math
    halt
