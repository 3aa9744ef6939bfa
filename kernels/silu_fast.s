; @kernel     silu_fast
; @summary    x * sigmoid(x) = x * rcp(1 + e^-x), each step rounded: the short form of silu; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  silu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2.5 abs=0x1p-120
; @note       5 instructions per fp32 vector (goal 5): the roundings of e^-x, 1 + e^-x, the
; @note       reciprocal and the product by x add up to 3.5 ULP in theory, 2.42 measured over 2^20
; @note       inputs. silu (14 instructions) keeps 1 + e^-x as an exact pair and corrects the
; @note       quotient x / (1 + e^-x) once: 1.4 ULP. fp32: for x < -88.72, e^-x overflows and the
; @note       result is -0 where the true value is below 104 * 2^-128 in magnitude (abs tolerance).
; @note       x is loaded a second time for the last product instead of held in a register through
; @note       two SFU latencies (lib/eltwise.s, LIN_WIDE_X); fp16 widens it twice: 15
; @note       instructions per fp16 vector as written. Where holding x schedules as fast (fp16 on
; @note       the default config) the assembler merges the repeat: 13 (docs/scheduling.md).
.include "lib/lin_sigmoid.s"

.macro silu_fast_f32 y, x, xl
    LIN_SWISH \y, \x, \xl, vmuli.f32, -1.0
.endm
.macro silu_fast_math y, x
    LIN_WIDE_X silu_fast_f32, \y, \x  ; x read again for the product
.endm

    ELTWISE_1IN_LINEAR silu_fast_math
    halt
