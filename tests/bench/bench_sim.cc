// Simulation speed: simulated cycles and instructions per host second for
// gelu_tanh on a 1x64x56x56 fp16 tensor (default config, timed) through the
// C engine and the SystemC engine (and the SystemC engine with the ideal
// memory, for the memory model's share), against an empty clocked SC_METHOD (the
// floor of a model that wakes every cycle). SystemC elaborates one model per
// process, so each measurement runs in a child: this binary re-executed with
// --c, --systemc or --empty, printing one JSON line.
//
// Only the engine is timed (run_kernel's engine callback): assembly, input
// generation and the accuracy check are not simulation.
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <systemc>
#include <unistd.h>

#include "engine.h"
#include "runner.h"

using namespace npusim;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kGoalCyclesPerSecond = 20e6;
constexpr double kGoalInstructionsPerSecond = 10e6;
constexpr double kGoalOverEmptyLoop = 2.0;

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

// Runs the workload once through `inner`, timing the engine alone.
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
    if (!r.passed())
        throw std::runtime_error("the benchmark kernel did not pass");
    return {{"cycles", r.stats.cycles}, {"instructions", r.instructions}, {"seconds", seconds}};
}

int child_c(int reps, const std::string &memory)
{
    json best;
    for (int i = 0; i < reps; i++) {
        json m = measure([](npu_timed_core *const *c, unsigned n, const npu_run_limits &lim) { npu_run_timed(c, n, &lim); },
                         memory);
        if (best.is_null() || m["seconds"].get<double>() < best["seconds"].get<double>())
            best = m;
    }
    std::cout << best.dump() << "\n";
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
    std::string out;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    if (pclose(p) != 0)
        throw std::runtime_error(exe + " " + args + " failed");
    return json::parse(out);
}

double rate(const json &m, const char *what) { return m[what].get<double>() / m["seconds"].get<double>(); }

const char *verdict(double v, double goal) { return v >= goal ? "goal met" : "SHORT of goal"; }

int driver(const std::string &exe)
{
    const int reps = 5;
    json c = run_child(exe, "--c " + std::to_string(reps));
    json sc;
    for (int i = 0; i < reps; i++) {  // one SystemC model per process: best of several processes
        json m = run_child(exe, "--systemc");
        if (sc.is_null() || m["seconds"].get<double>() < sc["seconds"].get<double>())
            sc = m;
    }
    json empty = run_child(exe, "--empty 10000000");
    // The same through the ideal memory: what the L2 and DRAM model cost.
    json sc_ideal;
    for (int i = 0; i < reps; i++) {
        json m = run_child(exe, "--systemc ideal");
        if (sc_ideal.is_null() || m["seconds"].get<double>() < sc_ideal["seconds"].get<double>())
            sc_ideal = m;
    }

    const double sc_cps = rate(sc, "cycles"), sc_ips = rate(sc, "instructions");
    const double c_cps = rate(c, "cycles"), c_ips = rate(c, "instructions");
    const double empty_cps = rate(empty, "cycles");
    std::printf("npusim simulation speed: gelu_tanh fp16 1x64x56x56, default config, timed, one host thread\n");
    std::printf("  workload: %llu cycles, %llu instructions (best of %d)\n",
                (unsigned long long)sc["cycles"].get<uint64_t>(), (unsigned long long)sc["instructions"].get<uint64_t>(),
                reps);
    std::printf("  %-26s %8.2f M cycles/s  %8.2f M instructions/s  (%.4f s)\n", "SystemC engine:", sc_cps / 1e6,
                sc_ips / 1e6, sc["seconds"].get<double>());
    std::printf("  %-26s %8.2f M cycles/s  %8.2f M instructions/s  (%.4f s)\n", "C engine (npu_run_timed):",
                c_cps / 1e6, c_ips / 1e6, c["seconds"].get<double>());
    std::printf("  %-26s %8.2f M cycles/s  %8.2f M instructions/s  (%.4f s, %llu cycles)\n",
                "SystemC, ideal memory:", rate(sc_ideal, "cycles") / 1e6, rate(sc_ideal, "instructions") / 1e6,
                sc_ideal["seconds"].get<double>(), (unsigned long long)sc_ideal["cycles"].get<uint64_t>());
    std::printf("  %-26s %8.2f M cycles/s  (%llu cycles in %.3f s)\n", "empty clocked SC_METHOD:", empty_cps / 1e6,
                (unsigned long long)empty["cycles"].get<uint64_t>(), empty["seconds"].get<double>());
    std::printf("  ratios: SystemC / empty loop %.1fx, SystemC / C engine %.2f\n", sc_cps / empty_cps, sc_cps / c_cps);
    std::printf("  goals (SystemC engine): cycles/s >= 20 M: %s; instructions/s >= 10 M: %s; >= 2x empty loop: %s\n",
                verdict(sc_cps, kGoalCyclesPerSecond), verdict(sc_ips, kGoalInstructionsPerSecond),
                verdict(sc_cps / empty_cps, kGoalOverEmptyLoop));
    std::cout << json{{"systemc", sc}, {"c", c}, {"empty", empty}, {"systemc_ideal", sc_ideal}}.dump() << "\n";
    return 0;
}

}  // namespace

int sc_main(int argc, char **argv)
{
    systemc_quiet();
    try {
        const std::string memory = argc > 3 ? argv[3] : argc > 2 && std::strcmp(argv[1], "--systemc") == 0 ? argv[2] : "";
        if (argc > 2 && std::strcmp(argv[1], "--c") == 0)
            return child_c(std::atoi(argv[2]), memory);
        if (argc > 1 && std::strcmp(argv[1], "--systemc") == 0)
            return child_systemc(memory);
        if (argc > 2 && std::strcmp(argv[1], "--empty") == 0)
            return child_empty(std::strtoull(argv[2], nullptr, 10));
        char buf[4096];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        return driver(n > 0 ? std::string(buf, size_t(n)) : std::string(argv[0]));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "npusim_bench: %s\n", e.what());
        return 1;
    }
}
