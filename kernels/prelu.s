; @kernel     prelu
; @summary    x > 0 ? x : alpha[c] * x, one alpha per channel, as alpha*min(x,0) + max(x,0) in one fma
; @input      x range=-8,8
; @input      alpha per_channel range=-0.5,1.5
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  prelu
; @bound      fp16 ulp=0
; @bound      fp32 ulp=0
; @note       Exact: max(x,0) and min(x,0) are exact, and fma(alpha, min(x,0), max(x,0)) is either
; @note       x + alpha*0 = x (x > 0) or alpha*x + 0 rounded once, the reference rounded once.
; @note       alpha is a per-channel tensor in the run's dtype (--input alpha=FILE.npy, shape [C]);
; @note       its C0 block is loaded once per C1 block a core touches (lib/perchan.s).
.include "lib/perchan.s"

; Bank register 5 holds alpha of the vector's channels; MEM places the
; skeleton's stores (0..3) and loads (4..7) among the math (lib/perchan.s):
; two stores beside each block of four, the loads as soon as x is dead.
.macro prelu_math N, MEM
    \MEM   0
    \MEM   1
    \N\()_3 vmax.DT, 2, 0, 31       ; max(x, 0)
    \MEM   2
    \MEM   3
    \N\()_3 vmin.DT, 3, 0, 31       ; min(x, 0)
    \MEM   4
    \MEM   5
    \MEM   6
    \MEM   7
    \N\()_4 vfma.DT, 1, 5, 3, 2     ; alpha * min(x, 0) + max(x, 0)
.endm

    vbcasti.DT v31, 0.0
    PERCHAN_1IN prelu_math
    halt
