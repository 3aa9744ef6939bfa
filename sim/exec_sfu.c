/* Semantics of the special-function unit: vexp, vln, vrcp, vrsqrt, vsqrt.
 *
 * NPU_SFU_EXACT computes each function in binary64 (libm exp, log, sqrt;
 * 1/x and 1/sqrt(x) by division) and rounds once to the lane type. Accuracy:
 *   vrcp, vsqrt  correctly rounded (<= 0.5 ULP) for f16 and f32: the binary64
 *                step is itself correctly rounded, and 53 >= 2p + 2 bits makes
 *                the second rounding innocuous (Figueroa's theorem); for
 *                1/x, a p-bit reciprocal is never within 2^-2p of a midpoint.
 *   vrsqrt       two binary64 roundings (sqrt, then divide) leave <= ~1 binary64
 *                ULP of error before the lane rounding, so the result is
 *                correctly rounded unless the true value lies within 2^-52
 *                relative of a lane midpoint. f16: impossible (a midpoint m
 *                with m^2 x = 1 exactly needs 35 bits, so the gap is >= 2^-36);
 *                f32: tests/test_exec.cc checks every binary32 significand for
 *                both exponent parities.
 *   vexp, vln    glibc's exp and log are within ~0.52 binary64 ULP, so the
 *                result is correctly rounded unless the true value is within
 *                about 2^-52 relative of a lane midpoint (a run of ~40 equal
 *                bits after the f16 rounding bit, ~28 after the f32 one). Exact
 *                ties cannot occur (e^x and ln x of a non-trivial float are
 *                transcendental). tests check all 65536 f16 inputs against a
 *                binary80 reference; f32 is <= 0.5 ULP + 2^-52 relative, not
 *                proven correctly rounded everywhere.
 *
 * NPU_SFU_APPROX models a table-plus-polynomial unit whose result has
 * cfg.sfu_bits significant bits: the binary64 value is first rounded (ties to
 * even) to sfu_bits bits, then to the lane type. Relative error <= 2^-sfu_bits
 * plus the lane rounding. Special values (inf, NaN, zero) are unaffected.
 *
 * Specials follow IEEE / C99 Annex F: exp(-inf) = +0, exp(+inf) = +inf,
 * ln(0) = -inf, ln(x < 0) = NaN, rcp(+-0) = +-inf, rsqrt(+-0) = +-inf,
 * rsqrt(x < 0) = NaN, sqrt(-0) = -0, sqrt(x < 0) = NaN; NaN results are the
 * canonical quiet NaN. */
#include "exec.h"

#include <math.h>

/* Round to `bits` significant bits, ties to even (finite non-zero only). */
static double round_to_bits(double y, unsigned bits)
{
    if (y == 0 || !isfinite(y))
        return y;
    int e;
    double m = frexp(y, &e); /* y = m * 2^e, 0.5 <= |m| < 1 */
    return ldexp(nearbyint(ldexp(m, (int)bits)), e - (int)bits);
}

static inline double sfu_shape(const npu_core *c, double y)
{
    return c->cfg.sfu_mode == NPU_SFU_APPROX ? round_to_bits(y, c->cfg.sfu_bits) : y;
}

/* exp and ln: where the binary64 value lies so close to a lane midpoint
 * (within 2^-50 relative, a few binary64 ULPs) that libm's own error could
 * put it on the wrong side, the function is evaluated again in binary80 and
 * the value is moved just off the midpoint, to the side the binary80 result
 * is on. Exact ties cannot occur, so the fix-up only ever decides a side. */
static double settle_midpoint(double y, double x, long double (*precise)(long double),
                              int lane_bits, int lane_emin)
{
    if (y == 0 || !isfinite(y))
        return y;
    int e = ilogb(y);
    double quantum = ldexp(1.0, (e < lane_emin ? lane_emin : e) - (lane_bits - 1));
    double mid = (floor(y / quantum) + 0.5) * quantum; /* exact: quantum is 2^k */
    if (fabs(y - mid) > fabs(y) * 0x1p-50)
        return y;
    long double t = precise((long double)x);
    return nextafter(mid, t > (long double)mid ? INFINITY : -INFINITY);
}

typedef double (*sfu_fn)(double);
typedef long double (*sfu_precise_fn)(long double);

static double rcp(double x) { return 1.0 / x; }
static double rsqrt(double x) { return 1.0 / sqrt(x); }

/* The binary64 value of the function for a lane of `lane_bits` significant
 * bits (11 or 24) and minimum normal exponent `lane_emin`. */
static inline double sfu_value(sfu_fn fn, sfu_precise_fn precise, double x, int lane_bits,
                               int lane_emin)
{
    double y = fn(x);
    return precise ? settle_midpoint(y, x, precise, lane_bits, lane_emin) : y;
}

#define SFU_LOOP(FN, PRECISE)                                                                  \
    V_FP_LOOP(r = npu_f64_to_f16(sfu_shape(c, sfu_value(FN, PRECISE, h2d(a), 11, -14))),       \
              r = npu_f64_to_f32(sfu_shape(c, sfu_value(FN, PRECISE, (double)a, 24, -126))))

EXEC(VEXP) { SFU_LOOP(exp, expl); }
EXEC(VLN) { SFU_LOOP(log, logl); }
EXEC(VRCP) { SFU_LOOP(rcp, NULL); }
EXEC(VRSQRT) { SFU_LOOP(rsqrt, NULL); }
EXEC(VSQRT) { SFU_LOOP(sqrt, NULL); }
