; @kernel     relu6
; @summary    min(max(x, 0), 6): two ALU ops per vector, exact in both dtypes
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  relu6
; @tolerance  fp16 ulp=0
; @tolerance  fp32 ulp=0
; @note       NaN propagates (vmax/vmin return NaN), as torch.nn.functional.relu6 does.
.include "lib/eltwise.s"

.macro relu6_math y, x
    vmaxi.DT %m\@, \x, 0.0
    vmini.DT \y, %m\@, 6.0
.endm

    ELTWISE_1IN_LINEAR relu6_math
    halt
