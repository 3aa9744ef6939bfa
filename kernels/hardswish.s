; @kernel     hardswish
; @summary    x * clamp(x + 3, 0, 6) / 6 as (x * RN(1/6)) * min(max(x + 3, 0), 6); fp16 computes in fp32
; @input      x range=-5,5
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  hardswish
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2.5
; @note       Four roundings (x + 3, the RN(1/6) constant, two products), each relative to the result.
; @note       5 instructions per fp32 vector, 13 per fp16 vector (widened to two fp32 halves,
; @note       narrowed once).
.include "lib/eltwise.s"

.macro hardswish_f32 y, x
    vaddi.f32 %a\@, \x, 3.0
    vmaxi.f32 %c\@, %a\@, 0.0
    vmini.f32 %g\@, %c\@, 6.0             ; clamp(x + 3, 0, 6)
    vmuli.f32 %s\@, \x, 1.0 / 6.0         ; x * RN(1/6)
    vmul.f32  \y, %g\@, %s\@
.endm
.macro hardswish_math y, x
    LIN_WIDE hardswish_f32, \y, \x
.endm

    ELTWISE_1IN_LINEAR hardswish_math
    halt
