/* NC1HWC0 packing, unpacking and padding checks; the cube's fractal matrices. */
#include "npusim/tensor.h"

#include <string.h>

#include "npusim/errors.h"

static int mul_overflows(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

int npu_layout_init(npu_layout *l, uint64_t n, uint64_t c, uint64_t h, uint64_t w, unsigned esize)
{
    memset(l, 0, sizeof *l);
    if (n == 0 || c == 0 || h == 0 || w == 0 || (esize != 2 && esize != 4))
        return NPU_EINVAL;
    l->n = n;
    l->c = c;
    l->h = h;
    l->w = w;
    l->esize = esize;
    l->c0 = NPU_C0_BYTES / esize;
    l->c1 = c / l->c0 + (c % l->c0 != 0);
    uint64_t t;
    if (mul_overflows(n, l->c1, &t) || mul_overflows(t, h, &t) || mul_overflows(t, w, &t) ||
        mul_overflows(t, NPU_C0_BYTES, &t))
        return NPU_EINVAL;
    return NPU_OK;
}

uint64_t npu_layout_logical_elems(const npu_layout *l) { return l->n * l->c * l->h * l->w; }
uint64_t npu_layout_elems(const npu_layout *l) { return l->n * l->c1 * l->h * l->w * l->c0; }
uint64_t npu_layout_bytes(const npu_layout *l) { return npu_layout_elems(l) * l->esize; }

uint64_t npu_layout_offset(const npu_layout *l, uint64_t n, uint64_t c, uint64_t h, uint64_t w)
{
    uint64_t c1 = c / l->c0, c0 = c % l->c0;
    return (((n * l->c1 + c1) * l->h + h) * l->w + w) * l->c0 + c0;
}

/* n elements of es bytes from src (dst_step and src_step bytes apart) to
 * dst. The sizes of the dtypes are constants here, so each copy is one load
 * and one store rather than a call to memcpy. */
static void strided_copy(uint8_t *dst, uint64_t dst_step, const uint8_t *src, uint64_t src_step, uint64_t n,
                         unsigned es)
{
    if (es == 2)
        for (uint64_t i = 0; i < n; i++, dst += dst_step, src += src_step)
            memcpy(dst, src, 2);
    else if (es == 4)
        for (uint64_t i = 0; i < n; i++, dst += dst_step, src += src_step)
            memcpy(dst, src, 4);
    else
        for (uint64_t i = 0; i < n; i++, dst += dst_step, src += src_step)
            memcpy(dst, src, es);
}

/* One channel plane at a time: its h*w elements are consecutive in NCHW and
 * c0 elements apart in NC1HWC0, so npu_layout_offset (two divisions) is
 * needed once per plane, not per element. */
void npu_pack_nc1hwc0(const npu_layout *l, const void *nchw, void *nc1hwc0)
{
    const uint8_t *src = nchw;
    uint8_t *dst = nc1hwc0;
    const unsigned es = l->esize;
    const uint64_t hw = l->h * l->w, step = l->c0 * es;
    memset(dst, 0, npu_layout_bytes(l));
    for (uint64_t n = 0; n < l->n; n++)
        for (uint64_t c = 0; c < l->c; c++) {
            const uint8_t *s = src + (n * l->c + c) * hw * es;
            uint8_t *d = dst + npu_layout_offset(l, n, c, 0, 0) * es;
            strided_copy(d, step, s, es, hw, es);
        }
}

void npu_unpack_nc1hwc0(const npu_layout *l, const void *nc1hwc0, void *nchw)
{
    const uint8_t *src = nc1hwc0;
    uint8_t *dst = nchw;
    const unsigned es = l->esize;
    const uint64_t hw = l->h * l->w, step = l->c0 * es;
    for (uint64_t n = 0; n < l->n; n++)
        for (uint64_t c = 0; c < l->c; c++) {
            const uint8_t *s = src + npu_layout_offset(l, n, c, 0, 0) * es;
            uint8_t *d = dst + (n * l->c + c) * hw * es;
            strided_copy(d, es, s, step, hw, es);
        }
}

uint64_t npu_padding_nonzero(const npu_layout *l, const void *nc1hwc0)
{
    const uint8_t *src = nc1hwc0;
    uint64_t bad = 0;
    if (l->c % l->c0 == 0)
        return 0;
    const uint64_t c1 = l->c1 - 1; /* only the last C1 block has padded channels */
    for (uint64_t n = 0; n < l->n; n++)
        for (uint64_t h = 0; h < l->h; h++)
            for (uint64_t w = 0; w < l->w; w++)
                for (uint64_t c0 = l->c % l->c0; c0 < l->c0; c0++) {
                    uint64_t off = ((((n * l->c1 + c1) * l->h + h) * l->w + w) * l->c0 + c0);
                    const uint8_t *e = src + off * l->esize;
                    for (unsigned b = 0; b < l->esize; b++)
                        if (e[b]) {
                            bad++;
                            break;
                        }
                }
    return bad;
}

/* ---- fractal matrices (the cube's operands and results) ---------------- */

int npu_matrix_layout_init(npu_matrix_layout *l, uint64_t rows, uint64_t cols, unsigned esize)
{
    memset(l, 0, sizeof *l);
    if (rows == 0 || cols == 0 || (esize != 2 && esize != 4))
        return NPU_EINVAL;
    l->rows = rows;
    l->cols = cols;
    l->esize = esize;
    l->rows1 = rows / NPU_FRACTAL + (rows % NPU_FRACTAL != 0);
    l->cols1 = cols / NPU_FRACTAL + (cols % NPU_FRACTAL != 0);
    uint64_t t;
    if (mul_overflows(l->rows1, l->cols1, &t) || mul_overflows(t, NPU_FRACTAL * NPU_FRACTAL * esize, &t))
        return NPU_EINVAL;
    return NPU_OK;
}

uint64_t npu_matrix_layout_bytes(const npu_matrix_layout *l)
{
    return l->rows1 * l->cols1 * NPU_FRACTAL * NPU_FRACTAL * l->esize;
}

uint64_t npu_matrix_layout_offset(const npu_matrix_layout *l, uint64_t r, uint64_t c)
{
    const uint64_t fractal = (r / NPU_FRACTAL) * l->cols1 + c / NPU_FRACTAL;
    return fractal * NPU_FRACTAL * NPU_FRACTAL + (r % NPU_FRACTAL) * NPU_FRACTAL + c % NPU_FRACTAL;
}

/* A row's 16-element pieces are contiguous in both layouts. */
void npu_pack_fractal(const npu_matrix_layout *l, const void *rowmajor, void *fractal)
{
    const uint8_t *src = rowmajor;
    uint8_t *dst = fractal;
    const unsigned es = l->esize;
    memset(dst, 0, npu_matrix_layout_bytes(l));
    for (uint64_t r = 0; r < l->rows; r++)
        for (uint64_t c = 0; c < l->cols; c += NPU_FRACTAL) {
            const uint64_t n = l->cols - c < NPU_FRACTAL ? l->cols - c : NPU_FRACTAL;
            memcpy(dst + npu_matrix_layout_offset(l, r, c) * es, src + (r * l->cols + c) * es, n * es);
        }
}

void npu_unpack_fractal(const npu_matrix_layout *l, const void *fractal, void *rowmajor)
{
    const uint8_t *src = fractal;
    uint8_t *dst = rowmajor;
    const unsigned es = l->esize;
    for (uint64_t r = 0; r < l->rows; r++)
        for (uint64_t c = 0; c < l->cols; c += NPU_FRACTAL) {
            const uint64_t n = l->cols - c < NPU_FRACTAL ? l->cols - c : NPU_FRACTAL;
            memcpy(dst + (r * l->cols + c) * es, src + npu_matrix_layout_offset(l, r, c) * es, n * es);
        }
}
