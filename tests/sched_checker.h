// The static checker of scheduled `.pipeline` kernels (test_sched.cc,
// test_library.cc): reads the emitted kernel of every scheduled loop with
// each instruction's cycle (npu_sched_loop.kernel_cycles) and checks it
// against the machine's rules, independently of the scheduler's own data.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "npusim/npusim.h"

namespace sched_test {

inline npu_asm_machine machine_of(const npu_timing_config &t, unsigned vlen_bits = 256, unsigned ub = 65536)
{
    npu_asm_machine m{};
    m.issue_width = t.issue_width;
    for (unsigned s = 0; s < t.issue_width; s++)
        m.slot_classes[s] = t.slot_classes[s];
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
        m.unit[u] = {t.unit[u].count, t.unit[u].latency, t.unit[u].interval};
    m.vlen_bytes = vlen_bits / 8;
    m.ub_bytes = ub;
    return m;
}


// Registers an instruction reads and writes, from its row of the ISA table
// (as the timing model derives them): ids 0..31 s, 32..63 v, 64..71 p.
inline void regs_of(const npu_insn &in, std::vector<int> &reads, std::vector<int> &writes)
{
    reads.clear();
    writes.clear();
    const npu_insn_desc *d = npu_desc(in.op);
    const npu_format_desc *f = &npu_format_table[d->format];
    for (unsigned k = 0; k < f->num_operands; k++) {
        const npu_operand_desc *od = &npu_operand_table[f->operands[k]];
        int base = od->file == NPU_RF_S ? 0 : od->file == NPU_RF_V ? 32 : od->file == NPU_RF_P ? 64 : -1;
        if (base < 0)
            continue;
        int id = base + int(npu_insn_field(&in, npu_field(od->field)));
        if (id == 0)
            continue;  // s0
        if (od->access & NPU_ACC_R)
            reads.push_back(id);
        if (od->access & NPU_ACC_W)
            writes.push_back(id);
    }
    if (in.pm) {
        reads.push_back(64 + in.pg);
        if (!(d->flags & NPU_F_MASK_ZERO))
            reads.insert(reads.end(), writes.begin(), writes.end());
    }
}

// The static checker: the kernel of every scheduled loop, as emitted, read
// as a cyclic sequence of instructions at their cycles (npu_sched_loop
// kernel_cycles), keeps every rule of docs/timing.md that a schedule must:
// program order never goes back in time; each cycle's instructions get
// slots in order (T8); no unit is over-subscribed in any cycle, intervals
// wrapping around the pass (T4); every read is at least the latency after
// its writer, in this pass or the one before (T2); every write completes
// after the one before it to the same register (T3). Returns the number of
// kernel instructions checked.
inline size_t check_kernels(const npu_program &p, const npu_timing_config &t)
{
    size_t checked = 0;
    for (size_t l = 0; l < p.nloops; l++) {
        const npu_sched_loop &lp = p.loops[l];
        if (!lp.scheduled)
            continue;
        const size_t kb = lp.kernel_begin, n = lp.kernel_end - kb;
        const long P = long(lp.ii);
        EXPECT_LE(lp.vregs, lp.regs_v);
        EXPECT_LE(lp.pregs, lp.regs_p);
        EXPECT_EQ(p.insns[lp.kernel_end - 1].op, NPU_OP_LOOP);
        std::vector<std::vector<unsigned>> busy(NPU_NUM_UNITS, std::vector<unsigned>(size_t(P)));
        std::vector<std::vector<int>> rd(n), wr(n);
        for (size_t i = 0; i < n; i++)
            regs_of(p.insns[kb + i], rd[i], wr[i]);
        for (size_t i = 0; i < n; i++) {
            const npu_insn &in = p.insns[kb + i];
            const long c = long(lp.kernel_cycles[i]);
            const npu_insn_desc *d = npu_desc(in.op);
            SCOPED_TRACE("kernel instruction " + std::to_string(i) + " at cycle " + std::to_string(c));
            EXPECT_LT(c, P);
            if (c >= P)
                return checked;
            if (i > 0) {
                EXPECT_GE(c, long(lp.kernel_cycles[i - 1])) << "program order goes back in time";
            }
            for (unsigned k = 0; k < t.unit[d->unit].interval; k++)
                busy[d->unit][size_t((c + k) % P)]++;
            // the writer each read sees: the last one before it, else the
            // last of the pass before
            const std::vector<int> &reads = rd[i], &writes = wr[i];
            for (int r : reads) {
                for (size_t back = 1; back <= n; back++) {
                    const size_t j = (i + n - back) % n;
                    if (std::find(wr[j].begin(), wr[j].end(), r) == wr[j].end())
                        continue;
                    const long cw = long(lp.kernel_cycles[j]) - (j < i ? 0 : P);
                    EXPECT_GE(c, cw + long(t.unit[npu_desc(p.insns[kb + j].op)->unit].latency))
                        << "reads register " << r << " too early after instruction " << j;
                    break;
                }
            }
            for (int w : writes) {
                for (size_t back = 1; back <= n; back++) {
                    const size_t j = (i + n - back) % n;
                    if (std::find(wr[j].begin(), wr[j].end(), w) == wr[j].end())
                        continue;
                    const long cw = long(lp.kernel_cycles[j]) - (j < i ? 0 : P);
                    EXPECT_GT(c + long(t.unit[d->unit].latency),
                              cw + long(t.unit[npu_desc(p.insns[kb + j].op)->unit].latency))
                        << "write of register " << w << " completes before the older one of instruction " << j;
                    break;
                }
            }
            checked++;
        }
        for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
            for (long c = 0; c < P; c++)
                EXPECT_LE(busy[u][size_t(c)], t.unit[u].count) << "unit " << u << " over-subscribed at cycle " << c;
        // slots, cycle by cycle, in program order (lowest free slot that takes the class)
        for (size_t i = 0; i < n;) {
            uint32_t taken = 0;
            size_t j = i;
            for (; j < n && lp.kernel_cycles[j] == lp.kernel_cycles[i]; j++) {
                const unsigned cls = npu_desc(p.insns[kb + j].op)->cls;
                unsigned s = 0;
                while (s < t.issue_width && ((taken >> s & 1) || !(t.slot_classes[s] >> cls & 1)))
                    s++;
                EXPECT_LT(s, t.issue_width) << "no slot for kernel instruction " << j << " at cycle "
                                            << lp.kernel_cycles[i];
                taken |= 1u << s;
            }
            i = j;
        }
    }
    return checked;
}

}  // namespace sched_test
