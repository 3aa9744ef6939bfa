// Semantics of the functional core: every vector ALU, predicate, scalar and
// control-flow instruction at several VLENs, with and without lane masks, the
// traps a faulting program gets, and the core configuration checks. SFU in
// test_exec_sfu.cc, UB and DMA in test_exec_mem.cc.
#include "exec_harness.h"
#include "lanes_simd.h"

using namespace exec_test;

INSTANTIATE_TEST_SUITE_P(Exec, ExecVlen, ::testing::Values(128u, 256u, 2048u),
                         [](const ::testing::TestParamInfo<unsigned> &p) {
                             return "vlen" + std::to_string(p.param);
                         });

// ================================ vector ALU =====================================

TEST_P(ExecVlen, EveryLanewiseVectorOpMatchesItsReferenceMaskedUnmaskedAndAliased)
{
    Machine m(GetParam());
    ASSERT_EQ(m.init_rc, NPU_OK);
    std::mt19937 rng(11);
    for (const VecCase &vc : kVecCases) {
        for (int dt = 0; dt < 4; dt++) {
            if (!((vc.dtypes >> dt) & 1))
                continue;
            for (int variant = 0; variant < 3; variant++) { // 0 plain, 1 masked, 2 vd == va
                for (int round = 0; round < 4; round++) {
                    unsigned n = m.lanes(dt);
                    for (int v = 1; v <= 4; v++)
                        for (unsigned i = 0; i < n; i++)
                            m.set_lane(v, dt, i, random_lane(rng, dt));
                    if (vc.op == NPU_OP_VSHL || vc.op == NPU_OP_VSHR || vc.op == NPU_OP_VSRA)
                        for (unsigned i = 0; i < n; i++) // some counts beyond the lane width
                            m.set_lane(2, dt, i, rng() % 70);
                    m.c.p[2][0] = ((uint64_t)rng() << 32) | rng();
                    m.c.p[2][1] = ((uint64_t)rng() << 32) | rng();
                    std::vector<uint32_t> a(n), b(n), c(n), old(n);
                    for (unsigned i = 0; i < n; i++) {
                        a[i] = m.lane(1, dt, i);
                        b[i] = m.lane(2, dt, i);
                        c[i] = m.lane(3, dt, i);
                        old[i] = m.lane(variant == 2 ? 1 : 4, dt, i);
                    }
                    int vd = variant == 2 ? 1 : 4;
                    npu_insn in = insn(vc.op, dt, vd, 1, 2, 3);
                    if (variant == 1)
                        in = masked(in, 2);
                    ASSERT_EQ(m.exec(in), NPU_CORE_HALTED) << vc.name << "." << dt_name(dt) << ": " << m.c.trap.message;
                    for (unsigned i = 0; i < n; i++) {
                        bool active = variant != 1 || m.pbit(2, i);
                        uint32_t want = active ? vc.ref(dt, a[i], b[i], c[i]) : old[i];
                        ASSERT_EQ(m.lane(vd, dt, i), want)
                            << vc.name << "." << dt_name(dt) << " variant " << variant << " lane " << i
                            << " a=" << hex(a[i]) << " b=" << hex(b[i]) << " c=" << hex(c[i]);
                    }
                }
            }
        }
    }
}

TEST_P(ExecVlen, MaskedAddKeepsInactiveLanes)
{
    Machine m(GetParam());
    unsigned n = m.lanes(NPU_F32);
    for (unsigned i = 0; i < n; i++) {
        m.set_f32(1, i, (float)i);
        m.set_f32(2, i, 100.0f);
        m.set_f32(3, i, -1.0f);
    }
    m.c.p[1][0] = 0x5555555555555555ull; // even lanes active
    ASSERT_EQ(m.exec(masked(insn(NPU_OP_VADD, NPU_F32, 3, 1, 2), 1)), NPU_CORE_HALTED);
    for (unsigned i = 0; i < n; i++)
        EXPECT_EQ(m.f32(3, i), i % 2 == 0 ? 100.0f + (float)i : -1.0f) << "lane " << i;
}

// The whole-register lane loops (sim/lanes_simd.h): the AVX2/FMA/F16C pass
// gives the plain pass's bits for every f32 operation and both conversions,
// on random bit patterns weighted towards the edges (zeros, subnormals,
// infinities, NaNs with payloads and either sign, the binary16 overflow and
// underflow thresholds), with d aliasing a source.
TEST(Exec, TheWholeRegisterLanesAreTheSameEightAtATime)
{
    std::mt19937_64 rng(5);
    const uint32_t edges[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00800000u, 0x7f800000u,
                              0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fbfffffu, 0x477ff000u,
                              0x477fefffu, 0x33000000u, 0x33000001u, 0x387fc000u, 0x3f800000u, 0xbf800000u};
    auto f32_bits = [&]() -> uint32_t {
        const uint64_t x = rng();
        switch (x % 4) {
        case 0: return edges[(x >> 8) % (sizeof edges / sizeof *edges)];
        case 1: return static_cast<uint32_t>(x >> 16) & 0x807fffffu;              // zero or subnormal exponent
        case 2: return static_cast<uint32_t>(x >> 32) ^ ((x >> 8) & 1 ? 0x7f800000u : 0);  // any, or near inf/NaN
        default: return 0x38000000u + static_cast<uint32_t>((x >> 16) % 0x10000000u);  // the binary16 range
        }
    };
    const unsigned n = 64; // f32 lanes of a 2048-bit register; 128 f16 lanes
    uint8_t a[256], b[256], c[256], d1[256], d2[256];
    auto fill = [&](uint8_t *v) {
        for (unsigned i = 0; i < n; i++) {
            const uint32_t u = f32_bits();
            std::memcpy(v + 4 * i, &u, 4);
        }
    };
#ifdef NPUSIM_LANES_AVX2
    if (!lanes_wide(8))
        GTEST_SKIP() << "this host has no AVX2, FMA or F16C: only the plain passes run here";
    for (int round = 0; round < 3000; round++) {
        fill(a);
        fill(b);
        fill(c);
        for (lanes_op op : {LANES_ADD, LANES_SUB, LANES_MUL}) {
            std::memcpy(d1, a, sizeof a);
            std::memcpy(d2, a, sizeof a);
            lanes_f32_plain(op, d1, d1, b, n); // d aliases a
            lanes_f32_avx2(op, d2, d2, b, n);
            ASSERT_EQ(0, std::memcmp(d1, d2, 4 * n)) << "op " << op << " round " << round;
        }
        for (lanes_fma_form form : {LANES_FMA, LANES_FMS, LANES_FNMA}) {
            std::memcpy(d1, c, sizeof c);
            std::memcpy(d2, c, sizeof c);
            lanes_fma_plain(form, d1, a, b, d1, n); // d aliases c
            lanes_fma_avx2(form, d2, a, b, d2, n);
            ASSERT_EQ(0, std::memcmp(d1, d2, 4 * n)) << "form " << form << " round " << round;
        }
        // every binary16 bit pattern comes by in the halves of a's words
        for (unsigned first : {0u, 64u}) {
            std::memcpy(d1, a, sizeof a);
            std::memcpy(d2, a, sizeof a);
            lanes_widen_plain(d1, d1, first, n);
            lanes_widen_avx2(d2, d2, first, n);
            ASSERT_EQ(0, std::memcmp(d1, d2, 4 * n)) << "widen from " << first << " round " << round;
        }
        std::memcpy(d1, a, sizeof a);
        std::memcpy(d2, a, sizeof a);
        lanes_narrow_plain(d1, d1, b, n, 2 * n);
        lanes_narrow_avx2(d2, d2, b, n, 2 * n);
        ASSERT_EQ(0, std::memcmp(d1, d2, 4 * n)) << "narrow round " << round;
        std::memcpy(d1, a, sizeof a);
        std::memcpy(d2, a, sizeof a);
        lanes_rcp_plain(d1, d1, n);
        lanes_rcp_avx2(d2, d2, n);
        ASSERT_EQ(0, std::memcmp(d1, d2, 4 * n)) << "rcp round " << round;
    }
    // and all 65,536 halves widened, then narrowed back
    for (unsigned h0 = 0; h0 < 0x10000; h0 += 128) {
        for (unsigned i = 0; i < 128; i++) {
            const uint16_t h = static_cast<uint16_t>(h0 + i);
            std::memcpy(a + 2 * i, &h, 2);
        }
        lanes_widen_plain(d1, a, 0, 64);
        lanes_widen_avx2(d2, a, 0, 64);
        ASSERT_EQ(0, std::memcmp(d1, d2, 256)) << "halves from " << h0;
        lanes_widen_plain(b, a, 64, 64);
        lanes_widen_avx2(c, a, 64, 64);
        ASSERT_EQ(0, std::memcmp(b, c, 256)) << "halves from " << h0 + 64;
        lanes_narrow_plain(d1, d2, c, 64, 128);
        lanes_narrow_avx2(d2, d2, c, 64, 128);
        ASSERT_EQ(0, std::memcmp(d1, d2, 256)) << "halves back from " << h0;
    }
#else
    GTEST_SKIP() << "not an x86-64 build: only the plain passes exist";
#endif
}

TEST(Exec, MaxOfSignedZerosIsPositiveZeroAndMinIsNegativeZero)
{
    Machine m;
    m.set_lane(1, NPU_F16, 0, 0x8000);
    m.set_lane(2, NPU_F16, 0, 0x0000);
    m.set_lane(1, NPU_F16, 1, 0x0000);
    m.set_lane(2, NPU_F16, 1, 0x8000);
    m.exec(insn(NPU_OP_VMAX, NPU_F16, 3, 1, 2));
    EXPECT_EQ(m.lane(3, NPU_F16, 0), 0x0000u);
    EXPECT_EQ(m.lane(3, NPU_F16, 1), 0x0000u);
    m.exec(insn(NPU_OP_VMIN, NPU_F16, 3, 1, 2));
    EXPECT_EQ(m.lane(3, NPU_F16, 0), 0x8000u);
    EXPECT_EQ(m.lane(3, NPU_F16, 1), 0x8000u);

    m.set_f32(1, 0, -0.0f);
    m.set_f32(2, 0, 0.0f);
    m.set_f32(1, 1, 1.0f);
    m.set_lane(2, NPU_F32, 1, 0x7f800001u); // signalling NaN
    m.exec(insn(NPU_OP_VMAX, NPU_F32, 3, 1, 2));
    EXPECT_EQ(m.lane(3, NPU_F32, 0), 0u);
    EXPECT_EQ(m.lane(3, NPU_F32, 1), kQNaN32);
    m.exec(insn(NPU_OP_VMIN, NPU_F32, 3, 1, 2));
    EXPECT_EQ(m.lane(3, NPU_F32, 0), 0x80000000u);
    EXPECT_EQ(m.lane(3, NPU_F32, 1), kQNaN32);
}

TEST(Exec, ArithmeticNanResultsAreCanonicalQuietNans)
{
    Machine m;
    m.set_lane(1, NPU_F16, 0, 0x7c00); // inf - inf
    m.set_lane(2, NPU_F16, 0, 0x7c00);
    m.set_lane(1, NPU_F16, 1, 0xfe37); // negative NaN with payload
    m.set_lane(2, NPU_F16, 1, 0x3c00);
    m.exec(insn(NPU_OP_VSUB, NPU_F16, 3, 1, 2));
    EXPECT_EQ(m.lane(3, NPU_F16, 0), kQNaN16);
    EXPECT_EQ(m.lane(3, NPU_F16, 1), kQNaN16);

    m.set_f32(1, 0, 0.0f);
    m.set_f32(2, 0, INFINITY);
    m.set_lane(1, NPU_F32, 1, 0xffc00001u);
    m.exec(insn(NPU_OP_VMUL, NPU_F32, 3, 1, 2));
    EXPECT_EQ(m.lane(3, NPU_F32, 0), kQNaN32);
    EXPECT_EQ(m.lane(3, NPU_F32, 1), kQNaN32);
}

TEST(Exec, AbsAndNegAreSignBitOperationsThatKeepNanPayloads)
{
    Machine m;
    m.set_lane(1, NPU_F16, 0, 0xfe37);
    m.set_lane(1, NPU_F16, 1, 0x8000);
    m.exec(insn(NPU_OP_VABS, NPU_F16, 2, 1));
    EXPECT_EQ(m.lane(2, NPU_F16, 0), 0x7e37u);
    EXPECT_EQ(m.lane(2, NPU_F16, 1), 0x0000u);
    m.exec(insn(NPU_OP_VNEG, NPU_F16, 2, 1));
    EXPECT_EQ(m.lane(2, NPU_F16, 0), 0x7e37u);
    EXPECT_EQ(m.lane(2, NPU_F16, 1), 0x0000u);
    m.set_lane(1, NPU_F32, 0, 0x7f800001u);
    m.exec(insn(NPU_OP_VNEG, NPU_F32, 2, 1));
    EXPECT_EQ(m.lane(2, NPU_F32, 0), 0xff800001u);
}

TEST(Exec, Fp32LanesKeepSubnormalsAndFmaRoundsOnce)
{
    Machine m;
    m.set_f32(1, 0, 0x1p-149f);
    m.set_f32(2, 0, 0x1p-149f);
    m.exec(insn(NPU_OP_VADD, NPU_F32, 3, 1, 2));
    EXPECT_EQ(m.f32(3, 0), 0x1p-148f);
    // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24: exact with one rounding, 2^-11 with two.
    m.set_f32(1, 0, 1 + 0x1p-12f);
    m.set_f32(2, 0, 1 + 0x1p-12f);
    m.set_f32(3, 0, 1.0f);
    m.exec(insn(NPU_OP_VFMS, NPU_F32, 4, 1, 2, 3));
    EXPECT_EQ(m.f32(4, 0), 0x1p-11f + 0x1p-24f);
}

TEST(Exec, Fp16LanesRoundOnceToNearestEven)
{
    Machine m;
    m.set_lane(1, NPU_F16, 0, 0x3c00); // 1 + 2^-11: tie, stays 1
    m.set_lane(2, NPU_F16, 0, 0x1000);
    m.set_lane(1, NPU_F16, 1, 0x3c01); // (1 + 2^-10) + 2^-11: tie, rounds up to even
    m.set_lane(2, NPU_F16, 1, 0x1000);
    m.set_lane(1, NPU_F16, 2, 0x7bff); // 65504 + 16: tie at the overflow threshold -> inf
    m.set_lane(2, NPU_F16, 2, 0x4c00);
    m.exec(insn(NPU_OP_VADD, NPU_F16, 3, 1, 2));
    EXPECT_EQ(m.lane(3, NPU_F16, 0), 0x3c00u);
    EXPECT_EQ(m.lane(3, NPU_F16, 1), 0x3c02u);
    EXPECT_EQ(m.lane(3, NPU_F16, 2), 0x7c00u);
}

TEST(Exec, RoundToIntegralBreaksTiesToEven)
{
    Machine m;
    const float in[] = { 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 3.7f, 1e20f, -0.0f };
    const float want[] = { 0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 4.0f, 1e20f, -0.0f };
    for (unsigned i = 0; i < 8; i++) {
        m.set_f32(1, i, in[i]);
        m.set_lane(2, NPU_F16, i, HB((_Float16)in[i]));
    }
    m.exec(insn(NPU_OP_VRND, NPU_F32, 3, 1));
    m.exec(insn(NPU_OP_VRND, NPU_F16, 4, 2));
    for (unsigned i = 0; i < 8; i++) {
        EXPECT_EQ(m.lane(3, NPU_F32, i), npu_f32_bits(want[i])) << i;
        EXPECT_EQ(m.lane(4, NPU_F16, i), HB((_Float16)want[i])) << i;
    }
}

TEST(Exec, FloatToIntRoundsTiesToEvenSaturatesAndMapsNanToZero)
{
    Machine m;
    const float in[] = { 2.5f, 3.5f, -2.5f, 1e10f, -INFINITY, NAN, -3e9f, 7.49f };
    const int32_t want[] = { 2, 4, -2, INT32_MAX, INT32_MIN, 0, INT32_MIN, 7 };
    for (unsigned i = 0; i < 8; i++)
        m.set_f32(1, i, in[i]);
    m.exec(insn(NPU_OP_VFTOI, NPU_I32, 2, 1));
    for (unsigned i = 0; i < 8; i++)
        EXPECT_EQ((int32_t)m.lane(2, NPU_I32, i), want[i]) << i;

    const uint16_t hin[] = { 0x7a00 /* 49152 */, 0xfa00, 0x7c00, 0x7e00, 0x3e00 /* 1.5 */, 0xb800 /* -0.5 */ };
    const int16_t hwant[] = { 32767, -32768, 32767, 0, 2, 0 };
    for (unsigned i = 0; i < 6; i++)
        m.set_lane(3, NPU_F16, i, hin[i]);
    m.exec(insn(NPU_OP_VFTOI, NPU_I16, 4, 3));
    for (unsigned i = 0; i < 6; i++)
        EXPECT_EQ((int16_t)m.lane(4, NPU_I16, i), hwant[i]) << i;
}

TEST(Exec, IntToFloatRoundsToNearestEven)
{
    Machine m;
    m.set_lane(1, NPU_I32, 0, 16777217u); // 2^24 + 1: tie -> 2^24
    m.set_lane(1, NPU_I32, 1, 16777219u); // 2^24 + 3: tie -> 2^24 + 4
    m.set_lane(1, NPU_I32, 2, (uint32_t)INT32_MIN);
    m.exec(insn(NPU_OP_VITOF, NPU_F32, 2, 1));
    EXPECT_EQ(m.f32(2, 0), 16777216.0f);
    EXPECT_EQ(m.f32(2, 1), 16777220.0f);
    EXPECT_EQ(m.f32(2, 2), -2147483648.0f);
    m.set_lane(3, NPU_I16, 0, 2049); // tie -> 2048
    m.set_lane(3, NPU_I16, 1, 2051); // tie -> 2052
    m.set_lane(3, NPU_I16, 2, (uint16_t)-32768);
    m.exec(insn(NPU_OP_VITOF, NPU_F16, 4, 3));
    EXPECT_EQ(m.lane(4, NPU_F16, 0), HB((_Float16)2048.0f));
    EXPECT_EQ(m.lane(4, NPU_F16, 1), HB((_Float16)2052.0f));
    EXPECT_EQ(m.lane(4, NPU_F16, 2), HB((_Float16)-32768.0f));
}

TEST(Exec, IntegerLanesWrapAround)
{
    Machine m;
    m.set_lane(1, NPU_I16, 0, 32767);
    m.set_lane(2, NPU_I16, 0, 1);
    m.set_lane(1, NPU_I16, 1, 0xffff);
    m.set_lane(2, NPU_I16, 1, 0xffff);
    m.exec(insn(NPU_OP_VADD, NPU_I16, 3, 1, 2));
    EXPECT_EQ((int16_t)m.lane(3, NPU_I16, 0), -32768);
    EXPECT_EQ((int16_t)m.lane(3, NPU_I16, 1), -2);
    m.set_lane(1, NPU_I32, 0, 0x80000000u);
    m.exec(insn(NPU_OP_VABS, NPU_I32, 3, 1));
    EXPECT_EQ(m.lane(3, NPU_I32, 0), 0x80000000u);
    m.set_lane(1, NPU_I32, 0, 0x10000u);
    m.set_lane(2, NPU_I32, 0, 0x10001u);
    m.exec(insn(NPU_OP_VMUL, NPU_I32, 3, 1, 2));
    EXPECT_EQ(m.lane(3, NPU_I32, 0), 0x10000u);
}

TEST_P(ExecVlen, WidenTakesLowOrHighHalfAndNarrowPacksTwoVectors)
{
    Machine m(GetParam());
    unsigned n32 = m.lanes(NPU_F32), n16 = m.lanes(NPU_F16);
    std::mt19937 rng(5);
    for (unsigned i = 0; i < n16; i++)
        m.set_lane(1, NPU_F16, i, random_lane(rng, NPU_F16));
    std::vector<uint32_t> src(n16);
    for (unsigned i = 0; i < n16; i++)
        src[i] = m.lane(1, NPU_F16, i);
    m.exec(insn(NPU_OP_VCVTL, NPU_F32, 2, 1));
    m.exec(insn(NPU_OP_VCVTH, NPU_F32, 3, 1));
    for (unsigned i = 0; i < n32; i++) {
        EXPECT_EQ(m.lane(2, NPU_F32, i), FB((float)H(src[i]))) << i;
        EXPECT_EQ(m.lane(3, NPU_F32, i), FB((float)H(src[i + n32]))) << i;
    }
    // Narrow back: exact for every non-NaN half, in order.
    m.exec(insn(NPU_OP_VCVTN, NPU_F16, 4, 2, 3));
    for (unsigned i = 0; i < n16; i++)
        EXPECT_EQ(m.lane(4, NPU_F16, i), HB(H(src[i]))) << i;
    // vd aliasing a source reads the sources before writing.
    m.exec(insn(NPU_OP_VCVTN, NPU_F16, 2, 2, 3));
    for (unsigned i = 0; i < n16; i++)
        EXPECT_EQ(m.lane(2, NPU_F16, i), HB(H(src[i]))) << i;
    m.exec(insn(NPU_OP_VCVTH, NPU_F32, 2, 2));
    for (unsigned i = 0; i < n32; i++)
        EXPECT_EQ(m.lane(2, NPU_F32, i), FB((float)H(src[i + n32]))) << i;
    // Narrowing rounds to nearest even; masks govern f16 destination lanes.
    m.set_f32(5, 0, 1 + 0x1p-11f);
    m.set_f32(5, 1, 1 + 0x3p-11f);
    m.set_f32(6, 0, 1e6f);
    std::memset(m.c.v[7], 0xee, sizeof m.c.v[7]);
    m.c.p[3][0] = 0;
    m.c.p[3][1] = 0;
    m.c.p[3][0] |= 1ull | 2ull;
    m.c.p[3][n32 >> 6] |= 1ull << (n32 & 63);
    m.exec(masked(insn(NPU_OP_VCVTN, NPU_F16, 7, 5, 6), 3));
    EXPECT_EQ(m.lane(7, NPU_F16, 0), 0x3c00u);
    EXPECT_EQ(m.lane(7, NPU_F16, 1), 0x3c02u);
    EXPECT_EQ(m.lane(7, NPU_F16, n32), 0x7c00u);
    EXPECT_EQ(m.lane(7, NPU_F16, 2), 0xeeeeu);
}

TEST_P(ExecVlen, BroadcastsAndIotaFillEveryActiveLane)
{
    Machine m(GetParam());
    m.c.s[1] = 0xabcd123400000000ull | npu_f32_bits(0.1f);
    m.exec(insn(NPU_OP_VBCAST, NPU_F16, 1, 1));
    m.exec(insn(NPU_OP_VBCAST, NPU_F32, 2, 1));
    m.exec(insn(NPU_OP_VBCAST, NPU_I16, 3, 1));
    m.exec(insn(NPU_OP_VBCAST, NPU_I32, 4, 1));
    for (unsigned i = 0; i < m.lanes(NPU_F16); i++) {
        EXPECT_EQ(m.lane(1, NPU_F16, i), HB((_Float16)0.1f));
        EXPECT_EQ(m.lane(3, NPU_I16, i), npu_f32_bits(0.1f) & 0xffffu);
    }
    for (unsigned i = 0; i < m.lanes(NPU_F32); i++) {
        EXPECT_EQ(m.f32(2, i), 0.1f);
        EXPECT_EQ(m.lane(4, NPU_I32, i), npu_f32_bits(0.1f));
    }
    m.exec(insn(NPU_OP_VBCASTI, NPU_F16, 5, 0, 0, 0, 0x3555));
    m.exec(insn(NPU_OP_VBCASTI, NPU_I32, 6, 0, 0, 0, -7));
    std::memset(m.c.v[7], 0, sizeof m.c.v[7]);
    m.c.p[1][0] = 0xf0f0f0f0f0f0f0f0ull;
    m.c.p[1][1] = 0xf0f0f0f0f0f0f0f0ull;
    m.exec(masked(insn(NPU_OP_VIOTA, NPU_I16, 7), 1));
    for (unsigned i = 0; i < m.lanes(NPU_F16); i++) {
        EXPECT_EQ(m.lane(5, NPU_F16, i), 0x3555u);
        EXPECT_EQ(m.lane(7, NPU_I16, i), m.pbit(1, i) ? i : 0u) << i;
    }
    for (unsigned i = 0; i < m.lanes(NPU_I32); i++)
        EXPECT_EQ((int32_t)m.lane(6, NPU_I32, i), -7);
}

TEST_P(ExecVlen, ComparesSetPredicateBitsKeepMaskedOnesAndClearBitsBeyondLanes)
{
    Machine m(GetParam());
    std::mt19937 rng(77);
    const npu_opcode ops[] = { NPU_OP_VCEQ, NPU_OP_VCNE, NPU_OP_VCLT, NPU_OP_VCLE, NPU_OP_VCGT, NPU_OP_VCGE };
    for (npu_opcode op : ops) {
        for (int dt = 0; dt < 4; dt++) {
            for (int use_mask = 0; use_mask < 2; use_mask++) {
                unsigned n = m.lanes(dt);
                for (unsigned i = 0; i < n; i++) {
                    uint32_t a = random_lane(rng, dt);
                    m.set_lane(1, dt, i, a);
                    m.set_lane(2, dt, i, (rng() % 3 == 0) ? a : random_lane(rng, dt)); // some equal
                }
                m.c.p[4][0] = m.c.p[4][1] = ~0ull; // old pd: all ones
                m.c.p[5][0] = ((uint64_t)rng() << 32) | rng();
                m.c.p[5][1] = ((uint64_t)rng() << 32) | rng();
                uint64_t mask_bits[2] = { m.c.p[5][0], m.c.p[5][1] };
                npu_insn in = insn(op, dt, 4, 1, 2);
                ASSERT_EQ(m.exec(use_mask ? masked(in, 5) : in), NPU_CORE_HALTED);
                for (unsigned i = 0; i < NPU_MAX_LANES; i++) {
                    bool want;
                    if (i >= n) {
                        want = false;
                    } else if (use_mask && !((mask_bits[i >> 6] >> (i & 63)) & 1)) {
                        want = true; // old bit kept
                    } else {
                        uint32_t a = m.lane(1, dt, i), b = m.lane(2, dt, i);
                        double x = is_int(dt) ? (double)I(dt, a) : as_double(dt, a);
                        double y = is_int(dt) ? (double)I(dt, b) : as_double(dt, b);
                        switch (op) {
                        case NPU_OP_VCEQ: want = x == y; break;
                        case NPU_OP_VCNE: want = x != y; break;
                        case NPU_OP_VCLT: want = x < y; break;
                        case NPU_OP_VCLE: want = x <= y; break;
                        case NPU_OP_VCGT: want = x > y; break;
                        default: want = x >= y; break;
                        }
                    }
                    ASSERT_EQ(m.pbit(4, i), want) << "op " << op << " " << dt_name(dt) << " lane " << i;
                }
            }
        }
    }
}

TEST(Exec, OrderedComparesAreFalseOnNanAndNotEqualIsTrue)
{
    Machine m;
    m.set_lane(1, NPU_F32, 0, kQNaN32);
    m.set_f32(2, 0, 1.0f);
    m.set_f32(1, 1, -0.0f);
    m.set_f32(2, 1, 0.0f);
    for (npu_opcode op : { NPU_OP_VCEQ, NPU_OP_VCLT, NPU_OP_VCLE, NPU_OP_VCGT, NPU_OP_VCGE }) {
        m.exec(insn(op, NPU_F32, 1, 1, 2));
        EXPECT_FALSE(m.pbit(1, 0)) << op;
    }
    m.exec(insn(NPU_OP_VCNE, NPU_F32, 1, 1, 2));
    EXPECT_TRUE(m.pbit(1, 0));
    EXPECT_FALSE(m.pbit(1, 1)); // -0 == +0
    m.exec(insn(NPU_OP_VCEQ, NPU_F32, 1, 1, 2));
    EXPECT_TRUE(m.pbit(1, 1));
}

TEST_P(ExecVlen, SelectPicksByPredicateAndIsNeverMasked)
{
    Machine m(GetParam());
    for (int dt : { NPU_F16, NPU_I32 }) {
        unsigned n = m.lanes(dt);
        for (unsigned i = 0; i < n; i++) {
            m.set_lane(1, dt, i, 1000 + i);
            m.set_lane(2, dt, i, 2000 + i);
        }
        m.c.p[6][0] = 0x123456789abcdef0ull;
        m.c.p[6][1] = 0x0fedcba987654321ull;
        npu_insn in = insn(NPU_OP_VSEL, dt, 3, 1, 2);
        in.pg = 6;
        ASSERT_EQ(m.exec(in), NPU_CORE_HALTED);
        for (unsigned i = 0; i < n; i++)
            EXPECT_EQ(m.lane(3, dt, i), (m.pbit(6, i) ? 1000u : 2000u) + i) << i;
    }
}

TEST(Exec, ImmediateShiftsUseTheImmediateAndRejectCountsOfLaneWidth)
{
    Machine m;
    m.set_lane(1, NPU_I16, 0, 0x8421);
    m.exec(insn(NPU_OP_VSHLI, NPU_I16, 2, 1, 0, 0, 3));
    EXPECT_EQ(m.lane(2, NPU_I16, 0), 0x2108u);
    m.exec(insn(NPU_OP_VSHRI, NPU_I16, 2, 1, 0, 0, 4));
    EXPECT_EQ(m.lane(2, NPU_I16, 0), 0x0842u);
    m.exec(insn(NPU_OP_VSRAI, NPU_I16, 2, 1, 0, 0, 4));
    EXPECT_EQ(m.lane(2, NPU_I16, 0), 0xf842u);
    m.set_lane(1, NPU_I32, 0, 0x80000000u);
    m.exec(insn(NPU_OP_VSRAI, NPU_I32, 2, 1, 0, 0, 31));
    EXPECT_EQ(m.lane(2, NPU_I32, 0), 0xffffffffu);
    EXPECT_EQ(m.exec(insn(NPU_OP_VSHLI, NPU_I16, 2, 1, 0, 0, 16)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
    EXPECT_STREQ(m.c.trap.message, "illegal instruction: vshli.i16 shift amount 16 is not in 0..15");
}

// ================================ predicates =====================================

TEST_P(ExecVlen, WhileMasksATailAndClearsBitsBeyondTheLanes)
{
    Machine m(GetParam());
    for (int dt : { NPU_F16, NPU_F32 }) {
        unsigned n = m.lanes(dt);
        for (int64_t limit : { (int64_t)5, (int64_t)0, (int64_t)-3, (int64_t)n, (int64_t)n + 100 }) {
            m.c.p[1][0] = m.c.p[1][1] = ~0ull;
            m.c.s[2] = (uint64_t)limit;
            ASSERT_EQ(m.exec(insn(NPU_OP_PWHILE, dt, 1, 2)), NPU_CORE_HALTED);
            for (unsigned i = 0; i < NPU_MAX_LANES; i++)
                ASSERT_EQ(m.pbit(1, i), i < n && (int64_t)i < limit) << "limit " << limit << " lane " << i;
            m.exec(insn(NPU_OP_PCNT, dt, 3, 1));
            EXPECT_EQ(m.c.s[3], (uint64_t)std::max<int64_t>(0, std::min<int64_t>(limit, n)));
        }
    }
}

TEST(Exec, PredicateLogicActsOnAllBitsAndCountIsPerDtype)
{
    Machine m;
    m.c.p[1][0] = 0xff00ff00ff00ff00ull;
    m.c.p[1][1] = 1;
    m.c.p[2][0] = 0x0ff00ff00ff00ff0ull;
    m.c.p[2][1] = 3;
    m.exec(insn(NPU_OP_PAND, 0, 3, 1, 2));
    EXPECT_EQ(m.c.p[3][0], 0x0f000f000f000f00ull);
    EXPECT_EQ(m.c.p[3][1], 1u);
    m.exec(insn(NPU_OP_POR, 0, 3, 1, 2));
    EXPECT_EQ(m.c.p[3][0], 0xfff0fff0fff0fff0ull);
    m.exec(insn(NPU_OP_PXOR, 0, 3, 1, 2));
    EXPECT_EQ(m.c.p[3][0], 0xf0f0f0f0f0f0f0f0ull);
    EXPECT_EQ(m.c.p[3][1], 2u);
    m.exec(insn(NPU_OP_PNOT, 0, 3, 1));
    EXPECT_EQ(m.c.p[3][0], 0x00ff00ff00ff00ffull);
    EXPECT_EQ(m.c.p[3][1], ~1ull);
    m.exec(insn(NPU_OP_PCNT, NPU_F16, 4, 1)); // lanes 0..15 of 0xff00
    EXPECT_EQ(m.c.s[4], 8u);
    m.exec(insn(NPU_OP_PCNT, NPU_I32, 4, 1)); // lanes 0..7: none
    EXPECT_EQ(m.c.s[4], 0u);
}

// ================================ scalar ==========================================

TEST(Exec, ScalarAluFollowsTheDescriptions)
{
    struct Case { npu_opcode op; uint64_t a, b, want; };
    const uint64_t big = 0x8000000000000001ull;
    const Case cases[] = {
        { NPU_OP_ADD, 5, (uint64_t)-7, (uint64_t)-2 },
        { NPU_OP_SUB, 5, 7, (uint64_t)-2 },
        { NPU_OP_MUL, big, 3, 0x8000000000000003ull },
        { NPU_OP_DIVU, 100, 7, 14 },
        { NPU_OP_DIVU, 100, 0, ~0ull },
        { NPU_OP_REMU, 100, 7, 2 },
        { NPU_OP_REMU, 100, 0, 100 },
        { NPU_OP_AND, 0xf0f0, 0xff00, 0xf000 },
        { NPU_OP_OR, 0xf0f0, 0xff00, 0xfff0 },
        { NPU_OP_XOR, 0xf0f0, 0xff00, 0x0ff0 },
        { NPU_OP_SLL, 1, 65, 2 },
        { NPU_OP_SRL, big, 63, 1 },
        { NPU_OP_SRA, big, 62, (uint64_t)-2 },
        { NPU_OP_SLT, (uint64_t)-1, 1, 1 },
        { NPU_OP_SLTU, (uint64_t)-1, 1, 0 },
        { NPU_OP_SEQ, 9, 9, 1 },
        { NPU_OP_MIN, (uint64_t)-5, 3, (uint64_t)-5 },
        { NPU_OP_MAX, (uint64_t)-5, 3, 3 },
    };
    Machine m;
    for (const Case &c : cases) {
        m.c.s[1] = c.a;
        m.c.s[2] = c.b;
        ASSERT_EQ(m.exec(insn(c.op, 0, 3, 1, 2)), NPU_CORE_HALTED);
        EXPECT_EQ(m.c.s[3], c.want) << "op " << c.op;
    }
    struct ICase { npu_opcode op; uint64_t a; int32_t imm; uint64_t want; };
    const ICase icases[] = {
        { NPU_OP_ADDI, 10, -3, 7 },
        { NPU_OP_MULI, 10, -3, (uint64_t)-30 },
        { NPU_OP_ANDI, ~0ull, -16, ~0ull << 4 },
        { NPU_OP_ORI, 0, -1, ~0ull },
        { NPU_OP_XORI, 0xff, 0x0f, 0xf0 },
        { NPU_OP_SLLI, 3, 62, 0xc000000000000000ull },
        { NPU_OP_SRLI, ~0ull, 60, 0xf },
        { NPU_OP_SRAI, big, 1, 0xc000000000000000ull },
        { NPU_OP_SLTI, (uint64_t)-4, -3, 1 },
        { NPU_OP_MINI, 7, -1, (uint64_t)-1 },
        { NPU_OP_MAXI, 7, -1, 7 },
        { NPU_OP_LI, 0, -2, (uint64_t)-2 },
        { NPU_OP_LF, 0, (int32_t)0xbf800000u, 0xbf800000ull },
        { NPU_OP_MV, 1234, 0, 1234 },
    };
    for (const ICase &c : icases) {
        m.c.s[1] = c.a;
        ASSERT_EQ(m.exec(imm_insn(c.op, 3, 1, c.imm)), NPU_CORE_HALTED);
        EXPECT_EQ(m.c.s[3], c.want) << "op " << c.op;
    }
    m.c.s[3] = 0x1111111122222222ull;
    m.exec(imm_insn(NPU_OP_LIH, 3, 0, (int32_t)0xdeadbeefu));
    EXPECT_EQ(m.c.s[3], 0xdeadbeef22222222ull);
    EXPECT_EQ(m.exec(imm_insn(NPU_OP_SLLI, 3, 1, 64)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
}

TEST(Exec, RegisterZeroReadsZeroAndDiscardsWrites)
{
    Machine m;
    m.load({ li(0, 42), imm_insn(NPU_OP_ADDI, 1, 0, 5), halt() });
    m.run();
    EXPECT_EQ(m.c.s[0], 0u);
    EXPECT_EQ(m.c.s[1], 5u);
}

TEST_P(ExecVlen, SpecialRegistersDescribeTheCoreAndTheHostFillsTheShape)
{
    Machine m(GetParam());
    unsigned v = GetParam();
    m.c.spr[NPU_SPR_SHAPE_C] = 37;
    const std::pair<int, uint64_t> want[] = {
        { NPU_SPR_LANES_F16, v / 16 }, { NPU_SPR_LANES_F32, v / 32 }, { NPU_SPR_VLENB, v / 8 },
        { NPU_SPR_COREID, 0 },         { NPU_SPR_NCORES, 1 },         { NPU_SPR_UB_BYTES, 16384 },
        { NPU_SPR_SHAPE_C, 37 },
    };
    for (auto [spr, value] : want) {
        ASSERT_EQ(m.exec(imm_insn(NPU_OP_SRD, 1, 0, spr)), NPU_CORE_HALTED);
        EXPECT_EQ(m.c.s[1], value) << "spr " << spr;
    }
    npu_core_reset(&m.c);
    EXPECT_EQ(m.c.spr[NPU_SPR_SHAPE_C], 37u); // reset keeps the host's values
    EXPECT_EQ(m.exec(imm_insn(NPU_OP_SRD, 1, 0, NPU_NUM_SPRS)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
}

// ================================ control flow ====================================

TEST(Exec, ConditionalBranchesTakeOrFallThrough)
{
    struct Case { npu_opcode op; int64_t a, b; bool taken; };
    const Case cases[] = {
        { NPU_OP_BEQ, 3, 3, true },   { NPU_OP_BEQ, 3, 4, false },
        { NPU_OP_BNE, 3, 4, true },   { NPU_OP_BNE, 3, 3, false },
        { NPU_OP_BLT, -1, 0, true },  { NPU_OP_BLT, 0, -1, false },
        { NPU_OP_BGE, 0, -1, true },  { NPU_OP_BGE, -1, 0, false },
        { NPU_OP_BLTU, 0, -1, true }, { NPU_OP_BLTU, -1, 0, false },
        { NPU_OP_BGEU, -1, 0, true }, { NPU_OP_BGEU, 0, -1, false },
        { NPU_OP_BNEZ, 2, 0, true },  { NPU_OP_BNEZ, 0, 0, false },
        { NPU_OP_BEQZ, 0, 0, true },  { NPU_OP_BEQZ, 2, 0, false },
    };
    Machine m;
    for (const Case &c : cases) {
        // 0: branch +3 ; 1: li s3, 1 ; 2: halt ; 3: li s3, 2 ; 4: halt
        m.load({ insn(c.op, 0, 0, 1, 2, 0, 3), li(3, 1), halt(), li(3, 2), halt() });
        m.c.s[1] = (uint64_t)c.a;
        m.c.s[2] = (uint64_t)c.b;
        npu_step_info info;
        npu_core_step(&m.c, &info);
        EXPECT_EQ(info.branch_taken, c.taken ? 1 : 0) << "op " << c.op;
        EXPECT_EQ(info.next_pc, c.taken ? 3u : 1u);
        m.run();
        EXPECT_EQ(m.c.s[3], c.taken ? 2u : 1u) << "op " << c.op << " a=" << c.a << " b=" << c.b;
    }
}

TEST(Exec, CountedLoopRunsItsBodyCountTimes)
{
    Machine m;
    // s1 = 5; do { s2 += 3 } while (--s1)
    m.load({ li(1, 5), imm_insn(NPU_OP_ADDI, 2, 2, 3), insn(NPU_OP_LOOP, 0, 1, 0, 0, 0, -1), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_HALTED);
    EXPECT_EQ(m.c.s[2], 15u);
    EXPECT_EQ(m.c.s[1], 0u);
    EXPECT_EQ(m.c.retired, 1u + 5 * 2 + 1);
}

TEST(Exec, JumpAndLinkThenJumpRegisterReturns)
{
    Machine m;
    // 0: jal s5, +3 ; 1: li s2, 9 ; 2: halt ; 3: li s1, 7 ; 4: jr s5
    m.load({ insn(NPU_OP_JAL, 0, 5, 0, 0, 0, 3), li(2, 9), halt(), li(1, 7), insn(NPU_OP_JR, 0, 0, 5) });
    EXPECT_EQ(m.run(), NPU_CORE_HALTED);
    EXPECT_EQ(m.c.s[5], 1u);
    EXPECT_EQ(m.c.s[1], 7u);
    EXPECT_EQ(m.c.s[2], 9u);
    EXPECT_EQ(m.c.pc, 2u); // the PC stays on the halt
    m.load({ insn(NPU_OP_J, 0, 0, 0, 0, 0, 2), li(1, 1), halt() });
    m.c.s[1] = 0;
    m.run();
    EXPECT_EQ(m.c.s[1], 0u);
}

TEST(Exec, TakenBranchOutsideTheProgramTrapsAtTheBranchBeforeWritingRegisters)
{
    Machine m;
    m.load({ li(1, 3), insn(NPU_OP_JAL, 0, 5, 0, 0, 0, 10), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_PC_OUT_OF_RANGE);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 11u);
    EXPECT_EQ(m.c.pc, 1u);
    EXPECT_EQ(m.c.s[5], 0u);
    EXPECT_EQ(m.c.retired, 1u);

    m.load({ li(1, 3), insn(NPU_OP_LOOP, 0, 1, 0, 0, 0, -5), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, (uint64_t)-4);
    EXPECT_EQ(m.c.s[1], 3u);

    m.load({ li(1, 99), insn(NPU_OP_JR, 0, 0, 1), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_PC_OUT_OF_RANGE);
    EXPECT_EQ(m.c.trap.addr, 99u);

    // Not taken: the target is never checked.
    m.load({ insn(NPU_OP_BEQZ, 0, 0, 1, 0, 0, 1000), halt() });
    m.c.s[1] = 1;
    EXPECT_EQ(m.run(), NPU_CORE_HALTED);
}

TEST(Exec, RunningOffTheEndTrapsAtTheFirstMissingInstruction)
{
    Machine m;
    m.load({ li(1, 1), li(2, 2) });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_PC_OUT_OF_RANGE);
    EXPECT_EQ(m.c.trap.pc, 2u);
    EXPECT_EQ(m.c.trap.addr, 2u);
    EXPECT_EQ(m.c.retired, 2u);
    EXPECT_EQ(std::string(m.c.trap.message).rfind("ran off the end of the program", 0), 0u) << m.c.trap.message;
    EXPECT_STREQ(npu_trap_name(m.c.trap.kind), "pc_out_of_range");
}

TEST(Exec, UndecodableWordTrapsAsIllegalInstruction)
{
    Machine m;
    npu_insn bad;
    std::memset(&bad, 0, sizeof bad); // op == NPU_OP_INVALID
    m.load({ li(1, 1), bad, halt() });
    uint64_t words[3] = { 0, 0xff00000000000000ull, 0 };
    m.prog.words = words;
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 0u);
    EXPECT_STREQ(m.c.trap.message, "illegal instruction: word 0xff00000000000000 does not decode");
    EXPECT_STREQ(npu_trap_name(NPU_TRAP_ILLEGAL), "illegal_instruction");
    // A further step does nothing.
    EXPECT_EQ(npu_core_step(&m.c, nullptr), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.retired, 1u);
}

TEST(Exec, DtypeTheRowDoesNotAllowIsIllegal)
{
    Machine m;
    EXPECT_EQ(m.exec(insn(NPU_OP_VFMA, NPU_I16, 1, 2, 3, 4)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
    EXPECT_STREQ(m.c.trap.message, "illegal instruction: vfma does not take dtype i16");
}

TEST(Exec, HaltStopsBarrierWaitsAndRetiredCountsPerOpcode)
{
    Machine m;
    m.load({ li(1, 1), insn(NPU_OP_BARRIER), insn(NPU_OP_NOP), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_AT_BARRIER);
    EXPECT_EQ(m.c.pc, 2u);
    EXPECT_EQ(npu_core_step(&m.c, nullptr), NPU_CORE_AT_BARRIER); // waits until released
    m.c.state = NPU_CORE_RUNNING;
    EXPECT_EQ(m.run(), NPU_CORE_HALTED);
    EXPECT_EQ(m.c.pc, 3u);
    EXPECT_EQ(npu_core_step(&m.c, nullptr), NPU_CORE_HALTED);
    EXPECT_EQ(m.c.retired, 4u);
    EXPECT_EQ(m.c.op_count[NPU_OP_LI], 1u);
    EXPECT_EQ(m.c.op_count[NPU_OP_HALT], 1u);
}

TEST(Exec, RaiseRecordsTheFirstTrapOnly)
{
    Machine m;
    m.load({ li(1, 1), halt() });
    npu_core_raise(&m.c, NPU_TRAP_MAX_INSNS, 0, "stopped after %d instructions", 0);
    npu_core_raise(&m.c, NPU_TRAP_DEADLOCK, 0, "second");
    EXPECT_EQ(m.c.state, NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MAX_INSNS);
    EXPECT_STREQ(m.c.trap.message, "stopped after 0 instructions");
    EXPECT_STREQ(npu_trap_name(NPU_TRAP_DEADLOCK), "deadlock");
}

// ================================ configuration ==================================

TEST(Exec, InitRejectsConfigurationsOutsideTheirRanges)
{
    npu_program prog;
    std::memset(&prog, 0, sizeof prog);
    npu_core c;
    const npu_core_config bad[] = {
        { 96, 4096, 0, 1, NPU_SFU_EXACT, 12, 0, 0, 0, 0, 1 },    // VLEN not a power of two
        { 4096, 4096, 0, 1, NPU_SFU_EXACT, 12, 0, 0, 0, 0, 1 },  // VLEN too large
        { 256, 0, 0, 1, NPU_SFU_EXACT, 12, 0, 0, 0, 0, 1 },      // no UB
        { 256, 4096, 1, 1, NPU_SFU_EXACT, 12, 0, 0, 0, 0, 1 },   // core id out of range
        { 256, 4096, 0, 1, NPU_SFU_APPROX, 30, 0, 0, 0, 0, 1 },
        { 256, 4096, 0, 1, NPU_SFU_EXACT, 12, 1000, 0, 0, 0, 1 }, // L1 not whole fractals  // sfu bits out of range
    };
    for (const npu_core_config &cfg : bad)
        EXPECT_EQ(npu_core_init(&c, &cfg, &prog, nullptr), NPU_EINVAL);
    const npu_core_config good{ 128, 4096, 2, 4, NPU_SFU_APPROX, 10, 0, 0, 0, 0, 1 };
    ASSERT_EQ(npu_core_init(&c, &good, &prog, nullptr), NPU_OK);
    EXPECT_EQ(c.spr[NPU_SPR_COREID], 2u);
    EXPECT_EQ(c.spr[NPU_SPR_NCORES], 4u);
    EXPECT_EQ(npu_core_step(&c, nullptr), NPU_CORE_TRAPPED); // empty program
    EXPECT_EQ(c.trap.kind, NPU_TRAP_PC_OUT_OF_RANGE);
    npu_core_fini(&c);
}
