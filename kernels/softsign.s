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
.include "lib/act.s"

.macro SOFTSIGN N, o, x, a, b, c
    \N\()_2 vabs.f32, \a, \x
    \N\()_3 vadd.f32, \a, \a, 31
    \N\()_2 vrcp.f32, \a, \a
    \N\()_3 vmul.f32, \o, \a, \x
.endm
.macro softsign_math N
    ACT_APPLY \N, SOFTSIGN
.endm

    ACT_ONE
    ELTWISE_1IN softsign_math
    halt
