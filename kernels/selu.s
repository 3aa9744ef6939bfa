; @kernel     selu
; @summary    scale * max(x, 0) + RN(scale * alpha) * expm1(min(x, 0)), expm1 from exp corrected by ln; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  selu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2
; @note       As elu, plus a multiply by scale on the linear half and scale * alpha kept as a
; @note       binary32 pair (two fmas) so the constant adds no rounding: 11 instructions per fp32 vector.
.include "lib/act.s"

.equ SELU_ALPHA, 1.6732632423543772848170429916717
.equ SELU_SCALE, 1.0507009873554804934193349852946
.equ SELU_SA_HI, 1.7580993175506592     ; RN32(scale * alpha)

.macro selu_math N, MEM
    ACT_APPLY_PIPE \N, \MEM, SELU_CORE, 3
.endm

    ACT_ONE
    vbcasti.f32 v30, 0.0
    vbcasti.f32 v25, -88.0
    vbcasti.f32 v27, SELU_SCALE
    vbcasti.f32 v26, SELU_SA_HI
    vbcasti.f32 v24, SELU_SCALE * SELU_ALPHA - SELU_SA_HI
    ELTWISE_1IN_PIPE selu_math
    halt
