; Shared skeleton of every one-input elementwise kernel: split the NC1HWC0
; tensor across cores, stream it through the UB in tiles with double-buffered
; DMA (load tile i+1 and store tile i-1 while computing tile i), compute each
; tile four vectors at a time with the next group's loads issued under the
; current group's math, and finish a tile with a predicated tail, so no shape
; and no VLEN needs a scalar clean-up loop.
;
; Calling convention (docs/kernels.md): s1 = input GM address, s2 = output GM
; address, s3.. = parameters as binary32 bits. The skeleton owns s8..s31 and
; p7; the kernel's math (see lib/x4.s) reads its input in bank register 0 and
; leaves its output in bank register 1, using bank registers 2..5 and the
; shared constants v24..v31 as it likes.
;
; Multi-core split: the tensor is a flat run of 32-byte C0 blocks; core k of n
; takes blocks [k*ceil(B/n), min((k+1)*ceil(B/n), B)).
.include "lib/x4.s"

.equ TILE, 8192                ; bytes per tile buffer
.equ IN0, 0                    ; UB layout: two input and two output buffers
.equ IN1, 8192
.equ OUT0, 16384
.equ OUT1, 24576

; Computes one tile: s10 = UB input, s11 = UB output, s13 = elements.
; Groups of four vectors run unmasked; the rest goes one masked vector at a time.
.macro ELT_COMPUTE math
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
group\@:
    add     s10, s10, s12           ; pointer bumps first: they issue beside the math
    \math   X4                      ; outputs in v1, v7, v13, v19
    add     s11, s11, s12
    ; The next group's inputs load under this group's math. On the last pass
    ; they read past the tile's data, inside the UB, and are never used.
    vld.DT  v0, [s10]
    vld.DT  v6, [s10 + 1 vl]
    vld.DT  v12, [s10 + 2 vl]
    vld.DT  v18, [s10 + 3 vl]
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
    \math   X1
    vst.DT  v1, [s11], p7
    add     s10, s10, s14
    add     s11, s11, s14
    sub     s13, s13, s15
    blt     s0, s13, vec\@
done\@:
.endm

; One tile: prefetch the next, wait for this one, compute, store.
;   s20 bytes left (this tile included)  s21 GM input  s22 GM output
;   s24 this tile's bytes                s26 tiles done so far
.macro ELT_TILE math, B, NB, INB, INNB, OUTB, STB
    sub     s28, s20, s24           ; bytes after this tile
    beqz    s28, noprefetch\@
    min     s29, s28, s23           ; next tile's bytes
    add     s30, s21, s24
    li      s31, \INNB
    dmald   s31, s30, s29, \NB      ; prefetch tile i+1 into the other buffer
noprefetch\@:
    dmawait \B                      ; tile i is in the UB
    slti    s31, s26, 2
    bnez    s31, outfree\@
    dmawait \STB                    ; tile i-2's store has left output buffer B
outfree\@:
    li      s10, \INB
    li      s11, \OUTB
    divu    s13, s24, s17           ; elements in this tile
    ELT_COMPUTE \math
    li      s31, \OUTB
    dmast   s31, s22, s24, \STB     ; store tile i
    add     s21, s21, s24
    add     s22, s22, s24
    sub     s20, s20, s24
    addi    s26, s26, 1
    mv      s24, s29
.endm

; ELTWISE_1IN math: runs `math N` (N = X4 or X1, see lib/x4.s) over the tensor.
.macro ELTWISE_1IN math
    srd     s16, elems
    srd     s17, esize
    mul     s16, s16, s17           ; tensor bytes
    srli    s16, s16, 5             ; C0 blocks
    srd     s18, ncores
    add     s19, s16, s18
    addi    s19, s19, -1
    divu    s19, s19, s18           ; blocks per core, rounded up
    srd     s25, coreid
    mul     s25, s25, s19           ; first block of this core
    add     s20, s25, s19
    min     s20, s20, s16           ; end block of this core
    bge     s25, s20, finished\@    ; no work for this core
    sub     s20, s20, s25
    slli    s20, s20, 5             ; bytes for this core
    slli    s25, s25, 5
    add     s21, s1, s25            ; GM input cursor
    add     s22, s2, s25            ; GM output cursor
    srd     s14, vlenb
    divu    s15, s14, s17           ; lanes per vector
    li      s23, TILE
    min     s24, s20, s23           ; tile 0 bytes
    li      s31, IN0
    dmald   s31, s21, s24, 0
    li      s26, 0
    li      s29, 0
pair\@:
    ELT_TILE \math, 0, 1, IN0, IN1, OUT0, 2
    beqz    s20, drain\@
    ELT_TILE \math, 1, 0, IN1, IN0, OUT1, 3
    bnez    s20, pair\@
drain\@:
    dmawait 2
    slti    s31, s26, 2
    bnez    s31, finished\@
    dmawait 3
finished\@:
.endm
