// The memory system (memsys.h): DMA engines cutting transfers into L2 lines,
// the shared L2 and DRAM behind them, the timing model's DMA backend seam,
// and the run loop's quantum, with exact numbers where the model is exact.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "npusim/asm.h"
#include "npusim/errors.h"
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

TEST(Memsys, TransferBookedFirstDoesNotDelayAnEarlierOneInTheSameBank)
{
    // One L2 bank, warm lines: each engine sends a line every 4 cycles (128
    // bytes at 32 bytes/cycle). Core 0's transfer from cycle 1000 is booked
    // first (its core ran ahead within the quantum); core 1's from cycle 0,
    // booked after it, still gets the bank at its own lines' cycles: its last
    // line leaves at 32 and hits 20 cycles later.
    npu_memsys_config c = base_config(2);
    c.l2.banks = 1;
    auto ms = make(c);
    npu_memsys_warm(ms.get(), 0, 1 << 16, 0);
    npu_dma_request a = contiguous(0, 8 * 128, true), b = contiguous(1 << 12, 8 * 128, true);
    EXPECT_EQ(npu_memsys_dma(ms.get(), 0, 1000, &a), 1000u + 32u + 20u);
    EXPECT_EQ(npu_memsys_dma(ms.get(), 1, 0, &b), 32u + 20u);
    // Interleaved with core 0's lines (1004, 1008, ...: core 1's at 1006,
    // 1010, ...): no waits either.
    EXPECT_EQ(npu_memsys_dma(ms.get(), 1, 1002, &b), 1002u + 32u + 20u);
    EXPECT_EQ(npu_l2_get_stats(npu_memsys_l2(ms.get()))->bank_conflict_cycles, 0u);
    // Arriving in the same cycles as core 0's, each of core 1's 8 lines
    // waits one cycle.
    auto same = make(c);
    npu_memsys_warm(same.get(), 0, 1 << 16, 0);
    EXPECT_EQ(npu_memsys_dma(same.get(), 0, 1000, &a), 1000u + 32u + 20u);
    EXPECT_EQ(npu_memsys_dma(same.get(), 1, 1000, &b), 1000u + 32u + 1u + 20u);
    EXPECT_EQ(npu_l2_get_stats(npu_memsys_l2(same.get()))->bank_conflict_cycles, 8u);
}

TEST(Memsys, FillsBookedAheadHoldNoMshrBeforeTheirRequest)
{
    // Core 0 reads 32 cold lines from cycle 0 with 16 line requests in flight
    // and a DMA engine fast enough to send 16 at once: the first 16 fills are
    // in flight from cycle 21 to about 125, the other 16 are requested as
    // those arrive, and the whole transfer is booked at once. Core 1 reads
    // one cold line from cycle 50, booked after it: at its lookup 16 fills
    // are in flight and the later ones not yet requested. With 17 MSHRs it
    // takes the free one at once, as it would alone; with 16 it waits for
    // the first of core 0's fills to arrive. Each line has a DRAM channel of
    // its own, so only the MSHRs can delay core 1.
    npu_memsys_config c = base_config(2);
    c.dma_bytes_per_cycle = 4096;
    c.dma_outstanding = 16;
    c.dram.channels = 64;
    c.dram.interleave_bytes = 128;
    npu_dma_request a = contiguous(0, 32 * 128, true), b = contiguous(40 * 128, 128, true);
    for (unsigned mshrs : {17u, 16u}) {
        c.l2.mshrs = mshrs;
        auto alone = make(c);
        const uint64_t solo = npu_memsys_dma(alone.get(), 1, 50, &b);
        auto two = make(c);
        const uint64_t first = npu_memsys_dma(two.get(), 0, 0, &a);
        EXPECT_GT(first, solo);  // core 0's later fills are booked past core 1's
        const npu_l2_stats before = *npu_l2_get_stats(npu_memsys_l2(two.get()));
        const uint64_t second = npu_memsys_dma(two.get(), 1, 50, &b);
        const npu_l2_stats *after = npu_l2_get_stats(npu_memsys_l2(two.get()));
        const uint64_t wait = after->mshr_full_cycles - before.mshr_full_cycles;
        EXPECT_EQ(after->bank_conflict_cycles, before.bank_conflict_cycles);
        if (mshrs == 17) {
            EXPECT_EQ(wait, 0u);
            EXPECT_EQ(second, solo);
        } else {
            EXPECT_GT(wait, 0u);
            EXPECT_EQ(second, solo + wait);
        }
    }
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

// ---- the end-of-run write-back ------------------------------------------------------

namespace {

// A 4 KiB, 4-way L2 of 128-byte lines on the default DRAM (4 channels of 32
// bytes/cycle, 256-byte interleave, 100 cycles latency).
npu_memsys_config small_config()
{
    npu_memsys_config c = base_config();
    c.l2.size_bytes = 4096;
    c.l2.ways = 4;
    return c;
}

struct EventLog {
    std::vector<npu_memsys_event> events;
    static void observe(void *ctx, const npu_memsys_event *ev)
    {
        npu_memsys_event e = *ev;
        e.l2 = nullptr;  // points into the caller's frame
        static_cast<EventLog *>(ctx)->events.push_back(e);
    }
};

}  // namespace

TEST(MemsysDrain, WritesEveryDirtyLineBackOnceAndKeepsItCached)
{
    // 8 full lines written (UB -> GM): allocated without a fetch, nothing
    // reaches the DRAM during the run.
    auto ms = make(small_config());
    npu_dma_request st = contiguous(0, 8 * 128, false);
    npu_memsys_dma(ms.get(), 0, 0, &st);
    const npu_dram_stats *d = npu_dram_get_stats(npu_memsys_dram(ms.get()));
    EXPECT_EQ(d->bytes_written, 0u);
    EXPECT_EQ(d->bytes_read, 0u);
    // The drain at cycle 5000: lines 0-1 on channel 0, 2-3 on 1, 4-5 on 2,
    // 6-7 on 3, 4 cycles each; the second of each pair leaves its channel at
    // 5008 and is written 100 cycles later.
    EXPECT_EQ(npu_memsys_drain(ms.get(), 5000), 5108u);
    const npu_l2_stats *st2 = npu_l2_get_stats(npu_memsys_l2(ms.get()));
    EXPECT_EQ(d->bytes_written, 8u * 128u);
    EXPECT_EQ(d->writes, 8u);
    EXPECT_EQ(st2->clean_writebacks, 8u);
    EXPECT_EQ(st2->writebacks, 8u);
    EXPECT_EQ(st2->clean_cycles, 108u);
    // The lines stay, clean: a second drain writes nothing, a read hits.
    EXPECT_EQ(npu_memsys_drain(ms.get(), 6000), 6000u);
    EXPECT_EQ(d->bytes_written, 8u * 128u);
    EXPECT_EQ(st2->clean_cycles, 108u);
    npu_dma_request ld = contiguous(0, 8 * 128, true);
    npu_memsys_dma(ms.get(), 0, 7000, &ld);
    EXPECT_EQ(st2->hits, 8u);
    EXPECT_EQ(st2->evictions, 0u);
}

TEST(MemsysDrain, KernelDramIsTheDramAsTheFirstDrainFoundIt)
{
    // 8 lines read (filled from the DRAM), then 8 full lines written (no
    // fetch): inside the kernel the DRAM only read. The drain at 5000 writes
    // the 8 dirty lines, two per channel, leaving their channels at 5008.
    auto ms = make(small_config());
    EXPECT_EQ(npu_memsys_kernel_dram(ms.get()), nullptr);
    npu_dma_request ld = contiguous(0, 8 * 128, true), st = contiguous(2048, 8 * 128, false);
    npu_memsys_dma(ms.get(), 0, 0, &ld);
    npu_memsys_dma(ms.get(), 0, 1000, &st);
    npu_memsys_drain(ms.get(), 5000);
    const npu_dram_checkpoint *k = npu_memsys_kernel_dram(ms.get());
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->cycle, 5000u);
    EXPECT_EQ(k->stats.bytes_read, 8u * 128u);
    EXPECT_EQ(k->stats.bytes_written, 0u);
    EXPECT_LT(k->stats.busy_end, 5000u);
    EXPECT_EQ(k->booked_after, 0u);
    const npu_dram_stats *d = npu_dram_get_stats(npu_memsys_dram(ms.get()));
    EXPECT_EQ(d->bytes_written, 8u * 128u);
    EXPECT_EQ(d->busy_end, 5008u);
    // A second drain (nothing left to write) keeps the first one's checkpoint.
    npu_memsys_drain(ms.get(), 6000);
    EXPECT_EQ(npu_memsys_kernel_dram(ms.get())->cycle, 5000u);
}

TEST(MemsysDrain, CleanOnlyRunWritesNothing)
{
    auto ms = make(small_config());
    npu_dma_request ld = contiguous(0, 16 * 128, true);
    const uint64_t done = npu_memsys_dma(ms.get(), 0, 0, &ld);
    EXPECT_EQ(npu_memsys_drain(ms.get(), done), done);
    const npu_dram_stats *d = npu_dram_get_stats(npu_memsys_dram(ms.get()));
    EXPECT_EQ(d->bytes_read, 16u * 128u);
    EXPECT_EQ(d->bytes_written, 0u);
    EXPECT_EQ(npu_l2_get_stats(npu_memsys_l2(ms.get()))->clean_writebacks, 0u);
}

TEST(MemsysDrain, WriteThroughHasNothingLeftToWrite)
{
    npu_memsys_config c = small_config();
    c.l2.write_policy = NPU_L2_WRITE_THROUGH;
    auto ms = make(c);
    npu_dma_request st = contiguous(0, 8 * 128, false);
    const uint64_t done = npu_memsys_dma(ms.get(), 0, 0, &st);
    const npu_dram_stats *d = npu_dram_get_stats(npu_memsys_dram(ms.get()));
    EXPECT_EQ(d->bytes_written, 8u * 128u);  // every store went through at once
    EXPECT_EQ(npu_memsys_drain(ms.get(), done), done);
    EXPECT_EQ(d->bytes_written, 8u * 128u);
    EXPECT_EQ(npu_l2_get_stats(npu_memsys_l2(ms.get()))->clean_writebacks, 0u);
}

TEST(MemsysDrain, EvictedLinesAreNotWrittenTwice)
{
    // 64 lines written through a 32-line cache: the first 32 are written
    // back as victims, the last 32 by the drain; 64 lines in all.
    auto ms = make(small_config());
    npu_dma_request st = contiguous(0, 64 * 128, false);
    const uint64_t done = npu_memsys_dma(ms.get(), 0, 0, &st);
    npu_memsys_drain(ms.get(), done);
    const npu_l2_stats *l2 = npu_l2_get_stats(npu_memsys_l2(ms.get()));
    EXPECT_EQ(l2->writebacks, 64u);
    EXPECT_EQ(l2->clean_writebacks, 32u);
    EXPECT_EQ(npu_dram_get_stats(npu_memsys_dram(ms.get()))->bytes_written, 64u * 128u);
}

TEST(MemsysDrain, WarmedLinesAreCleanAndNeverWrittenBack)
{
    // Warming models what a previous run left behind after its own drain.
    auto ms = make(small_config());
    npu_memsys_warm(ms.get(), 0, 16 * 128, 0);
    npu_dma_request ld = contiguous(0, 16 * 128, true);
    const uint64_t done = npu_memsys_dma(ms.get(), 0, 0, &ld);
    EXPECT_EQ(npu_memsys_drain(ms.get(), done), done);
    EXPECT_EQ(npu_dram_get_stats(npu_memsys_dram(ms.get()))->bytes_written, 0u);
}

TEST(MemsysObserver, SeesEveryAccessAndDramRequestWithTheDrainMarked)
{
    auto ms = make(small_config());
    EventLog log, second;
    ASSERT_EQ(npu_memsys_add_observer(ms.get(), &EventLog::observe, &log), NPU_OK);
    ASSERT_EQ(npu_memsys_add_observer(ms.get(), &EventLog::observe, &second), NPU_OK);
    npu_dma_request ld = contiguous(1 << 16, 4 * 128, true), st = contiguous(0, 8 * 128, false);
    uint64_t t = npu_memsys_dma(ms.get(), 0, 0, &ld);
    t = npu_memsys_dma(ms.get(), 0, t, &st);
    npu_memsys_remove_observer(ms.get(), &EventLog::observe, &second);
    npu_memsys_drain(ms.get(), t);
    unsigned l2 = 0, fills = 0, drain = 0;
    uint64_t read = 0, written = 0;
    for (const npu_memsys_event &e : log.events) {
        if (e.kind == NPU_MEMSYS_L2_ACCESS) {
            l2++;
            continue;
        }
        (e.is_write ? written : read) += e.bytes;
        fills += !e.is_write;
        drain += e.end_of_run;
        EXPECT_EQ(e.end_of_run, e.is_write);  // nothing else wrote to the DRAM
        EXPECT_GE(e.done, e.now + 100u);
    }
    const npu_l2_stats *s = npu_l2_get_stats(npu_memsys_l2(ms.get()));
    const npu_dram_stats *d = npu_dram_get_stats(npu_memsys_dram(ms.get()));
    EXPECT_EQ(l2, s->accesses);
    EXPECT_EQ(l2, 12u);
    EXPECT_EQ(fills, 4u);
    EXPECT_EQ(drain, 8u);
    EXPECT_EQ(read, d->bytes_read);
    EXPECT_EQ(written, d->bytes_written);
    EXPECT_EQ(second.events.size(), 12u + 4u);  // removed before the drain
    int full = 0;
    for (unsigned i = 0; i < NPU_MEMSYS_MAX_OBSERVERS - 1; i++)
        full |= npu_memsys_add_observer(ms.get(), &EventLog::observe, &second);
    EXPECT_EQ(full, NPU_OK);
    EXPECT_EQ(npu_memsys_add_observer(ms.get(), &EventLog::observe, &second), NPU_EINVAL);
}

TEST(MemsysDrain, RunLoopWritesTheOutputBackAtTheEnd)
{
    // relu fp16 1x16x8x8: x and y are 2048 bytes (16 lines) each, far below
    // the 2 MiB L2. y's lines are written whole (allocated, no fetch) and
    // stay dirty until the end: the drain writes exactly y back.
    for (const char *policy : {"write_back", "write_through"}) {
        RunOptions o;
        o.kernel = "relu";
        o.dtype = "fp16";
        o.shape = {1, 16, 8, 8};
        apply_override(o.config, "memory.model=l2");
        apply_override(o.config, std::string("l2.write_policy=") + policy);
        RunResult r = run_kernel(o);
        ASSERT_TRUE(r.passed());
        EXPECT_EQ(r.dram.bytes_read, 2048u) << policy;
        EXPECT_EQ(r.dram.bytes_written, 2048u) << policy;
        const bool wb = std::string(policy) == "write_back";
        EXPECT_EQ(r.l2.clean_writebacks, wb ? 16u : 0u) << policy;
        nlohmann::json j = report_json(r);
        EXPECT_EQ(j.at("l2").at("end_of_run_writebacks").get<uint64_t>(), wb ? 16u : 0u);
        EXPECT_EQ(j.at("dram").at("end_of_run").at("bytes_written").get<uint64_t>(), wb ? 2048u : 0u);
        // 16 lines over 4 channels, two 128-byte lines per 256-byte
        // interleave: 4 per channel, 4 cycles each, then the latency.
        EXPECT_EQ(j.at("dram").at("end_of_run").at("drain_cycles").get<uint64_t>(), wb ? 16u + 100u : 0u);
        // Achieved bandwidth counts the kernel's own traffic over its cycles.
        EXPECT_DOUBLE_EQ(j.at("dram").at("achieved_bytes_per_cycle").get<double>(),
                         double(wb ? 2048u : 4096u) / double(r.stats.cycles));
    }
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
    npu_gm gm{gm_bytes.data(), gm_bytes.size(), nullptr};
    npu_core_config cc;
    npu_core_config_default(&cc);
    cc.ub_bytes = 65536;
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
    // start, as the backend says, instead of bytes/32 + 20.
    const char *src = "li s1, 0\nli s2, 0\nli s3, 3200\ndmald s1, s2, s3, 0\ndmald s3, s2, s3, 1\n"
                      "dmawait 0\ndmawait 1\nhalt\n";
    FakeBackend be;
    npu_core_stats s = run_with_backend(src, &be);
    ASSERT_EQ(be.starts.size(), 2u);
    EXPECT_EQ(be.starts[0], 4u);  // li@0,1,2, dmald@3, start 4 (as with the ideal memory)
    EXPECT_EQ(be.starts[1], 4u + 100u);
    EXPECT_EQ(s.cycles, 4u + 100u + 1000u + 1u + 1u);  // dmawait 1 issues at 1104, halt at 1105
    npu_core_stats ideal = run_with_backend(src, nullptr);
    EXPECT_EQ(ideal.cycles, 4u + 100u + 100u + 20u + 1u + 1u);
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

// sim.quantum is a speed knob only: cores meet in the L2 only through DMA
// transfers, which are booked in (start cycle, core) order whatever the
// quantum (run.h), so every report is the same to the byte for every
// quantum, on 1 to 8 cores, from one MSHR (every miss queues) to 1024.
struct QuantumCase {
    const char *kernel;
    unsigned cores, mshrs;
};

class QuantumMatrix : public ::testing::TestWithParam<QuantumCase> {};

TEST_P(QuantumMatrix, ReportIsTheSameForEveryQuantum)
{
    const QuantumCase &c = GetParam();
    std::string first;
    for (const char *q : {"1", "10", "100", "1000", "100000"}) {
        RunOptions o;
        o.kernel = c.kernel;
        o.dtype = "fp16";
        // Small enough for the suite, large enough that every core streams
        // many transfers through the shared L2 at once.
        o.shape = std::string(c.kernel) == "relu" ? std::vector<uint64_t>{1, 64, 28, 28}
                                                  : std::vector<uint64_t>{1, 32, 16, 28};
        apply_override(o.config, "memory.model=l2");
        apply_override(o.config, "system.cores=" + std::to_string(c.cores));
        apply_override(o.config, "l2.mshrs=" + std::to_string(c.mshrs));
        apply_override(o.config, std::string("sim.quantum=") + q);
        RunResult r = run_kernel(o);
        ASSERT_TRUE(r.passed()) << c.kernel << " quantum " << q;
        nlohmann::json j = report_json(r);
        j.erase("sim");  // host speed
        j["config"].erase("sim.quantum");
        ASSERT_TRUE(j.contains("config")) << j.dump();
        if (first.empty())
            first = j.dump();
        else
            EXPECT_EQ(j.dump(), first) << c.kernel << " on " << c.cores << " cores, " << c.mshrs
                                       << " MSHRs: quantum " << q << " differs from quantum 1";
    }
}

std::vector<QuantumCase> quantum_cases()
{
    std::vector<QuantumCase> cases;
    for (const char *k : {"relu", "gelu_tanh", "mish"})
        for (unsigned cores : {1u, 2u, 4u, 8u})
            for (unsigned mshrs : {1u, 4u, 32u, 1024u})
                cases.push_back({k, cores, mshrs});
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Quantum, QuantumMatrix, ::testing::ValuesIn(quantum_cases()),
                         [](const ::testing::TestParamInfo<QuantumCase> &i) {
                             return std::string(i.param.kernel) + "_" + std::to_string(i.param.cores) + "cores_" +
                                    std::to_string(i.param.mshrs) + "mshrs";
                         });


// memory.model: ideal is an upper bound on the L2 model's performance: its
// transfers complete l2.hit_latency cycles after their last byte left the
// engine, and through the L2 no line completes sooner than that after it
// left (docs/timing.md). So no run is faster through the L2 and DRAM.
TEST(IdealMemory, IsNeverSlowerThanTheL2)
{
    struct Case {
        const char *kernel;
        std::vector<std::string> sets;
    };
    const std::vector<Case> cases = {
        {"relu", {}},
        {"gelu_tanh", {}},
        {"mish", {}},
        {"leaky_relu", {"system.cores=2"}},
        {"sigmoid", {"system.cores=4", "l2.hit_latency=5"}},
        {"relu", {"core.vlen=2048", "dram.channels=1"}},
        {"gelu_tanh", {"memory.warm_inputs=yes", "l2.hit_latency=1"}},
    };
    for (const Case &c : cases) {
        uint64_t cycles[2];
        for (int l2 = 0; l2 < 2; l2++) {
            RunOptions o;
            o.kernel = c.kernel;
            o.dtype = "fp16";
            o.shape = {1, 32, 28, 28};
            for (const std::string &s : c.sets)
                apply_override(o.config, s);
            apply_override(o.config, l2 ? "memory.model=l2" : "memory.model=ideal");
            RunResult r = run_kernel(o);
            ASSERT_TRUE(r.passed()) << c.kernel;
            cycles[l2] = r.stats.cycles;
        }
        EXPECT_LE(cycles[0], cycles[1]) << c.kernel << ": ideal " << cycles[0] << ", l2 " << cycles[1];
    }
}

// An infinite error (an element that should be finite came out inf or NaN)
// is null in the JSON report, never a number that sorts as small (it was -1).
TEST(Report, InfiniteErrorIsNullNotASmallNumber)
{
    RunOptions o;
    o.kernel = "relu";
    o.dtype = "fp16";
    o.shape = {1, 16, 2, 2};
    RunResult r = run_kernel(o);
    r.accuracy.max_ulp = INFINITY;
    r.accuracy.max_ulp_beyond_abs = INFINITY;
    nlohmann::json j = report_json(r);
    EXPECT_TRUE(j.at("accuracy").at("max_ulp").is_null()) << j.at("accuracy").dump();
    EXPECT_TRUE(j.at("accuracy").at("max_ulp_beyond_abs").is_null());
    r.accuracy.max_ulp = 0.5;
    EXPECT_EQ(report_json(r).at("accuracy").at("max_ulp").get<double>(), 0.5);
}
