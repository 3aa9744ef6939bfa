// End-to-end and simulation speed (issue 15, item 6) on gelu_tanh fp16
// 1x64x56x56, default config, every element checked, in one benchmark run so
// that both ratios see the same machine load:
//   (a) the whole `npusim run` (the built executable, as a user runs it) over
//       the engine-only time of the same run; goal <= 1.3;
//   (b) the engine's simulated cycles per second over those of an empty
//       clocked SC_METHOD (the floor of a model that wakes every cycle); goal >= 3.
// "The engine" is the one `npusim run` uses: the C engine (npu_run_timed, as
// the C API, Python and `npusim compare` use it). The SystemC engine (`npusim
// run --engine systemc`, and --vcd) is printed beside it.
//
// SystemC elaborates one model per process, so each measurement runs in a
// child: this binary re-executed with --c, --systemc or --empty, printing one
// JSON line. Every figure is the best of several runs, taken in turn (CLI,
// engine, empty loop, ...) so that a burst of load elsewhere hits all of them.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <systemc>
#include <unistd.h>
#include <vector>

#include "npusim/systemc/engine.h"
#include "runner.h"

using namespace npusim;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kGoalWholeOverEngine = 1.3;  // at most
constexpr double kGoalOverEmptyLoop = 3.0;    // at least
constexpr int kReps = 5;
constexpr uint64_t kEmptyCycles = 2000000;

const char *const kCliArgs = "run gelu_tanh --dtype fp16 --shape 1,64,56,56";

// The default config (memory.model: l2), or another memory model.
RunOptions workload(const std::string &memory)
{
    RunOptions o;
    o.kernel = "gelu_tanh";
    o.dtype = "fp16";
    o.shape = {1, 64, 56, 56};
    if (!memory.empty())
        apply_override(o.config, "memory.model=" + memory);
    return o;
}

// Runs the workload once through `inner`, timing the engine alone (and the
// whole in-process run_kernel, for the breakdown).
json measure(const Engine &inner, const std::string &memory)
{
    RunOptions o = workload(memory);
    double seconds = 0;
    o.engine = [&](npu_timed_core *const *cores, unsigned n, const npu_run_limits &lim) {
        auto t0 = Clock::now();
        inner(cores, n, lim);
        seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    };
    RunResult r = run_kernel(o);
    if (!r.passed() || !r.checked)
        throw std::runtime_error("the benchmark kernel did not pass");
    return {{"cycles", r.stats.cycles},
            {"instructions", r.instructions},
            {"seconds", seconds},
            {"run_kernel_seconds", r.host_seconds}};
}

int child_c(const std::string &memory)
{
    std::cout << measure([](npu_timed_core *const *c, unsigned n,
                            const npu_run_limits &lim) { npu_run_timed(c, n, &lim); },
                         memory)
                     .dump()
              << "\n";
    return 0;
}

int child_systemc(const std::string &memory)
{
    std::cout << measure(systemc_engine(ScOptions{}), memory).dump() << "\n";
    return 0;
}

struct EmptyClocked : sc_core::sc_module {
    sc_core::sc_in<bool> clk;
    uint64_t ticks = 0;
    SC_CTOR(EmptyClocked)
    {
        SC_METHOD(tick);
        sensitive << clk.pos();
        dont_initialize();
    }
    void tick() { ticks++; }
};

int child_empty(uint64_t cycles)
{
    sc_core::sc_clock clk("clk", 1, sc_core::SC_NS);
    EmptyClocked m("m");
    m.clk(clk);
    auto t0 = Clock::now();
    sc_core::sc_start(sc_core::sc_time(double(cycles), sc_core::SC_NS));
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::cout << json{{"cycles", m.ticks}, {"seconds", seconds}}.dump() << "\n";
    return 0;
}

json run_child(const std::string &exe, const std::string &args)
{
    FILE *p = popen((exe + " " + args).c_str(), "r");
    if (!p)
        throw std::runtime_error("cannot run " + exe);
    std::string out;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    if (pclose(p) != 0)
        throw std::runtime_error(exe + " " + args + " failed");
    return json::parse(out);
}

// Wall time of one whole `npusim run`, text report included (to /dev/null),
// from spawn to exit: start-up, config, assembly and scheduling, inputs,
// engine, unpacking, the check of every element and the report. `schedules`
// is its NPUSIM_SCHEDULE_CACHE: "off" (the search runs) or a file that holds
// the kernel's schedule (kept from an earlier run; docs/scheduling.md).
// Spawned directly (posix_spawn), not through a shell, whose own start-up
// (about 2 ms on a machine where a page fault costs 11 us) is not npusim's.
double time_cli(const std::string &npusim, const std::string &schedules, const std::string &more = "")
{
    std::vector<std::string> args{npusim};
    std::istringstream words(std::string(kCliArgs) + more);
    for (std::string w; words >> w;)
        args.push_back(w);
    std::vector<char *> argv;
    for (std::string &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_text{"NPUSIM_SCHEDULE_CACHE=" + schedules};
    for (char **e = environ; *e; e++)
        if (std::strncmp(*e, "NPUSIM_SCHEDULE_CACHE=", 22) != 0)
            env_text.push_back(*e);
    std::vector<char *> envp;
    for (std::string &e : env_text)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t to_null;
    posix_spawn_file_actions_init(&to_null);
    posix_spawn_file_actions_addopen(&to_null, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    const std::string what = npusim + " " + kCliArgs + more;
    auto t0 = Clock::now();
    pid_t pid;
    const int rc = posix_spawn(&pid, npusim.c_str(), &to_null, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&to_null);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error(what + " failed (the kernel must pass)");
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double secs(const json &m) { return m["seconds"].get<double>(); }
double rate(const json &m, const char *what) { return m[what].get<double>() / secs(m); }

void keep_best(json &best, const json &m)
{
    if (best.is_null() || secs(m) < secs(best))
        best = m;
}

const char *verdict(bool met) { return met ? "met" : "SHORT"; }

int driver(const std::string &exe, const std::string &npusim)
{
    json sc, c, empty, sc_ideal;
    double cli = 0, searched = 0, cli_sc = 0;
    char kept[] = "/tmp/npusim_bench_schedules_XXXXXX";
    const int fd = mkstemp(kept);
    if (fd < 0)
        throw std::runtime_error("cannot make a temporary file");
    close(fd);
    time_cli(npusim, kept);  // the search runs once and its schedule is kept
    for (int i = 0; i < kReps; i++) {  // in turn: a burst of load elsewhere hits every figure
        const double t = time_cli(npusim, kept), ts = time_cli(npusim, "off");
        const double tsc = time_cli(npusim, kept, " --engine systemc");
        cli = i == 0 ? t : std::min(cli, t);
        searched = i == 0 ? ts : std::min(searched, ts);
        cli_sc = i == 0 ? tsc : std::min(cli_sc, tsc);
        keep_best(sc, run_child(exe, "--systemc"));
        keep_best(empty, run_child(exe, "--empty " + std::to_string(kEmptyCycles)));
        keep_best(c, run_child(exe, "--c"));
        // The same through the ideal memory: what the L2 and DRAM model cost.
        keep_best(sc_ideal, run_child(exe, "--systemc ideal"));
    }
    std::remove(kept);
    if (c["cycles"] != sc["cycles"] || c["instructions"] != sc["instructions"])
        throw std::runtime_error("the C and SystemC engines disagree on the workload");

    const double sc_cps = rate(sc, "cycles"), c_cps = rate(c, "cycles"), empty_cps = rate(empty, "cycles");
    const double whole_over_engine = cli / secs(c), over_empty = c_cps / empty_cps;
    std::printf("npusim speed: gelu_tanh fp16 1x64x56x56, default config, every element checked, the engine in one host thread\n");
    std::printf("  workload: %llu cycles, %llu instructions; every figure the best of %d, taken in turn\n",
                (unsigned long long)c["cycles"].get<uint64_t>(),
                (unsigned long long)c["instructions"].get<uint64_t>(), kReps);
    std::printf("  %-34s %8.4f s  (the schedule kept from an earlier run; searched in the run: %.4f s)\n",
                "whole `npusim run` (wall):", cli, searched);
    std::printf("  %-34s %8.4f s  (the same, schedule kept, loading SystemC for its engine)\n",
                "  with --engine systemc:", cli_sc);
    std::printf("  %-34s %8.4f s  (in-process run_kernel of the same run: %.4f s)\n",
                "C engine only:", secs(c), c["run_kernel_seconds"].get<double>());
    std::printf("  %-34s %8.2f M cycles/s  %8.2f M instructions/s\n", "C engine (npusim run's):",
                c_cps / 1e6, rate(c, "instructions") / 1e6);
    std::printf("  %-34s %8.2f M cycles/s  %8.2f M instructions/s  (%.4f s)\n", "SystemC engine (--engine systemc):",
                sc_cps / 1e6, rate(sc, "instructions") / 1e6, secs(sc));
    std::printf("  %-34s %8.2f M cycles/s  (%.4f s, %llu cycles)\n", "SystemC engine, ideal memory:",
                rate(sc_ideal, "cycles") / 1e6, secs(sc_ideal), (unsigned long long)sc_ideal["cycles"].get<uint64_t>());
    std::printf("  %-34s %8.2f M cycles/s  (%llu cycles in %.3f s)\n", "empty clocked SC_METHOD:", empty_cps / 1e6,
                (unsigned long long)empty["cycles"].get<uint64_t>(), secs(empty));
    std::printf("  (a) whole npusim run / engine-only time:  %6.2fx  goal <= %.1fx: %s\n", whole_over_engine,
                kGoalWholeOverEngine, verdict(whole_over_engine <= kGoalWholeOverEngine));
    std::printf("      with the schedule searched in the run:  %6.2fx\n", searched / secs(c));
    std::printf("      with --engine systemc, over its engine:  %6.2fx\n", cli_sc / secs(sc));
    std::printf("  (b) engine cycles/s / empty SC_METHOD's:   %6.2fx  goal >= %.1fx: %s\n", over_empty,
                kGoalOverEmptyLoop, verdict(over_empty >= kGoalOverEmptyLoop));
    std::printf("  (judged on the C engine, which `npusim run` uses; the SystemC engine gives (b) %.2fx)\n",
                sc_cps / empty_cps);
    std::cout << json{{"cli_seconds", cli},
                      {"cli_searched_seconds", searched},
                      {"cli_systemc_seconds", cli_sc},
                      {"systemc", sc},
                      {"c", c},
                      {"empty", empty},
                      {"systemc_ideal", sc_ideal},
                      {"whole_over_engine", whole_over_engine},
                      {"engine_over_empty", over_empty}}
                     .dump()
              << "\n";
    return 0;  // a measurement: the verdicts are printed
}

}  // namespace

int sc_main(int argc, char **argv)
{
    systemc_quiet();
    try {
        const std::string mode = argc > 1 ? argv[1] : "";
        const std::string memory = argc > 2 ? argv[2] : "";
        if (mode == "--c")
            return child_c(memory);
        if (mode == "--systemc")
            return child_systemc(memory);
        if (mode == "--empty" && argc > 2)
            return child_empty(std::strtoull(argv[2], nullptr, 10));
        char buf[4096];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        const std::string exe = n > 0 ? std::string(buf, size_t(n)) : std::string(argv[0]);
        return driver(exe, argc > 2 && mode == "--npusim" ? argv[2] : NPUSIM_EXE);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "npusim_bench: %s\n", e.what());
        return 1;
    }
}
