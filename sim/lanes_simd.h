/* Whole-register lane loops of the vector unit (exec_vector.c) for the
 * common unmasked f32 arithmetic and the f16 <-> f32 conversions, each
 * written twice: a plain loop with the lane rules of exec_vector.c, and
 * where the host has AVX2, FMA and F16C one that does 8 lanes at a time
 * and gives the same bits (tests/test_exec.cc compares them). They take
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
#endif

/* Whether the whole-register passes below may take the AVX2 loops: n lanes
 * a multiple of 8 on a host with AVX2, FMA and F16C. */
static inline int lanes_wide(unsigned n)
{
#ifdef NPUSIM_LANES_AVX2
    return n % 8 == 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c");
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
