// The SystemC engine's VCD: every instruction and every stall cycle shows,
// a window holds exactly its cycles, the replay never runs late and its queue
// stays bounded; and all traces stream without holding the run in memory.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "npusim/systemc/engine.h"
#include "npusim/memsys.h"
#include "npy.h"
#include "runner.h"
#include "trace.h"
#include "sc_scenario.h"

using namespace npusim;
using namespace sc_test;
using nlohmann::json;

namespace {

struct Vcd {
    std::string timescale;
    std::map<std::string, std::string> id_of;                                // full name -> id
    std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> changes;  // id -> (time, value)
    uint64_t last_time = 0;
};

Vcd parse_vcd(const std::string &text)
{
    Vcd v;
    std::istringstream in(text);
    std::string tok;
    std::vector<std::string> scope;
    uint64_t now = 0;
    bool defs = true;
    while (in >> tok) {
        if (defs) {
            if (tok == "$timescale") {
                std::string a, b;
                in >> a;
                if (a != "$end") {
                    in >> b;
                    if (b != "$end") {
                        v.timescale = a + " " + b;
                        in >> b;
                    } else {
                        v.timescale = a;
                    }
                }
            } else if (tok == "$scope") {
                std::string kind, name;
                in >> kind >> name;
                scope.push_back(name);
            } else if (tok == "$upscope") {
                scope.pop_back();
            } else if (tok == "$var") {
                std::string type, width, id, name;
                in >> type >> width >> id >> name;
                std::string full;
                for (const std::string &s : scope)
                    full += s + ".";
                v.id_of[full + name] = id;
            } else if (tok == "$enddefinitions") {
                defs = false;
            }
            continue;
        }
        if (tok == "$comment") {
            while (in >> tok && tok != "$end") {
            }
            continue;
        }
        if (tok[0] == '$')
            continue;  // $dumpvars, $end
        if (tok[0] == '#') {
            now = std::stoull(tok.substr(1));
            v.last_time = now;
        } else if (tok[0] == 'b') {
            std::string id;
            in >> id;
            v.changes[id].emplace_back(now, std::stoull(tok.substr(1), nullptr, 2));
        } else if (tok[0] == '0' || tok[0] == '1') {
            v.changes[tok.substr(1)].emplace_back(now, uint64_t(tok[0] - '0'));
        }
    }
    return v;
}

// Cycles in [from, to) spent at each value of a signal.
std::map<uint64_t, uint64_t> time_at_value(const std::vector<std::pair<uint64_t, uint64_t>> &ch, uint64_t from,
                                           uint64_t to)
{
    std::map<uint64_t, uint64_t> out;
    for (size_t i = 0; i < ch.size(); i++) {
        uint64_t a = std::max(ch[i].first, from);
        uint64_t b = std::min(i + 1 < ch.size() ? ch[i + 1].first : to, to);
        if (b > a)
            out[ch[i].second] += b - a;
    }
    return out;
}

uint64_t weighted(const std::map<uint64_t, uint64_t> &m)
{
    uint64_t s = 0;
    for (const auto &kv : m)
        s += kv.first * kv.second;
    return s;
}

}  // namespace

// Every cycle of the run shows in the VCD: issued counts sum to the
// instructions, and each stall code holds for exactly the stall cycles of
// its reason.
TEST(Vcd, AccountsForEveryInstructionAndEveryStallCycle)
{
    Scenario s;
    s.kernel = "gelu_tanh";
    s.dtype = "fp16";
    s.shape = "1,16,16,16";
    s.sets = {"memory.model=ideal"};  // no end-of-run write-back: the file ends with the core
    s.vcd = tmpdir() + "/full.vcd";
    ScRun sc = run_sc(s);
    RunResult rc = run_kernel(s.options());
    EXPECT_EQ(sc.info.at("vcd_late").get<uint64_t>(), 0u);
    EXPECT_GT(sc.info.at("vcd_changes").get<uint64_t>(), 0u);

    Vcd v = parse_vcd(slurp(s.vcd));
    EXPECT_EQ(v.timescale, "1 ns");
    for (const char *sig : {"issued", "stall", "issued_total", "busy.scalar", "busy.valu", "busy.sfu", "busy.lsu",
                            "busy.dma", "busy.branch", "busy.sync"})
        EXPECT_TRUE(v.id_of.count(std::string("SystemC.core0.") + sig)) << sig;
    const npu_core_stats &st = rc.core_stats[0];
    const auto &issued = v.changes[v.id_of["SystemC.core0.issued"]];
    EXPECT_EQ(weighted(time_at_value(issued, 0, st.cycles)), rc.instructions);
    auto stall = time_at_value(v.changes[v.id_of["SystemC.core0.stall"]], 0, st.cycles);
    EXPECT_EQ(stall[kVcdIssuing], st.issue_cycles);
    for (unsigned i = 0; i < NPU_NUM_STALLS; i++)
        EXPECT_EQ(stall[1 + i], st.stall[i]) << npu_stall_name(npu_stall(i));
    const auto &total = v.changes[v.id_of["SystemC.core0.issued_total"]];
    ASSERT_FALSE(total.empty());
    EXPECT_EQ(total.back().second, rc.instructions);
    // After the last cycle the core is idle.
    EXPECT_EQ(v.changes[v.id_of["SystemC.core0.stall"]].back(), std::make_pair(st.cycles, uint64_t(kVcdIdle)));
    // The VCD ends one cycle after the run, to show that idle state.
    EXPECT_EQ(v.last_time, st.cycles + 1);
}

TEST(Vcd, WindowHoldsExactlyTheInstructionsIssuingInside)
{
    Scenario s;
    s.kernel = "leaky_relu";
    s.dtype = "fp32";
    s.shape = "1,64,32,32";
    s.sets = {"system.cores=2"};
    s.vcd = tmpdir() + "/window.vcd";
    s.trace_start = 700;
    s.trace_end = 2900;
    ScRun sc = run_sc(s);
    EXPECT_EQ(sc.info.at("vcd_late").get<uint64_t>(), 0u);

    // The C engine counts the same window through the issue hook.
    RunOptions o = s.options();
    std::vector<uint64_t> in_window(2, 0);
    struct Ctx {
        std::vector<uint64_t> *count;
        unsigned core;
        uint64_t start, end;
    };
    std::vector<Ctx> ctx(2);
    o.attach = [&](unsigned core, npu_timed_core *tc) {
        ctx[core] = {&in_window, core, s.trace_start, s.trace_end};
        npu_timed_core_set_hook(
            tc,
            [](void *p, const npu_issue_event *ev) {
                auto *c = static_cast<Ctx *>(p);
                if (ev->issue >= c->start && ev->issue < c->end)
                    (*c->count)[c->core]++;
            },
            &ctx[core]);
    };
    RunResult rc = run_kernel(o);
    ASSERT_GT(rc.stats.cycles, s.trace_end);

    Vcd v = parse_vcd(slurp(s.vcd));
    for (unsigned k = 0; k < 2; k++) {
        const std::string core = "SystemC.core" + std::to_string(k) + ".";
        const auto &issued = v.changes[v.id_of[core + "issued"]];
        EXPECT_EQ(weighted(time_at_value(issued, 0, rc.stats.cycles)), in_window[k]) << core;
        EXPECT_GT(in_window[k], 0u);
        EXPECT_EQ(v.changes[v.id_of[core + "issued_total"]].back().second, in_window[k]) << core;
        for (const auto &kv : v.changes)
            for (const auto &ch : kv.second)
                EXPECT_TRUE(ch.first == 0 || (ch.first >= s.trace_start && ch.first <= s.trace_end))
                    << "change at " << ch.first;
        // Outside the window the core shows idle.
        auto stall = time_at_value(v.changes[v.id_of[core + "stall"]], s.trace_end, rc.stats.cycles);
        EXPECT_EQ(stall[kVcdIdle], rc.stats.cycles - s.trace_end) << core;
    }
}

namespace {

// Cycles of each stall reason over a window, per core, as each format shows them.
using StallCycles = std::map<std::string, uint64_t>;

std::map<unsigned, StallCycles> vcd_stalls(Vcd &v, unsigned cores, uint64_t from, uint64_t to)
{
    std::map<unsigned, StallCycles> out;
    for (unsigned k = 0; k < cores; k++)
        for (const auto &kv : time_at_value(v.changes[v.id_of["SystemC.core" + std::to_string(k) + ".stall"]],
                                            from, to))
            if (kv.first != kVcdIssuing && kv.first != kVcdIdle)
                out[k][npu_stall_name(npu_stall(kv.first - 1))] += kv.second;
    return out;
}

std::map<unsigned, StallCycles> perfetto_stalls(const json &trace)
{
    std::map<unsigned, StallCycles> out;
    for (const auto &e : trace.at("traceEvents"))
        if (e.at("ph") == "X" && e.at("cat") == "stall")
            out[e.at("pid").get<unsigned>() - 1][e.at("name")] += e.at("dur").get<uint64_t>();
    return out;
}

// Lane 1 of a Kanata log: a stage per stall, ended by E or by the row's R.
StallCycles konata_stalls(const std::string &text, uint64_t *first_cycle, uint64_t *last_cycle)
{
    StallCycles out;
    std::map<std::string, std::pair<std::string, uint64_t>> open;  // row id -> (stall, since)
    std::istringstream in(text);
    std::string line;
    uint64_t cycle = 0;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string x; std::getline(fields, x, '\t');)
            f.push_back(x);
        if (f[0] == "C=")
            cycle = *first_cycle = std::stoull(f[1]);
        else if (f[0] == "C")
            cycle += std::stoull(f[1]);
        else if (f[0] == "S" && f[2] == "1")
            open[f[1]] = {f[3], cycle};
        if ((f[0] == "E" && f[2] == "1") || f[0] == "R") {
            auto it = open.find(f[1]);
            if (it != open.end()) {
                out[it->second.first] += cycle - it->second.second;
                open.erase(it);
            }
        }
    }
    *last_cycle = cycle;
    return out;
}

}  // namespace

// A window cuts every slice at its edges, so the three formats agree on what
// each core did inside it: the cycles of each stall reason on Perfetto's
// stalls tracks, on Konata's lane 1 (core 0) and at the VCD's stall codes
// are the same. Before, Perfetto had core 0's dma_wait slice from cycle 60
// for 293 cycles (405 on core 1) where the VCD had 53 (165) of them in the
// window, and Konata began at cycle 59. A window that takes in the cores'
// ends holds their drain, which Perfetto and Konata left out (the VCD alone
// showed it).
TEST(Vcd, WindowedTracesAgreeOnEachCoresStallCyclesByReason)
{
    const std::string d = tmpdir();
    const uint64_t start = 300;
    // Through the window only, and from its start to past the run's end
    // (with a sync latency of 5 after each core's halt: a drain of 4 cycles
    // at least; the default config ends this kernel without one).
    for (const uint64_t end : {uint64_t(900), uint64_t(1) << 40}) {
        const std::string at = d + "/agree" + std::to_string(end);
        Result r = run_cmd(std::string(NPUSIM_EXE) +
                           " run gelu_tanh --dtype fp32 --shape 1,16,28,28 --set system.cores=2 --trace-start 300 " +
                           (end == 900 ? "" : "--set units.sync.latency=5 ") + "--trace-end " + std::to_string(end) +
                           " -q --trace " + at + ".json --konata " + at + ".kanata --vcd " + at + ".vcd --json " + at +
                           ".report.json");
        ASSERT_EQ(r.status, 0) << r.err;
        const json report = json::parse(slurp(at + ".report.json"));
        Vcd v = parse_vcd(slurp(at + ".vcd"));
        const std::map<unsigned, StallCycles> vcd = vcd_stalls(v, 2, start, end);
        for (unsigned k = 0; k < 2; k++) {
            const std::string stall = "SystemC.core" + std::to_string(k) + ".stall";
            const uint64_t cycles = report.at("cores").at(k).at("cycles");
            if (end == 900) {  // both cores run through the window: no drain in it
                EXPECT_EQ(time_at_value(v.changes[v.id_of[stall]], start, end)[kVcdIdle], 0u) << k;
                EXPECT_EQ(vcd.at(k).count("drain"), 0u) << k;
            } else {  // every core's drain, to its own end, where it turns idle
                ASSERT_LT(cycles, end);
                EXPECT_GT(vcd.at(k).at("drain"), 0u) << k;
                EXPECT_EQ(time_at_value(v.changes[v.id_of[stall]], start, cycles)[kVcdIdle], 0u) << k;
                EXPECT_EQ(time_at_value(v.changes[v.id_of[stall]], cycles, cycles + 1)[kVcdIdle], 1u) << k;
            }
        }
        if (end == 900) {
            // The cores load alike (core 1 waited 165 cycles when its misses
            // queued behind MSHRs core 0's fills held only in the booking).
            EXPECT_EQ(vcd.at(0).at("dma_wait"), 53u);
            EXPECT_EQ(vcd.at(1).at("dma_wait"), 53u);
        }

        const json trace = json::parse(slurp(at + ".json"));
        EXPECT_EQ(perfetto_stalls(trace), vcd) << end;
        for (const auto &e : trace.at("traceEvents"))
            if (e.at("ph") == "X") {
                const uint64_t ts = e.at("ts"), dur = e.at("dur");
                EXPECT_TRUE(ts >= start && ts + dur <= end) << e.dump();
            }
        uint64_t first = 0, last = 0;
        EXPECT_EQ(konata_stalls(slurp(at + ".kanata"), &first, &last), vcd.at(0)) << end;
        EXPECT_EQ(first, start);
        EXPECT_EQ(last, end == 900 ? end : report.at("cores").at(0).at("cycles").get<uint64_t>());
    }
}

// memory.model: l2: the memory scope's counters end at the report's totals,
// its levels end at zero, and the end-of-run write-back shows after the last
// core, for as long as the report says it took.
TEST(Vcd, MemoryScopeEndsAtTheReportsTotals)
{
    Scenario s;
    s.kernel = "gelu_tanh";
    s.dtype = "fp16";
    s.shape = "1,160,16,16";
    s.sets = {"system.cores=2", "memory.model=l2", "l2.size_bytes=65536", "memory.warm_inputs=yes"};
    s.vcd = tmpdir() + "/memory.vcd";
    ScRun sc = run_sc(s);
    RunResult rc = run_kernel(s.options());
    ASSERT_GT(rc.l2.hits, 0u);
    ASSERT_GT(rc.l2.clean_writebacks, 0u);
    EXPECT_EQ(sc.info.at("vcd_late").get<uint64_t>(), 0u);

    Vcd v = parse_vcd(slurp(s.vcd));
    auto last = [&](const char *sig) {
        const auto &ch = v.changes[v.id_of[std::string("SystemC.memory.") + sig]];
        return ch.empty() ? UINT64_MAX : ch.back().second;
    };
    EXPECT_EQ(last("l2_hits"), rc.l2.hits);
    EXPECT_EQ(last("l2_misses"), rc.l2.misses);
    EXPECT_EQ(last("dram_bytes_read"), rc.dram.bytes_read);
    EXPECT_EQ(last("dram_bytes_written"), rc.dram.bytes_written);
    for (const char *level : {"l2_mshrs_busy", "dram_requests", "end_of_run_writeback"})
        EXPECT_EQ(last(level), 0u) << level;
    uint64_t most = 0;
    for (const auto &ch : v.changes[v.id_of["SystemC.memory.l2_mshrs_busy"]])
        most = std::max(most, ch.second);
    EXPECT_GT(most, 0u);
    EXPECT_LE(most, rc.config.l2.mshrs);
    const auto &drain = v.changes[v.id_of["SystemC.memory.end_of_run_writeback"]];
    const uint64_t end = rc.stats.cycles, drained = end + rc.l2.clean_cycles;
    auto at = time_at_value(drain, 0, drained + 1);
    EXPECT_EQ(at[0], end + 1);  // idle until the last core's end, and again once done
    ASSERT_GE(drain.size(), 2u);
    EXPECT_EQ(drain[1].first, end);
    EXPECT_EQ(drain.back().first, drained);
    EXPECT_GT(v.last_time, drained);
}

// A window: the memory counters count the accesses arriving inside it (as an
// observer of the C engine's memory system counts them), and nothing changes
// outside it.
TEST(Vcd, MemoryScopeCountsOnlyTheWindow)
{
    Scenario s;
    s.kernel = "relu";
    s.dtype = "fp16";
    s.shape = "1,32,16,16";
    s.sets = {"system.cores=2", "memory.model=l2", "l2.size_bytes=16384"};
    s.vcd = tmpdir() + "/memory_window.vcd";
    s.trace_start = 500;
    s.trace_end = 1000;
    ScRun sc = run_sc(s);
    EXPECT_EQ(sc.info.at("vcd_late").get<uint64_t>(), 0u);

    struct Count {
        uint64_t start, end, misses = 0, read = 0;
        static void observe(void *ctx, const npu_memsys_event *ev)
        {
            auto *c = static_cast<Count *>(ctx);
            if (ev->now < c->start || ev->now >= c->end)
                return;
            if (ev->kind == NPU_MEMSYS_L2_ACCESS)
                c->misses += ev->l2->outcome != NPU_L2_HIT;
            else if (!ev->is_write)
                c->read += ev->bytes;
        }
    } count{s.trace_start, s.trace_end};
    RunOptions o = s.options();
    o.attach = [&](unsigned core, npu_timed_core *tc) {
        void *ms = nullptr;
        if (core == 0 && npu_timed_core_dma_backend(tc, &ms) == &npu_memsys_dma)
            npu_memsys_add_observer(static_cast<npu_memsys *>(ms), &Count::observe, &count);
    };
    RunResult rc = run_kernel(o);
    ASSERT_GT(rc.stats.cycles, s.trace_end);
    ASSERT_GT(count.misses, 0u);
    ASSERT_LT(count.misses, rc.l2.misses);

    Vcd v = parse_vcd(slurp(s.vcd));
    EXPECT_EQ(v.changes[v.id_of["SystemC.memory.l2_misses"]].back().second, count.misses);
    EXPECT_EQ(v.changes[v.id_of["SystemC.memory.dram_bytes_read"]].back().second, count.read);
    for (const char *sig : {"l2_hits", "l2_misses", "dram_bytes_read", "dram_bytes_written"})
        for (const auto &ch : v.changes[v.id_of[std::string("SystemC.memory.") + sig]])
            EXPECT_TRUE(ch.first == 0 || (ch.first >= s.trace_start && ch.first < s.trace_end))
                << sig << " changes at " << ch.first;
    // The levels drop to zero at the window's end (MemoryLevelsAreZeroOutsideTheWindowAsTheCoresAreIdle).
    for (const char *sig : {"l2_mshrs_busy", "dram_requests", "end_of_run_writeback"})
        for (const auto &ch : v.changes[v.id_of[std::string("SystemC.memory.") + sig]])
            EXPECT_TRUE(ch.first == 0 || (ch.first >= s.trace_start && ch.first < s.trace_end) ||
                        (ch.first == s.trace_end && ch.second == 0))
                << sig << " changes at " << ch.first << " to " << ch.second;
}

// The memory scope's levels follow the cores' rule: outside the window they
// are zero (the cores show idle there), while its counters keep what the
// window counted. Before, l2_mshrs_busy held the 16 of the window's end from
// cycle 1500 to the end of the file (#2755, after the write-back).
TEST(Vcd, MemoryLevelsAreZeroOutsideTheWindowAsTheCoresAreIdle)
{
    const std::string d = tmpdir();
    Result r = run_cmd(std::string(NPUSIM_EXE) + " run relu --dtype fp16 --shape 1,16,28,28 -q --trace-start 1000 "
                       "--trace-end 1500 --vcd " + d + "/levels.vcd");
    ASSERT_EQ(r.status, 0) << r.err;
    Vcd v = parse_vcd(slurp(d + "/levels.vcd"));
    auto at = [&](const char *sig, uint64_t cycle) {
        uint64_t value = 0;
        for (const auto &ch : v.changes[v.id_of[std::string("SystemC.memory.") + sig]])
            if (ch.first <= cycle)
                value = ch.second;
        return value;
    };
    EXPECT_EQ(at("l2_mshrs_busy", 1499), 16u);
    for (const char *level : {"l2_mshrs_busy", "dram_requests", "end_of_run_writeback"}) {
        EXPECT_EQ(at(level, 999), 0u) << level;
        EXPECT_EQ(at(level, 1500), 0u) << level;
        EXPECT_EQ(at(level, v.last_time), 0u) << level;
    }
    EXPECT_GT(at("l2_misses", 1499), 0u);
    EXPECT_EQ(at("l2_misses", v.last_time), at("l2_misses", 1499));
    EXPECT_EQ(at("dram_bytes_read", v.last_time), at("dram_bytes_read", 1499));
    EXPECT_EQ(v.changes[v.id_of["SystemC.core0.stall"]].back(), std::make_pair(uint64_t(1500), uint64_t(kVcdIdle)));
}

// A window that opens after the run holds none of it; the file still ends
// one cycle after the run (here after its end-of-run write-back, as a
// whole-run file does), the cores idle throughout. Before, --trace-start
// 1000000000 ran the file on to #1000000001.
TEST(Vcd, AWindowAfterTheRunEndsTheFileWithTheRun)
{
    const std::string d = tmpdir();
    const std::string run = std::string(NPUSIM_EXE) + " run relu --dtype fp16 --shape 1,16,28,28 -q --vcd ";
    Result whole = run_cmd(run + d + "/whole.vcd"), late = run_cmd(run + d + "/late.vcd --trace-start 1000000000");
    ASSERT_EQ(whole.status, 0) << whole.err;
    ASSERT_EQ(late.status, 0) << late.err;
    Vcd w = parse_vcd(slurp(d + "/whole.vcd")), l = parse_vcd(slurp(d + "/late.vcd"));
    EXPECT_EQ(w.last_time, 2755u);  // the run's 2454 cycles, its write-back done at 2754
    EXPECT_EQ(l.last_time, w.last_time);
    for (const auto &kv : l.changes)
        for (const auto &ch : kv.second)
            EXPECT_EQ(ch.first, 0u) << "a change at " << ch.first;
}

// A kernel that fails (here the run's cycle limit: exit status 1) leaves
// every output asked for, each complete up to its stop: the three traces,
// the report with its trap, the output tensor as global memory held it, the
// memory trace. (docs/timing.md said a run that fails leaves no trace file.)
TEST(Vcd, ARunThatFailsLeavesEveryOutputCompleteUpToItsStop)
{
    const std::string d = tmpdir() + "/failed";
    mkdir(d.c_str(), 0755);
    Result r = run_cmd(std::string(NPUSIM_EXE) + " run relu --dtype fp16 --shape 1,16,28,28 -q --max-cycles 100 " +
                       "--trace " + d + "/t.json --konata " + d + "/t.kanata --vcd " + d + "/t.vcd --json " + d +
                       "/r.json --output y=" + d + "/y.npy --mem-trace " + d + "/m.din");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "");
    const json rep = json::parse(slurp(d + "/r.json"));
    ASSERT_EQ(rep.at("traps").size(), 1u);
    EXPECT_EQ(rep.at("traps")[0].at("kind"), "max_cycles");
    EXPECT_EQ(rep.at("traps")[0].at("cycle"), 353u);
    EXPECT_EQ(rep.at("instructions"), 63u);

    uint64_t slots = 0;
    const json trace = json::parse(slurp(d + "/t.json"));
    for (const auto &e : trace.at("traceEvents"))
        slots += e.at("ph") == "X" && e.at("cat") == "slot";
    EXPECT_EQ(slots, 63u);
    const std::string k = slurp(d + "/t.kanata");
    uint64_t rows = 0, retired = 0;
    for (size_t p = 0; (p = k.find("\nI\t", p)) != std::string::npos; p++)
        rows++;
    for (size_t p = 0; (p = k.find("\nR\t", p)) != std::string::npos; p++)
        retired++;
    // And a row for the drain after the last issue (the report's 1067
    // cycles of it, as the VCD shows them), flushed at the core's end.
    EXPECT_EQ(rows, 64u);
    EXPECT_EQ(retired, 64u);
    EXPECT_NE(k.find("\nL\t63\t0\tdrain\n"), std::string::npos);
    EXPECT_EQ(rep.at("stalls").at("drain"), 1067u);
    Vcd v = parse_vcd(slurp(d + "/t.vcd"));
    EXPECT_EQ(v.changes[v.id_of["SystemC.core0.issued_total"]].back().second, 63u);
    EXPECT_EQ(v.last_time, rep.at("cycles").get<uint64_t>() + 1);

    const NpyArray y = read_npy(d + "/y.npy");
    EXPECT_EQ(y.shape, (std::vector<uint64_t>{1, 16, 28, 28}));
    EXPECT_GT(cli_test::count_lines(slurp(d + "/m.din")), 0);
    EXPECT_EQ(y.dtype, NPU_F16);
}

// The memory process of a Perfetto trace is the same whichever engine ran:
// the CLI's SystemC engine (lines through the TLM sockets) and the C engine.
TEST(Vcd, PerfettoMemoryTracksAreTheSameFromBothEngines)
{
    const std::string d = tmpdir();
    const std::string args = "gelu_tanh --dtype fp16 --shape 1,64,16,16 --set system.cores=2 --set memory.model=l2 "
                             "--set l2.size_bytes=16384";
    Result r = run_cmd(std::string(NPUSIM_EXE) + " run " + args + " -q --trace " + d + "/sc_memory.json");
    ASSERT_EQ(r.status, 0) << r.err;
    RunOptions o;
    o.kernel = "gelu_tanh";
    o.dtype = "fp16";
    o.shape = {1, 64, 16, 16};
    for (const char *set : {"system.cores=2", "memory.model=l2", "l2.size_bytes=16384"})
        apply_override(o.config, set);
    TraceSet traces;
    traces.add(std::make_unique<PerfettoTrace>(d + "/c_memory.json", TraceWindow{}, kDefaultTraceMaxBytes));
    o.attach = [&traces](unsigned core, npu_timed_core *tc) { traces.attach(core, tc); };
    run_kernel(o);
    traces.close();
    auto memory_events = [](const std::string &path) {
        const json trace = json::parse(slurp(path));
        json events = json::array();
        for (const auto &e : trace.at("traceEvents"))
            if (e.at("pid") == PerfettoTrace::kMemoryPid)
                events.push_back(e);
        return events;
    };
    json sc = memory_events(d + "/sc_memory.json"), c = memory_events(d + "/c_memory.json");
    EXPECT_GT(sc.size(), 20u);
    EXPECT_EQ(sc, c);
}

// Cores run ahead of SystemC time only by about one quantum, so the VCD
// changes waiting for replay stay bounded, however long the run. (The ideal
// memory: through the L2, the end-of-run write-back queues one burst of
// changes per dirty line at the end, as long as the output.)
TEST(Vcd, ReplayQueueStaysBounded)
{
    Scenario s;
    s.kernel = "gelu_tanh";
    s.dtype = "fp16";
    s.shape = "1,64,56,56";
    s.sets = {"memory.model=ideal"};
    s.vcd = tmpdir() + "/bounded.vcd";
    ScRun sc = run_sc(s);
    EXPECT_EQ(sc.info.at("vcd_late").get<uint64_t>(), 0u);
    const uint64_t changes = sc.info.at("vcd_changes"), queued = sc.info.at("vcd_max_queued");
    EXPECT_GT(changes, 200000u);
    EXPECT_LT(queued * 20, changes);  // a quantum's worth, not the run
}

// All three traces at once through the CLI: the VCD hook forwards to the
// Perfetto and Konata writers.
TEST(Vcd, CliWritesAllThreeTracesTogether)
{
    const std::string d = tmpdir();
    Result r = run_cmd(std::string(NPUSIM_EXE) + " run gelu_tanh --dtype fp16 --shape 1,8,8,8 --json - --trace " + d +
                       "/all.json --konata " + d + "/all.kanata --vcd " + d + "/all.vcd");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    json rep = json::parse(r.out);
    const uint64_t n = rep.at("instructions");
    json t = json::parse(slurp(d + "/all.json"));
    uint64_t slot_events = 0;
    for (const auto &e : t.at("traceEvents"))
        slot_events += e.at("ph") == "X" && e.at("cat") == "slot";
    EXPECT_EQ(slot_events, n);
    std::string k = slurp(d + "/all.kanata");
    uint64_t inserts = 0;
    for (size_t p = 0; (p = k.find("\nI\t", p)) != std::string::npos; p++)
        inserts++;
    EXPECT_EQ(inserts, n);
    Vcd v = parse_vcd(slurp(d + "/all.vcd"));
    EXPECT_EQ(v.changes[v.id_of["SystemC.core0.issued_total"]].back().second, n);
}

// Peak memory of one child run, in KiB.
static long child_max_rss_kib(const std::vector<std::string> &args)
{
    pid_t pid = fork();
    if (pid == 0) {
        std::vector<char *> argv;
        for (const std::string &a : args)
            argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    struct rusage ru {};
    wait4(pid, &status, 0, &ru);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return ru.ru_maxrss;
}

// Streaming, end to end: writing all three traces of a 250k-instruction run
// (over 100 MB of trace) costs the process no more memory than a few MB.
TEST(Vcd, TracesStreamWithoutHoldingTheRun)
{
    const std::string d = tmpdir();
    const std::vector<std::string> base = {NPUSIM_EXE, "run", "gelu_tanh", "--dtype", "fp16", "--shape", "1,64,56,56",
                                           "-q"};
    std::vector<std::string> traced = base;
    for (const char *a : {"--trace", "/stream.json", "--konata", "/stream.kanata", "--vcd", "/stream.vcd"})
        traced.push_back(a[0] == '/' ? d + a : std::string(a));
    long plain = child_max_rss_kib(base), with = child_max_rss_kib(traced);
    std::ifstream json(d + "/stream.json", std::ios::ate | std::ios::binary);
    EXPECT_GT(long(json.tellg()), 50l << 20);
    EXPECT_LT(with - plain, 8l << 10) << plain << " KiB without traces, " << with << " KiB with";
    for (const char *f : {"/stream.json", "/stream.kanata", "/stream.vcd"})
        std::remove((d + f).c_str());
}

TEST(Vcd, TracesNeedTheTimedMode)
{
    Result r = run_cmd(std::string(NPUSIM_EXE) + " run relu --set sim.mode=functional --vcd " + tmpdir() + "/f.vcd");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("sim.mode: timed"), std::string::npos) << r.err;
}
