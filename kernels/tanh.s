; @kernel     tanh
; @summary    sign(x) * E / (E + 2), E = expm1(2|x|) from exp corrected by ln; fp16 computes in fp32
; @input      x range=-6,6
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  tanh
; @bound      fp16 ulp=1
; @bound      fp32 ulp=1.5
; @note       fp32 goal 7 instructions, 2 ULP: 1 - 2/(1 + e^2x) cancels for small |x| (all
; @note       relative accuracy lost as x -> 0), so E = expm1(2|x|) is computed accurately: u = e^2|x|
; @note       rounded, then E = (u - 1) + u (2|x| - ln u) kept as that unevaluated pair, d = E + 2 as
; @note       RN(E_hi + 2) plus its exact remainder, and tanh = E / (E + 2) from one reciprocal with
; @note       one correction step against both pairs; the sign goes through a predicate. Only ln u's
; @note       rounding and the last fma are left: 1.43 ULP measured (2 ULP met), 20 instructions per
; @note       fp32 vector, three of them SFU. Rounding E and E + 2 (15 instructions) gave 2.7 ULP, with
; @note       E + 2's remainder only (18) 2.04: both roundings are magnified near |x| = 2^-k, where
; @note       the result's ULP halves. tanh_fast (6 instructions) is the short form.
.include "lib/act.s"

.macro tanh_math N, MEM
.if DT_BYTES == 2
    ACT_APPLY_PIPE \N, \MEM, TANH, 3  ; fp16: the short form is far inside 1 ULP
.else
    \MEM   0                           ; (lib/eltwise.s, _PIPE)
    \MEM   1
    \MEM   2
    \MEM   3
    TANH_PAIR \N, 1, 0, 2, 3, 4, 5
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
.endif
.endm

    ACT_ONE
    vbcasti.f32 v28, 2.0
    vbcasti.f32 v27, 9.0
    vbcasti.i32 v26, 0x80000000
    vbcasti.f32 v30, 0.0
    ELTWISE_1IN_PIPE tanh_math
    halt
