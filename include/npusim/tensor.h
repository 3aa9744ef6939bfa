/* NC1HWC0: the layout NPU kernels see. A logical NCHW tensor is stored as
 * N, C1 = ceil(C / C0), H, W, C0 with C0 = 32 bytes / element size, so one
 * C0 block is one 32-byte DMA/vector granule. Channels past C are padding:
 * zero on input, and a kernel must leave them zero on output. */
#ifndef NPUSIM_TENSOR_H
#define NPUSIM_TENSOR_H

#include "npusim/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { NPU_C0_BYTES = 32 };

typedef struct npu_layout {
    uint64_t n, c, h, w; /* logical NCHW */
    uint64_t c1, c0;     /* C1 = ceil(C / C0), C0 = 32 / esize */
    unsigned esize;      /* bytes per element: 2 or 4 */
} npu_layout;

/* Returns 0, or NPU_EINVAL for a zero dimension, a bad element size or a
 * tensor whose byte size overflows 64 bits. */
NPU_API int npu_layout_init(npu_layout *l, uint64_t n, uint64_t c, uint64_t h, uint64_t w, unsigned esize);
NPU_API uint64_t npu_layout_logical_elems(const npu_layout *l); /* N*C*H*W */
NPU_API uint64_t npu_layout_elems(const npu_layout *l);         /* N*C1*H*W*C0, padding included */
NPU_API uint64_t npu_layout_bytes(const npu_layout *l);
/* Element offset in NC1HWC0 of logical element (n, c, h, w). */
NPU_API uint64_t npu_layout_offset(const npu_layout *l, uint64_t n, uint64_t c, uint64_t h, uint64_t w);

/* Packs NCHW elements (esize bytes each) into NC1HWC0, padding zero. */
NPU_API void npu_pack_nc1hwc0(const npu_layout *l, const void *nchw, void *nc1hwc0);
/* Unpacks NC1HWC0 into NCHW, dropping the padding. */
NPU_API void npu_unpack_nc1hwc0(const npu_layout *l, const void *nc1hwc0, void *nchw);
/* Counts padding elements whose bits are not all zero. */
NPU_API uint64_t npu_padding_nonzero(const npu_layout *l, const void *nc1hwc0);

/* A matrix for the cube (docs/cube.md): rows x cols elements stored as
 * fractals of 16 x 16, the fractals row-major (fractal (i, j) of a matrix
 * of cols1 fractal columns at fractal index i * cols1 + j) and the elements
 * row-major inside each; rows and cols are padded with zeros to multiples
 * of 16. */
enum { NPU_FRACTAL = 16 };

typedef struct npu_matrix_layout {
    uint64_t rows, cols;   /* logical */
    uint64_t rows1, cols1; /* fractals: ceil(rows / 16), ceil(cols / 16) */
    unsigned esize;        /* bytes per element: 2 or 4 */
} npu_matrix_layout;

/* Returns 0, or NPU_EINVAL for a zero dimension, a bad element size or a
 * matrix whose byte size overflows 64 bits. */
NPU_API int npu_matrix_layout_init(npu_matrix_layout *l, uint64_t rows, uint64_t cols, unsigned esize);
NPU_API uint64_t npu_matrix_layout_bytes(const npu_matrix_layout *l); /* padding included */
/* Element offset in the fractal layout of logical element (r, c). */
NPU_API uint64_t npu_matrix_layout_offset(const npu_matrix_layout *l, uint64_t r, uint64_t c);
/* Packs a row-major rows x cols matrix into fractals, padding zero. */
NPU_API void npu_pack_fractal(const npu_matrix_layout *l, const void *rowmajor, void *fractal);
/* Unpacks fractals into a row-major matrix, dropping the padding. */
NPU_API void npu_unpack_fractal(const npu_matrix_layout *l, const void *fractal, void *rowmajor);

#ifdef __cplusplus
}
#endif
#endif
