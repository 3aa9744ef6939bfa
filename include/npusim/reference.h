/* Double-precision reference functions for the activation kernels, and the
 * accuracy check that compares a kernel's output against them. */
#ifndef NPUSIM_REFERENCE_H
#define NPUSIM_REFERENCE_H

#include "npusim/export.h"

#include <stdint.h>

#include "npusim/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { NPU_REF_MAX_INPUTS = 2, NPU_REF_MAX_PARAMS = 16 };

/* y = f(x[0..inputs), params). Inputs are the exact values the kernel read. */
typedef double (*npu_ref_fn)(const double *x, const double *params);

typedef struct npu_reference {
    const char *name;
    unsigned num_inputs;
    npu_ref_fn fn;
    const char *formula; /* for `npusim kernels` and reports */
} npu_reference;

NPU_API const npu_reference *npu_reference_find(const char *name);
NPU_API const npu_reference *npu_reference_at(unsigned i); /* NULL past the end */

/* An element passes when its error is within max_ulp ULPs of the output type
 * OR within max_abs absolutely (for results near zero). */
typedef struct npu_tolerance {
    double max_ulp;
    double max_abs;
    int any_zero_sign; /* 1: a zero result may have either sign (the manifest's
                          `zero_sign=any`, for a kernel documented to differ) */
} npu_tolerance;

typedef struct npu_accuracy {
    uint64_t checked;
    uint64_t failures;
    double max_abs_err;
    double max_ulp;
    double max_ulp_beyond_abs; /* the largest ULP error among elements the tolerance's
                                  absolute part does not cover (abs error > max_abs) */
    double sum_ulp;           /* every element's ULP error: infinite if one of them is */
    uint64_t nan_mismatches;  /* elements where exactly one of result and reference is NaN */
    uint64_t zero_sign_mismatches; /* zero results whose sign differs from the correctly
                                      rounded reference's (+0 for -0 or the reverse) */
    uint64_t worst_index; /* element with the largest ULP error */
    double worst_got, worst_ref;
} npu_accuracy;

/* ULP distance of `got` (a value of type dt) from the exact `ref`, in units of
 * the dt spacing at |ref|; 0 when got is ref correctly rounded, INFINITY when
 * one is NaN/inf and the other not. */
NPU_API double npu_ulp_error(double got, double ref, npu_dtype dt);
/* The double value of element `i` of a dt-typed array. */
NPU_API double npu_load_lane(const void *data, uint64_t i, npu_dtype dt);
/* Stores v into element `i`, rounded once to dt. */
NPU_API void npu_store_lane(void *data, uint64_t i, npu_dtype dt, double v);

NPU_API void npu_accuracy_init(npu_accuracy *a);
/* Adds one element; returns 1 when it passes the tolerance: NaN exactly where the
 * reference is NaN, a zero with the reference's sign (unless
 * tol->any_zero_sign), and within max_ulp or max_abs. */
NPU_API int npu_accuracy_add(npu_accuracy *a, uint64_t index, double got, double ref, npu_dtype dt,
                             const npu_tolerance *tol);

#ifdef __cplusplus
}
#endif
#endif
