// The kernels end to end through run_kernel(): every element checked against
// the binary64 reference, on awkward shapes, VLENs and core counts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "npusim/fp16.h"
#include "npusim/reference.h"
#include "runner.h"

using namespace npusim;

namespace {

RunResult run(const std::string &kernel, const std::string &dtype, std::vector<uint64_t> shape,
              const std::vector<std::string> &sets = {}, std::map<std::string, double> params = {})
{
    RunOptions o;
    o.kernel = kernel;
    o.dtype = dtype;
    o.shape = shape;
    o.params = params;
    for (const std::string &s : sets)
        apply_override(o.config, s);
    return run_kernel(o);
}

std::string describe(const RunResult &r)
{
    std::string s = "max_ulp=" + std::to_string(r.accuracy.max_ulp) + " failures=" +
                    std::to_string(r.accuracy.failures) + " padding_nonzero=" + std::to_string(r.padding_nonzero);
    for (const TrapReport &t : r.traps)
        s += std::string(" trap ") + npu_trap_name(t.trap.kind) + " at " + std::to_string(t.trap.pc) + " " + t.disasm +
             ": " + t.trap.message;
    return s;
}

// Every cycle of every core is an issue cycle or charged to one stall reason.
void expect_cycle_accounting(const RunResult &r)
{
    ASSERT_TRUE(r.timed);
    for (const npu_core_stats &s : r.core_stats) {
        uint64_t stalls = 0;
        for (unsigned i = 0; i < NPU_NUM_STALLS; i++)
            stalls += s.stall[i];
        EXPECT_EQ(s.issue_cycles + stalls, s.cycles) << r.manifest.name;
        EXPECT_GT(s.cycles, 0u);
    }
}

struct Case {
    const char *kernel;
    const char *dtype;
};

class KernelShapes : public ::testing::TestWithParam<Case> {};

// leaky_relu fp16 on the halves of an .npy file, with its alpha.
RunResult leaky_relu_fp16(const std::string &path, double alpha)
{
    RunOptions o;
    o.kernel = "leaky_relu";
    o.dtype = "fp16";
    o.inputs["x"] = path;
    o.params = {{"alpha", alpha}};
    return run_kernel(o);
}

}  // namespace

TEST_P(KernelShapes, PassesItsBoundOnAwkwardShapes)
{
    const Case c = GetParam();
    const std::vector<std::vector<uint64_t>> shapes = {
        {1, 1, 1, 1}, {1, 3, 5, 7}, {2, 20, 9, 9}, {1, 17, 1, 3}, {3, 8, 2, 2}, {1, 16, 32, 33},
    };
    for (const auto &shape : shapes) {
        RunResult r = run(c.kernel, c.dtype, shape);
        EXPECT_TRUE(r.passed()) << c.kernel << " " << c.dtype << " shape " << shape[0] << "x" << shape[1] << "x"
                                << shape[2] << "x" << shape[3] << ": " << describe(r);
        EXPECT_EQ(r.accuracy.checked, shape[0] * shape[1] * shape[2] * shape[3]);
        expect_cycle_accounting(r);
    }
}

TEST_P(KernelShapes, RunsUnchangedAcrossVlenAndCores)
{
    const Case c = GetParam();
    for (const char *vlen : {"core.vlen=128", "core.vlen=512", "core.vlen=2048"}) {
        RunResult r = run(c.kernel, c.dtype, {1, 19, 7, 5}, {vlen});
        EXPECT_TRUE(r.passed()) << c.kernel << " " << c.dtype << " " << vlen << ": " << describe(r);
    }
    for (const char *cores : {"system.cores=2", "system.cores=3", "system.cores=7"}) {
        RunResult r = run(c.kernel, c.dtype, {1, 5, 9, 11}, {cores});
        EXPECT_TRUE(r.passed()) << c.kernel << " " << c.dtype << " " << cores << ": " << describe(r);
        expect_cycle_accounting(r);
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelShapes,
                         ::testing::Values(Case{"relu", "fp16"}, Case{"relu", "fp32"}, Case{"leaky_relu", "fp16"},
                                           Case{"leaky_relu", "fp32"}, Case{"gelu_tanh", "fp16"},
                                           Case{"gelu_tanh", "fp32"}),
                         [](const auto &info) { return std::string(info.param.kernel) + "_" + info.param.dtype; });

TEST(Kernels, LeakyReluHonoursAlphaOnBothSidesOfOne)
{
    for (double alpha : {0.2, 3.0, -0.5, 1.0, 0.0}) {
        RunResult r = run("leaky_relu", "fp32", {1, 9, 4, 4}, {}, {{"alpha", alpha}});
        EXPECT_TRUE(r.passed()) << "alpha " << alpha << ": " << describe(r);
        EXPECT_EQ(r.params[0], double(float(alpha)));
    }
}

// fp16 lanes round a scalar operand to binary16: alpha = 70000 would be inf
// (0 x inf = NaN at x = +-0 and in the padding) and 1e-6 a subnormal half
// (2.24 ULP). leaky_relu multiplies those alphas in fp32 and rounds once.
TEST(Kernels, LeakyReluFp16TakesAnAlphaBeyondBinary16AsWritten)
{
    NpyArray in;
    in.dtype = NPU_F16;
    in.shape = {1, 1, 1, 8};
    const float xs[8] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 3.0f, -3.0f};
    for (float x : xs) {
        const uint16_t h = npu_f32_to_f16(x);
        in.data.push_back(uint8_t(h));
        in.data.push_back(uint8_t(h >> 8));
    }
    const std::string path = ::testing::TempDir() + "/leaky_alpha_halves.npy";
    write_npy(path, in);
    auto y = [](const RunResult &r, size_t i) {
        const std::vector<uint8_t> &d = r.tensors.at("y").data;
        return uint16_t(d[2 * i] | d[2 * i + 1] << 8);
    };
    for (double alpha : {70000.0, -70000.0}) {
        RunResult r = leaky_relu_fp16(path, alpha);
        EXPECT_TRUE(r.passed()) << alpha << ": " << describe(r);
        // 0, -0, 1, alpha x (past 65504: inf of alpha x's sign), 2, ...
        const uint16_t big = alpha > 0 ? 0xfc00 : 0x7c00;
        const std::vector<uint16_t> want = {0x0000, 0x8000, 0x3c00, big, 0x4000, big, 0x4200, big};
        for (size_t i = 0; i < want.size(); i++)
            EXPECT_EQ(y(r, i), want[i]) << "alpha " << alpha << " element " << i;
    }
    {
        RunResult r = leaky_relu_fp16(path, 1e-6);
        EXPECT_TRUE(r.passed()) << describe(r);
        // alpha x rounded once: -1e-6 is 16.78 ULPs of 2^-24, -3e-6 50.33
        EXPECT_EQ(y(r, 3), 0x8011);
        EXPECT_EQ(y(r, 7), 0x8032);
    }
    for (double alpha : {1e30, -1e30, 1e-6, -3e-5, 65505.0}) {
        RunResult r = run("leaky_relu", "fp16", {1, 3, 5, 7}, {}, {{"alpha", alpha}});
        EXPECT_TRUE(r.passed()) << "alpha " << alpha << ": " << describe(r);
        EXPECT_EQ(r.padding_nonzero, 0u) << alpha;
    }
}

TEST(Kernels, ReluInstructionsPerVectorIsOne)
{
    RunResult r = run("relu", "fp16", {1, 64, 8, 8});
    EXPECT_DOUBLE_EQ(double(r.counted_instructions) / double(r.output_vectors), 1.0);
    RunResult g = run("gelu_tanh", "fp32", {1, 64, 8, 8});
    EXPECT_DOUBLE_EQ(double(g.counted_instructions) / double(g.output_vectors), 7.0);
    RunResult l = run("leaky_relu", "fp32", {1, 64, 8, 8});
    EXPECT_DOUBLE_EQ(double(l.counted_instructions) / double(l.output_vectors), 2.0);
}

// Past 65,536 fp16 elements the run checks each input value's reference
// once, and an output that is its rounding only counts (runner.cc,
// check_accuracy): every figure must be the plain check's, element by
// element with npu_accuracy_add. All 65,536 halves (NaNs, infinities,
// subnormals, both zeros) through kernels exact and not, twice over.
TEST(Kernels, TheCheckOfManyFp16ElementsIsTheCheckOfEachElement)
{
    NpyArray in;
    in.dtype = NPU_F16;
    in.shape = {1, 2, 256, 256};
    in.data.resize(2 * 65536 * 2);
    for (uint32_t i = 0; i < 2 * 65536; i++) {
        const uint32_t bits = i < 65536 ? i : (i * 40503u) & 0xffffu;  // the second half shuffled
        in.data[2 * i] = uint8_t(bits);
        in.data[2 * i + 1] = uint8_t(bits >> 8);
    }
    const std::string path = ::testing::TempDir() + "/all_halves_twice.npy";
    write_npy(path, in);
    for (const char *kernel : {"relu", "mish", "silu", "gelu_tanh", "tanh_fast"}) {
        SCOPED_TRACE(kernel);
        RunOptions o;
        o.kernel = kernel;
        o.dtype = "fp16";
        o.inputs["x"] = path;
        RunResult r = run_kernel(o);
        ASSERT_TRUE(r.checked);
        const npu_reference *ref = npu_reference_find(r.manifest.reference.c_str());
        ASSERT_NE(ref, nullptr);
        npu_accuracy want;
        npu_accuracy_init(&want);
        const NpyArray &y = r.tensors.at("y");
        for (uint64_t i = 0; i < 2 * 65536; i++) {
            const double x = npu_load_lane(in.data.data(), i, NPU_F16);
            npu_accuracy_add(&want, i, npu_load_lane(y.data.data(), i, NPU_F16), ref->fn(&x, r.params.data()),
                             NPU_F16, &r.tolerance);
        }
        const npu_accuracy &got = r.accuracy;
        EXPECT_EQ(got.checked, want.checked);
        EXPECT_EQ(got.failures, want.failures);
        EXPECT_EQ(got.nan_mismatches, want.nan_mismatches);
        EXPECT_EQ(got.zero_sign_mismatches, want.zero_sign_mismatches);
        EXPECT_EQ(got.worst_index, want.worst_index);
        // the same doubles, to the bit (NaNs and infinities included)
        for (auto [a, b] : {std::pair{got.max_abs_err, want.max_abs_err}, {got.max_ulp, want.max_ulp},
                            {got.max_ulp_beyond_abs, want.max_ulp_beyond_abs}, {got.sum_ulp, want.sum_ulp},
                            {got.worst_got, want.worst_got}, {got.worst_ref, want.worst_ref}})
            EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << a << " against " << b;
    }
}

TEST(Kernels, Fp16KernelsMeetTheirBoundOnEveryHalfInput)
{
    // All 65536 binary16 bit patterns as one input tensor (C = 1: 15 of 16
    // lanes of each C0 block are padding, which must stay zero).
    NpyArray in;
    in.dtype = NPU_F16;
    in.shape = {1, 1, 256, 256};
    in.data.resize(65536 * 2);
    for (uint32_t i = 0; i < 65536; i++) {
        in.data[2 * i] = uint8_t(i);
        in.data[2 * i + 1] = uint8_t(i >> 8);
    }
    std::string path = ::testing::TempDir() + "/all_halves.npy";
    write_npy(path, in);
    for (const char *kernel : {"relu", "leaky_relu", "gelu_tanh"}) {
        RunOptions o;
        o.kernel = kernel;
        o.dtype = "fp16";
        o.inputs["x"] = path;
        RunResult r = run_kernel(o);
        EXPECT_EQ(r.accuracy.checked, 65536u);
        EXPECT_TRUE(r.passed()) << kernel << ": " << describe(r) << " worst input #" << r.accuracy.worst_index
                                << " got " << r.accuracy.worst_got << " ref " << r.accuracy.worst_ref;
    }
    for (double alpha : {70000.0, 1e-6, -1e-6}) {  // leaky_relu's fp32 path for alphas beyond binary16
        RunResult r = leaky_relu_fp16(path, alpha);
        EXPECT_TRUE(r.passed()) << "alpha " << alpha << ": " << describe(r);
    }
}
