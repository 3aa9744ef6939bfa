/* The memory system: per-core DMA engines cutting transfers into line
 * requests, one shared L2, one DRAM (see memsys.h). */
#include "npusim/memsys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npusim/errors.h"

typedef struct dma_engine {
    uint64_t *window;   /* done cycle of the last `outstanding` line requests, a ring */
    uint64_t issued;    /* line requests issued so far (ring position) */
    uint64_t last_issue;
} dma_engine;

typedef struct tensor_range {
    uint64_t lo, hi;
    unsigned index;
} tensor_range;

struct npu_memsys {
    npu_memsys_config cfg;
    npu_l2 l2;
    npu_dram dram;
    dma_engine engine[NPU_MEMSYS_MAX_CORES];
    tensor_range tensors[NPU_L2_MAX_TENSORS];
    unsigned ntensors;
    npu_memsys_trace_fn trace;
    void *trace_ctx;
    npu_memsys_line_fn line_fn;
    void *line_ctx;
    struct {
        npu_memsys_observer_fn fn;
        void *ctx;
    } observer[NPU_MEMSYS_MAX_OBSERVERS];
    unsigned nobservers;
    int draining; /* inside npu_memsys_drain: DRAM writes are the end-of-run write-back */
    int drained;  /* kernel_dram holds the DRAM as the first drain found it */
    npu_dram_checkpoint kernel_dram;
};

static void notify(const npu_memsys *ms, const npu_memsys_event *ev)
{
    for (unsigned i = 0; i < ms->nobservers; i++)
        ms->observer[i].fn(ms->observer[i].ctx, ev);
}

static uint64_t dram_read_port(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return npu_memsys_dram_access(ctx, now, addr, bytes, 0);
}

static uint64_t dram_write_port(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return npu_memsys_dram_access(ctx, now, addr, bytes, 1);
}

static uint64_t own_line(void *ctx, unsigned core, uint64_t now, uint64_t addr, unsigned bytes, int is_write)
{
    return npu_memsys_line((npu_memsys *)ctx, core, now, addr, bytes, is_write);
}

npu_memsys *npu_memsys_new(const npu_memsys_config *cfg, char *msg, unsigned size)
{
    char tmp[160];
    if (!msg) {
        msg = tmp;
        size = sizeof tmp;
    }
    if (cfg->cores < 1 || cfg->cores > NPU_MEMSYS_MAX_CORES || cfg->dma_bytes_per_cycle < 1 ||
        cfg->dma_outstanding < 1 || cfg->dma_outstanding > NPU_MEMSYS_MAX_OUTSTANDING) {
        snprintf(msg, size, "memsys needs 1 .. %d cores, DMA bandwidth >= 1 and 1 .. %d line requests in flight",
                 NPU_MEMSYS_MAX_CORES, NPU_MEMSYS_MAX_OUTSTANDING);
        return NULL;
    }
    if (npu_l2_config_check(&cfg->l2, msg, size) != NPU_OK || npu_dram_config_check(&cfg->dram, msg, size) != NPU_OK)
        return NULL;
    npu_memsys *ms = calloc(1, sizeof *ms);
    if (!ms) {
        snprintf(msg, size, "out of memory");
        return NULL;
    }
    ms->cfg = *cfg;
    if (npu_l2_init(&ms->l2, &cfg->l2) != NPU_OK || npu_dram_init(&ms->dram, &cfg->dram) != NPU_OK) {
        snprintf(msg, size, "cannot allocate the L2 tags");
        npu_l2_fini(&ms->l2);
        npu_dram_fini(&ms->dram);
        free(ms);
        return NULL;
    }
    /* The L2 reaches the DRAM through the memsys, which shows the requests to its observers. */
    npu_mem_port port = npu_memsys_dram_port(ms);
    npu_l2_set_next_level(&ms->l2, &port);
    for (unsigned k = 0; k < cfg->cores; k++) {
        ms->engine[k].window = calloc(cfg->dma_outstanding, sizeof(uint64_t));
        if (!ms->engine[k].window) {
            snprintf(msg, size, "out of memory");
            npu_memsys_free(ms);
            return NULL;
        }
    }
    ms->line_fn = own_line;
    ms->line_ctx = ms;
    return ms;
}

void npu_memsys_free(npu_memsys *ms)
{
    if (!ms)
        return;
    for (unsigned k = 0; k < NPU_MEMSYS_MAX_CORES; k++)
        free(ms->engine[k].window);
    npu_l2_fini(&ms->l2);
    npu_dram_fini(&ms->dram);
    free(ms);
}

int npu_memsys_add_tensor(npu_memsys *ms, uint64_t addr, uint64_t bytes, unsigned index)
{
    if (ms->ntensors >= NPU_L2_MAX_TENSORS)
        return NPU_EINVAL;
    ms->tensors[ms->ntensors++] = (tensor_range){ addr, addr + bytes, index };
    return NPU_OK;
}

unsigned npu_memsys_tensor_of(const npu_memsys *ms, uint64_t addr)
{
    for (unsigned i = 0; i < ms->ntensors; i++)
        if (addr >= ms->tensors[i].lo && addr < ms->tensors[i].hi)
            return ms->tensors[i].index;
    return 0;
}

void npu_memsys_warm(npu_memsys *ms, uint64_t addr, uint64_t bytes, unsigned tensor)
{
    npu_l2_warm(&ms->l2, addr, bytes, 0, tensor);
}

void npu_memsys_set_trace(npu_memsys *ms, npu_memsys_trace_fn fn, void *ctx)
{
    ms->trace = fn;
    ms->trace_ctx = ctx;
}

void npu_memsys_set_line_port(npu_memsys *ms, npu_memsys_line_fn fn, void *ctx)
{
    ms->line_fn = fn ? fn : own_line;
    ms->line_ctx = fn ? ctx : ms;
}

int npu_memsys_add_observer(npu_memsys *ms, npu_memsys_observer_fn fn, void *ctx)
{
    if (!fn || ms->nobservers >= NPU_MEMSYS_MAX_OBSERVERS)
        return NPU_EINVAL;
    ms->observer[ms->nobservers].fn = fn;
    ms->observer[ms->nobservers].ctx = ctx;
    ms->nobservers++;
    return NPU_OK;
}

void npu_memsys_remove_observer(npu_memsys *ms, npu_memsys_observer_fn fn, void *ctx)
{
    for (unsigned i = 0; i < ms->nobservers; i++)
        if (ms->observer[i].fn == fn && ms->observer[i].ctx == ctx) {
            for (unsigned j = i + 1; j < ms->nobservers; j++)
                ms->observer[j - 1] = ms->observer[j];
            ms->nobservers--;
            return;
        }
}

uint64_t npu_memsys_dram_access(npu_memsys *ms, uint64_t now, uint64_t addr, unsigned bytes, int is_write)
{
    const uint64_t done =
        is_write ? npu_dram_write(&ms->dram, now, addr, bytes) : npu_dram_read(&ms->dram, now, addr, bytes);
    if (ms->nobservers) {
        npu_memsys_event ev = { NPU_MEMSYS_DRAM, 0, 0, now, done, addr, bytes, is_write, ms->draining, NULL };
        notify(ms, &ev);
    }
    return done;
}

static uint64_t dram_probe_port(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return npu_dram_probe_read(&((npu_memsys *)ctx)->dram, now, addr, bytes);
}

npu_mem_port npu_memsys_dram_port(npu_memsys *ms)
{
    return (npu_mem_port){ ms, dram_read_port, dram_write_port, dram_probe_port };
}

uint64_t npu_memsys_drain(npu_memsys *ms, uint64_t end)
{
    if (!ms->drained) {
        npu_dram_checkpoint_take(&ms->dram, end, &ms->kernel_dram);
        ms->drained = 1;
    }
    ms->draining = 1;
    const uint64_t done = npu_l2_clean(&ms->l2, end);
    ms->draining = 0;
    return done;
}

const npu_dram_checkpoint *npu_memsys_kernel_dram(const npu_memsys *ms)
{
    return ms->drained ? &ms->kernel_dram : NULL;
}

void npu_memsys_set_horizon(npu_memsys *ms, uint64_t cycle)
{
    /* A transfer's line requests leave at or after its start, and reach the DRAM later still. */
    npu_l2_set_horizon(&ms->l2, cycle);
    npu_dram_set_horizon(&ms->dram, cycle);
}

npu_l2 *npu_memsys_l2(npu_memsys *ms) { return &ms->l2; }
npu_dram *npu_memsys_dram(npu_memsys *ms) { return &ms->dram; }
const npu_memsys_config *npu_memsys_get_config(const npu_memsys *ms) { return &ms->cfg; }

uint64_t npu_memsys_line(npu_memsys *ms, unsigned core, uint64_t now, uint64_t addr, unsigned bytes, int is_write)
{
    const unsigned tensor = npu_memsys_tensor_of(ms, addr);
    npu_l2_result r;
    const uint64_t done = npu_l2_access(&ms->l2, now, addr, bytes, is_write, core, tensor, &r);
    if (ms->trace) {
        npu_memsys_access a = { core, tensor, now, addr, done, bytes, is_write };
        ms->trace(ms->trace_ctx, &a);
    }
    if (ms->nobservers) {
        npu_memsys_event ev = { NPU_MEMSYS_L2_ACCESS, core, tensor, now, done, addr, bytes, is_write, 0, &r };
        notify(ms, &ev);
    }
    return done;
}

/* One piece of a row (within one line): wait for the engine's bytes and a
 * free slot in its window, then send it. */
static uint64_t send_piece(npu_memsys *ms, unsigned core, dma_engine *e, uint64_t ready, uint64_t addr,
                           unsigned bytes, int is_write)
{
    const unsigned k = ms->cfg.dma_outstanding;
    uint64_t *slot = &e->window[e->issued % k];
    uint64_t issue = ready;
    if (e->issued >= k && *slot > issue)
        issue = *slot; /* the request k back must have completed */
    if (issue < e->last_issue)
        issue = e->last_issue;
    const uint64_t done = ms->line_fn(ms->line_ctx, core, issue, addr, bytes, is_write);
    *slot = done;
    e->issued++;
    e->last_issue = issue;
    return done;
}

uint64_t npu_memsys_dma(void *ctx, unsigned core, uint64_t start, const npu_dma_request *rq)
{
    npu_memsys *ms = ctx;
    if (core >= ms->cfg.cores)
        core = ms->cfg.cores - 1;
    dma_engine *e = &ms->engine[core];
    const uint64_t line = npu_l2_line_bytes(&ms->l2);
    const uint64_t bpc = ms->cfg.dma_bytes_per_cycle;
    const int is_write = !rq->to_ub;
    uint64_t sent = 0, done = start;
    /* The address walk of sim/exec_mem.c (dma_transfer): rows over two outer dims. */
    for (uint64_t k2 = 0; k2 < rq->shape.count[1]; k2++) {
        for (uint64_t k1 = 0; k1 < rq->shape.count[0]; k1++) {
            uint64_t g = rq->gm_addr + k1 * (uint64_t)rq->shape.gm_stride[0] + k2 * (uint64_t)rq->shape.gm_stride[1];
            const uint64_t end = g + rq->row_bytes;
            while (g < end) {
                uint64_t piece = line - g % line;
                if (piece > end - g)
                    piece = end - g;
                sent += piece;
                /* A line request leaves once its bytes have passed the engine. */
                uint64_t d = send_piece(ms, core, e, start + (sent + bpc - 1) / bpc, g, (unsigned)piece, is_write);
                if (d > done)
                    done = d;
                g += piece;
            }
        }
    }
    return done;
}
