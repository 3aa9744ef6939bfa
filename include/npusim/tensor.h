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

#ifdef __cplusplus
}
#endif
#endif
