; @kernel     swish
; @summary    x * sigmoid(beta x) = x / (1 + e^(-beta x)) with 1 + e^(-beta x) as an exact pair and the quotient corrected once; -beta x split into h + l unless beta is a power of two; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @param      beta 1.0 slope inside the sigmoid
; @dtypes     fp16 fp32
; @split      blocks
; @reference  swish
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=1.5 abs=0x1p-120
; @note       fp32 goal 2 ULP: as silu, 1 + t (t = e^(-beta x)) is kept as an exact pair (Fast2Sum)
; @note       and the quotient x / (1 + t) gets one correction step: a power-of-two beta (the
; @note       default 1) makes -beta x exact, 14 instructions per fp32 vector, 1.38 ULP measured.
; @note       Any other beta: RN(beta x) would be magnified by |beta x| inside e^, so -beta x is
; @note       split into h + l (fma), t = e^h (1 + l) by an fma whose rounding error is kept and
; @note       joins the pair: 21 instructions, 1.35 to 1.45 ULP measured over 2^20 inputs for beta =
; @note       0.3, 0.7, 1.702, 3.3, 50, -0.7, -1.3. (Without the pairs: 5 and 9 instructions, 2.4
; @note       and 3.0 ULP.) fp16 keeps the short form x * rcp(1 + e^(-beta x)) for every beta:
; @note       RN(beta x) in fp32 is far below an fp16 ULP (1 ULP).
; @note       x is loaded a second time for the last product instead of held in a register through
; @note       two SFU latencies (lib/eltwise.s, LIN_WIDE_X); fp16 widens it twice: 15
; @note       instructions per fp16 vector as written. Where holding x schedules as fast (fp16 on
; @note       the default config) the assembler merges the repeat: 13 (docs/scheduling.md).
; @note       fp32: where e^(-beta x) overflows the result is a signed zero for a true value of
; @note       at most 2.7e-37 / |beta|: below 2^-120 (abs tolerance) for |beta| >= 1/2; a smaller beta
; @note       can fail the tolerance just past x = -88.7 / beta (beta = 0.001: 46 of 2^20 inputs).
.include "lib/lin_sigmoid.s"

; s6 = -beta (binary32 bits: vmuls reads it as vbcast does), v29 = -beta,
; v28 = 88 / beta: where e^(-beta x) stops mattering (LIN_SPLIT_H).
; x is read again for the quotient (lib/eltwise.s, LIN_WIDE_X).
.macro swish_short y, x, xl
    LIN_SWISH \y, \x, \xl, vmuls.f32, s6
.endm
.macro swish_fp16 y, x
    LIN_WIDE_X swish_short, \y, \x
.endm
.macro swish_pow2_f32 y, x, xl
    LIN_SWISH_PAIR \y, \x, \xl, vmuls.f32, s6
.endm
.macro swish_pow2 y, x
    LIN_WIDE_X swish_pow2_f32, \y, \x
.endm
.macro swish_any_f32 y, x, xl
    LIN_SWISH_SPLIT_PAIR \y, \x, \xl, vmin.f32, v28
.endm
.macro swish_any y, x
    LIN_WIDE_X swish_any_f32, \y, \x
.endm
.macro swish_neg_f32 y, x, xl
    LIN_SWISH_SPLIT_PAIR \y, \x, \xl, vmax.f32, v28
.endm
.macro swish_neg y, x
    LIN_WIDE_X swish_neg_f32, \y, \x
.endm

    li      s6, 0x80000000
    xor     s6, s3, s6                   ; -beta as binary32 bits
    lih     s6, 0
.if DT_BYTES == 2
    ELTWISE_1IN_LINEAR swish_fp16
    halt
.else
    li      s7, 0x7fffff
    and     s7, s3, s7                   ; mantissa bits of beta: 0 for a power of two
    bnez    s7, general
    ELTWISE_1IN_LINEAR swish_pow2
    halt
general:
    vbcast.f32 v29, s6
    vbcast.f32 v28, s3
    vrcp.f32 v28, v28
    vmuli.f32 v28, v28, 88.0             ; 88 / beta
    srli    s7, s3, 31
    bnez    s7, negative
    ELTWISE_1IN_LINEAR swish_any
    halt
negative:
    ELTWISE_1IN_LINEAR swish_neg
    halt
.endif
