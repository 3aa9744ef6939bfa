; @kernel     swiglu
; @summary    silu(a) * b = a * rcp(1 + e^-a) * b; fp16 computes in fp32
; @input      a range=-10,10
; @input      b range=-4,4
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  swiglu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=4 abs=0x1p-100
; @note       silu's four roundings (see silu.s) plus the product by b. Where e^-a overflows
; @note       (a < -88.72) silu is flushed to -0 for a true value below 2^-120 in magnitude, so the
; @note       product's absolute error is below 2^-120 |b|: the abs bound 2^-100 holds for |b| < 2^20.
.equ SWISH_K_LO, 0
.include "lib/act.s"

; a in bank register 0, b in 2 (ELTWISE_2IN).
.macro swiglu_math N
    GATED_APPLY \N, SWISH_EXACT
.endm

    ACT_ONE
    vbcasti.f32 v29, -1.0
    ELTWISE_2IN swiglu_math
    halt
