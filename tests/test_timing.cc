// The timing model's exact numbers: latency chains, throughput, slots,
// non-pipelined units, UB bank conflicts, branch penalty, DMA bandwidth and
// latency, barriers, and the accounting invariant.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "npusim/npusim.h"
#include "timed_harness.h"

namespace {

using Timed = timing_test::TimedRun;

npu_timing_config defaults() { return timing_test::default_timing(); }

std::string repeat(const std::string &line, int n)
{
    std::string s;
    for (int i = 0; i < n; i++)
        s += line + "\n";
    return s;
}

void expect_accounting(const npu_core_stats &s)
{
    uint64_t stalls = 0, hist = 0;
    for (unsigned i = 0; i < NPU_NUM_STALLS; i++)
        stalls += s.stall[i];
    for (unsigned k = 0; k <= NPU_MAX_ISSUE_WIDTH; k++)
        hist += s.issue_histogram[k];
    EXPECT_EQ(s.issue_cycles + stalls, s.cycles);
    EXPECT_EQ(hist, s.cycles);
    EXPECT_EQ(s.issue_histogram[0], stalls);
}

}  // namespace

TEST(Timing, DependentFmaChainCostsLatencyEach)
{
    // 10 FMAs, each reading the previous result: VALU latency 4 -> issue at
    // 0, 4, ..., 36; the last result is ready at 40. halt issues beside it.
    Timed t(repeat("vfma.f32 v1, v1, v2, v3", 10) + "halt\n", defaults());
    const npu_core_stats &s = t.stats();
    EXPECT_EQ(s.cycles, 40u);
    EXPECT_EQ(s.issue_cycles, 10u);
    EXPECT_EQ(s.stall[NPU_STALL_RAW], 27u);
    EXPECT_EQ(s.raw_by_unit[NPU_UNIT_VALU], 27u);
    EXPECT_EQ(s.stall[NPU_STALL_DRAIN], 3u);
    EXPECT_EQ(s.critical_path, 40u);
    expect_accounting(s);
}

TEST(Timing, IndependentStreamsReachUnitThroughput)
{
    // 12 independent adds, two VALUs and two vector slots: 2 per cycle.
    std::string src;
    for (int i = 0; i < 12; i++)
        src += "vadd.f32 v" + std::to_string(i + 1) + ", v20, v21\n";
    Timed two(src + "halt\n", defaults());
    EXPECT_EQ(two.stats().issue_cycles, 6u);
    EXPECT_EQ(two.stats().cycles, 5u + 4u);  // last issue at 5, result at 9
    EXPECT_EQ(two.stats().issue_histogram[2], 6u - 1u);  // halt joins the last pair
    EXPECT_EQ(two.stats().issue_histogram[3], 1u);
    expect_accounting(two.stats());

    npu_timing_config one = defaults();
    one.unit[NPU_UNIT_VALU].count = 1;
    Timed single(src + "halt\n", one);
    EXPECT_EQ(single.stats().issue_cycles, 12u);
    EXPECT_EQ(single.stats().cycles, 11u + 4u);
    expect_accounting(single.stats());
}

TEST(Timing, NonPipelinedUnitSerialises)
{
    npu_timing_config c = defaults();
    c.unit[NPU_UNIT_VALU] = {1, 4, 3};  // one VALU, busy 3 cycles per op
    Timed t("vadd.f32 v1, v20, v21\nvadd.f32 v2, v20, v21\nvadd.f32 v3, v20, v21\nvadd.f32 v4, v20, v21\nhalt\n", c);
    const npu_core_stats &s = t.stats();
    EXPECT_EQ(s.cycles, 9u + 4u);            // issues at 0, 3, 6, 9
    EXPECT_EQ(s.stall[NPU_STALL_UNIT_BUSY], 6u);
    EXPECT_EQ(s.unit_busy[NPU_UNIT_VALU], 12u);
    expect_accounting(s);
}

TEST(Timing, SlotRestrictionsBind)
{
    // Only slot 1 takes vector instructions: one per cycle despite two VALUs.
    npu_timing_config c = defaults();
    c.slot_classes[2] = 1u << NPU_CLASS_MEM;
    std::string src;
    for (int i = 0; i < 8; i++)
        src += "vadd.f32 v" + std::to_string(i + 1) + ", v20, v21\n";
    Timed t(src + "halt\n", c);
    EXPECT_EQ(t.stats().issue_cycles, 8u);
    EXPECT_EQ(t.stats().slot_issued[1], 8u);
    EXPECT_EQ(t.stats().slot_issued[2], 0u);
    // Issue width 1: every instruction, whatever its class, takes a cycle.
    npu_timing_config w1 = defaults();
    w1.issue_width = 1;
    w1.slot_classes[0] = (1u << NPU_NUM_CLASSES) - 1;
    Timed u("li s1, 1\nli s2, 2\nvadd.f32 v1, v20, v21\nvadd.f32 v2, v20, v21\nhalt\n", w1);
    EXPECT_EQ(u.stats().issue_cycles, 5u);
    EXPECT_EQ(u.stats().cycles, 3u + 4u);  // second vadd at 3, result at 7
}

TEST(Timing, BankConflictsCostWhatTheConfigSays)
{
    // Stride of banks x bank_bytes puts every fp32 lane (8) in one bank: the
    // LSU takes 8 cycles for that access, so the next load waits 7 extra.
    npu_timing_config c = defaults();
    const unsigned stride = c.ub_banks * c.ub_bank_bytes;  // 512
    Timed t("li s2, 0\nli s3, " + std::to_string(stride) +
                "\nvlds.f32 v1, [s2], s3\nvlds.f32 v2, [s2], s3\nvld.f32 v3, [s2]\nhalt\n",
            c);
    const npu_core_stats &s = t.stats();
    EXPECT_EQ(s.ub_bank_extra, 14u);
    EXPECT_EQ(s.stall[NPU_STALL_UB_BANK], 14u);
    // li@0, li@1 (one scalar slot), vlds@2 (LSU busy 8), vlds@10, vld@18, its result at 24.
    EXPECT_EQ(s.cycles, 24u);
    EXPECT_EQ(s.stall[NPU_STALL_DRAIN], 5u);
    expect_accounting(s);
    // A unit-stride access of one vector (32 bytes) touches one bank: no extra cycles.
    Timed u("li s2, 64\nvld.f32 v1, [s2]\nvld.f32 v2, [s2]\nhalt\n", c);
    EXPECT_EQ(u.stats().ub_bank_extra, 0u);
    EXPECT_EQ(u.stats().stall[NPU_STALL_UB_BANK], 0u);
}

TEST(Timing, BankConflictsCountWordsPerBankForAnyBankCount)
{
    // A 32-byte vector at 0 is words 0 .. 3 of 8 bytes. Over 3 banks, bank 0
    // holds words 0 and 3: one extra cycle; over 2 banks, two each: one;
    // over 4, none. At 8 (words 1 .. 4) over 3 banks, bank 1 holds two.
    struct Case { unsigned banks, bytes, addr, extra; };
    for (const Case &k : { Case{3, 8, 0, 1}, Case{2, 8, 0, 1}, Case{4, 8, 0, 0}, Case{3, 8, 8, 1},
                           Case{5, 6, 0, 1}, Case{3, 16, 16, 0} }) {
        npu_timing_config c = defaults();
        c.ub_banks = k.banks;
        c.ub_bank_bytes = k.bytes;
        Timed t("li s2, " + std::to_string(k.addr) + "\nvld.f32 v1, [s2]\nhalt\n", c);
        EXPECT_EQ(t.stats().ub_bank_extra, k.extra) << k.banks << " banks of " << k.bytes << " at " << k.addr;
    }
    // Strided by banks x bytes, every lane (8) in one bank, each its own word.
    for (unsigned banks : {3u, 4u}) {
        npu_timing_config c = defaults();
        c.ub_banks = banks;
        c.ub_bank_bytes = 8;
        Timed t("li s2, 0\nli s3, " + std::to_string(banks * 8) + "\nvlds.f32 v1, [s2], s3\nhalt\n", c);
        EXPECT_EQ(t.stats().ub_bank_extra, 7u) << banks << " banks";
    }
}

TEST(Timing, MispredictedBranchPenaltyIsCharged)
{
    // A backward loop branch is predicted taken: its 4 taken passes cost
    // nothing extra; the final fall-through is mispredicted and costs the penalty.
    npu_timing_config c = defaults();
    c.branch_penalty = 2;
    Timed t("li s1, 5\ntop:\nloop s1, top\nhalt\n", c);
    const npu_core_stats &s = t.stats();
    EXPECT_EQ(s.stall[NPU_STALL_BRANCH], 2u);
    // li@0, loop@1,2,3,4,5, halt@8 (5+1+2), done at 9.
    EXPECT_EQ(s.cycles, 9u);
    expect_accounting(s);
    c.branch_penalty = 0;
    Timed z("li s1, 5\ntop:\nloop s1, top\nhalt\n", c);
    EXPECT_EQ(z.stats().stall[NPU_STALL_BRANCH], 0u);
    EXPECT_EQ(z.stats().cycles, 7u);
    // A taken forward branch is mispredicted: li@0, bnez@1, target@4.
    c.branch_penalty = 2;
    Timed f("li s1, 1\nbnez s1, skip\nnop\nnop\nskip:\nhalt\n", c);
    EXPECT_EQ(f.stats().stall[NPU_STALL_BRANCH], 2u);
    EXPECT_EQ(f.stats().cycles, 5u);
}

TEST(Timing, DmaTakesBytesOverBandwidthPlusLatency)
{
    // 3200 bytes at 32 bytes/cycle = 100 cycles of transfer + 20 of latency
    // (the ideal memory: an L2 hit), starting the cycle after the dmald issues.
    npu_timing_config c = defaults();
    Timed t("li s1, 0\nli s2, 0\nli s3, 3200\ndmald s1, s2, s3, 0\ndmawait 0\nhalt\n", c);
    const npu_core_stats &s = t.stats();
    // li@0,1,2 (one scalar slot); dmald@3 (s3 ready at 3); start 4, done 4+100+20 = 124.
    EXPECT_EQ(s.stall[NPU_STALL_DMA_WAIT], 124u - 4u);
    EXPECT_EQ(s.cycles, 124u + 1u + 1u);  // dmawait issues at 124, halt at 125
    EXPECT_EQ(s.dma_bytes_in, 3200u);
    expect_accounting(s);
}

TEST(Timing, DmaQueueDepthLimitsTransfersInFlight)
{
    npu_timing_config c = defaults();
    c.dma_queue_depth = 1;
    c.dma_latency = 10;
    Timed t("li s3, 320\ndmald s0, s0, s3, 0\ndmald s3, s0, s3, 1\ndmawait 1\nhalt\n", c);
    // First: issue 1, start 2, done 2+10+10 = 22; the second waits for a free
    // queue entry until 22, starts 23, done 43.
    const npu_core_stats &s = t.stats();
    EXPECT_EQ(s.cycles, 45u);
    expect_accounting(s);
}

TEST(Timing, BarrierReleasesAtTheLastArrival)
{
    // Core 1 spins longer before the barrier; both leave it together.
    const std::string src =
        "srd s1, coreid\nli s2, 1\nmul s3, s1, s2\nmuli s3, s3, 20\naddi s3, s3, 1\n"
        "spin:\nloop s3, spin\nbarrier\nhalt\n";
    Timed t(src, defaults(), 2);
    EXPECT_EQ(t.stats(0).cycles, t.stats(1).cycles);
    EXPECT_GT(t.stats(0).stall[NPU_STALL_SYNC], 0u);
    EXPECT_EQ(t.stats(1).stall[NPU_STALL_SYNC], 0u);
    expect_accounting(t.stats(0));
    expect_accounting(t.stats(1));
}

TEST(Timing, EventDrivenCostDoesNotGrowWithIdleCycles)
{
    // A DMA with a million-cycle latency costs the same host work as one of 1.
    npu_timing_config c = defaults();
    c.dma_latency = 1000000;
    Timed t("li s3, 32\ndmald s0, s0, s3, 0\ndmawait 0\nhalt\n", c);
    EXPECT_EQ(t.stats().instructions, 4u);
    // li@0, dmald@1, 32 bytes move in cycle 2, done 3 + 10^6; dmawait then, halt one later.
    EXPECT_EQ(t.stats().cycles, 1000000u + 5u);
}

TEST(Timing, CoreStatsMergeSumsEveryCountAndTakesTheLargerCyclesAndPath)
{
    // Summing cores must not need editing when a stat is added: every word
    // of npu_core_stats is a count, summed, except cycles and critical_path.
    npu_core_stats a{}, b{};
    uint64_t *wa = reinterpret_cast<uint64_t *>(&a), *wb = reinterpret_cast<uint64_t *>(&b);
    const size_t n = sizeof a / sizeof(uint64_t);
    for (size_t i = 0; i < n; i++) {
        wa[i] = 1000 + i;
        wb[i] = 7 * i + 3;
    }
    a.cycles = 50, b.cycles = 80;
    a.critical_path = 90, b.critical_path = 40;
    npu_core_stats total = a;
    npu_core_stats_merge(&total, &b);
    EXPECT_EQ(total.cycles, 80u);
    EXPECT_EQ(total.critical_path, 90u);
    EXPECT_EQ(total.instructions, a.instructions + b.instructions);
    EXPECT_EQ(total.stall[NPU_STALL_RAW], a.stall[NPU_STALL_RAW] + b.stall[NPU_STALL_RAW]);
    EXPECT_EQ(total.unit_busy[NPU_UNIT_SFU], a.unit_busy[NPU_UNIT_SFU] + b.unit_busy[NPU_UNIT_SFU]);
    EXPECT_EQ(total.ub_bank_extra, a.ub_bank_extra + b.ub_bank_extra);
    const uint64_t *wt = reinterpret_cast<const uint64_t *>(&total);
    size_t summed = 0;
    for (size_t i = 0; i < n; i++)
        summed += wt[i] == wa[i] + wb[i];
    EXPECT_EQ(summed, n - 2);  // all but cycles and critical_path
}

namespace {

// One core and its timing model, not yet run.
struct Stepper {
    npu_program prog{};
    std::vector<uint8_t> gm_bytes = std::vector<uint8_t>(1 << 16);
    npu_gm gm{};
    npu_core core{};
    npu_timed_core *tc = nullptr;

    Stepper(const std::string &src, npu_dma_backend backend = nullptr)
    {
        npu_program_init(&prog);
        npu_diag d{};
        EXPECT_EQ(npu_assemble("t.s", src.c_str(), src.size(), nullptr, &prog, &d), NPU_OK) << d.message;
        gm = npu_gm{ gm_bytes.data(), gm_bytes.size(), nullptr };
        npu_core_config cc;
        npu_core_config_default(&cc);
        EXPECT_EQ(npu_core_init(&core, &cc, &prog, &gm), NPU_OK);
        const npu_timing_config t = defaults();
        tc = npu_timed_core_new(&core, &t);
        if (backend)
            npu_timed_core_set_dma_backend(tc, backend, nullptr);
    }
    ~Stepper()
    {
        npu_timed_core_free(tc);
        npu_core_fini(&core);
        npu_program_free(&prog);
    }
    Stepper(const Stepper &) = delete;
    Stepper &operator=(const Stepper &) = delete;
};

const char kLoop[] = "li s1, 40\nli s3, 64\n"
                     "top:\nvfma.f32 v1, v1, v2, v3\nvadd.f32 v4, v1, v2\nsld s5, [s0 + 8]\n"
                     "dmald s0, s0, s3, 0\ndmawait 0\nloop s1, top\nhalt\n";

uint64_t answer_in_50(void *, unsigned, uint64_t start, const npu_dma_request *) { return start + 50; }

}  // namespace

TEST(Timing, TimedRunStepsAsTimedStepDoesAndStopsWhereItSays)
{
    // One instruction at a time, and all at once: the same stats.
    Stepper one(kLoop), all(kLoop);
    uint64_t stepped = 0, steps = 0;
    while (one.core.state == NPU_CORE_RUNNING) {
        npu_timed_step(one.tc);
        stepped++;
    }
    EXPECT_EQ(npu_timed_run(all.tc, UINT64_MAX, 0, 0, &steps), NPU_TIMED_STOPPED);
    EXPECT_EQ(steps, stepped);
    EXPECT_EQ(all.core.state, NPU_CORE_HALTED);
    npu_timed_finish(one.tc);
    npu_timed_finish(all.tc);
    EXPECT_EQ(std::memcmp(npu_timed_stats(one.tc), npu_timed_stats(all.tc), sizeof(npu_core_stats)), 0);
    EXPECT_GT(npu_timed_stats(all.tc)->cycles, 100u);

    // The horizon: it stops before the first instruction whose clock reaches it.
    Stepper h(kLoop);
    EXPECT_EQ(npu_timed_run(h.tc, 100, 0, 0, &steps), NPU_TIMED_HORIZON);
    EXPECT_GE(npu_timed_now(h.tc), 100u);
    EXPECT_EQ(h.core.retired, steps);
    EXPECT_EQ(npu_timed_run(h.tc, 100, 0, 0, &steps), NPU_TIMED_HORIZON);
    EXPECT_EQ(steps, 0u);

    // The limits: instructions, then cycles; the run loops raise the trap.
    Stepper li(kLoop), lc(kLoop);
    EXPECT_EQ(npu_timed_run(li.tc, UINT64_MAX, 0, 7, &steps), NPU_TIMED_LIMIT);
    EXPECT_EQ(steps, 7u);
    EXPECT_EQ(li.core.retired, 7u);
    EXPECT_EQ(npu_timed_run(lc.tc, UINT64_MAX, 100, 0, &steps), NPU_TIMED_LIMIT);
    EXPECT_GE(npu_timed_now(lc.tc), 100u);
    EXPECT_EQ(lc.core.state, NPU_CORE_RUNNING);

    // With a DMA backend: it stops after each transfer issued, left pending.
    Stepper d(kLoop, answer_in_50);
    EXPECT_EQ(npu_timed_run(d.tc, UINT64_MAX, 0, 0, &steps), NPU_TIMED_DMA);
    EXPECT_EQ(steps, 6u); // li, li, vfma, vadd, sld, dmald
    EXPECT_NE(npu_timed_dma_pending(d.tc), UINT64_MAX);
    npu_timed_book_dma(d.tc);
    EXPECT_EQ(npu_timed_dma_pending(d.tc), UINT64_MAX);
    EXPECT_EQ(npu_timed_run(d.tc, UINT64_MAX, 0, 0, &steps), NPU_TIMED_DMA);
    EXPECT_EQ(steps, 6u); // dmawait, loop, then the next iteration's four
}
