// The rules of a timed run, shared by every SystemC module that schedules
// cores: barrier settlement and deadlock, in the words of sim/run.c
// (npu_run_timed), with the same trap texts; turns and limits are sim/run.c's
// own calls. Both engines stop the same cores at the same instruction with
// the same stats; tests/test_systemc.cc holds them to it.
#pragma once

#include <cstdint>

#include "npusim/core.h"
#include "npusim/run.h"
#include "npusim/timing.h"

namespace npusim::sc {

// A turn is npu_run_pick / npu_run_horizon / npu_run_turn (sim/run.c, with
// the limits), the same calls npu_run_timed makes: the turns, and so every
// stat, match.

// When no core runs and some wait at a barrier, either every
// core is released at `*release` (the last arrival's cycle + 1) or, when a
// core halted instead, the waiters trap. Returns true when cores trapped.
bool settle_barrier(npu_timed_core *const *tcs, unsigned n, bool *released, uint64_t *release);

// Every core not halted traps: no core can make progress.
void trap_deadlock(npu_timed_core *const *tcs, unsigned n);

unsigned count_state(npu_timed_core *const *tcs, unsigned n, npu_core_state s);

}  // namespace npusim::sc
