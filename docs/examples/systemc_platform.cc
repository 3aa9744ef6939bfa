// A virtual platform of one's own around npusim (docs/systemc.md): npusim's
// cores and shared L2 (npusim::sc::NpuTop) in front of a memory this file
// models itself, a TLM-2.0 loosely-timed target in the style of Accellera's
// lt_target, with the platform's quantum set on tlm_quantumkeeper. The
// library prepares the run (config, kernel, inputs) and checks it after
// (outputs against the binary64 reference, the report); the platform's
// sc_main elaborates and simulates in between, through npu_sim_run's engine
// hook.
//
//   systemc_platform KERNEL CONFIG.yaml [options]
//     --set KEY=VALUE      a config override (repeatable)
//     --dtype fp16|fp32    --shape N,C,H,W
//     --latency CYCLES     this memory's access latency (default 100)
//     --bytes-per-cycle B  its bandwidth (default 32)
//     --quantum CYCLES     the TLM global quantum (default: sim.quantum)
//     --npusim-dram        bind npusim's own DRAM model instead of this memory
//
// Prints one line: cycles, pass/fail, and the requests this memory served.
// Builds against the installed library:
//   c++ -std=c++17 systemc_platform.cc $(pkg-config --cflags --libs npusim-systemc)
#include <npusim/sim.h>
#include <npusim/systemc/engine.h>
#include <npusim/systemc/top.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

namespace {

const sc_core::sc_time kCycle(1, sc_core::SC_NS);  // npusim's clock: one cycle per nanosecond

// The platform's memory: one port that serves `bytes_per_cycle` and answers
// `latency` cycles after a request's last byte. Loosely timed: a request's
// time is SystemC time + its annotated delay, and the answer is a longer
// delay (no wait, no event). npusim's requests are timing-only (data_ptr
// null: the data moves in npusim's functional model).
struct PlatformMemory : sc_core::sc_module {
    tlm_utils::simple_target_socket<PlatformMemory> socket;
    uint64_t latency, bytes_per_cycle;
    uint64_t reads = 0, writes = 0;
    sc_core::sc_time free_at = sc_core::SC_ZERO_TIME;  // the port's next free time

    PlatformMemory(const sc_core::sc_module_name &name, uint64_t latency_cycles, uint64_t bytes)
        : sc_module(name), socket("socket"), latency(latency_cycles), bytes_per_cycle(bytes)
    {
        socket.register_b_transport(this, &PlatformMemory::b_transport);
    }

    void b_transport(tlm::tlm_generic_payload &tx, sc_core::sc_time &delay)
    {
        const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
        const sc_core::sc_time start = std::max(arrival, free_at);
        const uint64_t beats = (tx.get_data_length() + bytes_per_cycle - 1) / bytes_per_cycle;
        free_at = start + double(beats) * kCycle;
        delay = free_at + double(latency) * kCycle - sc_core::sc_time_stamp();
        (tx.is_write() ? writes : reads)++;
        tx.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

struct Platform {
    uint64_t latency = 100, bytes_per_cycle = 32;
    bool npusim_dram = false;
    uint64_t reads = 0, writes = 0;
};

// npu_sim_run's engine hook: elaborate, simulate, return once every core
// has finished. SystemC elaborates once per process: one run per process.
void run_platform(void *ctx, npu_timed_core *const *cores, unsigned n, const npu_run_limits *lim)
{
    auto *p = static_cast<Platform *>(ctx);
    npusim::ScOptions opts;
    opts.external_memory = !p->npusim_dram;
    npusim::sc::NpuTop npu("npu", cores, n, *lim, opts, nullptr);
    std::unique_ptr<PlatformMemory> memory;
    if (auto *to_memory = npu.memory_socket()) {  // memory.model l2
        memory = std::make_unique<PlatformMemory>("memory", p->latency, p->bytes_per_cycle);
        to_memory->bind(memory->socket);
    }
    npusim::sc_start_checked();
    if (memory) {
        p->reads = memory->reads;
        p->writes = memory->writes;
    }
}

int usage(const char *argv0)
{
    std::fprintf(stderr, "usage: %s KERNEL CONFIG.yaml [--set K=V]... [--dtype D] [--shape N,C,H,W] "
                         "[--latency C] [--bytes-per-cycle B] [--quantum C] [--npusim-dram]\n", argv0);
    return 2;
}

}  // namespace

int sc_main(int argc, char **argv)
{
    if (argc < 3)
        return usage(argv[0]);
    char err[512];
    npu_sim_config *cfg = npu_sim_config_load(argv[2], err, sizeof err);
    if (!cfg) {
        std::fprintf(stderr, "%s\n", err);
        return 2;
    }
    Platform platform;
    npu_sim_run_options opts;
    npu_sim_run_options_default(&opts);
    opts.engine = run_platform;
    opts.engine_ctx = &platform;
    std::string dtype;
    for (int i = 3; i < argc; i++) {
        const std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--npusim-dram") {
            platform.npusim_dram = true;
            continue;
        }
        if (!v)
            return usage(argv[0]);
        i++;
        if (a == "--set") {
            const char *eq = std::strchr(v, '=');
            if (!eq || npu_sim_config_set(cfg, std::string(v, eq).c_str(), eq + 1, err, sizeof err) != NPU_OK) {
                std::fprintf(stderr, "%s\n", eq ? err : "--set takes KEY=VALUE");
                npu_sim_config_free(cfg);
                return 2;
            }
        } else if (a == "--dtype") {
            dtype = v;
        } else if (a == "--shape") {
            if (std::sscanf(v, "%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64, &opts.shape[0], &opts.shape[1],
                            &opts.shape[2], &opts.shape[3]) != 4)
                return usage(argv[0]);
        } else if (a == "--latency") {
            platform.latency = std::strtoull(v, nullptr, 10);
        } else if (a == "--bytes-per-cycle") {
            platform.bytes_per_cycle = std::max<uint64_t>(1, std::strtoull(v, nullptr, 10));
        } else if (a == "--quantum") {
            tlm_utils::tlm_quantumkeeper::set_global_quantum(double(std::strtoull(v, nullptr, 10)) * kCycle);
        } else {
            return usage(argv[0]);
        }
    }
    if (!dtype.empty())
        opts.dtype = dtype.c_str();

    npu_sim_result *r = npu_sim_run(cfg, argv[1], &opts, err, sizeof err);
    npu_sim_config_free(cfg);
    if (!r) {
        std::fprintf(stderr, "%s\n", err);
        return 2;
    }
    std::printf("cycles=%" PRIu64 " passed=%d memory_reads=%" PRIu64 " memory_writes=%" PRIu64 "\n",
                npu_sim_result_cycles(r), npu_sim_result_passed(r), platform.reads, platform.writes);
    const int status = npu_sim_result_passed(r) ? 0 : 1;
    npu_sim_result_free(r);
    return status;
}
