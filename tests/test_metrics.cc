// docs/metrics.md, checked: every derived figure of `npusim run --json` is
// recomputed here from the raw counts of the same report, with the formula
// the document gives. Each figure is one division (or a max) of numbers the
// report also prints, so it must come out to the last bit: EXPECT_EQ.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "cli_helpers.h"
#include "npusim/isa.h"

using nlohmann::json;
using namespace cli_test;

namespace {

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }
uint64_t u64(const json &j) { return j.get<uint64_t>(); }
double num(const json &j) { return j.get<double>(); }
// Config values are strings in the report ("32").
double cfg(const json &j, const char *key) { return std::stod(j.at("config").at(key).get<std::string>()); }

// The configurations every check runs on: one core on the default shared L2,
// two cores with every memory term, ideal memory, fp16 with a tolerance in
// ULP and an absolute one, and a functional run (no timing figures).
const char *const kRuns[] = {
    "relu --shape 1,16,8,8",
    "relu --shape 1,32,8,8 --set system.cores=2",
    "gelu_tanh --dtype fp16 --shape 1,16,8,8 --set memory.model=ideal",
    "mish --shape 1,8,4,4 --set system.cores=2 --set l2.mshrs=2",
    "sigmoid --shape 1,16,4,4 --set sim.mode=functional",
};

class Metrics : public ::testing::TestWithParam<const char *> {
protected:
    void SetUp() override
    {
        j = run_json(GetParam());
        ASSERT_TRUE(j.is_object()) << GetParam();
        timed = j.at("timing") == "timed";
        if (timed) {
            cycles = u64(j.at("cycles"));
            cores = j.at("cores").size();
        }
    }
    json j;
    bool timed = false;
    uint64_t cycles = 0, cores = 0;
};

TEST_P(Metrics, SummaryFiguresFollowFromTheCounts)
{
    const uint64_t elements = u64(j.at("elements"));
    const json &shape = j.at("shape");
    EXPECT_EQ(elements, u64(shape[0]) * u64(shape[1]) * u64(shape[2]) * u64(shape[3]));
    // instructions_per_vector: the counted categories over the output vectors.
    uint64_t counted = 0;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const unsigned cat = npu_insn_table[op].category;
        if (cat == NPU_CAT_ARITH || cat == NPU_CAT_CMP || cat == NPU_CAT_SEL || cat == NPU_CAT_SFU ||
            cat == NPU_CAT_LOGIC || cat == NPU_CAT_CVT)
            counted += j.at("opcodes").value(npu_insn_table[op].mnemonic, uint64_t(0));
    }
    EXPECT_EQ(u64(j.at("counted_instructions")), counted);
    EXPECT_EQ(num(j.at("instructions_per_vector")), ratio(double(counted), double(u64(j.at("output_vectors")))));
    uint64_t per_core = 0;
    for (const json &n : j.at("instructions_per_core"))
        per_core += u64(n);
    EXPECT_EQ(u64(j.at("instructions")), per_core);
    if (!timed) {
        EXPECT_FALSE(j.contains("ipc"));
        EXPECT_FALSE(j.contains("bound"));
        EXPECT_TRUE(j.at("sim").at("sim_cycles_per_second").is_null()) << j.at("sim");
        return;
    }
    uint64_t slowest = 0;
    for (const json &c : j.at("cores"))
        slowest = std::max(slowest, u64(c.at("cycles")));
    EXPECT_EQ(cycles, slowest);
    EXPECT_EQ(num(j.at("ipc")), ratio(double(u64(j.at("instructions"))), double(cycles * cores)));
    EXPECT_EQ(num(j.at("cycles_per_element")), ratio(double(cycles), double(elements)));
    const double host = num(j.at("sim").at("host_seconds"));
    EXPECT_EQ(num(j.at("sim").at("sim_cycles_per_second")), ratio(double(cycles), host));
    EXPECT_EQ(num(j.at("sim").at("sim_instructions_per_second")), ratio(double(u64(j.at("instructions"))), host));
}

TEST_P(Metrics, IssueUnitAndStallFiguresFollowFromTheCounts)
{
    if (!timed)
        GTEST_SKIP() << "functional run: no timing figures";
    const json &issue = j.at("issue");
    const uint64_t width = u64(issue.at("width"));
    EXPECT_EQ(double(width), cfg(j, "issue.width"));
    const double core_cycles = double(cycles * cores);
    ASSERT_EQ(issue.at("slot_busy").size(), width);
    for (size_t k = 0; k < width; k++)
        EXPECT_EQ(num(issue.at("slot_busy")[k]), ratio(double(u64(issue.at("slot_issued")[k])), core_cycles));
    // Every core's cycles are issue cycles or charged to one stall reason,
    // and its width x cycles slots are issued or lost to one reason.
    uint64_t sum_core_cycles = 0, hist = 0, issued_in_hist = 0, stalls = 0, lost = 0;
    for (const json &c : j.at("cores"))
        sum_core_cycles += u64(c.at("cycles"));
    ASSERT_EQ(issue.at("histogram").size(), width + 1);
    for (size_t k = 0; k <= width; k++) {
        hist += u64(issue.at("histogram")[k]);
        issued_in_hist += k * u64(issue.at("histogram")[k]);
    }
    for (const auto &kv : j.at("stalls").items())
        stalls += u64(kv.value());
    for (const auto &kv : issue.at("slots_lost").items())
        lost += u64(kv.value());
    const uint64_t instructions = u64(j.at("instructions"));
    EXPECT_EQ(hist, sum_core_cycles);
    EXPECT_EQ(issued_in_hist, instructions);
    EXPECT_EQ(u64(issue.at("issue_cycles")) + stalls, sum_core_cycles);
    EXPECT_EQ(lost + instructions, width * sum_core_cycles);
    uint64_t unit_issued = 0;
    for (const auto &kv : j.at("units").items()) {
        const json &u = kv.value();
        const std::string key = "units." + kv.key() + ".count";
        EXPECT_EQ(double(u64(u.at("count"))), cfg(j, key.c_str()) * double(cores)) << kv.key();
        EXPECT_EQ(num(u.at("utilisation")), ratio(double(u64(u.at("busy_cycles"))), core_cycles / double(cores) *
                                                                                          double(u64(u.at("count")))))
            << kv.key();
        EXPECT_LE(num(u.at("utilisation")), 1.0) << kv.key();
        unit_issued += u64(u.at("issued"));
    }
    EXPECT_EQ(unit_issued, instructions);
    uint64_t raw_by = 0;
    for (const auto &kv : j.at("raw_by_unit").items())
        raw_by += u64(kv.value());
    EXPECT_EQ(raw_by, u64(j.at("stalls").at("raw")));
}

TEST_P(Metrics, MemoryFiguresFollowFromTheCounts)
{
    if (!timed)
        GTEST_SKIP() << "functional run: no timing figures";
    const json &dma = j.at("dma");
    const json &dram = j.at("dram");
    if (dram.at("model") == "ideal") {
        EXPECT_FALSE(j.contains("l2"));
        EXPECT_EQ(u64(dram.at("bytes_read")), u64(dma.at("bytes_in")));
        EXPECT_EQ(u64(dram.at("bytes_written")), u64(dma.at("bytes_out")));
        const uint64_t bpc = uint64_t(cfg(j, "dma.bytes_per_cycle"));
        EXPECT_EQ(u64(dram.at("busy_cycles")), (u64(dma.at("bytes_in")) + u64(dma.at("bytes_out")) + bpc - 1) / bpc);
        return;
    }
    const json &l2 = j.at("l2");
    EXPECT_EQ(u64(l2.at("hits")) + u64(l2.at("misses")), u64(l2.at("accesses")));
    EXPECT_EQ(u64(l2.at("reads")) + u64(l2.at("writes")), u64(l2.at("accesses")));
    EXPECT_EQ(num(l2.at("hit_rate")), ratio(double(u64(l2.at("hits"))), double(u64(l2.at("accesses")))));
    EXPECT_EQ(u64(l2.at("compulsory")) + u64(l2.at("capacity")) + u64(l2.at("conflict")) + u64(l2.at("mshr_merges")),
              u64(l2.at("misses")));
    uint64_t core_acc = 0, tensor_acc = 0;
    for (const json &c : l2.at("per_core"))
        core_acc += u64(c.at("accesses"));
    for (const auto &kv : l2.at("per_tensor").items())
        tensor_acc += u64(kv.value().at("accesses"));
    EXPECT_EQ(core_acc, u64(l2.at("accesses")));
    EXPECT_EQ(tensor_acc, u64(l2.at("accesses")));

    const json &k = dram.at("kernel"), &e = dram.at("end_of_run");
    EXPECT_EQ(u64(dram.at("peak_bytes_per_cycle")),
              uint64_t(cfg(j, "dram.channels") * cfg(j, "dram.bytes_per_cycle")));
    EXPECT_EQ(u64(k.at("bytes_read")), u64(dram.at("bytes_read")));  // the write-back reads nothing
    EXPECT_EQ(u64(k.at("bytes_written")) + u64(e.at("bytes_written")), u64(dram.at("bytes_written")));
    EXPECT_GE(u64(k.at("span_cycles")), cycles);
    EXPECT_EQ(num(k.at("achieved_bytes_per_cycle")),
              ratio(double(u64(k.at("bytes_read")) + u64(k.at("bytes_written"))), double(u64(k.at("span_cycles")))));
    EXPECT_EQ(num(dram.at("achieved_bytes_per_cycle")), num(k.at("achieved_bytes_per_cycle")));
    EXPECT_EQ(num(e.at("achieved_bytes_per_cycle")),
              ratio(double(u64(e.at("bytes_written"))), double(u64(e.at("span_cycles")))));
    EXPECT_LE(num(k.at("achieved_bytes_per_cycle")), double(u64(dram.at("peak_bytes_per_cycle"))));
    EXPECT_LE(num(e.at("achieved_bytes_per_cycle")), double(u64(dram.at("peak_bytes_per_cycle"))));
    EXPECT_EQ(u64(l2.at("end_of_run_writebacks")) * uint64_t(cfg(j, "l2.line_bytes")), u64(e.at("bytes_written")));
}

TEST_P(Metrics, BoundTermsFollowFromTheirOperands)
{
    if (!timed)
        GTEST_SKIP() << "functional run: no timing figures";
    const json &b = j.at("bound"), &m = b.at("memory");
    const json &dma = m.at("dma_engine");
    EXPECT_EQ(num(dma.at("cycles")), double(u64(dma.at("bytes"))) / double(u64(dma.at("bytes_per_cycle"))));
    if (cores == 1) {
        EXPECT_EQ(u64(dma.at("bytes")), u64(j.at("dma").at("bytes_in")) + u64(j.at("dma").at("bytes_out")));
    }
    double memory = num(dma.at("cycles"));
    if (m.contains("l2_banks")) {
        const json &bank = m.at("l2_banks"), &mshr = m.at("l2_mshrs"), &ch = m.at("dram_channels");
        EXPECT_EQ(u64(bank.at("accesses")), u64(j.at("l2").at("accesses")));
        EXPECT_EQ(num(bank.at("cycles")),
                  std::max(0.0, double(u64(bank.at("accesses"))) * double(u64(bank.at("bank_interval"))) /
                                    double(u64(bank.at("banks"))) -
                                num(bank.at("tail_cycles"))));
        EXPECT_EQ(num(mshr.at("cycles")),
                  double(u64(mshr.at("read_fills"))) * num(mshr.at("fill_min_cycles")) / double(u64(mshr.at("mshrs"))));
        EXPECT_EQ(num(ch.at("cycles")), double(u64(ch.at("bytes"))) /
                                            (double(u64(ch.at("channels"))) * double(u64(ch.at("bytes_per_cycle")))));
        const json &k = j.at("dram").at("kernel");
        EXPECT_EQ(u64(ch.at("bytes")) + u64(ch.at("queued_after_end_bytes_not_counted")),
                  u64(k.at("bytes_read")) + u64(k.at("bytes_written")));
        EXPECT_EQ(u64(ch.at("end_of_run_bytes_not_counted")), u64(j.at("dram").at("end_of_run").at("bytes_written")));
        // The DMA window: the core where (requests x hit latency + read fills x
        // fill_min) / outstanding is largest, its counts those of l2.per_core.
        const json &win = m.at("dma_window");
        const json &per_core = j.at("l2").at("per_core");
        double window = 0;
        for (const json &c : per_core)
            window = std::max(window, (double(u64(c.at("accesses"))) * num(win.at("hit_latency")) +
                                       double(u64(c.at("read_fills"))) * num(win.at("fill_min_cycles"))) /
                                          double(u64(win.at("outstanding"))));
        const json &busiest = per_core.at(u64(win.at("core")));
        EXPECT_EQ(u64(win.at("line_requests")), u64(busiest.at("accesses")));
        EXPECT_EQ(u64(win.at("read_fills")), u64(busiest.at("read_fills")));
        EXPECT_EQ(num(win.at("fill_min_cycles")), num(mshr.at("fill_min_cycles")));
        EXPECT_EQ(num(win.at("hit_latency")), cfg(j, "l2.hit_latency"));
        EXPECT_EQ(num(win.at("outstanding")), cfg(j, "dma.outstanding"));
        EXPECT_EQ(num(win.at("cycles")), window);
        EXPECT_EQ(num(win.at("cycles")), (double(u64(win.at("line_requests"))) * num(win.at("hit_latency")) +
                                          double(u64(win.at("read_fills"))) * num(win.at("fill_min_cycles"))) /
                                             double(u64(win.at("outstanding"))));
        memory = std::max({memory, window, num(bank.at("cycles")), num(mshr.at("cycles")), num(ch.at("cycles"))});
    }
    EXPECT_EQ(num(b.at("memory_cycles")), memory);
    if (cores == 1) {  // one core: its units are the report's
        for (const auto &kv : j.at("units").items())
            EXPECT_GE(num(b.at("compute_cycles")),
                      double(u64(kv.value().at("busy_cycles"))) / double(u64(kv.value().at("count"))))
                << kv.key();
    }
    const double bound = std::max({num(b.at("compute_cycles")), num(b.at("memory_cycles")),
                                   num(b.at("register_cycles")), num(b.at("dependency_cycles"))});
    EXPECT_EQ(num(b.at("bound_cycles")), bound);
    EXPECT_EQ(num(b.at("efficiency")), ratio(bound, double(cycles)));
    EXPECT_LE(num(b.at("efficiency")), 1.0);
    const std::string binding = b.at("binding");
    const double binding_cycles = binding == "resource" ? num(b.at("compute_cycles"))
                                  : binding == "memory" ? num(b.at("memory_cycles"))
                                  : binding == "registers" ? num(b.at("register_cycles"))
                                                           : num(b.at("dependency_cycles"));
    EXPECT_EQ(binding_cycles, bound) << binding;
}

TEST_P(Metrics, AccuracyFiguresFollowFromTheCounts)
{
    const json &a = j.at("accuracy");
    const uint64_t elements = u64(j.at("elements"));
    const uint64_t outputs = u64(j.at("output_vectors")) ? 1 : 0;  // every kernel here has one output
    EXPECT_EQ(u64(a.at("checked")), elements * outputs);
    EXPECT_EQ(num(a.at("mean_ulp")), ratio(num(a.at("sum_ulp")), double(u64(a.at("checked")))));
    EXPECT_LE(num(a.at("max_ulp_beyond_abs")), num(a.at("max_ulp")));
    EXPECT_EQ(a.at("padding_ok").get<bool>(), u64(a.at("padding_nonzero")) == 0);
    EXPECT_EQ(j.at("passed").get<bool>(), j.at("traps").empty() && u64(a.at("checked")) > 0 &&
                                              u64(a.at("failures")) == 0 && u64(a.at("padding_nonzero")) == 0);
    // Every element passed, so each is within the tolerance.
    const double within = num(a.at(num(a.at("tolerance_abs")) == 0 ? "max_ulp" : "max_ulp_beyond_abs"));
    EXPECT_LE(within, num(a.at("tolerance_ulp")));
}

INSTANTIATE_TEST_SUITE_P(Runs, Metrics, ::testing::ValuesIn(kRuns));

}  // namespace
