/* Running cores to completion: the functional run loop with its limits,
 * barriers across cores, and the reasons a run stops. */
#ifndef NPUSIM_RUN_H
#define NPUSIM_RUN_H

#include <stdint.h>

#include "npusim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_run_limits {
    uint64_t max_instructions; /* per core; 0 = no limit */
    uint64_t max_cycles;       /* functional runs count one cycle per instruction; 0 = no limit */
} npu_run_limits;

/* Runs every core until all have halted or one traps (then the others stop
 * too). Cores step round-robin in quanta, and meet at barriers. Returns the
 * number of trapped cores (0: every core halted). */
unsigned npu_run_functional(npu_core *const *cores, unsigned num_cores, const npu_run_limits *lim);

/* The same with timing: each core's timing model runs ahead on its own clock;
 * a barrier releases every core at the cycle after the last one reached it.
 * max_cycles compares against each core's local cycle. Finishes every core
 * (drain), then the shared memory (npu_run_drain), before returning the
 * number of trapped cores. */
struct npu_timed_core;
unsigned npu_run_timed(struct npu_timed_core *const *cores, unsigned num_cores, const npu_run_limits *lim);

/* The scheduling of npu_run_timed, shared with the SystemC engine (one
 * source of truth): conservative temporal decoupling with a cycle quantum Q
 * (npu_timing_config.sim_quantum, `sim.quantum`).
 *   - the next turn goes to the running core with the earliest local clock
 *     (lowest index on a tie): npu_run_pick;
 *   - it steps until it has issued one DMA transfer into a shared memory (a
 *     DMA backend is set: timing.h), or its clock reaches the horizon = the earliest clock
 *     among the other running cores + Q (npu_run_horizon), or it stops
 *     running (barrier, halt, trap) or passes a limit: npu_run_turn;
 *   - when no core runs, a barrier settles (every waiter released at the
 *     last arrival's cycle + 1) or the run is over; a trap ends the run
 *     after the turn it happened in.
 * Error bound: a core issues a DMA at most Q cycles after another core's
 * clock, so transfers reach a shared memory in the order of the cycles the
 * cores issued them, except that one issued up to Q cycles later may come
 * first. A transfer is also booked whole at its start (its line requests
 * reach the L2 ahead of those of transfers that start later; the L2 banks and
 * DRAM channels still serve an earlier line of a later transfer in a gap at
 * its own cycle, memsys.h), and it starts
 * when its engine is free, which may be after the issue cycle. With one core,
 * or cores that never meet in memory, Q changes no result. */
int npu_run_pick(struct npu_timed_core *const *cores, unsigned num_cores); /* -1: none runs */
uint64_t npu_run_horizon(struct npu_timed_core *const *cores, unsigned num_cores, unsigned core);
/* Steps one core (see above); returns 1 when it stepped at least once. */
int npu_run_turn(struct npu_timed_core *core, uint64_t horizon, const npu_run_limits *lim);
/* The end of a timed run, once every core has finished: when the cores share
 * a memory system (their DMA backend is npu_memsys_dma), its dirty L2 lines
 * are written back to the DRAM from the slowest core's last cycle
 * (npu_memsys_drain). The kernel's cycles do not include that write-back.
 * Returns the cycle the DRAM accepted the last line (0 without a memsys). */
uint64_t npu_run_drain(struct npu_timed_core *const *cores, unsigned num_cores);

#ifdef __cplusplus
}
#endif
#endif
