; @kernel     mish
; @summary    x * tanh(softplus(x)) = x * n / (n + 2), n = e (e + 2), e = e^min(x, 20); fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @reference  mish
; @bound      fp16 ulp=1
; @bound      fp32 ulp=4.5 abs=0x1p-120
; @note       ((1 + e)^2 - 1) / ((1 + e)^2 + 1) written as e (e + 2) / (e (e + 2) + 2): no
; @note       cancellation for x << 0. x is capped at 20 for e^x (tanh(softplus(x)) rounds to 1 from
; @note       x = 9 on). fp32: where e^x underflows the result is tiny (abs bound 2^-120).
; @note       fp32 goal 8 instructions: the quotient n / (n + 2) takes one fma correction step (two
; @note       more instructions, 10 per fp32 vector): without it the roundings reach 4.5 ULP; with it
; @note       4.0 at worst over 2^20 inputs (goal 4), so the bound is 4.5.
.include "lib/act.s"

.macro mish_math N
    ACT_APPLY \N, MISH
.endm

    ACT_ONE
    vbcasti.f32 v28, 20.0
    vbcasti.f32 v27, 2.0
    ELTWISE_1IN mish_math
    halt
