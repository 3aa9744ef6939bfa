/* Run loops: round-robin over cores in quanta, barriers, limits. The
 * functional loop counts one cycle per instruction; the timed loop runs each
 * core's timing model and releases barriers at the last arrival's cycle. */
#include "npusim/run.h"

#include "npusim/timing.h"

enum { QUANTUM = 4096 }; /* instructions a core runs before the next gets a turn */

/* Releases a barrier when every core still running has reached it; traps the
 * waiters when a core halted instead (the barrier can never complete).
 * Returns 1 when cores trapped. On release, *released = 1. */
static int settle_barrier(npu_core *const *cores, unsigned n, int *released)
{
    unsigned waiting = 0, halted = 0, running = 0;
    *released = 0;
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
        *released = 1;
        return 0;
    }
    for (unsigned i = 0; i < n; i++)
        if (cores[i]->state == NPU_CORE_AT_BARRIER)
            npu_core_raise(cores[i], NPU_TRAP_BARRIER, 0,
                           "barrier never completes: %u of %u cores halted without reaching it",
                           halted, n);
    return 1;
}

static int over_limit(npu_core *c, uint64_t cycles, const npu_run_limits *lim)
{
    if (lim && lim->max_instructions && c->retired >= lim->max_instructions) {
        npu_core_raise(c, NPU_TRAP_MAX_INSNS, 0, "stopped after %llu instructions (--max-instructions)",
                       (unsigned long long)c->retired);
        return 1;
    }
    if (lim && lim->max_cycles && cycles >= lim->max_cycles) {
        npu_core_raise(c, NPU_TRAP_MAX_CYCLES, 0, "stopped at cycle %llu (--max-cycles)",
                       (unsigned long long)cycles);
        return 1;
    }
    return 0;
}

static unsigned count_state(npu_core *const *cores, unsigned n, npu_core_state s)
{
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        k += cores[i]->state == s;
    return k;
}

static void trap_deadlock(npu_core *const *cores, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (cores[i]->state != NPU_CORE_HALTED)
            npu_core_raise(cores[i], NPU_TRAP_DEADLOCK, 0, "no core can make progress");
}

unsigned npu_run_functional(npu_core *const *cores, unsigned n, const npu_run_limits *lim)
{
    for (;;) {
        int progressed = 0, trapped = 0, released;
        for (unsigned i = 0; i < n; i++) {
            npu_core *c = cores[i];
            for (unsigned k = 0; k < QUANTUM && c->state == NPU_CORE_RUNNING; k++) {
                if (over_limit(c, c->retired, lim))
                    break;
                npu_core_step(c, NULL);
                progressed = 1;
            }
            trapped |= c->state == NPU_CORE_TRAPPED;
        }
        if (!trapped)
            trapped = settle_barrier(cores, n, &released);
        if (trapped)
            break;
        if (count_state(cores, n, NPU_CORE_HALTED) == n)
            return 0;
        if (!progressed) {
            trap_deadlock(cores, n);
            break;
        }
    }
    return count_state(cores, n, NPU_CORE_TRAPPED);
}

unsigned npu_run_timed(npu_timed_core *const *tcs, unsigned n, const npu_run_limits *lim)
{
    npu_core *cores[256];
    if (n > 256)
        return 0;
    for (unsigned i = 0; i < n; i++)
        cores[i] = npu_timed_core_core(tcs[i]);
    for (;;) {
        int progressed = 0, trapped = 0, released;
        for (unsigned i = 0; i < n; i++) {
            npu_core *c = cores[i];
            for (unsigned k = 0; k < QUANTUM && c->state == NPU_CORE_RUNNING; k++) {
                if (over_limit(c, npu_timed_now(tcs[i]), lim))
                    break;
                npu_timed_step(tcs[i]);
                progressed = 1;
            }
            trapped |= c->state == NPU_CORE_TRAPPED;
        }
        if (!trapped) {
            uint64_t release = 0;
            for (unsigned i = 0; i < n; i++)
                if (cores[i]->state == NPU_CORE_AT_BARRIER && npu_timed_now(tcs[i]) + 1 > release)
                    release = npu_timed_now(tcs[i]) + 1;
            trapped = settle_barrier(cores, n, &released);
            if (released)
                for (unsigned i = 0; i < n; i++)
                    npu_timed_release(tcs[i], release);
        }
        if (trapped)
            break;
        if (count_state(cores, n, NPU_CORE_HALTED) == n)
            break;
        if (!progressed) {
            trap_deadlock(cores, n);
            break;
        }
    }
    for (unsigned i = 0; i < n; i++)
        npu_timed_finish(tcs[i]);
    return count_state(cores, n, NPU_CORE_TRAPPED);
}
