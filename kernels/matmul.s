; @kernel     matmul
; @summary    C = A B on the cube: fp16 A (M x K) and B (K x N), fp32 accumulation, C in the run's dtype
; @op         matmul
; @input      a range=-1,1
; @input      b range=-1,1
; @output     c
; @dtypes     fp16 fp32
; @split      tiles
; @needs      cube.l1_bytes=131072 cube.l0a_bytes=65536 cube.l0b_bytes=65536 cube.l0c_bytes=65536 core.ub_bytes=213504
; @reference  identity
; @tolerance  fp16 ulp=0.5
; @tolerance  fp32 ulp=0.5
; @note       Tolerance: beyond the accumulation bound the runner derives from K (docs/cube.md), half an ULP of C.
;
; The cube's first kernel: the skeleton of lib/matmul.s with no bias and
; the identity epilogue (docs/cube.md).
.equ MM_BIAS, 0
.include "lib/matmul.s"

    MATMUL_TILES none, 0
    halt
