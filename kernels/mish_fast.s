; @kernel     mish_fast
; @summary    x * n / (n + 2), n = e^2 + 2e, e = e^min(x, 20), quotient rounded twice: the short form of mish; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  mish
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=4 abs=0x1p-120
; @note       8 instructions per fp32 vector (goal 8): min, exp, add, fma (n = (1 + e)^2 - 1 without
; @note       cancellation), add, rcp, mul, mul. The roundings of e, e + 2, n, n + 2, the reciprocal
; @note       and the two products add up: 3.63 ULP measured over 2^20 inputs (n = fma(e, e, 2e)
; @note       rounds once). mish (10 instructions) corrects the quotient with one fma step: 3.45,
; @note       the same 4 ULP tolerance. fp32: where e^x underflows the result is tiny (abs tolerance
; @note       2^-120). fp16: 1 ULP (fp32 inside). x is loaded a second time for the last product
; @note       (lib/eltwise.s, LIN_WIDE_X; fp16 widens it twice), merged back by the assembler where
; @note       holding x schedules as fast (fp16 on the default config). At 1x64x56x56 it took fp32
; @note       from 131,408 to 106,271 cycles on the default config and 221,323 to 158,652 with SFU
; @note       latency 30, fp16 from 227,432 to 171,084 with SFU latency 30.
.include "lib/lin_exp.s"

.macro mish_fast_math y, x
    LIN_WIDE_X LIN_MISH_FAST, \y, \x     ; x read again for the product
.endm

    ELTWISE_1IN_LINEAR mish_fast_math
    halt
