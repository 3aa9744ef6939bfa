; @kernel     elu
; @summary    max(x, 0) + alpha * expm1(min(x, 0)), expm1 from exp corrected by ln; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @param      alpha 1.0 scale of the negative branch
; @dtypes     fp16 fp32
; @split      blocks
; @reference  elu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2
; @note       fp32 goal 6 instructions: e^x - 1 from a rounded e^x loses all relative accuracy as x -> 0-
; @note       (2^-25 absolute error against a result ~x). expm1(x) = (u - 1) + u (x - ln u), u = RN(e^x),
; @note       recovers it to about an ULP for one vln and three ALU ops: 9 instructions per vector,
; @note       two of them SFU. The linear and exponential halves are added (one is always 0): no select.
.include "lib/act.s"

.macro elu_math N, MEM
    ACT_APPLY_PIPE \N, \MEM, ELU_CORE, 3
.endm

    ACT_ONE
    vbcasti.f32 v30, 0.0
    vbcasti.f32 v25, -88.0
    vbcast.f32 v26, s3                   ; alpha
    ELTWISE_1IN_PIPE elu_math
    halt
