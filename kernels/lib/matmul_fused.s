; The head of a fused cube kernel (docs/cube.md, "Epilogues"): C = f(A B +
; bias), f an activation. A kernel includes this, then the activation's own
; kernel file, whose ELTWISE_1IN_LINEAR then expands to the cube skeleton
; (lib/matmul.s) with the activation's math as the epilogue of each
; accumulator tile; the activation's setup (its constants) runs first, once.
.equ MM_BIAS, 1
.equ MATMUL_EPILOGUE, 1
.include "lib/matmul.s"
