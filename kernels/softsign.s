; @kernel     softsign
; @summary    x / (1 + |x|) as x * rcp(1 + |x|); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  softsign
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2
; @note       Three roundings (1 + |x|, the correctly rounded reciprocal, the product).
; @note       x is loaded a second time for the product (lib/eltwise.s, LIN_WIDE_X; fp16 widens it
; @note       twice), merged back by the assembler where holding x schedules as fast (the default
; @note       config). With SFU latency 30 (1x64x56x56): fp16 102,635 -> 85,387 cycles, fp32
; @note       106,222 -> 81,232.
.include "lib/eltwise.s"

.macro softsign_f32 y, x, xl
    vabs.f32  %a\@, \x
    vaddi.f32 %d\@, %a\@, 1.0           ; 1 + |x|
    vrcp.f32  %r\@, %d\@
    vmul.f32  \y, %r\@, \xl
.endm

.macro softsign_math y, x
    LIN_WIDE_X softsign_f32, \y, \x     ; x read again for the product
.endm

    ELTWISE_1IN_LINEAR softsign_math
    halt
