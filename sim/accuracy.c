/* Output checking: ULP and absolute error of each element against the
 * binary64 reference, in the units of the kernel's output type. */
#include <math.h>
#include <string.h>

#include "npusim/reference.h"

#include "fp16_inline.h" /* the conversions inline: this runs once per element checked */

double npu_load_lane(const void *data, uint64_t i, npu_dtype dt)
{
    const uint8_t *b = data;
    switch (dt) {
    case NPU_F16: { uint16_t h; memcpy(&h, b + 2 * i, 2); return f16_to_f32_inline(h); }
    case NPU_F32: { float f; memcpy(&f, b + 4 * i, 4); return f; }
    case NPU_I16: { int16_t v; memcpy(&v, b + 2 * i, 2); return v; }
    case NPU_I32: { int32_t v; memcpy(&v, b + 4 * i, 4); return v; }
    }
    return NAN;
}

void npu_store_lane(void *data, uint64_t i, npu_dtype dt, double v)
{
    uint8_t *b = data;
    switch (dt) {
    case NPU_F16: { uint16_t h = f64_to_f16_inline(v); memcpy(b + 2 * i, &h, 2); break; }
    case NPU_F32: { float f = f64_to_f32_inline(v); memcpy(b + 4 * i, &f, 4); break; }
    case NPU_I16: { int16_t x = (int16_t)v; memcpy(b + 2 * i, &x, 2); break; }
    case NPU_I32: { int32_t x = (int32_t)v; memcpy(b + 4 * i, &x, 4); break; }
    }
}

/* Spacing of dt's values at magnitude |r|: 2^(e - p + 1), with e clamped to
 * the minimum normal exponent so subnormals have a constant ULP. */
static double ulp_at(double r, npu_dtype dt)
{
    const int p = dt == NPU_F16 ? 11 : 24;
    const int emin = dt == NPU_F16 ? -14 : -126;
    int e;
    frexp(fabs(r), &e); /* |r| = m * 2^e, m in [0.5, 1) */
    e -= 1;
    if (e < emin || r == 0)
        e = emin;
    return ldexp(1.0, e - p + 1);
}

static double round_to(double v, npu_dtype dt)
{
    return dt == NPU_F16 ? f16_to_f32_inline(f64_to_f16_inline(v)) : (double)f64_to_f32_inline(v);
}

double npu_ulp_error(double got, double ref, npu_dtype dt)
{
    if (isnan(got) || isnan(ref))
        return isnan(got) && isnan(ref) ? 0.0 : INFINITY;
    double rounded = round_to(ref, dt);
    if (got == rounded && signbit(got) == signbit(rounded))
        return 0.0;
    if (isinf(got) || isinf(rounded))
        return INFINITY;
    return fabs(got - ref) / ulp_at(ref, dt);
}

void npu_accuracy_init(npu_accuracy *a)
{
    memset(a, 0, sizeof *a);
}

int npu_accuracy_add(npu_accuracy *a, uint64_t index, double got, double ref, npu_dtype dt,
                     const npu_tolerance *tol)
{
    double ulp = npu_ulp_error(got, ref, dt);
    double abs_err = (ulp == 0.0) ? 0.0 : fabs(got - ref);
    if (isnan(abs_err))
        abs_err = INFINITY;
    a->checked++;
    a->sum_ulp += ulp; /* an infinite error (NaN or infinity against a number) makes it infinite */
    if (abs_err > a->max_abs_err)
        a->max_abs_err = abs_err;
    if (ulp > a->max_ulp || a->checked == 1) {
        if (ulp >= a->max_ulp) {
            a->max_ulp = ulp;
            a->worst_index = index;
            a->worst_got = got;
            a->worst_ref = ref;
        }
    }
    if (abs_err > tol->max_abs && ulp > a->max_ulp_beyond_abs)
        a->max_ulp_beyond_abs = ulp;
    int pass = ulp <= tol->max_ulp || abs_err <= tol->max_abs;
    if (!isnan(got) != !isnan(ref)) {
        a->nan_mismatches++;
        pass = 0;
    }
    if (got == 0 && round_to(ref, dt) == 0 && signbit(got) != signbit(ref)) { /* rounding keeps the sign */
        a->zero_sign_mismatches++;
        pass &= tol->any_zero_sign;
    }
    if (!pass)
        a->failures++;
    return pass;
}
