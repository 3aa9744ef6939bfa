// The special-function unit (vexp, vln, vrcp, vrsqrt, vsqrt): correct rounding
// in exact mode against binary80, the special values, and approximate mode.
#include "exec_harness.h"

using namespace exec_test;

// ================================ SFU ============================================

namespace {

long double sfu_ref(npu_opcode op, long double x)
{
    switch (op) {
    case NPU_OP_VEXP: return expl(x);
    case NPU_OP_VLN: return logl(x);
    case NPU_OP_VRCP: return 1.0L / x;
    case NPU_OP_VRSQRT: return 1.0L / sqrtl(x);
    default: return sqrtl(x);
    }
}

// The correctly rounded half of a binary80 value, by comparison with the
// exact midpoints between neighbouring halves.
uint32_t ld_to_half(long double t)
{
    if (t != t)
        return kQNaN16;
    uint32_t sign = std::signbit(t) ? 0x8000u : 0;
    long double a = fabsl(t);
    if (a >= 65520.0L)
        return sign | 0x7c00;
    unsigned lo = 0, hi = 0x7bff;
    while (lo < hi) {
        unsigned mid = (lo + hi + 1) / 2;
        if ((long double)(float)H(mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    long double below = (float)H(lo), above = lo == 0x7bff ? 65536.0L : (long double)(float)H(lo + 1);
    long double midpoint = (below + above) / 2;
    unsigned r = a < midpoint ? lo : a > midpoint ? lo + 1 : ((lo & 1) ? lo + 1 : lo);
    return sign | r;
}

const npu_opcode kSfuOps[] = { NPU_OP_VEXP, NPU_OP_VLN, NPU_OP_VRCP, NPU_OP_VRSQRT, NPU_OP_VSQRT };

} // namespace

TEST(ExecSfu, ExactModeIsCorrectlyRoundedForEveryHalf)
{
    Machine m(2048);
    unsigned n = m.lanes(NPU_F16);
    for (npu_opcode op : kSfuOps) {
        unsigned wrong = 0;
        for (uint32_t base = 0; base < 0x10000; base += n) {
            for (unsigned i = 0; i < n; i++)
                m.set_lane(1, NPU_F16, i, base + i);
            ASSERT_EQ(m.exec(insn(op, NPU_F16, 2, 1)), NPU_CORE_HALTED);
            for (unsigned i = 0; i < n; i++) {
                uint32_t x = base + i;
                uint32_t want = ld_to_half(sfu_ref(op, (long double)(float)H(x)));
                if (m.lane(2, NPU_F16, i) != want && wrong++ < 5)
                    ADD_FAILURE() << "op " << op << " x=" << hex(x) << " got " << hex(m.lane(2, NPU_F16, i))
                                  << " want " << hex(want);
            }
        }
        EXPECT_EQ(wrong, 0u) << "op " << op;
    }
}

TEST(ExecSfu, ExactModeF32MatchesBinary80ReferenceOnRandomInputs)
{
    Machine m(2048);
    unsigned n = m.lanes(NPU_F32);
    std::mt19937 rng(8);
    for (npu_opcode op : kSfuOps) {
        for (int round = 0; round < 400; round++) {
            for (unsigned i = 0; i < n; i++) {
                uint32_t u = rng();
                if (op == NPU_OP_VEXP) // keep most inputs where exp is finite and non-zero
                    u = npu_f32_bits(std::ldexp((float)(rng() % 2000) / 1000.0f - 1.0f, (int)(rng() % 8)));
                m.set_lane(1, NPU_F32, i, u);
            }
            ASSERT_EQ(m.exec(insn(op, NPU_F32, 2, 1)), NPU_CORE_HALTED);
            for (unsigned i = 0; i < n; i++) {
                long double t = sfu_ref(op, (long double)m.f32(1, i));
                ASSERT_EQ(m.lane(2, NPU_F32, i), FB((float)t)) << "op " << op << " x=" << std::hexfloat << m.f32(1, i);
            }
        }
    }
}

// Inputs where glibc's binary64 log lands on the wrong side of a binary32
// midpoint (found by an exhaustive search over every binary32): exact mode
// re-evaluates near midpoints in binary80 and must still round correctly.
TEST(ExecSfu, LnF32IsCorrectlyRoundedWhereBinary64LogAloneIsNot)
{
    Machine m;
    const float hard[] = { 0x1.827a74p-7f, 0x1.2f1fd6p+3f, 0x1.bacb4ap+25f, 0x1.b121a6p+76f, 0x1.6351d8p+95f };
    for (unsigned i = 0; i < 5; i++)
        m.set_f32(1, i, hard[i]);
    m.exec(insn(NPU_OP_VLN, NPU_F32, 2, 1));
    unsigned naive_wrong = 0;
    for (unsigned i = 0; i < 5; i++) {
        float want = (float)logl((long double)hard[i]);
        EXPECT_EQ(m.f32(2, i), want) << std::hexfloat << hard[i];
        naive_wrong += (float)std::log((double)hard[i]) != want;
    }
    EXPECT_GT(naive_wrong, 0u); // the cases really are hard for binary64 alone
}

namespace {

// rsqrt(x * 4^k) = rsqrt(x) * 2^-k exactly, in binary64 too, so the
// significands of [1, 4) (both exponent parities) cover every binary32 input.
// The midpoints m have 25 bits, so m*m*x (74 bits) is exact in binary128.
void check_rsqrt_f32_significands(unsigned step)
{
    Machine m(2048);
    unsigned n = m.lanes(NPU_F32);
    uint32_t first = npu_f32_bits(1.0f), last = npu_f32_bits(4.0f);
    unsigned wrong = 0;
    for (uint32_t base = first; base < last; base += n * step) {
        for (unsigned i = 0; i < n; i++)
            m.set_lane(1, NPU_F32, i, std::min(base + i * step, last - 1));
        m.exec(insn(NPU_OP_VRSQRT, NPU_F32, 2, 1));
        for (unsigned i = 0; i < n; i++) {
            __float128 x = m.f32(1, i);
            uint32_t r = m.lane(2, NPU_F32, i);
            __float128 up = ((__float128)F(r) + (__float128)F(r + 1)) / 2;
            __float128 down = ((__float128)F(r) + (__float128)F(r - 1)) / 2;
            if (!(up * up * x > 1 && down * down * x < 1) && wrong++ < 5)
                ADD_FAILURE() << "rsqrt " << std::hexfloat << m.f32(1, i) << " gave " << F(r);
        }
    }
    EXPECT_EQ(wrong, 0u);
}

} // namespace

TEST(ExecSfu, RsqrtF32IsCorrectlyRoundedOnSampledSignificands) { check_rsqrt_f32_significands(61); }

// The full proof behind the exec_sfu.c comment (about 10 s):
//   unit_tests --gtest_also_run_disabled_tests --gtest_filter='*RsqrtF32*Every*'
TEST(ExecSfu, DISABLED_RsqrtF32IsCorrectlyRoundedOnEverySignificand) { check_rsqrt_f32_significands(1); }

namespace {

// vexp f32 in the exact mode on every `step`-th binary32 input: unmasked (the
// whole-register lanes, lanes_exp of sim/lanes_simd.h, 4 lanes per AVX2
// instruction on a host that has it) and masked with every lane active (the
// per-lane loop, libm's exp) give the same bits, e^x correctly rounded
// (binary80, rounded once to binary32, exact for e^x: exec_sfu.c).
void check_exp_f32(uint64_t step)
{
    Machine m(2048);
    const unsigned n = m.lanes(NPU_F32);
    std::memset(m.c.p[1], 0xff, sizeof m.c.p[1]);
    unsigned wrong = 0;
    for (uint64_t base = 0; base < (1ull << 32); base += n * step) {
        for (unsigned i = 0; i < n; i++)
            m.set_lane(1, NPU_F32, i, (uint32_t)std::min<uint64_t>(base + i * step, 0xffffffffu));
        ASSERT_EQ(m.exec(insn(NPU_OP_VEXP, NPU_F32, 2, 1)), NPU_CORE_HALTED);
        ASSERT_EQ(m.exec(masked(insn(NPU_OP_VEXP, NPU_F32, 3, 1), 1)), NPU_CORE_HALTED);
        for (unsigned i = 0; i < n; i++) {
            const float x = m.f32(1, i);
            const uint32_t want = x != x ? kQNaN32 : FB((float)expl((long double)x));
            if ((m.lane(2, NPU_F32, i) != want || m.lane(3, NPU_F32, i) != want) && wrong++ < 5)
                ADD_FAILURE() << "exp " << std::hexfloat << x << ": whole register " << m.f32(2, i)
                              << ", per lane " << m.f32(3, i) << ", want " << F(want);
        }
    }
    EXPECT_EQ(wrong, 0u);
}

} // namespace

TEST(ExecSfu, ExpF32WholeRegisterAndPerLaneAgreeOnSampledInputs) { check_exp_f32(4099); }

// The 50 binary32 inputs whose e^x in binary64 (libm's) lies nearest a
// binary32 midpoint, within 24 binary64 ULPs (an exhaustive search): a
// whole-register exp a few ULPs worse than lanes_exp's 1.1 would misround
// some of them.
TEST(ExecSfu, ExpF32WholeRegisterRoundsTheInputsNearestAMidpoint)
{
    const float hard[] = {
        -0x1.d2259ap+3f, -0x1.e1dbe2p-8f, 0x1.fdff02p-17f, -0x1.c1c4b8p-10f, -0x1p-25f, 0x1.8d7cb6p-12f,
        0x1.cd3982p-14f, 0x1.344e9cp-5f, 0x1.747de2p-15f, 0x1.036492p+1f, 0x1.62b666p+1f,
        0x1.cb763ap-12f, 0x1.fbff82p-18f, 0x1.112856p+6f, 0x1.7ffffep-23f, 0x1.bffffap-22f,
        0x1.dffff2p-21f, 0x1.efffe2p-20f, 0x1.f7ffc2p-19f, 0x1.fffffep-25f, 0x1p-24f, -0x1.548c34p-7f,
        0x1.cce332p+0f, -0x1.f02a66p+1f, -0x1.6e1ddp-8f, 0x1.5b3c52p-14f, 0x1.97f0f6p+4f,
        -0x1.7acc62p+3f, 0x1.69a056p+1f, 0x1.2e3554p-6f, 0x1.f79a1p-11f, -0x1.71e81ep-6f,
        0x1.5ffc5cp-6f, 0x1.c1141cp-7f, -0x1.7f4296p+0f, -0x1.e981d4p-16f, 0x1.31e68cp-9f,
        0x1.bae196p+2f, -0x1.93813ep-16f, 0x1.b78498p-1f, -0x1.03d5bep+0f, -0x1.fffffep-26f,
        0x1.192e5cp-8f, -0x1.e4854cp-11f, -0x1.edfb24p-1f, 0x1.f12cdcp+3f, 0x1.060e1ep+6f,
        0x1.c87cd2p-15f, -0x1.6727d6p-4f, 0x1.fffffcp-25f
    };
    Machine m(2048);
    const unsigned n = m.lanes(NPU_F32), count = sizeof hard / sizeof hard[0];
    for (unsigned base = 0; base < count; base += n) {
        for (unsigned i = 0; i < n; i++)
            m.set_f32(1, i, hard[std::min(base + i, count - 1)]);
        ASSERT_EQ(m.exec(insn(NPU_OP_VEXP, NPU_F32, 2, 1)), NPU_CORE_HALTED);
        for (unsigned i = 0; i < n; i++)
            EXPECT_EQ(m.lane(2, NPU_F32, i), FB((float)expl((long double)m.f32(1, i))))
                << std::hexfloat << m.f32(1, i);
    }
}

// Every binary32 input (about 12 minutes here):
//   unit_tests --gtest_also_run_disabled_tests --gtest_filter='*ExpF32*Every*'
TEST(ExecSfu, DISABLED_ExpF32WholeRegisterAndPerLaneAgreeOnEveryInput) { check_exp_f32(1); }

TEST(ExecSfu, SpecialValuesFollowIeee)
{
    Machine m;
    struct Case { npu_opcode op; float x; uint32_t want; };
    const Case cases[] = {
        { NPU_OP_VEXP, -INFINITY, 0u },
        { NPU_OP_VEXP, INFINITY, 0x7f800000u },
        { NPU_OP_VEXP, -200.0f, 0u },
        { NPU_OP_VEXP, 100.0f, 0x7f800000u },
        { NPU_OP_VEXP, NAN, kQNaN32 },
        { NPU_OP_VLN, 0.0f, 0xff800000u },
        { NPU_OP_VLN, -0.0f, 0xff800000u },
        { NPU_OP_VLN, -1.0f, kQNaN32 },
        { NPU_OP_VLN, INFINITY, 0x7f800000u },
        { NPU_OP_VLN, 1.0f, 0u },
        { NPU_OP_VRCP, 0.0f, 0x7f800000u },
        { NPU_OP_VRCP, -0.0f, 0xff800000u },
        { NPU_OP_VRCP, -INFINITY, 0x80000000u },
        { NPU_OP_VRCP, 0x1p-149f, 0x7f800000u },
        { NPU_OP_VRSQRT, 0.0f, 0x7f800000u },
        { NPU_OP_VRSQRT, -0.0f, 0xff800000u },
        { NPU_OP_VRSQRT, -4.0f, kQNaN32 },
        { NPU_OP_VRSQRT, INFINITY, 0u },
        { NPU_OP_VSQRT, -0.0f, 0x80000000u },
        { NPU_OP_VSQRT, -1.0f, kQNaN32 },
        { NPU_OP_VSQRT, INFINITY, 0x7f800000u },
    };
    for (const Case &c : cases) {
        for (npu_sfu_mode mode : { NPU_SFU_EXACT, NPU_SFU_APPROX }) {
            m.c.cfg.sfu_mode = mode;
            m.set_f32(1, 0, c.x);
            m.set_lane(3, NPU_F16, 0, HB((_Float16)c.x));
            m.exec(insn(c.op, NPU_F32, 2, 1));
            m.exec(insn(c.op, NPU_F16, 4, 3));
            EXPECT_EQ(m.lane(2, NPU_F32, 0), c.want) << "op " << c.op << " x=" << c.x << " mode " << mode;
            uint32_t want16 = c.want == kQNaN32 ? kQNaN16 : HB((_Float16)F(c.want));
            if (c.op == NPU_OP_VRCP && c.x == 0x1p-149f)
                want16 = 0x7c00; // the half input is 0: +inf either way
            EXPECT_EQ(m.lane(4, NPU_F16, 0), want16) << "op " << c.op << " x=" << c.x << " mode " << mode;
        }
    }
}

TEST(ExecSfu, ApproxModeKeepsSfuBitsAndStaysWithinTwoToMinusBitsOfExact)
{
    const unsigned bits = 12;
    Machine exact(256), approx(256, NPU_SFU_APPROX, bits);
    unsigned n = exact.lanes(NPU_F32);
    std::mt19937 rng(3);
    for (npu_opcode op : kSfuOps) {
        unsigned differ = 0;
        for (int round = 0; round < 200; round++) {
            for (unsigned i = 0; i < n; i++) {
                float x = std::ldexp(1.0f + (float)(rng() % 100000) / 100000.0f, (int)(rng() % 7) - 3);
                exact.set_f32(1, i, x);
                approx.set_f32(1, i, x);
            }
            exact.exec(insn(op, NPU_F32, 2, 1));
            approx.exec(insn(op, NPU_F32, 2, 1));
            for (unsigned i = 0; i < n; i++) {
                double e = exact.f32(2, i), a = approx.f32(2, i);
                differ += e != a;
                // within 2^-bits relative (plus the final binary32 rounding)
                ASSERT_LE(std::fabs(a - e), std::fabs(e) * (std::ldexp(1.0, -(int)bits) + 0x1p-23))
                    << "op " << op << " x=" << exact.f32(1, i);
                // at most `bits` significant bits: the low 24 - bits bits are zero
                ASSERT_EQ(approx.lane(2, NPU_F32, i) & ((1u << (24 - bits)) - 1), 0u) << "op " << op;
            }
        }
        EXPECT_GT(differ, 100u) << "op " << op;
    }
}
