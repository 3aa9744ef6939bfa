// Honest bounds and bandwidths through the npusim CLI: the memory bound is
// the tightest bandwidth on the path (per-core DMA engine, L2 banks, DRAM
// channels), checked against figures worked out by hand, efficiency never
// exceeds 1, and the achieved DRAM bandwidth never exceeds the peak.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

#include "cli_helpers.h"

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

using nlohmann::json;
using namespace cli_test;

namespace {

double num(const json &j, const char *a, const char *b) { return j.at(a).at(b).get<double>(); }

// The resolved config's values are strings (`config` in the report).
double config_number(const json &j, const char *key) { return std::stod(j.at("config").at(key).get<std::string>()); }

// Efficiency = bound / cycles: the bound is a lower bound on cycles.
void expect_at_most_cycles(const json &j, const std::string &what)
{
    const json &b = j.at("bound");
    EXPECT_LE(b.at("bound_cycles").get<double>(), j.at("cycles").get<double>()) << what;
    EXPECT_LE(b.at("efficiency").get<double>(), 1.0) << what;
    EXPECT_GT(b.at("efficiency").get<double>(), 0.0) << what;
}

// relu fp16 1x16x32x32: x and y are 16 x 32 x 32 x 2 = 32768 bytes each, 256
// lines of 128 bytes; both fit the default 2 MiB L2.
const std::string kSmallRelu = "relu --dtype fp16 --shape 1,16,32,32 --set memory.model=l2";

}  // namespace

TEST(Bound, DmaEngineBindsReluAtVlen2048)
{
    // 64 x 56 x 56 fp16 = 401408 bytes in and as many out through the one
    // core's DMA engine at 32 bytes/cycle: 802816 / 32 = 25088 cycles. The
    // DRAM only reads x inside the kernel (y stays in the L2 until the
    // end-of-run write-back): 401408 / (4 x 32) = 3136; the L2 banks see
    // 6272 line accesses, 1 cycle each over 8 banks: 784.
    // dma.outstanding 32 keeps the window's term (below) at 14112.
    const std::string args = "relu --dtype fp16 --shape 1,64,56,56 --set core.vlen=2048 --set dma.outstanding=32";
    json j = run_json(args + " --set memory.model=l2");
    const json &b = j.at("bound");
    EXPECT_DOUBLE_EQ(b.at("bound_cycles").get<double>(), 25088.0);
    EXPECT_EQ(b.at("binding"), "memory");
    EXPECT_EQ(b.at("memory_resource"), "dma engine");
    EXPECT_EQ(b.at("binding_resource"), "dma engine");
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "dma_engine", "cycles"), 25088.0);
    EXPECT_EQ(b.at("memory").at("dma_engine").at("bytes").get<uint64_t>(), 802816u);
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "l2_banks", "cycles"), 784.0);
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "dma_window", "cycles"), 14112.0);
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "dram_channels", "cycles"), 3136.0);
    EXPECT_EQ(b.at("memory").at("dram_channels").at("end_of_run_bytes_not_counted").get<uint64_t>(), 401408u);
    EXPECT_FALSE(b.at("memory").at("dram_channels").at("end_of_run_counted").get<bool>());
    EXPECT_GE(b.at("efficiency").get<double>(), 0.8);
    expect_at_most_cycles(j, args);

    // The ideal memory has the same DMA engine, hence the same bound.
    json ideal = run_json(args + " --set memory.model=ideal");
    EXPECT_DOUBLE_EQ(ideal.at("bound").at("bound_cycles").get<double>(), 25088.0);
    EXPECT_EQ(ideal.at("bound").at("memory_resource"), "dma engine");
    EXPECT_FALSE(ideal.at("bound").at("memory").contains("dram_channels"));

    Result text = run_cli("run " + args + " --set memory.model=l2");
    EXPECT_NE(text.out.find("  Memory:                           25088 cycles (802816 bytes through the core's DMA "
                            "engine at 32 bytes/cycle)\n"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("    DMA window:                     14112 cycles (6272 line requests x 20 cycles + 3136 "
                            "read fills x 104 more, at most 32 in flight)\n"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("    DRAM channels:                   3136 cycles (401408 DRAM bytes through 4 "
                            "channels at 32 bytes/cycle"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("25088 cycles, memory-bound (dma engine)\n"), std::string::npos) << text.out;
}

TEST(Bound, DmaWindowBindsReluOnTheDefaultWindow)
{
    // The same run with 16 line requests in flight (the default). x and y
    // are 401408 bytes each, 3136 lines of 128 bytes: 6272 requests, each in
    // flight at least the 20-cycle hit latency, and the 3136 reads of x miss
    // and fill, each at least 104 cycles more (dram.latency 100 + 128 bytes
    // at 32 a cycle); request j leaves after request j - 16 completed:
    // (6272 x 20 + 3136 x 104) / 16 = 28224 cycles, above the engine's 25088.
    const std::string args = "relu --dtype fp16 --shape 1,64,56,56 --set core.vlen=2048";
    json j = run_json(args);
    const json &b = j.at("bound");
    EXPECT_DOUBLE_EQ(b.at("bound_cycles").get<double>(), 28224.0);
    EXPECT_EQ(b.at("binding"), "memory");
    EXPECT_EQ(b.at("binding_resource"), "dma window");
    const json &w = b.at("memory").at("dma_window");
    EXPECT_EQ(w.at("line_requests").get<uint64_t>(), 6272u);
    EXPECT_EQ(w.at("read_fills").get<uint64_t>(), 3136u);
    EXPECT_DOUBLE_EQ(w.at("fill_min_cycles").get<double>(), 104.0);
    EXPECT_EQ(w.at("outstanding").get<unsigned>(), 16u);
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "dma_engine", "cycles"), 25088.0);
    expect_at_most_cycles(j, args);

    // x warm in the L2: no read fills, 6272 x 20 / 16 = 7840, and the
    // engine binds again.
    json warm = run_json(args + " --warm-l2 x");
    EXPECT_EQ(warm.at("bound").at("memory").at("dma_window").at("read_fills").get<uint64_t>(), 0u);
    EXPECT_DOUBLE_EQ(num(warm.at("bound").at("memory"), "dma_window", "cycles"), 7840.0);
    EXPECT_EQ(warm.at("bound").at("binding_resource"), "dma engine");

    // One request at a time: every request waits for the one before, so the
    // run takes at least the sum of the holds, 6272 x 20 + 3136 x 104 =
    // 451584 cycles, and cannot beat it.
    json one = run_json(args + " --set dma.outstanding=1");
    EXPECT_DOUBLE_EQ(one.at("bound").at("bound_cycles").get<double>(), 451584.0);
    EXPECT_EQ(one.at("bound").at("binding_resource"), "dma window");
    expect_at_most_cycles(one, "one request in flight");

    // Two cores: each core's engine has its own window; the busier binds.
    json two = run_json(args + " --set system.cores=2");
    const json &w2 = two.at("bound").at("memory").at("dma_window");
    EXPECT_EQ(w2.at("line_requests").get<uint64_t>(), 3136u);
    EXPECT_EQ(w2.at("read_fills").get<uint64_t>(), 1568u);
    EXPECT_DOUBLE_EQ(w2.at("cycles").get<double>(), 14112.0);
    expect_at_most_cycles(two, "two cores");

    Result text = run_cli("run " + args);
    EXPECT_NE(text.out.find("  Memory:                           28224 cycles (6272 line requests x 20 cycles + 3136 "
                            "read fills x 104 more, at most 16 in flight)\n"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("28224 cycles, memory-bound (dma window)\n"), std::string::npos) << text.out;
}

TEST(Bound, DramChannelsBindOnAOneChannelFourByteDram)
{
    // One channel at 4 bytes/cycle: the kernel reads x, 32768 bytes, in
    // 32768 / 4 = 8192 cycles; y's 32768 bytes are written back after the
    // kernel and not counted. The DMA engine needs 65536 / 32 = 2048.
    json j = run_json(kSmallRelu + " --set dram.channels=1 --set dram.bytes_per_cycle=4");
    const json &b = j.at("bound");
    EXPECT_DOUBLE_EQ(b.at("bound_cycles").get<double>(), 8192.0);
    EXPECT_EQ(b.at("binding"), "memory");
    EXPECT_EQ(b.at("memory_resource"), "dram channels");
    EXPECT_EQ(b.at("binding_resource"), "dram channels");
    const json &d = b.at("memory").at("dram_channels");
    EXPECT_EQ(d.at("bytes").get<uint64_t>(), 32768u);
    EXPECT_EQ(d.at("end_of_run_bytes_not_counted").get<uint64_t>(), 32768u);
    EXPECT_EQ(d.at("queued_after_end_bytes_not_counted").get<uint64_t>(), 0u);
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "dma_engine", "cycles"), 2048.0);
    expect_at_most_cycles(j, "one 4-byte channel");
}

TEST(Bound, L2BanksBindWithOneBankBusyEightCyclesAnAccess)
{
    // 256 line reads of x and 256 line writes of y, 8 cycles each on one
    // bank: 512 x 8 = 4096 cycles, above the DMA engine's 2048.
    json j = run_json(kSmallRelu + " --set l2.banks=1 --set l2.bank_interval=8");
    const json &b = j.at("bound");
    EXPECT_DOUBLE_EQ(b.at("bound_cycles").get<double>(), 4096.0);
    EXPECT_EQ(b.at("memory_resource"), "l2 banks");
    EXPECT_EQ(b.at("binding_resource"), "l2 banks");
    EXPECT_EQ(b.at("memory").at("l2_banks").at("accesses").get<uint64_t>(), 512u);
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "l2_banks", "tail_cycles"), 0.0);
    expect_at_most_cycles(j, "one bank, interval 8");
}

TEST(Bound, L2BankBusyPastTheLastAnswerIsNotCounted)
{
    // A bank busy 32 cycles an access that answers after 1: the last
    // booking may end 31 cycles after the kernel, so the bound is
    // 512 x 32 - 31 = 16353, and it stays within the cycles.
    json j = run_json(kSmallRelu + " --set l2.banks=1 --set l2.bank_interval=32 --set l2.hit_latency=1");
    const json &b = j.at("bound");
    EXPECT_DOUBLE_EQ(b.at("bound_cycles").get<double>(), 512.0 * 32 - 31);
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "l2_banks", "tail_cycles"), 31.0);
    EXPECT_EQ(b.at("binding_resource"), "l2 banks");
    expect_at_most_cycles(j, "one bank, interval 32, hit latency 1");
}

TEST(Bound, L2MshrsBindWhenEightCoresMissAtOnce)
{
    // Every read of x misses: 401408 / 128 = 3136 fills, each holding an
    // MSHR from its request until the line arrives, at least dram.latency
    // (100) + 128 bytes / 32 per cycle on one channel (4) = 104 cycles;
    // 32 MSHRs: 3136 x 104 / 32 = 10192 cycles, above 8 cores' LSU (3164)
    // and DMA engines (100352 / 32 = 3136 each).
    json j = run_json("relu --dtype fp16 --shape 1,64,56,56 --set system.cores=8");
    const json &b = j.at("bound");
    EXPECT_DOUBLE_EQ(b.at("bound_cycles").get<double>(), 10192.0);
    EXPECT_EQ(b.at("binding_resource"), "l2 mshrs");
    EXPECT_EQ(b.at("memory").at("l2_mshrs").at("read_fills").get<uint64_t>(), 3136u);
    EXPECT_DOUBLE_EQ(num(b.at("memory"), "l2_mshrs", "fill_min_cycles"), 104.0);
    expect_at_most_cycles(j, "eight cores");

    // One MSHR: 256 fills x 104 = 26624 cycles, and the run cannot beat it.
    json one = run_json(kSmallRelu + " --set l2.mshrs=1");
    EXPECT_DOUBLE_EQ(one.at("bound").at("bound_cycles").get<double>(), 256.0 * 104);
    EXPECT_EQ(one.at("bound").at("binding_resource"), "l2 mshrs");
    expect_at_most_cycles(one, "one MSHR");
}

TEST(Bound, BusiestCoresDmaEngineBindsTwoCores)
{
    // Two cores split the 401408-byte tensors in halves: each core's engine
    // moves 200704 bytes in and 200704 out, 401408 / 32 = 12544 cycles
    // (the old sum over cores / cores gave the same only by luck of balance).
    // With 32 requests in flight each window's term is 7056.
    json j = run_json("relu --dtype fp16 --shape 1,64,56,56 --set core.vlen=2048 --set memory.model=l2 "
                      "--set system.cores=2 --set dma.outstanding=32");
    const json &b = j.at("bound");
    EXPECT_DOUBLE_EQ(b.at("bound_cycles").get<double>(), 12544.0);
    EXPECT_EQ(b.at("memory_resource"), "dma engine");
    EXPECT_EQ(b.at("memory").at("dma_engine").at("bytes").get<uint64_t>(), 401408u);
    expect_at_most_cycles(j, "two cores");
}

TEST(Bound, PostedWritesStillQueuedAtTheEndAreNotCounted)
{
    // A 16 KiB L2 in front of one 4-byte channel: y's dirty lines are
    // evicted during the run and their posted write-backs queue on the
    // channel past the kernel's end. What the channel could not have moved
    // by then is left out, so the bound stays within the cycles.
    json j = run_json("relu --dtype fp16 --shape 1,16,64,64 --set memory.model=l2 --set dram.channels=1 "
                      "--set dram.bytes_per_cycle=4 --set l2.size_bytes=16384");
    const json &b = j.at("bound");
    const json &d = b.at("memory").at("dram_channels");
    const json &k = j.at("dram").at("kernel");
    EXPECT_EQ(b.at("binding_resource"), "dram channels");
    EXPECT_GT(k.at("booked_after_end_cycles").get<uint64_t>(), 0u);
    EXPECT_EQ(d.at("queued_after_end_bytes_not_counted").get<uint64_t>(),
              k.at("booked_after_end_cycles").get<uint64_t>() * 4);
    EXPECT_EQ(d.at("bytes").get<uint64_t>() + d.at("queued_after_end_bytes_not_counted").get<uint64_t>(),
              k.at("bytes_read").get<uint64_t>() + k.at("bytes_written").get<uint64_t>());
    EXPECT_DOUBLE_EQ(d.at("cycles").get<double>(), d.at("bytes").get<double>() / 4.0);
    expect_at_most_cycles(j, "write-backs queued past the end");
}

TEST(DramBandwidth, NeverAbovePeakAndSplitAtTheKernelsEnd)
{
    const std::vector<std::string> runs = {
        "relu --dtype fp16 --shape 1,64,56,56 --set core.vlen=2048",
        "gelu_tanh --dtype fp16 --shape 1,16,32,32",
        "relu --dtype fp16 --shape 1,1,128,128 --inplace --set l2.size_bytes=65536",
        "relu --dtype fp16 --shape 1,1,128,128 --set l2.size_bytes=65536",
        "relu --dtype fp16 --shape 1,16,64,64 --set dram.channels=1 --set dram.bytes_per_cycle=4 "
        "--set l2.size_bytes=16384",
        "relu --dtype fp16 --shape 1,64,56,56 --set core.vlen=2048 --set system.cores=2",
    };
    for (const std::string &args : runs) {
        json j = run_json(args + " --set memory.model=l2");
        const json &d = j.at("dram");
        const double peak = d.at("peak_bytes_per_cycle").get<double>();
        EXPECT_DOUBLE_EQ(peak, config_number(j, "dram.channels") * config_number(j, "dram.bytes_per_cycle")) << args;
        const json &k = d.at("kernel"), &e = d.at("end_of_run");
        EXPECT_LE(d.at("achieved_bytes_per_cycle").get<double>(), peak) << args;
        EXPECT_DOUBLE_EQ(d.at("achieved_bytes_per_cycle").get<double>(), k.at("achieved_bytes_per_cycle").get<double>())
            << args;
        EXPECT_LE(e.at("achieved_bytes_per_cycle").get<double>(), peak) << args;
        // The kernel's traffic over its span (at least its cycles).
        const uint64_t kbytes = k.at("bytes_read").get<uint64_t>() + k.at("bytes_written").get<uint64_t>();
        const uint64_t span = k.at("span_cycles").get<uint64_t>();
        EXPECT_GE(span, j.at("cycles").get<uint64_t>()) << args;
        EXPECT_DOUBLE_EQ(k.at("achieved_bytes_per_cycle").get<double>(), double(kbytes) / double(span)) << args;
        // Kernel + end of run = every DRAM byte; the write-back only writes.
        EXPECT_EQ(kbytes + e.at("bytes_written").get<uint64_t>(),
                  d.at("bytes_read").get<uint64_t>() + d.at("bytes_written").get<uint64_t>())
            << args;
        EXPECT_EQ(k.at("bytes_read"), d.at("bytes_read")) << args;
        EXPECT_EQ(e.at("bytes_written").get<uint64_t>(),
                  j.at("l2").at("end_of_run_writebacks").get<uint64_t>() * 128)
            << args;
        expect_at_most_cycles(j, args);
    }
}

TEST(DramBandwidth, KernelTrafficQueuedPastTheEndSpreadsOverItsSpan)
{
    // Write-backs still on the channel when the last core finishes: over
    // `cycles` alone the kernel's bytes would beat the 4 bytes/cycle peak.
    json j = run_json("relu --dtype fp16 --shape 1,16,64,64 --set memory.model=l2 --set dram.channels=1 "
                      "--set dram.bytes_per_cycle=4 --set l2.size_bytes=16384");
    const json &k = j.at("dram").at("kernel");
    EXPECT_GT(k.at("span_cycles").get<uint64_t>(), j.at("cycles").get<uint64_t>());
    EXPECT_LE(k.at("achieved_bytes_per_cycle").get<double>(), 4.0);

    Result text = run_cli("run relu --dtype fp16 --shape 1,16,64,64 --set memory.model=l2 --set dram.channels=1 "
                          "--set dram.bytes_per_cycle=4 --set l2.size_bytes=16384");
    EXPECT_NE(text.out.find("  DRAM bandwidth, kernel:    "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("bytes/cycle of 4 peak (1 channel x 4): "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("cycles past the last core)\n"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("  DRAM bandwidth, end of run:"), std::string::npos) << text.out;
}

TEST(DramBandwidth, InPlaceAndSeparateMoveTheSameBytes)
{
    // 512 KiB tensors (C0 padding: 1 x 1 x 128 x 128 is 128 x 128 x 16 x 2
    // bytes) through a 64 KiB L2: every byte of x is read and every byte of y
    // written once either way; only how much of y is still dirty at the end
    // (written back after the kernel) differs.
    const std::string base = "relu --dtype fp16 --shape 1,1,128,128 --set memory.model=l2 --set l2.size_bytes=65536";
    json sep = run_json(base), inp = run_json(base + " --inplace");
    for (const json *j : {&sep, &inp}) {
        const json &d = j->at("dram");
        EXPECT_EQ(d.at("bytes_read").get<uint64_t>(), 524288u);
        EXPECT_EQ(d.at("bytes_written").get<uint64_t>(), 524288u);
        EXPECT_LE(d.at("achieved_bytes_per_cycle").get<double>(), d.at("peak_bytes_per_cycle").get<double>());
        EXPECT_EQ(d.at("kernel").at("bytes_written").get<uint64_t>() +
                      d.at("end_of_run").at("bytes_written").get<uint64_t>(),
                  524288u);
    }
}

// The bound is a lower bound and the achieved bandwidth is at most the peak
// on any config, not only on the hand-worked ones: seeded random L2 and DRAM
// configs, several kernels, 1 to 8 cores (the session that added the MSHR
// term ran 550 such points by hand; these 24 keep checking it).
TEST(Bound, RandomConfigsNeverBeatTheBoundOrThePeak)
{
    std::mt19937 rng(20261202);
    auto pick = [&](const std::vector<const char *> &v) { return v[rng() % v.size()]; };
    for (int i = 0; i < 24; i++) {
        std::string args = std::string(pick({"relu", "gelu_tanh", "leaky_relu", "sigmoid", "prelu"})) +
                           " --dtype " + pick({"fp16", "fp32"}) + " --shape " + pick({"1,16,16,16", "1,32,8,8", "2,3,17,5"});
        const std::vector<std::pair<const char *, std::vector<const char *>>> keys = {
            {"system.cores", {"1", "2", "3", "4", "8"}},        {"l2.mshrs", {"1", "2", "8", "32", "256"}},
            {"dram.latency", {"0", "1", "10", "100", "400"}},   {"dram.channels", {"1", "2", "4", "8"}},
            {"dram.bytes_per_cycle", {"1", "4", "32", "64"}},    {"dram.interleave_bytes", {"32", "256", "4096"}},
            {"l2.line_bytes", {"32", "64", "128", "256"}},      {"l2.size_bytes", {"16384", "65536", "2097152"}},
            {"l2.hit_latency", {"1", "5", "20"}},               {"l2.banks", {"1", "2", "8"}},
            {"l2.bank_interval", {"1", "2", "8"}},              {"l2.full_line_write", {"allocate", "fetch"}},
            {"l2.write_policy", {"write_back", "write_through"}}, {"dma.outstanding", {"1", "4", "16", "64"}},
            {"memory.warm_inputs", {"no", "yes"}}};
        for (const auto &k : keys)
            args += std::string(" --set ") + k.first + "=" + pick(k.second);
        json j = run_json(args);
        ASSERT_TRUE(j.is_object()) << args;
        expect_at_most_cycles(j, args);
        EXPECT_LE(j.at("dram").at("achieved_bytes_per_cycle").get<double>(),
                  j.at("dram").at("peak_bytes_per_cycle").get<double>())
            << args;
    }
}
