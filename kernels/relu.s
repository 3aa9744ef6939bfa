; @kernel     relu
; @summary    max(x, 0): one vmax per vector
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  relu
; @tolerance  fp16 ulp=0
; @tolerance  fp32 ulp=0
.include "lib/eltwise.s"

.macro relu_math y, x
    vmaxi.DT \y, \x, 0.0
.endm

    ELTWISE_1IN_LINEAR relu_math
    halt
