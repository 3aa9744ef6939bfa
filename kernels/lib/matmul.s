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
; Core k of n takes the C tiles of every n-th row of tiles. A C tile is up to
; 8 x 8 fractals; its K runs in steps of up to 8 fractals. When L1 holds it,
; a row of tiles loads its A panel (up to 8 x K1 fractals) into L1 once, for
; every tile of the row; otherwise each step loads its A tile as it loads its
; B tile.
;   step s: loads (A and) B of step s + 1 into L1 (the other half), waits
;   for its own, moves them into L0A / L0B (the half of step s - 2, once
;   that step's mmad is done) and starts the mmad, which accumulates in L0C.
; So the DMA of step s + 1, the moves of step s and the mmad of step s - 1
; overlap. A tile's accumulators go to the UB (mvub); the epilogue runs
; there, fractal row by fractal row, as one `.pipeline` loop each (the bias
; of the tile's columns is in the UB as one fractal per column of fractals,
; its 16 values repeated in each row, so a vector of any length adds it
; lane by lane); C's padding (rows past M, columns past N) is zeroed, fp16
; outputs are narrowed, and the DMA stores the tile while the next computes.
;
; Tags: 0 / 1 loads of an even / odd step, 2 / 3 its moves, 4 / 5 its mmad,
; 6 the move to the UB, 7 the store of a tile, 8 the A panel, 9 the bias.
; Buffers used: L1 128 KiB (+ the panel), L0A, L0B and L0C 64 KiB, UB 104
; KiB. Outside its pipelines the skeleton writes v16 and p6 (zeros and the
; padding's masks): an epilogue's constants live in other registers.

.equ TILE, 8                    ; fractals per tile side, and per K step
.equ FRACTAL_B, 512             ; bytes of an fp16 fractal
.equ L1B, 0                     ; L1: B halves at 0 and 32 KiB, A halves at 64 and 96 KiB,
.equ L1A, 65536                 ; then the A panel
.equ PANEL, 131072
.equ HALF, 32768                ; bytes of a half: 8 x 8 fp16 fractals
.equ UB_C, 0                    ; UB: the fp32 tile (64 KiB), its fp16 form (32 KiB),
.equ UB_H, 65536                ; the bias of its columns (8 KiB)
.equ UB_BIAS, 98304

; Registers:
;   s1 A, s2 B, s28 C, s29 bias   s4 M1, s5 K1, s6 N1
;   s7 i0 (tile's first fractal row)   s8 j0 (first fractal column)
;   s9 mt, s30 nt (tile size)          s31 K steps of a tile
;   s12 step, s13 its k0, s14 its kt   s15 .. s20 scratch
;   s21 tile rows step (TILE x cores)  s22 C's fractal bytes
;   s23 a tile was stored (its tag 7 is in use)   s24 TILE
;   s25 A's panel is in L1             s26, s27 scratch
;   s10, s11 the epilogue's pointers (the tile, the bias)

; MM_X x: the epilogue's input, the accumulator at [s10] plus the bias at
; [s11]. An activation that reads x again (LIN_X_AGAIN) gets the same sum.
.macro MM_X x
.if MM_BIAS == 1
    vld.f32   %acc\@, [s10]
    vld.f32   %bias\@, [s11]
    vadd.f32  \x, %acc\@, %bias\@
.else
    vld.f32   \x, [s10]
.endif
.endm

.ifdef MATMUL_EPILOGUE
.macro LIN_X_AGAIN xl
    MM_X      \xl
.endm
.endif

; MM_ZERO addr, count, lanes: zeroes `count` fp32 lanes from UB address
; `addr` (masked stores of v16; addr and count are consumed).
.macro MM_ZERO addr, count, lanes
zero\@:
    pwhile.f32 p6, \count
    vst.f32   v16, [\addr], p6
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
    addi    s17, s17, PANEL
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

; MM_EPILOGUE math, HAS_MATH: the tile's fp32 accumulators at UB_C (mt x nt
; fractals, s15 their bytes) become f(acc + bias), in place, and C's
; padding in the tile is zeroed.
.macro MM_EPILOGUE math, HAS_MATH
.if MM_BIAS + \HAS_MATH > 0
.if MM_BIAS == 1
    dmawait 9                        ; the bias of the tile's columns
.endif
    muli    s17, s30, 1024           ; a fractal row of the tile
    srd     s16, vlenb
    divu    s16, s17, s16            ; its vectors
    li      s10, UB_C
    mv      s19, s9
frow\@:
    li      s11, UB_BIAS
    mv      s17, s16
.pipeline s17, s20, TILE * 1024 / VLENB
.if \HAS_MATH == 1
    MM_X      %x
    \math     %y, %x
    vst.f32   %y, [s10]
.else
    MM_X      %x
    vst.f32   %x, [s10]
.endif
    addvl     s10, s10, 1
    addvl     s11, s11, 1
.endpipeline
    loop    s19, frow\@
    ; Padding rows (past M) of the matrix's last fractal row: f(bias), zeroed.
    srd     s26, vlenb
    srli    s26, s26, 2              ; fp32 lanes
    vbcasti.f32 v16, 0.0
    srd     s17, shape.h
    andi    s17, s17, 15             ; M % 16: rows of the last fractal row
    beqz    s17, rowsok\@
    add     s18, s7, s9
    blt     s18, s4, rowsok\@        ; not the matrix's last row of tiles
    addi    s18, s9, -1
    mul     s18, s18, s30
    slli    s18, s18, 10             ; the tile's last fractal row
    slli    s19, s17, 6
    add     s18, s18, s19            ; its first padding row
    mv      s27, s30
prow\@:
    mv      s19, s18
    li      s20, 16
    sub     s20, s20, s17
    slli    s20, s20, 4              ; (16 - M % 16) x 16 lanes
    MM_ZERO s19, s20, s26
    addi    s18, s18, 1024
    loop    s27, prow\@
rowsok\@:
.if \HAS_MATH == 1
    ; Padding columns (past N) of the last fractal column: f(0), zeroed.
    srd     s17, shape.w
    andi    s17, s17, 15             ; N % 16
    beqz    s17, colsok\@
    add     s18, s8, s30
    blt     s18, s6, colsok\@        ; not the matrix's last column of tiles
    addi    s18, s30, -1
    slli    s18, s18, 10
    slli    s19, s17, 2
    add     s18, s18, s19            ; row 0's first padding lane, fractal (0, nt - 1)
    slli    s27, s9, 4               ; mt x 16 rows
    slli    s14, s30, 10             ; bytes from one fractal row to the next
    li      s12, 16
pcol\@:
    mv      s19, s18
    li      s20, 16
    sub     s20, s20, s17
    MM_ZERO s19, s20, s26
    addi    s18, s18, 64
    addi    s12, s12, -1
    bnez    s12, pnext\@
    li      s12, 16                  ; the next fractal row's fractal
    add     s18, s18, s14
    addi    s18, s18, -1024
pnext\@:
    loop    s27, pcol\@
colsok\@:
.endif
.endif
.endm

.macro MATMUL_TILES math, HAS_MATH
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
    li      s22, 1024
.if OUT_BYTES == 2
    li      s22, 512
.endif
    li      s23, 0
    addi    s31, s5, TILE - 1
    srli    s31, s31, 3              ; K steps: ceil(K1 / 8)
    srd     s15, coreid
    muli    s7, s15, TILE            ; this core's first row of tiles
    srd     s15, ncores
    muli    s21, s15, TILE
    ; A's panel in L1 when the largest (8 x K1 fractals) fits after 128 KiB.
    srd     s15, l1.bytes
    li      s16, PANEL
    sub     s15, s15, s16
    muli    s17, s5, TILE * FRACTAL_B
    li      s25, 0
    blt     s15, s17, rows\@
    li      s25, 1
rows\@:
    bge     s7, s4, end\@
    sub     s9, s4, s7
    min     s9, s9, s24              ; mt
    beqz    s25, nopanel\@
    ; The row's A panel: mt x K1 fractals, contiguous in GM. Every move of
    ; the previous row from it has completed (each step waits for its moves).
    li      s15, 1
    dmadim  1, s15, s0, s0
    mul     s16, s9, s5
    muli    s16, s16, FRACTAL_B
    mul     s18, s7, s5
    muli    s18, s18, FRACTAL_B
    add     s18, s18, s1
    li      s19, PANEL
    dmaldl1 s19, s18, s16, 8
    dmawait 8
nopanel\@:
    li      s8, 0
cols\@:
    bge     s8, s6, nextrow\@
    sub     s30, s6, s8
    min     s30, s30, s24            ; nt
.if MM_BIAS == 1
    ; The bias of the tile's columns: per column of fractals, its 16 values
    ; in each of 16 rows (a GM stride of 0 repeats them).
    li      s15, 16
    li      s16, 64
    dmadim  1, s15, s0, s16
    li      s17, 1024
    dmadim  2, s30, s16, s17
    slli    s18, s8, 6
    add     s18, s18, s29
    li      s19, UB_BIAS
    dmald   s19, s18, s16, 9
    li      s15, 1
    dmadim  2, s15, s0, s0
.endif
    li      s12, 0
    li      s13, 0
    MM_LOAD 0, s13
ksteps\@:
    MM_STEP 0
    bge     s12, s31, kdone\@
    MM_STEP 1
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
    beqz    s23, ubfree\@
    dmawait 7                        ; the previous tile's store has read the UB
ubfree\@:
    mul     s15, s9, s30
    muli    s15, s15, 1024           ; the fp32 tile's bytes
    li      s16, UB_C
    mvub    s16, s0, s15, 6
    dmawait 6
    MM_EPILOGUE \math, \HAS_MATH
    mul     s15, s9, s30
    muli    s15, s15, 1024
    li      s16, UB_C
.if OUT_BYTES == 2
    ; Narrow to fp16 in place order: two fp32 vectors make one fp16 vector.
    srd     s17, vlenb
    add     s17, s17, s17
    divu    s17, s15, s17            ; fp16 vectors out
    li      s18, UB_C
    li      s19, UB_H
.pipeline s17, s20, 65536 / 2 / VLENB
    vld.f32   %lo, [s18]
    vld.f32   %hi, [s18 + 1 vl]
    vcvtn.f16 %h, %lo, %hi
    vst.f16   %h, [s19]
    addvl     s18, s18, 2
    addvl     s19, s19, 1
.endpipeline
    li      s16, UB_H
.endif
    ; Store mt rows of nt fractals into C (GM stride N1 fractals).
    mul     s17, s30, s22            ; a row of the tile
    mul     s18, s6, s22             ; C's GM stride
    dmadim  1, s9, s18, s17
    mul     s19, s7, s6
    add     s19, s19, s8
    mul     s19, s19, s22
    add     s19, s19, s28
    dmast   s16, s19, s17, 7
    li      s23, 1
    add     s8, s8, s24
    j       cols\@
nextrow\@:
    add     s7, s7, s21
    j       rows\@
end\@:
    beqz    s23, done\@
    dmawait 7
done\@:
.endm
