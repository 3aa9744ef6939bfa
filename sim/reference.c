/* Reference activations in binary64. Parameters come in the order the
 * kernel manifests declare them. */
#include "npusim/reference.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Formulas are chosen to stay accurate in binary64 where the textbook form
 * cancels: 1 + erf(x) and 1 + tanh(x) lose every digit for x << 0, so GELU
 * uses erfc and the sigmoid form instead. */
static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double gelu_erf(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }

static double ref_identity(const double *x, const double *p) { (void)p; return x[0]; }
static double ref_relu(const double *x, const double *p) { (void)p; return isnan(x[0]) ? x[0] : (x[0] > 0 ? x[0] : 0.0); }
/* Clamps propagate NaN, as PyTorch's do (fmin/fmax would drop it). */
static double clamp(double v, double lo, double hi) { return isnan(v) ? v : fmin(fmax(v, lo), hi); }
static double ref_relu6(const double *x, const double *p) { (void)p; return clamp(x[0], 0.0, 6.0); }
static double ref_leaky_relu(const double *x, const double *p) { return x[0] >= 0 ? x[0] : p[0] * x[0]; }
static double ref_elu(const double *x, const double *p) { return x[0] > 0 ? x[0] : p[0] * expm1(x[0]); }
static double ref_selu(const double *x, const double *p)
{
    (void)p;
    const double alpha = 1.6732632423543772848170429916717;
    const double scale = 1.0507009873554804934193349852946;
    return scale * (x[0] > 0 ? x[0] : alpha * expm1(x[0]));
}
static double ref_celu(const double *x, const double *p) { return x[0] > 0 ? x[0] : p[0] * expm1(x[0] / p[0]); }
static double ref_gelu_erf(const double *x, const double *p) { (void)p; return gelu_erf(x[0]); }
static double ref_gelu_tanh(const double *x, const double *p)
{
    (void)p;
    /* x/2 (1 + tanh z) = x * sigmoid(2z), exactly; the sigmoid form does not cancel. */
    const double k = sqrt(2.0 / M_PI);
    double v = x[0];
    return v * sigmoid(2.0 * k * (v + 0.044715 * v * v * v));
}
static double ref_gelu_sigmoid(const double *x, const double *p) { (void)p; return x[0] * sigmoid(1.702 * x[0]); }
static double ref_safe_gelu(const double *x, const double *p)
{
    (void)p;
    return gelu_erf(clamp(x[0], -3.0, 3.0));
}
static double ref_sparse_gelu(const double *x, const double *p) { return x[0] < p[0] ? 0.0 : gelu_erf(x[0]); }
static double ref_silu(const double *x, const double *p) { (void)p; return x[0] * sigmoid(x[0]); }
static double ref_swish(const double *x, const double *p) { return x[0] * sigmoid(p[0] * x[0]); }
static double ref_sigmoid(const double *x, const double *p) { (void)p; return sigmoid(x[0]); }
static double ref_tanh(const double *x, const double *p) { (void)p; return tanh(x[0]); }
static double ref_softplus(const double *x, const double *p)
{
    /* PyTorch: revert to linear when beta * x > threshold. */
    double bx = p[0] * x[0];
    return bx > p[1] ? x[0] : log1p(exp(bx)) / p[0];
}
static double ref_mish(const double *x, const double *p) { (void)p; return x[0] * tanh(log1p(exp(x[0]))); }
static double ref_hardsigmoid(const double *x, const double *p) { (void)p; return clamp(x[0] / 6.0 + 0.5, 0.0, 1.0); }
static double ref_hardswish(const double *x, const double *p) { (void)p; return x[0] * clamp(x[0] + 3.0, 0.0, 6.0) / 6.0; }
static double ref_softsign(const double *x, const double *p) { (void)p; return x[0] / (1.0 + fabs(x[0])); }
static double ref_swiglu(const double *x, const double *p) { (void)p; return x[0] * sigmoid(x[0]) * x[1]; }
static double ref_geglu(const double *x, const double *p) { (void)p; return gelu_erf(x[0]) * x[1]; }

/* x[1] is the alpha of x's channel (a per-channel input). */
static double ref_prelu(const double *x, const double *p) { (void)p; return x[0] > 0 ? x[0] : x[1] * x[0]; }
static double ref_bias_add(const double *x, const double *p) { (void)p; return x[0] + x[1]; }
/* Parameters a0..a5, b1..b4: P(x) = a0 + a1 x + ... + a5 x^5, Q(x) = b1 x + ... + b4 x^4. */
static double ref_pau(const double *x, const double *p)
{
    double v = x[0];
    double num = p[0] + v * (p[1] + v * (p[2] + v * (p[3] + v * (p[4] + v * p[5]))));
    double q = v * (p[6] + v * (p[7] + v * (p[8] + v * p[9])));
    return num / (1.0 + fabs(q));
}

static const npu_reference references[] = {
    { "identity", 1, ref_identity, "x (a matmul without an epilogue)" },
    { "relu", 1, ref_relu, "max(x, 0)" },
    { "relu6", 1, ref_relu6, "min(max(x, 0), 6)" },
    { "leaky_relu", 1, ref_leaky_relu, "x >= 0 ? x : alpha * x" },
    { "elu", 1, ref_elu, "x > 0 ? x : alpha * (e^x - 1)" },
    { "selu", 1, ref_selu, "scale * (x > 0 ? x : alpha * (e^x - 1))" },
    { "celu", 1, ref_celu, "x > 0 ? x : alpha * (e^(x/alpha) - 1)" },
    { "gelu_erf", 1, ref_gelu_erf, "x/2 * (1 + erf(x / sqrt(2)))" },
    { "gelu_tanh", 1, ref_gelu_tanh, "x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))" },
    { "gelu_sigmoid", 1, ref_gelu_sigmoid, "x * sigmoid(1.702 x)" },
    { "safe_gelu", 1, ref_safe_gelu, "gelu_erf(clamp(x, -3, 3))" },
    { "sparse_gelu", 1, ref_sparse_gelu, "x < threshold ? 0 : gelu_erf(x)" },
    { "silu", 1, ref_silu, "x * sigmoid(x)" },
    { "swish", 1, ref_swish, "x * sigmoid(beta x)" },
    { "sigmoid", 1, ref_sigmoid, "1 / (1 + e^-x)" },
    { "tanh", 1, ref_tanh, "tanh(x)" },
    { "softplus", 1, ref_softplus, "beta x > threshold ? x : ln(1 + e^(beta x)) / beta" },
    { "mish", 1, ref_mish, "x * tanh(ln(1 + e^x))" },
    { "hardsigmoid", 1, ref_hardsigmoid, "clamp(x/6 + 1/2, 0, 1)" },
    { "hardswish", 1, ref_hardswish, "x * clamp(x + 3, 0, 6) / 6" },
    { "softsign", 1, ref_softsign, "x / (1 + |x|)" },
    { "swiglu", 2, ref_swiglu, "silu(a) * b" },
    { "geglu", 2, ref_geglu, "gelu_erf(a) * b" },
    { "prelu", 2, ref_prelu, "x > 0 ? x : alpha[c] * x" },
    { "bias_add", 2, ref_bias_add, "x + bias[c]" },
    { "pau", 1, ref_pau, "P(x) / (1 + |Q(x)|), P = a0 + ... + a5 x^5, Q = b1 x + ... + b4 x^4" },
};

const npu_reference *npu_reference_find(const char *name)
{
    for (size_t i = 0; i < sizeof references / sizeof references[0]; i++)
        if (strcmp(references[i].name, name) == 0)
            return &references[i];
    return NULL;
}

const npu_reference *npu_reference_at(unsigned i)
{
    return i < sizeof references / sizeof references[0] ? &references[i] : NULL;
}
