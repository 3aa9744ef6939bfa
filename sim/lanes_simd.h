/* Whole-register lane loops of the vector unit (exec_vector.c) for the
 * common unmasked f32 arithmetic and the f16 <-> f32 conversions, and of
 * the SFU's exact mode (exec_sfu.c) for f32 vrcp, each written twice: a
 * plain loop with the lane rules of exec_vector.c or exec_sfu.c, and where
 * the host has AVX2, FMA and F16C one that does 8 lanes at a time and gives
 * the same bits (tests/test_exec.cc compares them); and the binary64 exp
 * behind f32 vexp, 4 lanes at a time, whose lanes round as libm's do
 * (lanes_exp_avx2 says why; tests/test_exec_sfu.cc checks it). They take
 * the registers themselves: every lane of a source is read before the
 * lanes of d it could overlap are written, so d may be a source. n is the
 * lane count.
 *
 * Lane rules kept: binary32 operations round to nearest even (the host's
 * default, which npusim never changes) and fma rounds once; a NaN result
 * is the canonical quiet NaN (NPU_F32_QNAN_BITS, NPU_F16_QNAN); f16 ->
 * f32 is exact, f32 -> f16 rounds to nearest even.
 *
 * Internal: not part of the installed API. */
#ifndef NPUSIM_SIM_LANES_SIMD_H
#define NPUSIM_SIM_LANES_SIMD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fp16_inline.h"
#include "npusim/fp16.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define NPUSIM_LANES_AVX2 1
#include <cpuid.h>
#include <immintrin.h>
#endif

typedef enum lanes_op { LANES_ADD, LANES_SUB, LANES_MUL } lanes_op;

/* fma forms: a b + c, a b - c, -a b + c */
typedef enum lanes_fma_form { LANES_FMA, LANES_FMS, LANES_FNMA } lanes_fma_form;

/* exec.h's canon32 */
static inline float lanes_canon(float x)
{
    return x != x ? npu_f32_from_bits(NPU_F32_QNAN_BITS) : x;
}

static inline float lanes_get(const uint8_t *v, unsigned i)
{
    float x;
    memcpy(&x, v + 4 * i, sizeof x);
    return x;
}

static inline void lanes_put(uint8_t *v, unsigned i, float x)
{
    memcpy(v + 4 * i, &x, sizeof x);
}

/* Little-endian hosts only (the callers check): lanes are host floats. */
static inline void lanes_f32_plain(lanes_op op, uint8_t *d, const uint8_t *a, const uint8_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const float x = lanes_get(a, i), y = lanes_get(b, i);
        lanes_put(d, i, lanes_canon(op == LANES_ADD ? x + y : op == LANES_SUB ? x - y : x * y));
    }
}

static inline void lanes_fma_plain(lanes_fma_form form, uint8_t *d, const uint8_t *a, const uint8_t *b,
                                   const uint8_t *c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const float x = lanes_get(a, i), y = lanes_get(b, i), z = lanes_get(c, i);
        lanes_put(d, i,
                  lanes_canon(form == LANES_FMA ? fmaf(x, y, z) : form == LANES_FMS ? fmaf(x, y, -z) : fmaf(-x, y, z)));
    }
}

/* n f16 lanes of s (from lane `first`) widened into n f32 lanes of d. */
static inline void lanes_widen_plain(uint8_t *d, const uint8_t *s, unsigned first, unsigned n)
{
    float out[NPU_MAX_LANES];
    for (unsigned i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, s + 2 * (first + i), sizeof h);
        out[i] = f16_to_f32_inline(h);
    }
    memcpy(d, out, 4 * (size_t)n);
}

/* n f32 lanes, the first nlo from lo and the rest from hi, narrowed into n
 * f16 lanes of d. */
static inline void lanes_narrow_plain(uint8_t *d, const uint8_t *lo, const uint8_t *hi, unsigned nlo, unsigned n)
{
    uint16_t out[NPU_MAX_LANES];
    for (unsigned i = 0; i < n; i++)
        out[i] = f32_to_f16_inline(i < nlo ? lanes_get(lo, i) : lanes_get(hi, i - nlo));
    memcpy(d, out, 2 * (size_t)n);
}

/* vrcp's lanes in the SFU's exact mode (exec_sfu.c): 1 / x in binary64,
 * rounded once to binary32. */
static inline void lanes_rcp_plain(uint8_t *d, const uint8_t *a, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        lanes_put(d, i, f64_to_f32_inline(1.0 / (double)lanes_get(a, i)));
}

#ifdef NPUSIM_LANES_AVX2
/* The canonical quiet NaN where x is a NaN. */
__attribute__((target("avx2,fma,f16c"))) static inline __m256 lanes_canon8(__m256 x)
{
    return _mm256_blendv_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32((int)NPU_F32_QNAN_BITS)),
                            _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* n a multiple of 8 (the callers check) */
__attribute__((target("avx2,fma,f16c"))) static inline void lanes_f32_avx2(lanes_op op, uint8_t *d,
                                                                         const uint8_t *a, const uint8_t *b,
                                                                         unsigned n)
{
    for (unsigned i = 0; i < n; i += 8) { /* lanes i .. i + 7 read, then written: d may alias */
        const __m256 x = _mm256_loadu_ps((const float *)(const void *)(a + 4 * i));
        const __m256 y = _mm256_loadu_ps((const float *)(const void *)(b + 4 * i));
        const __m256 r = op == LANES_ADD ? _mm256_add_ps(x, y) : op == LANES_SUB ? _mm256_sub_ps(x, y)
                                                                                  : _mm256_mul_ps(x, y);
        _mm256_storeu_ps((float *)(void *)(d + 4 * i), lanes_canon8(r));
    }
}

__attribute__((target("avx2,fma,f16c"))) static inline void lanes_fma_avx2(lanes_fma_form form, uint8_t *d,
                                                                         const uint8_t *a, const uint8_t *b,
                                                                         const uint8_t *c, unsigned n)
{
    for (unsigned i = 0; i < n; i += 8) {
        const __m256 x = _mm256_loadu_ps((const float *)(const void *)(a + 4 * i));
        const __m256 y = _mm256_loadu_ps((const float *)(const void *)(b + 4 * i));
        const __m256 z = _mm256_loadu_ps((const float *)(const void *)(c + 4 * i));
        const __m256 r = form == LANES_FMA ? _mm256_fmadd_ps(x, y, z)
                         : form == LANES_FMS ? _mm256_fmsub_ps(x, y, z)
                                             : _mm256_fnmadd_ps(x, y, z);
        _mm256_storeu_ps((float *)(void *)(d + 4 * i), lanes_canon8(r));
    }
}

/* n a multiple of 8 */
__attribute__((target("avx2,fma,f16c"))) static inline void lanes_widen_avx2(uint8_t *d, const uint8_t *s,
                                                                           unsigned first, unsigned n)
{
    float out[NPU_MAX_LANES];
    for (unsigned i = 0; i < n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(s + 2 * (first + i)));
        /* a NaN half: (h & 0x7fff) > 0x7c00, compared as signed 16-bit lanes (both below 0x8000) */
        const __m128i nan16 = _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
        const __m256 nan = _mm256_castsi256_ps(_mm256_cvtepi16_epi32(nan16));
        const __m256 w = _mm256_cvtph_ps(h);
        _mm256_storeu_ps(out + i, _mm256_blendv_ps(w, _mm256_castsi256_ps(_mm256_set1_epi32((int)NPU_F32_QNAN_BITS)), nan));
    }
    memcpy(d, out, 4 * (size_t)n);
}

/* n and nlo multiples of 8 */
__attribute__((target("avx2,fma,f16c"))) static inline void lanes_narrow_avx2(uint8_t *d, const uint8_t *lo,
                                                                            const uint8_t *hi, unsigned nlo,
                                                                            unsigned n)
{
    uint16_t out[NPU_MAX_LANES];
    for (unsigned i = 0; i < n; i += 8) {
        const uint8_t *src = i < nlo ? lo + 4 * i : hi + 4 * (i - nlo);
        const __m256 f = _mm256_loadu_ps((const float *)(const void *)src);
        __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        /* NaN lanes: 8 x 32-bit masks packed to 8 x 16 */
        const __m256i nan32 = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
        const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan32), _mm256_extracti128_si256(nan32, 1));
        h = _mm_blendv_epi8(h, _mm_set1_epi16((short)NPU_F16_QNAN), nan16);
        _mm_storeu_si128((__m128i *)(void *)(out + i), h);
    }
    memcpy(d, out, 2 * (size_t)n);
}

/* n a multiple of 8: binary64 division (IEEE, as the plain pass's) and
 * narrowing to nearest even (the host's default, as its cast) */
__attribute__((target("avx2,fma,f16c"))) static inline void lanes_rcp_avx2(uint8_t *d, const uint8_t *a, unsigned n)
{
    const __m256d one = _mm256_set1_pd(1.0);
    for (unsigned i = 0; i < n; i += 8) {
        const __m256 x = _mm256_loadu_ps((const float *)(const void *)(a + 4 * i));
        const __m128 lo = _mm256_cvtpd_ps(_mm256_div_pd(one, _mm256_cvtps_pd(_mm256_castps256_ps128(x))));
        const __m128 hi = _mm256_cvtpd_ps(_mm256_div_pd(one, _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))));
        _mm256_storeu_ps((float *)(void *)(d + 4 * i), lanes_canon8(_mm256_set_m128(hi, lo)));
    }
}

/* The binary64 exp of n f32 lanes of a (n a multiple of 8), for the SFU's
 * exact mode (exec_sfu.c), within 1.1 binary64 ULPs of e^x where libm's exp
 * is within 0.52: x = k ln2/128 + r (|r| <= ln2/256, r to about 2^-62 by
 * two fused steps), e^x = 2^(k/128) e^r with 2^(j/128), j = k mod 128, from
 * a table of correctly rounded values and e^r - 1 a degree-6 Taylor
 * polynomial (its remainder below 2^-70). The 0.5 ULP of the table, the
 * final fused rounding and the polynomial's few 2^-62 stay under 1.1 ULP,
 * well inside what exec_sfu.c's settle_midpoint allows (4 ULPs: it
 * re-evaluates in binary80 whatever lies within 2^-50 relative of a lane's
 * midpoint), so the lanes round as libm's would. Lanes outside [-708, 709]
 * (the scale 2^(k >> 7) a normal binary64) and NaNs take libm's exp. */
__attribute__((target("avx2,fma,f16c"))) static inline void lanes_exp_avx2(double *y, const uint8_t *a, unsigned n)
{
    static const double two_j128[128] = {
    0x1.0000000000000p+0, 0x1.0163da9fb3335p+0, 0x1.02c9a3e778061p+0, 0x1.04315e86e7f85p+0,
    0x1.059b0d3158574p+0, 0x1.0706b29ddf6dep+0, 0x1.0874518759bc8p+0, 0x1.09e3ecac6f383p+0,
    0x1.0b5586cf9890fp+0, 0x1.0cc922b7247f7p+0, 0x1.0e3ec32d3d1a2p+0, 0x1.0fb66affed31bp+0,
    0x1.11301d0125b51p+0, 0x1.12abdc06c31ccp+0, 0x1.1429aaea92de0p+0, 0x1.15a98c8a58e51p+0,
    0x1.172b83c7d517bp+0, 0x1.18af9388c8deap+0, 0x1.1a35beb6fcb75p+0, 0x1.1bbe084045cd4p+0,
    0x1.1d4873168b9aap+0, 0x1.1ed5022fcd91dp+0, 0x1.2063b88628cd6p+0, 0x1.21f49917ddc96p+0,
    0x1.2387a6e756238p+0, 0x1.251ce4fb2a63fp+0, 0x1.26b4565e27cddp+0, 0x1.284dfe1f56381p+0,
    0x1.29e9df51fdee1p+0, 0x1.2b87fd0dad990p+0, 0x1.2d285a6e4030bp+0, 0x1.2ecafa93e2f56p+0,
    0x1.306fe0a31b715p+0, 0x1.32170fc4cd831p+0, 0x1.33c08b26416ffp+0, 0x1.356c55f929ff1p+0,
    0x1.371a7373aa9cbp+0, 0x1.38cae6d05d866p+0, 0x1.3a7db34e59ff7p+0, 0x1.3c32dc313a8e5p+0,
    0x1.3dea64c123422p+0, 0x1.3fa4504ac801cp+0, 0x1.4160a21f72e2ap+0, 0x1.431f5d950a897p+0,
    0x1.44e086061892dp+0, 0x1.46a41ed1d0057p+0, 0x1.486a2b5c13cd0p+0, 0x1.4a32af0d7d3dep+0,
    0x1.4bfdad5362a27p+0, 0x1.4dcb299fddd0dp+0, 0x1.4f9b2769d2ca7p+0, 0x1.516daa2cf6642p+0,
    0x1.5342b569d4f82p+0, 0x1.551a4ca5d920fp+0, 0x1.56f4736b527dap+0, 0x1.58d12d497c7fdp+0,
    0x1.5ab07dd485429p+0, 0x1.5c9268a5946b7p+0, 0x1.5e76f15ad2148p+0, 0x1.605e1b976dc09p+0,
    0x1.6247eb03a5585p+0, 0x1.6434634ccc320p+0, 0x1.6623882552225p+0, 0x1.68155d44ca973p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6c012750bdabfp+0, 0x1.6dfb23c651a2fp+0, 0x1.6ff7df9519484p+0,
    0x1.71f75e8ec5f74p+0, 0x1.73f9a48a58174p+0, 0x1.75feb564267c9p+0, 0x1.780694fde5d3fp+0,
    0x1.7a11473eb0187p+0, 0x1.7c1ed0130c132p+0, 0x1.7e2f336cf4e62p+0, 0x1.80427543e1a12p+0,
    0x1.82589994cce13p+0, 0x1.8471a4623c7adp+0, 0x1.868d99b4492edp+0, 0x1.88ac7d98a6699p+0,
    0x1.8ace5422aa0dbp+0, 0x1.8cf3216b5448cp+0, 0x1.8f1ae99157736p+0, 0x1.9145b0b91ffc6p+0,
    0x1.93737b0cdc5e5p+0, 0x1.95a44cbc8520fp+0, 0x1.97d829fde4e50p+0, 0x1.9a0f170ca07bap+0,
    0x1.9c49182a3f090p+0, 0x1.9e86319e32323p+0, 0x1.a0c667b5de565p+0, 0x1.a309bec4a2d33p+0,
    0x1.a5503b23e255dp+0, 0x1.a799e1330b358p+0, 0x1.a9e6b5579fdbfp+0, 0x1.ac36bbfd3f37ap+0,
    0x1.ae89f995ad3adp+0, 0x1.b0e07298db666p+0, 0x1.b33a2b84f15fbp+0, 0x1.b59728de5593ap+0,
    0x1.b7f76f2fb5e47p+0, 0x1.ba5b030a1064ap+0, 0x1.bcc1e904bc1d2p+0, 0x1.bf2c25bd71e09p+0,
    0x1.c199bdd85529cp+0, 0x1.c40ab5fffd07ap+0, 0x1.c67f12e57d14bp+0, 0x1.c8f6d9406e7b5p+0,
    0x1.cb720dcef9069p+0, 0x1.cdf0b555dc3fap+0, 0x1.d072d4a07897cp+0, 0x1.d2f87080d89f2p+0,
    0x1.d5818dcfba487p+0, 0x1.d80e316c98398p+0, 0x1.da9e603db3285p+0, 0x1.dd321f301b460p+0,
    0x1.dfc97337b9b5fp+0, 0x1.e264614f5a129p+0, 0x1.e502ee78b3ff6p+0, 0x1.e7a51fbc74c83p+0,
    0x1.ea4afa2a490dap+0, 0x1.ecf482d8e67f1p+0, 0x1.efa1bee615a27p+0, 0x1.f252b376bba97p+0,
    0x1.f50765b6e4540p+0, 0x1.f7bfdad9cbe14p+0, 0x1.fa7c1819e90d8p+0, 0x1.fd3c22b8f71f1p+0,
    };
    const __m256d shift = _mm256_set1_pd(0x1.8p52); /* x 128/ln2 + shift: k in the low bits */
    const __m256d inv = _mm256_set1_pd(0x1.71547652b82fep+7);           /* 128/ln2 */
    const __m256d l2hi = _mm256_set1_pd(0x1.62e42fefa39efp-8);          /* ln2/128, and the rest */
    const __m256d l2lo = _mm256_set1_pd(0x1.abc9e3b39803fp-63);
    const __m256d lo = _mm256_set1_pd(-708.0), hi = _mm256_set1_pd(709.0);
    for (unsigned i = 0; i < n; i += 4) {
        const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps((const float *)(const void *)(a + 4 * i)));
        const __m256d zs = _mm256_add_pd(_mm256_mul_pd(x, inv), shift);
        const __m256d k = _mm256_sub_pd(zs, shift);
        __m256d r = _mm256_fnmadd_pd(k, l2hi, x);
        r = _mm256_fnmadd_pd(k, l2lo, r);
        __m256d q = _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 720), _mm256_set1_pd(1.0 / 120));
        q = _mm256_fmadd_pd(r, q, _mm256_set1_pd(1.0 / 24));
        q = _mm256_fmadd_pd(r, q, _mm256_set1_pd(1.0 / 6));
        q = _mm256_fmadd_pd(r, q, _mm256_set1_pd(0.5));
        const __m256d p = _mm256_fmadd_pd(_mm256_mul_pd(r, r), q, r); /* e^r - 1 */
        /* k as an integer (the shift's bits taken off), then 2^(j/128) and 2^(k >> 7) */
        const __m256i kb = _mm256_sub_epi64(_mm256_castpd_si256(zs), _mm256_castpd_si256(shift));
        const __m256d t = _mm256_i64gather_pd(two_j128, _mm256_and_si256(kb, _mm256_set1_epi64x(127)), 8);
        const __m256i e = _mm256_srli_epi64(_mm256_add_epi64(kb, _mm256_set1_epi64x(1023 * 128)), 7);
        const __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(e, 52));
        _mm256_storeu_pd(y + i, _mm256_mul_pd(_mm256_fmadd_pd(t, p, t), scale));
        const int inside =
            _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(x, lo, _CMP_GE_OQ), _mm256_cmp_pd(x, hi, _CMP_LE_OQ)));
        if (inside != 0xf)
            for (unsigned l = 0; l < 4; l++)
                if (!((inside >> l) & 1))
                    y[i + l] = exp((double)lanes_get(a, i + l));
    }
}

/* Whether the host has F16C, which not every compiler's
 * __builtin_cpu_supports names (clang 14's does not): CPUID leaf 1, asked
 * once per translation unit (CPUID is slow, in a VM very slow). */
static inline int lanes_f16c(void)
{
    static int known; /* 0: not asked yet, 1: no, 2: yes; the same answer from any thread */
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!k) {
        unsigned a, b, c, d;
        k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) ? 2 : 1;
        __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    }
    return k == 2;
}
#endif

/* Whether the whole-register passes below may take the AVX2 loops: n lanes
 * a multiple of 8 on a host with AVX2, FMA and F16C. */
static inline int lanes_wide(unsigned n)
{
#ifdef NPUSIM_LANES_AVX2
    return n % 8 == 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && lanes_f16c();
#else
    (void)n;
    return 0;
#endif
}

static inline void lanes_f32(lanes_op op, uint8_t *d, const uint8_t *a, const uint8_t *b, unsigned n)
{
#ifdef NPUSIM_LANES_AVX2
    if (lanes_wide(n)) {
        lanes_f32_avx2(op, d, a, b, n);
        return;
    }
#endif
    lanes_f32_plain(op, d, a, b, n);
}

static inline void lanes_fma(lanes_fma_form form, uint8_t *d, const uint8_t *a, const uint8_t *b, const uint8_t *c,
                             unsigned n)
{
#ifdef NPUSIM_LANES_AVX2
    if (lanes_wide(n)) {
        lanes_fma_avx2(form, d, a, b, c, n);
        return;
    }
#endif
    lanes_fma_plain(form, d, a, b, c, n);
}

static inline void lanes_widen(uint8_t *d, const uint8_t *s, unsigned first, unsigned n)
{
#ifdef NPUSIM_LANES_AVX2
    if (lanes_wide(n) && first % 8 == 0) {
        lanes_widen_avx2(d, s, first, n);
        return;
    }
#endif
    lanes_widen_plain(d, s, first, n);
}

static inline void lanes_rcp(uint8_t *d, const uint8_t *a, unsigned n)
{
#ifdef NPUSIM_LANES_AVX2
    if (lanes_wide(n)) {
        lanes_rcp_avx2(d, a, n);
        return;
    }
#endif
    lanes_rcp_plain(d, a, n);
}

/* y[i] = the binary64 exp of f32 lane i of a: libm's, or within the 1.1
 * ULPs of lanes_exp_avx2 (see there why the lanes then round alike). */
static inline void lanes_exp(double *y, const uint8_t *a, unsigned n)
{
#ifdef NPUSIM_LANES_AVX2
    if (lanes_wide(n)) {
        lanes_exp_avx2(y, a, n);
        return;
    }
#endif
    for (unsigned i = 0; i < n; i++)
        y[i] = exp((double)lanes_get(a, i));
}

static inline void lanes_narrow(uint8_t *d, const uint8_t *lo, const uint8_t *hi, unsigned nlo, unsigned n)
{
#ifdef NPUSIM_LANES_AVX2
    if (lanes_wide(n) && nlo % 8 == 0) {
        lanes_narrow_avx2(d, lo, hi, nlo, n);
        return;
    }
#endif
    lanes_narrow_plain(d, lo, hi, nlo, n);
}

#endif
