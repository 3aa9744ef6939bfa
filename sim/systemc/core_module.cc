// The core module's thread: wait for a turn, step the timing model ahead,
// hand the turn back.
#include "npusim/systemc/core_module.h"

#include "npusim/systemc/clock.h"
#include "npusim/systemc/memory.h"

namespace npusim::sc {

NpuCoreModule::NpuCoreModule(const sc_core::sc_module_name &name, npu_timed_core *tc, const npu_run_limits &lim,
                             bool with_dma_socket)
    : sc_core::sc_module(name), tc_(tc), core_(npu_timed_core_core(tc)), lim_(lim)
{
    if (with_dma_socket)
        dma_socket = std::make_unique<tlm_utils::simple_initiator_socket<NpuCoreModule>>("dma_socket");
    SC_HAS_PROCESS(NpuCoreModule);
    SC_THREAD(run);
}

void NpuCoreModule::turn()
{
    // The same turn as npu_run_timed's (sim/run.c): one source of truth.
    progressed_ = npu_run_turn(all_, n_, index_, horizon_, &lim_) != 0;
}

uint64_t NpuCoreModule::send_line(uint64_t now, uint64_t addr, unsigned bytes, bool is_write)
{
    return transact(*dma_socket->operator->(), is_write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, now, addr,
                    bytes);
}

void NpuCoreModule::run()
{
    for (;;) {
        wait(go);
        if (retired_)
            end_thread();
        turn();
        done.notify();
    }
}

}  // namespace npusim::sc
