; @kernel     hardsigmoid
; @summary    clamp((x + 3) / 6, 0, 1) as min(max((x + 3) * RN(1/6), 0), 1); fp16 computes in fp32
; @input      x range=-5,5
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  hardsigmoid
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=1.5
; @note       (x + 3) is exact near x = -3, where the result goes to 0, so the error stays relative:
; @note       at most the roundings of x + 3 and of the product plus the error of RN(1/6).
; @note       4 instructions per fp32 vector, 11 per fp16 vector (widened to two fp32 halves,
; @note       narrowed once). Padded channels are zeroed by the skeleton (f(0) = 1/2).
.include "lib/eltwise.s"

.macro hardsigmoid_f32 y, x
    vaddi.f32 %a\@, \x, 3.0
    vmuli.f32 %m\@, %a\@, 1.0 / 6.0       ; * RN(1/6)
    vmaxi.f32 %c\@, %m\@, 0.0
    vmini.f32 \y, %c\@, 1.0
.endm
.macro hardsigmoid_math y, x
    LIN_WIDE hardsigmoid_f32, \y, \x
.endm

    ELTWISE_1IN_PAD_LINEAR hardsigmoid_math
    halt
