/* Running cores to completion: the functional run loop with its limits,
 * barriers across cores, and the reasons a run stops. */
#ifndef NPUSIM_RUN_H
#define NPUSIM_RUN_H

#include "npusim/export.h"

#include <stdint.h>

#include "npusim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { NPU_RUN_MAX_CORES = 256 };

typedef struct npu_run_limits {
    uint64_t max_instructions; /* per core; 0 = no limit */
    uint64_t max_cycles;       /* functional runs count one cycle per instruction; 0 = no limit */
} npu_run_limits;

/* Runs every core until all have halted or one traps (then the others stop
 * too: functional runs have no clock to run the others on to). Cores step round-robin in quanta, and meet at barriers. Returns the
 * number of trapped cores (0: every core halted). */
NPU_API unsigned npu_run_functional(npu_core *const *cores, unsigned num_cores, const npu_run_limits *lim);

/* The same with timing: each core's timing model runs ahead on its own clock;
 * a barrier releases every core at the cycle after the last one reached it.
 * max_cycles compares against each core's local cycle. Finishes every core
 * (drain), then the shared memory (npu_run_drain), before returning the
 * number of trapped cores. */
struct npu_timed_core;
NPU_API unsigned npu_run_timed(struct npu_timed_core *const *cores, unsigned num_cores, const npu_run_limits *lim);

/* The scheduling of npu_run_timed, shared with the SystemC engine (one
 * source of truth): conservative temporal decoupling with a cycle quantum Q
 * (npu_timing_config.sim_quantum, `sim.quantum`) that is a speed knob only.
 *   - Cores meet only in a shared memory (a DMA backend, timing.h) and at
 *     barriers. A DMA transfer into the shared memory is booked whole, with
 *     all its line requests, and transfers of all cores are booked in the
 *     order of (start cycle, core index): a core whose transfer is pending
 *     (npu_timed_dma_pending) books it only when no other running core can
 *     still start one earlier (npu_timed_next_dma_start; npu_run_may_book).
 *     The shared memory therefore sees the same requests in the same order
 *     for every Q, and every result is the same for every Q.
 *   - The next turn goes to the running core with the earliest local clock
 *     (lowest index on a tie) among those not held by a pending transfer:
 *     npu_run_pick;
 *   - it steps until its clock reaches the horizon = the earliest clock among
 *     the other running cores not held + Q (npu_run_horizon), or its transfer
 *     must wait for another core, or it stops running (barrier, halt, trap)
 *     or passes a limit: npu_run_turn;
 *   - when no core runs, a barrier settles (every waiter released at the
 *     last arrival's cycle + 1; waiters trap when a core halted or trapped
 *     instead) or the run is over. A trap stops its own core only: the others
 *     run on to their own end. */
NPU_API int npu_run_pick(struct npu_timed_core *const *cores, unsigned num_cores); /* -1: none runs */
NPU_API uint64_t npu_run_horizon(struct npu_timed_core *const *cores, unsigned num_cores, unsigned core);
/* The same with the quantum given in cycles (0: the default), not the
 * config's: a SystemC platform's tlm_global_quantum (NpuTop). */
NPU_API uint64_t npu_run_horizon_within(struct npu_timed_core *const *cores, unsigned num_cores, unsigned core,
                                        uint64_t quantum);
/* When no core runs (npu_run_pick returned -1): releases the cores waiting
 * at a barrier and returns 1 (the run goes on), or ends the run and returns
 * 0: the waiters trap when a core halted or trapped without reaching the
 * barrier, and every core still unfinished traps when none can progress. */
NPU_API int npu_run_settle(struct npu_timed_core *const *cores, unsigned num_cores);
/* 1 when core's pending transfer (if any) may be booked now. */
NPU_API int npu_run_may_book(struct npu_timed_core *const *cores, unsigned num_cores, unsigned core);
/* Steps one core (see above; npu_timed_run is its loop); returns 1 when it
 * stepped at least once. */
NPU_API int npu_run_turn(struct npu_timed_core *const *cores, unsigned num_cores, unsigned core, uint64_t horizon,
                         const npu_run_limits *lim);
/* The end of a timed run, once every core has finished: when the cores share
 * a memory system (their DMA backend is npu_memsys_dma), its dirty L2 lines
 * are written back to the DRAM from the slowest core's last cycle
 * (npu_memsys_drain). The kernel's cycles do not include that write-back.
 * Returns the cycle the DRAM accepted the last line (0 without a memsys). */
NPU_API uint64_t npu_run_drain(struct npu_timed_core *const *cores, unsigned num_cores);

#ifdef __cplusplus
}
#endif
#endif
