; @kernel     gelu_erf_fast
; @summary    x * Phi(x) (exact GELU, erf form) from Phi(-|x|) = e^(-x^2/2) t g(t), t = 1/(1 + |x|/2), fitted g, every step rounded: the short form of gelu_erf; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  gelu_erf
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=6
; @note       The short form of gelu_erf (27 instructions per fp32 vector against 34): one tail
; @note       formula everywhere, every step rounded. The tail form has no cancellation anywhere
; @note       (relative accuracy down to x = -13, where the result underflows), and -x^2/2 is split
; @note       exactly so e^ adds half an ULP, but the chain still holds about ten roundings
; @note       (1 + |x|/2, its reciprocal, Horner, the products). The 6 ULP tolerance is measured, not
; @note       derived (a first-order sum of the ten roundings, each up to 1 ULP just below a power of
; @note       two, would allow some 11): 5.72 ULP at x = -2.49960017 (0xc01ff973), the worst of 41M
; @note       inputs (tools/ulp_scan.py on -8..8 and -100..100, dense around every power-of-two
; @note       crossing of y), 5% under it; the note's former 5.35 came from 2^20 inputs. gelu_erf meets the 3 ULP goal with an
; @note       exact t = 1/(1 + |x|/2) to first order, no rounded products and a series near 0.
; @note       x is read again for its late uses (lib/eltwise.s, LIN_X_AGAIN) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): at 1x64x56x56,
; @note       fp32 505,425 -> 430,308 cycles with SFU latency 30, fp16 538,521 -> 482,173; the default
; @note       config is unchanged.
.include "lib/lin_erf.s"

.macro gelu_erf_fast_math y, x
    LIN_WIDE_X LIN_GELU_ERF, \y, \x      ; x read again for its late uses
.endm

    LIN_GELU_ERF_INIT
    ELTWISE_1IN_LINEAR gelu_erf_fast_math
    halt
