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
; The math, `math y, x, a`, is one vector's dataflow on virtual registers
; (linear assembly: lib/eltwise.s, ELT_COMPUTE_LINEAR): x the input, a the
; vector register holding the parameter of x's channels, y the output. The
; skeleton runs it in a .pipeline loop that the assembler schedules for the
; machine, two vectors an iteration: the first (even) reads the parameter in
; v30, the second (odd) in v31. At VLEN 128 those are the low and high halves
; of the C0 block; otherwise both hold the replicated block. The math may read
; other vector registers the kernel sets before the skeleton (not v30, v31);
; the skeleton owns s8..s31 and p4..p7, the kernel may keep p0..p3 and
; s4..s7 beyond its parameters. Padded channels are zero in x and in the
; parameter, so a math with f(0, 0) = 0 keeps them zero.
;
; Tiles rotate through three input and three output buffers, as the linear
; elementwise skeleton's do (lib/eltwise.s, ELT_MAIN3): tile i computes while
; tile i+1 is in and tile i+2 (with its parameter block, when it starts a
; plane) loads, and its output buffer was stored three tiles ago, so the DMA
; engine always has a transfer queued. Tiles are as large as the UB allows
; (UB_BYTES) beside three parameter buffers (in 1 KiB steps), up to TILE_MAX
; (16 KiB unless the host picks another, a multiple of 256 bytes; with
; DMA_CHUNK, 16 KiB, and the transfers go in pieces: PC_TILE3C);
; a plane's tiles are equal (whole C0 blocks), and a core's first and last
; tiles are short (SPLIT_TILE, lib/split.s), as the elementwise ones'.
; Tags: 0..2 the input buffers (and their parameters), 3..5 the outputs.
; Planes smaller than a tile cost a tile each (its DMAs, waits and set-up):
; a plane of H*W C0 blocks is one tile when H*W*32 <= PC_T.
.include "lib/split.s"

.equ PC_PARB, 256              ; a parameter buffer: one vector (VLEN <= 2048)
.ifndef TILE_MAX
.equ TILE_MAX, 16384               ; the host's tiling decision (lib/eltwise.s)
.endif
.ifdef DMA_CHUNK
.equ PC_TMAX, 16384               ; transfers of DMA_CHUNK bytes, tiles as without it
.if DMA_CHUNK / VLENB / 2 >= 1
.equ PC_CP, DMA_CHUNK / VLENB / 2  ; pairs of vectors computed per piece
.else
.equ PC_CP, 1
.endif
.else
.equ PC_TMAX, TILE_MAX
.endif
.equ PC_FIT, (UB_BYTES - 3 * PC_PARB) / 6 / 1024 * 1024
.if PC_FIT >= PC_TMAX
.equ PC_T, PC_TMAX / 256 * 256
.else
.equ PC_T, PC_FIT
.endif
.equ PC_PAR, 6 * PC_T          ; UB: inputs k*T, outputs (3+k)*T, parameters PC_PAR + k*256

; Register map (scalar): s14 vlenb, s15 lanes, s16 bytes of one plane
; (H*W*32), s17 esize, s18 C1, s20 bytes left (from tile i on), s21 GM x
; cursor, s22 GM y cursor, s23 tile bytes (max), s24 tile i's bytes, s29
; tile i+1's, s25 tile i+2's, s26 tiles done, s27 parameter rows per vector
; (max(1, vlenb/32)). Temporaries: s8..s13, s28, s30, s31; s19 is free.

; out = bytes of the tile at GM x cursor s30 with s28 bytes left, after a
; tile of `prev` bytes: SPLIT_TILE's size (lib/split.s), up to the end of its
; plane. s8 = its offset in the tensor, s9 its offset in its plane.
.macro PC_TILE_BYTES out, prev
    SPLIT_TILE \out, s28, \prev, s23, s14, s10, s31
    sub     s8, s30, s1
    remu    s9, s8, s16
    sub     s10, s16, s9            ; bytes to the end of the plane
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

; Computes one tile: s10 = UB input, s11 = UB output, s13 = elements. Whole
; pairs of vectors in a .pipeline loop, then one masked pair (each vector of
; it masked to its part of the elements left), so the vectors keep their
; places and the parameter halves still match at VLEN 128.
.macro PC_COMPUTE math
    slli    s12, s15, 1             ; elements per pair of vectors
    divu    s9, s13, s12            ; whole pairs
    mul     s8, s9, s12
    sub     s13, s13, s8            ; elements left for the masked pair
.pipeline s9, s8, PC_T / VLENB / 2, PC_T / VLENB / 2 ; room: a tile buffer's pairs (lib/eltwise.s)
    PC_PAIR \math
.endpipeline
    PC_TAIL \math
.endm

; The masked pair of PC_COMPUTE: s13 elements left (0: none) at s10 / s11.
.macro PC_TAIL math
    beqz    s13, done\@
    pwhile.DT p6, s13
    sub     s8, s13, s15
    pwhile.DT p7, s8                ; empty when one vector is left
    li      s9, 1
.pipeline s9, s8, 1
    vld.DT  %x0, [s10], p6
    vld.DT  %x1, [s10 + 1 vl], p7
    \math   %y0, %x0, v30
    \math   %y1, %x1, v31
    vst.DT  %y0, [s11], p6
    vst.DT  %y1, [s11 + 1 vl], p7
.endpipeline
done\@:
.endm

; The pair loop's body: two vectors, the first (even) with the parameter in
; v30, the second in v31, from s10 to s11.
.macro PC_PAIR math
    vld.DT  %x0, [s10]
    vld.DT  %x1, [s10 + 1 vl]
    \math   %y0, %x0, v30
    \math   %y1, %x1, v31
    vst.DT  %y0, [s11]
    vst.DT  %y1, [s11 + 1 vl]
    addvl   s10, s10, 2
    addvl   s11, s11, 2
.endm

; Tile i+2 (IP its buffers): s25 = its bytes (0: none), s30 = its GM
; cursor; WHOLE: its load starts here (else in pieces, PC_PIECES); its
; parameter's load starts here when it starts a plane.
.macro PC_NEXT2 IP, WHOLE
    sub     s28, s20, s24
    sub     s28, s28, s29           ; bytes after tile i+1
    li      s25, 0
    beqz    s28, none\@
    add     s30, s21, s24
    add     s30, s30, s29           ; tile i+2's GM cursor
    PC_TILE_BYTES s25, s23          ; (tiles grow only at a core's start)
.if \WHOLE
    li      s31, \IP * PC_T
    dmald   s31, s30, s25, \IP
.endif
    bnez    s9, none\@              ; tile i+2 continues its plane
    PC_LOAD_PARAM PC_PAR + \IP * PC_PARB, \IP
none\@:
.endm

; Tile i (IC its buffers) and its output buffer are ready: tile i's load is
; in (and its parameter's), tile i-3's store has left; v30/v31 = its
; parameter when it starts a plane or is the core's first.
.macro PC_READY IC
    dmawait \IC                     ; tile i (and its parameter) is in the UB
    slti    s31, s26, 3
    bnez    s31, outfree\@
    dmawait 3 + \IC                 ; tile i-3's store has left output buffer i mod 3
outfree\@:
    beqz    s26, param\@            ; a core's first tile always has its parameter
    sub     s8, s21, s1
    remu    s8, s8, s16
    bnez    s8, noparam\@           ; tile i continues its plane
param\@:
    li      s31, PC_PAR + \IC * PC_PARB
    andi    s8, s14, 31             ; odd vectors: the second half at VLEN 128 (+16), else +0
    add     s8, s8, s31
    vld.DT  v30, [s31]
    vld.DT  v31, [s8]
noparam\@:
.endm

; After tile i: the cursors and sizes move on one tile.
.macro PC_ADVANCE
    add     s21, s21, s24
    add     s22, s22, s24
    sub     s20, s20, s24
    addi    s26, s26, 1
    mv      s24, s29
    mv      s29, s25
.endm

; Tile i (I = i mod 3): prefetch tile i+2 (and its parameter when it starts
; a plane), wait for tile i, load its parameter into v30/v31 when it starts a
; plane or is the core's first, compute, store.
.macro PC_TILE3 math, I
.equ IC\@, \I - 3 * (\I / 3)         ; tile i's buffers (and load tag)
.equ IP\@, (\I + 2) - 3 * ((\I + 2) / 3) ; tile i+2's
    PC_NEXT2 IP\@, 1
    PC_READY IC\@
    li      s10, (IC\@) * PC_T
    li      s11, (3 + IC\@) * PC_T
    divu    s13, s24, s17           ; elements in this tile
    PC_COMPUTE \math
    li      s31, (3 + IC\@) * PC_T
    dmast   s31, s22, s24, 3 + IC\@ ; store tile i
    PC_ADVANCE
.endm

; DMA_CHUNK (the host's, where the L2 MSHRs pace the reads: docs/kernels.md,
; "Tiles"): tiles stay as large as without it, but tile i+2's load and tile
; i-1's store go out in pieces of DMA_CHUNK bytes, a load piece and then a
; store piece before each DMA_CHUNK of tile i's compute, so that the store
; piece leaves while the load piece before it holds the MSHRs, as with tiles
; of that size, and the tile code runs once per tile, not once per piece.
; Before the compute of tile i at offset s31: the pieces at that offset of
; tile i+2's load (s25 bytes, in buffer IP, GM s30) and of tile i-1's store
; (s19 bytes, out buffer 3+IP, GM s28), where the tile has bytes there.
; Clobbers s8, s12, s13.
.macro PC_PIECES IP
    sub     s8, s25, s31
    bge     s0, s8, nold\@          ; tile i+2 loaded (or none)
    mini    s8, s8, DMA_CHUNK
    addi    s12, s31, \IP * PC_T
    add     s13, s30, s31
    dmald   s12, s13, s8, \IP
nold\@:
    sub     s8, s19, s31
    bge     s0, s8, nost\@          ; tile i-1 stored
    mini    s8, s8, DMA_CHUNK
    addi    s12, s31, (3 + \IP) * PC_T
    add     s13, s28, s31
    dmast   s12, s13, s8, 3 + \IP
nost\@:
.endm

; PC_TILE3 with DMA_CHUNK: tile i's pairs PC_CP at a time, each after its
; pieces; tile i's store is tile i+1's (s19 its bytes), the last tile's the
; drain's (PC_LAST_STORE).
.macro PC_TILE3C math, I
.equ IC\@, \I - 3 * (\I / 3)         ; tile i's buffers (and load tag)
.equ IP\@, (\I + 2) - 3 * ((\I + 2) / 3) ; tile i+2's, and tile i-1's
    PC_NEXT2 IP\@, 0
    PC_READY IC\@
    sub     s28, s22, s19           ; tile i-1's GM output
    li      s10, (IC\@) * PC_T
    li      s11, (3 + IC\@) * PC_T
    divu    s9, s24, s17
    slli    s8, s15, 1
    divu    s9, s9, s8              ; tile i's whole pairs
    li      s31, 0                  ; the pieces' offset
piece\@:
    PC_PIECES IP\@
    mini    s8, s9, PC_CP
    sub     s9, s9, s8
.pipeline s8, s12, PC_CP
    PC_PAIR \math
.endpipeline
    addi    s31, s31, DMA_CHUNK
    bnez    s9, piece\@
rest\@:
    sub     s8, s19, s31
    sub     s12, s25, s31
    max     s8, s8, s12
    bge     s0, s8, sent\@          ; every piece of both is out
    PC_PIECES IP\@
    addi    s31, s31, DMA_CHUNK
    j       rest\@
sent\@:
    divu    s13, s24, s17
    slli    s12, s15, 1
    remu    s13, s13, s12           ; elements left for the masked pair
    PC_TAIL \math
    mv      s19, s24
    PC_ADVANCE
.endm

; The tile loop: PC_TILE3, or PC_TILE3C with DMA_CHUNK.
.macro PC_TILE math, I
.ifdef DMA_CHUNK
    PC_TILE3C \math, \I
.else
    PC_TILE3 \math, \I
.endif
.endm

; DMA_CHUNK: the store of the last tile, tile i (I = i mod 3).
.macro PC_LAST_STORE I
.ifdef DMA_CHUNK
    li      s31, (3 + \I) * PC_T
    sub     s28, s22, s19
    dmast   s31, s28, s19, 3 + \I
.endif
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
    li      s23, PC_T - 1
    add     s23, s23, s16
    li      s8, PC_T
    divu    s23, s23, s8            ; tiles per plane, ceil(plane / PC_T)
    add     s8, s16, s23
    addi    s8, s8, -1
    divu    s8, s8, s23             ; ceil(plane / tiles)
    addi    s8, s8, 31
    andi    s23, s8, -32            ; tile bytes: a plane's tiles balanced, in C0 blocks
    mv      s30, s21
    mv      s28, s20
    slli    s29, s14, 6             ; so tile 0 is at most 128 vectors
    PC_TILE_BYTES s24, s29          ; tile 0
    li      s31, 0
    dmald   s31, s21, s24, 0
    PC_LOAD_PARAM PC_PAR, 0         ; a core's first tile always loads its parameter
    li      s29, 0
    sub     s28, s20, s24           ; bytes after tile 0
    beqz    s28, first\@
    add     s30, s21, s24
    PC_TILE_BYTES s29, s24          ; tile 1
    li      s31, PC_T
    dmald   s31, s30, s29, 1
    bnez    s9, first\@
    PC_LOAD_PARAM PC_PAR + PC_PARB, 1
first\@:
    li      s26, 0
    li      s19, 0                  ; DMA_CHUNK: no tile before tile 0 to store
three\@:
    PC_TILE \math, 0
    beqz    s20, last0\@
    PC_TILE \math, 1
    beqz    s20, last1\@
    PC_TILE \math, 2
    bnez    s20, three\@
    PC_LAST_STORE 2
    j       drain\@
last0\@:
    PC_LAST_STORE 0
    j       drain\@
last1\@:
    PC_LAST_STORE 1
drain\@:
    dmawait 3                       ; every store: tile 0's tag, then 4 and 5 when used
    slti    s31, s26, 2
    bnez    s31, finished\@
    dmawait 4
    slti    s31, s26, 3
    bnez    s31, finished\@
    dmawait 5
finished\@:
.endm
