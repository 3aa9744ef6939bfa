// The vector-scalar forms (NAMEs, NAMEi) against their definition, for
// every such row of the ISA table: `NAMEs vd, va, sb` must leave exactly the
// bits of `vbcast vt, sb; NAME vd, va, vt` (NAMEi: vbcasti), masked or not,
// on random lanes (the harness's random_lane: NaNs, infinities, subnormals).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "exec_harness.h"

using namespace exec_test;

namespace {

bool scalar_form(unsigned fmt)
{
    return fmt == NPU_FMT_VVS || fmt == NPU_FMT_VVVS || fmt == NPU_FMT_PVS || fmt == NPU_FMT_VVSP;
}

bool literal_form(unsigned fmt)
{
    return fmt == NPU_FMT_VVL || fmt == NPU_FMT_VVVL || fmt == NPU_FMT_PVL || fmt == NPU_FMT_VVLP;
}

struct Start {
    std::vector<uint32_t> v1, v2, v4;
    uint64_t s3;
    uint64_t p1, p2, p4;
};

void prepare(Machine &m, int dt, const Start &s)
{
    for (unsigned i = 0; i < m.lanes(dt); i++) {
        m.set_lane(1, dt, i, s.v1[i]);
        m.set_lane(2, dt, i, s.v2[i]);
        m.set_lane(4, dt, i, s.v4[i]);
    }
    m.c.s[3] = s.s3;
    m.c.p[1][0] = s.p1;
    m.c.p[2][0] = s.p2;
    m.c.p[4][0] = s.p4;
}

}  // namespace

TEST(ExecVectorScalar, EveryFormEqualsBroadcastThenTheVectorForm)
{
    std::mt19937 rng(20261202);
    unsigned rows = 0;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        const bool is_s = scalar_form(d.format), is_i = literal_form(d.format);
        if (!is_s && !is_i)
            continue;
        rows++;
        // The vector form: the mnemonic less its s/i; vrsub is vsub with the sources swapped.
        const std::string mn = d.mnemonic;
        const bool reverse = mn.rfind("vrsub", 0) == 0;
        const std::string vv_name = reverse ? "vsub" : mn.substr(0, mn.size() - 1);
        const npu_opcode vv = npu_opcode_from_mnemonic(vv_name.c_str(), vv_name.size());
        ASSERT_NE(vv, NPU_OP_INVALID) << mn << ": no vector form " << vv_name;
        const bool three = d.format == NPU_FMT_VVVS || d.format == NPU_FMT_VVVL;
        const bool select = d.format == NPU_FMT_VVSP || d.format == NPU_FMT_VVLP;
        for (int dt = 0; dt < 4; dt++) {
            if (!(d.dtypes >> dt & 1))
                continue;
            for (int trial = 0; trial < 40; trial++) {
                Machine a, b;
                Start s;
                for (unsigned i = 0; i < a.lanes(dt); i++) {
                    s.v1.push_back(random_lane(rng, dt));
                    s.v2.push_back(random_lane(rng, dt));
                    s.v4.push_back(random_lane(rng, dt));
                }
                s.s3 = (uint64_t)rng() << 32 | random_lane(rng, dt);
                s.p1 = (uint64_t)rng() << 32 | rng();
                s.p2 = (uint64_t)rng() << 32 | rng();
                s.p4 = (uint64_t)rng() << 32 | rng();
                const int32_t lit = (int32_t)random_lane(rng, dt);
                const bool mask = (d.flags & NPU_F_MASK) && trial % 2;
                prepare(a, dt, s);
                prepare(b, dt, s);

                // The form under test: scalar in s3 (rs2, or rs3 for the fma
                // family), or the literal in imm.
                npu_insn form = insn((npu_opcode)op, dt, 4, 1, three ? 2 : 0, 0, is_i ? lit : 0);
                if (is_s) {
                    if (three)
                        form.rs3 = 3;
                    else
                        form.rs2 = 3;
                }
                if (select)
                    form.pg = 2;
                // Its definition: broadcast to v9, then the vector form on v9.
                npu_insn bcast = is_s ? insn(NPU_OP_VBCAST, dt, 9, 3) : insn(NPU_OP_VBCASTI, dt, 9, 0, 0, 0, lit);
                npu_insn ref = insn(vv, dt, 4, reverse ? 9 : 1, three ? 2 : reverse ? 1 : 9, three ? 9 : 0);
                if (select)
                    ref.pg = 2;
                if (mask) {
                    form = masked(form, 1);
                    ref = masked(ref, 1);
                }
                a.load({form, halt()});
                b.load({bcast, ref, halt()});
                ASSERT_EQ(a.run(), NPU_CORE_HALTED) << mn << " " << a.c.trap.message;
                ASSERT_EQ(b.run(), NPU_CORE_HALTED) << vv_name << " " << b.c.trap.message;
                const bool writes_predicate = d.format == NPU_FMT_PVS || d.format == NPU_FMT_PVL;
                if (writes_predicate)
                    EXPECT_EQ(a.c.p[4][0], b.c.p[4][0]) << mn << "." << npu_dtype_name((npu_dtype)dt);
                else
                    EXPECT_EQ(std::memcmp(a.c.v[4], b.c.v[4], NPU_VLENB_MAX), 0)
                        << mn << "." << npu_dtype_name((npu_dtype)dt) << (mask ? " masked" : "") << " trial " << trial;
            }
        }
    }
    EXPECT_EQ(rows, 32u);  // add, sub, rsub, mul, max, min, fma, fms, fnma, 6 compares, select: s and i
}
