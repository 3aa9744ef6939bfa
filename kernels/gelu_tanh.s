; @kernel     gelu_tanh
; @summary    GELU, tanh form, as x * sigmoid(2z) = x / (1 + e^(-2z)), z = sqrt(2/pi)(x + 0.044715 x^3); fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
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

; Both paths are software-pipelined (lib/eltwise.s, _PIPE): MEM stores the
; previous outputs before bank register 1 is written and loads the next
; inputs once x is read for the last time.

; fp32 lanes, x in bank register 0, the chain in 2, y into 1 copy by copy
; (each copy's next input loads behind its last read of x); v27..v29 hold
; 1, A, B.
.macro gelu_tanh_plain N, MEM
    \N\()_3 vmul.f32, 2, 0, 0            ; x^2
    \MEM   0
    \MEM   1
    \N\()_4 vfma.f32, 2, 2, 29, 28        ; A + B x^2
    \MEM   2
    \MEM   3
    \N\()_3 vmul.f32, 2, 2, 0            ; -2z
    \N\()_2 vexp.f32, 2, 2               ; e^(-2z)
    \N\()_3 vadd.f32, 2, 2, 27           ; 1 + e^(-2z)
    \N\()_2 vrcp.f32, 2, 2               ; sigmoid(2z)
    \N\()_3K vmul.f32, 1, 2, 0, 0        ; x * sigmoid(2z)
    \MEM   4
    \N\()_3K vmul.f32, 1, 2, 0, 1
    \MEM   5
    \N\()_3K vmul.f32, 1, 2, 0, 2
    \MEM   6
    \N\()_3K vmul.f32, 1, 2, 0, 3
    \MEM   7
.endm

; fp16 lanes: widen each half to fp32, compute both halves interleaved (eight
; independent chains with X4), narrow once.
.macro gelu_tanh_mixed N, MEM
    \N\()_2 vcvtl.f32, 2, 0
    \N\()_2 vcvth.f32, 3, 0
    \MEM   4
    \MEM   5
    \N\()_3 vmul.f32, 4, 2, 2
    \MEM   6
    \MEM   7
    \N\()_3 vmul.f32, 5, 3, 3
    \MEM   0
    \MEM   1
    \N\()_4 vfma.f32, 4, 4, 29, 28
    \MEM   2
    \MEM   3
    \N\()_4 vfma.f32, 5, 5, 29, 28
    \N\()_3 vmul.f32, 4, 4, 2
    \N\()_3 vmul.f32, 5, 5, 3
    \N\()_2 vexp.f32, 4, 4
    \N\()_2 vexp.f32, 5, 5
    \N\()_3 vadd.f32, 4, 4, 27
    \N\()_3 vadd.f32, 5, 5, 27
    \N\()_2 vrcp.f32, 4, 4
    \N\()_2 vrcp.f32, 5, 5
    \N\()_3 vmul.f32, 4, 4, 2
    \N\()_3 vmul.f32, 5, 5, 3
    \N\()_3 vcvtn.f16, 1, 4, 5
.endm

    vbcasti.f32 v29, GELU_B
    vbcasti.f32 v28, GELU_A
    vbcasti.f32 v27, 1.0
.if DT_BYTES == 2
    ELTWISE_1IN_PIPE gelu_tanh_mixed
.else
    ELTWISE_1IN_PIPE gelu_tanh_plain
.endif
    halt
