/* Semantics of the vector ALU instructions: arithmetic, constants, compares,
 * select, bitwise logic, shifts and conversions.
 *
 * Lane rules (one place, so every body obeys them):
 *   f32  IEEE binary32 ops with round-to-nearest-even; subnormals kept; the
 *        build uses -ffp-contract=off so a*b+c never fuses by accident.
 *   f16  operands widened to binary64, where +, -, * are exact, then rounded
 *        once to binary16; fma via npu_f16_fma (correctly rounded).
 *   NaN  every arithmetic NaN result is the canonical quiet NaN. vabs and
 *        vneg are sign-bit operations (IEEE abs/negate), so they keep a NaN's
 *        payload and vneg(vneg(x)) == x bit for bit.
 *   int  two's complement, wrapping.
 * The unmasked f32 arithmetic and the f16 <-> f32 conversions take the whole
 * register through lanes_simd.h, which keeps these rules (and is held to its
 * plain loops by tests/test_exec.cc). */
#include "exec.h"
#include "lanes_simd.h"

#include <math.h>
#include <string.h>

/* Wrap an unsigned result into the signed lane type. */
#define WRAP(expr) ((lane_t)(ulane_t)(expr))
#define U32(x) ((uint32_t)(ulane_t)(x))

/* ---- arithmetic ------------------------------------------------------------ */

#define WHOLE_F32(OP)                                                                       \
    do {                                                                                    \
        if (whole_f32(in)) {                                                                \
            lanes_f32(OP, vreg(c, in->rd), vreg(c, in->rs1), vreg(c, in->rs2), lanes_of(c, NPU_F32)); \
            return;                                                                         \
        }                                                                                   \
    } while (0)

#define WHOLE_FMA(FORM)                                                                      \
    do {                                                                                    \
        if (whole_f32(in)) {                                                                \
            lanes_fma(FORM, vreg(c, in->rd), vreg(c, in->rs1), vreg(c, in->rs2), vreg(c, in->rs3), \
                      lanes_of(c, NPU_F32));                                                \
            return;                                                                         \
        }                                                                                   \
    } while (0)

EXEC(VADD)
{
    WHOLE_F32(LANES_ADD);
    V_LOOP(r = d2h(h2d(a) + h2d(b)), r = canon32(a + b),
           r = WRAP(U32(a) + U32(b)), r = WRAP(U32(a) + U32(b)));
}

EXEC(VSUB)
{
    WHOLE_F32(LANES_SUB);
    V_LOOP(r = d2h(h2d(a) - h2d(b)), r = canon32(a - b),
           r = WRAP(U32(a) - U32(b)), r = WRAP(U32(a) - U32(b)));
}

EXEC(VMUL)
{
    WHOLE_F32(LANES_MUL);
    V_LOOP(r = d2h(h2d(a) * h2d(b)), r = canon32(a * b),
           r = WRAP(U32(a) * U32(b)), r = WRAP(U32(a) * U32(b)));
}

EXEC(VFMA)
{
    WHOLE_FMA(LANES_FMA);
    V_FP_LOOP(r = npu_f16_fma(a, b, cc), r = canon32(fmaf(a, b, cc)));
}

EXEC(VFMS)
{
    WHOLE_FMA(LANES_FMS);
    V_FP_LOOP(r = npu_f16_fma(a, b, cc ^ 0x8000u), r = canon32(fmaf(a, b, -cc)));
}

EXEC(VFNMA)
{
    WHOLE_FMA(LANES_FNMA);
    V_FP_LOOP(r = npu_f16_fma(a ^ 0x8000u, b, cc), r = canon32(fmaf(-a, b, cc)));
}

/* max/min: NaN if either operand is NaN; on equal values (only +0/-0 can
 * differ in bits) max takes the AND of the encodings (+0 wins) and min the OR
 * (-0 wins). */
static inline uint16_t f16_max(uint16_t a, uint16_t b)
{
    if (f16_isnan(a) || f16_isnan(b))
        return NPU_F16_QNAN;
    double x = h2d(a), y = h2d(b);
    return x == y ? (uint16_t)(a & b) : x > y ? a : b;
}

static inline uint16_t f16_min(uint16_t a, uint16_t b)
{
    if (f16_isnan(a) || f16_isnan(b))
        return NPU_F16_QNAN;
    double x = h2d(a), y = h2d(b);
    return x == y ? (uint16_t)(a | b) : x < y ? a : b;
}

static inline float f32_max(float a, float b)
{
    if (a != a || b != b)
        return npu_f32_from_bits(NPU_F32_QNAN_BITS);
    return a == b ? npu_f32_from_bits(npu_f32_bits(a) & npu_f32_bits(b)) : a > b ? a : b;
}

static inline float f32_min(float a, float b)
{
    if (a != a || b != b)
        return npu_f32_from_bits(NPU_F32_QNAN_BITS);
    return a == b ? npu_f32_from_bits(npu_f32_bits(a) | npu_f32_bits(b)) : a < b ? a : b;
}

EXEC(VMAX) { V_LOOP(r = f16_max(a, b), r = f32_max(a, b), r = a > b ? a : b, r = a > b ? a : b); }
EXEC(VMIN) { V_LOOP(r = f16_min(a, b), r = f32_min(a, b), r = a < b ? a : b, r = a < b ? a : b); }

EXEC(VABS)
{
    V_LOOP(r = a & 0x7fffu, r = npu_f32_from_bits(npu_f32_bits(a) & 0x7fffffffu),
           r = a < 0 ? WRAP(0u - U32(a)) : a, r = a < 0 ? WRAP(0u - U32(a)) : a);
}

EXEC(VNEG)
{
    V_LOOP(r = a ^ 0x8000u, r = npu_f32_from_bits(npu_f32_bits(a) ^ 0x80000000u),
           r = WRAP(0u - U32(a)), r = WRAP(0u - U32(a)));
}

/* nearbyint rounds ties to even in the default environment, which npusim
 * never changes. Every binary16 is exact in binary64, and so is its integral
 * rounding, so the f16 path has no double rounding. */
EXEC(VRND) { V_FP_LOOP(r = d2h(nearbyint(h2d(a))), r = canon32(nearbyintf(a))); }

EXEC(VMOV) { V_BITS_LOOP(r = a); }

/* ---- constants ---------------------------------------------------------------- */

EXEC(VBCAST)
{
    uint64_t s = sreg(c, in->rs1);
    float f = npu_f32_from_bits((uint32_t)s);
    V_LOOP(r = d2h((double)f), r = canon32(f), r = (int16_t)(uint16_t)s, r = (int32_t)(uint32_t)s);
}

/* The assembler has already rounded the literal to the lane type. */
EXEC(VBCASTI)
{
    uint32_t bits = (uint32_t)in->imm;
    V_LOOP(r = (uint16_t)bits, r = npu_f32_from_bits(bits), r = (int16_t)(uint16_t)bits,
           r = (int32_t)bits);
}

EXEC(VIOTA) { V_INT_LOOP(r = (lane_t)i); }

/* ---- compares ----------------------------------------------------------------------
 * pd bit i = COND for the active lanes i < lanes(dt); inactive lanes keep
 * their bit; bits >= lanes(dt) are always cleared, so pd is a well-formed
 * mask for the compared type. Ordered compares are false on NaN, != true. */

enum { PWORDS = NPU_MAX_LANES / 64 };

#define CMP_LANES(T, BYTES, GET, COND)                                       \
    do {                                                                     \
        const unsigned n_lanes_ = c->cfg.vlen_bits / (8u * (BYTES));         \
        const uint8_t *va_ = vreg(c, in->rs1), *vb_ = vreg(c, in->rs2);      \
        uint64_t out[PWORDS];                                                \
        memcpy(out, preg(c, in->rd), sizeof out);                            \
        for (unsigned i = 0; i < n_lanes_; i++) {                            \
            if (!lane_active(c, in, i))                                      \
                continue;                                                    \
            T a = GET(va_, i), b = GET(vb_, i);                              \
            uint64_t bit = 1ull << (i & 63);                                 \
            out[i >> 6] = (COND) ? out[i >> 6] | bit : out[i >> 6] & ~bit;   \
        }                                                                    \
        for (unsigned w = 0; w < PWORDS; w++) {                              \
            unsigned lo = 64 * w;                                            \
            if (n_lanes_ <= lo)                                              \
                out[w] = 0;                                                  \
            else if (n_lanes_ < lo + 64)                                     \
                out[w] &= (1ull << (n_lanes_ - lo)) - 1;                     \
        }                                                                    \
        memcpy(preg(c, in->rd), out, sizeof out);                            \
    } while (0)

#define V_CMP(OP)                                                                      \
    switch (in->dt) {                                                                  \
    case NPU_F16: CMP_LANES(uint16_t, 2, get_u16, h2d(a) OP h2d(b)); break;           \
    case NPU_F32: CMP_LANES(float, 4, get_f32, a OP b); break;                         \
    case NPU_I16: CMP_LANES(int16_t, 2, get_i16, a OP b); break;                       \
    default: CMP_LANES(int32_t, 4, get_i32, a OP b); break;                            \
    }

EXEC(VCEQ) { V_CMP(==); }
EXEC(VCNE) { V_CMP(!=); }
EXEC(VCLT) { V_CMP(<); }
EXEC(VCLE) { V_CMP(<=); }
EXEC(VCGT) { V_CMP(>); }
EXEC(VCGE) { V_CMP(>=); }

/* vsel is never masked: pg is its selector. */
EXEC(VSEL)
{
    npu_insn unmasked = *in;
    unmasked.pm = 0;
    {
        const npu_insn *in = &unmasked;
        V_BITS_LOOP(r = pbit(c, in->pg, i) ? a : b);
    }
}

/* ---- bitwise logic and shifts ------------------------------------------------------ */

EXEC(VAND) { V_BITS_LOOP(r = a & b); }
EXEC(VOR) { V_BITS_LOOP(r = a | b); }
EXEC(VXOR) { V_BITS_LOOP(r = a ^ b); }
EXEC(VNOT) { V_BITS_LOOP(r = ~a); }

/* Register shift counts are taken modulo the lane width. */
EXEC(VSHL) { V_INT_LOOP(r = WRAP(U32(a) << (U32(b) & (lane_bits - 1)))); }
EXEC(VSHR) { V_INT_LOOP(r = WRAP(U32(a) >> (U32(b) & (lane_bits - 1)))); }
EXEC(VSRA) { V_INT_LOOP(r = (lane_t)(a >> (U32(b) & (lane_bits - 1)))); }

/* Immediate shift counts must be below the lane width. */
static int lane_shift_ok(npu_core *c, const npu_insn *in)
{
    unsigned bits = 8 * esize_of(in->dt);
    if (in->imm >= 0 && (unsigned)in->imm < bits)
        return 1;
    npu_core_raise(c, NPU_TRAP_ILLEGAL, 0,
                   "illegal instruction: %s.%s shift amount %d is not in 0..%u",
                   npu_insn_table[in->op].mnemonic, npu_dtype_name((npu_dtype)in->dt),
                   (int)in->imm, bits - 1);
    return 0;
}

EXEC(VSHLI) { if (lane_shift_ok(c, in)) V_INT_LOOP(r = WRAP(U32(a) << in->imm)); }
EXEC(VSHRI) { if (lane_shift_ok(c, in)) V_INT_LOOP(r = WRAP(U32(a) >> in->imm)); }
EXEC(VSRAI) { if (lane_shift_ok(c, in)) V_INT_LOOP(r = (lane_t)(a >> in->imm)); }

/* ---- conversions --------------------------------------------------------------------
 * Widening and narrowing read lanes of a different width than they write,
 * so they work from a copy of the sources (vd may alias va or vb). */

static void widen_f16_half(npu_core *c, const npu_insn *in, unsigned first)
{
    unsigned n32 = lanes_of(c, NPU_F32);
    if (NPU_LITTLE_ENDIAN_HOST && !in->pm) { /* the whole register (lanes_simd.h) */
        lanes_widen(vreg(c, in->rd), vreg(c, in->rs1), first, n32);
        return;
    }
    uint8_t src[NPU_VLENB_MAX];
    memcpy(src, vreg(c, in->rs1), c->cfg.vlen_bits / 8);
    uint8_t *vd = vreg(c, in->rd);
    for (unsigned i = 0; i < n32; i++)
        if (lane_active(c, in, i))
            put_f32(vd, i, f16_to_f32_inline(get_u16(src, first + i)));
}

EXEC(VCVTL) { widen_f16_half(c, in, 0); }
EXEC(VCVTH) { widen_f16_half(c, in, lanes_of(c, NPU_F32)); }

EXEC(VCVTN)
{
    uint8_t lo[NPU_VLENB_MAX], hi[NPU_VLENB_MAX];
    unsigned n32 = lanes_of(c, NPU_F32), n16 = lanes_of(c, NPU_F16);
    if (NPU_LITTLE_ENDIAN_HOST && !in->pm) { /* the whole register (lanes_simd.h) */
        lanes_narrow(vreg(c, in->rd), vreg(c, in->rs1), vreg(c, in->rs2), n32, n16);
        return;
    }
    memcpy(lo, vreg(c, in->rs1), c->cfg.vlen_bits / 8);
    memcpy(hi, vreg(c, in->rs2), c->cfg.vlen_bits / 8);
    uint8_t *vd = vreg(c, in->rd);
    for (unsigned i = 0; i < n16; i++) {
        if (!lane_active(c, in, i))
            continue;
        float f = i < n32 ? get_f32(lo, i) : get_f32(hi, i - n32);
        put_u16(vd, i, f32_to_f16_inline(f)); /* = d2h((double)f), without the binary64 detour */
    }
}

/* Float to int: round ties to even, saturate, NaN -> 0. The clamp happens in
 * binary64, where both int ranges and every binary32/16 value are exact. */
static inline int64_t ftoi_sat(double x, int64_t lo, int64_t hi)
{
    if (x != x)
        return 0;
    double y = nearbyint(x);
    if (y <= (double)lo)
        return lo;
    if (y >= (double)hi)
        return hi;
    return (int64_t)y;
}

EXEC(VFTOI)
{
    if (in->dt == NPU_I16)
        VLANES(int16_t, uint16_t, 2, get_i16, put_i16,
               r = (lane_t)ftoi_sat(h2d((uint16_t)a), INT16_MIN, INT16_MAX));
    else
        VLANES(int32_t, uint32_t, 4, get_i32, put_i32,
               r = (lane_t)ftoi_sat(npu_f32_from_bits((uint32_t)a), INT32_MIN, INT32_MAX));
}

EXEC(VITOF)
{
    if (in->dt == NPU_F16)
        VLANES(uint16_t, uint16_t, 2, get_u16, put_u16, r = d2h((double)(int16_t)a));
    else
        VLANES(uint32_t, uint32_t, 4, get_u32, put_u32, r = npu_f32_bits((float)(int32_t)a));
}
