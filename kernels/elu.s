; @kernel     elu
; @summary    max(x, 0) + alpha * expm1(min(x, 0)), expm1 from exp corrected by ln; fp16 computes in fp32
; @input      x range=-8,8
; @output     y
; @param      alpha 1.0 scale of the negative branch
; @dtypes     fp16 fp32
; @split      blocks
; @reference  elu
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=2
; @note       fp32 goal 6 instructions: e^x - 1 from a rounded e^x loses all relative accuracy as x -> 0-
; @note       (2^-25 absolute error against a result ~x). expm1(x) = (u - 1) + u (x - ln u), u = RN(e^x),
; @note       recovers it to about an ULP for one vln and three ALU ops, two of the instructions SFU.
; @note       The linear branch rides through the same chain (LIN_ELU_PASS: x > 0 gives u = 1 and x
; @note       itself), so x needs no register while the exponential runs and nothing selects:
; @note       7 instructions per fp32 vector for alpha = 1; any other alpha scales the negative part,
; @note       min(E, 0) alpha + max(E, 0): 10.
; @note       x is read again for its late uses (lib/eltwise.s, LIN_WIDE_X) and the assembler merges
; @note       the repeat back where holding x schedules as fast (docs/scheduling.md): with SFU latency
; @note       30 at 1x64x56x56, fp32 208,293 -> 145,671 cycles, fp16 217,778 -> 167,702; the
; @note       default config is unchanged.
.include "lib/lin_exp.s"

; One fp32 vector, alpha = 1: E = x > 0 ? x : expm1(x) is the result.
.macro elu_one_f32 y, x, xl
    LIN_ELU_PASS \y, \x, \xl
.endm
; Any alpha (v26).
.macro elu_f32 y, x, xl
    LIN_ELU_PASS %e\@, \x, \xl
    vmini.f32 %n\@, %e\@, 0.0           ; expm1(min(x, 0))
    vmaxi.f32 %p\@, %e\@, -0.0          ; max(x, 0), -0 for x <= 0: the sum keeps expm1's sign
    vfma.f32  \y, %n\@, v26, %p\@
.endm

.macro elu_one y, x
    LIN_WIDE_X elu_one_f32, \y, \x      ; x read again for c (LIN_ELU_PASS)
.endm
.macro elu_math y, x
    LIN_WIDE_X elu_f32, \y, \x
.endm

    vbcast.f32 v26, s3                   ; alpha
    lf      s7, 1.0
    beq     s3, s7, one
    ELTWISE_1IN_LINEAR elu_math
    halt
one:
    ELTWISE_1IN_LINEAR elu_one
    halt
