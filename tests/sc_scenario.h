// Shared by the SystemC tests: a scenario runs in the SystemC engine in a
// child process (SystemC elaborates one model per process: this test binary
// re-executed with --scenario) or in the C engine in process, and the tests
// compare what the two engines decided.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "config.h"
#include "runner.h"

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

namespace sc_test {

extern std::string self_exe;  // this test binary, re-executed for scenarios

using cli_test::slurp;
using cli_test::tmpdir;
using cli_test::write;

struct Result {
    int status;
    std::string out, err;
};
Result run_cmd(const std::string &cmd);  // stdout captured, stderr through a file

// One run, described by its arguments (passed to the child on its command line).
struct Scenario {
    std::string kernel = "relu", dtype = "fp32", shape = "1,16,8,8";
    std::vector<std::string> sets;
    uint64_t max_instructions = 0, max_cycles = 0;
    std::string vcd;
    uint64_t trace_start = 0, trace_end = UINT64_MAX;
    bool twice = false;  // run the SystemC engine a second time (it must refuse)

    std::vector<std::string> args() const
    {
        std::vector<std::string> a = {kernel, dtype, shape, std::to_string(max_instructions),
                                      std::to_string(max_cycles), vcd.empty() ? "-" : vcd,
                                      std::to_string(trace_start), std::to_string(trace_end), twice ? "1" : "0"};
        a.insert(a.end(), sets.begin(), sets.end());
        return a;
    }
    static Scenario parse(int argc, char **argv, int first)
    {
        Scenario s;
        s.kernel = argv[first];
        s.dtype = argv[first + 1];
        s.shape = argv[first + 2];
        s.max_instructions = std::stoull(argv[first + 3]);
        s.max_cycles = std::stoull(argv[first + 4]);
        s.vcd = std::string(argv[first + 5]) == "-" ? "" : argv[first + 5];
        s.trace_start = std::stoull(argv[first + 6]);
        s.trace_end = std::stoull(argv[first + 7]);
        s.twice = std::string(argv[first + 8]) == "1";
        for (int i = first + 9; i < argc; i++)
            s.sets.push_back(argv[i]);
        return s;
    }
    npusim::RunOptions options() const
    {
        npusim::RunOptions o;
        o.kernel = kernel;
        o.dtype = dtype;
        o.shape = npusim::parse_shape(shape);
        for (const std::string &s : sets)
            npusim::apply_override(o.config, s);
        o.max_instructions = max_instructions;
        o.max_cycles = max_cycles;
        return o;
    }
};

// Everything a run's engine decides: per-core stats, retired counts, traps.
nlohmann::json summary(const npusim::RunResult &r);
nlohmann::json run_c(const Scenario &s);

struct ScRun {
    nlohmann::json summary, info;  // info: ScRunInfo, and the SystemC time at the end
    std::string err;
};
ScRun run_sc(const Scenario &s);

// The child side of run_sc (`binary --scenario ARGS...`): prints JSON.
int scenario_main(int argc, char **argv);

// A kernel file (with a manifest) around `body`, in tmpdir().
std::string kernel_file(const std::string &name, const std::string &body);

}  // namespace sc_test
