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
;
; Predicated forms take a predicate bank number last; copy k uses p(P + k)
; (X1: pP), so with P = 1 the four copies use p1..p4:
;
;     \N\()_C  vclt.f32, 1, 0, 31        ; p(1+k) = in(k) < v31   (compare: pd first)
;     \N\()_3P vsel.f32, 1, 2, 1, 1      ; out(k) = p(1+k) ? r2(k) : out(k)
;     \N\()_3P vmul.f32, 1, 2, 30, 1     ; out(k) = r2(k) * v30 where p(1+k), else kept
;
; (_2P, _3P, _4P: two, three or four vector operands, then the predicate.)
;
; One copy of an X4 operation, for software-pipelined maths (lib/eltwise.s,
; _PIPE) that place memory steps between the copies: copy k last; with X1
; only copy 0 exists and the others expand to nothing.
;
;     \N\()_3K vmax.DT, 1, 0, 31, 2     ; copy 2 only: v13 = max(v12, v31)

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

; Predicated forms (see the header).
.macro X1_2P op, d, a, p
    \op v[\d], v[\a], p[\p]
.endm
.macro X4_2P op, d, a, p
    \op v[\d], v[\a], p[\p + 0]
    \op v[\d + 1*X4_BANK*(\d < 24)], v[\a + 1*X4_BANK*(\a < 24)], p[\p + 1]
    \op v[\d + 2*X4_BANK*(\d < 24)], v[\a + 2*X4_BANK*(\a < 24)], p[\p + 2]
    \op v[\d + 3*X4_BANK*(\d < 24)], v[\a + 3*X4_BANK*(\a < 24)], p[\p + 3]
.endm
.macro X1_3P op, d, a, b, p
    \op v[\d], v[\a], v[\b], p[\p]
.endm
.macro X4_3P op, d, a, b, p
    \op v[\d], v[\a], v[\b], p[\p + 0]
    \op v[\d + 1*X4_BANK*(\d < 24)], v[\a + 1*X4_BANK*(\a < 24)], v[\b + 1*X4_BANK*(\b < 24)], p[\p + 1]
    \op v[\d + 2*X4_BANK*(\d < 24)], v[\a + 2*X4_BANK*(\a < 24)], v[\b + 2*X4_BANK*(\b < 24)], p[\p + 2]
    \op v[\d + 3*X4_BANK*(\d < 24)], v[\a + 3*X4_BANK*(\a < 24)], v[\b + 3*X4_BANK*(\b < 24)], p[\p + 3]
.endm
.macro X1_4P op, d, a, b, c, p
    \op v[\d], v[\a], v[\b], v[\c], p[\p]
.endm
.macro X4_4P op, d, a, b, c, p
    \op v[\d], v[\a], v[\b], v[\c], p[\p + 0]
    \op v[\d + 1*X4_BANK*(\d < 24)], v[\a + 1*X4_BANK*(\a < 24)], v[\b + 1*X4_BANK*(\b < 24)], v[\c + 1*X4_BANK*(\c < 24)], p[\p + 1]
    \op v[\d + 2*X4_BANK*(\d < 24)], v[\a + 2*X4_BANK*(\a < 24)], v[\b + 2*X4_BANK*(\b < 24)], v[\c + 2*X4_BANK*(\c < 24)], p[\p + 2]
    \op v[\d + 3*X4_BANK*(\d < 24)], v[\a + 3*X4_BANK*(\a < 24)], v[\b + 3*X4_BANK*(\b < 24)], v[\c + 3*X4_BANK*(\c < 24)], p[\p + 3]
.endm
.macro X1_C op, pd, a, b
    \op p[\pd], v[\a], v[\b]
.endm
.macro X4_C op, pd, a, b
    \op p[\pd + 0], v[\a], v[\b]
    \op p[\pd + 1], v[\a + 1*X4_BANK*(\a < 24)], v[\b + 1*X4_BANK*(\b < 24)]
    \op p[\pd + 2], v[\a + 2*X4_BANK*(\a < 24)], v[\b + 2*X4_BANK*(\b < 24)]
    \op p[\pd + 3], v[\a + 3*X4_BANK*(\a < 24)], v[\b + 3*X4_BANK*(\b < 24)]
.endm

; Single copies (see the header).
.macro X1_2K op, d, a, k
.if \k == 0
    \op v[\d], v[\a]
.endif
.endm
.macro X4_2K op, d, a, k
    \op v[\d + \k*X4_BANK*(\d < 24)], v[\a + \k*X4_BANK*(\a < 24)]
.endm
.macro X1_3K op, d, a, b, k
.if \k == 0
    \op v[\d], v[\a], v[\b]
.endif
.endm
.macro X4_3K op, d, a, b, k
    \op v[\d + \k*X4_BANK*(\d < 24)], v[\a + \k*X4_BANK*(\a < 24)], v[\b + \k*X4_BANK*(\b < 24)]
.endm
.macro X1_4K op, d, a, b, c, k
.if \k == 0
    \op v[\d], v[\a], v[\b], v[\c]
.endif
.endm
.macro X4_4K op, d, a, b, c, k
    \op v[\d + \k*X4_BANK*(\d < 24)], v[\a + \k*X4_BANK*(\a < 24)], v[\b + \k*X4_BANK*(\b < 24)], v[\c + \k*X4_BANK*(\c < 24)]
.endm

; Two interleaved sets of copies, for the fp16 path of lib/act.s (see
; ACT_APPLY_PIPE): X8 is X4 on the given bank registers and X4 again on the
; next ones up (register r + 1 for r < 24: the high half of a vector widened
; next to its low half); X2 is the same over X1. No predicated forms: the
; second set would need predicates of its own.
.macro X2_2 op, d, a
    X1_2 \op, \d, \a
    X1_2 \op, (\d + (\d < 24)), (\a + (\a < 24))
.endm
.macro X2_3 op, d, a, b
    X1_3 \op, \d, \a, \b
    X1_3 \op, (\d + (\d < 24)), (\a + (\a < 24)), (\b + (\b < 24))
.endm
.macro X2_4 op, d, a, b, c
    X1_4 \op, \d, \a, \b, \c
    X1_4 \op, (\d + (\d < 24)), (\a + (\a < 24)), (\b + (\b < 24)), (\c + (\c < 24))
.endm
.macro X8_2 op, d, a
    X4_2 \op, \d, \a
    X4_2 \op, (\d + (\d < 24)), (\a + (\a < 24))
.endm
.macro X8_3 op, d, a, b
    X4_3 \op, \d, \a, \b
    X4_3 \op, (\d + (\d < 24)), (\a + (\a < 24)), (\b + (\b < 24))
.endm
.macro X8_4 op, d, a, b, c
    X4_4 \op, \d, \a, \b, \c
    X4_4 \op, (\d + (\d < 24)), (\a + (\a < 24)), (\b + (\b < 24)), (\c + (\c < 24))
.endm

; Copy c (0..7) of an X8 operation: copies 0..3 are X4's, 4..7 the same
; copies one register up (for schedules that place single copies).
.macro X8_2C op, d, a, c
.if \c < 4
    X4_2K \op, \d, \a, \c
.else
    X4_2K \op, (\d + (\d < 24)), (\a + (\a < 24)), (\c - 4)
.endif
.endm
.macro X8_3C op, d, a, b, c
.if \c < 4
    X4_3K \op, \d, \a, \b, \c
.else
    X4_3K \op, (\d + (\d < 24)), (\a + (\a < 24)), (\b + (\b < 24)), (\c - 4)
.endif
.endm
