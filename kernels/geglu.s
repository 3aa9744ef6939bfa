; @kernel     geglu
; @summary    gelu_erf(a) * b; fp16 computes in fp32
; @input      a range=-8,8
; @input      b range=-4,4
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  geglu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=6.5 abs=0x1p-100
; @note       gelu_erf (see gelu_erf.s) and one more rounding for the product by b. Where gelu_erf(a)
; @note       is subnormal (a < -13.2) its few bits are scaled by b: the abs bound 2^-100 covers |b| < 2^40.
.include "lib/act.s"

; a in bank register 0, b in 2 (ELTWISE_2IN).
.macro geglu_math N
    GATED_APPLY \N, GELU_ERF
.endm

    ACT_ONE
    vbcasti.f32 v30, 14.5
    vbcasti.f32 v29, -0.5
    vbcasti.f32 v28, 0.5
    vbcasti.f32 v27, 0.0
    ELTWISE_2IN geglu_math
    halt
