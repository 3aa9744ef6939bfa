// Scenario runs for the SystemC tests (sc_scenario.h).
#include "sc_scenario.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <systemc>

#include "npusim/systemc/engine.h"
#include "npusim/systemc/top.h"

using namespace npusim;
using nlohmann::json;

namespace sc_test {

std::string self_exe;

Result run_cmd(const std::string &cmd)
{
    std::string err = tmpdir() + "/stderr.txt";
    Result r{};
    FILE *p = popen((cmd + " 2>" + err).c_str(), "r");
    std::array<char, 65536> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
        r.out.append(buf.data(), n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.err = slurp(err);
    return r;
}

static json stats_json(const npu_core_stats &s)
{
    auto arr = [](const uint64_t *p, unsigned n) { return std::vector<uint64_t>(p, p + n); };
    return {{"cycles", s.cycles},
            {"instructions", s.instructions},
            {"issue_cycles", s.issue_cycles},
            {"stall", arr(s.stall, NPU_NUM_STALLS)},
            {"raw_by_unit", arr(s.raw_by_unit, NPU_NUM_UNITS)},
            {"issue_histogram", arr(s.issue_histogram, NPU_MAX_ISSUE_WIDTH + 1)},
            {"slot_issued", arr(s.slot_issued, NPU_MAX_ISSUE_WIDTH)},
            {"unit_issued", arr(s.unit_issued, NPU_NUM_UNITS)},
            {"unit_busy", arr(s.unit_busy, NPU_NUM_UNITS)},
            {"class_issued", arr(s.class_issued, NPU_NUM_CLASSES)},
            {"dma", {s.dma_transfers, s.dma_bytes_in, s.dma_bytes_out}},
            {"ub_bank_extra", s.ub_bank_extra},
            {"critical_path", s.critical_path}};
}

// Everything a run's engine decides: per-core stats, retired counts, traps.
json summary(const RunResult &r)
{
    json cores = json::array(), traps = json::array();
    for (const npu_core_stats &s : r.core_stats)
        cores.push_back(stats_json(s));
    for (const TrapReport &t : r.traps)
        traps.push_back({{"core", t.core}, {"kind", npu_trap_name(t.trap.kind)}, {"pc", t.trap.pc},
                         {"message", t.trap.message}});
    return {{"cores", cores}, {"retired", r.instructions_per_core}, {"traps", traps}};
}

json run_c(const Scenario &s) { return summary(run_kernel(s.options())); }

ScRun run_sc(const Scenario &s)
{
    std::string cmd = self_exe + " --scenario";
    for (const std::string &a : s.args())
        cmd += " '" + a + "'";
    Result r = run_cmd(cmd);
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
    ScRun out;
    out.err = r.err;
    if (r.status != 0)
        return out;
    json j = json::parse(r.out);
    out.summary = j.at("summary");
    out.info = j.at("info");
    return out;
}

// The child: one SystemC run, its summary as JSON on stdout.
int scenario_main(int argc, char **argv)
{
    Scenario s = Scenario::parse(argc, argv, 2);
    RunOptions o = s.options();
    ScRunInfo info;
    ScOptions sc;
    sc.vcd_path = s.vcd;
    sc.trace_start = s.trace_start;
    sc.trace_end = s.trace_end;
    sc.info = &info;
    o.engine = systemc_engine(sc);
    RunResult r = run_kernel(o);
    json out = {{"summary", summary(r)},
                {"info",
                 {{"end_cycle", info.end_cycle},
                  {"rounds", info.rounds},
                  {"vcd_changes", info.vcd_changes},
                  {"vcd_late", info.vcd_late},
                  {"vcd_max_queued", info.vcd_max_queued},
                  {"sc_time_cycles", uint64_t(sc_core::sc_time_stamp().to_seconds() * 1e9 + 0.5)}}}};
    if (s.twice) {
        try {
            run_kernel(o);
            out["second_run"] = "ran";
        } catch (const std::logic_error &e) {
            out["second_run"] = e.what();
        }
        // A platform's own NpuTop after sc_start: one line of npusim's, not
        // SystemC's two-line E529.
        try {
            npusim::sc::NpuTop late("late", nullptr, 0, npu_run_limits{}, ScOptions{}, nullptr);
            out["late_top"] = "built";
        } catch (const std::logic_error &e) {
            out["late_top"] = e.what();
        }
    }
    std::cout << out.dump() << "\n";
    return 0;
}

std::string kernel_file(const std::string &name, const std::string &body)
{
    std::string path = tmpdir() + "/" + name + ".s";
    write(path, "; @kernel " + name +
                    "\n; @input x\n; @output y\n; @dtypes fp32\n; @reference relu\n; @tolerance fp32 ulp=0\n" + body);
    return path;
}

}  // namespace sc_test
