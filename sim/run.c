/* Run loops: cores take turns, meet at barriers, stop at limits, and the
 * shared memory writes back what it holds dirty at the end. The
 * functional loop counts one cycle per instruction and gives each core 4096
 * instructions per turn, round-robin; the timed loop gives the turn to the
 * core with the earliest clock, for at most a cycle quantum ahead of the next
 * (npu_run_pick, npu_run_horizon, npu_run_turn: the SystemC engine calls the
 * same three), books DMA transfers into a shared memory in the order of their
 * start cycles (run.h: why the quantum then changes no result), and releases
 * barriers at the last arrival's cycle. */
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
        halted += cores[i]->state == NPU_CORE_HALTED || cores[i]->state == NPU_CORE_TRAPPED;
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
                           "barrier never completes: %u of %u cores halted or trapped without reaching it",
                           halted, n);
        }
    return 1;
}

static int over_limit(npu_core *c, uint64_t cycles, const npu_run_limits *lim)
{
    if (lim && lim->max_instructions && c->retired >= lim->max_instructions) {
        npu_core_raise(c, NPU_TRAP_MAX_INSNS, 0, "stopped after %llu instructions, the run's instruction limit",
                       (unsigned long long)c->retired);
        return 1;
    }
    if (lim && lim->max_cycles && cycles >= lim->max_cycles) {
        /* checked before each step: a step may start past the limit (a stall) */
        npu_core_raise(c, NPU_TRAP_MAX_CYCLES, 0,
                       "stopped at cycle %llu, its first step at or past the run's cycle limit of %llu",
                       (unsigned long long)cycles, (unsigned long long)lim->max_cycles);
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
        if (cores[i]->state != NPU_CORE_HALTED && cores[i]->state != NPU_CORE_TRAPPED)
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

static int running(npu_timed_core *const *tcs, unsigned k)
{
    return npu_timed_core_core(tcs[k])->state == NPU_CORE_RUNNING;
}

int npu_run_may_book(npu_timed_core *const *tcs, unsigned n, unsigned core)
{
    const uint64_t start = npu_timed_dma_pending(tcs[core]);
    if (start == UINT64_MAX)
        return 1;
    /* Transfers are booked in (start cycle, core index) order: every other
     * running core must be unable to start one before this. A core at a
     * barrier, halted or trapped starts none until every running core has
     * moved on (a barrier releases after the last arrival). */
    for (unsigned j = 0; j < n; j++) {
        if (j == core || !running(tcs, j))
            continue;
        const uint64_t other = npu_timed_next_dma_start(tcs[j]);
        if (other < start || (other == start && j < core))
            return 0;
    }
    return 1;
}

int npu_run_pick(npu_timed_core *const *tcs, unsigned n)
{
    int pick = -1;
    uint64_t earliest = UINT64_MAX;
    for (unsigned i = 0; i < n; i++)
        if (running(tcs, i) && npu_timed_now(tcs[i]) < earliest && npu_run_may_book(tcs, n, i)) {
            earliest = npu_timed_now(tcs[i]);
            pick = (int)i;
        }
    return pick;
}

uint64_t npu_run_horizon(npu_timed_core *const *tcs, unsigned n, unsigned core)
{
    return npu_run_horizon_within(tcs, n, core, npu_timed_core_config(tcs[core])->sim_quantum);
}

uint64_t npu_run_horizon_within(npu_timed_core *const *tcs, unsigned n, unsigned core, uint64_t q)
{
    if (q == 0)
        q = NPU_SIM_QUANTUM_DEFAULT;
    /* The clock of the next core in line: the earliest among the others
     * still running and not waiting for their transfer to be booked (those
     * wait for this one; alone, the core paces itself). */
    uint64_t next = npu_timed_now(tcs[core]);
    int others = 0;
    for (unsigned i = 0; i < n; i++)
        if (i != core && running(tcs, i) && npu_timed_dma_pending(tcs[i]) == UINT64_MAX &&
            (!others++ || npu_timed_now(tcs[i]) < next))
            next = npu_timed_now(tcs[i]);
    return next > UINT64_MAX - q ? UINT64_MAX : next + q;
}

/* Books the core's pending transfer, which may be booked now: no later one
 * starts before it, which the shared memory may count on. */
static void book(npu_timed_core *tc)
{
    void *ms;
    const uint64_t start = npu_timed_dma_pending(tc);
    if (start != UINT64_MAX && npu_timed_core_dma_backend(tc, &ms) == &npu_memsys_dma)
        npu_memsys_set_horizon(ms, start);
    npu_timed_book_dma(tc);
}

int npu_run_turn(npu_timed_core *const *tcs, unsigned n, unsigned core, uint64_t horizon,
                 const npu_run_limits *lim)
{
    npu_timed_core *tc = tcs[core];
    npu_core *c = npu_timed_core_core(tc);
    int progressed = 0;
    if (!npu_run_may_book(tcs, n, core))
        return 0;
    book(tc);
    const uint64_t max_cycles = lim ? lim->max_cycles : 0, max_insns = lim ? lim->max_instructions : 0;
    for (;;) {
        uint64_t steps;
        const int why = npu_timed_run(tc, horizon, max_cycles, max_insns, &steps);
        progressed |= steps != 0;
        if (why == NPU_TIMED_LIMIT)
            over_limit(c, npu_timed_now(tc), lim);
        if (why != NPU_TIMED_DMA)
            break;
        if (!npu_run_may_book(tcs, n, core))
            break; /* another core may still start a transfer earlier: its turn first */
        book(tc);
    }
    return progressed;
}

int npu_run_settle(npu_timed_core *const *tcs, unsigned n)
{
    npu_core *cores[NPU_RUN_MAX_CORES];
    uint64_t release = 0;
    int released;
    for (unsigned i = 0; i < n; i++) {
        cores[i] = npu_timed_core_core(tcs[i]);
        if (cores[i]->state == NPU_CORE_AT_BARRIER && npu_timed_now(tcs[i]) + 1 > release)
            release = npu_timed_now(tcs[i]) + 1;
    }
    if (settle_barrier(cores, n, &released))
        return 0;
    if (released) {
        for (unsigned i = 0; i < n; i++)
            npu_timed_release(tcs[i], release);
        return 1;
    }
    if (count_state(cores, n, NPU_CORE_HALTED) + count_state(cores, n, NPU_CORE_TRAPPED) != n)
        trap_deadlock(cores, n);
    return 0;
}

unsigned npu_run_timed(npu_timed_core *const *tcs, unsigned n, const npu_run_limits *lim)
{
    if (n > NPU_RUN_MAX_CORES)
        return 0;
    for (;;) {
        const int k = npu_run_pick(tcs, n);
        if (k >= 0) {
            npu_run_turn(tcs, n, (unsigned)k, npu_run_horizon(tcs, n, (unsigned)k), lim);
            continue;
        }
        if (!npu_run_settle(tcs, n))
            break;
    }
    for (unsigned i = 0; i < n; i++)
        npu_timed_finish(tcs[i]);
    npu_run_drain(tcs, n);
    unsigned trapped = 0;
    for (unsigned i = 0; i < n; i++)
        trapped += npu_timed_core_core(tcs[i])->state == NPU_CORE_TRAPPED;
    return trapped;
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
