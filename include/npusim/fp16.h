/* IEEE binary16 helpers: conversions round to nearest, ties to even, and
 * keep subnormals; NaNs come out as the canonical quiet NaN. */
#ifndef NPUSIM_FP16_H
#define NPUSIM_FP16_H

#include "npusim/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { NPU_F16_QNAN = 0x7e00u };
#define NPU_F32_QNAN_BITS 0x7fc00000u

NPU_API float npu_f16_to_f32(uint16_t h);            /* exact */
NPU_API uint16_t npu_f32_to_f16(float f);            /* one rounding */
NPU_API uint16_t npu_f64_to_f16(double d);           /* one rounding (not via binary32) */
NPU_API float npu_f64_to_f32(double d);              /* one rounding */

static inline uint32_t npu_f32_bits(float f) { union { float f; uint32_t u; } v; v.f = f; return v.u; }
static inline float npu_f32_from_bits(uint32_t u) { union { float f; uint32_t u; } v; v.u = u; return v.f; }

/* Correctly rounded binary16 a * b + c (round-to-odd in binary64, then RNE). */
NPU_API uint16_t npu_f16_fma(uint16_t a, uint16_t b, uint16_t c);

#ifdef __cplusplus
}
#endif
#endif
