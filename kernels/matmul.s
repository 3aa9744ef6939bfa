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
; of up to 8 fractals:
;   step s: loads A and B of step s + 1 into L1 (the other half), waits for
;   its own, moves them into L0A / L0B (the half of step s - 2, once that
;   step's mmad is done) and starts the mmad, which accumulates in L0C.
; So the DMA of step s + 1, the moves of step s and the mmad of step s - 1
; overlap. A tile's accumulators go to the UB (mvub), fp16 outputs are
; narrowed there by the vector unit, and the DMA stores them while the next
; tile computes.
;
; Tags: 0 / 1 loads of an even / odd step, 2 / 3 its moves, 4 / 5 its mmad,
; 6 the move to the UB, 7 the store of a tile.

.equ TILE, 8                    ; fractals per tile side, and per K step
.equ FRACTAL_B, 512             ; bytes of an fp16 fractal
.equ L1A, 0                     ; L1: A halves at 0 and 32 KiB, B halves at 64 and 96 KiB
.equ L1B, 65536
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

; LOAD P, k0: A (mt x kt fractals) and B (kt x nt) of the step at k0 into
; the L1 halves P; tag P.
.macro LOAD p, k0
    sub     s15, s5, \k0
    min     s15, s15, s24            ; kt
    muli    s16, s15, FRACTAL_B      ; A row: kt fractals
    muli    s17, s5, FRACTAL_B       ; A's GM stride: K1 fractals
    dmadim  1, s9, s17, s16
    mul     s18, s7, s5
    add     s18, s18, \k0
    muli    s18, s18, FRACTAL_B
    add     s18, s18, s1
    li      s19, L1A + (\p) * HALF
    dmaldl1 s19, s18, s16, (\p)
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
    li      s17, L1A + (\p) * HALF
    mul     s18, s9, s14
    muli    s18, s18, FRACTAL_B
    mvla    s16, s17, s18, 2 + (\p)
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
rows:
    bge     s7, s4, end
    sub     s9, s4, s7
    min     s9, s9, s24              ; mt
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
narrow:
    vld.f32 v1, [s18]
    vld.f32 v2, [s18 + 1 vl]
    vcvtn.f16 v3, v1, v2
    vst.f16 v3, [s19]
    addvl   s18, s18, 2
    addvl   s19, s19, 1
    loop    s17, narrow
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
