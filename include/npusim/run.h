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
 * (drain) before returning the number of trapped cores. */
struct npu_timed_core;
unsigned npu_run_timed(struct npu_timed_core *const *cores, unsigned num_cores, const npu_run_limits *lim);

#ifdef __cplusplus
}
#endif
#endif
