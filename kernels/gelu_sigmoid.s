; @kernel     gelu_sigmoid
; @summary    x * sigmoid(1.702 x) with -1.702 x split into h + l (fma) so its rounding never reaches e^; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  gelu_sigmoid
; @bound      fp16 ulp=1
; @bound      fp32 ulp=3 abs=0x1p-120
; @note       fp32 goal 6 instructions: RN(1.702 x) has a relative error that e^ multiplies by |1.702 x|
; @note       (17 ULP at x = -10), so -1.702 x is kept as h + l (fma) and e^(h+l) = e^h + e^h l:
; @note       1.702 is not a binary32, so it is a pair (hi + lo) and lo x joins l: 10 instructions per
; @note       fp32 vector (two caps keep inf - inf out of l and e^h l).
; @note       fp16 does not need the split (the rounding is far below an fp16 ULP): 13 per fp16 vector.
; @note       fp32: where e^(-1.702 x) overflows the result is -0 for a true value below 2^-120.
.equ SWISH_K_LO, 1
.equ GS_K_HI, 1.7020000219345093      ; RN32(1.702)
.include "lib/act.s"

.macro gelu_sigmoid_math N, MEM
.if DT_BYTES == 2
    ACT_APPLY_PIPE \N, \MEM, SWISH_EXACT, 1
.else
    ACT_APPLY_PIPE \N, \MEM, SWISH_SPLIT, 1
.endif
.endm

    ACT_ONE
    vbcasti.f32 v29, -1.702
    vbcasti.f32 v26, -1.702 + GS_K_HI
    vbcasti.f32 v28, 88.0 / 1.702
    vbcasti.f32 v27, 88.0
    ELTWISE_1IN_PIPE gelu_sigmoid_math
    halt
