/* The modulo scheduler's innermost loops (asm_pipe.c), each written twice:
 * a plain pass, and where the host has AVX2 one that does several at a
 * time and gives the same answer (tests/test_sched.cc compares them):
 *
 * - fit_regs: the colouring's register choice. Of 32 registers, given the
 *   last end of the value each holds (le) and its wall (wa: where the value
 *   across the cut that it holds starts again, one turn on), those a value
 *   [start, end] fits: free before its start, its end before their wall.
 * - rows_add, rows_over: register relief's count of values live per row of
 *   the circle. rows_add adds d to rows [a, b); rows_over sums, over `rows`
 *   rows, how far each row's count plus `above` is above 0. The rows are a
 *   multiple of SCHED_ROW_LANES, and those past the circle hold
 *   SCHED_ROW_NONE, which no count lifts above 0.
 *
 * Internal: not part of the installed API. */
#ifndef NPUSIM_ISA_SCHED_SIMD_H
#define NPUSIM_ISA_SCHED_SIMD_H

#include <stdint.h>
#if defined(__x86_64__) && defined(__GNUC__)
#define NPUSIM_SCHED_AVX2 1
#include <immintrin.h>
#endif

enum { SCHED_ROW_LANES = 8 };
#define SCHED_ROW_NONE (INT32_MIN / 2)

static inline uint32_t fit_regs_plain(const long *le, const long *wa, long start, long end)
{
    uint32_t fit = 0;
    for (int r = 0; r < 32; r++)
        fit |= (uint32_t)((start > le[r]) & (end < wa[r])) << r;
    return fit;
}

static inline void rows_add_plain(int32_t *row, long a, long b, int32_t d)
{
    for (long x = a; x < b; x++)
        row[x] += d;
}

static inline long rows_over_plain(const int32_t *row, unsigned rows, int32_t above)
{
    long over = 0;
    for (unsigned x = 0; x < rows; x++) {
        const int32_t v = row[x] + above;
        over += v > 0 ? v : 0;
    }
    return over;
}

#ifdef NPUSIM_SCHED_AVX2
/* long is 64 bits on x86-64 (LP64), as _mm256_cmpgt_epi64 compares. */
__attribute__((target("avx2"))) static inline uint32_t fit_regs_avx2(const long *le, const long *wa, long start,
                                                                     long end)
{
    const __m256i s = _mm256_set1_epi64x(start), e = _mm256_set1_epi64x(end);
    uint32_t fit = 0;
    for (int r = 0; r < 32; r += 4) {
        const __m256i l = _mm256_loadu_si256((const __m256i *)(const void *)(le + r));
        const __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(wa + r));
        const __m256i ok = _mm256_and_si256(_mm256_cmpgt_epi64(s, l), _mm256_cmpgt_epi64(w, e));
        fit |= (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(ok)) << r;
    }
    return fit;
}

/* Whole blocks of 8 rows, each row of a block added to when it lies in
 * [a, b). b is at most the row count, a multiple of 8. */
__attribute__((target("avx2"))) static inline void rows_add_avx2(int32_t *row, long a, long b, int32_t d)
{
    if (a >= b)
        return;
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), dv = _mm256_set1_epi32(d);
    const long x0 = a - a % SCHED_ROW_LANES; /* rows counted from x0 (fewer than 2^31) */
    const __m256i av = _mm256_set1_epi32((int32_t)(a - x0)), bv = _mm256_set1_epi32((int32_t)(b - x0));
    for (long x = x0; x < b; x += SCHED_ROW_LANES) {
        const __m256i at = _mm256_add_epi32(lanes, _mm256_set1_epi32((int32_t)(x - x0)));
        /* a <= at < b */
        const __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi32(av, at), _mm256_cmpgt_epi32(bv, at));
        __m256i *p = (__m256i *)(void *)(row + x);
        _mm256_storeu_si256(p, _mm256_add_epi32(_mm256_loadu_si256(p), _mm256_and_si256(in, dv)));
    }
}

/* A row's count is at most PIPE_MAX_UNROLL * PIPE_MAX_OPS (16,384) above 0:
 * summed in int32_t lanes 4,096 rows at a time. */
__attribute__((target("avx2"))) static inline long rows_over_avx2(const int32_t *row, unsigned rows, int32_t above)
{
    const __m256i ab = _mm256_set1_epi32(above), zero = _mm256_setzero_si256();
    long over = 0;
    for (unsigned x0 = 0; x0 < rows; x0 += 4096) {
        const unsigned x1 = rows - x0 > 4096 ? x0 + 4096 : rows;
        __m256i acc = zero;
        for (unsigned x = x0; x < x1; x += SCHED_ROW_LANES) {
            const __m256i v = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(row + x)), ab);
            acc = _mm256_add_epi32(acc, _mm256_max_epi32(v, zero));
        }
        int32_t lane[SCHED_ROW_LANES];
        _mm256_storeu_si256((__m256i *)(void *)lane, acc);
        for (int k = 0; k < SCHED_ROW_LANES; k++)
            over += lane[k];
    }
    return over;
}
#endif

static inline uint32_t fit_regs(const long *le, const long *wa, long start, long end)
{
#ifdef NPUSIM_SCHED_AVX2
    if (__builtin_cpu_supports("avx2"))
        return fit_regs_avx2(le, wa, start, end);
#endif
    return fit_regs_plain(le, wa, start, end);
}

static inline void rows_add(int32_t *row, long a, long b, int32_t d)
{
#ifdef NPUSIM_SCHED_AVX2
    if (__builtin_cpu_supports("avx2")) {
        rows_add_avx2(row, a, b, d);
        return;
    }
#endif
    rows_add_plain(row, a, b, d);
}

static inline long rows_over(const int32_t *row, unsigned rows, int32_t above)
{
#ifdef NPUSIM_SCHED_AVX2
    if (__builtin_cpu_supports("avx2"))
        return rows_over_avx2(row, rows, above);
#endif
    return rows_over_plain(row, rows, above);
}

#endif
