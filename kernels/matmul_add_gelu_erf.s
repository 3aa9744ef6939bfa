; @kernel     matmul_add_gelu_erf
; @summary    C = GELU(A B + bias), exact GELU (erf form): matmul_add with kernels/gelu_erf.s as the epilogue of each accumulator tile
; @op         matmul
; @input      a range=-1,1
; @input      b range=-1,1
; @input      bias range=-1,1
; @output     c
; @dtypes     fp16 fp32
; @split      tiles
; @needs      cube.l1_bytes=131072 cube.l0a_bytes=65536 cube.l0b_bytes=65536 cube.l0c_bytes=65536 core.ub_bytes=213504
; @reference  gelu_erf
; @tolerance  fp16 ulp=1 zero_sign=any
; @tolerance  fp32 ulp=3 zero_sign=any
; @note       Tolerance: gelu_erf's, around the values GELU takes within the accumulation bound of A B + bias (docs/cube.md).
; @note       GELU runs in fp32 on the accumulators, as gelu_erf fp32 does; fp16 outputs are rounded once from it.
; @note       zero_sign=any in both dtypes: gelu_erf fp32's (below -14.42 its tail gives +0 where binary64
; @note       rounds to -0), which fp16 outputs inherit (sums that low need a long K: |A B| is at most K).
;
; A fused kernel, as matmul_add_gelu.s with gelu_erf as the epilogue.
.include "lib/matmul_fused.s"
.include "gelu_erf.s"
