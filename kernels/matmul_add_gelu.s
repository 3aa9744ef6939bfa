; @kernel     matmul_add_gelu
; @summary    C = GELU(A B + bias), tanh form: matmul_add with kernels/gelu_tanh.s as the epilogue of each accumulator tile
; @op         matmul
; @input      a range=-1,1
; @input      b range=-1,1
; @input      bias range=-1,1
; @output     c
; @dtypes     fp16 fp32
; @split      tiles
; @needs      cube.l1_bytes=131072 cube.l0a_bytes=65536 cube.l0b_bytes=65536 cube.l0c_bytes=65536 core.ub_bytes=213504
; @reference  gelu_tanh
; @tolerance  fp16 ulp=1 abs=0x1p-24
; @tolerance  fp32 ulp=3 abs=0x1p-24
; @note       Tolerance: gelu_tanh's, around the values GELU takes within the accumulation bound of A B + bias (docs/cube.md).
; @note       GELU runs in fp32 on the accumulators, as gelu_tanh fp32 does; fp16 outputs are rounded once from it.
;
; A fused kernel: lib/matmul_fused.s, then the activation's own kernel file.
; Any activation without parameters can take gelu_tanh's place here.
.include "lib/matmul_fused.s"
.include "gelu_tanh.s"
