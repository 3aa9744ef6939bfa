; @kernel     matmul
; @summary    C = A B on the cube: fp16 A (M x K) and B (K x N), fp32 accumulation, C in the run's dtype
; @op         matmul
; @input      a range=-1,1
; @input      b range=-1,1
; @output     c
; @dtypes     fp16 fp32
; @split      tile_rows
; @reference  identity
; @tolerance  fp16 ulp=0.5
; @tolerance  fp32 ulp=0.5
; @note       Tolerance: beyond the accumulation bound the runner derives from K (docs/cube.md), half an ULP of C.
;
; The cube's first kernel (docs/cube.md). A, B and C are fractal matrices in
; GM (16 x 16 blocks, row-major blocks and elements; s1, s2, s3), mm.m1,
; mm.k1, mm.n1 their fractal counts. Core k of n takes the C tiles of every
; n-th row of tiles. A C tile is up to 8 x 8 fractals; its K runs in steps
; of up to 8 fractals. When L1 holds it, a row of tiles loads its A panel
; (up to 8 x K1 fractals) into L1 once, for every tile of the row;
; otherwise each step loads its A tile as it loads its B tile.
;   step s: loads (A and) B of step s + 1 into L1 (the other half), waits
;   for its own, moves them into L0A / L0B (the half of step s - 2, once
;   that step's mmad is done) and starts the mmad, which accumulates in L0C.
; So the DMA of step s + 1, the moves of step s and the mmad of step s - 1
; overlap. A tile's accumulators go to the UB (mvub), fp16 outputs are
; narrowed there by the vector unit, and the DMA stores them while the next
; tile computes.
;
; Tags: 0 / 1 loads of an even / odd step, 2 / 3 its moves, 4 / 5 its mmad,
; 6 the move to the UB, 7 the store of a tile, 8 the A panel.
; Buffers used: L1 128 KiB (+ the panel), L0A, L0B and L0C 64 KiB, UB 96 KiB.

.equ TILE, 8                    ; fractals per tile side, and per K step
.equ FRACTAL_B, 512             ; bytes of an fp16 fractal
.equ L1B, 0                     ; L1: B halves at 0 and 32 KiB, A halves at 64 and 96 KiB,
.equ L1A, 65536                 ; then the A panel
.equ PANEL, 131072
.equ HALF, 32768                ; bytes of a half: 8 x 8 fp16 fractals
.equ UB_C, 0                    ; UB: the fp32 tile (64 KiB), then its fp16 form
.equ UB_H, 65536

; Registers:
;   s1 A, s2 B, s3 C          s4 M1, s5 K1, s6 N1
;   s7 i0 (tile's first fractal row)   s8 j0 (first fractal column)
;   s9 mt, s10 nt (tile size)          s11 K steps of a tile
;   s12 step, s13 its k0, s14 its kt   s15 .. s20 scratch
;   s21 tile rows step (TILE x cores)  s22 C's fractal bytes
;   s23 a tile was stored (its tag 7 is in use)   s24 TILE
;   s25 A's panel is in L1             s26, s27 scratch

; LOAD P, k0: A (mt x kt fractals, unless the panel holds it) and B (kt x
; nt) of the step at k0 into the L1 halves P; tag P.
.macro LOAD p, k0
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
    muli    s16, s10, FRACTAL_B      ; B row: nt fractals
    muli    s17, s6, FRACTAL_B       ; B's GM stride: N1 fractals
    dmadim  1, s15, s17, s16
    mul     s18, \k0, s6
    add     s18, s18, s8
    muli    s18, s18, FRACTAL_B
    add     s18, s18, s2
    li      s19, L1B + (\p) * HALF
    dmaldl1 s19, s18, s16, (\p)
.endm

; STEP P: step s12 (k0 s13) of parity P.
.macro STEP p
    addi    s15, s12, 1
    bge     s15, s11, last\@
    addi    s20, s13, TILE
    LOAD    1 - \p, s20
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
    mul     s18, s14, s10
    muli    s18, s18, FRACTAL_B
    mvlb    s16, s17, s18, 2 + (\p)
    dmawait 2 + (\p)
    mmdim   s9, s14, s10
    bnez    s12, acc\@
    mmadz   s0, s16, s16, 4 + (\p)
    j       next\@
acc\@:
    mmad    s0, s16, s16, 4 + (\p)
next\@:
    addi    s12, s12, 1
    addi    s13, s13, TILE
.endm

    srd     s4, mm.m1
    srd     s5, mm.k1
    srd     s6, mm.n1
    li      s24, TILE
    li      s22, 1024
.if DT_BYTES == 2
    li      s22, 512
.endif
    li      s23, 0
    addi    s11, s5, TILE - 1
    srli    s11, s11, 3              ; K steps: ceil(K1 / 8)
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
    blt     s15, s17, rows
    li      s25, 1
rows:
    bge     s7, s4, end
    sub     s9, s4, s7
    min     s9, s9, s24              ; mt
    beqz    s25, nopanel
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
nopanel:
    li      s8, 0
cols:
    bge     s8, s6, nextrow
    sub     s10, s6, s8
    min     s10, s10, s24            ; nt
    li      s12, 0
    li      s13, 0
    LOAD    0, s13
ksteps:
    STEP    0
    bge     s12, s11, kdone
    STEP    1
    blt     s12, s11, ksteps
kdone:
    ; The last mmad (parity (steps - 1) % 2) ends after every other: the cube runs in order.
    andi    s15, s11, 1
    beqz    s15, lastodd
    dmawait 4                        ; an odd number of steps: the last is even
    j       mmdone
lastodd:
    dmawait 5
mmdone:
    beqz    s23, ubfree
    dmawait 7                        ; the previous tile's store has read the UB
ubfree:
    mul     s15, s9, s10
    muli    s15, s15, 1024           ; the fp32 tile's bytes
    li      s16, UB_C
    mvub    s16, s0, s15, 6
    dmawait 6
.if DT_BYTES == 2
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
    mul     s17, s10, s22            ; a row of the tile
    mul     s18, s6, s22             ; C's GM stride
    dmadim  1, s9, s18, s17
    mul     s19, s7, s6
    add     s19, s19, s8
    mul     s19, s19, s22
    add     s19, s19, s3
    dmast   s16, s19, s17, 7
    li      s23, 1
    add     s8, s8, s24
    j       cols
nextrow:
    add     s7, s7, s21
    j       rows
end:
    beqz    s23, done
    dmawait 7
done:
    halt
