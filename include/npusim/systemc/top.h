// The top of the SystemC model: one NpuCoreModule per timed core, the L2
// and the DRAM (memory.model l2), an optional VcdProbe per core, and the
// scheduler thread that runs the cores in rounds and moves SystemC time.
// A platform's own sc_main instantiates it too (docs/systemc.md), binding
// memory_socket() to its own memory target when ScOptions::external_memory.
#pragma once

#include <memory>
#include <systemc>
#include <vector>

#include "core_module.h"
#include "memory.h"
#include "engine.h"
#include "vcd_probe.h"

namespace npusim::sc {

// Scheduling, as npu_run_timed (the same C calls, see run.h): each turn
// goes to the running core with the earliest local clock, which runs until
// its DMA transfer must wait for another core's earlier one, or it gets a
// quantum (sim.quantum cycles) ahead of the next core; when no core runs,
// barriers settle; a trap stops its own core. Between turns SystemC time
// advances to the earliest local clock among the cores not finished: time
// never passes a core that may still report something before it, so VCD
// changes replay at their own cycle, and transfers reach the shared L2 in
// the order of their start cycles whatever the quantum. The memory
// system's modules (MemoryL2, MemoryDram) are members of this top when
// memory.model is l2, bound to the cores' DMA sockets; once
// every core has finished, the top drains the L2's dirty lines to the DRAM
// through them (npu_run_drain) at the last core's cycle.
class NpuTop : public sc_core::sc_module {
public:
    NpuTop(const sc_core::sc_module_name &name, npu_timed_core *const *tcs, unsigned n, const npu_run_limits &lim,
           const ScOptions &opts, sc_core::sc_trace_file *vcd);

    ~NpuTop() override;

    // After sc_start() returns: rounds, end time and the VCD replay counts.
    ScRunInfo run_info() const;

    // The L2's socket to the next level (memory.model l2 with
    // ScOptions::external_memory; else null): bind it to a TLM-2.0 target
    // before sc_start. Requests are timing-only (data_ptr null: the data
    // moves in the functional model), line-sized, and carry their cycle as
    // SystemC time + the annotated delay; the target adds its latency to the
    // delay, as Accellera's lt_target does.
    tlm_utils::simple_initiator_socket<MemoryL2> *memory_socket() { return external_memory_ ? &l2_->dram_socket : nullptr; }

    // The turns' quantum, in cycles: tlm_utils::tlm_quantumkeeper's global
    // quantum when the platform set one, else sim.quantum (which sets it).
    // Results do not depend on it (run.h).
    static uint64_t quantum_cycles();

private:
    void schedule();  // SC_THREAD
    bool round();     // one turn (or a barrier settling); false when the run is over
    void finish_core(unsigned k);
    uint64_t earliest_running_cycle() const;
    void feed_probes();

    static void on_issue(void *ctx, const npu_issue_event *ev);
    static uint64_t route_line(void *ctx, unsigned core, uint64_t now, uint64_t addr, unsigned bytes, int is_write);

    struct HookCtx {
        NpuTop *top;
        unsigned core;
    };

    std::vector<npu_timed_core *> tcs_;
    std::vector<std::unique_ptr<NpuCoreModule>> cores_;
    std::vector<std::unique_ptr<VcdProbe>> probes_;
    std::unique_ptr<MemoryVcdProbe> memory_probe_;  // memory.model: l2 with a VCD
    npu_memsys *memsys_ = nullptr;  // memory.model: l2 (the cores' DMA backend)
    std::unique_ptr<MemoryDram> dram_;
    std::unique_ptr<MemoryL2> l2_;
    std::vector<HookCtx> hook_ctx_;
    std::vector<bool> finished_;
    std::vector<uint64_t> reported_;  // with a VCD: the issue cycle of each core's latest issue event
    std::function<void(unsigned, const npu_issue_event &)> forward_;
    sc_core::sc_event fed_;
    bool over_ = false;
    bool external_memory_ = false;
    uint64_t rounds_ = 0, end_cycle_ = 0;
};

}  // namespace npusim::sc
