; @kernel     celu
; @summary    max(x, 0) + alpha * expm1(min(x, 0) / alpha), expm1 from exp corrected by ln; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @param      alpha 1.0 scale of the negative branch (nonzero)
; @dtypes     fp16 fp32
; @split      blocks
; @reference  celu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2.5
; @note       A power-of-two alpha (the default 1) divides exactly: 10 instructions per fp32 vector.
; @note       Any other alpha: min(x, 0) / alpha is kept as y0 + ylo (remainder by fma) and
; @note       expm1(y0 + ylo) = expm1(y0) + e^y0 ylo: 13 per fp32 vector. fp16 needs neither.
; @note       fp32 goal 2 ULP: met for alpha = 1 (1.46 measured); a non-power-of-two alpha adds the
; @note       rounding of the product by alpha (2.3 measured near x = 0-).
.include "lib/act.s"

.macro celu_pow2 N, MEM
    ACT_APPLY_PIPE \N, \MEM, CELU_CORE, 3
.endm
.macro celu_any N, MEM
.if DT_BYTES == 2
    ACT_APPLY_PIPE \N, \MEM, CELU_CORE, 3
.else
    ACT_APPLY_PIPE \N, \MEM, CELU_SPLIT, 3
.endif
.endm

    ACT_ONE
    vbcasti.f32 v30, 0.0
    vbcasti.f32 v25, -88.0
    vbcast.f32 v26, s3                   ; alpha
    vrcp.f32 v24, v26                    ; 1 / alpha (exact for a power of two)
    vmul.f32 v27, v25, v26               ; -88 alpha
    li      s7, 0x7fffff
    and     s7, s3, s7
    bnez    s7, general
    ELTWISE_1IN_PIPE celu_pow2
    halt
general:
    ELTWISE_1IN_PIPE celu_any
    halt
