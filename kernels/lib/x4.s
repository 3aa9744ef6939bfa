; Register banks for unrolled bodies. A kernel writes its math once, in terms
; of bank-relative register numbers, through the width macros below:
;
;     \N\()_3 vmul.DT, 1, 0, 30        ; out(1) = in(0) * v30
;
; With N = X4 that is four interleaved copies; with N = X1, one. Register
; numbers below 24 are per copy (copy k adds 6k: copy 0 owns v0..v5, copy 1
; v6..v11, copy 2 v12..v17, copy 3 v18..v23); v24..v31 are shared constants.
; Interleaving the copies instruction by instruction hides each copy's
; dependency chain on the in-order core: while copy 0 waits for its latency,
; copies 1..3 issue.

.equ X4_BANK, 6

.macro X1_1 op, d
    \op v[\d]
.endm
.macro X1_2 op, d, a
    \op v[\d], v[\a]
.endm
.macro X1_3 op, d, a, b
    \op v[\d], v[\a], v[\b]
.endm
.macro X1_4 op, d, a, b, c
    \op v[\d], v[\a], v[\b], v[\c]
.endm

.macro X4_2 op, d, a
    \op v[\d], v[\a]
    \op v[\d + 1*X4_BANK*(\d < 24)], v[\a + 1*X4_BANK*(\a < 24)]
    \op v[\d + 2*X4_BANK*(\d < 24)], v[\a + 2*X4_BANK*(\a < 24)]
    \op v[\d + 3*X4_BANK*(\d < 24)], v[\a + 3*X4_BANK*(\a < 24)]
.endm
.macro X4_3 op, d, a, b
    \op v[\d], v[\a], v[\b]
    \op v[\d + 1*X4_BANK*(\d < 24)], v[\a + 1*X4_BANK*(\a < 24)], v[\b + 1*X4_BANK*(\b < 24)]
    \op v[\d + 2*X4_BANK*(\d < 24)], v[\a + 2*X4_BANK*(\a < 24)], v[\b + 2*X4_BANK*(\b < 24)]
    \op v[\d + 3*X4_BANK*(\d < 24)], v[\a + 3*X4_BANK*(\a < 24)], v[\b + 3*X4_BANK*(\b < 24)]
.endm
.macro X4_4 op, d, a, b, c
    \op v[\d], v[\a], v[\b], v[\c]
    \op v[\d + 1*X4_BANK*(\d < 24)], v[\a + 1*X4_BANK*(\a < 24)], v[\b + 1*X4_BANK*(\b < 24)], v[\c + 1*X4_BANK*(\c < 24)]
    \op v[\d + 2*X4_BANK*(\d < 24)], v[\a + 2*X4_BANK*(\a < 24)], v[\b + 2*X4_BANK*(\b < 24)], v[\c + 2*X4_BANK*(\c < 24)]
    \op v[\d + 3*X4_BANK*(\d < 24)], v[\a + 3*X4_BANK*(\a < 24)], v[\b + 3*X4_BANK*(\b < 24)], v[\c + 3*X4_BANK*(\c < 24)]
.endm
