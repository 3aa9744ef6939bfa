// The rules of a timed run, shared by every SystemC module that schedules
// cores: quanta, limits, barrier settlement and deadlock. They mirror
// sim/run.c (npu_run_timed) line for line, with the same trap texts, so both
// engines stop the same cores at the same instruction with the same stats;
// tests/test_systemc.cc holds them to it.
#pragma once

#include <cstdint>

#include "npusim/core.h"
#include "npusim/run.h"
#include "npusim/timing.h"

namespace npusim::sc {

// Instructions a core runs per turn: QUANTUM in sim/run.c. A trap ends the
// run after the round it happened in, so the other cores' progress, and so
// their stats, depend on this number: keep the two equal.
constexpr unsigned kQuantum = 4096;

// True (and the core trapped) when the next step would pass a limit.
bool over_limit(npu_core *c, uint64_t cycle, const npu_run_limits &lim);

// After a round: when no core runs and some wait at a barrier, either every
// core is released at `*release` (the last arrival's cycle + 1) or, when a
// core halted instead, the waiters trap. Returns true when cores trapped.
bool settle_barrier(npu_timed_core *const *tcs, unsigned n, bool *released, uint64_t *release);

// Every core not halted traps: no core can make progress.
void trap_deadlock(npu_timed_core *const *tcs, unsigned n);

unsigned count_state(npu_timed_core *const *tcs, unsigned n, npu_core_state s);

}  // namespace npusim::sc
