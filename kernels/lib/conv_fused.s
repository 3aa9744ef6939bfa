; The head of a fused convolution (docs/cube.md, "Epilogues"): y = f(conv(x,
; w)), f an activation. A kernel includes this, then the activation's own
; kernel file, whose ELTWISE_1IN_LINEAR then expands to the cube skeleton
; (lib/matmul.s) with the activation's math as the epilogue of each
; accumulator tile, as lib/matmul_fused.s does for a matmul.
.equ MM_BIAS, 0
.equ MM_CONV, 1
.equ MATMUL_EPILOGUE, 1
.include "lib/matmul.s"
