; @kernel     relu6
; @summary    min(max(x, 0), 6): two ALU ops per vector, exact in both dtypes
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  relu6
; @bound      fp16 ulp=0
; @bound      fp32 ulp=0
; @note       NaN propagates (vmax/vmin return NaN), as torch.nn.functional.relu6 does.
.include "lib/eltwise.s"

.macro relu6_math N
    \N\()_3 vmax.DT, 1, 0, 31       ; max(x, 0)
    \N\()_3 vmin.DT, 1, 1, 30       ; min(., 6)
.endm

    vbcasti.DT v31, 0.0
    vbcasti.DT v30, 6.0
    ELTWISE_1IN relu6_math
    halt
