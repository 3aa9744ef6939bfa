; @kernel     conv2d_relu
; @summary    y = ReLU(conv(x, w)): conv2d with kernels/relu.s as the epilogue of each accumulator tile, before it leaves the core
; @op         conv2d
; @input      x range=-1,1
; @input      w range=-1,1
; @output     y
; @param      cout 64 output channels
; @param      kernel 3 kernel rows and columns (k x k)
; @param      stride 1 stride in both directions
; @param      pad 1 zero padding on every side
; @dtypes     fp16 fp32
; @split      tiles
; @needs      cube.l1_bytes=131072 cube.l0a_bytes=65536 cube.l0b_bytes=65536 cube.l0c_bytes=65536 core.ub_bytes=213504
; @reference  relu
; @tolerance  fp16 ulp=0.5
; @tolerance  fp32 ulp=0.5
; @note       Tolerance: ReLU's, around the values it takes within the accumulation bound of the convolution (docs/cube.md).
;
; A fused convolution: lib/conv_fused.s, then the activation's own kernel
; file. Any activation without parameters can take relu's place here.
.include "lib/conv_fused.s"
.include "relu.s"
