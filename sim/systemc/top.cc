// The scheduler: turns to the earliest core (sim/run.c's policy), barrier
// release, stop conditions, and SystemC time kept at the earliest core's clock.
#include "npusim/systemc/top.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "npusim/systemc/clock.h"

namespace npusim::sc {

namespace {

// SystemC elaborates modules only before sc_start: a second NpuTop in one
// process got SystemC's two-line E529 "insert module failed" instead.
const sc_core::sc_module_name &elaborating(const sc_core::sc_module_name &name)
{
    if (sc_core::sc_get_status() != sc_core::SC_ELABORATION)
        throw std::logic_error("npusim::sc::NpuTop: SystemC elaborates modules only before sc_start, so a process "
                               "runs one NpuTop (npusim's C engine runs any number)");
    return name;
}

}  // namespace

NpuTop::NpuTop(const sc_core::sc_module_name &name, npu_timed_core *const *tcs, unsigned n,
               const npu_run_limits &lim, const ScOptions &opts, sc_core::sc_trace_file *vcd)
    : sc_core::sc_module(elaborating(name)), tcs_(tcs, tcs + n), hook_ctx_(n), finished_(n, false), reported_(n, 0), forward_(opts.forward)
{
    // The quantum is TLM's: a platform that set its own keeps it; else the
    // config's sim.quantum becomes the global quantum.
    if (n && tlm_utils::tlm_quantumkeeper::get_global_quantum() == sc_core::SC_ZERO_TIME) {
        const uint64_t q = npu_timed_core_config(tcs[0])->sim_quantum;
        tlm_utils::tlm_quantumkeeper::set_global_quantum(cycle_time(q ? q : uint64_t(NPU_SIM_QUANTUM_DEFAULT)));
    }
    // memory.model: l2: every core's DMA backend is one memory system; its
    // line requests then travel core -> L2 -> DRAM over TLM sockets.
    void *ctx = nullptr;
    if (n && npu_timed_core_dma_backend(tcs[0], &ctx) == &npu_memsys_dma)
        memsys_ = static_cast<npu_memsys *>(ctx);
    for (unsigned k = 0; k < n; k++)
        cores_.push_back(std::make_unique<NpuCoreModule>(("core" + std::to_string(k)).c_str(), tcs[k], lim,
                                                         memsys_ != nullptr));
    if (memsys_) {
        l2_ = std::make_unique<MemoryL2>("l2", memsys_, n, !opts.external_memory);
        for (unsigned k = 0; k < n; k++)
            cores_[k]->dma_socket->bind(*l2_->core_socket[k]);
        external_memory_ = opts.external_memory;
        if (!external_memory_) {
            dram_ = std::make_unique<MemoryDram>("dram", memsys_);
            l2_->dram_socket.bind(dram_->socket);
        }
        npu_memsys_set_line_port(memsys_, &NpuTop::route_line, this);
    }
    if (vcd) {
        // Recording needs the issue hook; RunOptions::attach may have set
        // one, and `forward` passes events on to it.
        for (unsigned k = 0; k < n; k++) {
            probes_.push_back(std::make_unique<VcdProbe>(("vcd" + std::to_string(k)).c_str(), k, vcd,
                                                         opts.trace_start, opts.trace_end, fed_, over_));
            hook_ctx_[k] = {this, k};
            npu_timed_core_set_hook(tcs[k], &NpuTop::on_issue, &hook_ctx_[k]);
        }
        if (memsys_)
            memory_probe_ = std::make_unique<MemoryVcdProbe>("vcd_memory", memsys_, vcd, opts.trace_start,
                                                             opts.trace_end, fed_, over_);
    }
    SC_HAS_PROCESS(NpuTop);
    SC_THREAD(schedule);
}

// The memory system outlives the top (the runner reads its stats): give it
// back its own L2 -> DRAM path.
NpuTop::~NpuTop()
{
    if (memsys_) {
        npu_memsys_set_line_port(memsys_, nullptr, nullptr);
        npu_mem_port port = npu_memsys_dram_port(memsys_);
        npu_l2_set_next_level(npu_memsys_l2(memsys_), &port);
    }
}

uint64_t NpuTop::quantum_cycles()
{
    // A quantum shorter than a cycle is one cycle.
    return std::max<uint64_t>(1, tlm_utils::tlm_quantumkeeper::get_global_quantum().value() / ticks_per_cycle());
}

uint64_t NpuTop::route_line(void *ctx, unsigned core, uint64_t now, uint64_t addr, unsigned bytes, int is_write)
{
    return static_cast<NpuTop *>(ctx)->cores_[core]->send_line(now, addr, bytes, is_write != 0);
}

void NpuTop::on_issue(void *ctx, const npu_issue_event *ev)
{
    auto *hc = static_cast<HookCtx *>(ctx);
    hc->top->reported_[hc->core] = ev->issue;
    hc->top->probes_[hc->core]->recorder.issue(*ev);
    if (hc->top->forward_)
        hc->top->forward_(hc->core, *ev);
}

// A core's timeline is complete once it is finished (drain charged).
void NpuTop::finish_core(unsigned k)
{
    if (finished_[k])
        return;
    finished_[k] = true;
    npu_timed_finish(tcs_[k]);
    if (!probes_.empty())
        probes_[k]->recorder.finish(npu_timed_stats(tcs_[k])->cycles);
}

uint64_t NpuTop::earliest_running_cycle() const
{
    uint64_t t = UINT64_MAX;
    for (size_t k = 0; k < tcs_.size(); k++) {
        if (finished_[k])
            continue;
        t = std::min(t, npu_timed_now(tcs_[k]));
        // A DMA instruction waiting for its transfer to be booked has not
        // reported its issue yet; its probe still closes the cycle before.
        if (!probes_.empty() && npu_timed_dma_pending(tcs_[k]) != UINT64_MAX)
            t = std::min(t, reported_[k]);
    }
    return t;
}

// New changes may be queued: the replay threads look before time moves on.
void NpuTop::feed_probes()
{
    if (!probes_.empty())
        fed_.notify();
}

// One turn, as one iteration of npu_run_timed's loop: the earliest core runs
// (npu_run_pick, npu_run_horizon, npu_run_turn in its thread); when none
// runs, a barrier settles or the run ends (npu_run_settle).
bool NpuTop::round()
{
    const unsigned n = unsigned(tcs_.size());
    const int k = npu_run_pick(tcs_.data(), n);
    if (k < 0)
        return npu_run_settle(tcs_.data(), n) != 0;
    NpuCoreModule &core = *cores_[k];
    core.set_turn(tcs_.data(), n, unsigned(k), npu_run_horizon_within(tcs_.data(), n, unsigned(k), quantum_cycles()));
    core.go.notify();
    wait(core.done);
    rounds_++;
    // A stopped core's timeline ends here; finishing now rather than at the
    // end (as npu_run_timed does) changes no stat and lets time pass it.
    if (core.core()->state == NPU_CORE_HALTED || core.core()->state == NPU_CORE_TRAPPED)
        finish_core(unsigned(k));
    return true;
}

void NpuTop::schedule()
{
    wait(sc_core::SC_ZERO_TIME);  // every core thread now waits for its turn
    while (round()) {
        feed_probes();
        const uint64_t earliest = earliest_running_cycle();
        if (earliest != UINT64_MAX)  // UINT64_MAX: every core has finished
            wait_until_cycle(earliest);
    }
    uint64_t end = 0;
    for (unsigned k = 0; k < tcs_.size(); k++) {
        finish_core(k);
        end = std::max(end, npu_timed_stats(tcs_[k])->cycles);
    }
    feed_probes();
    wait_until_cycle(end);  // the last core's last cycle: every VCD change is due by now
    end_cycle_ = now_cycle();
    // The end-of-run write-back of the L2's dirty lines, through the L2 ->
    // DRAM socket from this cycle (npu_run_drain, as npu_run_timed does).
    if (memsys_)
        npu_run_drain(tcs_.data(), unsigned(tcs_.size()));
    // The memory scope's last changes (posted writebacks, the drain) may come
    // after the last core's cycle: replay them before the VCD closes.
    if (memory_probe_) {
        feed_probes();
        wait_until_cycle(memory_probe_->latest_cycle());
    }
    over_ = true;
    feed_probes();
    // A VCD file gets a time step's values only once time moves past it: one
    // more cycle writes the idle state the cores end in.
    if (!probes_.empty())
        wait(cycle_time(1));
    for (auto &core : cores_) {
        core->retire();
        core->go.notify();
    }
    end_thread();
}

ScRunInfo NpuTop::run_info() const
{
    ScRunInfo info;
    info.rounds = rounds_;
    info.end_cycle = end_cycle_;
    for (const auto &p : probes_) {
        info.vcd_changes += p->replayed;
        info.vcd_late += p->late;
        info.vcd_max_queued = std::max<uint64_t>(info.vcd_max_queued, p->recorder.max_queued());
    }
    if (memory_probe_) {
        info.vcd_changes += memory_probe_->replayed;
        info.vcd_late += memory_probe_->late;
        info.vcd_max_queued = std::max<uint64_t>(info.vcd_max_queued, memory_probe_->max_queued);
    }
    return info;
}

}  // namespace npusim::sc
