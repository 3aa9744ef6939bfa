; The skeleton of the elementwise kernels (docs/kernels.md): split the
; NC1HWC0 tensor across cores, stream each core's share through the UB in
; tiles (three input and three output buffers, so the DMA engine always has
; a transfer queued), run each tile's whole vectors through one `.pipeline`
; loop that the assembler schedules for the machine (docs/scheduling.md),
; and the last, partial vector through the same math under a `pwhile` mask,
; so every shape and VLEN works.
;
;   ELTWISE_1IN_LINEAR math       one input:  s1 = x, s2 = y, parameters from s3
;   ELTWISE_1IN_PAD_LINEAR math   the same, for f(0) != 0: padded channels are zeroed
;   ELTWISE_2IN_LINEAR math       two inputs: s1 = a, s2 = b, s3 = y, parameters from s4
;   ELTWISE_2IN_PAD_LINEAR math   the same with padding zeroed
;   LIN_WIDE f, y, x              fp16: f (an fp32 macro) on both halves, narrowed once
;
; The math is `math y, x` (or `math y, a, b`): one vector's dataflow on
; virtual registers (%name), which may read vector registers the kernel set
; before the skeleton (constants) and never writes a physical one. The
; skeleton owns s8..s31; the kernel may keep s4..s7 beyond its parameters.
;
; Padding (the _PAD forms): channels C..C1*C0-1 of the last C1 block of each
; batch are padding. Inputs there are zero, but f(0) may not be, so after a
; tile is computed in the UB the skeleton stores zeros over the padded lanes
; of every C0 block of a last C1 block inside the tile (masked stores of a
; zero vector: lanes c % C0 >= C % C0), then DMAs the tile out. The math
; needs no selects for it, and shapes with C % C0 == 0 skip it entirely.
;
; Multi-core split: `@split blocks` (lib/split.s, SPLIT_BLOCKS).
.include "lib/split.s"

; Register map (scalar): s14 vlenb, s15 lanes, s17 esize, s20 bytes left,
; s21 GM input (a) cursor, s27 GM input b cursor, s22 GM output cursor,
; s23 tile bytes (max), s24 this tile's bytes, s29 the next tile's, s25 the
; one after, s26 tiles done; padding: s16 bytes of one C1 block (H*W*32),
; s18 C1, s19 C % C0 (0: no padding). Temporaries: s8..s13, s28, s30, s31.

; One input: one vector's iteration (ELT_BODY1), and the masked tail of s13
; elements through the same math (ELT_TAIL1); s10 = x, s11 = y.
.macro ELT_BODY1 math
    vld.DT  %x, [s10]
    \math   %y, %x
    vst.DT  %y, [s11]
    addvl   s10, s10, 1
    addvl   s11, s11, 1
.endm
.macro ELT_TAIL1 math
    beqz    s13, done\@
    pwhile.DT p7, s13
    li      s9, 1
.pipeline s9, s8, 1
    vld.DT  %x, [s10], p7
    \math   %y, %x
    vst.DT  %y, [s11], p7
.endpipeline
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
.pipeline s9, s8, \T / VLENB, \T / VLENB ; room: below ELT_TILE3
    vld.DT  %a, [s10]
    vld.DT  %b, [s28]
    \math   %y, %a, %b
    vst.DT  %y, [s11]
    addvl   s10, s10, 1
    addvl   s28, s28, 1
    addvl   s11, s11, 1
.endpipeline
.else
.pipeline s9, s8, \T / VLENB, \T / VLENB ; room: below ELT_TILE3
    ELT_BODY1 \math
.endpipeline
.endif
.if \NIN == 2
    beqz    s13, done\@
    pwhile.DT p7, s13
    li      s9, 1
.pipeline s9, s8, 1
    vld.DT  %a, [s10], p7
    vld.DT  %b, [s28], p7
    \math   %y, %a, %b
    vst.DT  %y, [s11], p7
.endpipeline
done\@:
.else
    ELT_TAIL1 \math
.endif
.endm

; xl = the input vector x again (a, of two inputs), by a second load of the
; address ELT_COMPUTE_LINEAR loaded it from ([s10], bumped only after the
; math), so within an iteration the two loads give the same bits. For math
; that needs x at its end: a load is cheap where the SFU or the vector slots
; bind, and its value lives a few cycles, where x kept in a register would
; live the whole chain. The masked tail's load of x is masked, this one is
; not: lanes past the tile's end are read from the UB (the input buffers
; come first in it) and never stored.
.ifndef MATMUL_EPILOGUE
.macro LIN_X_AGAIN xl
    vld.DT    \xl, [s10]
.endm
.endif

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

; Linear kernels (docs/scheduling.md): `math y, x` (one input) or `math y,
; a, b` (two inputs) is one vector's dataflow on virtual registers; the
; assembler schedules it for the machine the kernel runs on. The tile loop
; keeps three input tiles in flight (ELT_MAIN3).
.ifdef MATMUL_EPILOGUE
; In a fused cube kernel (lib/matmul.s) the activation is the epilogue of
; each accumulator tile: padding is zeroed there, whatever f(0) is.
.macro ELTWISE_1IN_LINEAR math
    MATMUL_TILES \math, 1
.endm
.macro ELTWISE_1IN_PAD_LINEAR math
    MATMUL_TILES \math, 1
.endm
.else
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
.endif

; ---- the tile loop of the linear kernels ------------------------------------
;
; Input and output tiles each rotate through three UB buffers: tile i
; computes while tile i+1 is already in and tile i+2 loads, and its output
; buffer was stored two tiles ago. The DMA engine therefore always has a
; transfer queued, and a load's or a store's latency hides behind a whole
; tile of compute (with two buffers each, both are exposed once per tile).
; Tags: 0..2 the input buffers, 3..5 the output buffers. Tiles are as large
; as the UB allows (UB_BYTES, predefined for the machine), up to TILE_MAX: 6
; buffers (one input) or 9 (two inputs), in 1 KiB steps; a core's first and
; last tiles are shorter (SPLIT_TILE, lib/split.s).
;
; TILE_MAX caps the tile (a multiple of 256 bytes): the host's tiling decision
; (docs/kernels.md, "Tiles"), 16384 unless the run's tile loop is compute-bound
; (the tiles then take the whole UB) or bound by reads its L2 MSHRs pace (the
; MSHRs' reach). A kernel that keeps data of its own at the top of the UB
; defines ELT_UB_RESERVE (bytes) before including this.
.ifndef TILE_MAX
.equ TILE_MAX, 16384
.endif
.ifndef ELT_UB_RESERVE
.equ ELT_UB_RESERVE, 0
.endif
; With DMA_CHUNK (the host's, on one core: the L2 MSHRs' reach) below
; TILE_MAX (the host's reason "paced": a compute-bound loop whose reads the
; MSHRs pace nearly as slowly), a one-input kernel keeps tiles of at least
; 16 KiB (as the UB allows) and sends the transfers beside its compute in
; pieces of ELT_PIECE bytes, the largest power of two up to DMA_CHUNK (2 KiB
; at most): ELT_TILE3C. Where TILE_MAX is the reach itself (reason "reads",
; a memory-bound loop), its tiles are the pieces: they measured faster than
; pieces of larger tiles there (relu fp16 on configs/edge.yaml 112,401
; cycles against 115,136).
.ifdef DMA_CHUNK
.if TILE_MAX > DMA_CHUNK
.equ ELT_CHUNK, 1
.else
.equ ELT_CHUNK, 0                 ; tiles of the reach: they alternate already
.endif
.else
.equ ELT_CHUNK, 0
.endif
.if ELT_CHUNK == 1
.if DMA_CHUNK >= 2048
.equ ELT_PIECE, 2048
.else
.if DMA_CHUNK >= 1024
.equ ELT_PIECE, 1024
.else
.if DMA_CHUNK >= 512
.equ ELT_PIECE, 512
.else
.equ ELT_PIECE, 256
.endif
.endif
.endif
.if TILE_MAX >= 16384
.equ ELT_TMAX1, TILE_MAX
.else
.equ ELT_TMAX1, 16384
.endif
.else
.equ ELT_TMAX1, TILE_MAX
.endif
.equ ELT_FIT1, (UB_BYTES - ELT_UB_RESERVE) / 6 / 1024 * 1024
.equ ELT_FIT2, (UB_BYTES - ELT_UB_RESERVE) / 9 / 1024 * 1024
.if ELT_FIT1 >= ELT_TMAX1
.equ T3, ELT_TMAX1 / 256 * 256
.else
.equ T3, ELT_FIT1
.endif
.if ELT_FIT2 >= TILE_MAX
.equ T3_2, TILE_MAX / 256 * 256
.else
.equ T3_2, ELT_FIT2
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
    SPLIT_TILE s25, s28, s29, s23, s14, s8, s31
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

; The compute loops' room (ELT_COMPUTE_LINEAR's and ELT_TILE3C's; docs/
; scheduling.md) is a tile buffer's vectors: a tile is never larger, and
; past its bytes the iterations a short tile rounds up to (a whole kernel
; pass) read the rest of its input buffer and write the rest of its output
; buffer, which no transfer uses meanwhile (the DMA stores only the tile's
; bytes, and the other buffers' transfers stay in theirs).

; Tile i of a one-input kernel with DMA_CHUNK (ELT_TILE3's roles): tile
; i+2's load and tile i-1's store go out in pieces of ELT_PIECE bytes from
; the compute loop's .pass block, a load piece and a store piece for each
; ELT_PIECE bytes computed, so the DMA engine alternates reads (which the L2
; MSHRs pace) and writes at the MSHRs' reach without stopping the compute;
; what the kernel passes leave (the prologue's and epilogue's share, a short
; tile) goes after the loop. Pieces past a tile's end are 0 bytes, which
; move nothing (docs/isa.md), so the .pass block has no branch. During the
; compute s14, s15, s17, s23 and s26, s27, s28, s30, s31 hold the pieces'
; state (restored after); s12 is the bytes of tile i-1, s13 the .pass
; register. Output tags were primed (0-byte stores), so the waits need no
; count of tiles.
.macro ELT_TILE3C math, PAD, T, I
.equ IC\@, \I - 3 * (\I / 3)         ; tile i's input buffer (and load tag)
.equ IP\@, (\I + 2) - 3 * ((\I + 2) / 3) ; tile i+2's, and tile i-1's output buffer
    sub     s28, s20, s24
    sub     s28, s28, s29           ; bytes after tile i+1
    li      s25, 0
    beqz    s28, nopre\@
    SPLIT_TILE s25, s28, s29, s23, s14, s8, s31
nopre\@:
    dmawait IC\@                  ; tile i is in the UB
    dmawait 3 + IC\@              ; tile i-3's store has left output buffer i mod 3
    add     s26, s21, s24
    add     s26, s26, s29           ; load pieces: GM cursor (tile i+2),
    li      s23, (IP\@) * \T        ; UB cursor,
    mv      s27, s25                ; bytes left
    sub     s30, s22, s12           ; store pieces: GM cursor (tile i-1),
    li      s28, (3 + IP\@) * \T    ; UB cursor,
    mv      s31, s12                ; bytes left
    li      s14, 0                  ; bytes computed since the last piece
    li      s10, (IC\@) * \T
    li      s11, (3 + IC\@) * \T
    li      s8, VLENB
    divu    s9, s24, s8             ; whole vectors
.pipeline s9, s8, \T / VLENB, \T / VLENB ; room: below ELT_TILE3
    ELT_BODY1 \math
.pass s13, VLENB
    add     s14, s14, s13
    andi    s15, s14, -ELT_PIECE    ; the pieces due
    sub     s14, s14, s15
    min     s17, s15, s27
    dmald   s23, s26, s17, IP\@
    add     s23, s23, s17
    add     s26, s26, s17
    sub     s27, s27, s17
    min     s17, s15, s31
    dmast   s28, s30, s17, 3 + IP\@
    add     s28, s28, s17
    add     s30, s30, s17
    sub     s31, s31, s17
.endpipeline
    dmald   s23, s26, s27, IP\@     ; what the passes left (0 bytes: nothing)
    dmast   s28, s30, s31, 3 + IP\@
    srd     s14, vlenb
    li      s17, DT_BYTES
    divu    s15, s14, s17
    li      s23, \T
    remu    s13, s24, s14
    divu    s13, s13, s17           ; elements of the last, partial vector
    ELT_TAIL1 \math
.if \PAD == 1
    sub     s30, s21, s1            ; the tile's offset in the tensor
    ELT_PADFIX (3 + IC\@) * \T
.endif
    sub     s31, s20, s24
    bnez    s31, more\@
    li      s31, (3 + IC\@) * \T    ; the last tile: stored whole
    dmast   s31, s22, s24, 3 + IC\@
more\@:
    mv      s12, s24
    add     s21, s21, s24
    add     s22, s22, s24
    sub     s20, s20, s24
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
    slli    s29, s14, 6             ; so tile 0 is at most 128 vectors
    SPLIT_TILE s24, s20, s29, s23, s14, s8, s31 ; tile 0 bytes
    sub     s28, s20, s24
    SPLIT_TILE s29, s28, s24, s23, s14, s8, s31 ; tile 1 bytes
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
.if \NIN * 2 - ELT_CHUNK == 1      ; one input, pieces
    li      s12, 0                  ; no tile before tile 0
    dmast   s0, s0, s0, 3           ; prime the output tags (0 bytes)
    dmast   s0, s0, s0, 4
    dmast   s0, s0, s0, 5
three\@:
    ELT_TILE3C \math, \PAD, ELT_T\@, 0
    beqz    s20, drainc\@
    ELT_TILE3C \math, \PAD, ELT_T\@, 1
    beqz    s20, drainc\@
    ELT_TILE3C \math, \PAD, ELT_T\@, 2
    bnez    s20, three\@
drainc\@:
    dmawait 3
    dmawait 4
    dmawait 5
    j       finished\@
.else
    li      s26, 0
three\@:
    ELT_TILE3 \math, \NIN, \PAD, ELT_T\@, 0
    beqz    s20, drain\@
    ELT_TILE3 \math, \NIN, \PAD, ELT_T\@, 1
    beqz    s20, drain\@
    ELT_TILE3 \math, \NIN, \PAD, ELT_T\@, 2
    bnez    s20, three\@
.endif
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

; LIN_WIDE for an f that reads x late (`f y, x, xl`): as LIN_WIDE, with xl
; from LIN_X_AGAIN (fp16: the reloaded vector widened again, two more
; conversions per vector).
.ifndef MATMUL_EPILOGUE
.macro LIN_WIDE_X f, y, x
    LIN_X_AGAIN %x2\@
.if DT_BYTES == 2
    vcvtl.f32 %lo\@, \x
    vcvth.f32 %hi\@, \x
    vcvtl.f32 %lo2\@, %x2\@
    vcvth.f32 %hi2\@, %x2\@
    \f        %flo\@, %lo\@, %lo2\@
    \f        %fhi\@, %hi\@, %hi2\@
    vcvtn.f16 \y, %flo\@, %fhi\@
.else
    \f        \y, \x, %x2\@
.endif
.endm
.endif
