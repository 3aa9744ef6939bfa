// The harness of the functional-core tests (test_exec*.cc): instruction
// builders, a core with its program, UB and GM (Machine), and lane references
// written independently of the simulator's code. Programs are built directly
// as npu_insn arrays (no assembler needed).
#pragma once

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

namespace exec_test {

// ---- instruction builders ------------------------------------------------------

inline npu_insn insn(npu_opcode op, int dt = 0, int rd = 0, int rs1 = 0, int rs2 = 0, int rs3 = 0,
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

inline npu_insn masked(npu_insn in, int pg)
{
    in.pm = 1;
    in.pg = (uint8_t)pg;
    return in;
}

inline npu_insn imm_insn(npu_opcode op, int rd, int rs1, int32_t imm) { return insn(op, 0, rd, rs1, 0, 0, imm); }
inline npu_insn li(int rd, int32_t imm) { return imm_insn(NPU_OP_LI, rd, 0, imm); }
inline npu_insn halt() { return insn(NPU_OP_HALT); }
inline npu_insn vmem(npu_opcode op, int dt, int vd, int base, int32_t off, int stride_reg = 0)
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
        npu_core_config cfg;
        npu_core_config_default(&cfg); // the cube's buffers at their defaults
        cfg.vlen_bits = vlen;
        cfg.ub_bytes = ub_bytes;
        cfg.sfu_mode = mode;
        cfg.sfu_bits = sfu_bits;
        for (size_t i = 0; i < gmem.size(); i++)
            gmem[i] = (uint8_t)(i * 7 + 3);
        gm.data = gmem.data();
        gm.size = gmem.size();
        gm.race = nullptr;
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

inline _Float16 H(uint32_t bits)
{
    uint16_t u = (uint16_t)bits;
    _Float16 h;
    std::memcpy(&h, &u, 2);
    return h;
}

inline uint32_t HB(_Float16 h)
{
    if (h != h)
        return kQNaN16;
    uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
}

inline float F(uint32_t bits) { return npu_f32_from_bits(bits); }
inline uint32_t FB(float f) { return f != f ? kQNaN32 : npu_f32_bits(f); }
inline bool is_int(int dt) { return dt == NPU_I16 || dt == NPU_I32; }
inline unsigned width(int dt) { return dt == NPU_F16 || dt == NPU_I16 ? 16 : 32; }
inline uint32_t lane_mask(int dt) { return width(dt) == 16 ? 0xffffu : 0xffffffffu; }
inline int64_t I(int dt, uint32_t bits) { return width(dt) == 16 ? (int64_t)(int16_t)bits : (int64_t)(int32_t)bits; }
inline uint32_t IB(int dt, int64_t v) { return (uint32_t)v & lane_mask(dt); }

template <class Op> uint32_t lanewise(int dt, uint32_t a, uint32_t b, Op op)
{
    switch (dt) {
    case NPU_F16: return HB((_Float16)op(H(a), H(b)));
    case NPU_F32: return FB((float)op(F(a), F(b)));
    default: return IB(dt, (int64_t)op(I(dt, a), I(dt, b)));
    }
}

inline double as_double(int dt, uint32_t bits) { return dt == NPU_F16 ? (double)(float)H(bits) : (double)F(bits); }
inline bool is_nan_lane(int dt, uint32_t bits) { return std::isnan(as_double(dt, bits)); }

inline uint32_t ref_maxmin(int dt, uint32_t a, uint32_t b, bool want_max)
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

inline uint32_t sign_bit(int dt) { return width(dt) == 16 ? 0x8000u : 0x80000000u; }

inline uint32_t shift_ref(int dt, uint32_t a, uint32_t count, int kind)
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

inline const VecCase kVecCases[] = {
    { "vadd", NPU_OP_VADD, NPU_DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return lanewise(dt, a, b, [](auto x, auto y) { return x + y; }); } },
    { "vsub", NPU_OP_VSUB, NPU_DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return lanewise(dt, a, b, [](auto x, auto y) { return x - y; }); } },
    { "vmul", NPU_OP_VMUL, NPU_DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return lanewise(dt, a, b, [](auto x, auto y) { return x * y; }); } },
    { "vfma", NPU_OP_VFMA, NPU_DT_FLOAT, 3, [](int dt, uint32_t a, uint32_t b, uint32_t c) {
          return dt == NPU_F16 ? npu_f16_fma((uint16_t)a, (uint16_t)b, (uint16_t)c)
                               : FB(std::fma(F(a), F(b), F(c))); } },
    { "vfms", NPU_OP_VFMS, NPU_DT_FLOAT, 3, [](int dt, uint32_t a, uint32_t b, uint32_t c) {
          return dt == NPU_F16 ? npu_f16_fma((uint16_t)a, (uint16_t)b, (uint16_t)(c ^ 0x8000))
                               : FB(std::fma(F(a), F(b), -F(c))); } },
    { "vfnma", NPU_OP_VFNMA, NPU_DT_FLOAT, 3, [](int dt, uint32_t a, uint32_t b, uint32_t c) {
          return dt == NPU_F16 ? npu_f16_fma((uint16_t)(a ^ 0x8000), (uint16_t)b, (uint16_t)c)
                               : FB(std::fma(-F(a), F(b), F(c))); } },
    { "vmax", NPU_OP_VMAX, NPU_DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return ref_maxmin(dt, a, b, true); } },
    { "vmin", NPU_OP_VMIN, NPU_DT_ALL, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) {
          return ref_maxmin(dt, a, b, false); } },
    { "vabs", NPU_OP_VABS, NPU_DT_ALL, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          return is_int(dt) ? IB(dt, std::llabs(I(dt, a))) : a & ~sign_bit(dt); } },
    { "vneg", NPU_OP_VNEG, NPU_DT_ALL, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          return is_int(dt) ? IB(dt, -I(dt, a)) : a ^ sign_bit(dt); } },
    { "vrnd", NPU_OP_VRND, NPU_DT_FLOAT, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          return dt == NPU_F16 ? HB((_Float16)std::nearbyint((float)H(a))) : FB(std::nearbyint(F(a))); } },
    { "vmov", NPU_OP_VMOV, NPU_DT_ALL, 1, [](int, uint32_t a, uint32_t, uint32_t) { return a; } },
    { "vand", NPU_OP_VAND, NPU_DT_ALL, 2, [](int, uint32_t a, uint32_t b, uint32_t) { return a & b; } },
    { "vor", NPU_OP_VOR, NPU_DT_ALL, 2, [](int, uint32_t a, uint32_t b, uint32_t) { return a | b; } },
    { "vxor", NPU_OP_VXOR, NPU_DT_ALL, 2, [](int, uint32_t a, uint32_t b, uint32_t) { return a ^ b; } },
    { "vnot", NPU_OP_VNOT, NPU_DT_ALL, 1, [](int dt, uint32_t a, uint32_t, uint32_t) { return ~a & lane_mask(dt); } },
    { "vshl", NPU_OP_VSHL, NPU_DT_INT, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) { return shift_ref(dt, a, b, 0); } },
    { "vshr", NPU_OP_VSHR, NPU_DT_INT, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) { return shift_ref(dt, a, b, 1); } },
    { "vsra", NPU_OP_VSRA, NPU_DT_INT, 2, [](int dt, uint32_t a, uint32_t b, uint32_t) { return shift_ref(dt, a, b, 2); } },
    { "vftoi", NPU_OP_VFTOI, NPU_DT_INT, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          double x = dt == NPU_I16 ? (double)(float)H(a) : (double)F(a);
          if (std::isnan(x))
              return 0u;
          double lo = dt == NPU_I16 ? -32768.0 : -2147483648.0, hi = dt == NPU_I16 ? 32767.0 : 2147483647.0;
          return IB(dt, (int64_t)std::min(hi, std::max(lo, std::nearbyint(x)))); } },
    { "vitof", NPU_OP_VITOF, NPU_DT_FLOAT, 1, [](int dt, uint32_t a, uint32_t, uint32_t) {
          return dt == NPU_F16 ? HB((_Float16)(int16_t)a) : FB((float)(int32_t)a); } },
};

// Half random encodings (NaN, inf, subnormals included), half small values.
inline uint32_t random_lane(std::mt19937 &rng, int dt)
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

inline std::string dt_name(int dt)
{
    static const char *names[] = { "f16", "f32", "i16", "i32" };
    return names[dt];
}

inline std::string hex(uint64_t x)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)x);
    return buf;
}

class ExecVlen : public ::testing::TestWithParam<unsigned> {};

} // namespace exec_test
