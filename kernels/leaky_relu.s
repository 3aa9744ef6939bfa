; @kernel     leaky_relu
; @summary    x >= 0 ? x : alpha*x, as max(x, alpha*x) (alpha <= 1) or min(x, alpha*x) (alpha > 1)
; @input      x range=-8,8
; @output     y
; @param      alpha 0.01 slope for negative inputs
; @dtypes     fp16 fp32
; @reference  leaky_relu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=0
; @note       fp16: alpha is rounded to binary16 on broadcast, so alpha*x can differ from the
; @note       reference (which uses alpha as binary32) by the rounding of alpha: at most 1 ULP.
.include "lib/eltwise.s"

.macro leaky_max_body out, in
    vmul.DT \out, \in, v30
    vmax.DT \out, \in, \out
.endm
.macro leaky_min_body out, in
    vmul.DT \out, \in, v30
    vmin.DT \out, \in, \out
.endm

    vbcast.DT v30, s3               ; alpha
    srli    s5, s3, 31              ; alpha < 0: max(x, alpha*x) is still right
    bnez    s5, gentle
    lf      s4, 1.0
    blt     s4, s3, steep           ; binary32 bits of non-negative floats order like their values
gentle:
    ELTWISE_1IN leaky_max_body
    halt
steep:
    ELTWISE_1IN leaky_min_body
    halt
