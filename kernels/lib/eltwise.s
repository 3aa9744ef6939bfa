; Shared skeletons of the elementwise kernels: split the NC1HWC0 tensor across
; cores, stream it through the UB in tiles with double-buffered DMA (load tile
; i+1 and store tile i-1 while computing tile i), compute each tile four
; vectors at a time (the _PIPE forms with the loads and stores placed among
; the math), and finish a tile with a predicated tail, so no shape and no
; VLEN needs a scalar clean-up loop.
;
;   ELTWISE_1IN math       one input:  s1 = x, s2 = y, parameters from s3
;   ELTWISE_1IN_PAD math   the same, for f(0) != 0: padded channels are zeroed
;   ELTWISE_2IN math       two inputs: s1 = a, s2 = b, s3 = y, parameters from s4
;   ELTWISE_2IN_PAD math   the same with padding zeroed
;   ELTWISE_1IN_PIPE math, ELTWISE_1IN_PAD_PIPE math
;                          the same, software-pipelined: `math N, MEM` places
;                          the group loop's loads and stores itself (below)
;   ELTWISE_1IN_PIPE2 loop, plain (and _PAD_PIPE2)
;                          the same in two stages (ELT_COMPUTE_PIPE2)
;
; The kernel's math (see lib/x4.s) reads its input in bank register 0 (the
; second input of a two-input kernel in bank register 2) and leaves its
; output in bank register 1, using the other bank registers (2..5, or 3..5)
; and the shared constants v24..v31 as it likes. The skeleton owns s8..s31,
; p6 and p7; the kernel may keep p1..p5 and s4..s7 (beyond its parameters).
;
; The _PIPE forms software-pipeline the group loop, as lib/perchan.s does:
; the math is `math N, MEM` and calls `\MEM 0` .. `\MEM 7` once each among
; its instructions. Steps 0..3 store copy k's output (bank register 1) of the
; previous group, so each must come before the math's first write to bank
; register 1 of copy k; steps 4..7 load copy k-4's input (bank register 0)
; of the next group, so each must come after the math's last read (or write)
; of bank register 0 of that copy. Steps 0 and 4 come first of their kind
; (they move the pointers on: ELT_MEM_LOOP). In-order issue then pairs the
; one memory slot with the vector slots instead of running eight memory
; instructions after the math, and no store waits for the end of its
; group's chain. The masked tail calls `math X1, ELT_MEM_NONE` (its loads
; and stores are apart).
;
; Padding (the _PAD forms): channels C..C1*C0-1 of the last C1 block of each
; batch are padding. Inputs there are zero, but f(0) may not be, so after a
; tile is computed in the UB the skeleton stores zeros over the padded lanes
; of every C0 block of a last C1 block inside the tile (masked stores of a
; zero vector: lanes c % C0 >= C % C0), then DMAs the tile out. The math
; needs no selects for it, and shapes with C % C0 == 0 skip it entirely.
;
; Multi-core split: `@split blocks` (lib/split.s, SPLIT_BLOCKS).
.include "lib/x4.s"
.include "lib/split.s"

.equ TILE, 8192                ; bytes per tile buffer, one input
.equ IN0, 0                    ; UB layout: two input and two output buffers
.equ IN1, 8192
.equ OUT0, 16384
.equ OUT1, 24576
.equ TILE2, 4096               ; two inputs: six 4 KiB buffers (fits a 32 KiB UB)
.equ A0_2, 0
.equ A1_2, 4096
.equ B0_2, 8192
.equ B1_2, 12288
.equ OUT0_2, 16384
.equ OUT1_2, 20480

; Register map (scalar): s14 vlenb, s15 lanes, s17 esize, s20 bytes left,
; s21 GM input (a) cursor, s27 GM input b cursor, s22 GM output cursor,
; s23 tile bytes (max), s24 this tile's bytes, s26 tiles done, s29 next
; tile's bytes; padding: s16 bytes of one C1 block (H*W*32), s18 C1, s19
; C % C0 (0: no padding). Temporaries: s8..s13, s25, s28, s30, s31.

; Computes one tile: s10 = UB input, s28 = UB second input (NIN 2),
; s11 = UB output, s13 = elements. Groups of four vectors run unmasked; the
; rest goes one masked vector at a time.
.macro ELT_COMPUTE math, NIN
    slli    s12, s15, 2             ; elements per group of four vectors
    divu    s9, s13, s12            ; full groups
    beqz    s9, tail\@
    mul     s8, s9, s12
    sub     s13, s13, s8            ; elements left for the tail
    slli    s12, s14, 2             ; bytes per group
    vld.DT  v0, [s10]               ; prologue: the first group's inputs
    vld.DT  v6, [s10 + 1 vl]
    vld.DT  v12, [s10 + 2 vl]
    vld.DT  v18, [s10 + 3 vl]
.if \NIN == 2
    vld.DT  v2, [s28]
    vld.DT  v8, [s28 + 1 vl]
    vld.DT  v14, [s28 + 2 vl]
    vld.DT  v20, [s28 + 3 vl]
.endif
group\@:
    add     s10, s10, s12           ; pointer bumps first: they issue beside the math
.if \NIN == 2
    add     s28, s28, s12
.endif
    \math   X4                      ; outputs in v1, v7, v13, v19
    add     s11, s11, s12
    ; The next group's inputs load under this group's math. On the last pass
    ; they read past the tile's data, inside the UB, and are never used.
    vld.DT  v0, [s10]
    vld.DT  v6, [s10 + 1 vl]
    vld.DT  v12, [s10 + 2 vl]
    vld.DT  v18, [s10 + 3 vl]
.if \NIN == 2
    vld.DT  v2, [s28]
    vld.DT  v8, [s28 + 1 vl]
    vld.DT  v14, [s28 + 2 vl]
    vld.DT  v20, [s28 + 3 vl]
.endif
    vst.DT  v1, [s11 - 4 vl]
    vst.DT  v7, [s11 - 3 vl]
    vst.DT  v13, [s11 - 2 vl]
    vst.DT  v19, [s11 - 1 vl]
    loop    s9, group\@
tail\@:
    beqz    s13, done\@
vec\@:
    pwhile.DT p7, s13
    vld.DT  v0, [s10], p7
.if \NIN == 2
    vld.DT  v2, [s28], p7
    add     s28, s28, s14
.endif
    \math   X1
    vst.DT  v1, [s11], p7
    add     s10, s10, s14
    add     s11, s11, s14
    sub     s13, s13, s15
    blt     s0, s13, vec\@
done\@:
.endm

; The memory steps of a _PIPE math (see the header): stores of the previous
; group's outputs from s11, loads of the next group's inputs from s10. The
; first store and the first load also move their pointer on a group: the
; one scalar slot then takes those adds beside the memory instructions
; (steps 0 and 4 must come first of their kind), and the loop's only scalar
; instruction of its own is its branch.
.macro ELT_MEM_LOOP k
.if \k == 0
    vst.DT  v1, [s11]
    add     s11, s11, s12
.endif
.if \k > 0
.if \k < 4
    vst.DT  v[1 + 6*\k], [s11 + (\k - 4) vl]
.endif
.endif
    ELT_MEM_FIRST \k
.endm
.macro ELT_MEM_FIRST k              ; the first group: nothing to store yet
.if \k == 4
    vld.DT  v0, [s10]
    add     s10, s10, s12
.endif
.if \k > 4
    vld.DT  v[6*(\k - 4)], [s10 + (\k - 8) vl]
.endif
.endm
.macro ELT_MEM_NONE k               ; the masked tail loads and stores apart
.endm

; ELT_COMPUTE for a _PIPE math (one input): group i's math stores group i-1
; and loads group i+1; the last group's outputs are stored after the loop.
.macro ELT_COMPUTE_PIPE math
    slli    s12, s15, 2             ; elements per group of four vectors
    divu    s9, s13, s12            ; full groups
    beqz    s9, tail\@
    mul     s8, s9, s12
    sub     s13, s13, s8            ; elements left for the tail
    slli    s12, s14, 2             ; bytes per group
    vld.DT  v0, [s10]               ; prologue: the first group's inputs
    vld.DT  v6, [s10 + 1 vl]
    vld.DT  v12, [s10 + 2 vl]
    vld.DT  v18, [s10 + 3 vl]
    ; s10: the next group's input (after the last group its loads read past
    ; the tile's data, inside the UB, and are never used); s11: the output of
    ; the group whose results are in the registers.
    add     s10, s10, s12
    \math   X4, ELT_MEM_FIRST
    addi    s9, s9, -1
    beqz    s9, flush\@
group\@:
    \math   X4, ELT_MEM_LOOP
    loop    s9, group\@
flush\@:
    vst.DT  v1, [s11]               ; the last group's outputs
    vst.DT  v7, [s11 + 1 vl]
    vst.DT  v13, [s11 + 2 vl]
    vst.DT  v19, [s11 + 3 vl]
    add     s11, s11, s12
    sub     s10, s10, s12           ; back from the group after the tail's
tail\@:
    beqz    s13, done\@
vec\@:
    pwhile.DT p7, s13
    vld.DT  v0, [s10], p7
    \math   X1, ELT_MEM_NONE
    vst.DT  v1, [s11], p7
    add     s10, s10, s14
    add     s11, s11, s14
    sub     s13, s13, s15
    blt     s0, s13, vec\@
done\@:
.endm

; ELT_COMPUTE for a two-stage _PIPE2 math (one input), `math X4, MEM, S`:
; S = 3 runs the second stage of group i-1 and the first of group i, so that
; iteration stores group i-2 (its outputs came out of the iteration before)
; and loads group i+1; S = 1 (the first group) runs only the first stage, S
; = 2 (after the last group) only the second, so every vector takes exactly
; the math's instructions. The masked tail runs `plain X1` (both stages of
; one vector, in order).
.macro ELT_COMPUTE_PIPE2 math, plain
    slli    s12, s15, 2             ; elements per group of four vectors
    divu    s9, s13, s12            ; full groups
    beqz    s9, tail\@
    mul     s8, s9, s12
    sub     s13, s13, s8            ; elements left for the tail
    slli    s12, s14, 2             ; bytes per group
    vld.DT  v0, [s10]               ; prologue: the first group's inputs
    vld.DT  v6, [s10 + 1 vl]
    vld.DT  v12, [s10 + 2 vl]
    vld.DT  v18, [s10 + 3 vl]
    add     s10, s10, s12
    \math   X4, ELT_MEM_FIRST, 1    ; group 0's first stage
    addi    s9, s9, -1
    beqz    s9, one\@
    \math   X4, ELT_MEM_FIRST, 3    ; group 1's first stage, group 0's second
    addi    s9, s9, -1
    beqz    s9, last\@
group\@:
    \math   X4, ELT_MEM_LOOP, 3
    loop    s9, group\@
last\@:
    \math   X4, ELT_MEM_LOOP, 2     ; the last group's second stage
    j       flush\@
one\@:
    \math   X4, ELT_MEM_FIRST, 2
flush\@:
    vst.DT  v1, [s11]               ; the last group's outputs
    vst.DT  v7, [s11 + 1 vl]
    vst.DT  v13, [s11 + 2 vl]
    vst.DT  v19, [s11 + 3 vl]
    add     s11, s11, s12
    slli    s8, s12, 1
    sub     s10, s10, s8            ; back from two groups after the tail's
tail\@:
    beqz    s13, done\@
vec\@:
    pwhile.DT p7, s13
    vld.DT  v0, [s10], p7
    \plain  X1
    vst.DT  v1, [s11], p7
    add     s10, s10, s14
    add     s11, s11, s14
    sub     s13, s13, s15
    blt     s0, s13, vec\@
done\@:
.endm

; ELT_COMPUTE for a linear math (`math y, x` or `math y, a, b`: one vector's
; dataflow on virtual registers): a .pipeline loop the assembler schedules
; for the machine, then the masked tail, one vector through the same math.
.macro ELT_COMPUTE_LINEAR math, NIN, T
    divu    s9, s13, s15            ; whole vectors
    mul     s8, s9, s15
    sub     s13, s13, s8            ; elements left for the masked tail
.if \NIN == 2
.pipeline s9, s8, \T / VLENB
    vld.DT  %a, [s10]
    vld.DT  %b, [s28]
    \math   %y, %a, %b
    vst.DT  %y, [s11]
    addvl   s10, s10, 1
    addvl   s28, s28, 1
    addvl   s11, s11, 1
.endpipeline
.else
.pipeline s9, s8, \T / VLENB
    vld.DT  %x, [s10]
    \math   %y, %x
    vst.DT  %y, [s11]
    addvl   s10, s10, 1
    addvl   s11, s11, 1
.endpipeline
.endif
    beqz    s13, done\@
    pwhile.DT p7, s13
    li      s9, 1
.if \NIN == 2
.pipeline s9, s8, 1
    vld.DT  %a, [s10], p7
    vld.DT  %b, [s28], p7
    \math   %y, %a, %b
    vst.DT  %y, [s11], p7
.endpipeline
.else
.pipeline s9, s8, 1
    vld.DT  %x, [s10], p7
    \math   %y, %x
    vst.DT  %y, [s11], p7
.endpipeline
.endif
done\@:
.endm

; Zeroes the padded lanes of the tile just computed in UB buffer OUTB:
; s30 = the tile's byte offset in the tensor, s24 = its bytes.
.macro ELT_PADFIX OUTB
    beqz    s19, nopad\@
    vbcasti.DT v0, 0.0              ; bank register 0 is free between tiles
    ; p6: lanes [C % C0, C0) of the first C0 block of a vector (or of its
    ; first half-block when a vector is 16 bytes); p7: the second half.
    pwhile.DT p6, s19
    pnot    p6, p6
    srd     s8, shape.c0
    min     s9, s8, s15
    pwhile.DT p7, s9
    pand    p6, p6, p7
    sub     s9, s19, s15
    pwhile.DT p7, s9                ; lanes beyond the vector are never used
    pnot    p7, p7
    add     s31, s30, s24           ; end of the tile in the tensor
    divu    s8, s30, s16            ; C1 block (over n and c1) the tile starts in
    remu    s9, s8, s18
    sub     s9, s18, s9
    addi    s9, s9, -1
    add     s8, s8, s9              ; the first last-C1 block at or after it
    mul     s8, s8, s16             ; its byte offset
blk\@:
    bge     s8, s31, nopad\@
    max     s9, s8, s30             ; [s9, s10) = the block's part inside the tile
    add     s10, s8, s16
    min     s10, s10, s31
    add     s8, s8, s16             ; next last-C1 block: C1 blocks further
    mul     s11, s16, s18
    sub     s11, s11, s16
    add     s8, s8, s11
    bge     s9, s10, blk\@
    sub     s10, s10, s9
    srli    s10, s10, 5             ; C0 blocks to fix
    sub     s9, s9, s30
    addi    s9, s9, \OUTB           ; UB address of the first
    li      s11, 32
    blt     s14, s11, half\@
c0blk\@:
    vst.DT  v0, [s9], p6
    addi    s9, s9, 32
    loop    s10, c0blk\@
    j       blk\@
half\@:
    vst.DT  v0, [s9], p6
    vst.DT  v0, [s9 + 16], p7
    addi    s9, s9, 32
    loop    s10, half\@
    j       blk\@
nopad\@:
.endm

; One tile: prefetch the next, wait for this one, compute, store.
.macro ELT_TILE math, NIN, PAD, B, NB, INB, INNB, BINB, BINNB, OUTB, STB, PIPE, PLAIN
    sub     s28, s20, s24           ; bytes after this tile
    beqz    s28, noprefetch\@
    min     s29, s28, s23           ; next tile's bytes
    add     s30, s21, s24
    li      s31, \INNB
    dmald   s31, s30, s29, \NB      ; prefetch tile i+1 into the other buffer
.if \NIN == 2
    add     s30, s27, s24
    li      s31, \BINNB
    dmald   s31, s30, s29, \NB
.endif
noprefetch\@:
    dmawait \B                      ; tile i is in the UB
    slti    s31, s26, 2
    bnez    s31, outfree\@
    dmawait \STB                    ; tile i-2's store has left output buffer B
outfree\@:
    li      s10, \INB
.if \NIN == 2
    li      s28, \BINB
.endif
    li      s11, \OUTB
    divu    s13, s24, s17           ; elements in this tile
.if \PIPE == 2
    ELT_COMPUTE_PIPE2 \math, \PLAIN
.endif
.if \PIPE == 1
    ELT_COMPUTE_PIPE \math
.endif
.if \PIPE == 0
    ELT_COMPUTE \math, \NIN
.endif

.if \PAD == 1
    sub     s30, s21, s1            ; the tile's offset in the tensor
    ELT_PADFIX \OUTB
.endif
    li      s31, \OUTB
    dmast   s31, s22, s24, \STB     ; store tile i
    add     s21, s21, s24
.if \NIN == 2
    add     s27, s27, s24
.endif
    add     s22, s22, s24
    sub     s20, s20, s24
    addi    s26, s26, 1
    mv      s24, s29
.endm

; The driver. GA/GB: GM input registers, GY: GM output register.
.macro ELT_MAIN math, NIN, PAD, GA, GB, GY, T, I0, I1, J0, J1, O0, O1, PIPE, PLAIN
    SPLIT_BLOCKS finished\@
    add     s21, \GA, s25           ; GM input cursor
.if \NIN == 2
    add     s27, \GB, s25           ; GM second input cursor
.endif
    add     s22, \GY, s25           ; GM output cursor
.if \PAD == 1
    srd     s16, shape.h
    srd     s18, shape.w
    mul     s16, s16, s18
    slli    s16, s16, 5             ; bytes of one C1 block
    srd     s18, shape.c1
    srd     s19, shape.c
    srd     s8, shape.c0
    remu    s19, s19, s8            ; C % C0: 0 when no channel is padding
.endif
    srd     s14, vlenb
    divu    s15, s14, s17           ; lanes per vector
    li      s23, \T
    min     s24, s20, s23           ; tile 0 bytes
    li      s31, \I0
    dmald   s31, s21, s24, 0
.if \NIN == 2
    li      s31, \J0
    dmald   s31, s27, s24, 0
.endif
    li      s26, 0
    li      s29, 0
pair\@:
    ELT_TILE \math, \NIN, \PAD, 0, 1, \I0, \I1, \J0, \J1, \O0, 2, \PIPE, \PLAIN
    beqz    s20, drain\@
    ELT_TILE \math, \NIN, \PAD, 1, 0, \I1, \I0, \J1, \J0, \O1, 3, \PIPE, \PLAIN
    bnez    s20, pair\@
drain\@:
    dmawait 2
    slti    s31, s26, 2
    bnez    s31, finished\@
    dmawait 3
finished\@:
.endm

; ELTWISE_1IN math: runs `math N` (N = X4 or X1, see lib/x4.s) over the tensor.
.macro ELTWISE_1IN math
    ELT_MAIN \math, 1, 0, s1, s1, s2, TILE, IN0, IN1, IN0, IN1, OUT0, OUT1, 0, \math
.endm
.macro ELTWISE_1IN_PAD math
    ELT_MAIN \math, 1, 1, s1, s1, s2, TILE, IN0, IN1, IN0, IN1, OUT0, OUT1, 0, \math
.endm
; Software-pipelined: `math N, MEM` (see the header).
.macro ELTWISE_1IN_PIPE math
    ELT_MAIN \math, 1, 0, s1, s1, s2, TILE, IN0, IN1, IN0, IN1, OUT0, OUT1, 1, \math
.endm
.macro ELTWISE_1IN_PAD_PIPE math
    ELT_MAIN \math, 1, 1, s1, s1, s2, TILE, IN0, IN1, IN0, IN1, OUT0, OUT1, 1, \math
.endm
; Two-stage software pipeline: `math X4, MEM` for the loop, `plain X1` for
; the tail (see ELT_COMPUTE_PIPE2).
.macro ELTWISE_1IN_PIPE2 math, plain
    ELT_MAIN \math, 1, 0, s1, s1, s2, TILE, IN0, IN1, IN0, IN1, OUT0, OUT1, 2, \plain
.endm
.macro ELTWISE_1IN_PAD_PIPE2 math, plain
    ELT_MAIN \math, 1, 1, s1, s1, s2, TILE, IN0, IN1, IN0, IN1, OUT0, OUT1, 2, \plain
.endm
; Two inputs: a in bank register 0, b in bank register 2.
.macro ELTWISE_2IN math
    ELT_MAIN \math, 2, 0, s1, s2, s3, TILE2, A0_2, A1_2, B0_2, B1_2, OUT0_2, OUT1_2, 0, \math
.endm
.macro ELTWISE_2IN_PAD math
    ELT_MAIN \math, 2, 1, s1, s2, s3, TILE2, A0_2, A1_2, B0_2, B1_2, OUT0_2, OUT1_2, 0, \math
.endm

; Linear kernels (docs/scheduling.md): `math y, x` (one input) or `math y,
; a, b` (two inputs) is one vector's dataflow on virtual registers; the
; assembler schedules it for the machine the kernel runs on. The tile loop
; keeps three input tiles in flight (ELT_MAIN3).
.macro ELTWISE_1IN_LINEAR math
    ELT_MAIN3 \math, 1, 0, s1, s1, s2
.endm
.macro ELTWISE_1IN_PAD_LINEAR math
    ELT_MAIN3 \math, 1, 1, s1, s1, s2
.endm
.macro ELTWISE_2IN_LINEAR math
    ELT_MAIN3 \math, 2, 0, s1, s2, s3
.endm
.macro ELTWISE_2IN_PAD_LINEAR math
    ELT_MAIN3 \math, 2, 1, s1, s2, s3
.endm

; ---- the tile loop of the linear kernels ------------------------------------
;
; Input and output tiles each rotate through three UB buffers: tile i
; computes while tile i+1 is already in and tile i+2 loads, and its output
; buffer was stored two tiles ago. The DMA engine therefore always has a
; transfer queued, and a load's or a store's latency hides behind a whole
; tile of compute (with two buffers each, both are exposed once per tile).
; Tags: 0..2 the input buffers, 3..5 the output buffers. Tiles are as large
; as the UB allows (UB_BYTES, predefined for the machine), up to 16 KiB: 6
; buffers (one input) or 9 (two inputs), in 1 KiB steps.
.if UB_BYTES >= 6 * 16384
.equ T3, 16384
.else
.equ T3, UB_BYTES / 6 / 1024 * 1024
.endif
.if UB_BYTES >= 9 * 16384
.equ T3_2, 16384
.else
.equ T3_2, UB_BYTES / 9 / 1024 * 1024
.endif

; Tile i (I = i mod 3): s24 its bytes, s29 tile i+1's, s25 tile i+2's.
.macro ELT_TILE3 math, NIN, PAD, T, I
.equ IC\@, \I - 3 * (\I / 3)         ; tile i's input buffer (and load tag)
.equ IP\@, (\I + 2) - 3 * ((\I + 2) / 3) ; tile i+2's
    ; prefetch tile i+2 into input buffer (i+2) mod 3
    sub     s28, s20, s24
    sub     s28, s28, s29           ; bytes after tile i+1
    li      s25, 0
    beqz    s28, noprefetch\@
    min     s25, s28, s23
    add     s30, s21, s24
    add     s30, s30, s29
    li      s31, (IP\@) * \T
    dmald   s31, s30, s25, IP\@
.if \NIN == 2
    add     s30, s27, s24
    add     s30, s30, s29
    li      s31, (3 + IP\@) * \T
    dmald   s31, s30, s25, IP\@
.endif
noprefetch\@:
    dmawait IC\@                  ; tile i is in the UB
    slti    s31, s26, 3
    bnez    s31, outfree\@
    dmawait 3 + IC\@              ; tile i-3's store has left output buffer i mod 3
outfree\@:
    li      s10, (IC\@) * \T
.if \NIN == 2
    li      s28, (3 + IC\@) * \T
    li      s11, (6 + IC\@) * \T
.else
    li      s11, (3 + IC\@) * \T
.endif
    divu    s13, s24, s17           ; elements in this tile
    ELT_COMPUTE_LINEAR \math, \NIN, \T
.if \PAD == 1
    sub     s30, s21, s1            ; the tile's offset in the tensor
.if \NIN == 2
    ELT_PADFIX (6 + IC\@) * \T
.else
    ELT_PADFIX (3 + IC\@) * \T
.endif
.endif
.if \NIN == 2
    li      s31, (6 + IC\@) * \T
.else
    li      s31, (3 + IC\@) * \T
.endif
    dmast   s31, s22, s24, 3 + IC\@   ; store tile i
    add     s21, s21, s24
.if \NIN == 2
    add     s27, s27, s24
.endif
    add     s22, s22, s24
    sub     s20, s20, s24
    addi    s26, s26, 1
    mv      s24, s29
    mv      s29, s25
.endm

.macro ELT_MAIN3 math, NIN, PAD, GA, GB, GY
.if \NIN == 2
.equ ELT_T\@, T3_2
.else
.equ ELT_T\@, T3
.endif
    SPLIT_BLOCKS finished\@
    add     s21, \GA, s25           ; GM input cursor
.if \NIN == 2
    add     s27, \GB, s25           ; GM second input cursor
.endif
    add     s22, \GY, s25           ; GM output cursor
.if \PAD == 1
    srd     s16, shape.h
    srd     s18, shape.w
    mul     s16, s16, s18
    slli    s16, s16, 5             ; bytes of one C1 block
    srd     s18, shape.c1
    srd     s19, shape.c
    srd     s8, shape.c0
    remu    s19, s19, s8            ; C % C0: 0 when no channel is padding
.endif
    srd     s14, vlenb
    divu    s15, s14, s17           ; lanes per vector
    li      s23, ELT_T\@
    min     s24, s20, s23           ; tile 0 bytes
    sub     s29, s20, s24
    min     s29, s29, s23           ; tile 1 bytes
    li      s31, 0
    dmald   s31, s21, s24, 0
.if \NIN == 2
    li      s31, 3 * ELT_T\@
    dmald   s31, s27, s24, 0
.endif
    beqz    s29, first\@
    add     s30, s21, s24
    li      s31, ELT_T\@
    dmald   s31, s30, s29, 1
.if \NIN == 2
    add     s30, s27, s24
    li      s31, 4 * ELT_T\@
    dmald   s31, s30, s29, 1
.endif
first\@:
    li      s26, 0
three\@:
    ELT_TILE3 \math, \NIN, \PAD, ELT_T\@, 0
    beqz    s20, drain\@
    ELT_TILE3 \math, \NIN, \PAD, ELT_T\@, 1
    beqz    s20, drain\@
    ELT_TILE3 \math, \NIN, \PAD, ELT_T\@, 2
    bnez    s20, three\@
drain\@:
    dmawait 3                       ; every store (a tag with none issued is complete)
    dmawait 4
    dmawait 5
finished\@:
.endm

; LIN_WIDE f, y, x: y = f(x) for one vector of the kernel's dtype, where f is
; an fp32 linear macro `f y, x`. fp16 widens each half to fp32, applies f to
; both and narrows once (one rounding), as production kernels keep fp32
; constants; fp32 applies f directly.
.macro LIN_WIDE f, y, x
.if DT_BYTES == 2
    vcvtl.f32 %lo\@, \x
    vcvth.f32 %hi\@, \x
    \f      %flo\@, %lo\@
    \f      %fhi\@, %hi\@
    vcvtn.f16 \y, %flo\@, %fhi\@
.else
    \f      \y, \x
.endif
.endm
