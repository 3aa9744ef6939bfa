/* Semantics of the special-function unit: vexp, vln, vrcp, vrsqrt, vsqrt.
 *
 * NPU_SFU_EXACT computes each function in binary64 (libm exp, log, sqrt;
 * 1/x and 1/sqrt(x) by division) and rounds once to the lane type. Accuracy
 * (ULP of the lane type):
 *   vrcp, vsqrt  correctly rounded (<= 0.5 ULP), f16 and f32: division and
 *                sqrt are correctly rounded in binary64, and 53 >= 2p + 2
 *                makes the second rounding innocuous (Figueroa, 1995).
 *   vrsqrt       two binary64 roundings (sqrt, then divide) leave ~1 binary64
 *                ULP of error, so only a true value within ~2^-52 of a lane
 *                midpoint could misround. f16: impossible (m^2 x for a 12-bit
 *                midpoint m and 11-bit x has 35 bits, so the gap is >= 2^-36).
 *                f32: correctly rounded on every input, checked exhaustively
 *                (DISABLED_RsqrtF32IsCorrectlyRoundedOnEverySignificand in
 *                tests/test_exec.cc; a sample runs in the normal suite).
 *   vexp, vln    glibc's binary64 exp and log are not correctly rounded (<
 *                ~0.52 binary64 ULP), and log really does misround 5 binary32
 *                inputs when simply rounded to f32. So where the binary64 value
 *                lies within 2^-50 relative of a lane midpoint, the function is
 *                re-evaluated in binary80 (expl, logl) to pick the side. Exact
 *                ties cannot occur (e^x, ln x of a float other than 0 / 1 are
 *                transcendental). Checked: all 65536 f16 inputs (unit test),
 *                and offline every binary32 input against binary80 with a
 *                2^-60 safety margin: no misrounding, no undecided case. On a
 *                host whose long double is binary64 the re-evaluation adds
 *                nothing and those rare inputs may be 1 ULP off.
 *                vexp's unmasked f32 lanes take their binary64 value from
 *                lanes_exp (sim/lanes_simd.h: on AVX2 hosts within 1.1
 *                binary64 ULPs, 4 lanes at a time) instead of libm's exp:
 *                the re-evaluation near midpoints covers that error too, so
 *                every lane rounds the same (checked on every binary32
 *                input, DISABLED_ExpF32WholeRegisterAndPerLaneAgreeOnEveryInput
 *                in tests/test_exec_sfu.cc; a sample runs in the normal suite).
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
#include "lanes_simd.h"

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
static double settle_midpoint_near(double y, double x, long double (*precise)(long double),
                                   int lane_bits, int lane_emin);

static inline double settle_midpoint(double y, double x, long double (*precise)(long double),
                                     int lane_bits, int lane_emin)
{
    /* Fast exit, same answer: when y is a normal binary64 and its lane result
     * is normal too, the bits of y below the lane's quantum say how far y is
     * from the midpoint, in binary64 ULPs of y (2^(e-52)). Farther than 8 of
     * them, |y - mid| > 8 * 2^(e-52) > |y| * 2^-50 (|y| < 2^(e+1)), so the
     * test below would return y as well. Nearly every lane leaves here. */
    const uint64_t u = f64_bits(y);
    const int biased = (int)((u >> 52) & 0x7ff);
    if (biased != 0 && biased != 0x7ff && biased - 1023 >= lane_emin) {
        const unsigned below = 52u - (unsigned)(lane_bits - 1); /* 42 (f16), 29 (f32) */
        const uint64_t rest = u & ((1ull << below) - 1), half = 1ull << (below - 1);
        /* |rest - half| > 8 as one unsigned compare: a branch on the side of
         * the midpoint, which is random, mispredicted half the lanes */
        if (rest - half + 8 > 16)
            return y;
    }
    return settle_midpoint_near(y, x, precise, lane_bits, lane_emin);
}

/* The full test, out of line: reached only near a midpoint or off the
 * normal range. */
static double settle_midpoint_near(double y, double x, long double (*precise)(long double),
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
    V_FP_LOOP(r = d2h(sfu_shape(c, sfu_value(FN, PRECISE, h2d(a), 11, -14))),       \
              r = f64_to_f32_inline(sfu_shape(c, sfu_value(FN, PRECISE, (double)a, 24, -126))))

/* vexp's unmasked f32 lanes in the exact mode: their binary64 values a
 * whole register at a time (lanes_exp, sim/lanes_simd.h: 4 lanes per AVX2
 * instruction, within the error settle_midpoint allows), each then settled
 * and rounded as SFU_LOOP does; the same bits as SFU_LOOP. */
static int vexp_whole(npu_core *c, const npu_insn *in)
{
    if (!whole_f32(in) || c->cfg.sfu_mode != NPU_SFU_EXACT)
        return 0;
    const unsigned n = lanes_of(c, NPU_F32);
    const uint8_t *a = vreg(c, in->rs1);
    uint8_t *d = vreg(c, in->rd);
    double y[NPU_MAX_LANES];
    lanes_exp(y, a, n);
    for (unsigned i = 0; i < n; i++) /* lane i read before it is written: d may be a */
        put_f32(d, i, f64_to_f32_inline(settle_midpoint(y[i], (double)get_f32(a, i), expl, 24, -126)));
    return 1;
}

EXEC(VEXP)
{
    if (vexp_whole(c, in))
        return;
    SFU_LOOP(exp, expl);
}
EXEC(VLN) { SFU_LOOP(log, logl); }
EXEC(VRCP)
{
    if (whole_f32(in) && c->cfg.sfu_mode == NPU_SFU_EXACT) {
        lanes_rcp(vreg(c, in->rd), vreg(c, in->rs1), lanes_of(c, NPU_F32)); /* SFU_LOOP's bits */
        return;
    }
    SFU_LOOP(rcp, NULL);
}
EXEC(VRSQRT) { SFU_LOOP(rsqrt, NULL); }
EXEC(VSQRT) { SFU_LOOP(sqrt, NULL); }
