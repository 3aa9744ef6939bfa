// Barrier settlement and deadlock for the SystemC scheduler, in the words of
// sim/run.c.
#include "run_policy.h"

namespace npusim::sc {

unsigned count_state(npu_timed_core *const *tcs, unsigned n, npu_core_state s)
{
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        k += npu_timed_core_core(tcs[i])->state == s;
    return k;
}

bool settle_barrier(npu_timed_core *const *tcs, unsigned n, bool *released, uint64_t *release)
{
    *released = false;
    *release = 0;
    unsigned waiting = count_state(tcs, n, NPU_CORE_AT_BARRIER);
    unsigned halted = count_state(tcs, n, NPU_CORE_HALTED);
    unsigned running = count_state(tcs, n, NPU_CORE_RUNNING);
    if (waiting == 0 || running > 0)
        return false;
    if (halted == 0) {
        for (unsigned i = 0; i < n; i++) {
            uint64_t arrival = npu_timed_now(tcs[i]);
            if (npu_timed_core_core(tcs[i])->state == NPU_CORE_AT_BARRIER && arrival + 1 > *release)
                *release = arrival + 1;
        }
        for (unsigned i = 0; i < n; i++)
            npu_timed_core_core(tcs[i])->state = NPU_CORE_RUNNING;
        *released = true;
        return false;
    }
    for (unsigned i = 0; i < n; i++) {
        npu_core *c = npu_timed_core_core(tcs[i]);
        if (c->state == NPU_CORE_AT_BARRIER) {
            c->pc--; /* barrier advanced the PC before waiting: name the barrier itself */
            npu_core_raise(c, NPU_TRAP_BARRIER, 0,
                           "barrier never completes: %u of %u cores halted without reaching it", halted, n);
        }
    }
    return true;
}

void trap_deadlock(npu_timed_core *const *tcs, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        npu_core *c = npu_timed_core_core(tcs[i]);
        if (c->state != NPU_CORE_HALTED)
            npu_core_raise(c, NPU_TRAP_DEADLOCK, 0, "no core can make progress");
    }
}

}  // namespace npusim::sc
