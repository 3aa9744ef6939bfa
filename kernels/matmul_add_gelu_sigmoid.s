; @kernel     matmul_add_gelu_sigmoid
; @summary    C = GELU(A B + bias), GELU, sigmoid form x sigmoid(1.702 x): matmul_add with kernels/gelu_sigmoid.s as the epilogue of each accumulator tile
; @op         matmul
; @input      a range=-1,1
; @input      b range=-1,1
; @input      bias range=-1,1
; @output     c
; @dtypes     fp16 fp32
; @split      tiles
; @needs      cube.l1_bytes=131072 cube.l0a_bytes=65536 cube.l0b_bytes=65536 cube.l0c_bytes=65536 core.ub_bytes=213504
; @reference  gelu_sigmoid
; @tolerance  fp16 ulp=1
; @tolerance  fp32 ulp=3 abs=0x1p-120
; @note       Tolerance: gelu_sigmoid's, around the values GELU takes within the accumulation bound of A B + bias (docs/cube.md).
; @note       GELU runs in fp32 on the accumulators, as gelu_sigmoid fp32 does; fp16 outputs are rounded once from it.
;
; A fused kernel, as matmul_add_gelu.s with gelu_sigmoid as the epilogue.
.include "lib/matmul_fused.s"
.include "gelu_sigmoid.s"
