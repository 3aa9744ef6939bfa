; @kernel     sigmoid
; @summary    1 / (1 + e^-x) with 1 + e^-x kept as an exact pair and the reciprocal corrected once; fp16 computes in fp32
; @input      x range=-10,10
; @output     y
; @dtypes     fp16 fp32
; @split      blocks
; @reference  sigmoid
; @bound      fp16 ulp=1
; @bound      fp32 ulp=2 abs=0x1p-126
; @note       fp32 goal 5 instructions, 2 ULP: the short form (exp, add, rcp: sigmoid_fast, 4
; @note       instructions) rounds e^-x, 1 + e^-x and 1/(1 + e^-x): 2.16 ULP measured. Here
; @note       1 + e^-x = hi + lo exactly (Fast2Sum on max/min, 5 instructions: the plain
; @note       lo = t - (hi - 1) is not exact once hi > 2^24) and 1/(hi + lo) = r - r (r lo),
; @note       r = RN(1/hi): 11 instructions per fp32 vector, 1.79 ULP measured (2 ULP met). A full
; @note       Newton step (r + r (1 - r hi - r lo), 12 instructions) gives 1.47.
; @note       fp32: for x < -88.72, e^-x overflows and the result is 0 where the true value is
; @note       subnormal (below 2^-128): the absolute bound 2^-126 covers only those.
; @note       Padded channels are zeroed by the skeleton (f(0) = 1/2).
.include "lib/act.s"

; Two stages (lib/eltwise.s, _PIPE2; lib/act.s: fp16 takes SIGMOID, the fp16
; form of SIGMOID_PAIR, in SIGMOID16_LOOP; fp32 SIGMOID_PAIR32_LOOP).
.macro sigmoid_loop N, MEM, S
.if DT_BYTES == 2
    SIGMOID16_LOOP \N, \MEM, \S
.else
    SIGMOID_PAIR32_LOOP \N, \MEM, \S
.endif
.endm
.macro sigmoid_plain N
    ACT_APPLY \N, SIGMOID_PAIR
.endm

    ACT_ONE
    ELTWISE_1IN_PAD_PIPE2 sigmoid_loop, sigmoid_plain
    halt
