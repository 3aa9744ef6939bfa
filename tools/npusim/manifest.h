// A kernel's manifest: the `; @key value` lines at the top of its .s file.
// It declares tensors, scalar parameters with defaults, dtypes, the
// reference function and the accuracy tolerance per dtype.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "npusim/reference.h"

namespace npusim {

struct TensorDecl {
    std::string name;
    bool is_input = true;
    double range_lo = -8.0, range_hi = 8.0;  // seeded random inputs are uniform here
    // A per-channel parameter tensor (`@input alpha per_channel`): logical
    // shape [C], stored in GM as C1 blocks of C0 lanes (padding lanes zero),
    // one copy for the whole batch. The reference sees element i's channel.
    bool per_channel = false;
};

// How a kernel splits its work over cores (`@split`), so the runner knows
// what each core should produce.
enum class Split {
    undeclared,  // ad-hoc kernels (tests); every kernel in kernels/ declares one
    blocks,      // the tensor is a flat run of B 32-byte C0 blocks; core k of n
                 // takes blocks [k*ceil(B/n), min((k+1)*ceil(B/n), B))
    tiles,       // @op matmul and conv2d: C's tiles of up to 8 x 8 fractals, in row-major
                 // order; core k of n takes tiles k, k + n, k + 2n, ...
};
const char *split_name(Split s);

// What a kernel computes (`@op`): an elementwise activation over NCHW
// tensors (the default), or a matrix multiply on the cube (docs/cube.md).
enum class Op {
    eltwise,  // tensors of the run's NCHW shape, in NC1HWC0
    matmul,   // inputs a (M x K) and b (K x N), fp16 fractal matrices; output c (M x N)
              // in the run's dtype; the @reference is the epilogue applied to A B
    conv2d,   // inputs x (NCHW, fp16, NC1HWC0) and w (Cout, Cin, kh, kw; fp16 fractal
              // weights), output y (NC1HWC0); params cout, kernel, stride, pad; the
              // @reference is the epilogue applied to the convolution
};
// The cube's ops: their work runs on the cube (lib/matmul.s).
inline bool is_cube_op(Op op) { return op == Op::matmul || op == Op::conv2d; }
const char *op_name(Op op);

struct ParamDecl {
    std::string name;
    double default_value = 0.0;
    std::string description;
    // `@param NAME DEFAULT divisor ...`: the kernel divides by the parameter
    // (takes its binary32 reciprocal), so a run refuses 0 and any value whose
    // reciprocal overflows binary32 (|v| <= 2^-128); param_divisor_problem.
    bool divisor = false;
    int line = 0;  // the @param line, for the run's message
};

// Why a divisor parameter's binary32 value v cannot be taken ("" if it can).
std::string param_divisor_problem(double v);

// @needs KEY=MIN: the kernel needs an integer config key to be at least
// MIN (the cube skeleton's buffers, kernels/lib/matmul.s); a run on a config
// below it is refused before anything is assembled.
struct NeedDecl {
    std::string key;  // a config key of type Int (config_schema)
    int64_t min = 0;
    int line = 0;     // the @needs line, for the message
};

// @tolerance for one dtype. Its abs= may scale with a parameter, as a
// kernel's absolute error often does (elu_fast's grows with |alpha|,
// softplus_fast's with 1 / |beta|): abs=X*alpha is X |alpha|, abs=X/beta is
// X / |beta|, with the parameter as the kernel receives it (binary32); X / 0
// gives no abs term (0), not an infinite one that any finite error would pass.
struct ToleranceDecl {
    npu_tolerance tol{0.0, 0.0, 0};  // abs: X, before the scale
    std::string abs_param;           // the parameter abs scales with, or ""
    bool abs_divides = false;        // X / |param| rather than X |param|
    size_t abs_col = 0;              // abs='s column, for a message
};

struct Manifest {
    std::string path;        // the .s file
    std::string name;        // @kernel
    std::string summary;     // @summary
    std::vector<TensorDecl> tensors;  // inputs first, in declaration order, then outputs
    std::vector<ParamDecl> params;
    std::vector<std::string> dtypes;  // "fp16", "fp32"
    std::string reference;   // name in npu_reference table
    std::map<std::string, ToleranceDecl> tolerances;  // per dtype (@tolerance)
    std::vector<std::string> notes;           // @note lines (why a tolerance is what it is)
    Split split = Split::undeclared;          // @split
    Op op = Op::eltwise;                      // @op
    std::vector<NeedDecl> needs;              // @needs, in order

    size_t num_inputs() const;           // every @input, per-channel ones included
    size_t num_full_tensors() const;     // tensors of the run's shape (not per-channel)
    // Vectors a tile holds at least (tiling.h, least_tile): 2 for a kernel
    // with a per-channel input, whose skeleton (lib/perchan.s) computes a
    // tile in pairs of vectors, else 1.
    unsigned tile_vectors() const;
    bool supports(const std::string &dtype) const;
    // The run's tolerance for `dtype`: its abs scaled by its parameter's
    // magnitude among `params` (as the kernel receives them, manifest order).
    npu_tolerance tolerance(const std::string &dtype, const std::vector<double> &params) const;
    // "abs=X*alpha"'s scale as shown: "|alpha|", "1/|beta|", or "".
    std::string abs_scale(const std::string &dtype) const;
};

// Parses the manifest of `path`. Throws npusim::Error with file:line:col.
Manifest parse_manifest(const std::string &path, const std::string &text);
Manifest load_manifest(const std::string &path);

// Kernel lookup: a name in the kernels folder, or a path to a .s file.
std::string kernels_dir();
// Whether the text names a file (it has a '/' or ends in .s), not a kernel.
bool names_kernel_file(const std::string &name_or_path);
std::string resolve_kernel(const std::string &name_or_path);
std::vector<std::string> list_kernels();  // paths of every kernels/*.s with a manifest

// Config lookup, as for kernels: a shipped config by name (`edge`:
// configs/edge.yaml, or the installed copy), or a file, named with a '/' or
// its .yaml (.yml). Returns the path to load; "" stays "" (the defaults).
std::string configs_dir();
bool names_config_file(const std::string &name_or_path);
std::string resolve_config(const std::string &name_or_path);

}  // namespace npusim
