; @kernel     gelu_tanh
; @summary    GELU, tanh form, as x * sigmoid(2z) = x / (1 + e^(-2z)), z = sqrt(2/pi)(x + 0.044715 x^3); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @reference  gelu_tanh
; @bound      fp16 ulp=1 abs=0x1p-24
; @bound      fp32 ulp=3 abs=0x1p-24
; @note       fp16 I/O widens to fp32 inside (vcvtl/vcvth ... vcvtn), as production GELU kernels keep
; @note       their constants in fp32: two fp32 halves cost 17 instructions per fp16 vector instead of 7.
; @note       For x << 0 the result is x * e^(-2|z|): the rounding error of -2z (a few ULP) is multiplied
; @note       by |2z| in e^(-2z), so the ULP bound holds only where the result is not tiny; there the
; @note       absolute bound 2^-24 applies instead.
.include "lib/eltwise.s"

; -2z = x * (A + B x^2) with A = -2 sqrt(2/pi), B = -2 * 0.044715 * sqrt(2/pi)
.equ SQRT_2_OVER_PI, 0.7978845608028654
.equ GELU_A, -2.0 * SQRT_2_OVER_PI
.equ GELU_B, -2.0 * 0.044715 * SQRT_2_OVER_PI

; out = gelu_tanh(in) on fp32 lanes; v27..v29 hold 1, A, B.
.macro gelu_tanh_f32 out, in
    vmul.f32  \out, \in, \in        ; x^2
    vfma.f32  \out, \out, v29, v28  ; A + B x^2
    vmul.f32  \out, \out, \in       ; -2z
    vexp.f32  \out, \out            ; e^(-2z)
    vadd.f32  \out, \out, v27       ; 1 + e^(-2z)
    vrcp.f32  \out, \out            ; sigmoid(2z)
    vmul.f32  \out, \out, \in       ; x * sigmoid(2z)
.endm

; fp16 lanes: widen each half to fp32, compute, narrow once.
.macro gelu_tanh_mixed out, in
    vcvtl.f32 v2, \in
    vcvth.f32 v3, \in
    gelu_tanh_f32 v4, v2
    gelu_tanh_f32 v5, v3
    vcvtn.f16 \out, v4, v5
.endm

    vbcasti.f32 v29, GELU_B
    vbcasti.f32 v28, GELU_A
    vbcasti.f32 v27, 1.0
.if DT_BYTES == 2
    ELTWISE_1IN gelu_tanh_mixed
.else
    ELTWISE_1IN gelu_tanh_f32
.endif
    halt
