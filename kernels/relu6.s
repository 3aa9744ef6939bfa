; @kernel     relu6
; @summary    min(max(x, 0), 6): two ALU ops per vector, exact in both dtypes
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  relu6
; @bound      fp16 ulp=0
; @bound      fp32 ulp=0
; @note       NaN propagates (vmax/vmin return NaN), as torch.nn.functional.relu6 does.
.include "lib/eltwise.s"

; Software-pipelined (lib/eltwise.s, _PIPE): max(x, 0) goes to bank
; register 2, so x is dead after it and copy k's next input loads at once;
; min(., 6) writes the output only after its previous one is stored. The
; memory slot (the binding unit) issues every cycle.
.macro relu6_math N, MEM
    \N\()_3K vmax.DT, 2, 0, 31, 0   ; max(x, 0)
    \MEM   4
    \N\()_3K vmax.DT, 2, 0, 31, 1
    \MEM   5
    \N\()_3K vmax.DT, 2, 0, 31, 2
    \MEM   6
    \N\()_3K vmax.DT, 2, 0, 31, 3
    \MEM   7
    \MEM   0
    \N\()_3K vmin.DT, 1, 2, 30, 0   ; min(., 6)
    \MEM   1
    \N\()_3K vmin.DT, 1, 2, 30, 1
    \MEM   2
    \N\()_3K vmin.DT, 1, 2, 30, 2
    \MEM   3
    \N\()_3K vmin.DT, 1, 2, 30, 3
.endm

    vbcasti.DT v31, 0.0
    vbcasti.DT v30, 6.0
    ELTWISE_1IN_PIPE relu6_math
    halt
