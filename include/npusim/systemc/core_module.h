// One NPU core as an sc_module: it holds a pointer to the C timing model and
// only translates between it and the SystemC kernel. No pipeline logic lives
// here: npu_timed_step() does all of it.
#pragma once

#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "npusim/run.h"
#include "npusim/timing.h"

namespace npusim::sc {

// Temporal decoupling: when the scheduler hands the core a turn (`go`), its
// thread runs npu_run_turn(): it steps the timing model without waking the
// SystemC kernel until the core's own clock (npu_timed_now) reaches the
// turn's horizon (npu_run_horizon: the next core's clock + sim.quantum), and
// stops early when its DMA transfer must wait for another core's earlier
// one (run.h), at a barrier, halt or trap. Then it signals `done`; SystemC time itself is advanced by the
// scheduler (NpuTop), to the earliest local clock of the cores still running.
//
// DMA (memory.model: l2): the core's DMA engine, the C model in memsys.c,
// cuts each transfer into line requests; NpuTop hands each to its core's
// send_line, which sends it through dma_socket as a b_transport whose
// annotated delay is the line's cycle minus SystemC time (the core runs
// ahead of it); the delay returned makes the line's completion. Without the
// memory system (ideal memory) the core has no socket.
class NpuCoreModule : public sc_core::sc_module {
public:
    NpuCoreModule(const sc_core::sc_module_name &name, npu_timed_core *tc, const npu_run_limits &lim,
                  bool with_dma_socket);

    std::unique_ptr<tlm_utils::simple_initiator_socket<NpuCoreModule>> dma_socket;  // memory.model: l2
    // One line request at cycle `now` through dma_socket; returns its completion cycle.
    uint64_t send_line(uint64_t now, uint64_t addr, unsigned bytes, bool is_write);

    sc_core::sc_event go;    // notified by the scheduler: run one turn
    sc_core::sc_event done;  // notified by this core: the turn is over

    npu_timed_core *timed() const { return tc_; }
    npu_core *core() const { return core_; }
    bool progressed() const { return progressed_; }  // stepped at least once in the last turn
    void retire() { retired_ = true; }                // the thread ends (end_thread) at its next turn
    // The next turn: this core is `index` of the run's n timed cores.
    void set_turn(npu_timed_core *const *all, unsigned n, unsigned index, uint64_t horizon)
    {
        all_ = all;
        n_ = n;
        index_ = index;
        horizon_ = horizon;
    }

private:
    void run();   // SC_THREAD
    void turn();  // one turn, as in the inner loop of npu_run_timed (npu_run_turn)

    npu_timed_core *tc_;
    npu_core *core_;
    npu_run_limits lim_;
    npu_timed_core *const *all_ = nullptr;
    unsigned n_ = 0, index_ = 0;
    uint64_t horizon_ = 0;
    bool progressed_ = false;
    bool retired_ = false;
};

}  // namespace npusim::sc
