; @kernel     relu
; @summary    max(x, 0): one vmax per vector
; @input      x range=-8,8
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  relu
; @bound      fp16 ulp=0
; @bound      fp32 ulp=0
.include "lib/eltwise.s"

; Software-pipelined (lib/eltwise.s, _PIPE): copy k's max goes between the
; store of its previous output and the load of its next input, each copy as
; late as its load of the group before allows, so the memory slot (the
; binding unit) issues every cycle.
.macro relu_math N, MEM
    \MEM   0
    \MEM   1
    \MEM   2
    \N\()_3K vmax.DT, 1, 0, 31, 0   ; max(x, 0)
    \MEM   3
    \N\()_3K vmax.DT, 1, 0, 31, 1
    \MEM   4
    \N\()_3K vmax.DT, 1, 0, 31, 2
    \MEM   5
    \N\()_3K vmax.DT, 1, 0, 31, 3
    \MEM   6
    \MEM   7
.endm

    vbcasti.DT v31, 0.0
    ELTWISE_1IN_PIPE relu_math
    halt
