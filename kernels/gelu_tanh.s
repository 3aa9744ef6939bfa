; @kernel     gelu_tanh
; @summary    GELU, tanh form, computed as x * sigmoid(2z) = x / (1 + e^(-2z)), z = sqrt(2/pi)(x + 0.044715 x^3)
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @reference  gelu_tanh
; @bound      fp16 ulp=2 abs=0x1p-14
; @bound      fp32 ulp=3 abs=0x1p-24
; @note       For x << 0 the result is x * e^(-2|z|): the rounding error of -2z (a few ULP) is
; @note       multiplied by |2z| in e^(-2z), so the ULP bound holds only where the result is not
; @note       tiny; there the absolute bound (2^-24 fp32, 2^-14 fp16) applies instead.
.include "lib/eltwise.s"

; -2z = x * (A + B x^2) with A = -2 sqrt(2/pi), B = -2 * 0.044715 * sqrt(2/pi)
.equ SQRT_2_OVER_PI, 0.7978845608028654
.equ GELU_A, -2.0 * SQRT_2_OVER_PI
.equ GELU_B, -2.0 * 0.044715 * SQRT_2_OVER_PI

.macro gelu_tanh_body out, in
    vmul.DT \out, \in, \in          ; x^2
    vfma.DT \out, \out, v29, v28    ; A + B x^2
    vmul.DT \out, \out, \in         ; -2z
    vexp.DT \out, \out              ; e^(-2z)
    vadd.DT \out, \out, v27         ; 1 + e^(-2z)
    vrcp.DT \out, \out              ; sigmoid(2z)
    vmul.DT \out, \out, \in         ; x * sigmoid(2z)
.endm

    vbcasti.DT v29, GELU_B
    vbcasti.DT v28, GELU_A
    vbcasti.DT v27, 1.0
    ELTWISE_1IN gelu_tanh_body
    halt
