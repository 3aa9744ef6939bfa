; @kernel     sparse_gelu
; @summary    x < threshold ? 0 : gelu_erf(x); fp16 computes in fp32
; @input      x range=-4,4
; @output     y
; @param      threshold 0.0 inputs below it give 0
; @dtypes     fp16 fp32
; @split      blocks
; @reference  sparse_gelu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=6
; @note       Lanes below the threshold are replaced by +0 before the short form of gelu_erf
; @note       (lib/lin_erf.s), whose result there is +0 as the reference's (two vector instructions,
; @note       no select after; the compare's complement, which keeps NaN lanes, is a predicate
; @note       instruction; -20 there would give -0). See gelu_erf_fast.s for the accuracy. The
; @note       padded skeleton keeps padded channels zero whatever the threshold.
; @note       x is read again for its late uses (lib/eltwise.s, LIN_X_AGAIN) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): at 1x64x56x56,
; @note       fp32 537,528 -> 462,607 cycles with SFU latency 30; the default config is unchanged.
.include "lib/lin_erf.s"

; s3 = threshold (binary32 bits), read as vbcast reads it.
.macro sparse_gelu_f32 y, x, xl
    vclts.f32 %below\@, \x, s3
    pnot      %keep\@, %below\@           ; x >= threshold, or NaN
    vseli.f32 %s\@, \x, 0.0, %keep\@
    vclts.f32 %belowl\@, \xl, s3         ; s again, for the late uses
    pnot      %keepl\@, %belowl\@
    vseli.f32 %sl\@, \xl, 0.0, %keepl\@
    LIN_GELU_ERF \y, %s\@, %sl\@
.endm
.macro sparse_gelu_math y, x
    LIN_WIDE_X sparse_gelu_f32, \y, \x
.endm

    LIN_GELU_ERF_INIT
    ELTWISE_1IN_PAD_LINEAR sparse_gelu_math
    halt
