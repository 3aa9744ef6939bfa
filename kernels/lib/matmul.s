; The skeleton of the cube kernels (docs/cube.md): C = f(A B + bias) for
; fractal matrices in GM, the epilogue f applied by the vector unit to each
; fp32 accumulator tile in the UB before it leaves the core.
;
;   MATMUL_TILES math, HAS_MATH   s1 = A, s2 = B, then s3 = bias when the
;                                 kernel set MM_BIAS to 1, then C
;
; Before including this, the kernel sets MM_BIAS (0 or 1). `math y, x` is
; one fp32 vector's dataflow on virtual registers, as in lib/eltwise.s; with
; HAS_MATH 0 the epilogue is the identity. The runner assembles every cube
; kernel with DT = f32 (the accumulators' type, so an activation's math runs
; on them as its fp32 kernel does) and OUT_BYTES, the bytes of C's elements.
;
; A fused kernel is this skeleton and an activation kernel: it sets
; MATMUL_EPILOGUE and includes the activation's file after this one, whose
; ELTWISE_1IN_LINEAR then expands to MATMUL_TILES (lib/eltwise.s). The
; activation's setup (its constants) runs first, once.
;
; A, B and C are fractal matrices (16 x 16 blocks, row-major blocks and
; elements); mm.m1, mm.k1, mm.n1 their fractal counts, shape.h and shape.w
; C's rows M and columns N. The bias is N1 x 16 fp32 values (zero past N).
; A C tile is up to 8 x 8 fractals. Tiles are visited in groups of G tile
; rows, column by column within a group, G the A panels (up to 8 x K1
; fractals each) L1 holds after its first 128 KiB (at most 8); core k of n
; takes tiles k, k + n, ... of that order (@split tiles). Its K runs in
; steps of up to 8 fractals. A tile row's A panel is loaded into its slot of
; L1 the first time a core computes a tile of the row in a group, and its
; tiles of that row move their A tiles from there; when no panel fits
; (G = 0, visited as groups of one row) each step loads its A tile as it
; loads its B tile.
;   step s: loads (A and) B of step s + 1 into L1 (the other half), waits
;   for its own, moves them into L0A / L0B (the half of step s - 2, once
;   that step's mmad is done) and starts the mmad, which accumulates in L0C;
;   then the vector unit runs a share of the previous tile's epilogue.
; So the DMA of step s + 1, the moves of step s, the mmad of step s - 1 and
; the epilogue of the previous tile overlap. A tile's accumulators go to
; the UB (mvub) into one of two buffers; while the next tile's K steps run,
; its epilogue runs there fractal row by fractal row, each one `.pipeline`
; loop that computes f(acc + bias) and narrows fp16 outputs in the same
; pass (the bias of the tile's columns is in the UB as one fractal per
; column of fractals, its 16 values repeated in each row, so a vector of
; any length adds it lane by lane). Then C's padding in the tile (rows past
; M, columns past N) is zeroed and the DMA stores the tile.
;
; Tags: 0 / 1 loads of an even / odd step, 2 / 3 its moves, 4 / 5 its mmad,
; 6 the move to the UB, 7 the store of a tile, 8 the A panel, 9 the bias.
; Buffers used: L1 128 KiB (+ the panel), L0A, L0B and L0C 64 KiB, UB 208
; KiB + 152 bytes. Outside its pipelines the skeleton writes v16 and p6
; (zeros and the padding's masks): an epilogue's constants live in other
; registers.

.equ TILE, 8                    ; fractals per tile side, and per K step
.equ FRACTAL_B, 512             ; bytes of an fp16 fractal
.equ L1B, 0                     ; L1: B halves at 0 and 32 KiB, A halves at 64 and 96 KiB,
.equ L1A, 65536                 ; then the A panel
.equ PANEL, 131072
.equ HALF, 32768                ; bytes of a half: 8 x 8 fp16 fractals
.equ UB_C, 0                    ; UB: two fp32 tiles (64 KiB each),
.equ UB_H, 131072               ; two fp16 tiles (32 KiB each),
.equ UB_BIAS, 196608            ; two tiles' bias (8 KiB each),
.equ UB_SCR, 212992             ; the previous tile's place and size, this core's next tile, the panels (152 bytes)
.equ OUT_FB, 256 * OUT_BYTES    ; bytes of an output fractal, and of its rows
.equ OUT_RB, 16 * OUT_BYTES
.if OUT_BYTES == 2
.equ OUT_BUF, UB_H
.equ OUT_HALF, 32768
.else
.equ OUT_BUF, UB_C
.equ OUT_HALF, 65536
.endif
; The epilogue runs as a pass over the tile when there is work for it: a
; bias, math, or fp16 outputs to narrow.
.equ MM_PASS_IF, MM_BIAS + (OUT_BYTES == 2)
.equ SCR_I0, UB_SCR             ; the previous tile: first fractal row and column,
.equ SCR_J0, UB_SCR + 8         ; fractal rows and columns, its buffer's parity,
.equ SCR_MT, UB_SCR + 16        ; the vector count of one of its fractal rows
.equ SCR_NT, UB_SCR + 24
.equ SCR_PAR, UB_SCR + 32
.equ SCR_VPR, UB_SCR + 40
.equ SCR_ON, UB_SCR + 48        ; 1: there is a previous tile
.equ SCR_ST, UB_SCR + 56        ; 1: a tile was stored (tag 7 is in use)
.equ SCR_T, UB_SCR + 64         ; this core's next tile
.equ SCR_G, UB_SCR + 72         ; tile rows per group of the visiting order
.equ SCR_NP, UB_SCR + 80        ; G, A panels in L1 (0: none)
.equ SCR_PROW, UB_SCR + 88      ; per panel slot: its tile row's first fractal row (-1: none), 8 slots

; Registers:
;   s1 A, s2 B, s28 C, s29 bias   s4 M1, s5 K1, s6 N1
;   s7 i0 (tile's first fractal row)   s8 j0 (first fractal column)
;   s9 mt, s30 nt (tile size)          s31 K steps of a tile
;   s12 step, s13 its k0, s14 kt   s15 .. s20, s26, s27 scratch
;   s21 the tile's buffer parity       s24 TILE, s25 the L1 address of the
;   tile row's A panel (0: A is loaded per step)
;   the previous tile's epilogue: s23 its fractal rows left, s10 the next
;   one's accumulators, s22 its output, s3 the tile's bias, s11 scratch

; MM_X x, P: the epilogue's input, the accumulator at [s10 + P vl] plus the
; bias at [s11 + P vl].
.macro MM_X x, p
.if MM_BIAS == 1
    vld.f32   %acc\@, [s10 + (\p) vl]
    vld.f32   %bias\@, [s11 + (\p) vl]
    vadd.f32  \x, %acc\@, %bias\@
.else
    vld.f32   \x, [s10 + (\p) vl]
.endif
.endm

.ifdef MATMUL_EPILOGUE
; Math that reads x again late (lib/eltwise.s) holds it instead: the same
; bits, the accumulator and the bias loaded once.
.macro LIN_WIDE_X f, y, x
    \f        \y, \x, \x
.endm
.endif

; MM_ZERO addr, count, lanes: zeroes `count` output lanes from UB address
; `addr` (masked stores of v16; addr and count are consumed).
.macro MM_ZERO addr, count, lanes
zero\@:
.if OUT_BYTES == 2
    pwhile.f16 p6, \count
    vst.f16   v16, [\addr], p6
.else
    pwhile.f32 p6, \count
    vst.f32   v16, [\addr], p6
.endif
    addvl     \addr, \addr, 1
    sub       \count, \count, \lanes
    blt       s0, \count, zero\@
.endm

; MM_LOAD P, k0: A (mt x kt fractals, unless the panel holds it) and B (kt
; x nt) of the step at k0 into the L1 halves P; tag P.
.macro MM_LOAD p, k0
    sub     s15, s5, \k0
    min     s15, s15, s24            ; kt
    bnez    s25, bonly\@
    muli    s16, s15, FRACTAL_B      ; A row: kt fractals
    muli    s17, s5, FRACTAL_B       ; A's GM stride: K1 fractals
    dmadim  1, s9, s17, s16
    mul     s18, s7, s5
    add     s18, s18, \k0
    muli    s18, s18, FRACTAL_B
    add     s18, s18, s1
    li      s19, L1A + (\p) * HALF
    dmaldl1 s19, s18, s16, (\p)
bonly\@:
    muli    s16, s30, FRACTAL_B      ; B row: nt fractals
    muli    s17, s6, FRACTAL_B       ; B's GM stride: N1 fractals
    dmadim  1, s15, s17, s16
    mul     s18, \k0, s6
    add     s18, s18, s8
    muli    s18, s18, FRACTAL_B
    add     s18, s18, s2
    li      s19, L1B + (\p) * HALF
    dmaldl1 s19, s18, s16, (\p)
.endm

; MM_STEP P: step s12 (k0 s13) of parity P.
.macro MM_STEP p
    addi    s15, s12, 1
    bge     s15, s31, last\@
    addi    s20, s13, TILE
    MM_LOAD 1 - \p, s20
last\@:
    dmawait (\p)
    li      s15, 2
    blt     s12, s15, free\@
    dmawait 4 + (\p)                   ; the mmad of step s - 2 has read L0 half P
free\@:
    sub     s14, s5, s13
    min     s14, s14, s24            ; kt
    li      s16, (\p) * HALF
    beqz    s25, ahalf\@
    ; From the panel: mt rows of kt fractals, K1 fractals apart.
    muli    s17, s13, FRACTAL_B
    add     s17, s17, s25
    muli    s18, s14, FRACTAL_B
    muli    s26, s5, FRACTAL_B
    mv      s27, s16
    mv      s19, s9
arow\@:
    mvla    s27, s17, s18, 2 + (\p)
    add     s17, s17, s26
    add     s27, s27, s18
    loop    s19, arow\@
    j       amoved\@
ahalf\@:
    li      s17, L1A + (\p) * HALF
    mul     s18, s9, s14
    muli    s18, s18, FRACTAL_B
    mvla    s16, s17, s18, 2 + (\p)
amoved\@:
    li      s17, L1B + (\p) * HALF
    mul     s18, s14, s30
    muli    s18, s18, FRACTAL_B
    mvlb    s16, s17, s18, 2 + (\p)
    dmawait 2 + (\p)
    mmdim   s9, s14, s30
    bnez    s12, acc\@
    mmadz   s0, s16, s16, 4 + (\p)
    j       next\@
acc\@:
    mmad    s0, s16, s16, 4 + (\p)
next\@:
    addi    s12, s12, 1
    addi    s13, s13, TILE
.endm

; MM_ROWS math, HAS_MATH, n: the next n fractal rows of the previous tile's
; epilogue (s23 rows are left; n at most that), one `.pipeline` loop each:
; f(acc + bias) from [s10] into [s22], fp16 outputs narrowed in the pass.
.macro MM_ROWS math, HAS_MATH, n
    mv      s27, \n
    sub     s23, s23, s27
    beqz    s27, rdone\@
row\@:
    mv      s11, s3
    sld     s17, [s0 + SCR_VPR]
.if OUT_BYTES == 2
.pipeline s17, s20, TILE * 512 / VLENB
    MM_X      %xlo, 0
    MM_X      %xhi, 1
.if \HAS_MATH == 1
    \math     %ylo, %xlo
    \math     %yhi, %xhi
    vcvtn.f16 %h, %ylo, %yhi
.else
    vcvtn.f16 %h, %xlo, %xhi
.endif
    vst.f16   %h, [s22]
    addvl     s10, s10, 2
    addvl     s11, s11, 2
    addvl     s22, s22, 1
.endpipeline
.else
.pipeline s17, s20, TILE * 1024 / VLENB
    MM_X      %x, 0
.if \HAS_MATH == 1
    \math     %y, %x
    vst.f32   %y, [s10]
.else
    vst.f32   %x, [s10]
.endif
    addvl     s10, s10, 1
    addvl     s11, s11, 1
.endpipeline
.endif
    loop    s27, row\@
rdone\@:
.endm

; MM_SHARE math, HAS_MATH: after step s12 - 1 of s31, the previous tile's
; share of rows: its rows left over the steps left, rounded up.
.macro MM_SHARE math, HAS_MATH
.if MM_PASS_IF + \HAS_MATH > 0
    beqz    s23, none\@
    sub     s15, s31, s12
    addi    s15, s15, 1              ; this step and those after it
    add     s16, s23, s15
    addi    s16, s16, -1
    divu    s16, s16, s15
    MM_ROWS \math, \HAS_MATH, s16
none\@:
.endif
.endm

; MM_FINISH HAS_MATH: the previous tile, its rows all done: C's padding in
; it zeroed, and its store started (tag 7).
.macro MM_FINISH HAS_MATH
    sld     s12, [s0 + SCR_I0]
    sld     s13, [s0 + SCR_J0]
    sld     s14, [s0 + SCR_MT]
    sld     s16, [s0 + SCR_NT]
    sld     s15, [s0 + SCR_PAR]
    li      s26, OUT_HALF
    mul     s26, s26, s15
    addi    s26, s26, OUT_BUF        ; its output
.if MM_BIAS + \HAS_MATH > 0
    srd     s11, vlenb
    li      s15, OUT_BYTES
    divu    s11, s11, s15            ; output lanes
    vbcasti.f32 v16, 0.0
    ; Padding rows (past M) of the matrix's last fractal row: f(bias), zeroed.
    srd     s17, shape.h
    andi    s17, s17, 15             ; M % 16: rows of the last fractal row
    beqz    s17, rowsok\@
    add     s18, s12, s14
    blt     s18, s4, rowsok\@        ; not the matrix's last row of tiles
    addi    s18, s14, -1
    mul     s18, s18, s16
    muli    s18, s18, OUT_FB         ; the tile's last fractal row
    muli    s19, s17, OUT_RB
    add     s18, s18, s19
    add     s18, s18, s26            ; its first padding row
    mv      s27, s16
prow\@:
    mv      s19, s18
    li      s20, 16
    sub     s20, s20, s17
    slli    s20, s20, 4              ; (16 - M % 16) x 16 lanes
    MM_ZERO s19, s20, s11
    addi    s18, s18, OUT_FB
    loop    s27, prow\@
rowsok\@:
.if \HAS_MATH == 1
    ; Padding columns (past N) of the last fractal column: f(0), zeroed.
    srd     s17, shape.w
    andi    s17, s17, 15             ; N % 16
    beqz    s17, colsok\@
    add     s18, s13, s16
    blt     s18, s6, colsok\@        ; not the matrix's last column of tiles
    addi    s18, s16, -1
    muli    s18, s18, OUT_FB
    muli    s19, s17, OUT_BYTES
    add     s18, s18, s19
    add     s18, s18, s26            ; row 0's first padding lane, fractal (0, nt - 1)
    slli    s27, s14, 4              ; mt x 16 rows
    muli    s10, s16, OUT_FB         ; bytes from one fractal row to the next
    li      s15, 16
pcol\@:
    mv      s19, s18
    li      s20, 16
    sub     s20, s20, s17
    MM_ZERO s19, s20, s11
    addi    s18, s18, OUT_RB
    addi    s15, s15, -1
    bnez    s15, pnext\@
    li      s15, 16                  ; the next fractal row's fractal
    add     s18, s18, s10
    addi    s18, s18, -OUT_FB
pnext\@:
    loop    s27, pcol\@
colsok\@:
.endif
.endif
    ; Store mt rows of nt fractals into C (GM stride N1 fractals).
    muli    s17, s16, OUT_FB         ; a row of the tile
    muli    s18, s6, OUT_FB          ; C's GM stride
    dmadim  1, s14, s18, s17
    mul     s19, s12, s6
    add     s19, s19, s13
    muli    s19, s19, OUT_FB
    add     s19, s19, s28
    dmast   s26, s19, s17, 7
    li      s15, 1
    sst     s15, [s0 + SCR_ST]
.endm

.macro MATMUL_TILES math, HAS_MATH
.equ MM_PASS\@, MM_PASS_IF + \HAS_MATH
.if MM_BIAS == 1
    mv      s29, s3
    mv      s28, s4
.else
    mv      s28, s3
.endif
    srd     s4, mm.m1
    srd     s5, mm.k1
    srd     s6, mm.n1
    li      s24, TILE
    li      s21, 0
    li      s23, 0
    sst     s0, [s0 + SCR_ON]
    sst     s0, [s0 + SCR_ST]
    addi    s31, s5, TILE - 1
    srli    s31, s31, 3              ; K steps: ceil(K1 / 8)
    srd     s15, coreid
    sst     s15, [s0 + SCR_T]        ; this core's first tile
    ; G panels of A (8 x K1 fractals each) in L1 after its first 128 KiB,
    ; at most 8; none when one does not fit (each step then loads its A).
    srd     s15, l1.bytes
    li      s16, PANEL
    sub     s15, s15, s16
    muli    s17, s5, TILE * FRACTAL_B
    li      s16, 0
    blt     s15, s17, nog\@
    divu    s16, s15, s17
    min     s16, s16, s24
nog\@:
    sst     s16, [s0 + SCR_NP]       ; G, panels in L1
    li      s15, 1
    max     s16, s16, s15
    sst     s16, [s0 + SCR_G]        ; the tile rows of a group: max(G, 1)
    li      s15, -1
    li      s16, 0
clr\@:
    sst     s15, [s16 + SCR_PROW]    ; no A panel in L1 yet
    addi    s16, s16, 8
    li      s17, 64
    blt     s16, s17, clr\@
tiles\@:
    ; The next tile of this core. Tiles are visited in groups of G tile
    ; rows (the panels L1 holds), and within a group column by column, so
    ; the B tiles of a column are read G times in a row, from the L2 after
    ; the first; t = (ti, tj) in that order, core k of n takes k, k + n, ...
    sld     s15, [s0 + SCR_T]
    addi    s16, s6, TILE - 1
    srli    s16, s16, 3              ; T1, tiles per row
    addi    s17, s4, TILE - 1
    srli    s17, s17, 3              ; tile rows
    sld     s18, [s0 + SCR_G]
    mul     s19, s18, s16            ; tiles of a whole group
    divu    s20, s15, s19            ; its group
    remu    s26, s15, s19            ; its place in the group
    mul     s27, s20, s18            ; the group's first tile row
    bge     s27, s17, end\@
    sub     s19, s17, s27
    min     s19, s19, s18            ; the group's tile rows
    divu    s20, s26, s19            ; tj
    remu    s26, s26, s19
    add     s27, s27, s26            ; ti
    muli    s7, s27, TILE            ; i0
    muli    s8, s20, TILE            ; j0
    bge     s8, s6, end\@            ; past the last tile (of a short last group)
    srd     s19, ncores
    add     s15, s15, s19
    sst     s15, [s0 + SCR_T]
    sub     s9, s4, s7
    min     s9, s9, s24              ; mt
    sub     s30, s6, s8
    min     s30, s30, s24            ; nt
    li      s25, 0
    sld     s19, [s0 + SCR_NP]
    beqz    s19, nopanel\@
    ; Tile row ti's panel is in slot ti mod G.
    remu    s26, s27, s19
    muli    s25, s5, TILE * FRACTAL_B
    mul     s25, s25, s26
    addi    s25, s25, PANEL
    slli    s26, s26, 3
    sld     s19, [s26 + SCR_PROW]
    beq     s19, s7, nopanel\@       ; the panel of this tile row is in L1
    ; The row's A panel: mt x K1 fractals, contiguous in GM. Every move of
    ; an earlier tile from the slot has completed (each step waits for its moves).
    sst     s7, [s26 + SCR_PROW]
    li      s15, 1
    dmadim  1, s15, s0, s0
    mul     s16, s9, s5
    muli    s16, s16, FRACTAL_B
    mul     s18, s7, s5
    muli    s18, s18, FRACTAL_B
    add     s18, s18, s1
    dmaldl1 s25, s18, s16, 8
    dmawait 8
nopanel\@:
.if MM_BIAS == 1
    ; The bias of the tile's columns into its half: per column of fractals,
    ; its 16 values in each of 16 rows (a GM stride of 0 repeats them).
    li      s15, 16
    li      s16, 64
    dmadim  1, s15, s0, s16
    li      s17, 1024
    dmadim  2, s30, s16, s17
    slli    s18, s8, 6
    add     s18, s18, s29
    slli    s19, s21, 13
    addi    s19, s19, UB_BIAS
    dmald   s19, s18, s16, 9
    li      s15, 1
    dmadim  2, s15, s0, s0
.endif
    li      s12, 0
    li      s13, 0
    MM_LOAD 0, s13
ksteps\@:
    MM_STEP 0
    MM_SHARE \math, \HAS_MATH
    bge     s12, s31, kdone\@
    MM_STEP 1
    MM_SHARE \math, \HAS_MATH
    blt     s12, s31, ksteps\@
kdone\@:
    ; The last mmad (parity (steps - 1) % 2) ends after every other: the cube runs in order.
    andi    s15, s31, 1
    beqz    s15, lastodd\@
    dmawait 4                        ; an odd number of steps: the last is even
    j       mmdone\@
lastodd\@:
    dmawait 5
mmdone\@:
    ; Into the UB buffer of this parity, once the store of the tile before
    ; the previous one has read it (the previous tile's is not started yet).
    sld     s15, [s0 + SCR_ST]
    beqz    s15, ubfree\@
    dmawait 7
ubfree\@:
    mul     s15, s9, s30
    slli    s15, s15, 10             ; the fp32 tile's bytes
    slli    s16, s21, 16
    addi    s16, s16, UB_C
    mvub    s16, s0, s15, 6
    sld     s15, [s0 + SCR_ON]
    beqz    s15, noprev\@
.if MM_PASS\@ > 0
    MM_ROWS \math, \HAS_MATH, s23    ; what the steps left of the previous tile
.endif
    MM_FINISH \HAS_MATH
noprev\@:
    ; This tile becomes the previous one.
    sst     s7, [s0 + SCR_I0]
    sst     s8, [s0 + SCR_J0]
    sst     s9, [s0 + SCR_MT]
    sst     s30, [s0 + SCR_NT]
    sst     s21, [s0 + SCR_PAR]
    li      s15, 1
    sst     s15, [s0 + SCR_ON]
.if MM_PASS\@ > 0
    mv      s23, s9                  ; its fractal rows to do
    slli    s10, s21, 16
    addi    s10, s10, UB_C
    li      s22, OUT_HALF
    mul     s22, s22, s21
    addi    s22, s22, OUT_BUF
    slli    s3, s21, 13
    addi    s3, s3, UB_BIAS
    slli    s15, s30, 10             ; one fractal row's fp32 bytes
    srd     s16, vlenb
.if OUT_BYTES == 2
    slli    s16, s16, 1              ; two fp32 vectors per iteration
.endif
    divu    s15, s15, s16
    sst     s15, [s0 + SCR_VPR]
.if MM_BIAS == 1
    dmawait 9                        ; its bias has arrived
.endif
.endif
    dmawait 6                        ; its accumulators are in the UB: L0C is free
    xori    s21, s21, 1
    j       tiles\@
end\@:
    sld     s15, [s0 + SCR_ON]
    beqz    s15, done\@
.if MM_PASS\@ > 0
    MM_ROWS \math, \HAS_MATH, s23
.endif
    MM_FINISH \HAS_MATH
    dmawait 7
done\@:
.endm
