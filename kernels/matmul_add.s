; @kernel     matmul_add
; @summary    C = A B + bias on the cube: fp16 A (M x K) and B (K x N), fp32 bias (N) added to the fp32 accumulators by the vector unit
; @op         matmul
; @input      a range=-1,1
; @input      b range=-1,1
; @input      bias range=-1,1
; @output     c
; @dtypes     fp16 fp32
; @split      tiles
; @needs      cube.l1_bytes=131072 cube.l0a_bytes=65536 cube.l0b_bytes=65536 cube.l0c_bytes=65536 core.ub_bytes=213504
; @reference  identity
; @tolerance  fp16 ulp=0.5
; @tolerance  fp32 ulp=0.5
; @note       Tolerance: beyond the accumulation bound the runner derives from K and the bias's fp32 addition (docs/cube.md), half an ULP of C.
;
; The skeleton of lib/matmul.s with the bias and the identity epilogue: each
; accumulator tile gets its columns' bias in the UB before it leaves the core.
.equ MM_BIAS, 1
.include "lib/matmul.s"

    MATMUL_TILES none, 0
    halt
