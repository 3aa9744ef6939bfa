; The skeleton of the cube kernels (docs/cube.md): C = f(A B + bias) for
; fractal matrices in GM, the epilogue f applied by the vector unit to each
; fp32 accumulator tile in the UB before it leaves the core.
;
;   MATMUL_TILES math, HAS_MATH   s1 = A, s2 = B, then s3 = bias when the
;                                 kernel set MM_BIAS to 1, then C
;
; Before including this, the kernel sets MM_BIAS (0 or 1), and MM_CONV to 1
; for a convolution (default 0). `math y, x` is
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
; tiles of that row move their A tiles from there; when no whole panel
; fits (G = 0, visited as groups of one row), one panel of A's first KP
; fractal columns serves the steps within its reach if a row has more tiles
; than there are cores, and each step past it (or every step, with no
; panel) loads its A tile as it loads its B tile.
; B's strips: when L1 holds two tile columns' B (a panel's bytes each) and
; two panels or more after them, and a core computes two tiles or more of
; a group's column, a column's B goes through a strip of L1 instead: the
; first tile of a column that finds it there moves its B tiles from it,
; and while the tiles of one column run, the next column's B is loaded
; into the other strip (MM_AHEAD, tag 11), spread over their steps; a
; panel's A is loaded by the steps of its row's first tile. Every other
; group then takes its columns from the last, so consecutive groups meet
; in a column (and its neighbour) whose B the strips still hold; those
; groups read their other columns' B in the other K order, so that the L2
; still holds the first lines they read.
;   step s: loads (A and) B of step s + 1 into L1 (the other half), waits
;   for its own, moves them into L0A / L0B (the half of step s - 2, once
;   that step's mmad is done) and starts the mmad, which accumulates in L0C;
;   then the vector unit runs a share of the previous tile's epilogue.
;   The last step loads step 0 of the core's next tile instead, when it can
;   (MM_PREFETCH): that tile's steps then start at the other parity.
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
; A convolution (MM_CONV 1, @op conv2d; lib/conv_fused.s heads a fused
; one) is the same skeleton per image, with A = im2col(x): the image's map
; is in L1 after 128 KiB (no panels), loaded in bands of rows as the tiles
; reach them (tag 10), and each step moves its A tile with one mvlai. Its
; weights (B) are loaded into L1 after the map once when they fit (s29
; their address, tag 8), and the moves of step s + 1 then start beside the
; mmad of step s (MM_CSTEP); else each step loads its B as above. C's
; tiles are stored into y's NC1HWC0 planes (MM_CONV_STORE). docs/cube.md,
; "The conv2d kernels".
;
; Tags: 0 / 1 loads of an even / odd step, 2 / 3 its moves, 4 / 5 its mmad,
; 6 the move to the UB, 7 the store of a tile, 8 the A panel (or a
; convolution's weights), 9 the bias, 10 a convolution's map, 11 B loaded
; ahead into a strip.
; Buffers used: L1 128 KiB (+ the panels, or the map and the weights; or
; two strips and the panels), L0A, L0B and L0C 64 KiB, UB 208 KiB + 512
; bytes. Outside its pipelines the
; skeleton writes v16 and p6 (zeros and the padding's masks): an
; epilogue's constants live in other registers.

.ifndef MM_CONV
.equ MM_CONV, 0                 ; 1: a convolution (@op conv2d), A = im2col(x)
.endif
.equ TILE, 8                    ; fractals per tile side, and per K step
.equ FRACTAL_B, 512             ; bytes of an fp16 fractal
.equ L1B, 0                     ; L1: B halves at 0 and 32 KiB, A halves at 64 and 96 KiB,
.equ L1A, 65536                 ; then the A panel
.equ PANEL, 131072
.equ HALF, 32768                ; bytes of a half: 8 x 8 fp16 fractals
.equ UB_C, 0                    ; UB: two fp32 tiles (64 KiB each),
.equ UB_H, 131072               ; two fp16 tiles (32 KiB each),
.equ UB_BIAS, 196608            ; two tiles' bias (8 KiB each),
.equ UB_SCR, 212992             ; the previous tile's place and size, this core's next tile,
                                ; the panels, the bias's address, a prefetched step, a
                                ; convolution's images and map rows, B's strips (512 bytes)
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
.equ SCR_MR, UB_SCR + 152       ; M % 16 and N % 16: the rows and columns of C's last fractals
.equ SCR_NR, UB_SCR + 160
; A convolution's (@op conv2d): the image of this tile (whose map is in
; L1; -1: none yet) and of the previous tile, the tiles of an image, an
; image's bytes of x and of y, and the bytes of a C1 plane of y
.equ SCR_IMG, UB_SCR + 168
.equ SCR_STEP, UB_SCR + 168     ; @op matmul (no image there): MM_PREFETCH keeps the step here
.equ SCR_PIMG, UB_SCR + 176
.equ SCR_TPI, UB_SCR + 184
.equ SCR_IB, UB_SCR + 192
.equ SCR_OB, UB_SCR + 200
.equ SCR_PL, UB_SCR + 208
.equ SCR_ROWS, UB_SCR + 216     ; rows of the image's map loaded (or loading) into L1
.equ SCR_C1X, UB_SCR + 224      ; x's C1 planes, and the bytes of one
.equ SCR_PLX, UB_SCR + 232
.equ SCR_BIAS, UB_SCR + 240     ; the bias's GM address
.equ SCR_PF, UB_SCR + 248       ; 1 + P: step 0 of this core's next tile is loaded into the L1 halves P (0: not)
; A matmul's B strips (MM_CONV 0): the L1 address of the first A panel;
; the tile column (its first fractal column) each strip holds (-1: none);
; the load word (below) of the step 0 loaded for the next tile, and s21
; while that loads; the column loaded ahead into the other strip (-1:
; none), its K steps still to load, the steps of this core left to load
; them in, and 1 when they go from the last down (MM_AHEAD).
.equ SCR_PBASE, UB_SCR + 256
.equ SCR_BCOL, UB_SCR + 264     ; two: strips 0 and 1
.equ SCR_PLD, UB_SCR + 280
.equ SCR_LDSAVE, UB_SCR + 288
.equ SCR_NXCOL, UB_SCR + 296
.equ SCR_NXLEFT, UB_SCR + 304
.equ SCR_NXSTEPS, UB_SCR + 312
.equ SCR_NXDESC, UB_SCR + 320
; A load word (s21 for the tile's steps): MM_LD_A, the step's A goes into
; its row's panel slot (the panel is not there yet); MM_LD_NOB, no B (a
; strip holds it); MM_LD_STRIP, B goes through the strips (the same for
; every tile). s21 also holds MM_PAR: the parity of the tile's UB buffers.
.equ MM_PAR, 1
.equ MM_LD_A, 2
.equ MM_LD_NOB, 4
.equ MM_LD_STRIP, 8

; Registers:
;   s1 A, s2 B, s28 C             s4 M1, s5 K1, s6 N1
;   s29 KP, the A panels' reach: their fractal columns (K1; fewer when not
;   one whole panel fits; 0: no panel); a convolution: s1 x, s29 the L1
;   address of its weights (0: not there)
;   s7 i0 (tile's first fractal row)   s8 j0 (first fractal column)
;   s9 mt, s30 nt (tile size)          s31 K steps of a tile
;   s12 step, s13 its k0, s14 kt   s15 .. s20, s26, s27 scratch
;   s21 the tile's load word (MM_LD_*) and buffer parity (MM_PAR)
;   s24 TILE, s25 the L1 address of the
;   tile row's A panel (0: A is loaded per step; a convolution: its map)
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

; MM_KFIRST d, i0: d = the first k0 of the tile whose first fractal row is
; i0. A tile of an odd tile row takes its K steps from the last down, an
; even one from the first up, so that the next tile of a column first reads
; the B tiles the last one read last, those the L2 still holds (its least
; recently used lines go first; docs/cube.md). A convolution keeps one order.
.macro MM_KFIRST d, i0
.if MM_CONV == 1
    li      \d, 0
.else
    andi    \d, \i0, TILE
    beqz    \d, done\@              ; an even tile row: from k0 = 0 up
    addi    \d, s31, -1
    muli    \d, \d, TILE             ; an odd one: from the last step down
done\@:
.endif
.endm

; MM_KNEXT d, k, t: d = the k0 after k in the order of this tile (s7 its
; first fractal row); t a temporary (not k).
.macro MM_KNEXT d, k, t
.if MM_CONV == 1
    addi    \d, \k, TILE
.else
    andi    \t, s7, TILE
    addi    \d, \k, TILE
    beqz    \t, done\@
    addi    \d, \d, -2 * TILE
done\@:
.endif
.endm

; MM_SIDX d, j0: d = the strip of the tile column at fractal column j0,
; (j0 / TILE) mod 2, so that neighbouring columns are in different strips;
; MM_STRIP d, j0: its L1 address (K1 x TILE fractals each).
.macro MM_SIDX d, j0
    srli    \d, \j0, 3
    andi    \d, \d, 1
.endm
.macro MM_STRIP d, j0
    MM_SIDX \d, \j0
    mul     \d, \d, s5
    slli    \d, \d, 12             ; x K1 x TILE x 512 bytes
.endm

; MM_SLOT d, slot, t: d = the L1 address of A's panel slot `slot` (KP x
; TILE fractals each), after the first 128 KiB or after B's two strips
; (SCR_PBASE). t a temporary.
.macro MM_SLOT d, slot, t
    muli    \d, s29, TILE * FRACTAL_B
    mul     \d, \d, \slot
    sld     \t, [s0 + SCR_PBASE]
    add     \d, \d, \t
.endm

; MM_A_GM d, i0, k0: d = the GM address of A's fractal (i0, k0).
.macro MM_A_GM d, i0, k0
    mul     \d, \i0, s5
    add     \d, \d, \k0
    muli    \d, \d, FRACTAL_B
    add     \d, \d, s1
.endm

; MM_B_GM k0, j0, nt: the DMA descriptor of B's step at k0 of the tile
; column at j0 (s15 = kt rows of nt fractals, N1 fractals apart in GM, one
; after another in L1); s16 a row's bytes, s18 the GM address of its first
; fractal. Uses s17; k0, j0 and nt not s16 - s18.
.macro MM_B_GM k0, j0, nt
    muli    s16, \nt, FRACTAL_B      ; B row: nt fractals
    muli    s17, s6, FRACTAL_B       ; B's GM stride: N1 fractals
    dmadim  1, s15, s17, s16
    mul     s18, \k0, s6
    add     s18, s18, \j0
    muli    s18, s18, FRACTAL_B
    add     s18, s18, s2
.endm

; MM_LOAD P, k0, i0, j0, mt, nt: A (mt x kt fractals, unless the panel
; holds it) and B (kt x nt) of the step at k0 of the tile at (i0, j0) into
; the L1 halves P; tag P. Uses s15 - s19.
.macro MM_LOAD p, k0, i0, j0, mt, nt
    sub     s15, s5, \k0
    min     s15, s15, s24            ; kt
.if MM_CONV == 1
    j       bonly\@                  ; A is the map's im2col
.else
    blt     \k0, s29, bonly\@         ; within the panel's reach
.endif
    muli    s16, s15, FRACTAL_B      ; A row: kt fractals
    muli    s17, s5, FRACTAL_B       ; A's GM stride: K1 fractals
    dmadim  1, \mt, s17, s16
    MM_A_GM s18, \i0, \k0
    li      s19, L1A + (\p) * HALF
    dmaldl1 s19, s18, s16, (\p)
bonly\@:
    MM_B_GM \k0, \j0, \nt
    li      s19, L1B + (\p) * HALF
    dmaldl1 s19, s18, s16, (\p)
.endm

; MM_LOAD_S P, k0, i0, j0, mt, nt, ld: with B's strips, the step at k0
; of the tile at (i0, j0); tag P; ld its load word (a register): its A
; (mt x kt fractals) into its place in the row's panel slot with MM_LD_A
; (else the panel holds it), its B (kt x nt) into its place in its strip
; unless MM_LD_NOB. Uses s15 - s19.
.macro MM_LOAD_S p, k0, i0, j0, mt, nt, ld
    sub     s15, s5, \k0
    min     s15, s15, s24            ; kt
    andi    s16, \ld, MM_LD_A
    beqz    s16, bonly\@
    srli    s16, \i0, 3
    sld     s17, [s0 + SCR_NP]
    remu    s16, s16, s17            ; the slot: the tile row mod G
    MM_SLOT s19, s16, s17
    muli    s16, \k0, FRACTAL_B
    add     s19, s19, s16            ; the step's columns of the slot
    muli    s16, s15, FRACTAL_B      ; A row: kt fractals
    muli    s17, s5, FRACTAL_B       ; rows K1 fractals apart in GM and L1
    dmadim  1, \mt, s17, s17
    MM_A_GM s18, \i0, \k0
    dmaldl1 s19, s18, s16, (\p)
bonly\@:
    andi    s16, \ld, MM_LD_NOB
    bnez    s16, done\@
    MM_B_GM \k0, \j0, \nt
    MM_STRIP s19, \j0
    mul     s17, \k0, \nt
    muli    s17, s17, FRACTAL_B
    add     s19, s19, s17            ; the step's kt rows at fractal row k0
    dmaldl1 s19, s18, s16, (\p)
done\@:
.endm

; MM_MOVE_ROWS op, n, stride, Q: `n` rows of s18 bytes from L1 at s17,
; `stride` fractals apart, into consecutive L0 bytes from s16 (op mvla or
; mvlb, tag 2 + Q): a tile out of a panel. Uses s17, s19, s26, s27.
.macro MM_MOVE_ROWS op, n, stride, q
    muli    s26, \stride, FRACTAL_B
    mv      s27, s16
    mv      s19, \n
row\@:
    \op     s27, s17, s18, 2 + (\q)
    add     s17, s17, s26
    add     s27, s27, s18
    loop    s19, row\@
.endm

; MM_IM2COL Q, k0: a convolution's A tile of the step at k0 (kt s14) into
; L0A at s16 (tag 2 + Q): im2col of the map in L1 (s25), output pixels 16
; i0 .., taps k0 ..; mmdim first, as mvlai moves its m x k fractals.
.macro MM_IM2COL q, k0
    mmdim   s9, s14, s30
    slli    s17, s7, 4
    slli    s18, \k0, 32
    or      s17, s17, s18
    mvlai   s16, s25, s17, 2 + (\q)
.endm

; MM_MMAD P: starts step s12's mmad on the L0 halves P (tag 4 + P; s16 =
; P x HALF, their address). A tile's first (mmadz) overwrites L0C, so the
; previous tile's move out of it (tag 6) must be done, which the moves
; before overlapped.
.macro MM_MMAD p
    bnez    s12, acc\@
    sld     s15, [s0 + SCR_ON]
    beqz    s15, l0cfree\@
    dmawait 6
l0cfree\@:
    mmadz   s0, s16, s16, 4 + (\p)
    j       started\@
acc\@:
    mmad    s0, s16, s16, 4 + (\p)
started\@:
.endm

; MM_STEP_READY P: step s12 (k0 s13) waits for its loads (tag P) and for
; the mmad of step s - 2 to have read the L0 halves P; then s14 = kt and
; s16 = the halves' address.
.macro MM_STEP_READY p
    dmawait (\p)
    li      s15, 2
    blt     s12, s15, free\@
    dmawait 4 + (\p)                   ; the mmad of step s - 2 has read L0 half P
free\@:
    sub     s14, s5, s13
    min     s14, s14, s24            ; kt
    li      s16, (\p) * HALF
.endm

; MM_A_FROM_PANEL P: the step's A tile from the panel at s25 into L0A at
; s16: mt rows of kt fractals, KP fractals apart.
.macro MM_A_FROM_PANEL p
    muli    s17, s13, FRACTAL_B
    add     s17, s17, s25
    muli    s18, s14, FRACTAL_B
    MM_MOVE_ROWS mvla, s9, s29, \p
.endm

; MM_STEP_GO P: the step's B tile (kt x nt fractals) from L1 at s17 into
; L0B at s16, then its mmad once both moves are done; on to the next step.
.macro MM_STEP_GO p
    mul     s18, s14, s30
    muli    s18, s18, FRACTAL_B
    mvlb    s16, s17, s18, 2 + (\p)
    dmawait 2 + (\p)
    mmdim   s9, s14, s30
    MM_MMAD \p
    addi    s12, s12, 1
    MM_KNEXT s13, s13, s15
.endm

; MM_STEP P: step s12 (k0 s13) of parity P.
.macro MM_STEP p
.if MM_CONV == 1
    beqz    s29, bystep\@
    MM_CSTEP \p
    j       stepped\@
bystep\@:
.endif
    addi    s15, s12, 1
    bge     s15, s31, last\@
    MM_KNEXT s20, s13, s15
    MM_LOAD 1 - \p, s20, s7, s8, s9, s30
.if MM_CONV == 0
    j       loaded\@
last\@:
    MM_PREFETCH 1 - \p
loaded\@:
.else
last\@:
.endif
    MM_STEP_READY \p
.if MM_CONV == 1
    MM_IM2COL \p, s13
.else
    bge     s13, s29, ahalf\@         ; past the panel's reach (or none): loaded with B
    MM_A_FROM_PANEL \p
    j       amoved\@
ahalf\@:
    li      s17, L1A + (\p) * HALF
    mul     s18, s9, s14
    muli    s18, s18, FRACTAL_B
    mvla    s16, s17, s18, 2 + (\p)
.endif
amoved\@:
    li      s17, L1B + (\p) * HALF
    MM_STEP_GO \p
stepped\@:
.endm

; MM_STEP_S P: MM_STEP with B's strips (a matmul's; its panels are
; whole): its loads by MM_LOAD_S, a share of the column loaded ahead
; (MM_NXLOAD), its A moved from the panel and its B from the strip.
.macro MM_STEP_S p
    addi    s15, s12, 1
    bge     s15, s31, last\@
    andi    s15, s21, MM_LD_A + MM_LD_NOB
    addi    s15, s15, -MM_LD_NOB
    beqz    s15, loaded\@            ; a strip holds the tile's B, its panel its A
    MM_KNEXT s20, s13, s15
    MM_LOAD_S 1 - \p, s20, s7, s8, s9, s30, s21
    j       loaded\@
last\@:
    MM_PREFETCH 1 - \p
loaded\@:
    MM_NXLOAD
    MM_STEP_READY \p
    MM_A_FROM_PANEL \p
    MM_STRIP s17, s8
    mul     s18, s13, s30
    muli    s18, s18, FRACTAL_B
    add     s17, s17, s18            ; the step's rows of the strip
    MM_STEP_GO \p
.endm

; MM_DECODE t, past: tile t of the visiting order (groups of G tile rows,
; column by column within a group; with B's strips, every other group
; takes its columns from the last): s27 its tile row, s20 its tile column,
; s26 its first fractal column, s18 1 in every other group with the strips
; (else 0); to `past` when there is no tile t. Uses s16 - s19.
.macro MM_DECODE t, past
    addi    s16, s6, TILE - 1
    srli    s16, s16, 3              ; T1, tiles per row
    addi    s17, s4, TILE - 1
    srli    s17, s17, 3              ; tile rows
    sld     s18, [s0 + SCR_G]
    mul     s19, s18, s16            ; tiles of a whole group
    divu    s20, \t, s19             ; its group
    remu    s26, \t, s19             ; its place in the group
    mul     s27, s20, s18            ; the group's first tile row
    bge     s27, s17, \past
    sub     s19, s17, s27
    min     s19, s19, s18            ; the group's tile rows
.if MM_CONV == 0
    srli    s18, s21, 3
    and     s18, s18, s20
    andi    s18, s18, 1              ; 1: an odd group, with the strips
.endif
    divu    s20, s26, s19            ; tj
    remu    s26, s26, s19
    add     s27, s27, s26            ; ti
    bge     s20, s16, \past          ; past the last tile (of a short last group)
.if MM_CONV == 0
    slli    s19, s20, 1
    sub     s19, s16, s19
    addi    s19, s19, -1
    sub     s17, s0, s18
    and     s19, s19, s17
    add     s20, s20, s19            ; an odd group's columns from the last: T1 - 1 - tj
.endif
    muli    s26, s20, TILE           ; j0
.endm

; MM_PREFETCH P: at a tile's last step, step 0 of this core's next tile
; into the L1 halves P (free: step s - 1 has moved its data out), so that
; the DMA need not wait for the tile's end to start it, when that tile's A
; is loaded per step or its panel is in L1 (a new panel is loaded at the
; tile's start, before its step 0). With B's strips (MM_LOAD_S, load word
; SCR_PLD): its A into its panel's slot when the panel is not in L1 and
; the slot is not this tile's (else its A waits for that tile); its B into
; its place in its strip, unless a strip holds that column or it is being
; loaded ahead (then only its A, if any), or that place may be this
; step's (same K step: not free yet). SCR_PF = 1 + P then: that tile
; starts at parity P. Uses s14 - s20, s26, s27.
.macro MM_PREFETCH p
    sld     s15, [s0 + SCR_T]
    MM_DECODE s15, none\@
    slli    s27, s27, 3              ; i0
    andi    s15, s21, MM_LD_STRIP
    sst     s15, [s0 + SCR_PLD]
    beqz    s29, load\@              ; no panel: A is loaded per step
    sld     s19, [s0 + SCR_NP]
    srli    s20, s27, 3
    remu    s20, s20, s19            ; its panel's slot: its tile row mod G
    slli    s15, s20, 3
    sld     s15, [s15 + SCR_PROW]
    beq     s15, s27, load\@         ; its panel is in L1
    andi    s15, s21, MM_LD_STRIP
    beqz    s15, none\@              ; without the strips, loaded at that tile's start
    srli    s15, s7, 3
    remu    s15, s15, s19
    beq     s15, s20, none\@         ; its slot is this tile's
    li      s15, MM_LD_STRIP + MM_LD_A
    sst     s15, [s0 + SCR_PLD]      ; its A into its slot
load\@:
    sub     s14, s4, s27
    min     s14, s14, s24            ; mt
    sub     s20, s6, s26
    min     s20, s20, s24            ; nt
    sst     s12, [s0 + SCR_STEP]
    MM_KFIRST s12, s27               ; that tile's first k0
    andi    s15, s21, MM_LD_STRIP
    bnez    s15, strip\@
    MM_LOAD \p, s12, s27, s26, s14, s20
    j       loaded\@
strip\@:
    sld     s15, [s0 + SCR_NXCOL]
    beq     s15, s26, nob\@          ; loaded ahead
    MM_SIDX s15, s26
    slli    s15, s15, 3
    sld     s15, [s15 + SCR_BCOL]
    bne     s15, s26, bload\@
nob\@:
    sld     s15, [s0 + SCR_PLD]
    andi    s15, s15, MM_LD_A
    beqz    s15, skip\@              ; a strip holds its B and L1 its A
    li      s15, MM_LD_STRIP + MM_LD_A + MM_LD_NOB
    sst     s15, [s0 + SCR_PLD]
    j       go\@
bload\@:
    beq     s12, s13, skip\@         ; its first step's place may be this step's
go\@:
    sst     s21, [s0 + SCR_LDSAVE]
    sld     s21, [s0 + SCR_PLD]
    MM_LOAD_S \p, s12, s27, s26, s14, s20, s21
    sld     s21, [s0 + SCR_LDSAVE]
loaded\@:
    sld     s12, [s0 + SCR_STEP]
    li      s15, 1 + (\p)
    sst     s15, [s0 + SCR_PF]
    j       none\@
skip\@:
    sld     s12, [s0 + SCR_STEP]
none\@:
.endm

; MM_CMOVES Q, k0: a convolution with its weights in L1 (s29): the moves of
; the step at k0 into the L0 halves Q (tag 2 + Q): im2col of the map into
; L0A (mmdim first: mvlai moves its m x k fractals), B's kt rows of nt
; fractals into L0B (one move when the tile is as wide as B).
.macro MM_CMOVES q, k0
    sub     s14, s5, \k0
    min     s14, s14, s24            ; kt
    li      s16, (\q) * HALF
    MM_IM2COL \q, \k0
    mul     s17, \k0, s6
    add     s17, s17, s8
    muli    s17, s17, FRACTAL_B
    add     s17, s17, s29
    muli    s18, s30, FRACTAL_B
    bne     s30, s6, narrow\@
    mul     s18, s18, s14
    mvlb    s16, s17, s18, 2 + (\q)
    j       moved\@
narrow\@:
    MM_MOVE_ROWS mvlb, s14, s6, \q
moved\@:
.endm

; MM_CSTEP P: step s12 (k0 s13) of parity P of a convolution with its
; weights in L1, its moves issued by the step before (or the tile's start):
; its mmad starts once they are done; then the moves of step s + 1 into
; the other halves, once the mmad of step s - 1 has read them, so that they
; run beside this mmad and the epilogue's share that follows.
.macro MM_CSTEP p
    dmawait 2 + (\p)
    sub     s14, s5, s13
    min     s14, s14, s24            ; kt
    mmdim   s9, s14, s30
    li      s16, (\p) * HALF
    MM_MMAD \p
    addi    s15, s12, 1
    bge     s15, s31, nomove\@
    beqz    s12, free\@
    dmawait 5 - (\p)                  ; the mmad of step s - 1 has read the other halves
free\@:
    addi    s20, s13, TILE
    MM_CMOVES 1 - \p, s20
nomove\@:
    addi    s12, s12, 1
    addi    s13, s13, TILE
.endm

; MM_ROWS math, HAS_MATH, n: the next n fractal rows of the previous tile's
; epilogue (s23 rows are left; n at most that): f(acc + bias) from [s10]
; into [s22], fp16 outputs narrowed in the pass. One `.pipeline` loop per
; row with a bias (its pointer starts again each row), else one loop for
; the n rows, which are consecutive in the UB.
.macro MM_ROWS math, HAS_MATH, n
.if MM_BIAS == 0
    sld     s17, [s0 + SCR_VPR]
.endif
    mv      s27, \n
    sub     s23, s23, s27
    beqz    s27, rdone\@
.if MM_BIAS == 0
    mul     s17, s17, s27
    li      s27, 1
.endif
row\@:
.if MM_BIAS == 1
    mv      s11, s3
    sld     s17, [s0 + SCR_VPR]
.endif
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
.if MM_BIAS == 1
    addvl     s11, s11, 2
.endif
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
.if MM_BIAS == 1
    addvl     s11, s11, 1
.endif
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
    ; Padding rows (past M) of the matrix's last fractal row: f(bias), zeroed
    ; (a convolution's are not stored: y has no such pixels).
.if MM_CONV == 0
    sld     s17, [s0 + SCR_MR]       ; M % 16: rows of the last fractal row
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
.endif
.if \HAS_MATH == 1
    ; Padding columns (past N) of the last fractal column: f(0), zeroed.
    sld     s17, [s0 + SCR_NR]       ; N % 16
    beqz    s17, colsok\@
    add     s18, s13, s16
    blt     s18, s6, colsok\@        ; not the matrix's last column of tiles
    addi    s18, s16, -1
    muli    s18, s18, OUT_FB
    muli    s19, s17, OUT_BYTES
    add     s18, s18, s19
    add     s18, s18, s26            ; row 0's first padding lane, fractal (0, nt - 1)
    muli    s10, s16, OUT_FB         ; bytes from one fractal row to the next
    li      s20, 16
    sub     s20, s20, s17            ; padding lanes of a row
    blt     s11, s20, pslow\@        ; more than a vector holds: the general loop
    ; One mask for every row: a masked store of v16 per row.
.if OUT_BYTES == 2
    pwhile.f16 p6, s20
.else
    pwhile.f32 p6, s20
.endif
    mv      s27, s14
pfrow\@:
    mv      s19, s18
    li      s15, 16
prow16\@:
.if OUT_BYTES == 2
    vst.f16 v16, [s19], p6
.else
    vst.f32 v16, [s19], p6
.endif
    addi    s19, s19, OUT_RB
    loop    s15, prow16\@
    add     s18, s18, s10
    loop    s27, pfrow\@
    j       colsok\@
pslow\@:
    slli    s27, s14, 4              ; mt x 16 rows
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
.if MM_CONV == 1
    MM_CONV_STORE
.else
    ; Store mt rows of nt fractals into C (GM stride N1 fractals).
    muli    s17, s16, OUT_FB         ; a row of the tile
    muli    s18, s6, OUT_FB          ; C's GM stride
    dmadim  1, s14, s18, s17
    mul     s19, s12, s6
    add     s19, s19, s13
    muli    s19, s19, OUT_FB
    add     s19, s19, s28
    dmast   s26, s19, s17, 7
.endif
    li      s15, 1
    sst     s15, [s0 + SCR_ST]
.endm

; MM_MAP_NEED lo, d, i0, mt: a convolution's tile of fractal rows i0 ..
; i0 + mt - 1 reads the map's rows lo .. d - 1: lo = max(0, first output
; row x stride - pad), d = min(H, last output row x stride + kh - pad), at
; least 1. Uses s18 .. s20.
.macro MM_MAP_NEED lo, d, i0, mt
    slli    s18, \i0, 4              ; the tile's first pixel
    srd     s20, shape.w
    divu    s18, s18, s20            ; its row of y
    srd     s19, conv.geom
    srli    s20, s19, 16
    andi    s20, s20, 255
    mul     s18, s18, s20            ; x stride
    srli    s20, s19, 24
    sub     \lo, s18, s20            ; - pad
    max     \lo, \lo, s0
    add     s18, \i0, \mt
    slli    s18, s18, 4
    srd     s19, shape.h
    srd     s20, shape.w
    mul     s19, s19, s20            ; M: y's pixels
    min     s18, s18, s19
    addi    s18, s18, -1             ; the tile's last pixel
    divu    s18, s18, s20            ; its row of y
    srd     s19, conv.geom
    srli    s20, s19, 16
    andi    s20, s20, 255
    mul     s18, s18, s20            ; x stride
    andi    s20, s19, 255
    add     s18, s18, s20            ; + kh
    srli    s20, s19, 24
    sub     \d, s18, s20             ; - pad
    srd     s20, conv.h
    min     \d, \d, s20
    li      s20, 1
    max     \d, \d, s20
.endm

; MM_MAP_LOAD lo, need: starts loading the rows lo .. need - 1 of the
; tile's image's map that are not loaded yet (a core's tiles go down the
; map: it loaded rows up to SCR_ROWS, and needs none above lo again),
; every C1 plane's (tag 10). Uses s15 .. s18.
.macro MM_MAP_LOAD lo, need
    sld     s15, [s0 + SCR_ROWS]
    max     s15, s15, \lo
    bge     s15, \need, have\@
    sst     \need, [s0 + SCR_ROWS]
    srd     s16, conv.w
    slli    s16, s16, 5              ; bytes of a row of the map
    sub     s17, \need, s15
    mul     s17, s17, s16            ; the band's bytes in each plane
    mul     s15, s15, s16            ; its offset in a plane
    sld     s16, [s0 + SCR_PLX]
    sld     s18, [s0 + SCR_C1X]
    dmadim  1, s18, s16, s16         ; C1 planes, a plane apart in GM and L1
    sld     s16, [s0 + SCR_IMG]
    sld     s18, [s0 + SCR_IB]
    mul     s16, s16, s18
    add     s16, s16, s1
    add     s16, s16, s15
    addi    s15, s15, PANEL
    dmaldl1 s15, s16, s17, 10
have\@:
.endm

; MM_CONV_STORE: @op conv2d, the previous tile (i0 s12, j0 s13, mt s14, nt
; s16, its output at UB s26) into y, NC1HWC0: fractal (a, b) is 16 pixels
; of 16 channels, so its rows go to pixels 16 (i0 + a) .. of the C1 planes
; holding channels 16 (j0 + b) ..: one plane for fp16 (C0 = 16), two for
; fp32 (C0 = 8: the first 32 bytes of each row, then the next). A last
; fractal row of M % 16 pixels stores only those (y has no more).
.macro MM_CONV_STORE
    sld     s15, [s0 + SCR_PIMG]
    sld     s17, [s0 + SCR_OB]
    mul     s17, s17, s15
    add     s17, s17, s28            ; the tile's image in y
    sld     s18, [s0 + SCR_PL]       ; bytes of a plane of y
    slli    s19, s12, 9              ; 16 i0 pixels of 32 bytes
    add     s17, s17, s19
    mv      s10, s14                 ; fractal rows of 16 pixels,
    li      s11, 0                   ; and the pixels of a last short one
    sld     s19, [s0 + SCR_MR]
    beqz    s19, full\@
    add     s20, s12, s14
    blt     s20, s4, full\@          ; not the image's last row of tiles
    addi    s10, s14, -1
    mv      s11, s19
full\@:
.if OUT_BYTES == 2
    mul     s19, s13, s18
    add     s17, s17, s19            ; plane j0
    li      s19, OUT_FB
    dmadim  1, s16, s18, s19         ; nt fractals: a plane apart in y, a fractal apart in the UB
    muli    s20, s16, OUT_FB
    beqz    s10, short\@
    dmadim  2, s10, s19, s20         ; fractal rows: 16 pixels apart in y, a row of the tile in the UB
    dmast   s26, s17, s19, 7
short\@:
    beqz    s11, stored\@
    li      s27, 1
    dmadim  2, s27, s0, s0
    mul     s27, s10, s20
    add     s27, s27, s26            ; the short row in the UB
    slli    s10, s10, 9
    add     s10, s10, s17            ; and in y
    slli    s11, s11, 5              ; its pixels' bytes in each plane
    dmast   s27, s10, s11, 7
stored\@:
.else
    slli    s19, s13, 1
    mul     s19, s19, s18
    add     s17, s17, s19            ; plane 2 j0
    ; s20: fractals whose second half is a plane of y (not when the tile
    ; holds y's last fractal column and N % 16 is 1 .. 8)
    mv      s20, s16
    sld     s19, [s0 + SCR_NR]
    beqz    s19, halves\@
    add     s27, s13, s16
    blt     s27, s6, halves\@
    li      s27, 8
    blt     s27, s19, halves\@
    addi    s20, s16, -1
halves\@:
    slli    s13, s18, 1              ; two planes: the next fractal's
    li      s12, 1024                ; an fp32 fractal
    add     s15, s10, s11
    beqz    s11, rows\@
    addi    s15, s10, 1              ; fractal rows to store
rows\@:
    li      s19, 16
    bnez    s10, px\@
    mv      s19, s11                 ; the short row
px\@:
    li      s27, 32
    li      s14, 64
    dmadim  1, s19, s27, s14         ; its pixels: 32 bytes apart in y, 64 in the UB
    dmadim  2, s16, s13, s12
    dmast   s26, s17, s27, 7         ; first halves: planes 2 (j0 + b)
    beqz    s20, next\@
    dmadim  2, s20, s13, s12
    add     s19, s26, s27
    add     s14, s17, s18
    dmast   s19, s14, s27, 7         ; second halves: planes 2 (j0 + b) + 1
next\@:
    muli    s19, s16, 1024
    add     s26, s26, s19
    addi    s17, s17, 512            ; 16 pixels
    addi    s10, s10, -1
    addi    s15, s15, -1
    bnez    s15, rows\@
.endif
    li      s27, 1
    dmadim  2, s27, s0, s0
.endm

; MM_MAP_PREFETCH: a convolution's map rows of this core's next tile, if
; it is of the same image, start loading (tag 10; that tile waits for them).
.macro MM_MAP_PREFETCH
    sld     s15, [s0 + SCR_T]        ; this core's next tile
    sld     s16, [s0 + SCR_TPI]
    divu    s17, s15, s16
    sld     s18, [s0 + SCR_IMG]
    bne     s17, s18, nopre\@        ; of another image, or none
    remu    s15, s15, s16
    addi    s16, s6, TILE - 1
    srli    s16, s16, 3
    divu    s15, s15, s16
    slli    s15, s15, 3              ; its i0
    sub     s16, s4, s15
    min     s16, s16, s24            ; its mt
    MM_MAP_NEED s27, s26, s15, s16
    MM_MAP_LOAD s27, s26
nopre\@:
.endm

; MM_NXSTEP i: K step i (0 .. s31 - 1, in the order SCR_NXDESC gives) of
; the B of the column loaded ahead (SCR_NXCOL) into its place in that
; column's strip (tag 11). Uses s15 - s20, s27.
.macro MM_NXSTEP i
    mv      s27, \i
    sld     s15, [s0 + SCR_NXDESC]
    beqz    s15, up\@
    sub     s27, s31, s27
    addi    s27, s27, -1
up\@:
    slli    s27, s27, 3              ; k0
    sub     s15, s5, s27
    min     s15, s15, s24            ; kt
    sld     s19, [s0 + SCR_NXCOL]    ; the column's first fractal column
    sub     s20, s6, s19
    min     s20, s20, s24            ; its nt
    MM_B_GM s27, s19, s20
    MM_STRIP s17, s19
    mul     s27, s27, s20
    muli    s27, s27, FRACTAL_B
    add     s17, s17, s27            ; fractal row k0 of the strip
    dmaldl1 s17, s18, s16, 11
.endm


; MM_NXLOAD: a step's share of the column loaded ahead: its K steps left
; over this core's steps left before that column's first tile, rounded up.
; Uses s14 - s20, s26, s27.
.macro MM_NXLOAD
    sld     s15, [s0 + SCR_NXLEFT]
    beqz    s15, none\@
    sld     s16, [s0 + SCR_NXSTEPS]
    add     s17, s15, s16
    addi    s17, s17, -1
    divu    s14, s17, s16            ; the share
    addi    s16, s16, -1
    li      s18, 1
    max     s16, s16, s18
    sst     s16, [s0 + SCR_NXSTEPS]
    sub     s26, s31, s15            ; the first K step of the share
    sub     s15, s15, s14
    sst     s15, [s0 + SCR_NXLEFT]
step\@:
    MM_NXSTEP s26
    addi    s26, s26, 1
    loop    s14, step\@
none\@:
.endm

; MM_AHEAD: at a tile's start (column s8), with B's strips and no column
; being loaded ahead: the first of this core's next tiles (at most G + 1
; ahead) in another column; if that column's strip is not this tile's and
; does not hold it, its B starts loading there (SCR_NXCOL), spread over
; the steps of this tile and of those before that one (MM_NXLOAD), in the
; K order of that tile, which its first tile waits for (tag 11). Uses
; s12 - s20, s26, s27.
.macro MM_AHEAD
    sld     s15, [s0 + SCR_NXCOL]
    li      s16, -1
    bne     s15, s16, none\@         ; one is loading
    sld     s13, [s0 + SCR_T]        ; this core's next tile
    li      s12, 1
    sld     s14, [s0 + SCR_G]
    addi    s14, s14, 1
scan\@:
    MM_DECODE s13, none\@
    bne     s26, s8, found\@
    srd     s15, ncores
    add     s13, s13, s15
    addi    s12, s12, 1
    bge     s14, s12, scan\@
    j       none\@
found\@:
    MM_SIDX s15, s26
    MM_SIDX s16, s8
    beq     s15, s16, none\@         ; in this tile's strip: it loads its own
    slli    s15, s15, 3
    sld     s16, [s15 + SCR_BCOL]
    beq     s16, s26, none\@         ; there already
    li      s16, -1
    sst     s16, [s15 + SCR_BCOL]
    sst     s26, [s0 + SCR_NXCOL]
    sst     s31, [s0 + SCR_NXLEFT]
    mul     s16, s12, s31
    sst     s16, [s0 + SCR_NXSTEPS]  ; the steps of this tile and of those before it
    sst     s18, [s0 + SCR_NXDESC]
none\@:
.endm

.macro MATMUL_TILES math, HAS_MATH
.equ MM_PASS\@, MM_PASS_IF + \HAS_MATH
.if MM_BIAS == 1
    sst     s3, [s0 + SCR_BIAS]
    mv      s28, s4
.else
    mv      s28, s3
.endif
    srd     s4, mm.m1
    srd     s5, mm.k1
    srd     s6, mm.n1
.if MM_CONV == 1
    srd     s15, shape.h
    srd     s16, shape.w
    mul     s15, s15, s16            ; M: y's pixels
    srd     s16, shape.c             ; N: its channels
.else
    srd     s15, shape.h             ; M
    srd     s16, shape.w             ; N
.endif
    andi    s15, s15, 15
    sst     s15, [s0 + SCR_MR]
    andi    s16, s16, 15
    sst     s16, [s0 + SCR_NR]
.if MM_CONV == 1
    ; The map and its geometry (im2dim), an image's bytes of x (K1 / (kh
    ; kw) planes of H W pixels of 32 bytes) and of y, the tiles of an image.
    srd     s15, conv.h
    srd     s16, conv.w
    srd     s17, conv.geom
    im2dim  s15, s16, s17
    mul     s18, s15, s16
    andi    s19, s17, 255
    srli    s20, s17, 8
    andi    s20, s20, 255
    mul     s19, s19, s20
    divu    s19, s5, s19             ; x's C1
    sst     s19, [s0 + SCR_C1X]
    slli    s18, s18, 5
    sst     s18, [s0 + SCR_PLX]
    mul     s18, s18, s19
    sst     s18, [s0 + SCR_IB]
    srd     s15, shape.h
    srd     s16, shape.w
    mul     s15, s15, s16
    slli    s15, s15, 5
    sst     s15, [s0 + SCR_PL]
    srd     s16, shape.c1
    mul     s16, s16, s15
    sst     s16, [s0 + SCR_OB]
    addi    s15, s4, TILE - 1
    srli    s15, s15, 3
    addi    s16, s6, TILE - 1
    srli    s16, s16, 3
    mul     s15, s15, s16
    sst     s15, [s0 + SCR_TPI]
    srd     s16, shape.n
    mul     s16, s16, s15            ; the tiles of every image
    srd     s17, coreid
    li      s15, -1
    sst     s15, [s0 + SCR_IMG]
    ; The weights (K1 x N1 fractals) into L1 after the map, once, when they
    ; fit (s29: their address; 0: each step loads its B, as a matmul's). A
    ; core with no tile (more cores than the images' tiles; its first is
    ; its id) loads none: it only halts, and its load would take L2 and
    ; DRAM time from the others (conv2d 1x16x8x8 on 64 cores: 6,355 cycles
    ; against 2,861 on one).
    bge     s17, s16, wdone\@
    addi    s18, s18, FRACTAL_B - 1
    srli    s18, s18, 9
    slli    s18, s18, 9
    addi    s29, s18, PANEL          ; after the map, a whole fractal on
    mul     s15, s5, s6
    muli    s15, s15, FRACTAL_B      ; the weights' bytes
    add     s16, s29, s15
    srd     s17, l1.bytes
    bge     s17, s16, wfit\@
    li      s29, 0
    j       wdone\@
wfit\@:
    li      s16, 1
    dmadim  1, s16, s0, s0
    dmaldl1 s29, s2, s15, 8          ; waited for after the first tile's rows of the map
wdone\@:
.endif
    li      s24, TILE
    li      s21, 0                   ; the first tile's UB buffers: parity 0
    li      s23, 0
    sst     s0, [s0 + SCR_ON]
    sst     s0, [s0 + SCR_ST]
    sst     s0, [s0 + SCR_PF]
    addi    s31, s5, TILE - 1
    srli    s31, s31, 3              ; K steps: ceil(K1 / 8)
    srd     s15, coreid
    sst     s15, [s0 + SCR_T]        ; this core's first tile
    ; G panels of A (8 x K1 fractals each) in L1 after its first 128 KiB,
    ; at most 8. When not one fits, one panel of the first KP fractal
    ; columns, KP the multiple of 8 that fits (its steps move A from there,
    ; the steps past it load their A as they load B), if a row has more
    ; tiles than there are cores (else no core would read it twice); none
    ; when KP is 0 (each step then loads its A). A convolution's A is the
    ; map's im2col: no panels (its map is there).
    li      s16, 0
.if MM_CONV == 0
    ; B's strips: two tile columns' B (K1 x 8 fractals each, a panel's
    ; bytes) at the start of L1, and G panels after them, when that leaves
    ; room for two panels or more, a tile has two K steps or more (its next
    ; tile's first step can then be loaded beside its last) and a core
    ; computes two tiles or more of a group's column (the tile rows of a
    ; group, G or fewer, are more than the cores). The tiles of a group's
    ; column then read their B from its strip, loaded from GM once, into
    ; the other strip while the tiles of the column before run (MM_AHEAD);
    ; and consecutive groups meet in a column (every other group takes its
    ; columns from the last), whose B, and its neighbour's, the strips keep.
    li      s15, PANEL
    sst     s15, [s0 + SCR_PBASE]
    li      s15, -1
    sst     s15, [s0 + SCR_BCOL]
    sst     s15, [s0 + SCR_BCOL + 8]
    sst     s15, [s0 + SCR_NXCOL]
    sst     s0, [s0 + SCR_NXLEFT]
    srd     s15, l1.bytes
    muli    s17, s5, TILE * FRACTAL_B ; P, a panel's bytes
    li      s18, 2
    blt     s31, s18, nostrip\@
    divu    s16, s15, s17
    addi    s16, s16, -2             ; G: the panels beside two strips
    min     s16, s16, s24
    addi    s20, s4, TILE - 1
    srli    s20, s20, 3              ; tile rows
    min     s26, s16, s20            ; the tile rows of a group
    srd     s27, ncores
    bge     s27, s26, nostrip\@      ; no core computes two tiles of a group's column
    slli    s17, s17, 1
    sst     s17, [s0 + SCR_PBASE]    ; the panels after the two strips
    ori     s21, s21, MM_LD_STRIP
    mv      s29, s5                  ; KP: K1
    j       nog\@
nostrip\@:
    li      s16, 0
    li      s18, PANEL
    sub     s15, s15, s18
    blt     s15, s17, part\@
    divu    s16, s15, s17
    min     s16, s16, s24
    mv      s29, s5                  ; KP: K1
    j       nog\@
part\@:
    li      s29, 0
    addi    s17, s6, TILE - 1
    srli    s17, s17, 3              ; tiles per row
    srd     s18, ncores
    bge     s18, s17, nog\@          ; no core computes two tiles of a row: nothing to reuse
    max     s15, s15, s0
    srli    s29, s15, 15             ; 8 x 8 fractals (32 KiB) per 8 columns
    slli    s29, s29, 3
    beqz    s29, nog\@
    li      s16, 1
.endif
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
    ; the first (or once, from a strip); t = (ti, tj) in that order, core k
    ; of n takes k, k + n, ...
    sld     s15, [s0 + SCR_T]
.if MM_CONV == 1
    ; A convolution's tiles: image by image, row by row (G is 1). A new
    ; image's map replaces the last one's in L1, none of its rows loaded
    ; yet: every move from the last one has completed (each step waits for
    ; its moves).
    sld     s16, [s0 + SCR_TPI]
    divu    s17, s15, s16
    srd     s18, shape.n
    bge     s17, s18, end\@
    sld     s18, [s0 + SCR_IMG]
    beq     s17, s18, sameimg\@
    sst     s17, [s0 + SCR_IMG]
    sst     s0, [s0 + SCR_ROWS]
sameimg\@:
    remu    s15, s15, s16            ; the tile within its image
.endif
    MM_DECODE s15, end\@
    muli    s7, s27, TILE            ; i0
    mv      s8, s26                  ; j0
    andi    s21, s21, MM_LD_STRIP + MM_PAR ; the tile's load word
.if MM_CONV == 1
    sld     s15, [s0 + SCR_T]
.endif
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
    MM_SLOT s25, s26, s16
    slli    s26, s26, 3
    sld     s19, [s26 + SCR_PROW]
    beq     s19, s7, nopanel\@       ; the panel of this tile row is in L1
    sst     s7, [s26 + SCR_PROW]
.if MM_CONV == 0
    andi    s16, s21, MM_LD_STRIP
    bnez    s16, apanel\@            ; with B's strips, its steps load it
.endif
    ; The row's A panel: mt rows of KP fractals (of K1 in GM), loaded here.
    ; Every move of an earlier tile from the slot has completed (each step
    ; waits for its moves).
    muli    s16, s29, FRACTAL_B      ; a row: KP fractals
    muli    s17, s5, FRACTAL_B       ; A's GM stride: K1 fractals
    dmadim  1, s9, s17, s16
    mul     s18, s7, s5
    muli    s18, s18, FRACTAL_B
    add     s18, s18, s1
    dmaldl1 s25, s18, s16, 8
    dmawait 8
nopanel\@:
.if MM_CONV == 0
    andi    s16, s21, MM_LD_STRIP
    bnez    s16, stile\@             ; with B's strips: the tile's B, and B ahead
bdone\@:
.endif
.if MM_CONV == 1
    ; The tile's image's map into L1 in bands of rows, as the tiles reach
    ; them: this tile's rows (waited for) here, the rows of this core's
    ; next tile of the image (waited for by that tile) once the first
    ; moves are issued (MM_MAP_PREFETCH).
    li      s25, PANEL
    MM_MAP_NEED s27, s26, s7, s9
    MM_MAP_LOAD s27, s26
    dmawait 10
    beqz    s29, wok\@
    dmawait 8                        ; the weights (in L1 from the first tile on)
wok\@:
.endif
.if MM_BIAS == 1
    ; The bias of the tile's columns into its half: per column of fractals,
    ; its 16 values in each of 16 rows (a GM stride of 0 repeats them).
    sld     s20, [s0 + SCR_BIAS]
    li      s15, 16
    li      s16, 64
    dmadim  1, s15, s0, s16
    li      s17, 1024
    dmadim  2, s30, s16, s17
    slli    s18, s8, 6
    add     s18, s18, s20
    andi    s19, s21, MM_PAR
    slli    s19, s19, 13
    addi    s19, s19, UB_BIAS
    dmald   s19, s18, s16, 9
    li      s15, 1
    dmadim  2, s15, s0, s0
.endif
    li      s12, 0
    MM_KFIRST s13, s7
.if MM_CONV == 1
    beqz    s29, cfirst\@
    MM_CMOVES 0, s13                 ; first, then the next tile's rows beside them
    MM_MAP_PREFETCH
    j       ksteps\@
cfirst\@:
    MM_MAP_PREFETCH
    j       first\@
.else
    ; Step 0 loaded by the last step of the tile before (MM_PREFETCH): the
    ; steps start at its parity.
    sld     s15, [s0 + SCR_PF]
    beqz    s15, first\@
    sst     s0, [s0 + SCR_PF]
    li      s16, 2
    beq     s15, s16, kodd\@
    j       ksteps\@
.endif
first\@:
.if MM_CONV == 0
    andi    s15, s21, MM_LD_STRIP
    bnez    s15, sfirst\@
.endif
    MM_LOAD 0, s13, s7, s8, s9, s30
.if MM_CONV == 0
    j       ksteps\@
sfirst\@:
    andi    s15, s21, MM_LD_A + MM_LD_NOB
    addi    s15, s15, -MM_LD_NOB
    beqz    s15, ksteps\@            ; a strip holds its B, its panel its A
    MM_LOAD_S 0, s13, s7, s8, s9, s30, s21
.endif
    ; The K steps: MM_STEP, or MM_STEP_S with B's strips (one branch per
    ; step picks it; the strips' checks stay out of MM_STEP).
ksteps\@:
.if MM_CONV == 0
    andi    s15, s21, MM_LD_STRIP
    bnez    s15, keven_s\@
.endif
    MM_STEP 0
.if MM_CONV == 0
    j       keven_d\@
keven_s\@:
    MM_STEP_S 0
keven_d\@:
.endif
    MM_SHARE \math, \HAS_MATH
    bge     s12, s31, keven\@
kodd\@:
.if MM_CONV == 0
    andi    s15, s21, MM_LD_STRIP
    bnez    s15, kodd_s\@
.endif
    MM_STEP 1
.if MM_CONV == 0
    j       kodd_d\@
kodd_s\@:
    MM_STEP_S 1
kodd_d\@:
.endif
    MM_SHARE \math, \HAS_MATH
    blt     s12, s31, ksteps\@
    ; The last mmad ends after every other: the cube runs in order.
    dmawait 5                        ; the last step's parity was 1
    j       mmdone\@
keven\@:
    dmawait 4
mmdone\@:
    ; Into the UB buffer of this parity, once the store of the tile before
    ; the previous one has read it (the previous tile's is not started yet).
    sld     s15, [s0 + SCR_ST]
    beqz    s15, ubfree\@
    dmawait 7
ubfree\@:
    mul     s15, s9, s30
    slli    s15, s15, 10             ; the fp32 tile's bytes
    andi    s16, s21, MM_PAR
    slli    s16, s16, 16
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
    andi    s15, s21, MM_PAR
    sst     s15, [s0 + SCR_PAR]
.if MM_CONV == 1
    sld     s15, [s0 + SCR_IMG]
    sst     s15, [s0 + SCR_PIMG]
.endif
    li      s15, 1
    sst     s15, [s0 + SCR_ON]
.if MM_PASS\@ > 0
    mv      s23, s9                  ; its fractal rows to do
    andi    s15, s21, MM_PAR
    slli    s10, s15, 16
    addi    s10, s10, UB_C
    li      s22, OUT_HALF
    mul     s22, s22, s15
    addi    s22, s22, OUT_BUF
    slli    s3, s15, 13
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
    xori    s21, s21, MM_PAR
    j       tiles\@
.if MM_CONV == 0
    ; Out of the way of the tiles without B's strips (a forward branch
    ; predicted not taken reaches each):
apanel\@:
    ; A whole panel with B's strips: the tile's steps load their A into
    ; the slot, each beside the step before.
    ori     s21, s21, MM_LD_A
    j       nopanel\@
stile\@:
    ; The tile's B: in its strip already; or loaded ahead into it, whose
    ; last steps are loaded now and all waited for; or else its steps load
    ; it there (its strip is free: the tiles of its last column are done).
    MM_SIDX s17, s8
    slli    s17, s17, 3
    sld     s16, [s17 + SCR_BCOL]
    beq     s16, s8, bhave\@
    sst     s8, [s17 + SCR_BCOL]
    sld     s16, [s0 + SCR_NXCOL]
    bne     s16, s8, sdone\@
rest\@:
    sld     s15, [s0 + SCR_NXLEFT]
    beqz    s15, waitb\@
    addi    s16, s15, -1
    sst     s16, [s0 + SCR_NXLEFT]
    sub     s26, s31, s15
    MM_NXSTEP s26
    j       rest\@
waitb\@:
    dmawait 11
    li      s16, -1
    sst     s16, [s0 + SCR_NXCOL]
bhave\@:
    ori     s21, s21, MM_LD_NOB
sdone\@:
    MM_AHEAD
    j       bdone\@
.endif
end\@:
    sld     s15, [s0 + SCR_ON]
    beqz    s15, done\@
    dmawait 6                        ; the last tile's accumulators are in the UB
.if MM_PASS\@ > 0
    MM_ROWS \math, \HAS_MATH, s23
.endif
    MM_FINISH \HAS_MATH
    dmawait 7
done\@:
.endm
