// The DRAM model's exact numbers: bandwidth-limited occupancy plus latency,
// queueing on a busy channel, gaps between bookings, address interleaving across channels, and the
// port the L2 sits on.
#include <gtest/gtest.h>

#include "npusim/npusim.h"

namespace {

// Gives a DRAM's calendars back at the end of a test.
struct DramGuard {
    npu_dram *d;
    ~DramGuard() { npu_dram_fini(d); }
};

npu_dram make(unsigned latency, unsigned bpc, unsigned channels, unsigned interleave)
{
    npu_dram d;
    npu_dram_config c{latency, bpc, channels, interleave};
    EXPECT_EQ(npu_dram_init(&d, &c), NPU_OK);
    return d;
}

}  // namespace

TEST(Dram, TransferTakesBytesOverBandwidthPlusLatency)
{
    npu_dram d = make(100, 32, 1, 256);
    const DramGuard guard{&d};
    EXPECT_EQ(npu_dram_read(&d, 0, 0, 1024), 1024u / 32 + 100);
    EXPECT_EQ(npu_dram_get_stats(&d)->busy_cycles[0], 32u);
    EXPECT_EQ(npu_dram_read(&d, 500, 0, 33), 500u + 2 + 100);  // a partial beat costs a cycle
    EXPECT_EQ(npu_dram_read(&d, 600, 0, 0), 700u);             // latency alone
}

TEST(Dram, RequestsQueueOnABusyChannel)
{
    npu_dram d = make(100, 32, 1, 256);
    const DramGuard guard{&d};
    EXPECT_EQ(npu_dram_read(&d, 0, 0, 1024), 132u);
    EXPECT_EQ(npu_dram_write(&d, 10, 4096, 1024), 32u + 32 + 100);  // waits for the channel until 32
    const npu_dram_stats &s = *npu_dram_get_stats(&d);
    EXPECT_EQ(s.queue_cycles, 22u);
    EXPECT_EQ(s.busy_cycles[0], 64u);
    EXPECT_EQ(s.reads, 1u);
    EXPECT_EQ(s.writes, 1u);
    EXPECT_EQ(s.bytes_read, 1024u);
    EXPECT_EQ(s.bytes_written, 1024u);
    EXPECT_EQ(npu_dram_busy_cycles(&d), 64u);
}

TEST(Dram, EarlierRequestUsesAGapBeforeRequestsBookedAhead)
{
    // One channel, 4 cycles per 128 bytes. A request booked first for cycle
    // 1000 leaves the channel idle before it: a request booked after it but
    // arriving at 0 goes at once; one arriving at 998 (it would overlap)
    // queues behind it; one at 990 fits the gap [990, 994).
    npu_dram d = make(100, 32, 1, 256);
    const DramGuard guard{&d};
    EXPECT_EQ(npu_dram_read(&d, 1000, 0, 128), 1104u);
    EXPECT_EQ(npu_dram_read(&d, 0, 4096, 128), 104u);
    EXPECT_EQ(npu_dram_read(&d, 998, 8192, 128), 1108u);
    EXPECT_EQ(npu_dram_read(&d, 990, 0, 128), 1094u);
    EXPECT_EQ(npu_dram_get_stats(&d)->queue_cycles, 6u);
    EXPECT_EQ(npu_dram_get_stats(&d)->busy_cycles[0], 16u);
}

TEST(Dram, ChannelsInterleaveByGranule)
{
    npu_dram d = make(100, 32, 4, 256);
    const DramGuard guard{&d};
    EXPECT_EQ(npu_dram_channel(&d, 0), 0u);
    EXPECT_EQ(npu_dram_channel(&d, 255), 0u);
    EXPECT_EQ(npu_dram_channel(&d, 256), 1u);
    EXPECT_EQ(npu_dram_channel(&d, 3 * 256 + 7), 3u);
    EXPECT_EQ(npu_dram_channel(&d, 4 * 256), 0u);
    // 1 KiB over four channels moves in a quarter of the time.
    EXPECT_EQ(npu_dram_read(&d, 0, 0, 1024), 256u / 32 + 100);
    for (unsigned ch = 0; ch < 4; ch++)
        EXPECT_EQ(npu_dram_get_stats(&d)->busy_cycles[ch], 8u) << ch;
    // Two requests on different channels overlap; on the same channel they queue.
    npu_dram_reset(&d);
    EXPECT_EQ(npu_dram_read(&d, 0, 0, 256), 108u);
    EXPECT_EQ(npu_dram_read(&d, 0, 256, 256), 108u);
    EXPECT_EQ(npu_dram_read(&d, 0, 1024, 256), 116u);
}

TEST(Dram, UnalignedRequestSplitsAtGranuleBoundaries)
{
    npu_dram d = make(10, 16, 2, 64);
    const DramGuard guard{&d};
    // [48, 112): 16 bytes on channel 0, 48 bytes on channel 1 -> 1 and 3 cycles
    EXPECT_EQ(npu_dram_read(&d, 0, 48, 64), 3u + 10);
    EXPECT_EQ(npu_dram_get_stats(&d)->busy_cycles[0], 1u);
    EXPECT_EQ(npu_dram_get_stats(&d)->busy_cycles[1], 3u);
}

TEST(Dram, PortServesTheL2)
{
    npu_dram d = make(100, 32, 2, 256);
    const DramGuard guard{&d};
    npu_mem_port p = npu_dram_port(&d);
    EXPECT_EQ(p.read_line(p.ctx, 10, 128, 128), 10u + 4 + 100);
    EXPECT_EQ(p.write_line(p.ctx, 10, 256, 128), 10u + 4 + 100);  // the other channel
    EXPECT_EQ(npu_dram_get_stats(&d)->bytes_read, 128u);
    EXPECT_EQ(npu_dram_get_stats(&d)->bytes_written, 128u);
}

TEST(Dram, CheckpointKeepsTheCountsAndTheChannelCyclesBookedAfterIt)
{
    // 1 KiB over two channels: 512 bytes, 16 cycles, on each, both busy [0, 16).
    npu_dram d = make(100, 32, 2, 256);
    const DramGuard guard{&d};
    EXPECT_EQ(npu_dram_get_stats(&d)->busy_end, 0u);
    EXPECT_EQ(npu_dram_read(&d, 0, 0, 1024), 116u);
    EXPECT_EQ(npu_dram_get_stats(&d)->busy_end, 16u);
    npu_dram_checkpoint at10, at20;
    npu_dram_checkpoint_take(&d, 10, &at10);
    npu_dram_checkpoint_take(&d, 20, &at20);
    EXPECT_EQ(at10.cycle, 10u);
    EXPECT_EQ(at10.booked_after, 6u + 6u);
    EXPECT_EQ(at20.booked_after, 0u);
    EXPECT_EQ(at10.stats.bytes_read, 1024u);
    EXPECT_EQ(at10.stats.busy_end, 16u);
    // Later traffic leaves the checkpoint as it was.
    npu_dram_write(&d, 30, 0, 256);
    EXPECT_EQ(at10.stats.bytes_written, 0u);
    EXPECT_EQ(npu_dram_get_stats(&d)->busy_end, 38u);
}

TEST(Dram, ConfigCheckNamesTheBadField)
{
    char msg[128];
    npu_dram_config c;
    npu_dram_config_default(&c);
    EXPECT_EQ(npu_dram_config_check(&c, msg, sizeof msg), NPU_OK);
    c.interleave_bytes = 96;
    EXPECT_EQ(npu_dram_config_check(&c, msg, sizeof msg), NPU_EINVAL);
    EXPECT_STREQ(msg, "DRAM interleave_bytes 96 must be a power of two");
    npu_dram_config_default(&c);
    c.channels = 0;
    EXPECT_EQ(npu_dram_config_check(&c, msg, sizeof msg), NPU_EINVAL);
    EXPECT_STREQ(msg, "DRAM channels 0 outside 1 .. 64");
    npu_dram_config_default(&c);
    c.bytes_per_cycle = 0;
    EXPECT_EQ(npu_dram_config_check(&c, msg, sizeof msg), NPU_EINVAL);
    EXPECT_STREQ(msg, "DRAM bytes_per_cycle must be at least 1");
    npu_dram d;
    EXPECT_EQ(npu_dram_init(&d, &c), NPU_EINVAL);
}

// The probe is the read without its booking (the L2's MSHR rule counts on
// it, docs/timing.md M2): before every read of a random mix, out of time
// order and with or without a horizon, the probe gives what the read then
// returns and books nothing. Lines up to 4,096 bytes over 32-byte pieces
// (128 pieces, several per channel) and calendars past their 4,096 bookings.
TEST(Dram, ProbeGivesWhatTheReadThenReturns)
{
    struct Case {
        unsigned bpc, channels, interleave, line;
        bool horizon;
        unsigned step;  // the most cycles between reads: about what the channels serve
        unsigned reads;
    };
    for (const Case c : {Case{32, 4, 256, 128, true, 8, 12000}, Case{8, 2, 32, 4096, true, 1200, 1000},
                         Case{16, 3, 64, 256, false, 16, 12000}, Case{4, 1, 32, 128, false, 80, 12000},
                         Case{4, 1, 32, 128, false, 4, 6000}}) {  // a queue past 4,096 bookings
        npu_dram d = make(100, c.bpc, c.channels, c.interleave);
        const DramGuard guard{&d};
        uint64_t seed = 12345, now = 0;
        auto next = [&seed] {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            return seed >> 33;
        };
        for (unsigned k = 0; k < c.reads; k++) {
            // Mostly forward in time, sometimes back (a later transfer's line
            // booked after an earlier one's), as the L2 books them.
            now += next() % c.step;
            const uint64_t at = now > 300 && next() % 4 == 0 ? now - next() % 300 : now;
            if (c.horizon && now > 400)
                npu_dram_set_horizon(&d, now - 400);
            const uint64_t addr = (next() % 4096) * c.line;
            const uint64_t probe = npu_dram_probe_read(&d, at, addr, c.line);
            const uint64_t busy = npu_dram_get_stats(&d)->busy_end;
            EXPECT_EQ(npu_dram_probe_read(&d, at, addr, c.line), probe);  // nothing booked
            EXPECT_EQ(npu_dram_get_stats(&d)->busy_end, busy);
            ASSERT_EQ(npu_dram_read(&d, at, addr, c.line), probe) << k << " line " << c.line;
            if (next() % 3 == 0)
                npu_dram_write(&d, at, addr + c.line, c.line);
        }
    }
    {
        // A calendar given no horizon, full (4,096 one-cycle bookings at 10,000,
        // 10,002, ...): the read forgets the earliest 2,048 first, and so
        // starts no earlier than 14,095 (not in the free cycle at 500); the
        // probe says so.
        npu_dram full = make(100, 32, 1, 256);
        const DramGuard g{&full};
        for (unsigned i = 0; i < 4096; i++)
            npu_dram_read(&full, 10000 + 2 * i, 0, 32);
        EXPECT_EQ(npu_dram_probe_read(&full, 500, 0, 32), 14095u + 1 + 100);
        EXPECT_EQ(npu_dram_read(&full, 500, 0, 32), 14095u + 1 + 100);
    }
    // Past NPU_DRAM_PROBE_PIECES - 1 interleave units the probe cannot tell.
    npu_dram d = make(100, 32, 2, 32);
    const DramGuard guard{&d};
    EXPECT_EQ(npu_dram_probe_read(&d, 0, 0, uint64_t(NPU_DRAM_PROBE_PIECES) * 32), UINT64_MAX);
    EXPECT_EQ(npu_dram_probe_read(&d, 0, 0, 4096), 64u + 100);  // 128 pieces of a cycle, 64 per channel
}
