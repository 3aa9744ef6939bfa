/* Run loops: cores take turns, meet at barriers, stop at limits, and the
 * shared memory writes back what it holds dirty at the end. The
 * functional loop counts one cycle per instruction and gives each core 4096
 * instructions per turn, round-robin; the timed loop gives the turn to the
 * core with the earliest clock, for at most a cycle quantum ahead of the next
 * (npu_run_pick, npu_run_horizon, npu_run_turn: the SystemC engine calls the
 * same three; run.h states the ordering bound), and releases barriers at the
 * last arrival's cycle. */
#include "npusim/run.h"

#include "npusim/memsys.h"
#include "npusim/timing.h"

enum { QUANTUM = 4096 }; /* functional runs: instructions a core runs before the next gets a turn */

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
        if (cores[i]->state == NPU_CORE_AT_BARRIER) {
            cores[i]->pc--; /* barrier advanced the PC before waiting: name the barrier itself */
            npu_core_raise(cores[i], NPU_TRAP_BARRIER, 0,
                           "barrier never completes: %u of %u cores halted without reaching it",
                           halted, n);
        }
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

int npu_run_pick(struct npu_timed_core *const *tcs, unsigned n)
{
    int pick = -1;
    uint64_t earliest = UINT64_MAX;
    for (unsigned i = 0; i < n; i++)
        if (npu_timed_core_core(tcs[i])->state == NPU_CORE_RUNNING && npu_timed_now(tcs[i]) < earliest) {
            earliest = npu_timed_now(tcs[i]);
            pick = (int)i;
        }
    return pick;
}

uint64_t npu_run_horizon(struct npu_timed_core *const *tcs, unsigned n, unsigned core)
{
    uint64_t q = npu_timed_core_config(tcs[core])->sim_quantum;
    if (q == 0)
        q = NPU_SIM_QUANTUM_DEFAULT;
    /* The clock of the next core in line: the earliest among the others still
     * running (alone, the core paces itself). */
    uint64_t next = npu_timed_now(tcs[core]);
    int others = 0;
    for (unsigned i = 0; i < n; i++)
        if (i != core && npu_timed_core_core(tcs[i])->state == NPU_CORE_RUNNING &&
            (!others++ || npu_timed_now(tcs[i]) < next))
            next = npu_timed_now(tcs[i]);
    return next > UINT64_MAX - q ? UINT64_MAX : next + q;
}

int npu_run_turn(struct npu_timed_core *tc, uint64_t horizon, const npu_run_limits *lim)
{
    npu_core *c = npu_timed_core_core(tc);
    /* Only a shared memory (a DMA backend) needs DMA in time order across cores. */
    const int shared = npu_timed_core_dma_backend(tc, NULL) != NULL;
    const uint64_t dma_before = npu_timed_stats(tc)->dma_transfers;
    int progressed = 0;
    while (c->state == NPU_CORE_RUNNING) {
        const uint64_t now = npu_timed_now(tc);
        if (now >= horizon || over_limit(c, now, lim))
            break;
        npu_timed_step(tc);
        progressed = 1;
        if (shared && npu_timed_stats(tc)->dma_transfers != dma_before)
            break; /* a transaction with the shared memory: the next turn goes to the earliest core */
    }
    return progressed;
}

unsigned npu_run_timed(npu_timed_core *const *tcs, unsigned n, const npu_run_limits *lim)
{
    npu_core *cores[256];
    if (n > 256)
        return 0;
    for (unsigned i = 0; i < n; i++)
        cores[i] = npu_timed_core_core(tcs[i]);
    for (;;) {
        const int k = npu_run_pick(tcs, n);
        if (k >= 0) {
            npu_run_turn(tcs[k], npu_run_horizon(tcs, n, (unsigned)k), lim);
            if (cores[k]->state == NPU_CORE_TRAPPED)
                break;
            continue;
        }
        /* No core runs: settle a barrier, or the run is over. */
        uint64_t release = 0;
        int released;
        for (unsigned i = 0; i < n; i++)
            if (cores[i]->state == NPU_CORE_AT_BARRIER && npu_timed_now(tcs[i]) + 1 > release)
                release = npu_timed_now(tcs[i]) + 1;
        if (settle_barrier(cores, n, &released))
            break;
        if (released) {
            for (unsigned i = 0; i < n; i++)
                npu_timed_release(tcs[i], release);
            continue;
        }
        if (count_state(cores, n, NPU_CORE_HALTED) != n)
            trap_deadlock(cores, n);
        break;
    }
    for (unsigned i = 0; i < n; i++)
        npu_timed_finish(tcs[i]);
    npu_run_drain(tcs, n);
    return count_state(cores, n, NPU_CORE_TRAPPED);
}

uint64_t npu_run_drain(npu_timed_core *const *tcs, unsigned n)
{
    void *ms = NULL;
    if (n == 0 || npu_timed_core_dma_backend(tcs[0], &ms) != &npu_memsys_dma)
        return 0;
    uint64_t end = 0;
    for (unsigned i = 0; i < n; i++)
        if (npu_timed_stats(tcs[i])->cycles > end)
            end = npu_timed_stats(tcs[i])->cycles;
    return npu_memsys_drain(ms, end);
}
