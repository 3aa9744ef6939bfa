// Guest faults end to end through `npusim run`: each one stops the run with a
// named trap (kind, PC, instruction, address), exit status 1, and the partial
// report (text and JSON) still written. Kernels are written to a temp folder.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_helpers.h"

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

using namespace cli_test;

namespace {

using nlohmann::json;

const char *const kHeader =
    "; @kernel     fault\n"
    "; @input      x range=-8,8\n"
    "; @output     y\n"
    "; @dtypes     fp32\n"
    "; @reference  relu\n"
    "; @tolerance  fp32 ulp=0\n";
const int kHeaderLines = 6;

struct Fault {
    Result r;
    json report;  // the --json file
};

// Writes `body` after the manifest as NAME.s and runs it; the text report
// goes to stdout, the JSON report to NAME.json.
Fault run_fault(const std::string &name, const std::string &body, const std::string &extra = "")
{
    std::string src = tmpdir() + "/" + name + ".s", js = tmpdir() + "/" + name + ".json";
    std::ofstream(src) << kHeader << body;
    Fault f;
    f.r = run_cli("run " + src + " --shape 1,8,2,2 --json " + js + " " + extra);
    std::string text = slurp(js);
    f.report = text.empty() ? json() : json::parse(text, nullptr, false);
    return f;
}

// The trap line of the text report, and the same trap in the JSON report.
void expect_trap(const Fault &f, unsigned core, const std::string &kind, uint64_t pc, const std::string &insn,
                 const std::string &source_line, uint64_t address)
{
    EXPECT_EQ(f.r.status, 1) << f.r.out << f.r.err;
    const std::string all = f.r.out + f.r.err;
    std::string head = "trap: core " + std::to_string(core) + ": " + kind + " at pc " + std::to_string(pc) + " (" +
                       insn + ")";
    EXPECT_NE(all.find(head), std::string::npos) << "missing '" << head << "' in\n" << all;
    EXPECT_NE(all.find(source_line), std::string::npos) << all;
    if (address) {
        char a[32];
        std::snprintf(a, sizeof a, "address 0x%llx", static_cast<unsigned long long>(address));
        EXPECT_NE(all.find(a), std::string::npos) << all;
    }
    // The partial report still prints: the summary before the trap line.
    EXPECT_NE(f.r.out.find("Summary"), std::string::npos) << f.r.out;
    EXPECT_NE(f.r.out.find("Result: FAIL"), std::string::npos) << f.r.out;
    ASSERT_TRUE(f.report.is_object()) << "no JSON report";
    ASSERT_TRUE(f.report.contains("traps"));
    const json &traps = f.report["traps"];
    ASSERT_EQ(traps.size(), 1u) << traps.dump();
    EXPECT_EQ(traps[0]["core"], core);
    EXPECT_EQ(traps[0]["kind"], kind);
    EXPECT_EQ(traps[0]["pc"], pc);
    EXPECT_EQ(traps[0]["instruction"], insn);
    EXPECT_EQ(traps[0]["address"], address);
    EXPECT_EQ(f.report["passed"], false);
    // The trap has no cycle of its own (npu_trap holds none); the run's cycle
    // count at the stop is the report's `cycles`.
    EXPECT_TRUE(f.report.contains("cycles"));
}

std::string line(int body_line)
{
    return "fault.s:" + std::to_string(kHeaderLines + body_line) + "]";
}

}  // namespace

TEST(Faults, IllegalOpcodeFromARawWordTraps)
{
    // Opcode byte 0xff is not in the table: .word keeps it as NPU_OP_INVALID.
    Fault f = run_fault("fault", "    li s5, 1\n    .word 0xffffffffffffffff\n    halt\n");
    expect_trap(f, 0, "illegal_instruction", 1, "<invalid>", line(2), 0);
}

TEST(Faults, UbOutOfBoundsNamesTheLaneAddress)
{
    Fault f = run_fault("fault", "    li s5, 0x7fffff00\n    vld.f32 v0, [s5]\n    halt\n");
    expect_trap(f, 0, "ub_out_of_bounds", 1, "vld.f32 v0, [s5]", line(2), 0x7fffff00);
    EXPECT_NE((f.r.out + f.r.err).find("outside the 262144-byte UB"), std::string::npos);
}

TEST(Faults, GmOutOfBoundsDmaTraps)
{
    Fault f = run_fault("fault", "    li s5, 0x7fffff00\n    li s29, 32\n    dmald s0, s5, s29, 0\n"
                                 "    dmawait 0\n    halt\n");
    expect_trap(f, 0, "gm_out_of_bounds", 2, "dmald s0, s5, s29, 0", line(3), 0x7fffff00);
    EXPECT_NE((f.r.out + f.r.err).find("reach outside the"), std::string::npos);
}

TEST(Faults, MisalignedDmaTraps)
{
    Fault f = run_fault("fault", "    addi s5, s1, 1\n    li s29, 32\n    dmald s0, s5, s29, 0\n"
                                 "    dmawait 0\n    halt\n");
    EXPECT_EQ(f.r.status, 1);
    ASSERT_TRUE(f.report.is_object());
    uint64_t gm = f.report["traps"][0]["address"];
    expect_trap(f, 0, "misaligned", 2, "dmald s0, s5, s29, 0", line(3), gm);
    EXPECT_EQ(gm % 32, 1u);
    EXPECT_NE((f.r.out + f.r.err).find("is not 32-byte aligned"), std::string::npos);
}

TEST(Faults, DmaWaitOnATagNeverIssuedTraps)
{
    Fault f = run_fault("fault", "    dmawait 5\n    halt\n");
    expect_trap(f, 0, "dma_tag", 0, "dmawait 5", line(1), 0);
    EXPECT_NE((f.r.out + f.r.err).find("tag 5, which no DMA or cube operation has used"), std::string::npos);
}

TEST(Faults, BarrierThatAnotherCoreSkipsTraps)
{
    // Core 1 halts without the barrier: core 0 can never pass it.
    Fault f = run_fault("fault", "    srd s5, coreid\n    bnez s5, out\n    barrier\nout:\n    halt\n",
                        "--set system.cores=2");
    ASSERT_TRUE(f.report.is_object());
    // The trap names the instruction after the barrier (pc 3, halt) today:
    // the waiting core's pc has already moved on (reported to the lead).
    uint64_t pc = f.report["traps"][0]["pc"];
    EXPECT_TRUE(pc == 2 || pc == 3) << pc;
    expect_trap(f, 0, "barrier", pc, pc == 2 ? "barrier" : "halt", "fault.s:", 0);
    EXPECT_NE((f.r.out + f.r.err).find("1 of 2 cores halted or trapped without reaching it"), std::string::npos);
}

TEST(Faults, RunawayLoopStopsAtMaxCycles)
{
    Fault f = run_fault("fault", "loop:\n    addi s5, s5, 1\n    j loop\n", "--max-cycles 1000");
    ASSERT_TRUE(f.report.is_object());
    uint64_t pc = f.report["traps"][0]["pc"];
    expect_trap(f, 0, "max_cycles", pc, pc == 0 ? "addi s5, s5, 1" : "j @0", "fault.s:", 0);
    EXPECT_NE((f.r.out + f.r.err).find("stopped at cycle 1000, its first step at or past the run's cycle limit of 1000"), std::string::npos);
    EXPECT_GE(f.report["cycles"].get<uint64_t>(), 1000u);
    EXPECT_LE(f.report["cycles"].get<uint64_t>(), 1010u);
}

TEST(Faults, RunawayLoopEndsAtTheDefaultLimitWithoutFlags)
{
    // Every run ends: 1 x 8 x 2 x 2 fp32 is 4 vectors per tensor, 8 in all,
    // so the default limit is 1000 x (8 + 64) = 72000 instructions.
    Fault f = run_fault("fault", "loop:\n    addi s5, s5, 1\n    j loop\n");
    ASSERT_TRUE(f.report.is_object()) << f.r.err;
    EXPECT_EQ(f.r.status, 1);
    ASSERT_EQ(f.report["traps"].size(), 1u);
    EXPECT_EQ(f.report["traps"][0]["kind"], "max_instructions");
    EXPECT_EQ(f.report["instructions"], 72000u);
    EXPECT_NE((f.r.out + f.r.err)
                  .find("stopped after 72000 instructions, the default limit 1000 x (8 vectors + 64); "
                        "a larger instruction limit raises it, 0 lifts it"),
              std::string::npos)
        << f.r.out << f.r.err;
}

TEST(Faults, DmaMovingMoreThanGlobalMemoryTrapsAtIssue)
{
    // 2^31 rows of 32 bytes with strides of 0 stay in bounds row by row, yet
    // would move 64 GiB in one instruction: it traps instead of running on.
    Fault f = run_fault("fault",
                        "    li s6, 0x80000000\n    dmadim 1, s6, s0, s0\n    li s7, 32\n"
                        "    dmald s0, s1, s7, 0\n    dmawait 0\n    halt\n");
    ASSERT_TRUE(f.report.is_object()) << f.r.err;
    ASSERT_EQ(f.report["traps"].size(), 1u);
    EXPECT_EQ(f.report["traps"][0]["kind"], "dma_too_large");
    EXPECT_EQ(f.report["traps"][0]["instruction"], "dmald s0, s1, s7, 0");
    EXPECT_NE((f.r.out + f.r.err).find("dmald: 1 x 2147483648 rows of 32 bytes move more than the"), std::string::npos)
        << f.r.out << f.r.err;
}

TEST(Faults, RunawayLoopStopsAtMaxInstructions)
{
    Fault f = run_fault("fault", "loop:\n    addi s5, s5, 1\n    j loop\n", "--max-instructions 500");
    ASSERT_TRUE(f.report.is_object());
    expect_trap(f, 0, "max_instructions", 0, "addi s5, s5, 1", line(2), 0);
    EXPECT_NE((f.r.out + f.r.err).find("stopped after 500 instructions, the run's instruction limit"), std::string::npos);
    EXPECT_EQ(f.report["instructions"], 500u);
}

TEST(Faults, CoreTrappingWhileAnotherWaitsAtABarrierEndsTheBarrierToo)
{
    // The nearest thing to a deadlock the ISA allows: core 0 waits at a
    // barrier that core 1 never reaches because it traps. A trap stops its
    // own core only (docs/timing.md), so the barrier can never complete and
    // its waiter traps too: the run ends (no hang, no "deadlock" trap) and
    // names the real fault and the barrier it left waiting.
    Fault f = run_fault("fault",
                        "    srd s5, coreid\n    bnez s5, bad\n    barrier\n    halt\n"
                        "bad:\n    li s6, 0x7fffff00\n    vld.f32 v0, [s6]\n    halt\n",
                        "--set system.cores=2");
    EXPECT_EQ(f.r.status, 1) << f.r.out << f.r.err;
    ASSERT_TRUE(f.report.is_object()) << "no JSON report";
    const json &traps = f.report["traps"];
    ASSERT_EQ(traps.size(), 2u) << traps.dump();
    for (const json &t : traps) {
        if (t["core"] == 1) {
            EXPECT_EQ(t["kind"], "ub_out_of_bounds");
            EXPECT_EQ(t["pc"], 5);
            EXPECT_EQ(t["address"], 0x7fffff00);
        } else {
            EXPECT_EQ(t["core"], 0);
            EXPECT_EQ(t["kind"], "barrier");
            EXPECT_EQ(t["message"], "barrier never completes: 1 of 2 cores halted or trapped without reaching it");
        }
    }
}

TEST(Faults, AssemblerWordKeepsTheBitsAndDisassemblesAsWord)
{
    // .word through `npusim asm` and `npusim dis`: the raw bits survive.
    std::string src = tmpdir() + "/word.s", bin = tmpdir() + "/word.bin";
    std::ofstream(src) << "    .word 0xffffffffffffffff\n    halt\n";
    Result a = run_cli("asm " + src + " -o " + bin);
    ASSERT_EQ(a.status, 0) << a.err;
    std::string b = slurp(bin);
    ASSERT_EQ(b.size(), 16u + 16u);
    EXPECT_EQ(b.substr(16, 8), std::string(8, '\xff'));
    Result d = run_cli("dis " + bin);
    // `dis` prints such a word as `.word`, which now assembles back to it.
    EXPECT_NE(d.out.find(".word 0xffffffffffffffff"), std::string::npos) << d.out << d.err;
}

// ---- killed runs: no truncated file under a final name -------------------

namespace {

// VCD headers carry the wall-clock date; everything else is deterministic.
std::string normalise(const std::string &name, const std::string &text)
{
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".vcd") == 0) {
        size_t a = text.find("$date"), b = text.find("$end", a);
        if (a != std::string::npos && b != std::string::npos)
            return text.substr(0, a) + text.substr(b + 4);
    }
    if (name == "report.json") {
        json j = json::parse(text, nullptr, false);
        if (!j.is_object())
            return "<not JSON>";
        j.erase("sim");
        return j.dump();
    }
    return text;
}

#if NPUSIM_HAVE_SYSTEMC
const char *const kOutputs[] = {"report.json", "y.npy", "trace.json", "konata.log", "wave.vcd"};
#else  // -Dsystemc=disabled: no VCD
const char *const kOutputs[] = {"report.json", "y.npy", "trace.json", "konata.log"};
#endif

std::string outputs_args(const std::string &dir)
{
    return " --json " + dir + "/report.json --output y=" + dir + "/y.npy --trace " + dir + "/trace.json --konata " +
           dir + "/konata.log" + (NPUSIM_HAVE_SYSTEMC ? " --vcd " + dir + "/wave.vcd" : std::string());
}

}  // namespace

TEST(Faults, KilledRunNeverLeavesATruncatedOutput)
{
    const std::string run_args = "run gelu_tanh --dtype fp16 --shape 1,32,40,40 --seed 3 -q";
    const std::string ref = tmpdir() + "/kill_ref";
    ASSERT_EQ(system(("mkdir -p " + ref).c_str()), 0);
    ASSERT_EQ(run_cli(run_args + outputs_args(ref)).status, 0);
    std::map<std::string, std::string> want;
    for (const char *o : kOutputs) {
        want[o] = normalise(o, slurp(ref + "/" + o));
        ASSERT_FALSE(want[o].empty()) << o;
    }
    // SIGKILL at several moments of the run: before, during and after the
    // outputs are written. Each file is either absent or complete.
    int complete = 0, absent = 0;
    for (const char *delay : {"0.05", "0.2", "0.5", "1", "2", "4"}) {
        const std::string dir = tmpdir() + "/kill_" + delay;
        ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
        std::string cmd = "timeout -s KILL " + std::string(delay) + " " + NPUSIM_EXE + " " + run_args +
                          outputs_args(dir) + " >/dev/null 2>&1";
        (void)!system(cmd.c_str());
        for (const char *o : kOutputs) {
            std::string path = dir + "/" + o;
            if (access(path.c_str(), F_OK) != 0) {
                absent++;
                continue;
            }
            complete++;
            EXPECT_EQ(normalise(o, slurp(path)), want[o]) << path << " is not the complete output";
        }
    }
    EXPECT_GT(absent, 0) << "no kill landed before the outputs: use a bigger shape";
    RecordProperty("complete_outputs", complete);
}

// ---- .word in the assembler ---------------------------------------------------

#include "npusim/asm.h"

TEST(AsmWord, KeepsAnUndecodableWordAsInvalidWithItsBits)
{
    const char src[] = "    halt\n    .word 0xff00000000000001 + 1\n";
    npu_program p;
    npu_diag d{};
    ASSERT_EQ(npu_assemble("w.s", src, sizeof src - 1, nullptr, &p, &d), 0) << d.message;
    ASSERT_EQ(p.count, 2u);
    EXPECT_EQ(p.words[1], 0xff00000000000002ull);
    EXPECT_EQ(p.insns[1].op, NPU_OP_INVALID);
    EXPECT_EQ(p.locs[1].line, 2u);
    char buf[64];
    npu_disasm(&p.insns[1], 1, buf, sizeof buf);
    EXPECT_STREQ(buf, "<invalid>");
    npu_program_free(&p);
}

TEST(AsmWord, ADecodableWordIsThatInstruction)
{
    // The word of `halt`, written raw, decodes back to halt.
    const char ref[] = "    halt\n";
    npu_program h;
    ASSERT_EQ(npu_assemble("h.s", ref, sizeof ref - 1, nullptr, &h, nullptr), 0);
    char src[64];
    std::snprintf(src, sizeof src, "    .word 0x%llx\n", static_cast<unsigned long long>(h.words[0]));
    npu_program p;
    ASSERT_EQ(npu_assemble("w.s", src, strlen(src), nullptr, &p, nullptr), 0);
    ASSERT_EQ(p.count, 1u);
    EXPECT_EQ(p.words[0], h.words[0]);
    EXPECT_EQ(p.insns[0].op, h.insns[0].op);
    npu_program_free(&p);
    npu_program_free(&h);
}

TEST(AsmWord, RejectsFloatsAndTrailingText)
{
    npu_program p;
    npu_diag d{};
    const char f[] = "    .word 1.5\n";
    EXPECT_EQ(npu_assemble("w.s", f, sizeof f - 1, nullptr, &p, &d), NPU_ESYNTAX);
    EXPECT_STREQ(d.message, ".word takes an integer, not a float");
    EXPECT_EQ(d.line, 1);
    EXPECT_EQ(d.col, 5);
    const char t[] = "    .word 1 2\n";
    EXPECT_EQ(npu_assemble("w.s", t, sizeof t - 1, nullptr, &p, &d), NPU_ESYNTAX);
    EXPECT_NE(std::string(d.message).find("unexpected trailing text"), std::string::npos) << d.message;
}

// ---- fuzz findings, kept as regressions ------------------------------------

TEST(AsmFuzz, ComparisonCharacterAtTheVeryEndIsNotReadPast)
{
    // fuzz_exec crash-d68afc61: ";\n\t!" with no NUL after it. The lexer
    // peeked at s[n] for a two-character `!=` (heap-buffer-overflow under
    // ASan). The exact-size heap copy keeps ASan able to see it again.
    const char bytes[] = {';', '\n', '\t', '!'};
    std::unique_ptr<char[]> text(new char[sizeof bytes]);
    std::memcpy(text.get(), bytes, sizeof bytes);
    npu_program p;
    npu_diag d{};
    EXPECT_EQ(npu_assemble("f.s", text.get(), sizeof bytes, nullptr, &p, &d), NPU_ESYNTAX);
    EXPECT_EQ(d.line, 2);
    EXPECT_NE(std::string(d.message).find("'!'"), std::string::npos) << d.message;
    for (const char *tail : {"=", "<", ">", "!"}) {
        std::string src = std::string(".if 1 ") + tail;
        std::unique_ptr<char[]> t(new char[src.size()]);
        std::memcpy(t.get(), src.data(), src.size());
        EXPECT_EQ(npu_assemble("f.s", t.get(), src.size(), nullptr, &p, &d), NPU_ESYNTAX) << src;
    }
}
