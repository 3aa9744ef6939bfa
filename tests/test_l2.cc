// The L2 cache model's exact behaviour: victims under LRU, tree-PLRU and
// seeded random replacement; write-back, write-through and write-around
// traffic; MSHR merging and back-pressure; bank conflicts; warm-up; the
// compulsory/capacity/conflict split against a reference model in this file;
// and counters that add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "npusim/npusim.h"

namespace {

constexpr unsigned kLine = 64;

// The next level as a log: fixed latencies, no bandwidth limit.
struct FakeMem {
    struct Req {
        uint64_t now, addr;
        unsigned bytes;
        bool write;
    };
    unsigned read_latency = 100, write_latency = 5;
    std::vector<Req> log;

    static uint64_t read(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
    {
        auto *m = static_cast<FakeMem *>(ctx);
        m->log.push_back({now, addr, bytes, false});
        return now + m->read_latency;
    }
    static uint64_t write(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
    {
        auto *m = static_cast<FakeMem *>(ctx);
        m->log.push_back({now, addr, bytes, true});
        return now + m->write_latency;
    }
    npu_mem_port port() { return npu_mem_port{this, read, write, nullptr}; }
    size_t count(bool write) const
    {
        return std::count_if(log.begin(), log.end(), [&](const Req &r) { return r.write == write; });
    }
};

// 4 sets x 4 ways x 64-byte lines, 10-cycle hits, one bank.
npu_l2_config small_config(npu_l2_replacement repl = NPU_L2_LRU)
{
    npu_l2_config c;
    npu_l2_config_default(&c);
    c.size_bytes = 4 * 4 * kLine;
    c.ways = 4;
    c.line_bytes = kLine;
    c.replacement = repl;
    c.hit_latency = 10;
    c.mshrs = 8;
    c.banks = 1;
    c.bank_interval = 1;
    return c;
}

struct Cache {
    npu_l2 l2{};
    FakeMem mem;
    uint64_t t = 0;  // functional tests space accesses far apart: no timing effects

    explicit Cache(const npu_l2_config &cfg)
    {
        EXPECT_EQ(npu_l2_init(&l2, &cfg), NPU_OK);
        npu_mem_port p = mem.port();
        npu_l2_set_next_level(&l2, &p);
    }
    ~Cache() { npu_l2_fini(&l2); }
    npu_l2_result access(uint64_t addr, bool write = false, unsigned bytes = 4, unsigned core = 0,
                         unsigned tensor = 0)
    {
        npu_l2_result r;
        npu_l2_access(&l2, t, addr, bytes, write, core, tensor, &r);
        t += 10000;
        return r;
    }
    const npu_l2_stats &stats() const { return *npu_l2_get_stats(&l2); }
};

// Line `tag` of set `set` in the 4-set cache.
uint64_t at(unsigned set, unsigned tag)
{
    return (uint64_t(tag) * 4 + set) * kLine;
}

}  // namespace

TEST(L2, LruEvictsTheLeastRecentlyUsedWay)
{
    Cache c(small_config(NPU_L2_LRU));
    for (unsigned tag : {0u, 1u, 2u, 3u})  // A B C D fill ways 0..3
        EXPECT_EQ(c.access(at(0, tag)).outcome, NPU_L2_MISS);
    EXPECT_EQ(c.access(at(0, 0)).outcome, NPU_L2_HIT);  // A is now the most recent

    npu_l2_result e = c.access(at(0, 4));  // E: recency order B C D A
    EXPECT_EQ(e.outcome, NPU_L2_MISS);
    EXPECT_TRUE(e.evicted);
    EXPECT_EQ(e.victim_addr, at(0, 1));  // B
    EXPECT_EQ(c.access(at(0, 5)).victim_addr, at(0, 2));  // F evicts C
    EXPECT_EQ(c.access(at(0, 6)).victim_addr, at(0, 3));  // G evicts D
    EXPECT_EQ(c.access(at(0, 1)).victim_addr, at(0, 0));  // B evicts A
    EXPECT_FALSE(npu_l2_contains(&c.l2, at(0, 0)));
    EXPECT_TRUE(npu_l2_contains(&c.l2, at(0, 4)));
    // Other sets were never touched.
    EXPECT_FALSE(npu_l2_contains(&c.l2, at(1, 0)));
    EXPECT_EQ(c.stats().hits, 1u);
    EXPECT_EQ(c.stats().misses, 8u);
    EXPECT_EQ(c.stats().evictions, 4u);
}

TEST(L2, PlruEvictsThePseudoLeastRecentWay)
{
    // Tree bits b0 (root), b1 (ways 0-1), b2 (ways 2-3); 1 = victim on the right.
    // After A B C D: b0=0 b1=0 b2=0. A hit: b0=1 b1=1 -> victim right, b2=0 -> way 2 (C),
    // where true LRU would take B (way 1).
    Cache c(small_config(NPU_L2_PLRU));
    for (unsigned tag : {0u, 1u, 2u, 3u})
        c.access(at(0, tag));
    EXPECT_EQ(c.access(at(0, 0)).outcome, NPU_L2_HIT);
    EXPECT_EQ(c.access(at(0, 4)).victim_addr, at(0, 2));  // E -> way 2: b0=0 b2=1
    EXPECT_EQ(c.access(at(0, 5)).victim_addr, at(0, 1));  // F -> way 1: b0=1 b1=0
    EXPECT_EQ(c.access(at(0, 6)).victim_addr, at(0, 3));  // G -> way 3: b0=0 b2=0
    EXPECT_EQ(c.access(at(0, 7)).victim_addr, at(0, 0));  // H -> way 0 (b0=0, b1=0)
    EXPECT_TRUE(npu_l2_contains(&c.l2, at(0, 4)));
    EXPECT_TRUE(npu_l2_contains(&c.l2, at(0, 5)));
    EXPECT_TRUE(npu_l2_contains(&c.l2, at(0, 6)));
    EXPECT_TRUE(npu_l2_contains(&c.l2, at(0, 7)));
}

TEST(L2, RandomReplacementIsDeterministicForASeed)
{
    auto victims = [](uint64_t seed) {
        npu_l2_config cfg = small_config(NPU_L2_RANDOM);
        cfg.seed = seed;
        Cache c(cfg);
        std::vector<uint64_t> v;
        for (unsigned i = 0; i < 200; i++) {
            npu_l2_result r = c.access(at(i % 4, (i * 7) % 13));
            v.push_back(r.evicted ? r.victim_addr : ~0ull);
            if (r.evicted) {
                EXPECT_EQ((r.victim_addr / kLine) % 4, i % 4u);  // the victim is in the set
            }
        }
        return v;
    };
    std::vector<uint64_t> a = victims(42), b = victims(42), other = victims(43);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, other);
    EXPECT_GT(std::count_if(a.begin(), a.end(), [](uint64_t x) { return x != ~0ull; }), 100);
}

TEST(L2, ResetReseedsRandomReplacement)
{
    npu_l2_config cfg = small_config(NPU_L2_RANDOM);
    Cache c(cfg);
    std::vector<uint64_t> first, second;
    for (int pass = 0; pass < 2; pass++) {
        auto &v = pass ? second : first;
        for (unsigned i = 0; i < 50; i++)
            v.push_back(c.access(at(0, i % 9)).victim_addr);
        npu_l2_reset(&c.l2);
    }
    EXPECT_EQ(first, second);
}

TEST(L2, WriteBackWritesOnlyDirtyVictims)
{
    Cache c(small_config());
    c.access(at(0, 0), true);  // a partial store miss: fetch, then dirty
    for (unsigned tag : {1u, 2u, 3u})
        c.access(at(0, tag));
    EXPECT_EQ(c.mem.count(true), 0u);  // nothing written yet
    npu_l2_result e = c.access(at(0, 4));  // evicts the dirty A
    EXPECT_TRUE(e.wrote_back);
    npu_l2_result f = c.access(at(0, 5));  // evicts the clean B
    EXPECT_TRUE(f.evicted);
    EXPECT_FALSE(f.wrote_back);
    ASSERT_EQ(c.mem.count(true), 1u);
    auto wb = std::find_if(c.mem.log.begin(), c.mem.log.end(), [](const FakeMem::Req &r) { return r.write; });
    EXPECT_EQ(wb->addr, at(0, 0));
    EXPECT_EQ(wb->bytes, kLine);
    EXPECT_EQ(c.stats().writebacks, 1u);
    EXPECT_EQ(c.stats().evictions, 2u);
    EXPECT_EQ(c.stats().fills, 6u);  // A B C D E F
}

TEST(L2, WritebackGoesAfterTheFillRequest)
{
    Cache c(small_config());
    for (unsigned tag : {0u, 1u, 2u, 3u})
        c.access(at(0, tag), true);
    c.mem.log.clear();
    c.access(at(0, 4));
    ASSERT_EQ(c.mem.log.size(), 2u);
    EXPECT_FALSE(c.mem.log[0].write);
    EXPECT_EQ(c.mem.log[0].addr, at(0, 4));
    EXPECT_TRUE(c.mem.log[1].write);
    EXPECT_EQ(c.mem.log[1].addr, at(0, 0));
    EXPECT_EQ(c.mem.log[0].now, c.mem.log[1].now);
}

TEST(L2, WriteThroughSendsEveryStoreAndNeverWritesBack)
{
    npu_l2_config cfg = small_config();
    cfg.write_policy = NPU_L2_WRITE_THROUGH;
    Cache c(cfg);
    c.access(at(0, 0) + 8, true, 4);  // miss: fetch + write through
    c.access(at(0, 0) + 12, true, 4); // hit: write through
    c.access(at(0, 0));               // read hit: nothing
    EXPECT_EQ(c.mem.count(false), 1u);
    ASSERT_EQ(c.mem.count(true), 2u);
    EXPECT_EQ(c.mem.log[1].addr, at(0, 0) + 8);
    EXPECT_EQ(c.mem.log[1].bytes, 4u);
    EXPECT_EQ(c.mem.log[2].addr, at(0, 0) + 12);
    for (unsigned tag : {1u, 2u, 3u, 4u})  // the stored-to line is evicted clean
        c.access(at(0, tag));
    EXPECT_EQ(c.mem.count(true), 2u);
    EXPECT_EQ(c.stats().writebacks, 0u);
    EXPECT_EQ(c.stats().write_throughs, 2u);
}

TEST(L2, WriteThroughStoreCompletesWhenTheNextLevelAcceptsIt)
{
    npu_l2_config cfg = small_config();
    cfg.write_policy = NPU_L2_WRITE_THROUGH;
    Cache c(cfg);
    npu_l2_warm(&c.l2, at(0, 0), kLine, 0, 0);
    npu_l2_result r;
    EXPECT_EQ(npu_l2_access(&c.l2, 0, at(0, 0), 4, 1, 0, 0, &r), 10u + 5u);  // lookup + accept
    EXPECT_EQ(r.outcome, NPU_L2_HIT);
}

TEST(L2, NoWriteAllocateDoesNotFillOnAStoreMiss)
{
    npu_l2_config cfg = small_config();
    cfg.write_allocate = 0;
    Cache c(cfg);
    npu_l2_result r;
    EXPECT_EQ(npu_l2_access(&c.l2, 0, at(0, 0), 4, 1, 0, 0, &r), 10u + 5u);
    EXPECT_EQ(r.outcome, NPU_L2_MISS);
    EXPECT_FALSE(npu_l2_contains(&c.l2, at(0, 0)));
    EXPECT_EQ(c.mem.count(false), 0u);
    ASSERT_EQ(c.mem.count(true), 1u);
    EXPECT_EQ(c.mem.log[0].bytes, 4u);
    EXPECT_EQ(c.stats().fills, 0u);
    c.t = 1000;
    c.access(at(0, 0));  // a load miss still fills
    EXPECT_TRUE(npu_l2_contains(&c.l2, at(0, 0)));
    EXPECT_EQ(c.access(at(0, 0), true).outcome, NPU_L2_HIT);  // a store hit dirties, sends nothing
    EXPECT_EQ(c.mem.count(true), 1u);
    EXPECT_EQ(c.stats().write_throughs, 1u);
}

TEST(L2, FullLineStoreAllocatesWithoutAFetch)
{
    Cache c(small_config());
    npu_l2_result r;
    EXPECT_EQ(npu_l2_access(&c.l2, 0, at(1, 0), kLine, 1, 0, 0, &r), 10u);
    EXPECT_EQ(r.outcome, NPU_L2_MISS);
    EXPECT_TRUE(npu_l2_contains(&c.l2, at(1, 0)));
    EXPECT_TRUE(c.mem.log.empty());
    EXPECT_EQ(c.stats().fills, 0u);

    npu_l2_config cfg = small_config();
    cfg.skip_fetch_on_full_write = 0;
    Cache fetching(cfg);
    fetching.access(at(1, 0), true, kLine);
    EXPECT_EQ(fetching.mem.count(false), 1u);
}

TEST(L2, HitTakesBankWaitPlusHitLatency)
{
    Cache c(small_config());
    npu_l2_warm(&c.l2, 0, 4 * kLine, 0, 0);
    npu_l2_result r;
    EXPECT_EQ(npu_l2_access(&c.l2, 500, 64, 4, 0, 0, 0, &r), 510u);
    EXPECT_EQ(r.outcome, NPU_L2_HIT);
    EXPECT_EQ(r.start, 500u);
    EXPECT_EQ(r.bank_wait, 0u);
}

TEST(L2, ReadMissCompletesWhenTheFillArrives)
{
    Cache c(small_config());
    npu_l2_result r;
    // lookup at 10, request at 10, line arrives 100 later
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 128, 4, 0, 0, 0, &r), 110u);
    ASSERT_EQ(c.mem.log.size(), 1u);
    EXPECT_EQ(c.mem.log[0].now, 10u);
    EXPECT_EQ(c.mem.log[0].addr, 128u);
    EXPECT_EQ(c.mem.log[0].bytes, kLine);
    EXPECT_EQ(r.miss_kind, NPU_L2_COMPULSORY);
}

TEST(L2, MissesToALineInFlightMergeIntoOneDramRead)
{
    npu_l2_config cfg = small_config();
    npu_l2 l2;
    ASSERT_EQ(npu_l2_init(&l2, &cfg), NPU_OK);
    npu_dram_config dc{100, 32, 1, 256};
    npu_dram dram;
    ASSERT_EQ(npu_dram_init(&dram, &dc), NPU_OK);
    npu_mem_port port = npu_dram_port(&dram);
    npu_l2_set_next_level(&l2, &port);

    npu_l2_result a, b, c;
    // fill = lookup 10 + 64 bytes / 32 per cycle + 100 latency
    EXPECT_EQ(npu_l2_access(&l2, 0, 0x1000, 4, 0, 0, 0, &a), 112u);
    EXPECT_EQ(npu_l2_access(&l2, 1, 0x1008, 4, 0, 1, 0, &b), 112u);
    EXPECT_EQ(npu_l2_access(&l2, 50, 0x1010, 4, 1, 0, 0, &c), 60u);  // a store is posted
    EXPECT_EQ(a.outcome, NPU_L2_MISS);
    EXPECT_EQ(b.outcome, NPU_L2_MERGED);
    EXPECT_EQ(c.outcome, NPU_L2_MERGED);
    EXPECT_EQ(npu_dram_get_stats(&dram)->reads, 1u);
    EXPECT_EQ(npu_dram_get_stats(&dram)->bytes_read, 64u);
    // After the fill it is an ordinary hit.
    EXPECT_EQ(npu_l2_access(&l2, 112, 0x1000, 4, 0, 0, 0, &b), 122u);
    EXPECT_EQ(b.outcome, NPU_L2_HIT);
    const npu_l2_stats &s = *npu_l2_get_stats(&l2);
    EXPECT_EQ(s.misses, 3u);
    EXPECT_EQ(s.mshr_merges, 2u);
    EXPECT_EQ(s.compulsory, 1u);
    EXPECT_EQ(s.hits, 1u);
    npu_l2_fini(&l2);
    npu_dram_fini(&dram);
}

TEST(L2, MissWaitsForAFreeMshrWhenAllAreBusy)
{
    npu_l2_config cfg = small_config();
    cfg.mshrs = 2;
    cfg.banks = 4;
    Cache c(cfg);
    npu_l2_result r;
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 0 * kLine, 4, 0, 0, 0, &r), 110u);
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 1 * kLine, 4, 0, 0, 0, &r), 110u);
    // Both MSHRs are busy until 110: the third miss goes to memory then.
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 2 * kLine, 4, 0, 0, 0, &r), 210u);
    EXPECT_EQ(r.mshr_wait, 100u);
    EXPECT_EQ(c.mem.log.back().now, 110u);
    // A hit does not need an MSHR.
    npu_l2_warm(&c.l2, 3 * kLine, kLine, 0, 0);
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 3 * kLine, 4, 0, 0, 0, &r), 10u);
    EXPECT_EQ(c.stats().mshr_full_cycles, 100u);
}

TEST(L2, BankConflictCostsExactlyTheBankInterval)
{
    npu_l2_config cfg = small_config();
    cfg.banks = 2;
    cfg.bank_interval = 3;
    Cache c(cfg);
    npu_l2_warm(&c.l2, 0, 4 * kLine, 0, 0);
    npu_l2_result r;
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 0 * kLine, 4, 0, 0, 0, &r), 10u);  // bank 0
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 2 * kLine, 4, 0, 0, 0, &r), 13u);  // bank 0 again
    EXPECT_EQ(r.bank_wait, 3u);
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 1 * kLine, 4, 0, 0, 0, &r), 10u);  // bank 1: free
    EXPECT_EQ(r.bank_wait, 0u);
    EXPECT_EQ(npu_l2_access(&c.l2, 0, 0 * kLine, 4, 0, 0, 0, &r), 16u);  // third in bank 0
    EXPECT_EQ(r.bank_wait, 6u);
    EXPECT_EQ(npu_l2_access(&c.l2, 100, 2 * kLine, 4, 0, 0, 0, &r), 110u);  // idle again
    EXPECT_EQ(c.stats().bank_conflict_cycles, 9u);
}

TEST(L2, EarlierArrivalTakesABankGapBeforeLaterBookings)
{
    // One bank, 3 cycles per access. Accesses booked ahead of time (another
    // core's, within the run loop's quantum) leave the bank idle before
    // them: an access arriving earlier takes that gap when it fits.
    npu_l2_config cfg = small_config();
    cfg.bank_interval = 3;
    Cache c(cfg);
    npu_l2_warm(&c.l2, 0, 4 * kLine, 0, 0);
    npu_l2_result r;
    EXPECT_EQ(npu_l2_access(&c.l2, 100, 0, 4, 0, 0, 0, &r), 110u);      // [100, 103)
    EXPECT_EQ(npu_l2_access(&c.l2, 50, kLine, 4, 0, 0, 0, &r), 60u);    // [50, 53): before it
    EXPECT_EQ(r.bank_wait, 0u);
    EXPECT_EQ(npu_l2_access(&c.l2, 98, 0, 4, 0, 0, 0, &r), 113u);       // [98, 101) overlaps: [103, 106)
    EXPECT_EQ(r.bank_wait, 5u);
    EXPECT_EQ(npu_l2_access(&c.l2, 53, 2 * kLine, 4, 0, 0, 0, &r), 63u);  // [53, 56): right after [50, 53)
    EXPECT_EQ(npu_l2_access(&c.l2, 51, 3 * kLine, 4, 0, 0, 0, &r), 66u);  // next gap: [56, 59)
    EXPECT_EQ(r.bank_wait, 5u);
    EXPECT_EQ(c.stats().bank_conflict_cycles, 10u);
}

TEST(L2, BankKeepsEveryBookingAheadOfTheHorizon)
{
    // One bank, one cycle per access: 40 bookings at 1000, 1002, ..., 1078.
    // One arriving at 500 starts at once, one at 1003 in the gap after 1002;
    // the bank keeps them all (it used to keep 16, and the 17th waited for
    // the end of the one it forgot). A horizon forgets what ends by it and
    // changes no later access: one at 1011 still finds [1011, 1012).
    Cache c(small_config());
    npu_l2_warm(&c.l2, 0, kLine, 0, 0);
    npu_l2_result r;
    for (unsigned i = 0; i < 40; i++) {
        npu_l2_access(&c.l2, 1000 + 2 * i, 0, 4, 0, 0, 0, &r);
        EXPECT_EQ(r.bank_wait, 0u);
    }
    npu_l2_access(&c.l2, 500, 0, 4, 0, 0, 0, &r);
    EXPECT_EQ(r.start, 500u);
    npu_l2_access(&c.l2, 1003, 0, 4, 0, 0, 0, &r);
    EXPECT_EQ(r.start, 1003u);
    npu_l2_set_horizon(&c.l2, 1011);
    npu_l2_access(&c.l2, 1011, 0, 4, 0, 0, 0, &r);
    EXPECT_EQ(r.start, 1011u);
    // Those at 500, 1000, 1002 (joined by 1003: no gap between), ..., 1010
    // forgotten; 1011 joins the booking at 1012.
    EXPECT_EQ(c.l2.banks[0].n, 42u - 7u - 1u);
}

TEST(L2, BankWithNoHorizonForgetsItsEarliestHalfPastItsLimit)
{
    // Given no horizon, a bank holds at most 4,096 bookings: the next one
    // forgets the earliest 2,048, and nothing starts before the last of
    // those ends (10,000 + 2 x 2,047 + 1 = 14,095): an access arriving at
    // 500 takes the one-cycle gap there, before the booking at 14,096.
    Cache c(small_config());
    npu_l2_warm(&c.l2, 0, kLine, 0, 0);
    npu_l2_result r;
    for (unsigned i = 0; i < 4096; i++)
        npu_l2_access(&c.l2, 10000 + 2 * i, 0, 4, 0, 0, 0, &r);
    npu_l2_access(&c.l2, 500, 0, 4, 0, 0, 0, &r);
    EXPECT_EQ(r.start, 14095u);
    EXPECT_EQ(c.l2.banks[0].n, 2048u);  // [14095, 14096) joins the booking at 14,096
}

// The MSHR rule (docs/timing.md M2): a fill holds an MSHR from its request
// to its arrival, and no cycle has more than l2.mshrs in flight, however
// out of time order the misses are booked (as transfers booked whole
// book them), with the DRAM's probe behind the L2 or without one (then a
// miss waits for the MSHRs to stay free from its request on). Reads and
// writes to 4,096 lines of a 16-line cache: nearly every access misses,
// about as often as the MSHRs can serve them.
TEST(L2, NoCycleHasMoreFillsInFlightThanMshrs)
{
    for (const unsigned mshrs : {1u, 3u, 8u})
        for (const bool probe : {true, false}) {
            npu_l2_config cfg = small_config();
            cfg.mshrs = mshrs;
            cfg.banks = 2;
            npu_l2 l2{};
            ASSERT_EQ(npu_l2_init(&l2, &cfg), NPU_OK);
            npu_dram dram;
            npu_dram_config dc{100, 8, 2, 64};
            ASSERT_EQ(npu_dram_init(&dram, &dc), NPU_OK);
            npu_mem_port port = npu_dram_port(&dram);
            if (!probe)
                port.probe_line = nullptr;
            npu_l2_set_next_level(&l2, &port);
            std::vector<std::pair<uint64_t, int>> edges;  // +1 at a request, -1 at an arrival
            uint64_t seed = 99, now = 0;
            auto next = [&seed] {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                return seed >> 33;
            };
            for (unsigned k = 0; k < 3000; k++) {
                now += next() % (240 / mshrs + 1);  // about as many misses as the MSHRs serve
                const uint64_t at = now > 200 && next() % 3 == 0 ? now - next() % 200 : now;
                if (now > 300) {
                    npu_l2_set_horizon(&l2, now - 300);
                    npu_dram_set_horizon(&dram, now - 300);
                }
                npu_l2_result r;
                npu_l2_access(&l2, at, (next() % 4096) * kLine, 4, next() % 4 == 0, 0, 0, &r);
                if (r.fetched) {
                    ASSERT_LT(r.fill_request, r.line_ready);
                    edges.push_back({r.fill_request, +1});
                    edges.push_back({r.line_ready, -1});
                }
            }
            std::sort(edges.begin(), edges.end());  // an arrival before a request at the same cycle
            int held = 0, most = 0;
            for (const auto &[cycle, d] : edges)
                most = std::max(most, held += d);
            EXPECT_EQ(most, int(mshrs)) << mshrs << (probe ? " with" : " without") << " a probe";
            npu_dram_fini(&dram);
            npu_l2_fini(&l2);
        }
}

TEST(L2, WarmedLinesHitAndAreNotCounted)
{
    Cache c(small_config());
    npu_l2_warm(&c.l2, 0x400, 8 * kLine, 3, 2);
    EXPECT_EQ(c.stats().accesses, 0u);
    EXPECT_TRUE(c.mem.log.empty());
    for (unsigned i = 0; i < 8; i++)
        EXPECT_EQ(c.access(0x400 + i * kLine).outcome, NPU_L2_HIT) << i;
    EXPECT_EQ(c.stats().hits, 8u);
    EXPECT_TRUE(c.mem.log.empty());
    // Warmed lines are clean (the run that left them wrote them back at its
    // end): evicting them writes nothing.
    for (unsigned tag = 8; tag < 12; tag++)
        c.access(at(0, tag));
    EXPECT_EQ(c.stats().evictions, 2u);  // set 0 held two warmed lines (0x400, 0x500)
    EXPECT_EQ(c.stats().writebacks, 0u);
    EXPECT_EQ(c.mem.count(true), 0u);
}

TEST(L2, SecondPassOverAFittingFootprintHits)
{
    Cache c(small_config());
    for (unsigned i = 0; i < 16; i++)
        c.access(i * kLine);
    EXPECT_EQ(c.stats().misses, 16u);
    npu_l2_clear_stats(&c.l2);
    for (unsigned i = 0; i < 16; i++)
        c.access(i * kLine);
    EXPECT_EQ(c.stats().hits, 16u);
    EXPECT_EQ(c.stats().misses, 0u);
}

TEST(L2, CraftedSequenceSplitsMissesIntoCompulsoryCapacityConflict)
{
    // Direct-mapped, 4 lines: lines 0 and 4 share set 0.
    npu_l2_config cfg = small_config();
    cfg.ways = 1;
    cfg.size_bytes = 4 * kLine;
    Cache c(cfg);
    auto kind = [&](unsigned line) { return c.access(line * kLine).miss_kind; };
    EXPECT_EQ(kind(0), NPU_L2_COMPULSORY);
    EXPECT_EQ(kind(4), NPU_L2_COMPULSORY);
    EXPECT_EQ(kind(0), NPU_L2_CONFLICT);  // a 4-line fully-associative cache still holds it
    EXPECT_EQ(kind(4), NPU_L2_CONFLICT);
    for (unsigned line : {1u, 2u, 3u, 5u})  // FA now holds 1 2 3 5: 0 and 4 are gone
        EXPECT_EQ(kind(line), NPU_L2_COMPULSORY);
    EXPECT_EQ(kind(0), NPU_L2_CAPACITY);
    EXPECT_EQ(kind(1), NPU_L2_CAPACITY);  // evicted by 5 from the real cache too, by 0 from FA
    EXPECT_EQ(kind(1), NPU_L2_NOT_A_MISS);
    const npu_l2_stats &s = c.stats();
    EXPECT_EQ(s.compulsory, 6u);
    EXPECT_EQ(s.conflict, 2u);
    EXPECT_EQ(s.capacity, 2u);
    EXPECT_EQ(s.misses, 10u);
}

namespace {

// The reference: a set-associative LRU cache, a fully-associative LRU cache of
// the same size, and the set of lines seen, written as plainly as possible.
struct Reference {
    unsigned sets, ways;
    std::vector<std::list<uint64_t>> set_lru;  // front = most recent
    std::list<uint64_t> fa;
    std::set<uint64_t> seen;
    uint64_t hits = 0, compulsory = 0, capacity = 0, conflict = 0;

    Reference(unsigned s, unsigned w) : sets(s), ways(w), set_lru(s) {}
    static bool touch(std::list<uint64_t> &lru, uint64_t line, size_t size)
    {
        auto it = std::find(lru.begin(), lru.end(), line);
        bool hit = it != lru.end();
        if (hit)
            lru.erase(it);
        else if (lru.size() == size)
            lru.pop_back();
        lru.push_front(line);
        return hit;
    }
    void access(uint64_t line)
    {
        bool first = seen.insert(line).second;
        bool fa_hit = touch(fa, line, size_t(sets) * ways);
        if (touch(set_lru[line % sets], line, ways))
            hits++;
        else if (first)
            compulsory++;
        else if (!fa_hit)
            capacity++;
        else
            conflict++;
    }
};

}  // namespace

TEST(L2, MissClassificationMatchesAReferenceModel)
{
    for (unsigned ways : {1u, 2u, 4u}) {
        npu_l2_config cfg = small_config();
        cfg.ways = ways;
        cfg.size_bytes = 4 * ways * kLine;
        Cache c(cfg);
        Reference ref(4, ways);
        std::mt19937 rng(7 + ways);
        for (int i = 0; i < 5000; i++) {
            // A skewed footprint: hot lines conflict, a tail overflows capacity.
            uint64_t line = (rng() % 4) ? rng() % (6 * ways) : rng() % 200;
            c.access(line * kLine);
            ref.access(line);
        }
        const npu_l2_stats &s = c.stats();
        EXPECT_EQ(s.hits, ref.hits) << ways;
        EXPECT_EQ(s.compulsory, ref.compulsory) << ways;
        EXPECT_EQ(s.capacity, ref.capacity) << ways;
        EXPECT_EQ(s.conflict, ref.conflict) << ways;
        EXPECT_GT(s.capacity, 0u);
        if (ways < 4) {
            EXPECT_GT(s.conflict, 0u);
        }
    }
}

TEST(L2, ClassificationSurvivesALargeFootprint)
{
    // 3000 distinct lines: the first-touch history grows past its initial size.
    Cache c(small_config());
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t line = 0; line < 3000; line++)
            c.access(line * kLine);
    EXPECT_EQ(c.stats().compulsory, 3000u);
    EXPECT_EQ(c.stats().capacity, 3000u);
    EXPECT_EQ(c.stats().unclassified, 0u);
}

TEST(L2, ClassificationCountsFirstTouchesOverManyFarApartPages)
{
    // 3000 lines 5,000 lines apart (the history keeps pages of 512 lines:
    // one page each, its table grown several times), then 3000 consecutive
    // lines, each line touched twice in a row and again in a second pass.
    Cache c(small_config());
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t k = 0; k < 3000; k++)
            for (int twice = 0; twice < 2; twice++)
                c.access((k * 5000 + 7) * kLine);
        for (uint64_t line = 1u << 25; line < (1u << 25) + 3000; line++)
            c.access(line * kLine);
    }
    EXPECT_EQ(c.stats().compulsory, 6000u);
    EXPECT_EQ(c.stats().unclassified, 0u);
}

TEST(L2, CountersAddUpAcrossCoresAndTensors)
{
    npu_l2_config cfg = small_config(NPU_L2_PLRU);
    cfg.mshrs = 3;
    cfg.banks = 2;
    cfg.bank_interval = 2;
    Cache c(cfg);
    std::mt19937 rng(3);
    uint64_t now = 0;
    for (int i = 0; i < 3000; i++) {
        now += rng() % 4;  // closely spaced: merges, MSHR and bank waits happen
        unsigned core = rng() % 5, tensor = rng() % 7;
        npu_l2_access(&c.l2, now, (rng() % 64) * kLine + (rng() % 16) * 4, 4, rng() % 3 == 0, core,
                      tensor, nullptr);
    }
    npu_l2_access(&c.l2, now, 0, 4, 0, 200, 99, nullptr);  // ids past the arrays: the last slot
    const npu_l2_stats &s = c.stats();
    EXPECT_EQ(s.accesses, 3001u);
    EXPECT_EQ(s.hits + s.misses, s.accesses);
    EXPECT_EQ(s.reads + s.writes, s.accesses);
    EXPECT_EQ(s.read_misses + s.write_misses, s.misses);
    EXPECT_EQ(s.compulsory + s.capacity + s.conflict + s.unclassified + s.mshr_merges, s.misses);
    EXPECT_GT(s.mshr_merges, 0u);
    EXPECT_GT(s.mshr_full_cycles, 0u);
    EXPECT_GT(s.bank_conflict_cycles, 0u);
    for (const auto *per : {&s.core[0], &s.tensor[0]}) {
        size_t n = per == s.core ? NPU_L2_MAX_CORES : NPU_L2_MAX_TENSORS;
        npu_l2_counts sum{};
        for (size_t k = 0; k < n; k++) {
            sum.accesses += per[k].accesses;
            sum.hits += per[k].hits;
            sum.misses += per[k].misses;
        }
        EXPECT_EQ(sum.accesses, s.accesses);
        EXPECT_EQ(sum.hits, s.hits);
        EXPECT_EQ(sum.misses, s.misses);
    }
    EXPECT_EQ(s.core[NPU_L2_MAX_CORES - 1].accesses, 1u);
    EXPECT_EQ(s.tensor[NPU_L2_MAX_TENSORS - 1].accesses, 1u);
}

TEST(L2, AccessCrossingItsLineIsFlaggedAndModelledOnItsFirstLine)
{
    Cache c(small_config());
    npu_l2_result r = c.access(60, false, 8);
    EXPECT_EQ(r.status, NPU_ERANGE);
    EXPECT_TRUE(npu_l2_contains(&c.l2, 0));
    EXPECT_FALSE(npu_l2_contains(&c.l2, 64));
    EXPECT_EQ(c.stats().crossing_accesses, 1u);
    EXPECT_EQ(c.access(56, false, 8).status, NPU_OK);
}

TEST(L2, FlushWritesBackDirtyLinesAndEmptiesTheCache)
{
    Cache c(small_config());
    c.access(0, true);
    c.access(64, false);
    c.access(128, true);
    c.mem.log.clear();
    EXPECT_EQ(npu_l2_flush(&c.l2, 1000), 1005u);
    EXPECT_EQ(c.mem.count(true), 2u);
    EXPECT_FALSE(npu_l2_contains(&c.l2, 0));
    EXPECT_FALSE(npu_l2_contains(&c.l2, 64));
    EXPECT_EQ(c.stats().writebacks, 2u);
    EXPECT_EQ(c.stats().flushes, 1u);
    // Seen before, so not compulsory; gone from the shadow too, so capacity.
    EXPECT_EQ(c.access(64).miss_kind, NPU_L2_CAPACITY);
}

TEST(L2, CleanWritesBackDirtyLinesOnceAndKeepsThemCached)
{
    Cache c(small_config());
    c.access(0, true);
    c.access(64, false);
    c.access(128, true);
    c.access(at(3, 2), true, kLine);  // a full line: allocated without a fetch
    c.mem.log.clear();
    EXPECT_EQ(npu_l2_clean(&c.l2, 1000), 1005u);  // every write accepted 5 cycles later
    ASSERT_EQ(c.mem.count(true), 3u);
    EXPECT_EQ(c.mem.count(false), 0u);
    for (const FakeMem::Req &r : c.mem.log) {
        EXPECT_EQ(r.now, 1000u);
        EXPECT_EQ(r.bytes, kLine);
    }
    EXPECT_EQ(c.stats().writebacks, 3u);
    EXPECT_EQ(c.stats().clean_writebacks, 3u);
    EXPECT_EQ(c.stats().clean_cycles, 5u);
    EXPECT_EQ(c.stats().flushes, 0u);
    // Still present, now clean: a second clean writes nothing, a hit stays a
    // hit, and evicting them later writes nothing either.
    EXPECT_EQ(npu_l2_clean(&c.l2, 2000), 2000u);
    EXPECT_EQ(c.mem.count(true), 3u);
    EXPECT_EQ(c.access(0).outcome, NPU_L2_HIT);
    for (unsigned tag = 4; tag < 8; tag++)
        c.access(at(0, tag));
    EXPECT_EQ(c.stats().writebacks, 3u);
    EXPECT_EQ(c.stats().clean_writebacks, 3u);
}

TEST(L2, ConfigCheckNamesTheBadField)
{
    char msg[160];
    npu_l2_config c = small_config();
    EXPECT_EQ(npu_l2_config_check(&c, msg, sizeof msg), NPU_OK);
    c.line_bytes = 48;
    EXPECT_EQ(npu_l2_config_check(&c, msg, sizeof msg), NPU_EINVAL);
    EXPECT_STREQ(msg, "L2 line_bytes 48 must be a power of two in 4 .. 4096");
    c = small_config();
    c.ways = 3;
    EXPECT_EQ(npu_l2_config_check(&c, msg, sizeof msg), NPU_EINVAL);
    EXPECT_STREQ(msg, "L2 ways 3 must be a power of two in 1 .. 64");
    c = small_config();
    c.size_bytes = 128;
    EXPECT_EQ(npu_l2_config_check(&c, msg, sizeof msg), NPU_EINVAL);
    EXPECT_EQ(std::string(msg).rfind("L2 size_bytes 128 must be a power of two, at least ways x line_bytes (256)", 0), 0u)
        << msg;
    c = small_config();
    c.mshrs = 0;
    EXPECT_EQ(npu_l2_config_check(&c, msg, sizeof msg), NPU_EINVAL);
    EXPECT_STREQ(msg, "L2 mshrs 0 outside 1 .. 1024");
    c = small_config();
    c.bank_interval = 0;
    EXPECT_EQ(npu_l2_config_check(&c, msg, sizeof msg), NPU_EINVAL);
    EXPECT_STREQ(msg, "L2 needs 1 .. 256 banks and bank_interval >= 1 cycle");
    npu_l2 l2;
    EXPECT_EQ(npu_l2_init(&l2, &c), NPU_EINVAL);
    npu_l2_fini(&l2);  // safe after a failed init
}

TEST(L2, DefaultConfigIsValid)
{
    npu_l2_config c;
    npu_l2_config_default(&c);
    char msg[160];
    EXPECT_EQ(npu_l2_config_check(&c, msg, sizeof msg), NPU_OK);
    npu_l2 l2;
    ASSERT_EQ(npu_l2_init(&l2, &c), NPU_OK);
    EXPECT_EQ(l2.sets, 1024u);  // 2 MiB / (16 x 128)
    EXPECT_EQ(npu_l2_access(&l2, 0, 0, 4, 0, 0, 0, nullptr), 20u);  // ideal next level
    npu_l2_fini(&l2);
}

TEST(L2, AnXorIndexSpreadsAPowerOfTwoStrideOverTheSets)
{
    // Lines 0, 4, 8, 12, 16 (a stride of the 4 sets): modulo puts all five in
    // set 0, whose 4 ways LRU cycles through, so every access misses; XOR
    // folding (set = l & 3 ^ l >> 2 & 3 ^ l >> 4 & 3) gives sets 0, 1, 2, 3, 1:
    // the second round hits every line.
    for (int xor_index : {0, 1}) {
        npu_l2_config cfg = small_config();
        cfg.index_xor = xor_index;
        Cache c(cfg);
        for (int round = 0; round < 2; round++)
            for (unsigned line : {0u, 4u, 8u, 12u, 16u})
                c.access(uint64_t(line) * kLine);
        EXPECT_EQ(c.stats().hits, xor_index ? 5u : 0u) << "index_xor " << xor_index;
        EXPECT_EQ(c.stats().conflict, xor_index ? 0u : 5u) << "index_xor " << xor_index;
    }
}
