; @kernel     sparse_gelu
; @summary    x < threshold ? 0 : gelu_erf(x); fp16 computes in fp32
; @input      x range=-4,4
; @output     y
; @param      threshold 0.0 inputs below it give 0
; @dtypes     fp16 fp32
; @split      blocks
; @reference  sparse_gelu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=6
; @note       Lanes below the threshold are replaced by -20 before the short form of gelu_erf
; @note       (lib/lin_erf.s), whose result there is -0 (two vector instructions, no select after;
; @note       the compare's complement, which keeps NaN lanes, is a predicate instruction). See
; @note       gelu_erf_fast.s for the accuracy. A positive threshold makes f(0) = -0, so the skeleton
; @note       zeroes padded channels.
.include "lib/lin_erf.s"

; s3 = threshold (binary32 bits), read as vbcast reads it.
.macro sparse_gelu_f32 y, x
    vclts.f32 %below\@, \x, s3
    pnot      %keep\@, %below\@           ; x >= threshold, or NaN
    vseli.f32 %s\@, \x, -20.0, %keep\@
    LIN_GELU_ERF \y, %s\@
.endm
.macro sparse_gelu_math y, x
    LIN_WIDE sparse_gelu_f32, \y, \x
.endm

    LIN_GELU_ERF_INIT
    ELTWISE_1IN_PAD_LINEAR sparse_gelu_math
    halt
