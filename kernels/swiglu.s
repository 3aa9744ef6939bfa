; @kernel     swiglu
; @summary    silu(a) * b = a * rcp(1 + e^-a) * b; fp16 computes in fp32
; @input      a range=-10,10
; @input      b range=-4,4
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  swiglu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=4 abs=0x1p-100
; @note       silu's short form (silu_fast: four roundings) plus the product by b: 6 instructions
; @note       per fp32 vector. Where e^-a overflows (a < -88.72) silu is flushed to -0 for a true
; @note       value below 2^-120 in magnitude, so the product's absolute error is below 2^-120 |b|:
; @note       the abs tolerance 2^-100 holds for |b| < 2^20. Past it the check can fail, and the
; @note       kernel computes this: silu(a) is -0 for a <= -88.7228394 (e^-a overflows; the true value
; @note       is below 2.61e-37) and +-0 at a = +-2^-149 (a/2, a tie, rounds to even 0), so y is +-0
; @note       for finite b where the reference is silu(a) b (a = -2^-149, b = -3.40282347e38: 0 for
; @note       2.38e-7), and NaN (0 x inf) for b = +-inf where the reference is an infinity: a NaN
; @note       mismatch. A subnormal silu(a) carries up to 2^-150 absolute error, times |b|. Avoiding
; @note       both would take a select or a scaling per vector (2 to 3 more instructions, a third
; @note       more) for products no fp32 model meets. fp16 widens both halves of a and of b,
; @note       computes in fp32 and narrows once: 17 instructions per fp16 vector. fp32 loads a a
; @note       second time for the last product instead of holding it through two SFU latencies.
.include "lib/lin_sigmoid.s"

; y = silu(a) b, with a given twice (al: a for the late product).
.macro swiglu_f32 y, a, al, b
    LIN_SWISH %s\@, \a, \al, vmuli.f32, -1.0   ; silu(a)
    vmul.f32  \y, %s\@, \b
.endm
; fp32 reads a again for the product (lib/eltwise.s, LIN_X_AGAIN); fp16
; keeps its widened halves instead, as two more conversions would cost more
; vector slots than the registers they free.
.macro swiglu_math y, a, b
.if DT_BYTES == 2
    vcvtl.f32 %al\@, \a
    vcvth.f32 %ah\@, \a
    vcvtl.f32 %bl\@, \b
    vcvth.f32 %bh\@, \b
    swiglu_f32 %yl\@, %al\@, %al\@, %bl\@
    swiglu_f32 %yh\@, %ah\@, %ah\@, %bh\@
    vcvtn.f16 \y, %yl\@, %yh\@
.else
    LIN_X_AGAIN %a2\@
    swiglu_f32 \y, \a, %a2\@, \b
.endif
.endm

    ELTWISE_2IN_LINEAR swiglu_math
    halt
