/* The memory system behind the cores' DMA engines: one L2 shared by every
 * core, on one DRAM. Each core's DMA engine cuts a transfer into L2 line
 * requests and issues them at its own rate with a bounded number in flight;
 * GM -> UB lines are L2 reads, UB -> GM lines L2 writes (a full-line write
 * allocates without a fetch, see l2.h). npu_memsys_dma has the signature of
 * a timing-model DMA backend (timing.h), so a core plugs straight into it.
 *
 * Timing of one transfer starting at `start` on core k (engine rate B bytes
 * per cycle, at most K line requests in flight per engine):
 *   line i issues at max(start + (bytes before it) / B, done(i - K), issue(i - 1))
 *   done(i)   = the L2's completion of that access (reads: data arrived;
 *               writes: accepted, they are posted)
 *   transfer done = the latest line's done.
 * The in-flight window carries over from one transfer to the next of the
 * same engine.
 *
 * The end of a run (npu_memsys_drain, called by both run engines once every
 * core has finished) writes the L2's dirty lines back to the DRAM, so the
 * DRAM's byte counts cover everything the run wrote. The kernel's cycles end
 * when its last core does; the drain's lines, bytes and cycles are reported
 * on their own (l2.h: clean_writebacks, clean_cycles; the DRAM's counters
 * before it: npu_memsys_kernel_dram).
 *
 * The run loops hand transfers over in (start cycle, core) order (run.h),
 * whatever sim.quantum is. A transfer is booked whole when it starts, so
 * its later lines are booked before the lines of another core's transfer
 * that starts later but whose lines arrive earlier. The L2's banks and the
 * DRAM's channels keep their bookings and serve such an earlier line in a
 * gap at its own cycle (sim/calendar.h); a fill holds an MSHR only over its
 * flight, so fills booked ahead for later cycles do not hold one before
 * their request (l2.h). Before each booking the run loop says that no later
 * transfer starts earlier (npu_memsys_set_horizon), and the bookings that
 * end by then are forgotten. */
#ifndef NPUSIM_MEMSYS_H
#define NPUSIM_MEMSYS_H

#include "npusim/export.h"

#include <stdint.h>

#include "npusim/core.h"
#include "npusim/dram.h"
#include "npusim/l2.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { NPU_MEMSYS_MAX_OUTSTANDING = 1024, NPU_MEMSYS_MAX_CORES = NPU_L2_MAX_CORES };

typedef struct npu_memsys_config {
    npu_l2_config l2;
    npu_dram_config dram;
    unsigned cores;               /* DMA engines, 1 .. NPU_MEMSYS_MAX_CORES */
    unsigned dma_bytes_per_cycle; /* issue rate of each engine */
    unsigned dma_outstanding;     /* line requests in flight per engine, 1 .. NPU_MEMSYS_MAX_OUTSTANDING */
} npu_memsys_config;

/* One L2 line access, as the line trace sees it (Dinero din: `0 addr size`
 * for a read, `1 addr size` for a write). */
typedef struct npu_memsys_access {
    unsigned core, tensor;
    uint64_t now, addr, done;
    unsigned bytes;
    int is_write;
} npu_memsys_access;
typedef void (*npu_memsys_trace_fn)(void *ctx, const npu_memsys_access *a);

/* What the memory system did, for traces (Perfetto counters, VCD signals):
 * one event per L2 access and per DRAM request, as it is booked. Events come
 * in booking order, which is near but not exactly time order (a transfer
 * books all its lines at once, in the transfers' start order). */
typedef enum npu_memsys_event_kind {
    NPU_MEMSYS_L2_ACCESS,  /* a line request at the L2 (npu_memsys_line) */
    NPU_MEMSYS_DRAM        /* a request at the DRAM: a fill, a writeback or a write-through */
} npu_memsys_event_kind;

typedef struct npu_memsys_event {
    npu_memsys_event_kind kind;
    unsigned core, tensor;  /* L2 accesses only */
    uint64_t now;           /* arrival cycle */
    uint64_t done;          /* completion cycle (the model's return value) */
    uint64_t addr;
    unsigned bytes;
    int is_write;
    int end_of_run;         /* DRAM: a write of the end-of-run drain (npu_memsys_drain) */
    const npu_l2_result *l2; /* L2 accesses: what the access did (outcome, MSHR use), valid
                                during the call only; NULL for DRAM requests */
} npu_memsys_event;
typedef void (*npu_memsys_observer_fn)(void *ctx, const npu_memsys_event *ev);
enum { NPU_MEMSYS_MAX_OBSERVERS = 4 };

/* Where line requests go: by default the memsys's own L2 (npu_memsys_line).
 * A SystemC adapter routes them through a TLM socket instead, whose target
 * ends in npu_memsys_line. */
typedef uint64_t (*npu_memsys_line_fn)(void *ctx, unsigned core, uint64_t now, uint64_t addr, unsigned bytes,
                                       int is_write);

typedef struct npu_memsys npu_memsys; /* sim/memsys.c */

/* Returns NULL for a bad config or no memory (cfg_msg, if not NULL, says
 * which). The L2's next level is the memsys's DRAM. */
NPU_API npu_memsys *npu_memsys_new(const npu_memsys_config *cfg, char *msg, unsigned size);
NPU_API void npu_memsys_free(npu_memsys *ms);

/* Names the GM range [addr, addr + bytes) as tensor `index` (< NPU_L2_MAX_TENSORS,
 * for the L2's per-tensor counters). Accesses outside every range count as
 * tensor 0. Returns 0, or NPU_EINVAL when the table is full. */
NPU_API int npu_memsys_add_tensor(npu_memsys *ms, uint64_t addr, uint64_t bytes, unsigned index);
NPU_API unsigned npu_memsys_tensor_of(const npu_memsys *ms, uint64_t addr);

/* Places [addr, addr + bytes) in the L2 before the run (npu_l2_warm). */
NPU_API void npu_memsys_warm(npu_memsys *ms, uint64_t addr, uint64_t bytes, unsigned tensor);

NPU_API void npu_memsys_set_trace(npu_memsys *ms, npu_memsys_trace_fn fn, void *ctx);
NPU_API void npu_memsys_set_line_port(npu_memsys *ms, npu_memsys_line_fn fn, void *ctx);

/* Adds an observer of every L2 access and DRAM request (see
 * npu_memsys_event). Returns 0, or NPU_EINVAL when NPU_MEMSYS_MAX_OBSERVERS
 * are set already. An observer stays until removed or the memsys is freed. */
NPU_API int npu_memsys_add_observer(npu_memsys *ms, npu_memsys_observer_fn fn, void *ctx);
NPU_API void npu_memsys_remove_observer(npu_memsys *ms, npu_memsys_observer_fn fn, void *ctx);

/* The end of a run at cycle `end`: the L2 writes back its dirty lines
 * (npu_l2_clean) through its next level. Returns the cycle the last of them
 * was accepted (end if none). The run engines call it once all cores have
 * finished, with end = the slowest core's last cycle. */
NPU_API uint64_t npu_memsys_drain(npu_memsys *ms, uint64_t end);

/* The DRAM as the first npu_memsys_drain found it (a checkpoint at its `end`):
 * the kernel's own traffic, before the end-of-run write-back. NULL until a
 * drain has run. Both engines drain through npu_memsys_drain, so both fill it
 * the same way. */
NPU_API const npu_dram_checkpoint *npu_memsys_kernel_dram(const npu_memsys *ms);

/* One request at the DRAM, observed: the memsys's own L2 -> DRAM path, and
 * the SystemC DRAM target, both end here. Returns its completion cycle. */
NPU_API uint64_t npu_memsys_dram_access(npu_memsys *ms, uint64_t now, uint64_t addr, unsigned bytes, int is_write);
/* The L2's own next level: npu_memsys_dram_access as a port (a SystemC
 * adapter that rerouted the L2 restores it with this). */
NPU_API npu_mem_port npu_memsys_dram_port(npu_memsys *ms);

/* The DMA backend (timing.h: npu_dma_backend): ctx is the npu_memsys. */
NPU_API uint64_t npu_memsys_dma(void *ms, unsigned core, uint64_t start, const npu_dma_request *rq);
/* Promises that no later transfer starts before `cycle` (the run loop books
 * transfers in start order, T13, and says so before each): the L2 forgets
 * the fills that arrive by then (npu_l2_set_horizon). Never changes a result. */
NPU_API void npu_memsys_set_horizon(npu_memsys *ms, uint64_t cycle);

/* One line access into the L2 (within one line), traced and charged to the
 * tensor that holds addr. Returns its completion cycle. */
NPU_API uint64_t npu_memsys_line(npu_memsys *ms, unsigned core, uint64_t now, uint64_t addr, unsigned bytes, int is_write);

NPU_API npu_l2 *npu_memsys_l2(npu_memsys *ms);
NPU_API npu_dram *npu_memsys_dram(npu_memsys *ms);
NPU_API const npu_memsys_config *npu_memsys_get_config(const npu_memsys *ms);

#ifdef __cplusplus
}
#endif
#endif
