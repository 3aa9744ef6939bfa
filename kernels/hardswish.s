; @kernel     hardswish
; @summary    x * clamp(x + 3, 0, 6) / 6 as (x * RN(1/6)) * min(max(x + 3, 0), 6); fp16 computes in fp32
; @input      x range=-5,5
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  hardswish
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2.5
; @note       Four roundings (x + 3, the RN(1/6) constant, two products), each relative to the result.
.include "lib/act.s"

.macro HSWISH N, o, x, a, b, c
    \N\()_3 vadd.f32, \a, \x, 29        ; x + 3
    \N\()_3 vmax.f32, \a, \a, 30
    \N\()_3 vmin.f32, \a, \a, 27        ; clamp(x + 3, 0, 6)
    \N\()_3 vmul.f32, \b, \x, 28        ; x * RN(1/6)
    \N\()_3 vmul.f32, \o, \a, \b
.endm
.macro hswish_math N
    ACT_APPLY \N, HSWISH
.endm

    vbcasti.f32 v30, 0.0
    vbcasti.f32 v29, 3.0
    vbcasti.f32 v28, 1.0 / 6.0
    vbcasti.f32 v27, 6.0
    ELTWISE_1IN hswish_math
    halt
