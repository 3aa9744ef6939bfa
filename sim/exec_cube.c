/* Semantics of the cube unit's moves and multiply-accumulate (mvla, mvlb,
 * im2dim, mvlai, mmdim, mmad, mmadz, mvub; dmaldl1 is a DMA, in exec_mem.c). Layouts and
 * rounding: docs/cube.md.
 *
 * Like the DMA, every operation is functional at issue: it has completed
 * when the instruction retires. Timing models see it through
 * npu_step_info.pipe and complete its tag when its pipe has run it. Every
 * operand range is checked before any byte moves. */
#include "exec.h"
#include "race.h"

#include <stdlib.h>

#include "npusim/tensor.h"

enum {
    FRACTAL = NPU_FRACTAL,                   /* elements per fractal side (tensor.h) */
    FRACTAL_F16_BYTES = FRACTAL * FRACTAL * 2, /* 512: one fp16 fractal of L0A, L0B or L1 */
    FRACTAL_F32_BYTES = FRACTAL * FRACTAL * 4, /* 1024: one fp32 fractal of L0C */
    MOVE_BLOCK = 32,                         /* mvub moves whole C0 blocks */
    MM_DIM_MAX = 4096,                       /* fractals per mmdim count */
    IM2_MAP_MAX = 65535                      /* rows or columns of an im2dim feature map */
};

/* One buffer operand: [addr, addr + bytes) inside a buffer of `size` bytes,
 * addr a multiple of `align`. */
typedef struct cube_range {
    const char *buffer; /* "L1", "L0A", ... */
    uint64_t addr, bytes, size, align;
    npu_trap_kind bounds_trap;
} cube_range;

static int range_ok(npu_core *c, const char *what, const cube_range *r)
{
    if (r->addr % r->align) {
        npu_core_raise(c, NPU_TRAP_MISALIGNED, r->addr, "%s: %s address 0x%llx is not %llu-byte aligned",
                       what, r->buffer, (unsigned long long)r->addr, (unsigned long long)r->align);
        return 0;
    }
    if (r->addr > r->size || r->bytes > r->size - r->addr) {
        npu_core_raise(c, r->bounds_trap, r->addr > r->size ? r->addr : r->size,
                       "%s: %llu bytes at %s 0x%llx reach outside the %llu-byte %s", what,
                       (unsigned long long)r->bytes, r->buffer, (unsigned long long)r->addr,
                       (unsigned long long)r->size, r->buffer);
        return 0;
    }
    return 1;
}

/* 0 and a trap when the host cannot give the cube its buffers. */
static int buffers_ok(npu_core *c, const char *what)
{
    if (npu_core_cube_buffers(c) == NPU_OK)
        return 1;
    npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "%s: out of host memory for the cube's buffers", what);
    return 0;
}

/* The tag an operation completes (its rd field). */
static unsigned pipe_tag(const npu_insn *in)
{
    return in->rd & (NPU_NUM_DMA_TAGS - 1);
}

static void issue_pipe(npu_core *c, const npu_insn *in, npu_step_info *info, npu_pipe pipe, uint64_t bytes,
                       uint64_t fractals, uint64_t ub_addr)
{
    const unsigned tag = pipe_tag(in);
    c->dma_tags_issued |= 1u << tag;
    if (info) {
        info->has_pipe = 1;
        info->pipe.pipe = pipe;
        info->pipe.tag = tag;
        info->pipe.bytes = bytes;
        info->pipe.fractals = fractals;
        info->pipe.ub_addr = ub_addr;
    }
}

/* mvla / mvlb: sc bytes of whole fractals from L1[sb] to L0A or L0B[sa]. */
static void move_from_l1(npu_core *c, const npu_insn *in, npu_step_info *info, int to_b)
{
    const char *what = to_b ? "mvlb" : "mvla";
    const uint64_t bytes = sreg(c, in->rs3);
    if (bytes == 0 || bytes % FRACTAL_F16_BYTES) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "%s: %llu bytes is not a positive multiple of %d (whole fractals)",
                       what, (unsigned long long)bytes, FRACTAL_F16_BYTES);
        return;
    }
    const cube_range src = { "L1", sreg(c, in->rs2), bytes, c->cfg.l1_bytes, MOVE_BLOCK, NPU_TRAP_CUBE_BOUNDS };
    const cube_range dst = { to_b ? "L0B" : "L0A", sreg(c, in->rs1), bytes,
                             to_b ? c->cfg.l0b_bytes : c->cfg.l0a_bytes, FRACTAL_F16_BYTES, NPU_TRAP_CUBE_BOUNDS };
    const npu_span spans[2] = { npu_span_range(NPU_SPACE_L1, 0, src.addr, bytes),
                                npu_span_range(to_b ? NPU_SPACE_L0B : NPU_SPACE_L0A, 1, dst.addr, bytes) };
    if (!range_ok(c, what, &src) || !range_ok(c, what, &dst) || !buffers_ok(c, what) ||
        !npu_race_access(c, NPU_AGENT_MTE1, pipe_tag(in), spans, 2))
        return;
    memcpy((to_b ? c->l0b : c->l0a) + dst.addr, c->l1 + src.addr, bytes);
    issue_pipe(c, in, info, NPU_PIPE_MTE1, bytes, 0, 0);
}

EXEC(MVLA) { move_from_l1(c, in, info, 0); }
EXEC(MVLB) { move_from_l1(c, in, info, 1); }

/* im2dim: the feature map mvlai reads (H rows, W columns of 32-byte C0
 * blocks per C1 plane, planes H x W blocks apart in L1) and the kernel that
 * slides over it (kh x kw taps, stride, zero padding on every side). */
EXEC(IM2DIM)
{
    const uint64_t h = sreg(c, in->rs1), w = sreg(c, in->rs2), packed = sreg(c, in->rs3);
    const uint64_t kh = packed & 0xff, kw = (packed >> 8) & 0xff, stride = (packed >> 16) & 0xff,
                   pad = (packed >> 24) & 0xff;
    if (h < 1 || h > IM2_MAP_MAX || w < 1 || w > IM2_MAP_MAX) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "im2dim: a %llu x %llu feature map is not 1 .. %d on each side",
                       (unsigned long long)h, (unsigned long long)w, IM2_MAP_MAX);
        return;
    }
    if (kh < 1 || kw < 1 || stride < 1 || packed >> 32) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0,
                       "im2dim: kernel %llu x %llu, stride %llu (0x%llx): each 1 .. 255, nothing past bit 31",
                       (unsigned long long)kh, (unsigned long long)kw, (unsigned long long)stride,
                       (unsigned long long)packed);
        return;
    }
    if (h + 2 * pad < kh || w + 2 * pad < kw) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "im2dim: a %llu x %llu kernel does not fit the %llu x %llu map padded by %llu",
                       (unsigned long long)kh, (unsigned long long)kw, (unsigned long long)h, (unsigned long long)w,
                       (unsigned long long)pad);
        return;
    }
    const uint64_t d[6] = { h, w, kh, kw, stride, pad };
    memcpy(c->im2_dim, d, sizeof d);
}

/* mvlai: the m x k fp16 fractals of A = im2col(feature map) into L0A[sa]
 * (m, k from mmdim). Row p of A is output pixel p (row-major over Ho x Wo),
 * column 16 q + c0 is channel c0 of tap q = (c1 kh + i) kw + j: input pixel
 * (oh stride - pad + i, ow stride - pad + j) of C1 plane c1, or zero outside
 * the map, and rows p >= Ho Wo are zero. Fractal (a, b) of the move holds
 * rows p0 + 16 a .. + 15 and tap q0 + b (sc = p0 | q0 << 32). */
EXEC(MVLAI)
{
    const uint64_t m = c->mm_dim[0], k = c->mm_dim[1];
    const uint64_t h = c->im2_dim[0], w = c->im2_dim[1], kh = c->im2_dim[2], kw = c->im2_dim[3],
                   stride = c->im2_dim[4], pad = c->im2_dim[5];
    const uint64_t pos = sreg(c, in->rs3), p0 = pos & 0xffffffffu, q0 = pos >> 32;
    const uint64_t ho = (h + 2 * pad - kh) / stride + 1, wo = (w + 2 * pad - kw) / stride + 1;
    const uint64_t plane = h * w * MOVE_BLOCK, taps = kh * kw, planes = (q0 + k - 1) / taps + 1;
    const cube_range dst = { "L0A", sreg(c, in->rs1), m * k * FRACTAL_F16_BYTES, c->cfg.l0a_bytes,
                             FRACTAL_F16_BYTES, NPU_TRAP_CUBE_BOUNDS };
    /* The planes read up to tap q0 + k - 1 (q0 < 2^32; saturated where the
     * product would wrap, so a huge q0 traps instead of passing the check). */
    const cube_range src = { "L1", sreg(c, in->rs2), planes > UINT64_MAX / plane ? UINT64_MAX : planes * plane,
                             c->cfg.l1_bytes, MOVE_BLOCK, NPU_TRAP_CUBE_BOUNDS };
    if (!range_ok(c, "mvlai", &dst) || !range_ok(c, "mvlai", &src) || !buffers_ok(c, "mvlai"))
        return;
    /* The map rows it reads (the race check): those of its output pixels'
     * first to last tap row, in each C1 plane from its first tap's to its
     * last's; none when every pixel lies past the map's output. */
    const uint64_t p_end = p0 + m * FRACTAL < ho * wo ? p0 + m * FRACTAL : ho * wo;
    int64_t row_lo = 0, row_hi = 0; /* [row_lo, row_hi) inside the map */
    if (p0 < p_end) {
        row_lo = (int64_t)(p0 / wo * stride) - (int64_t)pad;
        row_hi = (int64_t)((p_end - 1) / wo * stride + kh) - (int64_t)pad;
        row_lo = row_lo < 0 ? 0 : row_lo;
        row_hi = row_hi > (int64_t)h ? (int64_t)h : row_hi;
    }
    const uint64_t rows = row_hi > row_lo ? (uint64_t)(row_hi - row_lo) : 0;
    npu_span spans[2] = { { src.addr + q0 / taps * plane + (uint64_t)row_lo * w * MOVE_BLOCK, rows * w * MOVE_BLOCK,
                            1, (q0 + k - 1) / taps - q0 / taps + 1, 0, (int64_t)plane, NPU_SPACE_L1, 0 },
                          npu_span_range(NPU_SPACE_L0A, 1, dst.addr, dst.bytes) };
    if (!npu_race_access(c, NPU_AGENT_MTE1, pipe_tag(in), rows ? spans : spans + 1, rows ? 2 : 1))
        return;
    uint8_t *out = c->l0a + dst.addr;
    const uint8_t *map = c->l1 + src.addr;
    for (uint64_t a = 0; a < m; a++)
        for (uint64_t b = 0; b < k; b++) {
            const uint64_t q = q0 + b, c1 = q / taps, i = q % taps / kw, j = q % kw;
            for (uint64_t r = 0; r < FRACTAL; r++) {
                uint8_t *row = out + (a * k + b) * FRACTAL_F16_BYTES + r * MOVE_BLOCK;
                const uint64_t p = p0 + a * FRACTAL + r;
                const uint64_t ih = p / wo * stride + i, iw = p % wo * stride + j; /* + pad */
                if (p >= ho * wo || ih < pad || iw < pad || ih - pad >= h || iw - pad >= w)
                    memset(row, 0, MOVE_BLOCK);
                else
                    memcpy(row, map + c1 * plane + ((ih - pad) * w + (iw - pad)) * MOVE_BLOCK, MOVE_BLOCK);
            }
        }
    issue_pipe(c, in, info, NPU_PIPE_MTE1, dst.bytes, 0, 0);
}

EXEC(MMDIM)
{
    const uint64_t d[3] = { sreg(c, in->rs1), sreg(c, in->rs2), sreg(c, in->rs3) };
    static const char names[3] = { 'm', 'k', 'n' };
    for (int i = 0; i < 3; i++) {
        if (d[i] < 1 || d[i] > MM_DIM_MAX) {
            npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "mmdim: %c = %llu is not in 1..%d fractals", names[i],
                           (unsigned long long)d[i], MM_DIM_MAX);
            return;
        }
    }
    memcpy(c->mm_dim, d, sizeof d);
}

/* Lane pairs of binary64 (and of the fp32 accumulators they add to): the
 * host's mmad sums 16 elements of C side by side, each in its own order. */
#define CUBE_LANES 2
typedef double cube_lanes __attribute__((vector_size(CUBE_LANES * sizeof(double))));
typedef float cube_acc __attribute__((vector_size(CUBE_LANES * sizeof(float))));

static inline cube_lanes lanes_at(const double *p)
{
    cube_lanes v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* n fp16 values at src as binary64 at dst. */
static void widen_halves(const uint8_t *src, double *dst, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, src + 2 * i, 2);
        dst[i] = f16_to_f32_inline(h);
    }
}

/* C (m x n fp32 fractals at L0C[sa]) = (zero ? 0 : C) + A (m x k fp16
 * fractals at L0A[sb]) x B (k x n fp16 fractals at L0B[sc]). Each fractal is
 * 16 x 16 elements, row-major; the fractals of a tile are row-major too.
 * Per output element and per k-fractal, the 16 products are exact, summed
 * in binary64 in order, and added to the accumulator with one rounding to
 * binary32 (docs/cube.md). */
static void matmul(npu_core *c, const npu_insn *in, npu_step_info *info, int zero)
{
    const char *what = zero ? "mmadz" : "mmad";
    const uint64_t m = c->mm_dim[0], k = c->mm_dim[1], n = c->mm_dim[2];
    const cube_range cr = { "L0C", sreg(c, in->rs1), m * n * FRACTAL_F32_BYTES, c->cfg.l0c_bytes,
                            FRACTAL_F16_BYTES, NPU_TRAP_CUBE_BOUNDS };
    const cube_range ar = { "L0A", sreg(c, in->rs2), m * k * FRACTAL_F16_BYTES, c->cfg.l0a_bytes,
                            FRACTAL_F16_BYTES, NPU_TRAP_CUBE_BOUNDS };
    const cube_range br = { "L0B", sreg(c, in->rs3), k * n * FRACTAL_F16_BYTES, c->cfg.l0b_bytes,
                            FRACTAL_F16_BYTES, NPU_TRAP_CUBE_BOUNDS };
    const npu_span spans[3] = { npu_span_range(NPU_SPACE_L0A, 0, ar.addr, ar.bytes),
                                npu_span_range(NPU_SPACE_L0B, 0, br.addr, br.bytes),
                                npu_span_range(NPU_SPACE_L0C, 1, cr.addr, cr.bytes) };
    if (!range_ok(c, what, &cr) || !range_ok(c, what, &ar) || !range_ok(c, what, &br) || !buffers_ok(c, what) ||
        !npu_race_access(c, NPU_AGENT_CUBE, pipe_tag(in), spans, 3))
        return;

    /* The operands as binary64, converted once (their products are then
     * exact), both in their fractal layout: a row of a B fractal holds the
     * 16 columns that share one element of A. */
    const uint64_t a_elems = ar.bytes / 2, b_elems = br.bytes / 2;
    double *a = malloc((a_elems + b_elems) * sizeof *a);
    if (!a) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "%s: out of host memory", what);  /* before any change */
        return;
    }
    double *b = a + a_elems;
    widen_halves(c->l0a + ar.addr, a, a_elems);
    widen_halves(c->l0b + br.addr, b, b_elems);

    /* A fractal row of C at a time, its 16 columns in lanes: each element's
     * sum of products still runs in t order from 0, beside the others. */
    uint8_t *pc = c->l0c + cr.addr;
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t j = 0; j < n; j++) {
            float *cf = (float *)(void *)(pc + (i * n + j) * FRACTAL_F32_BYTES);
            for (unsigned r = 0; r < FRACTAL; r++) {
                cube_acc acc[FRACTAL / CUBE_LANES];
                if (zero)
                    memset(acc, 0, sizeof acc);
                else
                    memcpy(acc, &cf[r * FRACTAL], sizeof acc);
                for (uint64_t kk = 0; kk < k; kk++) {
                    const double *ar_row = a + ((i * k + kk) * FRACTAL + r) * FRACTAL;
                    const double *bf = b + (kk * n + j) * FRACTAL * FRACTAL; /* row t at bf + 16 t */
                    /* Eight lane pairs: the row's 16 columns, their sums independent. */
                    cube_lanes s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 }, s4 = { 0 }, s5 = { 0 }, s6 = { 0 },
                               s7 = { 0 };
                    for (unsigned t = 0; t < FRACTAL; t++) {
                        const double at = ar_row[t];
                        const double *bt = bf + t * FRACTAL;
                        s0 += at * lanes_at(bt);
                        s1 += at * lanes_at(bt + 2);
                        s2 += at * lanes_at(bt + 4);
                        s3 += at * lanes_at(bt + 6);
                        s4 += at * lanes_at(bt + 8);
                        s5 += at * lanes_at(bt + 10);
                        s6 += at * lanes_at(bt + 12);
                        s7 += at * lanes_at(bt + 14);
                    }
                    const cube_lanes sum[FRACTAL / CUBE_LANES] = { s0, s1, s2, s3, s4, s5, s6, s7 };
                    for (unsigned q = 0; q < FRACTAL / CUBE_LANES; q++) {
                        const cube_lanes wide = __builtin_convertvector(acc[q], cube_lanes);
                        acc[q] = __builtin_convertvector(wide + sum[q], cube_acc);
                    }
                }
                memcpy(&cf[r * FRACTAL], acc, sizeof acc);
            }
        }
    free(a);
    issue_pipe(c, in, info, NPU_PIPE_CUBE, 0, m * k * n, 0);
}

EXEC(MMAD) { matmul(c, in, info, 0); }
EXEC(MMADZ) { matmul(c, in, info, 1); }

/* mvub: sc bytes from L0C[sb] to UB[sa], as they lie (fp32 fractals). */
EXEC(MVUB)
{
    const uint64_t bytes = sreg(c, in->rs3);
    if (bytes == 0 || bytes % MOVE_BLOCK) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "mvub: %llu bytes is not a positive multiple of %d",
                       (unsigned long long)bytes, MOVE_BLOCK);
        return;
    }
    const cube_range src = { "L0C", sreg(c, in->rs2), bytes, c->cfg.l0c_bytes, MOVE_BLOCK, NPU_TRAP_CUBE_BOUNDS };
    const cube_range dst = { "UB", sreg(c, in->rs1), bytes, c->cfg.ub_bytes, MOVE_BLOCK, NPU_TRAP_UB_BOUNDS };
    const npu_span spans[2] = { npu_span_range(NPU_SPACE_L0C, 0, src.addr, bytes),
                                npu_span_range(NPU_SPACE_UB, 1, dst.addr, bytes) };
    if (!range_ok(c, "mvub", &src) || !range_ok(c, "mvub", &dst) || !buffers_ok(c, "mvub") ||
        !npu_race_access(c, NPU_AGENT_FIX, pipe_tag(in), spans, 2))
        return;
    memcpy(c->ub + dst.addr, c->l0c + src.addr, bytes);
    issue_pipe(c, in, info, NPU_PIPE_FIX, bytes, 0, dst.addr);
}
