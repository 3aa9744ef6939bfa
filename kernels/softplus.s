; @kernel     softplus
; @summary    beta x > threshold ? x : log1p(e^(beta x)) / beta (PyTorch), log1p from ln(1 + t) plus the rounding of 1 + t; fp16 computes in fp32
; @input      x range=-10,30
; @output     y
; @param      beta 1.0 scale inside the exponential
; @param      threshold 20.0 above it (in beta x) the result is x
; @dtypes     fp16 fp32
; @split      blocks
; @reference  softplus
; @bound      fp16 ulp=1
; @bound      fp32 ulp=3 abs=0x1p-126
; @note       fp32 goal 7 instructions: ln(1 + t) alone loses t's low bits when t = e^(beta x) is
; @note       small (relative error 2^-24 / t); adding back c / (1 + t), c = t - (RN(1 + t) - 1),
; @note       costs two subtractions, a reciprocal (SFU: for small t, c is the whole result) and
; @note       an fma: 8 instructions per fp32 vector for beta = 1 (the linear lanes keep x through
; @note       a masked fma, so the threshold costs one compare), 10 for a power-of-two beta, 15
; @note       for any other (beta x and the division by beta need an fma correction each; c / u
; @note       joins the division's remainder, so log1p is never rounded on its own). The threshold
; @note       compares RN(beta x) for non-power-of-two beta: a product within half an ULP of the
; @note       threshold may pick the other branch.
; @note       fp32 goal 2 ULP: met for beta = 1 and powers of two (1.80 measured over 2^20 inputs).
; @note       Any other beta divides ln u, rounded by the SFU to half an ULP of itself, by beta,
; @note       which can move the result to a binade where that half ULP counts double: 2.5 measured
; @note       for beta = 0.7 and 1.702, 2.9 for 0.3 and 1.1; no ALU step recovers ln's rounding, so
; @note       the bound (one for every beta) stays 3. Where beta x < -87 (e^(beta x) subnormal) the
; @note       absolute bound 2^-126 applies. softplus_fast (4 instructions) is the short form.
; @note       beta must be positive (the caps that keep inf - inf out assume it).
; @note       Padded channels are zeroed by the skeleton (f(0) = ln 2 / beta).
.include "lib/act.s"

.macro softplus_one N, MEM
    ACT_APPLY_PIPE \N, \MEM, SOFTPLUS_ONE, 3
.endm
.macro softplus_pow2 N, MEM
    ACT_APPLY_PIPE \N, \MEM, SOFTPLUS_POW2, 3
.endm
.macro softplus_any N, MEM
.if DT_BYTES == 2
    ACT_APPLY_PIPE \N, \MEM, SOFTPLUS_POW2, 3          ; fp16: the roundings of beta x and 1/beta are negligible
.else
    ACT_APPLY_PIPE \N, \MEM, SOFTPLUS_ANY, 3
.endif
.endm

    ACT_ONE
    vbcast.f32 v28, s3                   ; beta
    vrcp.f32 v27, v28                    ; 1 / beta
    vbcast.f32 v29, s4                   ; threshold
    vbcasti.f32 v26, -0x1p100
    lf      s7, 1.0
    beq     s3, s7, one
    li      s7, 0x7fffff
    and     s7, s3, s7
    bnez    s7, general
    ELTWISE_1IN_PAD_PIPE softplus_pow2
    halt
one:
    ELTWISE_1IN_PAD_PIPE softplus_one
    halt
general:
    ELTWISE_1IN_PAD_PIPE softplus_any
    halt
