; The skeleton of kernels with a per-channel parameter (PReLU's alpha): one
; input tensor, one per-channel tensor, one output, split over the cores like
; the elementwise skeletons (@split blocks: core k of n takes C0 blocks
; [k*ceil(B/n), min((k+1)*ceil(B/n), B)) of the flat tensor).
;
;   PERCHAN_1IN math     s1 = x, s2 = the per-channel tensor, s3 = y,
;                        parameters from s4
;
; In NC1HWC0 every C0 block of one (n, c1) plane (H*W blocks) has the same
; channels, so the parameter of a plane is one 32-byte C0 block. Tiles never
; cross a plane boundary: a tile that starts a plane (or a core's first tile)
; brings its plane's parameter block with it, DMA'd beside the tile's data
; under the same tag and replicated to a whole vector (VLEN > 256: one copy
; per C0 block of the vector, from a GM stride of 0), and it is loaded into
; registers once, before the tile's math; later tiles of the same plane keep
; those registers. Every vector of a tile starts on a C0 boundary of that one
; plane, so at VLEN >= 256 the replicated block is the parameter of every
; lane. At VLEN 128 a vector is half a C0 block: even vectors of a tile hold
; channels 0..C0/2-1 of the block, odd ones the rest.
;
; The math, `math N, MEM` (lib/x4.s widths, X4 only: the tail is one
; masked X4 pass; MEM: see PC_MEM_LOOP), reads x in bank register 0 and the
; parameter in bank register 5 (copies 0 and 2: the even half at VLEN 128,
; copies 1 and 3 the odd half; all the same vector otherwise), writes y to
; bank register 1, and may use bank registers 2..4 and v24..v31. The
; skeleton owns s8..s31 and p4..p7; the kernel may keep p0..p3 and s4..s7
; beyond its parameters. Padded channels are zero in x and in the
; parameter, so a math with f(0, 0) = 0 keeps them zero.
;
; Planes smaller than a tile cost a tile each (its DMAs, waits and set-up):
; a plane of H*W C0 blocks is one tile when H*W*32 <= PC_TILE.
.include "lib/x4.s"
.include "lib/split.s"

.equ PC_TILE, 7168             ; bytes per tile buffer (28 vectors of VLEN 2048)
.equ PC_IN0, 0                 ; UB: two input, two output, two parameter buffers
.equ PC_IN1, 7168
.equ PC_OUT0, 14336
.equ PC_OUT1, 21504
.equ PC_PAR0, 28672            ; one vector (up to 256 bytes) each: fits a 32 KiB UB
.equ PC_PAR1, 28928

; Register map (scalar): s14 vlenb, s15 lanes, s16 bytes of one plane
; (H*W*32), s17 esize, s18 C1, s19 this tile starts a plane (reload the
; parameter), s20 bytes left, s21 GM x cursor, s22 GM y cursor, s23 tile
; bytes (max), s24 this tile's bytes, s25 next tile starts a plane, s26
; tiles done, s27 parameter rows per vector (max(1, vlenb/32)), s29 next
; tile's bytes. Temporaries: s8..s13, s28, s30, s31.

; out = bytes of the tile at GM x cursor s30 with s28 bytes left: up to the
; tile size and the end of its plane. s8 = its offset in the tensor, s9 its
; offset in its plane.
.macro PC_TILE_BYTES out
    sub     s8, s30, s1
    remu    s9, s8, s16
    sub     s10, s16, s9            ; bytes to the end of the plane
    min     \out, s28, s23
    min     \out, \out, s10
.endm

; Starts the DMA of the parameter block of the plane holding tensor offset
; s8 into UB buffer PAR, replicated s27 times, under tag TAG.
.macro PC_LOAD_PARAM PAR, TAG
    divu    s8, s8, s16             ; plane (over n and c1)
    remu    s8, s8, s18             ; c1
    slli    s8, s8, 5
    add     s8, s8, s2              ; its C0 block in GM
    li      s10, 32
    dmadim  1, s27, s0, s10         ; s27 rows, GM stride 0: the block repeated
    li      s31, \PAR
    dmald   s31, s8, s10, \TAG
    li      s10, 1
    dmadim  1, s10, s0, s0          ; back to one row
.endm

; The memory steps a math macro places among its instructions: `\MEM k`,
; each k = 0..7 once. Steps 0..3 store copy k's output of the previous group
; (before the math writes bank register 1 of copy k); steps 4..7 load copy
; k-4's input of the next group (after the math's last read of its bank
; register 0; early, so the load latency hides behind the rest). In-order
; issue then pairs memory instructions with vector ones instead of running
; eight of them after the math.
.macro PC_MEM_LOOP k
.if \k < 4
    vst.DT  v[1 + 6*\k], [s11 + (\k - 4) vl]
.else
    vld.DT  v[6*(\k - 4)], [s10 + (\k - 4) vl]
.endif
.endm
.macro PC_MEM_FIRST k               ; the first group: nothing to store yet
.if \k >= 4
    vld.DT  v[6*(\k - 4)], [s10 + (\k - 4) vl]
.endif
.endm
.macro PC_MEM_NONE k                ; the masked tail loads and stores apart
.endm

; Computes one tile: s10 = UB input, s11 = UB output, s13 = elements. Groups
; of four vectors, software-pipelined (group i's math stores group i-1 and
; loads group i+1), then at most one masked group.
.macro PC_COMPUTE math
    slli    s12, s15, 2             ; elements per group of four vectors
    divu    s9, s13, s12            ; full groups
    beqz    s9, tail\@
    mul     s8, s9, s12
    sub     s13, s13, s8            ; elements left for the tail
    slli    s12, s14, 2             ; bytes per group
    vld.DT  v0, [s10]
    vld.DT  v6, [s10 + 1 vl]
    vld.DT  v12, [s10 + 2 vl]
    vld.DT  v18, [s10 + 3 vl]
    ; s10: the next group's input (its loads read past the tile's data after
    ; the last group: inside the UB, never used); s11: the output of the
    ; group whose results are in the registers.
    add     s10, s10, s12
    \math   X4, PC_MEM_FIRST
    addi    s9, s9, -1
    beqz    s9, flush\@
group\@:
    add     s10, s10, s12           ; pointer bumps first: they issue beside the math
    add     s11, s11, s12
    \math   X4, PC_MEM_LOOP
    loop    s9, group\@
flush\@:
    vst.DT  v1, [s11]               ; the last group's outputs
    vst.DT  v7, [s11 + 1 vl]
    vst.DT  v13, [s11 + 2 vl]
    vst.DT  v19, [s11 + 3 vl]
    add     s11, s11, s12
tail\@:
    beqz    s13, done\@
    ; One group, each copy masked to its part of the s13 elements left
    ; (masked lanes are neither read nor written): the copies keep their
    ; places, so the parameter halves still match at VLEN 128.
    pwhile.DT p4, s13
    sub     s8, s13, s15
    pwhile.DT p5, s8
    sub     s8, s8, s15
    pwhile.DT p6, s8
    sub     s8, s8, s15
    pwhile.DT p7, s8
    vld.DT  v0, [s10], p4
    vld.DT  v6, [s10 + 1 vl], p5
    vld.DT  v12, [s10 + 2 vl], p6
    vld.DT  v18, [s10 + 3 vl], p7
    \math   X4, PC_MEM_NONE
    vst.DT  v1, [s11], p4
    vst.DT  v7, [s11 + 1 vl], p5
    vst.DT  v13, [s11 + 2 vl], p6
    vst.DT  v19, [s11 + 3 vl], p7
done\@:
.endm

; One tile: prefetch the next (and its parameter when it starts a plane),
; wait for this one, load the parameter when this tile starts a plane,
; compute, store.
.macro PC_TILE math, B, NB, INB, INNB, OUTB, STB, PARB, PARNB
    li      s25, 0
    sub     s28, s20, s24           ; bytes after this tile
    beqz    s28, noprefetch\@
    add     s30, s21, s24           ; next tile's GM cursor
    PC_TILE_BYTES s29
    li      s31, \INNB
    dmald   s31, s30, s29, \NB      ; prefetch tile i+1 into the other buffer
    bnez    s9, noprefetch\@        ; the next tile continues this plane
    li      s25, 1
    PC_LOAD_PARAM \PARNB, \NB
noprefetch\@:
    dmawait \B                      ; tile i (and its parameter) is in the UB
    slti    s31, s26, 2
    bnez    s31, outfree\@
    dmawait \STB                    ; tile i-2's store has left output buffer B
outfree\@:
    beqz    s19, param\@
    li      s31, \PARB
    andi    s8, s14, 31             ; odd copies: the second half at VLEN 128 (+16), else +0
    add     s8, s8, s31
    vld.DT  v5, [s31]
    vld.DT  v11, [s8]
    vld.DT  v17, [s31]
    vld.DT  v23, [s8]
param\@:
    li      s10, \INB
    li      s11, \OUTB
    divu    s13, s24, s17           ; elements in this tile
    PC_COMPUTE \math
    li      s31, \OUTB
    dmast   s31, s22, s24, \STB     ; store tile i
    add     s21, s21, s24
    add     s22, s22, s24
    sub     s20, s20, s24
    addi    s26, s26, 1
    mv      s24, s29
    mv      s19, s25
.endm

.macro PERCHAN_1IN math
    SPLIT_BLOCKS finished\@
    add     s21, s1, s25            ; GM input cursor
    add     s22, s3, s25            ; GM output cursor
    srd     s16, shape.h
    srd     s18, shape.w
    mul     s16, s16, s18
    slli    s16, s16, 5             ; bytes of one plane
    srd     s18, shape.c1
    srd     s14, vlenb
    divu    s15, s14, s17           ; lanes per vector
    srli    s27, s14, 5
    maxi    s27, s27, 1             ; parameter rows per vector
    li      s23, PC_TILE
    mv      s30, s21
    mv      s28, s20
    PC_TILE_BYTES s24               ; tile 0
    li      s31, PC_IN0
    dmald   s31, s21, s24, 0
    PC_LOAD_PARAM PC_PAR0, 0        ; a core's first tile always loads its parameter
    li      s19, 1
    li      s26, 0
    li      s29, 0
pair\@:
    PC_TILE \math, 0, 1, PC_IN0, PC_IN1, PC_OUT0, 2, PC_PAR0, PC_PAR1
    beqz    s20, drain\@
    PC_TILE \math, 1, 0, PC_IN1, PC_IN0, PC_OUT1, 3, PC_PAR1, PC_PAR0
    bnez    s20, pair\@
drain\@:
    dmawait 2
    slti    s31, s26, 2
    bnez    s31, finished\@
    dmawait 3
finished\@:
.endm
