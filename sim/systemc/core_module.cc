// The core module's thread: wait for a turn, step the timing model ahead,
// hand the turn back.
#include "core_module.h"

#include "run_policy.h"

namespace npusim::sc {

NpuCoreModule::NpuCoreModule(const sc_core::sc_module_name &name, npu_timed_core *tc, const npu_run_limits &lim)
    : sc_core::sc_module(name), tc_(tc), core_(npu_timed_core_core(tc)), lim_(lim)
{
    SC_HAS_PROCESS(NpuCoreModule);
    SC_THREAD(run);
}

void NpuCoreModule::turn()
{
    progressed_ = false;
    const bool limited = lim_.max_instructions || lim_.max_cycles;
    for (unsigned k = 0; k < kQuantum && core_->state == NPU_CORE_RUNNING; k++) {
        // Only a cycle limit needs the local clock: skip the call otherwise.
        if (limited && over_limit(core_, lim_.max_cycles ? npu_timed_now(tc_) : 0, lim_))
            break;
        npu_timed_step(tc_);
        progressed_ = true;
    }
}

void NpuCoreModule::run()
{
    for (;;) {
        wait(go);
        if (retired_)
            return;
        turn();
        done.notify();
    }
}

}  // namespace npusim::sc
