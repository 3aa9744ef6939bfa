/* The functional run loop: round-robin over cores, barriers, limits. */
#include "npusim/run.h"

enum { QUANTUM = 4096 }; /* instructions a core runs before the next gets a turn */

/* Releases a barrier when every core still running has reached it; traps the
 * waiters when a core halted instead (the barrier can never complete). */
static int settle_barrier(npu_core *const *cores, unsigned n)
{
    unsigned waiting = 0, halted = 0, running = 0;
    for (unsigned i = 0; i < n; i++) {
        waiting += cores[i]->state == NPU_CORE_AT_BARRIER;
        halted += cores[i]->state == NPU_CORE_HALTED;
        running += cores[i]->state == NPU_CORE_RUNNING;
    }
    if (waiting == 0 || running > 0)
        return 0;
    if (halted == 0) {
        for (unsigned i = 0; i < n; i++)
            cores[i]->state = NPU_CORE_RUNNING;
        return 0;
    }
    for (unsigned i = 0; i < n; i++)
        if (cores[i]->state == NPU_CORE_AT_BARRIER)
            npu_core_raise(cores[i], NPU_TRAP_BARRIER, 0,
                           "barrier never completes: %u of %u cores halted without reaching it",
                           halted, n);
    return 1;
}

static int over_limit(npu_core *c, const npu_run_limits *lim)
{
    if (lim && lim->max_instructions && c->retired >= lim->max_instructions) {
        npu_core_raise(c, NPU_TRAP_MAX_INSNS, 0, "stopped after %llu instructions (--max-instructions)",
                       (unsigned long long)c->retired);
        return 1;
    }
    if (lim && lim->max_cycles && c->retired >= lim->max_cycles) {
        npu_core_raise(c, NPU_TRAP_MAX_CYCLES, 0, "stopped after %llu cycles (--max-cycles)",
                       (unsigned long long)c->retired);
        return 1;
    }
    return 0;
}

unsigned npu_run_functional(npu_core *const *cores, unsigned n, const npu_run_limits *lim)
{
    for (;;) {
        int progressed = 0, trapped = 0;
        for (unsigned i = 0; i < n; i++) {
            npu_core *c = cores[i];
            for (unsigned k = 0; k < QUANTUM && c->state == NPU_CORE_RUNNING; k++) {
                if (over_limit(c, lim))
                    break;
                npu_core_step(c, NULL);
                progressed = 1;
            }
            trapped |= c->state == NPU_CORE_TRAPPED;
        }
        if (!trapped)
            trapped = settle_barrier(cores, n);
        if (trapped)
            break;
        unsigned done = 0;
        for (unsigned i = 0; i < n; i++)
            done += cores[i]->state == NPU_CORE_HALTED;
        if (done == n)
            return 0;
        if (!progressed) {
            /* Every core waits and nothing can release it. */
            for (unsigned i = 0; i < n; i++)
                if (cores[i]->state != NPU_CORE_HALTED)
                    npu_core_raise(cores[i], NPU_TRAP_DEADLOCK, 0, "no core can make progress");
            break;
        }
    }
    unsigned count = 0;
    for (unsigned i = 0; i < n; i++)
        count += cores[i]->state == NPU_CORE_TRAPPED;
    return count;
}
