; @kernel     leaky_relu
; @summary    x >= 0 ? x : alpha*x, as max(x, alpha*x) (0 <= alpha <= 1), min(x, alpha*x) (alpha > 1) or a select (alpha negative, -0 included); fp16 multiplies in fp32 where |alpha| is neither 0 nor a normal half
; @input      x range=-8,8
; @output     y
; @param      alpha 0.01 slope for negative inputs
; @dtypes     fp16 fp32
; @split      blocks
; @reference  leaky_relu
; @tolerance  fp16 ulp=1.5
; @tolerance  fp32 ulp=0
; @note       fp16: alpha is rounded to binary16 on broadcast (vmuls), so y = RN16(RN16(alpha) x)
; @note       where the reference is alpha x with alpha as binary32. RN16(alpha) = alpha (1 + d),
; @note       |d| <= 2^-11, so before the last rounding y is off by up to |alpha x| 2^-11: half an
; @note       ULP at the bottom of the result's binade (an ULP is 2^-10 of it there), nearly 1 ULP at
; @note       its top, just below a power of two; the last rounding adds 0.5 ULP: < 1.5 ULP. (Where
; @note       the product rounds past the power of two it lands on it: < 1 ULP.) It holds for alpha
; @note       normal in binary16 (2^-14 <= |alpha| <= 65504; alpha = 0 is exact). Any other alpha
; @note       would be inf in binary16 (70000: NaN at x = 0 and in the padding) or a subnormal half
; @note       (1e-6: 2.24 ULP on 1x64x56x56): the kernel multiplies those in fp32 (exact x, alpha as
; @note       received) and selects as for a negative alpha, 7 instructions; RN16(RN32(alpha x)) is
; @note       within 0.5 ULP + 2^-24 relative: < 1.5 ULP. Measured on every finite half (63,488;
; @note       tools/ulp_scan.py --dtype fp16): alpha 0.55 1.20 ULP, 0.7 1.00003, 0.3 0.80, 0.01 0.92.
; @note       The 1 ULP tolerance this replaces failed ordinary slopes: alpha = 0.7 on 1x16x8x8 had
; @note       18 elements over (x = -5.05859375: -3.54296875 for -3.54101556), 0.55 on 1x16x28x28
; @note       570. Computing in fp32 would take 7 instructions per fp16 vector against 2. fp32 is
; @note       exact (ulp=0).
; @note       A negative alpha (sign bit set, -0 too) takes x >= 0 ? x : alpha x as written (vmuls,
; @note       vcgei, vsel: 3 instructions): max(x, alpha x) gave +0 for x = -0, where the reference
; @note       keeps x (512 of 512 zeros of the wrong sign with alpha = -0.5). 0 <= alpha <= 1 and
; @note       alpha > 1 keep max and min (2 instructions), which give x's zero.
.include "lib/eltwise.s"

; s3 = alpha (binary32 bits), read as vbcast reads it.
.macro leaky_max_math y, x
    vmuls.DT %ax\@, \x, s3          ; alpha * x
    vmax.DT  \y, \x, %ax\@
.endm
.macro leaky_sel_math y, x
    vmuls.DT %ax\@, \x, s3
    vcgei.DT %p\@, \x, 0.0          ; x >= 0, -0 included, as the reference tests
    vsel.DT  \y, \x, %ax\@, %p\@
.endm
.macro leaky_min_math y, x
    vmuls.DT %ax\@, \x, s3
    vmin.DT  \y, \x, %ax\@
.endm
; fp16 with alpha not a normal half (0 aside): alpha x in fp32, rounded
; once to fp16, and the select, for either sign of alpha. In binary16 alpha
; would be inf (0 x inf = NaN at x = 0 and in the padding) or a subnormal
; with a relative error up to 2^-1 instead of 2^-11.
.macro leaky_wide_f32 y, x
    vmuls.f32 \y, \x, s3
.endm
.macro leaky_wide_math y, x
    LIN_WIDE leaky_wide_f32, %ax\@, \x
    vcgei.DT %p\@, \x, 0.0
    vsel.DT  \y, \x, %ax\@, %p\@
.endm

.if DT_BYTES == 2
    slli    s5, s3, 33
    srli    s5, s5, 33              ; |alpha| (binary32 bits)
    beqz    s5, narrow              ; 0 is exact in binary16
    li      s6, 0x38800000          ; 2^-14, the least normal half
    blt     s5, s6, wide
    li      s6, 0x477fe000          ; 65504, the largest half
    blt     s6, s5, wide
narrow:
.endif
    srli    s5, s3, 31              ; sign bit: alpha < 0 or -0
    bnez    s5, backward
    lf      s4, 1.0
    blt     s4, s3, steep           ; binary32 bits of non-negative floats order like their values
gentle:
    ELTWISE_1IN_LINEAR leaky_max_math
    halt
steep:
    ELTWISE_1IN_LINEAR leaky_min_math
    halt
backward:
    ELTWISE_1IN_LINEAR leaky_sel_math
    halt
.if DT_BYTES == 2
wide:
    ELTWISE_1IN_LINEAR leaky_wide_math
    halt
.endif
