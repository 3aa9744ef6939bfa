// The pipeline trace writers on real runs (C engine, in process): Perfetto
// JSON parses and has one slot event per instruction, Konata has one row per
// instruction in cycle order, windows keep exactly the instructions issuing
// inside them, the byte limit stops a trace cleanly, and the writers keep
// only what is in flight.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "config.h"
#include "runner.h"
#include "trace.h"

using namespace npusim;

namespace {

std::string tmpdir()
{
    static std::string dir = [] {
        std::string t = ::testing::TempDir() + "/npusim_traces_XXXXXX";
        return std::string(mkdtemp(t.data()));
    }();
    return dir;
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

[[maybe_unused]] bool exists(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

// Counts the events of a run inside a window, per core: what a trace of that
// window must hold.
struct Counter : TraceWriter {
    TraceWindow window;
    std::map<unsigned, uint64_t> in_window;
    uint64_t stall_cycles = 0;
    unsigned max_dma_inflight = 0;
    // memory.model: l2: what the memory counters of the window must add up to.
    uint64_t l2_hits = 0, l2_misses = 0, dram_read = 0, dram_written = 0;
    explicit Counter(TraceWindow w) : window(w) {}
    void memory(const npu_memsys_event &ev) override
    {
        if (!window.contains(ev.now))
            return;
        if (ev.kind == NPU_MEMSYS_L2_ACCESS)
            (ev.l2->outcome == NPU_L2_HIT ? l2_hits : l2_misses)++;
        else
            (ev.is_write ? dram_written : dram_read) += ev.bytes;
    }
    void issue(unsigned core, const npu_issue_event &ev) override
    {
        if (window.contains(ev.issue)) {
            in_window[core]++;
            stall_cycles += ev.stall_cycles;
        }
        max_dma_inflight = std::max(max_dma_inflight, ev.dma_inflight);
    }
    void close() override {}
    std::string note() const override { return ""; }
};

struct Traced {
    RunResult r;
    std::string json, konata;  // paths
    std::map<unsigned, uint64_t> in_window;
    uint64_t stall_cycles = 0;
    unsigned max_dma_inflight = 0;
    size_t konata_max_pending = 0;
    std::vector<std::string> notes;
    uint64_t l2_hits = 0, l2_misses = 0, dram_read = 0, dram_written = 0;  // in the window
};

Traced run_traced(const std::string &name, const std::string &kernel, const std::string &dtype,
                  std::vector<uint64_t> shape, const std::vector<std::string> &sets, TraceWindow w = {},
                  uint64_t max_bytes = kDefaultTraceMaxBytes)
{
    Traced t;
    t.json = tmpdir() + "/" + name + ".json";
    t.konata = tmpdir() + "/" + name + ".kanata";
    RunOptions o;
    o.kernel = kernel;
    o.dtype = dtype;
    o.shape = shape;
    for (const std::string &s : sets)
        apply_override(o.config, s);
    TraceSet set;
    set.add(std::make_unique<PerfettoTrace>(t.json, w, max_bytes));
    auto konata = std::make_unique<KonataTrace>(t.konata, w, max_bytes);
    KonataTrace *k = konata.get();
    set.add(std::move(konata));
    auto counter = std::make_unique<Counter>(w);
    Counter *cnt = counter.get();
    set.add(std::move(counter));
    o.attach = [&set](unsigned core, npu_timed_core *tc) { set.attach(core, tc); };
    t.r = run_kernel(o);
    for (unsigned k = 0; k < t.r.core_stats.size(); k++)
        set.finish(k, t.r.core_stats[k].cycles);
    t.notes = set.close();
    t.in_window = cnt->in_window;
    t.stall_cycles = cnt->stall_cycles;
    t.max_dma_inflight = cnt->max_dma_inflight;
    t.konata_max_pending = k->max_pending();
    t.l2_hits = cnt->l2_hits;
    t.l2_misses = cnt->l2_misses;
    t.dram_read = cnt->dram_read;
    t.dram_written = cnt->dram_written;
    return t;
}

struct PerfettoCounts {
    std::map<unsigned, uint64_t> slot, unit, pipe;  // X events per core
    uint64_t stall_cycles = 0;
    std::vector<std::pair<uint64_t, uint64_t>> dma;  // counter (ts, transfers)
    std::map<std::pair<unsigned, unsigned>, std::string> thread_names;
    uint64_t outside_window = 0, missing_args = 0, overlapping = 0, unnamed_tracks = 0;
};

PerfettoCounts count_perfetto(const std::string &path, TraceWindow w)
{
    nlohmann::json j = nlohmann::json::parse(slurp(path));
    PerfettoCounts c;
    std::map<std::pair<unsigned, unsigned>, std::vector<std::pair<uint64_t, uint64_t>>> slices;
    for (const auto &e : j.at("traceEvents")) {
        const std::string ph = e.at("ph");
        if (e.at("pid") == PerfettoTrace::kMemoryPid)
            continue;  // the memory process: count_memory
        const unsigned pid = e.at("pid").get<unsigned>() - 1;  // core = pid - 1
        if (ph == "M") {
            if (e.at("name") == "thread_name")
                c.thread_names[{pid, e.at("tid").get<unsigned>() % 1000}] = e.at("args").at("name");
            continue;
        }
        if (ph == "C") {
            c.dma.emplace_back(e.at("ts").get<uint64_t>(), e.at("args").at("transfers").get<uint64_t>());
            continue;
        }
        const std::string cat = e.at("cat");
        const uint64_t ts = e.at("ts"), dur = e.at("dur");
        const unsigned tid = e.at("tid").get<unsigned>() % 1000;
        if (!e.at("args").contains("pc") || !e.at("args").contains("insn"))
            c.missing_args++;
        slices[{pid, tid}].emplace_back(ts, dur);
        if (cat == "slot") {
            c.slot[pid]++;
            c.outside_window += !w.contains(ts);
        } else if (cat == "unit") {
            c.unit[pid]++;
        } else if (cat == "pipe") {
            c.pipe[pid]++;
        } else if (cat == "stall") {
            c.stall_cycles += dur;
        }
    }
    // Slices on one track must not overlap (Perfetto nests them by time).
    for (auto &kv : slices) {
        c.unnamed_tracks += !c.thread_names.count(kv.first);
        std::sort(kv.second.begin(), kv.second.end());
        for (size_t i = 1; i < kv.second.size(); i++)
            c.overlapping += kv.second[i].first < kv.second[i - 1].first + kv.second[i - 1].second;
    }
    return c;
}

struct KonataCounts {
    uint64_t inserts = 0, retires = 0, flushes = 0, labels = 0;
    bool header_ok = false, starts_once = true, forward_only = true;
    uint64_t first_cycle = 0, last_cycle = 0;
};

KonataCounts count_konata(const std::string &path)
{
    KonataCounts k;
    std::istringstream in(slurp(path));
    std::string line;
    std::getline(in, line);
    k.header_ok = line == "Kanata\t0004";
    uint64_t cycle = 0, starts = 0;
    while (std::getline(in, line)) {
        std::string cmd = line.substr(0, line.find('\t'));
        std::string arg = line.substr(line.find('\t') + 1);
        if (cmd == "C=") {
            starts++;
            cycle = k.first_cycle = std::stoull(arg);
        } else if (cmd == "C") {
            long long d = std::stoll(arg);
            k.forward_only &= d > 0;
            cycle += uint64_t(d);
        } else if (cmd == "I") {
            k.inserts++;
        } else if (cmd == "R") {
            (line.substr(line.rfind('\t') + 1) == "1" ? k.flushes : k.retires)++;
        } else if (cmd == "L") {
            k.labels++;
        }
    }
    k.starts_once = starts == 1;
    k.last_cycle = cycle;
    return k;
}

uint64_t sum(const std::map<unsigned, uint64_t> &m)
{
    uint64_t s = 0;
    for (const auto &kv : m)
        s += kv.second;
    return s;
}

}  // namespace

TEST(Traces, PerfettoHasOneSlotAndOneUnitEventPerInstruction)
{
    Traced t = run_traced("perfetto_full", "gelu_tanh", "fp16", {1, 20, 9, 11}, {"system.cores=2"});
    ASSERT_TRUE(t.r.passed());
    PerfettoCounts c = count_perfetto(t.json, {});
    ASSERT_EQ(t.r.instructions_per_core.size(), 2u);
    for (unsigned k = 0; k < 2; k++) {
        EXPECT_EQ(c.slot[k], t.r.instructions_per_core[k]) << "core " << k;
        EXPECT_EQ(c.unit[k], t.r.instructions_per_core[k]) << "core " << k;
    }
    EXPECT_EQ(c.missing_args, 0u);
    EXPECT_EQ(c.overlapping, 0u);
    EXPECT_EQ(c.unnamed_tracks, 0u);
    EXPECT_EQ(c.thread_names[std::make_pair(0u, PerfettoTrace::slot_tid(1))], "slot 1");
    EXPECT_EQ(c.thread_names[std::make_pair(1u, PerfettoTrace::unit_tid(NPU_UNIT_VALU, 0))], "valu #0");
}

TEST(Traces, PerfettoShowsTheCubesPipesOnTracksOfTheirOwn)
{
    // Two cores, so that a pipe's track numbers are seen to stay in their core.
    Traced t = run_traced("perfetto_cube", "matmul", "fp16", {1, 150, 200, 40}, {"system.cores=2"});
    ASSERT_TRUE(t.r.passed());
    PerfettoCounts c = count_perfetto(t.json, {});
    for (unsigned k = 0; k < 2; k++) {
        EXPECT_EQ(c.slot[k], t.r.instructions_per_core[k]) << "core " << k;
        EXPECT_EQ(c.unit[k], t.r.instructions_per_core[k]) << "core " << k;
        uint64_t ops = 0;
        for (unsigned p = 0; p < NPU_NUM_PIPES; p++)
            ops += t.r.core_stats[k].pipe_ops[p];
        EXPECT_EQ(c.pipe[k], ops) << "core " << k;
    }
    EXPECT_EQ(c.overlapping, 0u);
    EXPECT_EQ(c.unnamed_tracks, 0u);
    const unsigned cube = PerfettoTrace::unit_tid(PerfettoTrace::pipe_track(NPU_PIPE_CUBE), 0);
    EXPECT_EQ(c.thread_names[std::make_pair(1u, cube)], "pipe cube #0");
    // Cube operations are not DMA transfers: the counter stays at the DMA's own.
    uint64_t most = 0;
    for (const auto &p : c.dma)
        most = std::max(most, p.second);
    EXPECT_LE(most, t.r.config.timing.dma_queue_depth);
}

// Every stall cycle of the report is on the stalls tracks, the drain after
// each core's last issue too (it was left out: the VCD alone showed it).
TEST(Traces, PerfettoStallSlicesCoverEveryStallTheDrainToo)
{
    // A sync latency of 5 after the last halt: a drain of 4 cycles at least.
    Traced t = run_traced("perfetto_stalls", "leaky_relu", "fp32", {1, 16, 8, 8},
                          {"system.cores=2", "units.sync.latency=5"});
    ASSERT_EQ(t.r.core_stats.size(), 2u);
    const nlohmann::json j = nlohmann::json::parse(slurp(t.json));
    std::map<unsigned, std::map<std::string, uint64_t>> shown;  // core -> reason -> cycles
    for (const auto &e : j.at("traceEvents"))
        if (e.at("ph") == "X" && e.at("cat") == "stall")
            shown[e.at("pid").get<unsigned>() - 1][e.at("name")] += e.at("dur").get<uint64_t>();
    for (unsigned k = 0; k < 2; k++) {
        const npu_core_stats &s = t.r.core_stats[k];
        ASSERT_GT(s.stall[NPU_STALL_DRAIN], 0u) << k;
        for (unsigned r = 0; r < NPU_NUM_STALLS; r++)
            EXPECT_EQ(shown[k][npu_stall_name(npu_stall(r))], s.stall[r]) << k << " " << npu_stall_name(npu_stall(r));
    }
    // Konata (core 0): the drain is a row of its own, flushed at the core's end.
    const std::string konata = slurp(t.konata);
    const std::string drain = "\t1\tdrain\n";
    ASSERT_NE(konata.find(drain), std::string::npos) << konata.substr(konata.size() - 400);
    EXPECT_NE(konata.find("\t1\tthe core's last results and transfers complete: its end at cycle " +
                          std::to_string(t.r.core_stats[0].cycles) + "\n"),
              std::string::npos);
    const KonataCounts kc = count_konata(t.konata);
    EXPECT_EQ(kc.last_cycle, t.r.core_stats[0].cycles);
    EXPECT_EQ(kc.flushes, 1u);  // the drain's row: no instruction retires in it
    EXPECT_EQ(kc.retires, t.r.instructions_per_core[0]);
}

TEST(Traces, PerfettoDmaCounterFollowsTheQueueAndEndsEmpty)
{
    Traced t = run_traced("perfetto_dma", "relu", "fp16", {1, 64, 16, 16}, {});
    PerfettoCounts c = count_perfetto(t.json, {});
    ASSERT_FALSE(c.dma.empty());
    uint64_t most = 0;
    for (const auto &p : c.dma)
        most = std::max(most, p.second);
    EXPECT_EQ(most, t.max_dma_inflight);
    EXPECT_LE(most, t.r.config.timing.dma_queue_depth);
    std::sort(c.dma.begin(), c.dma.end());
    EXPECT_EQ(c.dma.back().second, 0u);  // the last transfer completes
}

TEST(Traces, PerfettoWindowKeepsOnlyInstructionsIssuingInside)
{
    TraceWindow w{600, 1500};
    Traced t = run_traced("perfetto_window", "gelu_tanh", "fp32", {1, 16, 16, 16}, {"system.cores=2"}, w);
    ASSERT_GT(t.r.stats.cycles, w.end);
    PerfettoCounts c = count_perfetto(t.json, w);
    EXPECT_EQ(c.outside_window, 0u);
    EXPECT_EQ(sum(c.slot), sum(t.in_window));
    EXPECT_GT(sum(c.slot), 0u);
    EXPECT_LT(sum(c.slot), t.r.instructions);
    for (const auto &p : c.dma)
        EXPECT_TRUE(w.contains(p.first)) << p.first;
}

// The memory process of a Perfetto trace (memory.model: l2).
struct MemoryCounts {
    uint64_t hits = 0, misses = 0, read = 0, written = 0;
    std::map<std::string, uint64_t> samples;  // per counter name
    uint64_t unaligned = 0, twice = 0;        // samples off the 256-cycle grid, or twice at one ts
    double most_mshrs = 0;
    uint64_t drain_slices = 0, drain_ts = 0, drain_dur = 0, drain_lines = 0, drain_bytes = 0;
    std::string process_name, drain_track;
};

MemoryCounts count_memory(const std::string &path)
{
    nlohmann::json j = nlohmann::json::parse(slurp(path));
    MemoryCounts m;
    std::map<std::string, std::vector<uint64_t>> ts;
    for (const auto &e : j.at("traceEvents")) {
        if (e.at("pid") != PerfettoTrace::kMemoryPid)
            continue;
        const std::string ph = e.at("ph"), name = e.at("name");
        const nlohmann::json &a = e.at("args");
        if (ph == "M") {
            if (name == "process_name")
                m.process_name = a.at("name");
            if (name == "thread_name")
                m.drain_track = a.at("name");
        } else if (ph == "C") {
            m.samples[name]++;
            ts[name].push_back(e.at("ts"));
            m.unaligned += e.at("ts").get<uint64_t>() % PerfettoTrace::kMemoryBucket != 0;
            if (name == "l2_accesses") {
                m.hits += a.at("hits").get<uint64_t>();
                m.misses += a.at("misses").get<uint64_t>();
            } else if (name == "dram_bytes") {
                m.read += a.at("read").get<uint64_t>();
                m.written += a.at("written").get<uint64_t>();
            } else if (name == "l2_mshrs_busy") {
                m.most_mshrs = std::max(m.most_mshrs, a.at("mean").get<double>());
            }
        } else if (ph == "X") {
            m.drain_slices++;
            m.drain_ts = e.at("ts");
            m.drain_dur = e.at("dur");
            m.drain_lines = a.at("lines");
            m.drain_bytes = a.at("bytes");
        }
    }
    for (auto &kv : ts) {
        std::sort(kv.second.begin(), kv.second.end());
        m.twice += uint64_t(std::adjacent_find(kv.second.begin(), kv.second.end()) != kv.second.end());
    }
    return m;
}

TEST(Traces, PerfettoMemoryCountersAddUpToTheReport)
{
    // Two cores on a 64 KiB L2 with x (80 KiB) warm: hits, misses, victims
    // written back during the run, and the end-of-run write-back.
    Traced t = run_traced("perfetto_memory", "gelu_tanh", "fp16", {1, 160, 16, 16},
                          {"system.cores=2", "memory.model=l2", "l2.size_bytes=65536", "memory.warm_inputs=yes"});
    ASSERT_TRUE(t.r.passed());
    ASSERT_GT(t.r.l2.hits, 0u);
    ASSERT_GT(t.r.l2.writebacks, t.r.l2.clean_writebacks);
    ASSERT_GT(t.r.l2.clean_writebacks, 0u);
    MemoryCounts m = count_memory(t.json);
    EXPECT_EQ(m.process_name, "memory (L2, DRAM)");
    EXPECT_EQ(m.hits, t.r.l2.hits);
    EXPECT_EQ(m.misses, t.r.l2.misses);
    EXPECT_EQ(m.read, t.r.dram.bytes_read);
    EXPECT_EQ(m.written, t.r.dram.bytes_written);
    EXPECT_GT(m.most_mshrs, 0.0);
    EXPECT_LE(m.most_mshrs, double(t.r.config.l2.mshrs));
    EXPECT_EQ(m.unaligned, 0u);
    EXPECT_EQ(m.twice, 0u);
    // One sample of each counter per 256 cycles at most (and a zero after
    // the last), however many accesses.
    for (const char *name : {"l2_accesses", "l2_mshrs_busy", "dram_bytes", "dram_requests"}) {
        EXPECT_GT(m.samples[name], 1u) << name;
        EXPECT_LE(m.samples[name], (t.r.stats.cycles + t.r.l2.clean_cycles) / PerfettoTrace::kMemoryBucket + 2) << name;
    }
    // The end-of-run write-back: one slice from the last core's end.
    EXPECT_EQ(m.drain_track, "dram");
    EXPECT_EQ(m.drain_slices, 1u);
    EXPECT_EQ(m.drain_ts, t.r.stats.cycles);
    EXPECT_EQ(m.drain_dur, t.r.l2.clean_cycles);
    EXPECT_EQ(m.drain_lines, t.r.l2.clean_writebacks);
    EXPECT_EQ(m.drain_bytes, t.r.l2.clean_writebacks * t.r.config.l2.line_bytes);
    // The rest of the trace is as without the memory process.
    PerfettoCounts c = count_perfetto(t.json, {});
    EXPECT_EQ(sum(c.slot), t.r.instructions);
    EXPECT_EQ(c.missing_args, 0u);
}

TEST(Traces, PerfettoMemoryCountersFollowTheWindow)
{
    TraceWindow w{500, 1000};
    Traced t = run_traced("perfetto_memory_window", "relu", "fp16", {1, 32, 16, 16},
                          {"system.cores=2", "memory.model=l2", "l2.size_bytes=16384"}, w);
    ASSERT_GT(t.r.stats.cycles, w.end);
    MemoryCounts m = count_memory(t.json);
    EXPECT_EQ(m.hits + m.misses, t.l2_hits + t.l2_misses);
    EXPECT_EQ(m.misses, t.l2_misses);
    EXPECT_GT(m.misses, 0u);
    EXPECT_LT(m.misses, t.r.l2.misses);
    EXPECT_EQ(m.read, t.dram_read);
    EXPECT_EQ(m.written, t.dram_written);
    EXPECT_EQ(m.drain_slices, 0u);  // after the window
}

TEST(Traces, IdealMemoryHasNoMemoryProcess)
{
    Traced t = run_traced("perfetto_ideal", "relu", "fp16", {1, 16, 8, 8}, {"memory.model=ideal"});
    EXPECT_TRUE(count_memory(t.json).samples.empty());
    EXPECT_EQ(count_memory(t.json).process_name, "");
}

TEST(Traces, KonataHasOneRowPerInstructionInCycleOrder)
{
    Traced t = run_traced("konata_full", "leaky_relu", "fp16", {1, 20, 9, 11}, {});
    KonataCounts k = count_konata(t.konata);
    EXPECT_TRUE(k.header_ok);
    EXPECT_TRUE(k.starts_once);
    EXPECT_TRUE(k.forward_only);
    // And a row for the drain after the last issue, when there is one.
    const uint64_t drain_rows = t.r.stats.stall[NPU_STALL_DRAIN] ? 1 : 0;
    EXPECT_EQ(k.inserts, t.r.instructions + drain_rows);
    EXPECT_EQ(k.retires, t.r.instructions);
    EXPECT_EQ(k.flushes, drain_rows);
    EXPECT_EQ(k.labels, 2 * (t.r.instructions + drain_rows));
    EXPECT_EQ(k.first_cycle, 0u);
    // The last retirement is the last completion: the run's last cycle.
    EXPECT_EQ(k.last_cycle, t.r.stats.cycles);
}

TEST(Traces, KonataRecordsCoreZeroOfAMultiCoreRun)
{
    Traced t = run_traced("konata_cores", "relu", "fp32", {1, 16, 8, 8}, {"system.cores=3"});
    KonataCounts k = count_konata(t.konata);
    EXPECT_EQ(k.inserts, t.r.instructions_per_core[0]);
}

TEST(Traces, KonataWindowKeepsOnlyInstructionsIssuingInside)
{
    TraceWindow w{800, 2000};
    Traced t = run_traced("konata_window", "gelu_tanh", "fp16", {1, 16, 16, 16}, {}, w);
    KonataCounts k = count_konata(t.konata);
    EXPECT_TRUE(k.forward_only);
    // One more row: the instruction waiting across the window's end, flushed there.
    EXPECT_EQ(k.inserts, t.in_window[0] + 1);
    EXPECT_EQ(k.retires, t.in_window[0]);
    EXPECT_EQ(k.flushes, 1u);
    EXPECT_GT(k.inserts, 0u);
    // Rows are cut at the window's edges.
    EXPECT_EQ(k.first_cycle, w.start);
    EXPECT_EQ(k.last_cycle, w.end);
}

// Streaming: the writers keep what is in flight in the machine (a few dozen
// instructions), not the run; a run of 100k instructions proves it.
TEST(Traces, WritersHoldOnlyInFlightInstructions)
{
    Traced t = run_traced("konata_big", "gelu_tanh", "fp16", {1, 64, 28, 28}, {}, {}, kDefaultTraceMaxBytes);
    ASSERT_GT(t.r.instructions, 50000u);
    EXPECT_LT(t.konata_max_pending, 1000u);
}

TEST(Traces, ByteLimitStopsATraceCleanly)
{
    const uint64_t limit = 64 * 1024;
    Traced t = run_traced("limited", "gelu_tanh", "fp16", {1, 16, 16, 16}, {}, {}, limit);
    ASSERT_EQ(t.notes.size(), 2u);
    EXPECT_NE(t.notes[0].find("--trace-max-bytes"), std::string::npos) << t.notes[0];
    std::string json = slurp(t.json);
    EXPECT_LE(json.size(), limit);
    nlohmann::json j = nlohmann::json::parse(json);  // still a complete document
    EXPECT_GT(j.at("traceEvents").size(), 10u);
    EXPECT_LE(slurp(t.konata).size(), limit);
    EXPECT_TRUE(t.r.passed());  // the run itself goes on
}

TEST(Traces, AnAbandonedTraceLeavesNoFile)
{
    const std::string dir = tmpdir() + "/abandoned";
    mkdir(dir.c_str(), 0755);
    {
        TraceSet set;
        set.add(std::make_unique<PerfettoTrace>(dir + "/t.json", TraceWindow{}, kDefaultTraceMaxBytes));
        set.add(std::make_unique<KonataTrace>(dir + "/t.kanata", TraceWindow{}, kDefaultTraceMaxBytes));
        RunOptions o;
        o.kernel = "relu";
        o.attach = [&set](unsigned core, npu_timed_core *tc) { set.attach(core, tc); };
        run_kernel(o);
        // never closed, as when the run throws
    }
    DIR *d = opendir(dir.c_str());
    ASSERT_NE(d, nullptr);
    int entries = 0;
    while (dirent *e = readdir(d))
        entries += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
    closedir(d);
    EXPECT_EQ(entries, 0);
}

TEST(Traces, UnwritablePathIsAOneLineError)
{
    try {
        PerfettoTrace t("/nonexistent-dir/t.json", {}, kDefaultTraceMaxBytes);
        FAIL() << "expected an error";
    } catch (const std::exception &e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/t.json: cannot write"), std::string::npos) << e.what();
    }
}
