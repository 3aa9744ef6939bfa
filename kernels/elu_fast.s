; @kernel     elu_fast
; @summary    max(x, 0) + alpha * (e^min(x, 0) - 1): the short form of elu; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @param      alpha 1.0 scale of the negative branch
; @dtypes     fp16 fp32
; @split      blocks
; @reference  elu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=1 abs=0x1p-25
; @note       5 instructions per fp32 vector (goal 6): e^x - 1 is one exact subtraction (Sterbenz)
; @note       after a correctly rounded e^x, so its only error is e^x's rounding, at most 2^-25
; @note       absolute: under an ULP (0.75 measured) wherever the error is above 2^-25, but no relative
; @note       accuracy near 0- (x = -1e-6 gets about 3% error): the fp32 tolerance is 1 ULP or 2^-25
; @note       absolute (for alpha = 1; the absolute part scales with alpha). elu (9 instructions)
; @note       recovers e^x's low bits with ln: 1.45 ULP everywhere. fp16: 1 ULP (fp32 inside).
; @note       x is read again for its late uses (lib/eltwise.s, LIN_WIDE_X) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): with SFU latency
; @note       30 at 1x64x56x56, fp32 106,271 -> 81,281 cycles, fp16 110,450 -> 97,806; the default
; @note       config is unchanged.
.include "lib/eltwise.s"

; One fp32 vector; v26 = alpha.
.macro elu_fast_f32 y, x, xl
    vmini.f32 %m\@, \x, 0.0
    vexp.f32  %u\@, %m\@                ; e^min(x, 0)
    vrsubi.f32 %e\@, %u\@, 1.0          ; 1 - e^min(x, 0), exact
    vmaxi.f32 %p\@, \xl, -0.0           ; max(x, 0), -0 for x <= 0; xl: x read again (LIN_WIDE_X)
    vfnma.f32 \y, %e\@, v26, %p\@       ; max(x, 0) + alpha (e^min(x, 0) - 1): x = -0 gives -0
.endm

.macro elu_fast_math y, x
    LIN_WIDE_X elu_fast_f32, \y, \x
.endm

    vbcast.f32 v26, s3                   ; alpha
    ELTWISE_1IN_LINEAR elu_fast_math
    halt
