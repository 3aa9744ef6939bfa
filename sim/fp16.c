/* IEEE binary16 helpers for the fp16 lanes: exact widening, one-rounding
 * narrowing from binary32/binary64, and a correctly rounded binary16 FMA. */
#include "fp16_inline.h"

#include <math.h>

float npu_f16_to_f32(uint16_t h)
{
    return f16_to_f32_inline(h);
}

uint16_t npu_f64_to_f16(double d)
{
    return f64_to_f16_inline(d);
}

/* Every binary32 is exact in binary64, so narrowing via double rounds once. */
uint16_t npu_f32_to_f16(float f)
{
    return f64_to_f16_inline((double)f);
}

float npu_f64_to_f32(double d)
{
    return f64_to_f32_inline(d); /* the C conversion rounds to nearest, ties to even */
}

/* a*b of two halves has at most 22 significant bits, so it is exact in
 * binary64. The sum with c is computed as RN(p + c) plus its exact error
 * (TwoSum); if inexact, it is turned into round-to-odd, which keeps a sticky
 * bit so the final rounding to binary16 is correct (53 >= 11 + 2 bits). */
uint16_t npu_f16_fma(uint16_t a, uint16_t b, uint16_t c)
{
    double da = f16_to_f32_inline(a), db = f16_to_f32_inline(b), dc = f16_to_f32_inline(c);
    double p = da * db;
    if (!isfinite(p) || !isfinite(dc))
        return f64_to_f16_inline(p + dc); /* inf/NaN rules of plain addition */

    double s = p + dc;
    double bp = s - dc;
    double err = (p - bp) + (dc - (s - bp));
    if (err != 0.0) {
        uint64_t su = f64_bits(s);
        if (!(su & 1)) {
            /* s is even: the odd neighbour on err's side is the round-to-odd result.
             * s is never zero here (a zero sum of doubles is exact). */
            int away = (err > 0) == (s > 0);
            su = away ? su + 1 : su - 1;
            s = f64_from_bits(su);
        }
    }
    return f64_to_f16_inline(s);
}
