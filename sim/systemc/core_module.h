// One NPU core as an sc_module: it holds a pointer to the C timing model and
// only translates between it and the SystemC kernel. No pipeline logic lives
// here: npu_timed_step() does all of it.
#pragma once

#include <systemc>

#include "npusim/run.h"
#include "npusim/timing.h"

namespace npusim::sc {

// Temporal decoupling: when the scheduler hands the core a turn (`go`), its
// thread steps the timing model up to kQuantum instructions without waking
// the SystemC kernel, ahead of SystemC time on the core's own clock
// (npu_timed_now), and stops early at a transaction boundary: a barrier, halt
// or trap. Then it signals `done`; SystemC time itself is advanced by the
// scheduler (NpuTop), to the earliest local clock of the cores still running.
//
// Seam for the memory system: DMA goes to an ideal memory inside the timing
// model today. When L2 and DRAM become sc_modules, this module grows a
// tlm_utils::simple_initiator_socket<NpuCoreModule> dma_socket; the step loop
// ends the turn at every DMA the step reports (npu_step_info.dma) and sends it
// as a b_transport whose annotated delay is the core's local offset
// (npu_timed_now - sc_time_stamp), and the returned delay becomes the
// transfer's completion in the timing model.
class NpuCoreModule : public sc_core::sc_module {
public:
    NpuCoreModule(const sc_core::sc_module_name &name, npu_timed_core *tc, const npu_run_limits &lim);

    sc_core::sc_event go;    // notified by the scheduler: run one turn
    sc_core::sc_event done;  // notified by this core: the turn is over

    npu_timed_core *timed() const { return tc_; }
    npu_core *core() const { return core_; }
    bool progressed() const { return progressed_; }  // stepped at least once in the last turn
    void retire() { retired_ = true; }                // the thread ends at its next turn

private:
    void run();   // SC_THREAD
    void turn();  // one quantum, as in the inner loop of npu_run_timed

    npu_timed_core *tc_;
    npu_core *core_;
    npu_run_limits lim_;
    bool progressed_ = false;
    bool retired_ = false;
};

}  // namespace npusim::sc
