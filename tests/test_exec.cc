// Semantics of every instruction of the functional core, at several VLENs,
// with and without lane masks, and the traps a faulting program gets.
// Programs are built directly as npu_insn arrays (no assembler needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "npusim/core.h"
#include "npusim/fp16.h"

namespace {

// ---- instruction builders ------------------------------------------------------

npu_insn insn(npu_opcode op, int dt = 0, int rd = 0, int rs1 = 0, int rs2 = 0, int rs3 = 0,
              int32_t imm = 0)
{
    npu_insn in;
    std::memset(&in, 0, sizeof in);
    in.op = (uint16_t)op;
    in.dt = (uint8_t)dt;
    in.rd = (uint8_t)rd;
    in.rs1 = (uint8_t)rs1;
    in.rs2 = (uint8_t)rs2;
    in.rs3 = (uint8_t)rs3;
    in.imm = imm;
    return in;
}

npu_insn masked(npu_insn in, int pg)
{
    in.pm = 1;
    in.pg = (uint8_t)pg;
    return in;
}

npu_insn imm_insn(npu_opcode op, int rd, int rs1, int32_t imm) { return insn(op, 0, rd, rs1, 0, 0, imm); }
npu_insn li(int rd, int32_t imm) { return imm_insn(NPU_OP_LI, rd, 0, imm); }
npu_insn halt() { return insn(NPU_OP_HALT); }
npu_insn vmem(npu_opcode op, int dt, int vd, int base, int32_t off, int stride_reg = 0)
{
    return insn(op, dt, vd, base, stride_reg, 0, off);
}

// ---- a core with its program, UB and GM ----------------------------------------

class Machine {
public:
    explicit Machine(unsigned vlen = 256, npu_sfu_mode mode = NPU_SFU_EXACT, unsigned sfu_bits = 12,
                     size_t ub_bytes = 16384, size_t gm_bytes = 65536)
        : gmem(gm_bytes)
    {
        npu_core_config cfg{ vlen, ub_bytes, 0, 1, mode, sfu_bits };
        for (size_t i = 0; i < gmem.size(); i++)
            gmem[i] = (uint8_t)(i * 7 + 3);
        gm.data = gmem.data();
        gm.size = gmem.size();
        std::memset(&prog, 0, sizeof prog);
        init_rc = npu_core_init(&c, &cfg, &prog, &gm);
    }
    ~Machine() { npu_core_fini(&c); }
    Machine(const Machine &) = delete;
    Machine &operator=(const Machine &) = delete;

    void load(std::vector<npu_insn> code)
    {
        insns = std::move(code);
        prog.insns = insns.data();
        prog.count = insns.size();
        c.prog = &prog;
        c.pc = 0;
        c.state = NPU_CORE_RUNNING;
    }

    npu_core_state run(unsigned max_steps = 1000000)
    {
        while (c.state == NPU_CORE_RUNNING && max_steps--)
            npu_core_step(&c, nullptr);
        return c.state;
    }

    // Runs one instruction followed by halt; returns the final state.
    npu_core_state exec(npu_insn in, npu_step_info *info = nullptr)
    {
        load({ in, halt() });
        npu_core_step(&c, info);
        return run();
    }

    unsigned lanes(int dt) const { return npu_lanes(&c, (npu_dtype)dt); }

    uint32_t lane(int v, int dt, unsigned i) const
    {
        if (dt == NPU_F16 || dt == NPU_I16) {
            uint16_t x;
            std::memcpy(&x, c.v[v] + 2 * i, 2);
            return x;
        }
        uint32_t x;
        std::memcpy(&x, c.v[v] + 4 * i, 4);
        return x;
    }

    void set_lane(int v, int dt, unsigned i, uint32_t x)
    {
        if (dt == NPU_F16 || dt == NPU_I16) {
            uint16_t h = (uint16_t)x;
            std::memcpy(c.v[v] + 2 * i, &h, 2);
        } else {
            std::memcpy(c.v[v] + 4 * i, &x, 4);
        }
    }

    float f32(int v, unsigned i) const { return npu_f32_from_bits(lane(v, NPU_F32, i)); }
    void set_f32(int v, unsigned i, float f) { set_lane(v, NPU_F32, i, npu_f32_bits(f)); }

    bool pbit(int p, unsigned i) const { return (c.p[p][i >> 6] >> (i & 63)) & 1; }

    npu_core c;
    int init_rc;
    npu_program prog;
    std::vector<npu_insn> insns;
    std::vector<uint8_t> gmem;
    npu_gm gm;
};

// ---- lane references, independent of the simulator's code --------------------

constexpr uint16_t kQNaN16 = NPU_F16_QNAN;
constexpr uint32_t kQNaN32 = NPU_F32_QNAN_BITS;

_Float16 H(uint32_t bits)
{
    uint16_t u = (uint16_t)bits;
    _Float16 h;
    std::memcpy(&h, &u, 2);
    return h;
}

uint32_t HB(_Float16 h)
{
    if (h != h)
        return kQNaN16;
    uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
}

float F(uint32_t bits) { return npu_f32_from_bits(bits); }
uint32_t FB(float f) { return f != f ? kQNaN32 : npu_f32_bits(f); }
bool is_int(int dt) { return dt == NPU_I16 || dt == NPU_I32; }
unsigned width(int dt) { return dt == NPU_F16 || dt == NPU_I16 ? 16 : 32; }
uint32_t lane_mask(int dt) { return width(dt) == 16 ? 0xffffu : 0xffffffffu; }
int64_t I(int dt, uint32_t bits) { return width(dt) == 16 ? (int64_t)(int16_t)bits : (int64_t)(int32_t)bits; }
uint32_t IB(int dt, int64_t v) { return (uint32_t)v & lane_mask(dt); }

template <class Op> uint32_t lanewise(int dt, uint32_t a, uint32_t b, Op op)
{
    switch (dt) {
    case NPU_F16: return HB((_Float16)op(H(a), H(b)));
    case NPU_F32: return FB((float)op(F(a), F(b)));
    default: return IB(dt, (int64_t)op(I(dt, a), I(dt, b)));
    }
}

double as_double(int dt, uint32_t bits) { return dt == NPU_F16 ? (double)(float)H(bits) : (double)F(bits); }
bool is_nan_lane(int dt, uint32_t bits) { return std::isnan(as_double(dt, bits)); }

uint32_t ref_maxmin(int dt, uint32_t a, uint32_t b, bool want_max)
{
    if (is_int(dt))
        return IB(dt, want_max ? std::max(I(dt, a), I(dt, b)) : std::min(I(dt, a), I(dt, b)));
    if (is_nan_lane(dt, a) || is_nan_lane(dt, b))
        return dt == NPU_F16 ? kQNaN16 : kQNaN32;
    double x = as_double(dt, a), y = as_double(dt, b);
    if (x == y && x == 0) { // +0 beats -0 for max, -0 beats +0 for min
        bool neg_a = std::signbit(x), neg_b = std::signbit(y);
        bool neg = want_max ? (neg_a && neg_b) : (neg_a || neg_b);
        return neg ? (dt == NPU_F16 ? 0x8000u : 0x80000000u) : 0u;
    }
    return (want_max ? x > y : x < y) ? a : b;
}

uint32_t sign_bit(int dt) { return width(dt) == 16 ? 0x8000u : 0x80000000u; }

uint32_t shift_ref(int dt, uint32_t a, uint32_t count, int kind)
{
    unsigned w = width(dt), n = count & (w - 1);
    uint32_t ua = a & lane_mask(dt);
    switch (kind) {
    case 0: return (uint32_t)((uint64_t)ua << n) & lane_mask(dt);
    case 1: return ua >> n;
    default: return IB(dt, I(dt, a) >> n);
    }
}

// One row per vector ALU instruction whose lanes are independent: the
// reference for a lane, given the raw lane bits of va, vb, vc.
struct VecCase {
    const char *name;
    npu_opcode op;
    unsigned dtypes;
    int sources;
    uint32_t (*ref)(int dt, uint32_t a, uint32_t b, uint32_t c);
};

const VecCase kVecCases[] = {
    { "vadd", NPU_OP_VADD, DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return lanewise(dt, a, b, [](auto x, auto y) { return x + y; }); } },
    { "vsub", NPU_OP_VSUB, DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return lanewise(dt, a, b, [](auto x, auto y) { return x - y; }); } },
    { "vmul", NPU_OP_VMUL, DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return lanewise(dt, a, b, [](auto x, auto y) { return x * y; }); } },
    { "vfma", NPU_OP_VFMA, DT_FLOAT, 3, [](int dt, uint32_t a, uint32_t b, uint32_t c) {
          return dt == NPU_F16 ? npu_f16_fma((uint16_t)a, (uint16_t)b, (uint16_t)c)
                               : FB(std::fma(F(a), F(b), F(c))); } },
    { "vfms", NPU_OP_VFMS, DT_FLOAT, 3, [](int dt, uint32_t a, uint32_t b, uint32_t c) {
          return dt == NPU_F16 ? npu_f16_fma((uint16_t)a, (uint16_t)b, (uint16_t)(c ^ 0x8000))
                               : FB(std::fma(F(a), F(b), -F(c))); } },
    { "vfnma", NPU_OP_VFNMA, DT_FLOAT, 3, [](int dt, uint32_t a, uint32_t b, uint32_t c) {
          return dt == NPU_F16 ? npu_f16_fma((uint16_t)(a ^ 0x8000), (uint16_t)b, (uint16_t)c)
                               : FB(std::fma(-F(a), F(b), F(c))); } },
    { "vmax", NPU_OP_VMAX, DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return ref_maxmin(dt, a, b, true); } },
    { "vmin", NPU_OP_VMIN, DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return ref_maxmin(dt, a, b, false); } },
    { "vabs", NPU_OP_VABS, DT_ALL, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          return is_int(dt) ? IB(dt, std::llabs(I(dt, a))) : a & ~sign_bit(dt); } },
    { "vneg", NPU_OP_VNEG, DT_ALL, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          return is_int(dt) ? IB(dt, -I(dt, a)) : a ^ sign_bit(dt); } },
    { "vrnd", NPU_OP_VRND, DT_FLOAT, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          return dt == NPU_F16 ? HB((_Float16)std::nearbyint((float)H(a))) : FB(std::nearbyint(F(a))); } },
    { "vmov", NPU_OP_VMOV, DT_ALL, 1, [](int, uint32_t a, uint32_t, uint32_t) { return a; } },
    { "vand", NPU_OP_VAND, DT_ALL, 2, [](int, uint32_t a, uint32_t b, uint32_t) { return a & b; } },
    { "vor", NPU_OP_VOR, DT_ALL, 2, [](int, uint32_t a, uint32_t b, uint32_t) { return a | b; } },
    { "vxor", NPU_OP_VXOR, DT_ALL, 2, [](int, uint32_t a, uint32_t b, uint32_t) { return a ^ b; } },
    { "vnot", NPU_OP_VNOT, DT_ALL, 1, [](int dt, uint32_t a, uint32_t, uint32_t) { return ~a & lane_mask(dt); } },
    { "vshl", NPU_OP_VSHL, DT_INT, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) { return shift_ref(dt, a, b, 0); } },
    { "vshr", NPU_OP_VSHR, DT_INT, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) { return shift_ref(dt, a, b, 1); } },
    { "vsra", NPU_OP_VSRA, DT_INT, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) { return shift_ref(dt, a, b, 2); } },
    { "vftoi", NPU_OP_VFTOI, DT_INT, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          double x = dt == NPU_I16 ? (double)(float)H(a) : (double)F(a);
          if (std::isnan(x))
              return 0u;
          double lo = dt == NPU_I16 ? -32768.0 : -2147483648.0, hi = dt == NPU_I16 ? 32767.0 : 2147483647.0;
          return IB(dt, (int64_t)std::min(hi, std::max(lo, std::nearbyint(x)))); } },
    { "vitof", NPU_OP_VITOF, DT_FLOAT, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          return dt == NPU_F16 ? HB((_Float16)(int16_t)a) : FB((float)(int32_t)a); } },
};

// Half random encodings (NaN, inf, subnormals included), half small values.
uint32_t random_lane(std::mt19937 &rng, int dt)
{
    bool raw = rng() & 1;
    std::uniform_real_distribution<float> small(-6.0f, 6.0f);
    switch (dt) {
    case NPU_F16: return raw ? (rng() & 0xffff) : HB((_Float16)small(rng));
    case NPU_F32: return raw ? rng() : FB(small(rng));
    case NPU_I16: return raw ? (rng() & 0xffff) : IB(dt, (int)(rng() % 41) - 20);
    default: return raw ? rng() : IB(dt, (int)(rng() % 41) - 20);
    }
}

std::string dt_name(int dt)
{
    static const char *names[] = { "f16", "f32", "i16", "i32" };
    return names[dt];
}

std::string hex(uint64_t x)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)x);
    return buf;
}

class ExecVlen : public ::testing::TestWithParam<unsigned> {};

} // namespace

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

// ================================ UB loads and stores ============================

TEST_P(ExecVlen, VectorStoreThenLoadRoundTripsAndReportsTheAccess)
{
    Machine m(GetParam());
    for (int dt = 0; dt < 4; dt++) {
        unsigned n = m.lanes(dt), es = width(dt) / 8;
        for (unsigned i = 0; i < n; i++)
            m.set_lane(1, dt, i, 0x1000 + i * 3);
        m.c.s[4] = 512;
        npu_step_info info;
        ASSERT_EQ(m.exec(vmem(NPU_OP_VST, dt, 1, 4, 64), &info), NPU_CORE_HALTED);
        EXPECT_EQ(info.ub_addr, 576u);
        EXPECT_EQ(info.ub_bytes, (uint64_t)n * es);
        EXPECT_EQ(info.ub_stride, 0);
        EXPECT_EQ(info.ub_lanes, n);
        for (unsigned i = 0; i < n; i++) {
            uint32_t x = 0;
            std::memcpy(&x, m.c.ub + 576 + i * es, es);
            ASSERT_EQ(x, 0x1000 + i * 3);
        }
        std::memset(m.c.v[2], 0, sizeof m.c.v[2]);
        ASSERT_EQ(m.exec(vmem(NPU_OP_VLD, dt, 2, 4, 64)), NPU_CORE_HALTED);
        EXPECT_EQ(std::memcmp(m.c.v[1], m.c.v[2], GetParam() / 8), 0);
    }
}

TEST_P(ExecVlen, MaskedStoreWritesOnlyActiveLanesAndSkipsBoundsOfInactiveOnes)
{
    Machine m(GetParam());
    unsigned n = m.lanes(NPU_F32);
    for (unsigned i = 0; i < n; i++)
        m.set_lane(1, NPU_F32, i, 0xa0000000u + i);
    std::memset(m.c.ub, 0x55, 16384);
    // Lanes 0..2 active; the vector starts 12 bytes before the end of UB, so
    // lanes 3.. would be out of bounds but are inactive: no trap.
    m.c.p[1][0] = 7;
    m.c.p[1][1] = 0;
    m.c.s[2] = 16384 - 12;
    npu_step_info info;
    ASSERT_EQ(m.exec(masked(vmem(NPU_OP_VST, NPU_F32, 1, 2, 0), 1), &info), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned i = 0; i < 3; i++) {
        uint32_t x;
        std::memcpy(&x, m.c.ub + 16384 - 12 + 4 * i, 4);
        EXPECT_EQ(x, 0xa0000000u + i);
    }
    EXPECT_EQ(m.c.ub[16384 - 13], 0x55);
    EXPECT_EQ(info.ub_lanes, 3u);
    EXPECT_EQ(info.ub_bytes, 12u);

    // A masked load zeroes the inactive lanes of vd (no merge: the old value
    // is not an input, so a masked tail load carries no false dependency).
    std::memset(m.c.v[3], 0x77, sizeof m.c.v[3]);
    m.c.p[1][0] = 2;
    m.c.s[2] = 0;
    std::memcpy(m.c.ub + 4, "\x01\x02\x03\x04", 4);
    ASSERT_EQ(m.exec(masked(vmem(NPU_OP_VLD, NPU_F32, 3, 2, 0), 1)), NPU_CORE_HALTED);
    EXPECT_EQ(m.lane(3, NPU_F32, 1), 0x04030201u);
    EXPECT_EQ(m.lane(3, NPU_F32, 0), 0u);
    EXPECT_EQ(m.lane(3, NPU_F32, n - 1), 0u);
}

TEST_P(ExecVlen, VlOffsetsCountVectorLengths)
{
    Machine m(GetParam());
    const unsigned vlenb = GetParam() / 8;
    for (unsigned i = 0; i < 4 * vlenb; i++)
        m.c.ub[i] = uint8_t(i);
    m.c.s[2] = 0;
    npu_insn ld = vmem(NPU_OP_VLD, NPU_I16, 1, 2, 3);
    ld.vl = 1;  // [s2 + 3 vl]
    npu_step_info info;
    ASSERT_EQ(m.exec(ld, &info), NPU_CORE_HALTED) << m.c.trap.message;
    EXPECT_EQ(info.ub_addr, 3u * vlenb);
    EXPECT_EQ(m.lane(1, NPU_I16, 0), uint32_t(uint8_t(3 * vlenb) | (uint8_t(3 * vlenb + 1) << 8)));
}

TEST_P(ExecVlen, StridedAccessesPlaceLaneIAtBasePlusIStride)
{
    Machine m(GetParam());
    unsigned n = m.lanes(NPU_I16);
    for (unsigned i = 0; i < n; i++)
        m.set_lane(1, NPU_I16, i, 100 + i);
    m.c.s[2] = 8192;
    m.c.s[3] = (uint64_t)-6; // negative stride
    npu_step_info info;
    ASSERT_EQ(m.exec(insn(NPU_OP_VSTS, NPU_I16, 1, 2, 3, 0, 2), &info), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned i = 0; i < n; i++) {
        uint16_t x;
        std::memcpy(&x, m.c.ub + 8194 - 6 * (int)i, 2);
        ASSERT_EQ(x, 100 + i);
    }
    EXPECT_EQ(info.ub_stride, -6);
    EXPECT_EQ(info.ub_addr, 8194u - 6 * (n - 1));
    EXPECT_EQ(info.ub_bytes, 6u * (n - 1) + 2);
    ASSERT_EQ(m.exec(insn(NPU_OP_VLDS, NPU_I16, 4, 2, 3, 0, 2)), NPU_CORE_HALTED);
    EXPECT_EQ(std::memcmp(m.c.v[1], m.c.v[4], GetParam() / 8), 0);
    // Stride 0 broadcasts one element.
    m.c.s[3] = 0;
    ASSERT_EQ(m.exec(insn(NPU_OP_VLDS, NPU_I16, 5, 2, 3, 0, 2)), NPU_CORE_HALTED);
    for (unsigned i = 0; i < n; i++)
        ASSERT_EQ(m.lane(5, NPU_I16, i), 100u);
}

TEST(Exec, MisalignedVectorLoadTrapsWithTheLaneAddress)
{
    Machine m;
    std::memset(m.c.v[1], 0x33, sizeof m.c.v[1]);
    m.load({ li(2, 100), vmem(NPU_OP_VLD, NPU_F32, 1, 2, 2), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 102u);
    EXPECT_STREQ(m.c.trap.message, "vld.f32: lane 0 at UB 0x66 is not 4-byte aligned");
    EXPECT_EQ(m.c.v[1][0], 0x33); // nothing loaded
}

TEST(Exec, VectorLoadOutsideUbTrapsAtTheFirstBadByte)
{
    Machine m;
    std::memset(m.c.v[1], 0x33, sizeof m.c.v[1]);
    m.load({ li(2, 16384 - 16), vmem(NPU_OP_VLD, NPU_F16, 1, 2, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_UB_BOUNDS);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 16384u);
    EXPECT_EQ(m.c.v[1][0], 0x33); // the in-bounds lanes were not loaded either
    EXPECT_STREQ(npu_trap_name(m.c.trap.kind), "ub_out_of_bounds");

    m.load({ li(2, -4), vmem(NPU_OP_VST, NPU_F32, 1, 2, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_UB_BOUNDS);
    EXPECT_EQ(m.c.trap.addr, (uint64_t)-4);
}

TEST(Exec, ScalarLoadStoreMoveEightAlignedBytes)
{
    Machine m;
    m.c.s[1] = 0x0123456789abcdefull;
    m.c.s[2] = 64;
    npu_step_info info;
    ASSERT_EQ(m.exec(insn(NPU_OP_SST, 0, 0, 2, 1, 0, 8), &info), NPU_CORE_HALTED);
    EXPECT_EQ(m.c.ub[72], 0xef);
    EXPECT_EQ(m.c.ub[79], 0x01);
    EXPECT_EQ(info.ub_addr, 72u);
    EXPECT_EQ(info.ub_bytes, 8u);
    ASSERT_EQ(m.exec(insn(NPU_OP_SLD, 0, 3, 2, 0, 0, 8)), NPU_CORE_HALTED);
    EXPECT_EQ(m.c.s[3], 0x0123456789abcdefull);
    EXPECT_EQ(m.exec(insn(NPU_OP_SLD, 0, 3, 2, 0, 0, 4)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_EQ(m.c.trap.addr, 68u);
    m.c.s[2] = 16384;
    EXPECT_EQ(m.exec(insn(NPU_OP_SST, 0, 0, 2, 1, 0, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_UB_BOUNDS);
    EXPECT_EQ(m.c.trap.addr, 16384u);
}

// ================================ DMA ==============================================

namespace {

npu_insn dmadim(int dim, int count_reg, int gm_stride_reg, int ub_stride_reg)
{
    return insn(NPU_OP_DMADIM, 0, dim, count_reg, gm_stride_reg, ub_stride_reg);
}

// dmald/dmast: ub = s[ub_reg], gm = s[gm_reg], row bytes = s[row_reg], tag in rd.
npu_insn dma(npu_opcode op, int ub_reg, int gm_reg, int row_reg, int tag)
{
    return insn(op, 0, tag, ub_reg, gm_reg, row_reg);
}

uint8_t gm_pattern(uint64_t i) { return (uint8_t)(i * 7 + 3); }

} // namespace

TEST(Exec, OneDimensionalDmaCopiesOneRowAndReportsIt)
{
    Machine m;
    m.c.s[1] = 256;  // ub
    m.c.s[2] = 1024; // gm
    m.c.s[3] = 96;   // row bytes
    npu_step_info info;
    ASSERT_EQ(m.exec(dma(NPU_OP_DMALD, 1, 2, 3, 4), &info), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned i = 0; i < 96; i++)
        ASSERT_EQ(m.c.ub[256 + i], gm_pattern(1024 + i));
    EXPECT_EQ(m.c.ub[256 + 96], 0);
    EXPECT_EQ(info.has_dma, 1);
    EXPECT_EQ(info.dma.to_ub, 1);
    EXPECT_EQ(info.dma.tag, 4u);
    EXPECT_EQ(info.dma.ub_addr, 256u);
    EXPECT_EQ(info.dma.gm_addr, 1024u);
    EXPECT_EQ(info.dma.row_bytes, 96u);
    EXPECT_EQ(info.dma.total_bytes, 96u);
    EXPECT_EQ(info.dma.shape.count[0], 1u);
    EXPECT_EQ(m.c.dma_tags_issued, 1u << 4);

    // And back out to another GM place.
    m.c.s[2] = 4096;
    ASSERT_EQ(m.exec(dma(NPU_OP_DMAST, 1, 2, 3, 5), &info), NPU_CORE_HALTED);
    EXPECT_EQ(info.dma.to_ub, 0);
    for (unsigned i = 0; i < 96; i++)
        ASSERT_EQ(m.gmem[4096 + i], gm_pattern(1024 + i));
    EXPECT_EQ(m.gmem[4096 + 96], gm_pattern(4096 + 96));
}

TEST(Exec, TwoDimensionalDmaStepsBothSidesByTheirStrides)
{
    Machine m;
    // 3 rows of 32 bytes: GM rows 160 bytes apart, packed in UB with a 64-byte pitch.
    m.c.s[1] = 3;
    m.c.s[2] = 160;
    m.c.s[3] = 64;
    m.c.s[4] = 0;    // ub
    m.c.s[5] = 2048; // gm
    m.c.s[6] = 32;   // row
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMALD, 4, 5, 6, 0), insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 0), halt() });
    ASSERT_EQ(m.run(), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned r = 0; r < 3; r++)
        for (unsigned i = 0; i < 32; i++)
            ASSERT_EQ(m.c.ub[r * 64 + i], gm_pattern(2048 + r * 160 + i)) << r << " " << i;
    EXPECT_EQ(m.c.ub[32], 0); // the gap between UB rows is untouched
}

TEST(Exec, ThreeDimensionalDmaWalksDimensionOneInsideDimensionTwo)
{
    Machine m;
    // dim 1: 2 rows, gm +64, ub +32 ; dim 2: 3 planes, gm +1024, ub +128 ; row 32 bytes
    m.c.s[1] = 2;
    m.c.s[2] = 64;
    m.c.s[3] = 32;
    m.c.s[7] = 3;
    m.c.s[8] = 1024;
    m.c.s[9] = 128;
    m.c.s[4] = 512;
    m.c.s[5] = 0;
    m.c.s[6] = 32;
    npu_step_info info;
    m.load({ dmadim(1, 1, 2, 3), dmadim(2, 7, 8, 9), dma(NPU_OP_DMALD, 4, 5, 6, 31), halt() });
    npu_core_step(&m.c, nullptr);
    npu_core_step(&m.c, nullptr);
    ASSERT_EQ(npu_core_step(&m.c, &info), NPU_CORE_RUNNING) << m.c.trap.message;
    EXPECT_EQ(info.dma.total_bytes, 2u * 3 * 32);
    EXPECT_EQ(info.dma.shape.count[1], 3u);
    EXPECT_EQ(info.dma.shape.gm_stride[1], 1024);
    for (unsigned k2 = 0; k2 < 3; k2++)
        for (unsigned k1 = 0; k1 < 2; k1++)
            for (unsigned i = 0; i < 32; i++)
                ASSERT_EQ(m.c.ub[512 + k2 * 128 + k1 * 32 + i], gm_pattern(k2 * 1024 + k1 * 64 + i));

    // Store it back transposed-ish with a negative GM stride on dimension 1.
    m.c.s[2] = (uint64_t)-64;
    m.c.s[5] = 8192;
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMAST, 4, 5, 6, 1), halt() });
    ASSERT_EQ(m.run(), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned k2 = 0; k2 < 3; k2++)
        for (unsigned k1 = 0; k1 < 2; k1++)
            for (unsigned i = 0; i < 32; i++)
                ASSERT_EQ(m.gmem[8192 + k2 * 1024 - k1 * 64 + i], gm_pattern(k2 * 1024 + k1 * 64 + i));

    // Reset restores the one-row descriptor.
    npu_core_reset(&m.c);
    EXPECT_EQ(m.c.dma_desc.count[0], 1u);
    EXPECT_EQ(m.c.dma_desc.count[1], 1u);
    EXPECT_EQ(m.c.dma_desc.gm_stride[1], 0);
}

TEST(Exec, DmaOutsideGmTrapsBeforeCopyingAnything)
{
    Machine m; // GM is 65536 bytes
    m.c.s[1] = 2;
    m.c.s[2] = 65536 - 64; // second row starts at the last 64 bytes...
    m.c.s[3] = 128;
    m.c.s[4] = 0;
    m.c.s[5] = 0;
    m.c.s[6] = 96; // ...and is 96 bytes long
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMALD, 4, 5, 6, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_GM_BOUNDS);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 65536u);
    EXPECT_EQ(m.c.ub[0], 0); // the first, in-bounds row was not copied
    EXPECT_EQ(m.c.dma_tags_issued, 0u);
    EXPECT_STREQ(npu_trap_name(m.c.trap.kind), "gm_out_of_bounds");
    EXPECT_STREQ(m.c.trap.message, "dmald: rows of 96 bytes from GM 0x0 reach outside the 65536-byte GM");
}

TEST(Exec, DmaOutsideUbOrMisalignedTraps)
{
    Machine m;
    m.c.s[4] = 16384 - 32;
    m.c.s[5] = 0;
    m.c.s[6] = 64;
    EXPECT_EQ(m.exec(dma(NPU_OP_DMALD, 4, 5, 6, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_UB_BOUNDS);
    EXPECT_EQ(m.c.trap.addr, 16384u);

    m.c.s[4] = 0;
    m.c.s[5] = 48; // GM address not a multiple of 32
    EXPECT_EQ(m.exec(dma(NPU_OP_DMALD, 4, 5, 6, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_EQ(m.c.trap.addr, 48u);

    m.c.s[5] = 64;
    m.c.s[6] = 40; // row not a multiple of 32
    EXPECT_EQ(m.exec(dma(NPU_OP_DMAST, 4, 5, 6, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_STREQ(m.c.trap.message, "dmast: row of 40 bytes is not a multiple of 32");

    m.c.s[6] = 0;
    EXPECT_EQ(m.exec(dma(NPU_OP_DMAST, 4, 5, 6, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);

    // A negative GM stride that walks below address 0.
    m.c.s[1] = 2;
    m.c.s[2] = (uint64_t)-64;
    m.c.s[3] = 32;
    m.c.s[5] = 32;
    m.c.s[6] = 32;
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMALD, 4, 5, 6, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_GM_BOUNDS);
    EXPECT_EQ(m.c.trap.addr, (uint64_t)-32);

    m.c.s[2] = 32;
    m.c.s[3] = 16; // UB stride not a multiple of 32
    m.c.s[6] = 32;
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMALD, 4, 5, 6, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_EQ(m.c.trap.addr, 16u);
}

TEST(Exec, DmaDescriptorRejectsBadDimensionsAndZeroCounts)
{
    Machine m;
    m.c.s[1] = 4;
    EXPECT_EQ(m.exec(dmadim(3, 1, 0, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
    EXPECT_EQ(m.exec(dmadim(0, 1, 0, 0)), NPU_CORE_TRAPPED);
    m.c.s[1] = 0;
    EXPECT_EQ(m.exec(dmadim(1, 1, 0, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
    EXPECT_EQ(m.c.dma_desc.count[0], 1u);
}

TEST(Exec, DmaWaitOnATagNoDmaUsedTraps)
{
    Machine m;
    m.load({ li(1, 1), insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 5), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_DMA_TAG);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 0u);
    EXPECT_STREQ(m.c.trap.message, "dmawait on tag 5, which no DMA has used");
    EXPECT_STREQ(npu_trap_name(m.c.trap.kind), "dma_tag");

    m.c.s[6] = 32;
    m.load({ dma(NPU_OP_DMALD, 4, 5, 6, 5), insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 5),
             insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 5), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_HALTED) << m.c.trap.message;
}

// ================================ configuration ==================================

TEST(Exec, InitRejectsConfigurationsOutsideTheirRanges)
{
    npu_program prog;
    std::memset(&prog, 0, sizeof prog);
    npu_core c;
    const npu_core_config bad[] = {
        { 96, 4096, 0, 1, NPU_SFU_EXACT, 12 },    // VLEN not a power of two
        { 4096, 4096, 0, 1, NPU_SFU_EXACT, 12 },  // VLEN too large
        { 256, 0, 0, 1, NPU_SFU_EXACT, 12 },      // no UB
        { 256, 4096, 1, 1, NPU_SFU_EXACT, 12 },   // core id out of range
        { 256, 4096, 0, 1, NPU_SFU_APPROX, 30 },  // sfu bits out of range
    };
    for (const npu_core_config &cfg : bad)
        EXPECT_EQ(npu_core_init(&c, &cfg, &prog, nullptr), NPU_EINVAL);
    const npu_core_config good{ 128, 4096, 2, 4, NPU_SFU_APPROX, 10 };
    ASSERT_EQ(npu_core_init(&c, &good, &prog, nullptr), NPU_OK);
    EXPECT_EQ(c.spr[NPU_SPR_COREID], 2u);
    EXPECT_EQ(c.spr[NPU_SPR_NCORES], 4u);
    EXPECT_EQ(npu_core_step(&c, nullptr), NPU_CORE_TRAPPED); // empty program
    EXPECT_EQ(c.trap.kind, NPU_TRAP_PC_OUT_OF_RANGE);
    npu_core_fini(&c);
}
