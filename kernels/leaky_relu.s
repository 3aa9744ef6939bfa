; @kernel     leaky_relu
; @summary    x >= 0 ? x : alpha*x, as max(x, alpha*x) (alpha <= 1) or min(x, alpha*x) (alpha > 1)
; @input      x range=-8,8
; @output     y
; @param      alpha 0.01 slope for negative inputs
; @dtypes     fp16 fp32
; @split      blocks
; @reference  leaky_relu
; @bound      fp16 ulp=1
; @bound      fp32 ulp=0
; @note       fp16: alpha is rounded to binary16 on broadcast, so alpha*x can differ from the
; @note       reference (which uses alpha as binary32) by the rounding of alpha: at most 1 ULP.
.include "lib/eltwise.s"

; Software-pipelined (lib/eltwise.s, _PIPE), one copy at a time: alpha * x
; goes to bank register 2, copy k's previous output is stored before the
; max or min writes bank register 1, and its next input loads once that has
; read x. FUN is vmax (alpha <= 1) or vmin (alpha > 1).
.macro LEAKY N, MEM, FUN
    \MEM   0
    \N\()_3K vmul.DT, 2, 0, 30, 0   ; alpha * x
    \MEM   1
    \N\()_3K vmul.DT, 2, 0, 30, 1
    \MEM   2
    \N\()_3K vmul.DT, 2, 0, 30, 2
    \MEM   3
    \N\()_3K vmul.DT, 2, 0, 30, 3
    \N\()_3K \FUN\().DT, 1, 0, 2, 0  ; max(x, alpha * x), or min for alpha > 1
    \MEM   4
    \N\()_3K \FUN\().DT, 1, 0, 2, 1
    \MEM   5
    \N\()_3K \FUN\().DT, 1, 0, 2, 2
    \MEM   6
    \N\()_3K \FUN\().DT, 1, 0, 2, 3
    \MEM   7
.endm
.macro leaky_max_math N, MEM
    LEAKY \N, \MEM, vmax
.endm
.macro leaky_min_math N, MEM
    LEAKY \N, \MEM, vmin
.endm

    vbcast.DT v30, s3               ; alpha
    srli    s5, s3, 31              ; alpha < 0: max(x, alpha*x) is still right
    bnez    s5, gentle
    lf      s4, 1.0
    blt     s4, s3, steep           ; binary32 bits of non-negative floats order like their values
gentle:
    ELTWISE_1IN_PIPE leaky_max_math
    halt
steep:
    ELTWISE_1IN_PIPE leaky_min_math
    halt
