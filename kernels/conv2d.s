; @kernel     conv2d
; @summary    y = conv(x, w) on the cube: fp16 feature map x (NC1HWC0) and weights w (cout, cin, k, k), im2col into L0A, fp32 accumulation, y NC1HWC0 in the run's dtype
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
; @reference  identity
; @tolerance  fp16 ulp=0.5
; @tolerance  fp32 ulp=0.5
; @note       Tolerance: beyond the accumulation bound the runner derives from cin k k (docs/cube.md), half an ULP of y.
;
; A convolution is the cube skeleton of lib/matmul.s with A = im2col(x),
; built in L0A by mvlai from the image's map in L1 (docs/cube.md,
; "Convolution"), and the identity epilogue.
.equ MM_BIAS, 0
.equ MM_CONV, 1
.include "lib/matmul.s"

    MATMUL_TILES none, 0
    halt
