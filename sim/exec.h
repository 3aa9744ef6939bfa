/* Internal to the functional core: one semantic body per instruction
 * (exec_<ID>, expanded from isa/insns.def) and the lane helpers and loops
 * those bodies are written with. */
#ifndef NPUSIM_SIM_EXEC_H
#define NPUSIM_SIM_EXEC_H

#include <stdint.h>
#include <string.h>

#include "npusim/core.h"
#include "npusim/fp16.h"
#include "fp16_inline.h"

#if defined(__GNUC__)
#define NPU_UNUSED __attribute__((unused))
/* Internal to libnpusim: hidden symbols are called directly, not through the
 * PLT (one indirect jump per executed instruction otherwise). */
#define NPU_INTERNAL __attribute__((visibility("hidden")))
#else
#define NPU_UNUSED
#define NPU_INTERNAL
#endif

/* Every body has this signature. The body reads its operands from `in`,
 * updates the core, sets c->next_pc when it redirects the PC, and on a fault
 * calls npu_core_raise() *before* changing any architectural state. */
#define EXEC(id) \
    NPU_INTERNAL void exec_##id(npu_core *c, const npu_insn *in, npu_step_info *info NPU_UNUSED)

#define INSN(id, ...) EXEC(id);
#include "insns.def"
#undef INSN

/* ---- registers ---------------------------------------------------------
 * Register fields are masked to their encoded width, so a hand-built
 * npu_insn cannot index outside the register files. */

static inline uint64_t sreg(const npu_core *c, unsigned r)
{
    return c->s[r & 31];
}

static inline void set_sreg(npu_core *c, unsigned r, uint64_t value)
{
    if (r & 31)
        c->s[r & 31] = value; /* writes to s0 are discarded */
}

enum { NPU_VREG_OPERAND = NPU_NUM_VREGS }; /* the broadcast operand of a vector-scalar form */

static inline uint8_t *vreg(npu_core *c, unsigned r)
{
    return c->v[r == NPU_VREG_OPERAND ? r : r & 31];
}

static inline uint64_t *preg(npu_core *c, unsigned r)
{
    return c->p[r & (NPU_NUM_PREGS - 1)];
}

static inline int pbit(const npu_core *c, unsigned r, unsigned lane)
{
    return (int)((c->p[r & (NPU_NUM_PREGS - 1)][lane >> 6] >> (lane & 63)) & 1);
}

/* Lane i is active unless the instruction is masked and p[pg] bit i is 0. */
static inline int lane_active(const npu_core *c, const npu_insn *in, unsigned lane)
{
    return !in->pm || pbit(c, in->pg, lane);
}

static inline unsigned lanes_of(const npu_core *c, unsigned dt)
{
    return npu_lanes(c, (npu_dtype)dt);
}

static inline unsigned esize_of(unsigned dt)
{
    return (dt == NPU_F16 || dt == NPU_I16) ? 2 : 4;
}

/* ---- lane access: little-endian lanes, independent of the host -------- */

/* On a little-endian host a lane is one unaligned load or store (memcpy);
 * the byte-by-byte form, which compilers do not fuse here, is the portable
 * fallback. Both read the same little-endian lane. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NPU_LITTLE_ENDIAN_HOST 1
#else
#define NPU_LITTLE_ENDIAN_HOST 0
#endif

static inline uint16_t get_u16(const uint8_t *v, unsigned i)
{
#if NPU_LITTLE_ENDIAN_HOST
    uint16_t x;
    memcpy(&x, v + 2 * i, sizeof x);
    return x;
#else
    return (uint16_t)(v[2 * i] | (v[2 * i + 1] << 8));
#endif
}

static inline void put_u16(uint8_t *v, unsigned i, uint16_t x)
{
#if NPU_LITTLE_ENDIAN_HOST
    memcpy(v + 2 * i, &x, sizeof x);
#else
    v[2 * i] = (uint8_t)x;
    v[2 * i + 1] = (uint8_t)(x >> 8);
#endif
}

static inline uint32_t get_u32(const uint8_t *v, unsigned i)
{
#if NPU_LITTLE_ENDIAN_HOST
    uint32_t x;
    memcpy(&x, v + 4 * i, sizeof x);
    return x;
#else
    return (uint32_t)v[4 * i] | (uint32_t)v[4 * i + 1] << 8 | (uint32_t)v[4 * i + 2] << 16 |
           (uint32_t)v[4 * i + 3] << 24;
#endif
}

static inline void put_u32(uint8_t *v, unsigned i, uint32_t x)
{
#if NPU_LITTLE_ENDIAN_HOST
    memcpy(v + 4 * i, &x, sizeof x);
#else
    v[4 * i] = (uint8_t)x;
    v[4 * i + 1] = (uint8_t)(x >> 8);
    v[4 * i + 2] = (uint8_t)(x >> 16);
    v[4 * i + 3] = (uint8_t)(x >> 24);
#endif
}

static inline int16_t get_i16(const uint8_t *v, unsigned i) { return (int16_t)get_u16(v, i); }
static inline void put_i16(uint8_t *v, unsigned i, int16_t x) { put_u16(v, i, (uint16_t)x); }
static inline int32_t get_i32(const uint8_t *v, unsigned i) { return (int32_t)get_u32(v, i); }
static inline void put_i32(uint8_t *v, unsigned i, int32_t x) { put_u32(v, i, (uint32_t)x); }
static inline float get_f32(const uint8_t *v, unsigned i) { return npu_f32_from_bits(get_u32(v, i)); }
static inline void put_f32(uint8_t *v, unsigned i, float x) { put_u32(v, i, npu_f32_bits(x)); }

/* An unmasked f32 instruction on a little-endian host takes the whole
 * register at once (lanes_simd.h: the same lane rules, 8 lanes at a time
 * where the host has AVX2; exec_vector.c, and exec_sfu.c in the exact mode). */
static inline int whole_f32(const npu_insn *in)
{
    return NPU_LITTLE_ENDIAN_HOST && in->dt == NPU_F32 && !in->pm;
}

/* ---- lane arithmetic ---------------------------------------------------- */

/* Any NaN a float lane produces is the canonical quiet NaN. */
static inline float canon32(float x)
{
    return x != x ? npu_f32_from_bits(NPU_F32_QNAN_BITS) : x;
}

/* f16 lane <-> binary64: widening is exact, narrowing rounds once. */
static inline double h2d(uint16_t h)
{
    return (double)f16_to_f32_inline(h);
}

static inline uint16_t d2h(double d)
{
    return f64_to_f16_inline(d);
}

static inline int f16_isnan(uint16_t h)
{
    return (h & 0x7fffu) > 0x7c00u;
}

/* ---- lane loops (Spike's VI_VFP_VV_LOOP idea) ----------------------------
 * VLANES runs BODY for every active lane i with `a`, `b`, `cc` read from
 * va, vb, vc and `r` preset to the old vd lane; BODY assigns r, which is then
 * written back. Lanes are read and written one index at a time, so vd may
 * alias any source. `lane_t`/`ulane_t` name the lane type and its unsigned
 * twin, `lane_bits` its width. */
#define VLANES(T, UT, BYTES, GET, PUT, BODY)                                               \
    do {                                                                                   \
        typedef T lane_t;                                                                  \
        typedef UT ulane_t NPU_UNUSED;                                                     \
        const unsigned lane_bits NPU_UNUSED = 8u * (BYTES);                                \
        const unsigned n_lanes_ = c->cfg.vlen_bits / (8u * (BYTES));                       \
        uint8_t *vd_ = vreg(c, in->rd);                                                    \
        const uint8_t *va_ = vreg(c, in->rs1), *vb_ = vreg(c, in->rs2), *vc_ = vreg(c, in->rs3); \
        /* lane_active(), read once: lane writes go through uint8_t pointers,      \
         * which would make the compiler reload in->pm and the mask every lane. */  \
        const int masked_ = in->pm;                                                        \
        const uint64_t *mask_ = preg(c, in->pg);                                           \
        for (unsigned i = 0; i < n_lanes_; i++) {                                          \
            if (masked_ && !((mask_[i >> 6] >> (i & 63)) & 1))                             \
                continue;                                                                  \
            lane_t a NPU_UNUSED = GET(va_, i);                                             \
            lane_t b NPU_UNUSED = GET(vb_, i);                                             \
            lane_t cc NPU_UNUSED = GET(vc_, i);                                            \
            lane_t r = GET(vd_, i);                                                        \
            BODY;                                                                          \
            PUT(vd_, i, r);                                                                \
        }                                                                                  \
    } while (0)

/* f16 lanes are raw binary16 bits (uint16_t); f32 lanes are floats; int
 * lanes are signed. Step has already rejected dtypes the row does not allow,
 * so a body left empty for a dtype is never reached. */
#define V_LOOP(BODY_F16, BODY_F32, BODY_I16, BODY_I32)                                    \
    switch (in->dt) {                                                                      \
    case NPU_F16: VLANES(uint16_t, uint16_t, 2, get_u16, put_u16, BODY_F16); break;       \
    case NPU_F32: VLANES(float, uint32_t, 4, get_f32, put_f32, BODY_F32); break;          \
    case NPU_I16: VLANES(int16_t, uint16_t, 2, get_i16, put_i16, BODY_I16); break;        \
    default: VLANES(int32_t, uint32_t, 4, get_i32, put_i32, BODY_I32); break;             \
    }

#define V_FP_LOOP(BODY_F16, BODY_F32) V_LOOP(BODY_F16, BODY_F32, (void)0, (void)0)
#define V_INT_LOOP(BODY) V_LOOP((void)0, (void)0, BODY, BODY)

/* Bitwise lanes: the dtype only sets the lane width (and so the mask grain). */
#define V_BITS_LOOP(BODY)                                                                  \
    switch (esize_of(in->dt)) {                                                            \
    case 2: VLANES(uint16_t, uint16_t, 2, get_u16, put_u16, BODY); break;                 \
    default: VLANES(uint32_t, uint32_t, 4, get_u32, put_u32, BODY); break;                \
    }

#endif
