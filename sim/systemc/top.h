// The top of the SystemC model: one NpuCoreModule per timed core, an
// optional VcdProbe per core, and the scheduler thread that runs the cores
// in rounds and moves SystemC time.
#pragma once

#include <memory>
#include <systemc>
#include <vector>

#include "core_module.h"
#include "engine.h"
#include "vcd_probe.h"

namespace npusim::sc {

// Scheduling, as npu_run_timed: rounds in which every core in turn runs one
// quantum (core 0 first, so even cores that share GM see the same order);
// after each round, barriers settle, limits and traps end the run, a round in
// which no core moved is a deadlock. Between rounds SystemC time advances to
// the earliest local clock among the cores still running: time never passes
// a core that may still report something before it, so VCD changes replay at
// their own cycle and, later, a shared L2 sees requests in time order.
// Future memory-system modules (L2, DRAM) are members of this top, bound to
// the cores' DMA sockets (see NpuCoreModule).
class NpuTop : public sc_core::sc_module {
public:
    NpuTop(const sc_core::sc_module_name &name, npu_timed_core *const *tcs, unsigned n, const npu_run_limits &lim,
           const ScOptions &opts, sc_core::sc_trace_file *vcd);

    // After sc_start() returns: rounds, end time and the VCD replay counts.
    ScRunInfo run_info() const;

private:
    void schedule();  // SC_THREAD
    bool round();     // one quantum per core; false when the run is over
    void finish_core(unsigned k);
    uint64_t earliest_running_cycle() const;
    void feed_probes();

    static void on_issue(void *ctx, const npu_issue_event *ev);

    struct HookCtx {
        NpuTop *top;
        unsigned core;
    };

    std::vector<npu_timed_core *> tcs_;
    std::vector<std::unique_ptr<NpuCoreModule>> cores_;
    std::vector<std::unique_ptr<VcdProbe>> probes_;
    std::vector<HookCtx> hook_ctx_;
    std::vector<bool> finished_;
    std::function<void(unsigned, const npu_issue_event &)> forward_;
    sc_core::sc_event fed_;
    bool over_ = false;
    uint64_t rounds_ = 0, end_cycle_ = 0;
};

}  // namespace npusim::sc
