; @kernel     geglu
; @summary    gelu_erf(a) * b; fp16 computes in fp32
; @input      a range=-8,8
; @input      b range=-4,4
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  geglu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=6.5 abs=0x1p-100
; @note       The short form of gelu_erf (lib/lin_erf.s; see gelu_erf_fast.s) and one more rounding
; @note       for the product by b. Where gelu_erf(a) is subnormal (a < -13.2) its few bits are scaled
; @note       by b: the abs tolerance 2^-100 covers |b| < 2^40. Past it the check can fail, and the
; @note       kernel computes this: gelu_erf(a) is -0 for a <= -14.3438816 (the true value is below
; @note       8.4e-46 in magnitude, about the least subnormal's half) and +-0 at a = +-2^-149 (a/2
; @note       rounds to even 0), so y is +-0 for finite b where the reference is gelu_erf(a) b, and
; @note       NaN (0 x inf) for b = +-inf where the reference is an infinity: a NaN mismatch. As in
; @note       swiglu, avoiding it would cost instructions on every vector for inputs no fp32 model meets.
; @note       a is read again for its late uses (lib/eltwise.s, LIN_X_AGAIN) and the assembler merges
; @note       the repeat back where holding a schedules as fast (docs/scheduling.md): at 1x64x56x56,
; @note       fp16 419,361 -> 400,520 cycles on the default config, fp32 373,226 -> 360,143; with SFU
; @note       latency 30 fp32 538,160 -> 444,815.
.include "lib/lin_erf.s"

.macro geglu_f32 y, a, b, al
    LIN_GELU_ERF %g\@, \a, \al
    vmul.f32  \y, %g\@, \b
.endm
; fp16: both halves of a and of b widened, gelu and the product in fp32, one
; narrowing.
.macro geglu_math y, a, b
    LIN_X_AGAIN %a2\@                   ; a read again for the late uses
.if DT_BYTES == 2
    vcvtl.f32 %alo\@, \a
    vcvth.f32 %ahi\@, \a
    vcvtl.f32 %blo\@, \b
    vcvth.f32 %bhi\@, \b
    vcvtl.f32 %alo2\@, %a2\@
    vcvth.f32 %ahi2\@, %a2\@
    geglu_f32 %lo\@, %alo\@, %blo\@, %alo2\@
    geglu_f32 %hi\@, %ahi\@, %bhi\@, %ahi2\@
    vcvtn.f16 \y, %lo\@, %hi\@
.else
    geglu_f32 \y, \a, \b, %a2\@
.endif
.endm

    LIN_GELU_ERF_INIT
    ELTWISE_2IN_LINEAR geglu_math
    halt
