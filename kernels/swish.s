; @kernel     swish
; @summary    x * sigmoid(beta x); exact -beta x for power-of-two beta, split h + l product otherwise; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @param      beta 1.0 slope inside the sigmoid
; @dtypes     fp16 fp32
; @reference  swish
; @bound      fp16 ulp=1
; @bound      fp32 ulp=3.5 abs=0x1p-120
; @note       fp32 goal 2 ULP: the roundings of e^-bx, 1 + e^-bx, the reciprocal and the product by x add
; @note       up to 3.5 ULP in theory (3.0 measured with beta = 0.7); an exact 1 + t (Fast2Sum) and a
; @note       corrected division would cost 7 more instructions per vector: the kernel keeps the short form.
; @note       A power-of-two beta (the default 1) makes -beta x exact: 5 instructions per fp32 vector.
; @note       Any other beta: RN(beta x) would be magnified by |beta x| inside e^, so -beta x is
; @note       split into h + l (fma) and e^(h+l) = e^h (1 + l): 9 instructions.
; @note       fp32: where e^(-beta x) overflows the result is a signed zero below 2^-120 (abs bound).
.equ SWISH_K_LO, 0
.include "lib/act.s"

.macro swish_pow2 N
    ACT_APPLY \N, SWISH_EXACT
.endm
.macro swish_any N
.if DT_BYTES == 2
    ACT_APPLY \N, SWISH_EXACT            ; fp16: RN(beta x) in fp32 is far below an fp16 ULP
.else
    ACT_APPLY \N, SWISH_SPLIT
.endif
.endm
.macro swish_neg N
.if DT_BYTES == 2
    ACT_APPLY \N, SWISH_EXACT
.else
    ACT_APPLY \N, SWISH_SPLIT_NEG
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
    ELTWISE_1IN swish_pow2
    halt
general:
    srli    s7, s3, 31
    bnez    s7, negative
    ELTWISE_1IN swish_any
    halt
negative:
    ELTWISE_1IN swish_neg
    halt
