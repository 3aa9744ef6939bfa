// The memory system (memsys.h): DMA engines cutting transfers into L2 lines,
// the shared L2 and DRAM behind them, the timing model's DMA backend seam,
// and the run loop's quantum, with exact numbers where the model is exact.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <memory>
#include <vector>

#include "npusim/asm.h"
#include "npusim/memsys.h"
#include "npusim/run.h"
#include "npusim/timing.h"
#include "report.h"
#include "runner.h"

using namespace npusim;

namespace {

struct MemsysDeleter {
    void operator()(npu_memsys *ms) const { npu_memsys_free(ms); }
};
using MemsysPtr = std::unique_ptr<npu_memsys, MemsysDeleter>;

npu_memsys_config base_config(unsigned cores = 1)
{
    npu_memsys_config c{};
    npu_l2_config_default(&c.l2);
    npu_dram_config_default(&c.dram);
    c.cores = cores;
    c.dma_bytes_per_cycle = 32;
    c.dma_outstanding = 64;
    return c;
}

MemsysPtr make(const npu_memsys_config &c)
{
    char msg[160] = "";
    MemsysPtr ms(npu_memsys_new(&c, msg, sizeof msg));
    EXPECT_TRUE(ms) << msg;
    return ms;
}

// One contiguous transfer of `bytes` at gm `addr`.
npu_dma_request contiguous(uint64_t addr, uint64_t bytes, bool to_ub)
{
    npu_dma_request rq{};
    rq.to_ub = to_ub;
    rq.gm_addr = addr;
    rq.row_bytes = bytes;
    rq.shape.count[0] = rq.shape.count[1] = 1;
    rq.total_bytes = bytes;
    return rq;
}

}  // namespace

TEST(Memsys, BandwidthLimitedTransferTakesBytesOverBandwidth)
{
    // Warm L2, plenty of line requests in flight: the engine's 32 bytes/cycle
    // binds. The last line leaves after all 65536 bytes have passed the engine
    // (2048 cycles) and hits after the L2's 20-cycle latency.
    npu_memsys_config c = base_config();
    auto ms = make(c);
    npu_memsys_warm(ms.get(), 0, 65536, 0);
    npu_dma_request rq = contiguous(0, 65536, true);
    const uint64_t start = 1000;
    EXPECT_EQ(npu_memsys_dma(ms.get(), 0, start, &rq) - start, 65536u / 32u + c.l2.hit_latency);
    const npu_l2_stats *st = npu_l2_get_stats(npu_memsys_l2(ms.get()));
    EXPECT_EQ(st->accesses, 65536u / 128u);
    EXPECT_EQ(st->hits, st->accesses);
}

TEST(Memsys, OutstandingLimitBindsWhenLatencyIsLong)
{
    // One line in flight at a time, all hits: each line waits for the one
    // before it, 20 cycles each (the engine would allow one every 4).
    npu_memsys_config c = base_config();
    c.dma_outstanding = 1;
    auto ms = make(c);
    npu_memsys_warm(ms.get(), 0, 4096, 0);
    npu_dma_request rq = contiguous(0, 4096, true);
    // Line 0 leaves at start + 4 (its 128 bytes passed the engine), then one
    // line per hit latency.
    EXPECT_EQ(npu_memsys_dma(ms.get(), 0, 0, &rq), 4u + 32u * c.l2.hit_latency);
}

TEST(Memsys, WarmSecondPassHits)
{
    auto ms = make(base_config());
    npu_dma_request rq = contiguous(0x10000, 32768, true);
    npu_memsys_dma(ms.get(), 0, 0, &rq);
    const npu_l2_stats first = *npu_l2_get_stats(npu_memsys_l2(ms.get()));
    EXPECT_EQ(first.misses, 256u);
    EXPECT_EQ(first.hits, 0u);
    npu_memsys_dma(ms.get(), 0, 100000, &rq);
    const npu_l2_stats *second = npu_l2_get_stats(npu_memsys_l2(ms.get()));
    EXPECT_EQ(second->hits - first.hits, 256u);
    EXPECT_EQ(second->misses, first.misses);
}

TEST(Memsys, TwoCoresContendingOnDramAreSlowerByTheirSecondShareOfTheChannel)
{
    // One DRAM channel at 32 bytes/cycle is the only bottleneck (a fast DMA
    // engine, many MSHRs and line requests in flight). Alone, a core's 64
    // line misses leave the channel at 4 cycles each; with a second core
    // starting the same transfer (other addresses) at the same cycle, the
    // channel serves the first core's lines before the second's, so the
    // second finishes 64 x 128 / 32 = 256 cycles after one core alone would.
    npu_memsys_config c = base_config(2);
    c.dram.channels = 1;
    c.l2.mshrs = 1024;
    c.dma_bytes_per_cycle = 4096;
    c.dma_outstanding = 1024;
    const uint64_t bytes = 64 * 128;
    npu_dma_request a = contiguous(0, bytes, true), b = contiguous(1 << 20, bytes, true);

    auto one = make(c);
    const uint64_t alone = npu_memsys_dma(one.get(), 0, 0, &a);

    auto two = make(c);
    const uint64_t first = npu_memsys_dma(two.get(), 0, 0, &a);
    const uint64_t second = npu_memsys_dma(two.get(), 1, 0, &b);
    EXPECT_EQ(first, alone);
    EXPECT_EQ(second - alone, bytes / c.dram.bytes_per_cycle);
    // And the channel was the limit: busy for every byte of both.
    EXPECT_EQ(npu_dram_busy_cycles(npu_memsys_dram(two.get())), 2 * bytes / c.dram.bytes_per_cycle);
}

TEST(Memsys, StridedTransferWalksRowsLikeTheCore)
{
    // 3 x 2 rows of 64 bytes, GM strides 256 and 4096: six accesses at the
    // rows' addresses, in the core's order (inner dimension first), each
    // charged to the tensor holding it.
    auto ms = make(base_config());
    npu_memsys_add_tensor(ms.get(), 0x4000, 0x4000, 3);
    std::vector<npu_memsys_access> seen;
    npu_memsys_set_trace(
        ms.get(), [](void *ctx, const npu_memsys_access *a) { static_cast<std::vector<npu_memsys_access> *>(ctx)->push_back(*a); },
        &seen);
    npu_dma_request rq{};
    rq.to_ub = 0;
    rq.gm_addr = 0x4040;
    rq.row_bytes = 64;
    rq.shape.count[0] = 3;
    rq.shape.gm_stride[0] = 256;
    rq.shape.count[1] = 2;
    rq.shape.gm_stride[1] = 4096;
    rq.total_bytes = 6 * 64;
    npu_memsys_dma(ms.get(), 0, 0, &rq);
    ASSERT_EQ(seen.size(), 6u);
    const uint64_t want[6] = {0x4040, 0x4140, 0x4240, 0x5040, 0x5140, 0x5240};
    for (unsigned i = 0; i < 6; i++) {
        EXPECT_EQ(seen[i].addr, want[i]) << i;
        EXPECT_EQ(seen[i].bytes, 64u);
        EXPECT_TRUE(seen[i].is_write);
        EXPECT_EQ(seen[i].tensor, 3u);
        if (i) {
            EXPECT_GE(seen[i].now, seen[i - 1].now);
        }
    }
    EXPECT_EQ(npu_l2_get_stats(npu_memsys_l2(ms.get()))->tensor[3].accesses, 6u);
}

TEST(Memsys, RowsCrossingLinesAreCutAtLineBoundaries)
{
    auto ms = make(base_config());
    npu_dma_request rq = contiguous(96, 256, true);  // 96..352: lines 0, 1, 2 (32 + 128 + 96 bytes)
    npu_memsys_dma(ms.get(), 0, 0, &rq);
    const npu_l2_stats *st = npu_l2_get_stats(npu_memsys_l2(ms.get()));
    EXPECT_EQ(st->accesses, 3u);
    EXPECT_EQ(st->crossing_accesses, 0u);
}

TEST(Memsys, StatsAddUp)
{
    // Two cores, three tensors, reads and writes, a small L2 that evicts.
    npu_memsys_config c = base_config(2);
    c.l2.size_bytes = 16384;
    c.l2.ways = 4;
    auto ms = make(c);
    for (unsigned t = 0; t < 3; t++)
        npu_memsys_add_tensor(ms.get(), uint64_t(t) << 20, 1 << 20, t);
    uint64_t now = 0;
    for (unsigned i = 0; i < 40; i++) {
        // Mostly one page per tensor (12 KiB in all: hits), every fifth
        // transfer somewhere new (evictions).
        const uint64_t page = i % 5 == 4 ? 4096 * (i + 1) : 0;
        npu_dma_request rq = contiguous((uint64_t(i % 3) << 20) + page, 4096 - 32 * (i % 5), i % 2);
        now = npu_memsys_dma(ms.get(), i % 2, now + 10, &rq) - 200;
    }
    const npu_l2_stats *st = npu_l2_get_stats(npu_memsys_l2(ms.get()));
    EXPECT_GT(st->evictions, 0u);
    EXPECT_GT(st->hits, 0u);
    EXPECT_EQ(st->hits + st->misses, st->accesses);
    EXPECT_EQ(st->compulsory + st->capacity + st->conflict + st->unclassified + st->mshr_merges, st->misses);
    uint64_t by_tensor = 0, by_core = 0, hits = 0, misses = 0;
    for (unsigned t = 0; t < NPU_L2_MAX_TENSORS; t++) {
        by_tensor += st->tensor[t].accesses;
        hits += st->tensor[t].hits;
        misses += st->tensor[t].misses;
    }
    for (unsigned k = 0; k < NPU_L2_MAX_CORES; k++)
        by_core += st->core[k].accesses;
    EXPECT_EQ(by_tensor, st->accesses);
    EXPECT_EQ(hits, st->hits);
    EXPECT_EQ(misses, st->misses);
    EXPECT_EQ(by_core, st->accesses);
    const npu_dram_stats *d = npu_dram_get_stats(npu_memsys_dram(ms.get()));
    EXPECT_EQ(d->bytes_written, st->writebacks * c.l2.line_bytes);
}

TEST(Memsys, RejectsABadConfigWithAMessage)
{
    npu_memsys_config c = base_config();
    c.dma_outstanding = 0;
    char msg[160] = "";
    EXPECT_EQ(npu_memsys_new(&c, msg, sizeof msg), nullptr);
    EXPECT_NE(std::string(msg).find("in flight"), std::string::npos) << msg;
}

// ---- the timing model's DMA backend seam ------------------------------------------

namespace {

struct FakeBackend {
    std::vector<uint64_t> starts;
    static uint64_t done(void *ctx, unsigned, uint64_t start, const npu_dma_request *)
    {
        static_cast<FakeBackend *>(ctx)->starts.push_back(start);
        return start + 1000;
    }
};

npu_core_stats run_with_backend(const char *src, FakeBackend *be)
{
    npu_program prog;
    npu_program_init(&prog);
    npu_diag diag{};
    EXPECT_EQ(npu_assemble("t.s", src, std::strlen(src), nullptr, &prog, &diag), NPU_OK) << diag.message;
    std::vector<uint8_t> gm_bytes(1 << 16);
    npu_gm gm{gm_bytes.data(), gm_bytes.size()};
    npu_core_config cc{256, 65536, 0, 1, NPU_SFU_EXACT, 12};
    npu_core core;
    EXPECT_EQ(npu_core_init(&core, &cc, &prog, &gm), NPU_OK);
    npu_timing_config tcfg;
    npu_timing_config_default(&tcfg);
    npu_timed_core *tc = npu_timed_core_new(&core, &tcfg);
    if (be)
        npu_timed_core_set_dma_backend(tc, &FakeBackend::done, be);
    npu_run_limits lim{};
    npu_run_timed(&tc, 1, &lim);
    npu_core_stats s = *npu_timed_stats(tc);
    npu_timed_core_free(tc);
    npu_core_fini(&core);
    npu_program_free(&prog);
    return s;
}

}  // namespace

TEST(DmaBackend, GivesTheTransferCompletionAndKeepsTheEngineRate)
{
    // Two 3200-byte loads: the second starts when the engine has pushed the
    // first's bytes (100 cycles later); each completes 1000 cycles after its
    // start, as the backend says, instead of bytes/32 + 200.
    const char *src = "li s1, 0\nli s2, 0\nli s3, 3200\ndmald s1, s2, s3, 0\ndmald s1, s2, s3, 1\n"
                      "dmawait 0\ndmawait 1\nhalt\n";
    FakeBackend be;
    npu_core_stats s = run_with_backend(src, &be);
    ASSERT_EQ(be.starts.size(), 2u);
    EXPECT_EQ(be.starts[0], 4u);  // li@0,1,2, dmald@3, start 4 (as with the ideal memory)
    EXPECT_EQ(be.starts[1], 4u + 100u);
    EXPECT_EQ(s.cycles, 4u + 100u + 1000u + 1u + 1u);  // dmawait 1 issues at 1104, halt at 1105
    npu_core_stats ideal = run_with_backend(src, nullptr);
    EXPECT_EQ(ideal.cycles, 4u + 100u + 100u + 200u + 1u + 1u);
}

// ---- the run loop's quantum ---------------------------------------------------------

TEST(Quantum, SingleCoreResultsDoNotDependOnIt)
{
    for (const char *model : {"ideal", "l2"}) {
        std::string prev;
        for (const char *q : {"1", "1000", "1000000"}) {
            RunOptions o;
            o.kernel = "gelu_tanh";
            o.dtype = "fp16";
            o.shape = {1, 32, 16, 16};
            apply_override(o.config, std::string("memory.model=") + model);
            apply_override(o.config, std::string("sim.quantum=") + q);
            nlohmann::json j = report_json(run_kernel(o));
            j.erase("sim");
            j.erase("config");
            if (!prev.empty()) {
                EXPECT_EQ(j.dump(), prev) << model << " quantum " << q;
            }
            prev = j.dump();
        }
    }
}

TEST(Quantum, MultiCoreL2RunsAreDeterministicAndCheckEveryElement)
{
    RunOptions o;
    o.kernel = "relu";
    o.dtype = "fp16";
    o.shape = {1, 64, 28, 28};
    apply_override(o.config, "memory.model=l2");
    apply_override(o.config, "system.cores=4");
    RunResult a = run_kernel(o), b = run_kernel(o);
    EXPECT_TRUE(a.passed());
    EXPECT_EQ(a.stats.cycles, b.stats.cycles);
    EXPECT_EQ(a.l2.hits, b.l2.hits);
    EXPECT_EQ(a.dram.bytes_read, b.dram.bytes_read);
    uint64_t per_core = 0;
    for (unsigned k = 0; k < 4; k++)
        per_core += a.l2.core[k].accesses;
    EXPECT_EQ(per_core, a.l2.accesses);
    for (unsigned k = 0; k < 4; k++)
        EXPECT_GT(a.l2.core[k].accesses, 0u) << "core " << k;
}
