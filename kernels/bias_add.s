; @kernel     bias_add
; @summary    x + bias[c]: one bias per channel, the unfused form of a matmul's bias (npusim graph)
; @input      x range=-8,8
; @input      bias per_channel range=-1,1
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  bias_add
; @tolerance  fp16 ulp=0
; @tolerance  fp32 ulp=0
; @note       Exact: one addition, rounded once, as the reference rounded once.
; @note       bias is a per-channel tensor in the run's dtype (--input bias=FILE.npy, shape [C]). A matrix
; @note       M x N from a matmul is the tensor (1, N, M, 1): its columns are channels (docs/fusion.md).
.include "lib/perchan.s"

; b: the vector register holding the bias of x's channels (lib/perchan.s).
.macro bias_add_math y, x, b
    vadd.DT  \y, \x, \b
.endm

    PERCHAN_1IN bias_add_math
    halt
