// The cube unit (docs/cube.md): its moves and multiply-accumulate on the
// functional core, and their traps.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "npusim/npusim.h"

namespace {

enum { F = 16, A_FRACTAL = 512, C_FRACTAL = 1024 };

// A functional core with the default cube, GM of 1 MiB, running `src`.
struct CubeMachine {
    npu_program prog{};
    std::vector<uint8_t> gm_bytes = std::vector<uint8_t>(1 << 20);
    npu_gm gm{};
    npu_core c{};

    explicit CubeMachine(const std::string &src, size_t l1_bytes = 1 << 20)
    {
        npu_program_init(&prog);
        npu_diag d{};
        if (npu_assemble("t.s", src.c_str(), src.size(), nullptr, &prog, &d) != NPU_OK)
            ADD_FAILURE() << d.line << ":" << d.col << ": " << d.message;
        gm = npu_gm{gm_bytes.data(), gm_bytes.size(), nullptr};
        npu_core_config cfg;
        npu_core_config_default(&cfg);
        cfg.l1_bytes = l1_bytes;
        EXPECT_EQ(npu_core_init(&c, &cfg, &prog, &gm), NPU_OK);
        EXPECT_EQ(npu_core_cube_buffers(&c), NPU_OK);  // the tests fill them before the run
    }
    ~CubeMachine()
    {
        npu_core_fini(&c);
        npu_program_free(&prog);
    }
    CubeMachine(const CubeMachine &) = delete;
    CubeMachine &operator=(const CubeMachine &) = delete;

    npu_core_state run()
    {
        while (c.state == NPU_CORE_RUNNING)
            npu_core_step(&c, nullptr);
        return c.state;
    }
};

uint16_t half(double x) { return npu_f64_to_f16(x); }

// Fills `n` fp16 values at p with seeded values in [-4, 4).
void fill_halves(uint8_t *p, size_t n, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-4.0, 4.0);
    for (size_t i = 0; i < n; i++) {
        const uint16_t h = half(u(rng));
        std::memcpy(p + 2 * i, &h, 2);
    }
}

double at_a(const uint8_t *a, unsigned k, unsigned row, unsigned kcol)
{
    // Fractal (row / 16, kcol / 16) of a tile m x k fractals, row-major; row-major inside.
    const unsigned i = row / F, kk = kcol / F;
    uint16_t h;
    std::memcpy(&h, a + (size_t(i) * k + kk) * A_FRACTAL + 2 * ((row % F) * F + kcol % F), 2);
    return npu_f16_to_f32(h);
}

double at_b(const uint8_t *b, unsigned n, unsigned krow, unsigned col)
{
    const unsigned kk = krow / F, j = col / F;
    uint16_t h;
    std::memcpy(&h, b + (size_t(kk) * n + j) * A_FRACTAL + 2 * ((krow % F) * F + col % F), 2);
    return npu_f16_to_f32(h);
}

// The documented accumulation: per k-fractal, 16 exact products summed in
// binary64 in order, then added to the fp32 accumulator with one rounding.
float documented(const uint8_t *a, const uint8_t *b, unsigned k, unsigned n, unsigned row, unsigned col, float acc)
{
    for (unsigned kk = 0; kk < k; kk++) {
        double s = 0.0;
        for (unsigned t = 0; t < F; t++)
            s += at_a(a, k, row, kk * F + t) * at_b(b, n, kk * F + t, col);
        acc = float(double(acc) + s);
    }
    return acc;
}

float at_c(const uint8_t *c, unsigned n, unsigned row, unsigned col)
{
    float v;
    std::memcpy(&v, c + (size_t(row / F) * n + col / F) * C_FRACTAL + 4 * ((row % F) * F + col % F), 4);
    return v;
}

}  // namespace

TEST(CubeExec, MmadzThenMmadAccumulateAsDocumented)
{
    const unsigned m = 2, k = 3, n = 2;
    CubeMachine mc("li s1, 2\nli s2, 3\nli s3, 2\nmmdim s1, s2, s3\n"
                   "li s4, 4096\nmmadz s4, s0, s0, 0\nmmad s4, s0, s0, 1\ndmawait 1\nhalt\n");
    fill_halves(mc.c.l0a, m * k * F * F, 1);
    fill_halves(mc.c.l0b, k * n * F * F, 2);
    ASSERT_EQ(mc.run(), NPU_CORE_HALTED) << mc.c.trap.message;
    const uint8_t *c = mc.c.l0c + 4096;
    double worst = 0.0;
    for (unsigned row = 0; row < m * F; row++)
        for (unsigned col = 0; col < n * F; col++) {
            const float once = documented(mc.c.l0a, mc.c.l0b, k, n, row, col, 0.0f);
            const float twice = documented(mc.c.l0a, mc.c.l0b, k, n, row, col, once);
            ASSERT_EQ(at_c(c, n, row, col), twice) << row << "," << col;
            // And within a few fp32 roundings of the binary64 value 2 A B.
            double exact = 0.0;
            for (unsigned t = 0; t < k * F; t++)
                exact += at_a(mc.c.l0a, k, row, t) * at_b(mc.c.l0b, n, t, col);
            worst = std::max(worst, std::abs(double(twice) - 2 * exact));
        }
    EXPECT_LT(worst, 1e-4);  // |C| < 2 * 48 * 16 = 1536: 6 roundings of ulp(1024) / 2 = 6.1e-5 / 2 each
    EXPECT_EQ(mc.c.l0c[0], 0);  // below the tile: untouched
}

TEST(CubeExec, MovesCarryBytesThroughL1AndL0)
{
    // GM -> L1 in two rows of 1 KiB (GM stride 4 KiB, L1 stride 1 KiB), then
    // L1 -> L0A and L0B, then L0C -> UB.
    CubeMachine mc("li s1, 2\nli s2, 4096\nli s3, 1024\ndmadim 1, s1, s2, s3\n"
                   "li s4, 512\nli s5, 8192\ndmaldl1 s4, s5, s3, 0\ndmawait 0\n"
                   "li s6, 2048\nmvla s0, s4, s6, 1\nli s7, 1024\nmvlb s3, s7, s3, 2\n"
                   "li s8, 96\nli s9, 64\nmvub s9, s8, s8, 3\ndmawait 1\ndmawait 2\ndmawait 3\nhalt\n");
    for (size_t i = 0; i < mc.gm_bytes.size(); i++)
        mc.gm_bytes[i] = uint8_t(i * 13 + 5);
    for (unsigned i = 0; i < 256; i++)
        mc.c.l0c[i] = uint8_t(200 - i);
    ASSERT_EQ(mc.run(), NPU_CORE_HALTED) << mc.c.trap.message;
    for (unsigned i = 0; i < 1024; i++) {
        ASSERT_EQ(mc.c.l1[512 + i], mc.gm_bytes[8192 + i]);
        ASSERT_EQ(mc.c.l1[512 + 1024 + i], mc.gm_bytes[8192 + 4096 + i]);
    }
    EXPECT_EQ(std::memcmp(mc.c.l0a, mc.c.l1 + 512, 2048), 0);
    EXPECT_EQ(std::memcmp(mc.c.l0b + 1024, mc.c.l1 + 1024, 1024), 0);
    EXPECT_EQ(std::memcmp(mc.c.ub + 64, mc.c.l0c + 96, 96), 0);
    EXPECT_EQ(mc.c.ub[63], 0);
    EXPECT_EQ(mc.c.ub[64 + 96], 0);
}

TEST(CubeExec, BadOperandsTrapWithTheirReasonAndChangeNothing)
{
    struct Case {
        const char *src;
        npu_trap_kind kind;
        const char *message;
    };
    const Case cases[] = {
        {"li s3, 500\nmvla s0, s0, s3, 0\nhalt\n", NPU_TRAP_ILLEGAL,
         "mvla: 500 bytes is not a positive multiple of 512 (whole fractals)"},
        {"li s1, 256\nli s3, 512\nmvlb s1, s0, s3, 0\nhalt\n", NPU_TRAP_MISALIGNED,
         "mvlb: L0B address 0x100 is not 512-byte aligned"},
        {"li s3, 66048\nmvla s0, s0, s3, 0\nhalt\n", NPU_TRAP_CUBE_BOUNDS,
         "mvla: 66048 bytes at L0A 0x0 reach outside the 65536-byte L0A"},
        {"li s1, 0\nli s2, 1\nmmdim s1, s2, s2\nhalt\n", NPU_TRAP_ILLEGAL, "mmdim: m = 0 is not in 1..4096 fractals"},
        {"li s1, 16\nli s2, 1\nli s3, 17\nmmdim s1, s2, s3\nmmad s0, s0, s0, 0\nhalt\n", NPU_TRAP_CUBE_BOUNDS,
         "mmad: 278528 bytes at L0C 0x0 reach outside the 262144-byte L0C"},
        {"li s3, 48\nmvub s0, s0, s3, 0\nhalt\n", NPU_TRAP_ILLEGAL, "mvub: 48 bytes is not a positive multiple of 32"},
        {"li s1, 262144\nli s3, 32\nmvub s1, s0, s3, 0\nhalt\n", NPU_TRAP_UB_BOUNDS,
         "mvub: 32 bytes at UB 0x40000 reach outside the 262144-byte UB"},
        {"li s1, 1048576\nli s3, 32\ndmaldl1 s1, s0, s3, 0\nhalt\n", NPU_TRAP_CUBE_BOUNDS,
         "dmaldl1: rows of 32 bytes from L1 0x100000 reach outside the 1048576-byte L1"},
    };
    for (const Case &k : cases) {
        CubeMachine mc(k.src);
        mc.c.l0c[0] = 7;
        ASSERT_EQ(mc.run(), NPU_CORE_TRAPPED) << k.src;
        EXPECT_EQ(mc.c.trap.kind, k.kind) << k.src;
        EXPECT_STREQ(mc.c.trap.message, k.message);
        EXPECT_EQ(mc.c.l0c[0], 7);
        EXPECT_EQ(mc.c.l0a[0], 0);
    }
    // A core without an L1 has no room for any transfer into it.
    CubeMachine none("li s3, 32\ndmaldl1 s0, s0, s3, 0\nhalt\n", 0);
    ASSERT_EQ(none.run(), NPU_CORE_TRAPPED);
    EXPECT_STREQ(none.c.trap.message, "dmaldl1: rows of 32 bytes from L1 0x0 reach outside the 0-byte L1");
}

// Their timing is docs/timing.md T7a, pinned by TimingSpec.Cube* in
// tests/test_timing_spec.cc.

namespace {

// The documented im2col (docs/cube.md, "Convolution"): row p, tap q of A
// from a feature map of `planes` C1 planes, H x W pixels of 16 fp16 each.
uint16_t im2col_at(const uint8_t *map, unsigned h, unsigned w, unsigned kh, unsigned kw, unsigned stride, unsigned pad,
                   unsigned p, unsigned q, unsigned c0)
{
    const unsigned ho = (h + 2 * pad - kh) / stride + 1, wo = (w + 2 * pad - kw) / stride + 1;
    if (p >= ho * wo)
        return 0;
    const unsigned c1 = q / (kh * kw), i = q % (kh * kw) / kw, j = q % kw;
    const int ih = int(p / wo * stride + i) - int(pad), iw = int(p % wo * stride + j) - int(pad);
    if (ih < 0 || iw < 0 || ih >= int(h) || iw >= int(w))
        return 0;
    uint16_t v;
    std::memcpy(&v, map + ((size_t(c1) * h + unsigned(ih)) * w + unsigned(iw)) * 32 + 2 * c0, 2);
    return v;
}

// Runs mvlai on a seeded feature map and checks every element of the m x k
// fractals it writes against im2col_at.
void expect_im2col(unsigned h, unsigned w, unsigned planes, unsigned kh, unsigned kw, unsigned stride, unsigned pad,
                   unsigned m, unsigned k, unsigned p0, unsigned q0)
{
    const std::string what = std::to_string(h) + "x" + std::to_string(w) + " k" + std::to_string(kh) + "x" +
                             std::to_string(kw) + " s" + std::to_string(stride) + " p" + std::to_string(pad) + " from (" +
                             std::to_string(p0) + ", " + std::to_string(q0) + ")";
    const unsigned packed = kh | kw << 8 | stride << 16 | pad << 24;
    CubeMachine mc("li s1, " + std::to_string(h) + "\nli s2, " + std::to_string(w) + "\nli s3, " +
                   std::to_string(packed) + "\nim2dim s1, s2, s3\nli s4, " + std::to_string(m) + "\nli s5, " +
                   std::to_string(k) + "\nmmdim s4, s5, s4\nli s6, " + std::to_string(q0) + "\nslli s6, s6, 32\naddi s6, s6, " +
                   std::to_string(p0) + "\nli s7, 1024\nli s8, 4096\nmvlai s8, s7, s6, 0\ndmawait 0\nhalt\n");
    fill_halves(mc.c.l1 + 1024, size_t(planes) * h * w * 16, 3);
    std::memset(mc.c.l0a, 0xee, 65536);  // every element written is checked, zeros included
    ASSERT_EQ(mc.run(), NPU_CORE_HALTED) << what << ": " << mc.c.trap.message;
    for (unsigned a = 0; a < m; a++)
        for (unsigned b = 0; b < k; b++)
            for (unsigned r = 0; r < F; r++)
                for (unsigned c0 = 0; c0 < F; c0++) {
                    uint16_t got;
                    std::memcpy(&got, mc.c.l0a + 4096 + (size_t(a) * k + b) * A_FRACTAL + 2 * (r * F + c0), 2);
                    ASSERT_EQ(got, im2col_at(mc.c.l1 + 1024, h, w, kh, kw, stride, pad, p0 + a * F + r, q0 + b, c0))
                        << what << ": fractal (" << a << ", " << b << ") row " << r << " c0 " << c0;
                }
    EXPECT_EQ(mc.c.l0a[4096 + m * k * A_FRACTAL], 0xee) << what;  // nothing past the tile
}

}  // namespace

TEST(CubeExec, Im2colMovesTheTapsOfEachOutputPixel)
{
    // 3 x 3, stride 2, padding 1 on 5 x 6 (two C1 planes): 3 x 3 outputs,
    // one fractal of pixels (rows 9..15 zero), 18 taps.
    expect_im2col(5, 6, 2, 3, 3, 2, 1, 1, 18, 0, 0);
    // 3 x 3, stride 1, padding 1 on 8 x 8: 64 pixels; from pixel 16 and tap 4.
    expect_im2col(8, 8, 1, 3, 3, 1, 1, 2, 3, 16, 4);
    // 1 x 1, stride 2 on 7 x 9, three planes: a strided copy; the last
    // fractal of pixels part past Ho x Wo (20 outputs).
    expect_im2col(7, 9, 3, 1, 1, 2, 0, 2, 3, 0, 0);
}

TEST(CubeExec, Im2colOperandsOutOfRangeTrapBeforeAnythingMoves)
{
    struct Case {
        std::string src;
        npu_trap_kind trap;
        std::string message;
    };
    const Case cases[] = {
        {"li s1, 2\nli s2, 2\nli s3, 0x010505\nim2dim s1, s2, s3\nhalt\n", NPU_TRAP_ILLEGAL,
         "im2dim: a 5 x 5 kernel does not fit the 2 x 2 map padded by 0"},
        {"li s1, 2\nli s2, 2\nli s3, 0x0101\nim2dim s1, s2, s3\nhalt\n", NPU_TRAP_ILLEGAL,
         "im2dim: kernel 1 x 1, stride 0 (0x101): each 1 .. 255, nothing past bit 31"},
        {"li s1, 0\nli s2, 2\nli s3, 0x010101\nim2dim s1, s2, s3\nhalt\n", NPU_TRAP_ILLEGAL,
         "im2dim: a 0 x 2 feature map is not 1 .. 65535 on each side"},
        // 64 x 64 pixels, 3 x 3 taps: tap 9 x 256 is in C1 plane 256, past 1 MiB of L1.
        {"li s1, 64\nli s2, 64\nli s3, 0x01010303\nim2dim s1, s2, s3\nli s6, 2304\nslli s6, s6, 32\n"
         "mvlai s0, s0, s6, 0\nhalt\n",
         NPU_TRAP_CUBE_BOUNDS, "mvlai: 33685504 bytes at L1 0x0 reach outside the 1048576-byte L1"},
        // A 65535 x 65535 map from tap 2^32 - 1: the planes' bytes would wrap 64 bits; they saturate.
        {"li s1, 65535\nli s3, 0x01010101\nim2dim s1, s1, s3\nli s6, -1\nslli s6, s6, 32\n"
         "mvlai s0, s0, s6, 0\nhalt\n",
         NPU_TRAP_CUBE_BOUNDS, "mvlai: 18446744073709551615 bytes at L1 0x0 reach outside the 1048576-byte L1"},
    };
    for (const Case &t : cases) {
        CubeMachine mc(t.src);
        EXPECT_EQ(mc.run(), NPU_CORE_TRAPPED) << t.src;
        EXPECT_EQ(mc.c.trap.kind, t.trap) << t.src;
        EXPECT_EQ(std::string(mc.c.trap.message), t.message) << t.src;
    }
}
