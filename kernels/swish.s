; @kernel     swish
; @summary    x * sigmoid(beta x) = x / (1 + e^(-beta x)) with 1 + e^(-beta x) as an exact pair and the quotient corrected once; -beta x split into h + l unless beta is a power of two; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @param      beta 1.0 slope inside the sigmoid
; @dtypes     fp16 fp32
; @split      blocks
; @reference  swish
; @bound      fp16 ulp=1
; @bound      fp32 ulp=1.5 abs=0x1p-120
; @note       fp32 goal 2 ULP: as silu, 1 + t (t = e^(-beta x)) is kept as an exact pair (Fast2Sum)
; @note       and the quotient x / (1 + t) gets one correction step: a power-of-two beta (the
; @note       default 1) makes -beta x exact, 13 instructions per fp32 vector, 1.38 ULP measured.
; @note       Any other beta: RN(beta x) would be magnified by |beta x| inside e^, so -beta x is
; @note       split into h + l (fma), t = e^h (1 + l) by an fma whose rounding error is kept and
; @note       joins the pair: 20 instructions, 1.35 to 1.45 ULP measured over 2^20 inputs for beta =
; @note       0.3, 0.7, 1.702, 3.3, 50, -0.7, -1.3. (Without the pairs: 5 and 9 instructions, 2.4
; @note       and 3.0 ULP.) fp16 keeps the short forms (1 ULP).
; @note       fp32: where e^(-beta x) overflows the result is a signed zero for a true value of
; @note       at most 2.7e-37 / |beta|: below 2^-120 (abs bound) for |beta| >= 1/2; a smaller beta
; @note       can fail the bound just past x = -88.7 / beta (beta = 0.001: 46 of 2^20 inputs).
.equ SWISH_K_LO, 0
.include "lib/act.s"

.macro swish_pow2 N, MEM
    ACT_APPLY_PIPE \N, \MEM, SWISH_PAIR, 1    ; fp16: SWISH_EXACT
.endm
.macro swish_any N, MEM
.if DT_BYTES == 2
    ACT_APPLY_PIPE \N, \MEM, SWISH_EXACT, 1    ; fp16: RN(beta x) in fp32 is far below an fp16 ULP
.else
    ACT_APPLY_PIPE \N, \MEM, SWISH_SPLIT_PAIR, 1
.endif
.endm
.macro swish_neg N, MEM
.if DT_BYTES == 2
    ACT_APPLY_PIPE \N, \MEM, SWISH_EXACT, 1
.else
    ACT_APPLY_PIPE \N, \MEM, SWISH_SPLIT_PAIR_NEG, 1
.endif
.endm

    ACT_ONE
    li      s6, 0x80000000
    xor     s6, s3, s6                   ; -beta as binary32 bits
    lih     s6, 0
    vbcast.f32 v29, s6                   ; -beta
    vbcasti.f32 v27, 88.0
    vbcast.f32 v28, s3
    vrcp.f32 v28, v28
    vmul.f32 v28, v28, v27               ; 88 / beta: where e^(-beta x) stops mattering
    li      s7, 0x7fffff
    and     s7, s3, s7                   ; mantissa bits of beta: 0 for a power of two
    bnez    s7, general
    ELTWISE_1IN_PIPE swish_pow2
    halt
general:
    srli    s7, s3, 31
    bnez    s7, negative
    ELTWISE_1IN_PIPE swish_any
    halt
negative:
    ELTWISE_1IN_PIPE swish_neg
    halt
