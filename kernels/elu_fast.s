; @kernel     elu_fast
; @summary    max(x, 0) + alpha * (e^min(x, 0) - 1): the short form of elu; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @param      alpha 1.0 scale of the negative branch
; @dtypes     fp16 fp32
; @split      blocks
; @reference  elu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=1 abs=0x1p-23*alpha
; @note       5 instructions per fp32 vector (goal 6): y = RN(max(x, 0) - alpha (1 - RN(e^m))),
; @note       m = min(x, 0), one fused rounding after e^m's and 1 - e^m's. Where e^m >= 1/2 (m >=
; @note       -ln 2) 1 - e^m is exact (Sterbenz) and e^m's rounding is at most 2^-25: a = |alpha|
; @note       2^-25 before the last rounding. Below, e^m's rounding is at most 2^-26 and 1 - e^m (in
; @note       [1/2, 1)) rounds too, by up to 2^-25: a = 3 |alpha| 2^-26, and |y| < |alpha|, so the
; @note       last rounding's half ULP is under |alpha| 2^-24. Error <= a + ULP/2: at most
; @note       1 ULP where a <= ULP/2, else under 2a <= 3 |alpha| 2^-25 (above -ln 2: |alpha|
; @note       2^-24); below -ln 2 at most 7 |alpha| 2^-26 in any case. The fp32 tolerance is 1 ULP
; @note       or |alpha| 2^-23 absolute, for every alpha (abs=0x1p-23*alpha); none is relative near
; @note       0- (x = -1e-6 gets about 3% error). Measured on 1x64x56x56: alpha = 1 0.75 ULP where
; @note       the error is above 2^-25; the largest absolute error 0.73 |alpha| 2^-23 (alpha = 1e38;
; @note       0.69 for 0.3, 0.375 for 1 and -2; 1.26 ULP at x = -0.792 for 0.3: -0.164125562 for
; @note       -0.164125543).
; @note       The 2^-25 this replaces held for alpha = 1 only (there the product is exact): alpha = -2
; @note       failed at 7.3 ULP (x = -0.0619: 0.119993806 for 0.119993751), and 0.3, 3, 1e38 at 1.06
; @note       to 1.45 ULP beyond a first |alpha| 2^-24 that assumed 1 - e^m exact everywhere.
; @note       elu (9 instructions) recovers e^m's low bits with ln: 1.45 ULP everywhere. fp16: 1 ULP
; @note       (fp32 inside).
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
