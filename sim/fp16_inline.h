/* The binary16 conversions as inline functions: fp16.c exports them as
 * npu_f16_to_f32 / npu_f64_to_f16, and the lane loops in exec_*.c inline them
 * (a call per lane would cost more than the conversion). Internal to sim/. */
#ifndef NPUSIM_SIM_FP16_INLINE_H
#define NPUSIM_SIM_FP16_INLINE_H

#include <stdint.h>
#include <string.h>

#include "npusim/fp16.h"

static inline uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static inline double f64_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline float f16_to_f32_inline(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t frac = h & 0x3ffu;

    if (exp == 0x1f)
        return npu_f32_from_bits(frac ? NPU_F32_QNAN_BITS : (sign | 0x7f800000u));
    if (exp == 0) {
        /* Zero or subnormal: frac * 2^-24, exact in binary32. */
        float mag = (float)frac * 0x1p-24f;
        return npu_f32_from_bits(sign | npu_f32_bits(mag));
    }
    return npu_f32_from_bits(sign | ((exp + 112u) << 23) | (frac << 13));
}

static inline uint16_t f64_to_f16_inline(double d)
{
    uint64_t u = f64_bits(d);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    const uint64_t mag = u & 0x7fffffffffffffffull;
    if (mag >= 0x3f10000000000000ull && mag < 0x40effe0000000000ull) {
        /* A normal binary16 result (2^-14 <= |d| < 65520), as
         * f32_to_f16_inline does from binary32: round the low 42 bits to
         * nearest even (a carry out of the significand bumps the exponent),
         * then rebias 1023 -> 15. */
        const uint64_t r = mag + 0x1ffffffffffull + ((mag >> 42) & 1u);
        return (uint16_t)(sign | ((r >> 42) - (1008u << 10)));
    }
    int biased = (int)((u >> 52) & 0x7ff);
    uint64_t mant = u & ((1ull << 52) - 1);

    if (biased == 0x7ff)
        return mant ? (uint16_t)NPU_F16_QNAN : (uint16_t)(sign | 0x7c00u);
    if (biased == 0)
        return sign; /* zero, or a binary64 subnormal: far below half of 2^-24 */

    int e = biased - 1023;
    if (e > 15)
        return (uint16_t)(sign | 0x7c00u);
    mant |= 1ull << 52; /* value = mant * 2^(e - 52) */

    /* The result's quantum is 2^(max(e, -14) - 10): normal halves keep 11
     * significant bits, subnormals are multiples of 2^-24. */
    int qexp = (e < -14 ? -14 : e) - 10;
    int shift = qexp - (e - 52); /* >= 42 */
    if (shift > 54)
        return sign; /* below a quarter of the smallest subnormal */
    uint64_t kept = mant >> shift;
    uint64_t rest = mant & ((1ull << shift) - 1);
    uint64_t half = 1ull << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
        kept++;

    /* kept includes the implicit bit for normals, so adding it to the
     * exponent field (minus one) yields the encoding, and a carry out of the
     * significand (kept == 2048, or 1024 from a subnormal) bumps the exponent. */
    uint32_t bits = ((uint32_t)(qexp + 24) << 10) + (uint32_t)kept;
    if (bits >= 0x7c00u)
        return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | bits);
}

/* binary64 -> binary32, round to nearest even; NaN -> the canonical NaN
 * (npu_f64_to_f32, inline for the lane loops). */
static inline float f64_to_f32_inline(double d)
{
    if (d != d)
        return npu_f32_from_bits(NPU_F32_QNAN_BITS);
    return (float)d;
}

/* The same rounding as f64_to_f16_inline((double)f) (every binary32 is exact
 * in binary64), with the common case straight from the binary32 bits. */
static inline uint16_t f32_to_f16_inline(float f)
{
    uint32_t u = npu_f32_bits(f);
    uint32_t mag = u & 0x7fffffffu;
    if (mag >= 0x38800000u && mag < 0x477ff000u) {
        /* A normal binary16 result (2^-14 <= |f| < 65520): round the low 13
         * bits to nearest even; a carry out of the significand bumps the
         * exponent as it should. Then rebias 127 -> 15. */
        uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
        uint32_t r = mag + 0xfffu + ((mag >> 13) & 1u);
        return (uint16_t)(sign | ((r >> 13) - (112u << 10)));
    }
    return f64_to_f16_inline((double)f); /* subnormal, zero, overflow, inf, NaN */
}

#endif
