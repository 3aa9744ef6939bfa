; @kernel     relu
; @summary    max(x, 0): one vmax per vector
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  relu
; @bound      fp16 ulp=0
; @bound      fp32 ulp=0
.include "lib/eltwise.s"

.macro relu_math N
    \N\()_3 vmax.DT, 1, 0, 31       ; max(x, 0)
.endm

    vbcasti.DT v31, 0.0
    ELTWISE_1IN relu_math
    halt
