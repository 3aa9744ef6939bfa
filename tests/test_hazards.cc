// Hazards generated from the ISA table: for every row that writes a register
// (isa/operands.def says which operand is written, in which file), a program
// "producer; consumer of that register; halt" must make the consumer wait the
// producer's whole latency. Nothing here names an opcode, so a new row with a
// wrong or missing operand role fails here instead of timing silently wrong.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npusim/npusim.h"

namespace {

// Registers the generated programs use: X is the one the producer writes.
constexpr unsigned kX = 7, kXp = 3;

std::string reg(npu_regfile f, unsigned n) { return std::string(1, npu_regfile_letter(f)) + std::to_string(n); }

// A valid token for operand kind k of the producer; `written` operands name X.
std::string operand_text(npu_operand_kind k, const npu_operand_desc &od, npu_dtype dt)
{
    if (od.file == NPU_RF_S || od.file == NPU_RF_V || od.file == NPU_RF_P) {
        if (k == NPU_OPK_MEM)
            return "[s0]";  // UB address 0: aligned, in bounds, one bank word
        if (od.access & NPU_ACC_W)
            return reg(npu_regfile(od.file), od.file == NPU_RF_P ? kXp : kX);
        // Sources: s0 is always ready; other files use registers never written here.
        return od.file == NPU_RF_S ? "s0" : reg(npu_regfile(od.file), 1);
    }
    switch (k) {
    case NPU_OPK_LIT: return dt == NPU_F16 || dt == NPU_F32 ? "1.0" : "1";
    case NPU_OPK_F32: return "1.0";
    case NPU_OPK_REL: return "next";  // the next instruction: taken or not, the consumer runs next
    case NPU_OPK_SPR: return npu_spr_table[0].name;
    case NPU_OPK_DIM: return "1";
    default: return "1";  // imm, shift amounts, tags
    }
}

// The consumer of register X of file f, on a unit and slot free of the producer's.
std::string consumer(npu_regfile f)
{
    switch (f) {
    case NPU_RF_S: return "add s20, s7, s7";
    case NPU_RF_V: return "vadd.i32 v20, v7, v7";
    case NPU_RF_P: return "pand p5, p3, p3";
    default: return "";
    }
}

struct Issue {
    uint64_t pc, issue;
};

void record(void *ctx, const npu_issue_event *ev)
{
    static_cast<std::vector<Issue> *>(ctx)->push_back({ev->pc, ev->issue});
}

// Every unit 50 cycles: a missed hazard lets the consumer issue within a
// few cycles of the producer instead.
constexpr unsigned kLatency = 50;

// Assembles and runs `src` on one timed core; returns each instruction's issue cycle.
std::vector<Issue> run(const std::string &src, std::string *error)
{
    npu_program prog;
    npu_program_init(&prog);
    npu_diag diag{};
    std::vector<Issue> issues;
    if (npu_assemble("hazard.s", src.c_str(), src.size(), nullptr, &prog, &diag) != NPU_OK) {
        *error = std::to_string(diag.line) + ":" + std::to_string(diag.col) + ": " + diag.message;
        npu_program_free(&prog);
        return issues;
    }
    std::vector<uint8_t> gm_bytes(1 << 16);
    npu_gm gm{gm_bytes.data(), gm_bytes.size(), nullptr};
    npu_core_config cc;
    npu_core_config_default(&cc);
    cc.ub_bytes = 65536;
    npu_core core;
    EXPECT_EQ(npu_core_init(&core, &cc, &prog, &gm), NPU_OK);
    npu_timing_config tcfg;
    npu_timing_config_default(&tcfg);
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
        tcfg.unit[u].latency = kLatency;
    npu_timed_core *tc = npu_timed_core_new(&core, &tcfg);
    npu_timed_core_set_hook(tc, &record, &issues);
    npu_run_limits lim{1000, 0};
    npu_run_timed(&tc, 1, &lim);
    if (core.state != NPU_CORE_HALTED)
        *error = core.trap.message;
    npu_timed_core_free(tc);
    npu_core_fini(&core);
    npu_program_free(&prog);
    return issues;
}

}  // namespace

TEST(Hazards, EveryRowThatWritesARegisterMakesItsReaderWaitItsLatency)
{
    unsigned checked = 0;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        const npu_format_desc &f = npu_format_table[d.format];
        npu_regfile written = NPU_RF_NONE;
        for (unsigned i = 0; i < f.num_operands; i++) {
            const npu_operand_desc &od = npu_operand_table[f.operands[i]];
            if ((od.access & NPU_ACC_W) && npu_regfile_letter(npu_regfile(od.file)))
                written = npu_regfile(od.file);
        }
        if (written == NPU_RF_NONE)
            continue;
        // The first lane type the row takes that assembles (f32 first).
        bool ran = false;
        std::string last_error;
        for (npu_dtype dt : {NPU_F32, NPU_F16, NPU_I32, NPU_I16}) {
            if (d.dtypes != NPU_DT_NONE && !(d.dtypes >> dt & 1))
                continue;
            std::string text = std::string(d.mnemonic) + (d.dtypes != NPU_DT_NONE ? std::string(".") + npu_dtype_name(dt) : "");
            for (unsigned i = 0; i < f.num_operands; i++) {
                const npu_operand_kind k = npu_operand_kind(f.operands[i]);
                text += (i ? ", " : " ") + operand_text(k, npu_operand_table[k], dt);
            }
            const std::string src = text + "\nnext:\n" + consumer(written) + "\nhalt\n";
            std::string error;
            std::vector<Issue> issues = run(src, &error);
            if (!error.empty()) {
                last_error = error;
                if (d.dtypes == NPU_DT_NONE)
                    break;
                continue;
            }
            ASSERT_EQ(issues.size(), 3u) << src;
            EXPECT_GE(issues[1].issue, issues[0].issue + kLatency)
                << d.mnemonic << " writes " << reg(written, written == NPU_RF_P ? kXp : kX)
                << ", yet its reader issued " << issues[1].issue - issues[0].issue << " cycles after it:\n"
                << src;
            ran = true;
            checked++;
            break;
        }
        EXPECT_TRUE(ran) << d.mnemonic << ": no generated form ran: " << last_error;
    }
    // Every row with a written scalar, vector or predicate register was tried.
    EXPECT_GT(checked, 60u);
}
