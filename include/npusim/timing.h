/* The cycle-exact timing model of one core: in-order issue into W slots,
 * functional units with latency and initiation interval, a register
 * scoreboard, taken-branch penalty, UB bank conflicts, asynchronous DMA to an
 * ideal memory, and stall attribution.
 *
 * It is event-driven: each instruction's issue cycle is computed from the
 * cycles its slot, operands, unit and sync conditions become ready, so the
 * cost is per instruction, never per cycle. Every cycle of a run is either an
 * issue cycle or is charged to exactly one stall reason:
 *     issue_cycles + sum(stall[]) == cycles.
 * The reason for a gap before an instruction is the constraint that was
 * satisfied last (the one that held back this, the oldest waiting,
 * instruction); ties go to the earlier reason in npu_stall order. */
#ifndef NPUSIM_TIMING_H
#define NPUSIM_TIMING_H

#include "npusim/export.h"

#include <stdint.h>

#include "npusim/core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { NPU_MAX_ISSUE_WIDTH = 8, NPU_MAX_UNIT_COUNT = 8 };

typedef enum npu_stall {
    NPU_STALL_SYNC,      /* waiting at a barrier for other cores */
    NPU_STALL_DMA_WAIT,  /* dmawait on a transfer or cube operation in flight, or its queue is full */
    NPU_STALL_RAW,       /* an operand is not ready (split by producer unit) */
    NPU_STALL_UB_BANK,   /* the LSU is still busy with a bank-conflicted access */
    NPU_STALL_UNIT_BUSY, /* every instance of the unit is inside its initiation interval */
    NPU_STALL_BRANCH,    /* refetch after a mispredicted branch */
    NPU_STALL_SLOT,      /* every slot that accepts the class is taken: never a whole cycle
                            (the next cycle issues), so it shows in slots_lost only */
    NPU_STALL_DRAIN,     /* after the last issue: waiting for results and DMA to finish */
    NPU_STALL_WAW,       /* a write would complete no later than an older write to its register */
    NPU_NUM_STALLS
} npu_stall;

NPU_API const char *npu_stall_name(npu_stall s);   /* "raw", "unit_busy", ... */
NPU_API const char *npu_unit_name(npu_unit u);     /* "valu", "sfu", ... */
NPU_API const char *npu_pipe_name(npu_pipe p);     /* the cube's pipes: "mte1", "cube", "fix" */
NPU_API const char *npu_class_name(npu_class c);   /* "vector", "mem", ... */

typedef struct npu_unit_timing {
    unsigned count;    /* instances */
    unsigned latency;  /* cycles from issue to result */
    unsigned interval; /* initiation interval: cycles an instance stays busy (1 = pipelined) */
} npu_unit_timing;

typedef struct npu_timing_config {
    unsigned issue_width;                        /* W slots */
    uint32_t slot_classes[NPU_MAX_ISSUE_WIDTH];  /* bit c: slot accepts npu_class c */
    npu_unit_timing unit[NPU_NUM_UNITS];
    unsigned branch_penalty;  /* cycles lost after a mispredicted branch (static prediction:
                                 backward and direct jumps taken, forward not taken) */
    unsigned ub_banks;        /* UB banks ... */
    unsigned ub_bank_bytes;   /* ... each this wide; an access takes max(lanes per bank) cycles */
    /* DMA: the engine issues bytes at dma_bytes_per_cycle; without a DMA
     * backend a transfer completes dma_latency cycles after its last byte
     * (the ideal memory: npusim sets it to l2.hit_latency, an L2 that always
     * hits, so that it is an upper bound on the L2 model's performance). */
    unsigned dma_latency;         /* ideal memory: cycles after a transfer's last byte to its completion */
    unsigned dma_bytes_per_cycle; /* bandwidth of the core's DMA engine */
    unsigned dma_queue_depth;     /* transfers in flight per core */
    unsigned dma_outstanding;     /* memory system (memsys.h): line requests in flight per DMA engine
                                     (0 = NPU_DMA_OUTSTANDING_DEFAULT) */
    /* The cube unit's pipes (docs/cube.md, docs/timing.md "Cube"): each runs
     * its operations in issue order. An mmad of m x k x n fractals keeps the
     * cube busy ceil(m k n x cube.interval / cube.count) cycles; a move of B
     * bytes keeps its pipe busy ceil(B / bytes_per_cycle) cycles. */
    npu_unit_timing cube;             /* count: 16x16x16 fractal products per interval */
    unsigned mte1_bytes_per_cycle;    /* L1 -> L0A / L0B */
    unsigned mte1_latency;
    unsigned fix_bytes_per_cycle;     /* L0C -> UB */
    unsigned fix_latency;
    unsigned cube_queue_depth;        /* operations in flight per pipe; one more waits */
    /* Temporal decoupling (sim/run.c): in each scheduling round a core runs
     * until its local clock passes the earliest running core's clock + this
     * many cycles (0 = NPU_SIM_QUANTUM_DEFAULT). All cores of a run must use
     * the same value; the run loops read it from the first core. */
    uint64_t sim_quantum;
} npu_timing_config;

enum { NPU_DMA_OUTSTANDING_DEFAULT = 16, NPU_SIM_QUANTUM_DEFAULT = 1000 };

/* The default vector core (configs/default.yaml says the same). */
NPU_API void npu_timing_config_default(npu_timing_config *cfg);
/* Returns 0, or NPU_EINVAL with a message naming the bad field. */
NPU_API int npu_timing_config_check(const npu_timing_config *cfg, char *msg, unsigned size);

typedef struct npu_core_stats {
    uint64_t cycles;        /* first issue opportunity to the last completion */
    uint64_t instructions;
    uint64_t issue_cycles;  /* cycles issuing at least one instruction */
    uint64_t stall[NPU_NUM_STALLS];
    /* Issue slots, top-down: issue_width x cycles = instructions + sum(slots_lost).
     * A cycle's empty slots are lost to what kept the next instruction out of
     * that cycle (slot: its class's slots were taken); a cycle with no issue
     * loses all of them to its stall reason. */
    uint64_t slots_lost[NPU_NUM_STALLS];
    uint64_t raw_by_unit[NPU_NUM_UNITS]; /* stall[RAW] split by the producer's unit */
    uint64_t issue_histogram[NPU_MAX_ISSUE_WIDTH + 1]; /* cycles issuing k instructions */
    uint64_t slot_issued[NPU_MAX_ISSUE_WIDTH];
    uint64_t unit_issued[NPU_NUM_UNITS];
    uint64_t unit_busy[NPU_NUM_UNITS];   /* instance-cycles inside an initiation interval */
    uint64_t class_issued[NPU_NUM_CLASSES];
    uint64_t dma_transfers, dma_bytes_in, dma_bytes_out;
    uint64_t ub_bank_extra;              /* extra LSU cycles caused by bank conflicts */
    /* The cube unit's pipes (npu_pipe): operations, cycles busy, bytes moved
     * (MTE1, FIX) and 16x16x16 fractal products (CUBE). */
    uint64_t pipe_ops[NPU_NUM_PIPES], pipe_busy[NPU_NUM_PIPES], pipe_bytes[NPU_NUM_PIPES];
    uint64_t cube_fractals;
    uint64_t critical_path;              /* longest register-dependency chain, in cycles */
} npu_core_stats;

/* One issued instruction, for pipeline traces. */
typedef struct npu_issue_event {
    uint64_t seq;        /* dynamic instruction number */
    uint64_t pc;
    const npu_insn *insn;
    uint64_t ready;      /* cycle the instruction became the oldest waiting one */
    uint64_t issue;      /* issue cycle */
    uint64_t complete;   /* result ready (DMA: transfer complete) */
    unsigned slot;
    npu_unit unit;
    npu_stall stall;     /* reason for the empty cycles just before this issue (if any) */
    uint64_t stall_cycles; /* empty cycles charged just before this issue */
    unsigned dma_inflight; /* DMA transfers in flight after this issue */
    uint64_t dma_start;    /* DMA: cycle the transfer starts moving bytes; a cube operation:
                              cycle its pipe starts it (0 otherwise) */
    unsigned pipe;         /* a cube operation: 1 + its npu_pipe (complete = its tag's done); 0 otherwise */
} npu_issue_event;

typedef void (*npu_issue_hook)(void *ctx, const npu_issue_event *ev);

/* A core with timing: wraps a functional npu_core it does not own. */
typedef struct npu_timed_core npu_timed_core; /* defined in sim/timing.c */

NPU_API npu_timed_core *npu_timed_core_new(npu_core *core, const npu_timing_config *cfg);
NPU_API void npu_timed_core_free(npu_timed_core *tc);
NPU_API void npu_timed_core_set_hook(npu_timed_core *tc, npu_issue_hook hook, void *ctx);
NPU_API const npu_timing_config *npu_timed_core_config(const npu_timed_core *tc);

/* Where DMA transfers go. A backend books one transfer of core `core` (its
 * core_id) that starts moving bytes at cycle `start` and returns the cycle it
 * completes (>= start). The DMA engine's own issue bandwidth still limits
 * start times: a transfer starts no earlier than the previous one's last
 * byte left the engine (start + bytes / dma_bytes_per_cycle). Calls come in
 * non-decreasing `start` per core. NULL (the default) is the ideal memory:
 * done = start + bytes / dma_bytes_per_cycle + dma_latency. */
typedef uint64_t (*npu_dma_backend)(void *ctx, unsigned core, uint64_t start, const npu_dma_request *rq);
NPU_API void npu_timed_core_set_dma_backend(npu_timed_core *tc, npu_dma_backend fn, void *ctx);
/* The backend set (NULL: the ideal memory), and its ctx in *ctx if not NULL. */
NPU_API npu_dma_backend npu_timed_core_dma_backend(const npu_timed_core *tc, void **ctx);

/* Executes and times one instruction. Returns the core state afterwards.
 * With a DMA backend, a DMA instruction's transfer is left pending: the
 * backend is called by npu_timed_book_dma, which the run loops call in the
 * order of the transfers' start cycles across cores (run.h); the next step
 * or npu_timed_finish books a transfer still pending first. */
NPU_API npu_core_state npu_timed_step(npu_timed_core *tc);
/* Steps the core until it stops running, its clock (npu_timed_now) reaches
 * `horizon`, it is at a limit (its clock at or past max_cycles, or its
 * instructions at max_instructions; 0: none), or a step leaves a transfer
 * pending (a DMA backend is set). Returns why (npu_timed_stop), and the
 * instructions stepped in *steps. The run loops' inner loop (run.c). */
typedef enum npu_timed_stop {
    NPU_TIMED_STOPPED, /* the core is no longer running (halted, at a barrier, trapped) */
    NPU_TIMED_HORIZON,
    NPU_TIMED_LIMIT,
    NPU_TIMED_DMA
} npu_timed_stop;
NPU_API int npu_timed_run(npu_timed_core *tc, uint64_t horizon, uint64_t max_cycles, uint64_t max_instructions,
                          uint64_t *steps);
/* The start cycle of the transfer waiting for npu_timed_book_dma, or
 * UINT64_MAX when none waits. */
NPU_API uint64_t npu_timed_dma_pending(const npu_timed_core *tc);
/* No transfer of this core that is not yet booked starts before this cycle:
 * the pending one's start, or else max(now + units.dma.latency, the cycle
 * the DMA engine has sent its last byte). */
NPU_API uint64_t npu_timed_next_dma_start(const npu_timed_core *tc);
/* Books the pending transfer with the backend (no-op when none is pending). */
NPU_API void npu_timed_book_dma(npu_timed_core *tc);
/* The cycle at which the next instruction could issue at the earliest (the
 * core's local time, for temporal decoupling). */
NPU_API uint64_t npu_timed_now(const npu_timed_core *tc);
/* Release from a barrier: the next instruction issues no earlier than `cycle`;
 * the gap is charged to sync. */
NPU_API void npu_timed_release(npu_timed_core *tc, uint64_t cycle);
/* Ends the run: charges the drain to the last completion and fixes cycles. */
NPU_API void npu_timed_finish(npu_timed_core *tc);

NPU_API const npu_core_stats *npu_timed_stats(const npu_timed_core *tc);
/* Adds one core's stats into a total over cores: every count is summed,
 * except cycles and critical_path, which take the larger (the slowest core,
 * the longest chain). Every field of npu_core_stats is a uint64_t count, so a
 * new one is summed here without being named; one that must not be summed
 * is named here. */
NPU_API void npu_core_stats_merge(npu_core_stats *total, const npu_core_stats *core);
NPU_API npu_core *npu_timed_core_core(npu_timed_core *tc);
/* Stall cycles charged while pc was the waiting instruction: [reason]. */
NPU_API const uint64_t *npu_timed_pc_stalls(const npu_timed_core *tc, uint64_t pc);
/* Times the instruction at pc issued (0 outside the program). */
NPU_API uint64_t npu_timed_pc_issued(const npu_timed_core *tc, uint64_t pc);

#ifdef __cplusplus
}
#endif
#endif
