/* Semantics of the UB loads/stores (sld, sst, vld, vst, vlds, vsts) and the
 * DMA instructions (dmadim, dmald, dmast, dmawait). Every access is checked
 * in full before any byte moves, so a faulting instruction changes nothing.
 *
 * The DMA is functional here: a transfer completes when it issues. Timing
 * models see it through npu_step_info.dma. */
#include "exec.h"
#include "race.h"

#include <string.h>

/* ---- scalar loads and stores -------------------------------------------- */

/* 0 and a trap when the 8-byte access at addr is misaligned or outside UB. */
static int scalar_access_ok(npu_core *c, const char *what, uint64_t addr)
{
    uint64_t size = c->cfg.ub_bytes;
    if (addr & 7) {
        npu_core_raise(c, NPU_TRAP_MISALIGNED, addr,
                       "%s: UB address 0x%llx is not 8-byte aligned", what,
                       (unsigned long long)addr);
        return 0;
    }
    if (size < 8 || addr > size - 8) {
        npu_core_raise(c, NPU_TRAP_UB_BOUNDS, addr >= size ? addr : size,
                       "%s: 8 bytes at UB 0x%llx are outside the %llu-byte UB", what,
                       (unsigned long long)addr, (unsigned long long)size);
        return 0;
    }
    return 1;
}

static void note_scalar_access(npu_step_info *info, uint64_t addr)
{
    if (info) {
        info->ub_addr = addr;
        info->ub_bytes = 8;
        info->ub_lanes = 1;
    }
}

EXEC(SLD)
{
    uint64_t addr = sreg(c, in->rs1) + (uint64_t)(int64_t)in->imm;
    const npu_span span = npu_span_range(NPU_SPACE_UB, 0, addr, 8);
    if (!scalar_access_ok(c, "sld", addr) || !npu_race_access(c, NPU_AGENT_CORE, 0, &span, 1))
        return;
    uint64_t x = 0;
    for (int k = 7; k >= 0; k--)
        x = x << 8 | c->ub[addr + (unsigned)k];
    set_sreg(c, in->rd, x);
    note_scalar_access(info, addr);
}

EXEC(SST)
{
    uint64_t addr = sreg(c, in->rs1) + (uint64_t)(int64_t)in->imm;
    const npu_span span = npu_span_range(NPU_SPACE_UB, 1, addr, 8);
    if (!scalar_access_ok(c, "sst", addr) || !npu_race_access(c, NPU_AGENT_CORE, 0, &span, 1))
        return;
    uint64_t x = sreg(c, in->rs2);
    for (unsigned k = 0; k < 8; k++)
        c->ub[addr + k] = (uint8_t)(x >> (8 * k));
    note_scalar_access(info, addr);
}

/* ---- vector loads and stores ----------------------------------------------
 * Lane i lives at base + i * stride (stride = lane size for vld/vst). Active
 * lanes are checked in lane order; the first bad one traps: misaligned (addr
 * = its address) or outside UB (addr = its first byte outside UB). Inactive
 * lanes are never checked, read or written. */

static int vector_access_ok(npu_core *c, const npu_insn *in, uint64_t base, uint64_t stride)
{
    const char *what = npu_insn_table[in->op].mnemonic;
    unsigned es = esize_of(in->dt), n = lanes_of(c, in->dt);
    uint64_t size = c->cfg.ub_bytes;
    for (unsigned i = 0; i < n; i++) {
        if (!lane_active(c, in, i))
            continue;
        uint64_t a = base + (uint64_t)i * stride;
        if (a % es) {
            npu_core_raise(c, NPU_TRAP_MISALIGNED, a,
                           "%s.%s: lane %u at UB 0x%llx is not %u-byte aligned", what,
                           npu_dtype_name((npu_dtype)in->dt), i, (unsigned long long)a, es);
            return 0;
        }
        if (size < es || a > size - es) {
            npu_core_raise(c, NPU_TRAP_UB_BOUNDS, a >= size ? a : size,
                           "%s.%s: lane %u at UB 0x%llx is outside the %llu-byte UB", what,
                           npu_dtype_name((npu_dtype)in->dt), i, (unsigned long long)a,
                           (unsigned long long)size);
            return 0;
        }
    }
    return 1;
}

/* The common case in one piece: every lane active, unit stride, aligned
 * and inside the UB. Then the lane-by-lane checks all pass and the lanes are
 * one contiguous run of bytes, so one copy does what the loop below would. */
static int whole_vector_access(npu_core *c, const npu_insn *in, npu_step_info *info, int store,
                               uint64_t base, uint64_t stride)
{
    const unsigned lanes = lanes_of(c, in->dt);
    const uint64_t es = esize_of(in->dt), bytes = lanes * es, size = c->cfg.ub_bytes;
    if (in->pm || stride != es || (base & (es - 1)) || size < bytes || base > size - bytes) /* es: 2 or 4 */
        return 0;
    const npu_span span = npu_span_range(NPU_SPACE_UB, store, base, bytes);
    if (!npu_race_access(c, NPU_AGENT_CORE, 0, &span, 1))
        return 1;
    uint8_t *v = vreg(c, in->rd);
    if (store)
        memcpy(c->ub + base, v, bytes);
    else
        memcpy(v, c->ub + base, bytes);
    if (info) {
        info->ub_addr = base;
        info->ub_bytes = bytes;
        info->ub_stride = 0;
        info->ub_lanes = lanes;
    }
    return 1;
}

static void vector_access(npu_core *c, const npu_insn *in, npu_step_info *info, int store,
                          uint64_t base, uint64_t stride, int64_t reported_stride)
{
    if (reported_stride == 0 && whole_vector_access(c, in, info, store, base, stride))
        return;
    if (!vector_access_ok(c, in, base, stride))
        return;
    unsigned es = esize_of(in->dt), n = lanes_of(c, in->dt), active = 0;
    if (c->race) { /* the active lanes' bytes, lane order: first to last active lane */
        unsigned first = n, last = 0;
        for (unsigned i = 0; i < n; i++)
            if (lane_active(c, in, i)) {
                first = i < first ? i : first;
                last = i;
            }
        if (first < n) {
            npu_span span = { base + (uint64_t)first * stride, es, last - first + 1, 1, (int64_t)stride, 0,
                              NPU_SPACE_UB, (uint8_t)store };
            if (!npu_race_access(c, NPU_AGENT_CORE, 0, &span, 1))
                return;
        }
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    uint8_t *v = vreg(c, in->rd);
    for (unsigned i = 0; i < n; i++) {
        if (!lane_active(c, in, i)) {
            if (!store) /* masked loads zero their inactive lanes: no merge, no false dependency */
                memset(v + i * es, 0, es);
            continue;
        }
        uint64_t a = base + (uint64_t)i * stride;
        if (store)
            memcpy(c->ub + a, v + i * es, es); /* both sides little-endian bytes */
        else
            memcpy(v + i * es, c->ub + a, es);
        active++;
        lo = a < lo ? a : lo;
        hi = a + es > hi ? a + es : hi;
    }
    if (info && active) {
        info->ub_addr = lo;
        info->ub_bytes = hi - lo;
        info->ub_stride = reported_stride;
        info->ub_lanes = active;
    }
}

/* The offset counts bytes, or vector lengths when the `vl` bit is set. */
#define VMEM_BASE \
    (sreg(c, in->rs1) + (uint64_t)(int64_t)in->imm * (in->vl ? c->cfg.vlen_bits / 8u : 1u))

EXEC(VLD) { vector_access(c, in, info, 0, VMEM_BASE, esize_of(in->dt), 0); }
EXEC(VST) { vector_access(c, in, info, 1, VMEM_BASE, esize_of(in->dt), 0); }
EXEC(VLDS) { vector_access(c, in, info, 0, VMEM_BASE, sreg(c, in->rs2), (int64_t)sreg(c, in->rs2)); }
EXEC(VSTS) { vector_access(c, in, info, 1, VMEM_BASE, sreg(c, in->rs2), (int64_t)sreg(c, in->rs2)); }

/* ---- DMA ---------------------------------------------------------------------
 * A transfer moves count[1] x count[0] rows of row_bytes; row (k1, k2) starts
 * at gm + k1*gm_stride[0] + k2*gm_stride[1] and ub + k1*ub_stride[0] +
 * k2*ub_stride[1]. The descriptor keeps its dimensions across transfers
 * until the next dmadim (reset: counts 1, strides 0, i.e. one row). */

enum {
    DMA_BLOCK = 32,                     /* bytes: one C0 block, the unit Ascend's MTE moves */
    DMA_MAX_COUNT_LOG2 = 32             /* rows per dimension: at most 2^32 */
};

EXEC(DMADIM)
{
    unsigned dim = in->rd;
    uint64_t count = sreg(c, in->rs1);
    if (dim < 1 || dim > 2) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0,
                       "illegal instruction: dmadim dimension %u (the descriptor has 1 and 2)", dim);
        return;
    }
    if (count == 0 || count > (1ull << DMA_MAX_COUNT_LOG2)) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0,
                       "dmadim %u: count %llu is not in 1..2^%d", dim, (unsigned long long)count,
                       DMA_MAX_COUNT_LOG2);
        return;
    }
    c->dma_desc.count[dim - 1] = count;
    c->dma_desc.gm_stride[dim - 1] = (int64_t)sreg(c, in->rs2);
    c->dma_desc.ub_stride[dim - 1] = (int64_t)sreg(c, in->rs3);
}

/* One side (GM or UB) of a transfer: its base, strides and memory size. */
typedef struct dma_side {
    const char *name;
    npu_trap_kind bounds_trap;
    uint64_t base;
    const int64_t *stride;
    uint64_t size;
} dma_side;

static int dma_side_aligned(npu_core *c, const char *what, const dma_side *s)
{
    if (s->base % DMA_BLOCK) {
        npu_core_raise(c, NPU_TRAP_MISALIGNED, s->base,
                       "%s: %s address 0x%llx is not %d-byte aligned", what, s->name,
                       (unsigned long long)s->base, DMA_BLOCK);
        return 0;
    }
    for (int d = 0; d < 2; d++) {
        if (c->dma_desc.count[d] > 1 && s->stride[d] % DMA_BLOCK) {
            uint64_t second = s->base + (uint64_t)s->stride[d];
            npu_core_raise(c, NPU_TRAP_MISALIGNED, second,
                           "%s: %s stride %lld of dimension %d is not a multiple of %d", what,
                           s->name, (long long)s->stride[d], d + 1, DMA_BLOCK);
            return 0;
        }
    }
    return 1;
}

/* Every row lies in [lowest row start, highest row start + row_bytes); with
 * counts <= 2^32 these sums fit easily in 128 bits. The trap address is the
 * lowest row start when it falls below 0 (wraps), else the first byte past
 * the end within the highest row. */
static int dma_side_in_bounds(npu_core *c, const char *what, const dma_side *s, uint64_t row)
{
    __int128 lo = (__int128)s->base, hi = (__int128)s->base;
    for (int d = 0; d < 2; d++) {
        __int128 span = (__int128)s->stride[d] * (__int128)(c->dma_desc.count[d] - 1);
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    if (lo < 0 || hi + (__int128)row > (__int128)s->size) {
        uint64_t bad = lo < 0 ? (uint64_t)lo : hi > (__int128)s->size ? (uint64_t)hi : s->size;
        npu_core_raise(c, s->bounds_trap, bad,
                       "%s: rows of %llu bytes from %s 0x%llx reach outside the %llu-byte %s",
                       what, (unsigned long long)row, s->name, (unsigned long long)s->base,
                       (unsigned long long)s->size, s->name);
        return 0;
    }
    return 1;
}

/* to_ub: GM -> local (dmald, or dmaldl1 when to_l1), else UB -> GM. */
static void dma_transfer(npu_core *c, const npu_insn *in, npu_step_info *info, int to_ub, int to_l1)
{
    const char *what = to_l1 ? "dmaldl1" : to_ub ? "dmald" : "dmast";
    const npu_dma_desc *desc = &c->dma_desc;
    uint64_t row = sreg(c, in->rs3);
    unsigned tag = in->rd & (NPU_NUM_DMA_TAGS - 1);
    dma_side gm = { "GM", NPU_TRAP_GM_BOUNDS, sreg(c, in->rs2), desc->gm_stride,
                    c->gm ? c->gm->size : 0 };
    dma_side ub = { "UB", NPU_TRAP_UB_BOUNDS, sreg(c, in->rs1), desc->ub_stride,
                    c->cfg.ub_bytes };
    if (to_l1) { /* the local side is the cube's L1 */
        ub.name = "L1";
        ub.bounds_trap = NPU_TRAP_CUBE_BOUNDS;
        ub.size = c->cfg.l1_bytes;
    }
    const dma_side *src = to_ub ? &gm : &ub, *dst = to_ub ? &ub : &gm;

    if (row == 0) {
        /* A transfer of nothing (a piece a kernel's count ran out for):
         * no bytes, no place in the queue (T7); its tag counts as used. */
        c->dma_tags_issued |= 1u << tag;
        return;
    }
    if (!dma_side_aligned(c, what, src) || !dma_side_aligned(c, what, dst))
        return;
    if (row % DMA_BLOCK) {
        npu_core_raise(c, NPU_TRAP_MISALIGNED, gm.base,
                       "%s: row of %llu bytes is not a multiple of %d", what,
                       (unsigned long long)row, DMA_BLOCK);
        return;
    }
    if (!dma_side_in_bounds(c, what, src, row) || !dma_side_in_bounds(c, what, dst, row))
        return;
    /* Rows may overlap (a stride of 0 repeats one), so in-bounds rows can
     * still add up to any amount: one transfer never moves more than all of
     * global memory, which also bounds the host work of this one step. */
    const unsigned __int128 moved = (unsigned __int128)row * desc->count[0] * desc->count[1];
    if (moved > (unsigned __int128)gm.size) {
        npu_core_raise(c, NPU_TRAP_DMA_SIZE, gm.base,
                       "%s: %llu x %llu rows of %llu bytes move more than the %llu-byte GM holds", what,
                       (unsigned long long)desc->count[1], (unsigned long long)desc->count[0],
                       (unsigned long long)row, (unsigned long long)gm.size);
        return;
    }

    if (to_l1 && npu_core_cube_buffers(c) != NPU_OK) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "dmaldl1: out of host memory for the cube's buffers");
        return;
    }
    const npu_span span = npu_span_dma(to_l1 ? NPU_SPACE_L1 : NPU_SPACE_UB, to_ub, ub.base, row, desc);
    if (!npu_race_access(c, NPU_AGENT_DMA, tag, &span, 1))
        return;
    const npu_span gm_span = npu_span_dma_gm(!to_ub, gm.base, row, desc);
    if (!npu_race_gm(c, tag, &gm_span))
        return;
    uint8_t *local = to_l1 ? c->l1 : c->ub;
    uint8_t *gm_data = c->gm ? c->gm->data : NULL;
    for (uint64_t k2 = 0; k2 < desc->count[1]; k2++) {
        for (uint64_t k1 = 0; k1 < desc->count[0]; k1++) {
            uint64_t g = gm.base + k1 * (uint64_t)desc->gm_stride[0] + k2 * (uint64_t)desc->gm_stride[1];
            uint64_t u = ub.base + k1 * (uint64_t)desc->ub_stride[0] + k2 * (uint64_t)desc->ub_stride[1];
            if (to_ub)
                memcpy(local + u, gm_data + g, row);
            else
                memcpy(gm_data + g, local + u, row);
        }
    }
    c->dma_tags_issued |= 1u << tag;

    if (info) {
        unsigned __int128 total = (unsigned __int128)row * desc->count[0] * desc->count[1];
        info->has_dma = 1;
        info->dma.to_ub = to_ub;
        info->dma.to_l1 = to_l1;
        info->dma.tag = tag;
        info->dma.ub_addr = ub.base;
        info->dma.gm_addr = gm.base;
        info->dma.row_bytes = row;
        info->dma.shape = *desc;
        info->dma.total_bytes = total > UINT64_MAX ? UINT64_MAX : (uint64_t)total;
    }
}

EXEC(DMALD) { dma_transfer(c, in, info, 1, 0); }
EXEC(DMAST) { dma_transfer(c, in, info, 0, 0); }
EXEC(DMALDL1) { dma_transfer(c, in, info, 1, 1); }

/* Functionally every DMA has completed at issue, so a wait only checks that
 * its tag was ever used (a wait on an unused tag is a kernel bug that would
 * hang real hardware or silently not wait). Issued tags stay marked. */
EXEC(DMAWAIT)
{
    int32_t tag = in->imm;
    if (tag < 0 || tag >= NPU_NUM_DMA_TAGS) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "illegal instruction: dmawait tag %d is not in 0..%d",
                       (int)tag, NPU_NUM_DMA_TAGS - 1);
        return;
    }
    if (!(c->dma_tags_issued & (1u << tag))) {
        npu_core_raise(c, NPU_TRAP_DMA_TAG, 0, "dmawait on tag %d, which no DMA or cube operation has used", (int)tag);
        return;
    }
    npu_race_wait(c, (unsigned)tag);
}
