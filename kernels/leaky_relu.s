; @kernel     leaky_relu
; @summary    x >= 0 ? x : alpha*x, as max(x, alpha*x) (0 <= alpha <= 1), min(x, alpha*x) (alpha > 1) or a select (alpha negative, -0 included)
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
; @note       normal in binary16 (2^-14 <= |alpha| <= 65504; alpha = 0 is exact): a smaller one is a
; @note       subnormal half with a larger relative error. Measured on every finite half (63,488;
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
