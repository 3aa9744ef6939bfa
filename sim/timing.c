/* The cycle-exact, event-driven timing model of one core (see timing.h).
 * Per instruction: execute it functionally, then compute its issue cycle as
 * the latest of its constraints, charge the gap before it to the constraint
 * that bound, and book its slot, unit, result and DMA. Nothing is ticked. */
#include "npusim/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Register ids in the scoreboard: s0..s31, v0..v31, p0..p7. */
enum { RID_S = 0, RID_V = 32, RID_P = 64, NUM_RIDS = 72, MAX_SRCS = 6, MAX_DSTS = 2 };
enum { DMA_FIFO = 64 };

/* What the timing model needs of one static instruction, computed once. */
typedef struct pc_deps {
    uint8_t nsrc, ndst;
    uint8_t src[MAX_SRCS];
    uint8_t dst[MAX_DSTS];
    uint8_t unit, cls;
    uint8_t branch; /* F_BRANCH: may redirect the PC */
} pc_deps;

struct npu_timed_core {
    npu_core *core;
    npu_timing_config cfg;
    pc_deps *deps;       /* one per static instruction */
    uint64_t *pc_stalls; /* [pc * NPU_NUM_STALLS + reason] */
    uint64_t nprog;

    uint32_t class_slots[NPU_NUM_CLASSES]; /* bit s: slot s (< issue width) accepts the class */

    /* issue state */
    int any_issued;
    uint64_t last_issue;    /* cycle of the latest issue */
    uint32_t slots_used;    /* slots taken in last_issue */
    unsigned in_cycle;      /* instructions issued in last_issue */
    uint64_t seq;

    /* constraints */
    uint64_t ready[NUM_RIDS];      /* cycle a register's pending write completes */
    uint8_t producer[NUM_RIDS];    /* unit of that write */
    uint64_t unit_free[NPU_NUM_UNITS][NPU_MAX_UNIT_COUNT];
    uint8_t unit_bank[NPU_NUM_UNITS][NPU_MAX_UNIT_COUNT]; /* busy time includes bank conflicts */
    uint64_t redirect;             /* first cycle after a taken branch's refetch */
    uint64_t sync_ready;           /* barrier release */
    uint64_t tag_done[NPU_NUM_DMA_TAGS];
    uint64_t dma_engine_free;
    uint64_t dma_fifo[DMA_FIFO];   /* completion cycles of transfers in flight, in order */
    unsigned dma_head, dma_count;
    uint64_t last_completion;

    /* dataflow (critical path): registers' ready times with unlimited resources */
    uint64_t df_ready[NUM_RIDS];

    int finished;
    npu_core_stats stats;
    npu_issue_hook hook;
    void *hook_ctx;
    npu_dma_backend dma_backend; /* NULL: the ideal memory */
    void *dma_ctx;
};

const char *npu_stall_name(npu_stall s)
{
    static const char *const names[NPU_NUM_STALLS] = {
        [NPU_STALL_SYNC] = "sync",         [NPU_STALL_DMA_WAIT] = "dma_wait",
        [NPU_STALL_RAW] = "raw",           [NPU_STALL_UB_BANK] = "ub_bank",
        [NPU_STALL_UNIT_BUSY] = "unit_busy", [NPU_STALL_BRANCH] = "branch",
        [NPU_STALL_SLOT] = "slot",         [NPU_STALL_DRAIN] = "drain",
    };
    return (unsigned)s < NPU_NUM_STALLS ? names[s] : "?";
}

const char *npu_unit_name(npu_unit u)
{
    static const char *const names[NPU_NUM_UNITS] = { "scalar", "branch", "valu", "sfu", "lsu", "dma", "sync" };
    return (unsigned)u < NPU_NUM_UNITS ? names[u] : "?";
}

const char *npu_class_name(npu_class c)
{
    static const char *const names[NPU_NUM_CLASSES] = { "scalar", "branch", "vector", "mem", "dma", "sync" };
    return (unsigned)c < NPU_NUM_CLASSES ? names[c] : "?";
}

void npu_timing_config_default(npu_timing_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    /* Four slots: scalar/branch/sync, two vector, memory/DMA. */
    cfg->issue_width = 4;
    cfg->slot_classes[0] = 1u << CLASS_SCALAR | 1u << CLASS_BRANCH | 1u << CLASS_SYNC;
    cfg->slot_classes[1] = 1u << CLASS_VECTOR;
    cfg->slot_classes[2] = 1u << CLASS_VECTOR;
    cfg->slot_classes[3] = 1u << CLASS_MEM | 1u << CLASS_DMA;
    cfg->unit[UNIT_SCALAR] = (npu_unit_timing){ 1, 1, 1 };
    cfg->unit[UNIT_BRANCH] = (npu_unit_timing){ 1, 1, 1 };
    cfg->unit[UNIT_VALU] = (npu_unit_timing){ 2, 4, 1 };
    cfg->unit[UNIT_SFU] = (npu_unit_timing){ 1, 12, 2 };
    cfg->unit[UNIT_LSU] = (npu_unit_timing){ 1, 6, 1 };
    cfg->unit[UNIT_DMA] = (npu_unit_timing){ 1, 1, 1 };
    cfg->unit[UNIT_SYNC] = (npu_unit_timing){ 1, 1, 1 };
    cfg->branch_penalty = 2;
    cfg->ub_banks = 16;
    cfg->ub_bank_bytes = 32;
    cfg->dma_latency = 200;
    cfg->dma_bytes_per_cycle = 32;
    cfg->dma_queue_depth = 8;
    cfg->dma_outstanding = NPU_DMA_OUTSTANDING_DEFAULT;
    cfg->sim_quantum = NPU_SIM_QUANTUM_DEFAULT;
}

int npu_timing_config_check(const npu_timing_config *cfg, char *msg, unsigned size)
{
    if (cfg->issue_width < 1 || cfg->issue_width > NPU_MAX_ISSUE_WIDTH) {
        snprintf(msg, size, "issue width %u outside 1 .. %d", cfg->issue_width, NPU_MAX_ISSUE_WIDTH);
        return NPU_EINVAL;
    }
    for (unsigned c = 0; c < NPU_NUM_CLASSES; c++) {
        int taken = 0;
        for (unsigned s = 0; s < cfg->issue_width; s++)
            taken |= (cfg->slot_classes[s] >> c) & 1;
        if (!taken) {
            snprintf(msg, size, "no issue slot accepts class '%s'", npu_class_name((npu_class)c));
            return NPU_EINVAL;
        }
    }
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++) {
        const npu_unit_timing *t = &cfg->unit[u];
        if (t->count < 1 || t->count > NPU_MAX_UNIT_COUNT || t->latency < 1 || t->interval < 1) {
            snprintf(msg, size, "unit '%s' needs count 1 .. %d, latency >= 1 and interval >= 1",
                     npu_unit_name((npu_unit)u), NPU_MAX_UNIT_COUNT);
            return NPU_EINVAL;
        }
    }
    if (cfg->ub_banks < 1 || cfg->ub_banks > 64 || cfg->ub_bank_bytes < 2) {
        snprintf(msg, size, "UB needs 1 .. 64 banks of at least 2 bytes");
        return NPU_EINVAL;
    }
    if (cfg->dma_bytes_per_cycle < 1 || cfg->dma_queue_depth < 1 || cfg->dma_queue_depth > DMA_FIFO) {
        snprintf(msg, size, "DMA needs bandwidth >= 1 byte/cycle and queue depth 1 .. %d", DMA_FIFO);
        return NPU_EINVAL;
    }
    return NPU_OK;
}

/* ---- static dependencies ------------------------------------------------ */

static void add_src(pc_deps *d, unsigned rid)
{
    if (rid == RID_S + 0) /* s0 is always ready */
        return;
    for (unsigned i = 0; i < d->nsrc; i++)
        if (d->src[i] == rid)
            return;
    if (d->nsrc < MAX_SRCS)
        d->src[d->nsrc++] = (uint8_t)rid;
}

static void add_dst(pc_deps *d, unsigned rid)
{
    if (rid != RID_S + 0 && d->ndst < MAX_DSTS)
        d->dst[d->ndst++] = (uint8_t)rid;
}

static void compute_deps(const npu_insn *in, pc_deps *d)
{
    memset(d, 0, sizeof *d);
    if (in->op == NPU_OP_INVALID || in->op >= NPU_NUM_OPS)
        return;
    const npu_insn_desc *desc = &npu_insn_table[in->op];
    const npu_format_desc *f = &npu_format_table[desc->format];
    d->unit = desc->unit;
    d->cls = desc->cls;
    d->branch = (desc->flags & F_BRANCH) != 0;
    /* Stores read the register the format names as a destination; loop reads and writes it. */
    const int vd_is_src = in->op == NPU_OP_VST || in->op == NPU_OP_VSTS;
    const int sd_is_src = in->op == NPU_OP_LOOP || in->op == NPU_OP_LIH;
    for (unsigned i = 0; i < f->num_operands; i++) {
        switch (f->operands[i]) {
        case OPK_SD: add_dst(d, RID_S + in->rd); if (sd_is_src) add_src(d, RID_S + in->rd); break;
        case OPK_SA: case OPK_MEM: add_src(d, RID_S + in->rs1); break;
        case OPK_SB: add_src(d, RID_S + in->rs2); break;
        case OPK_SC: add_src(d, RID_S + in->rs3); break;
        case OPK_VD: if (vd_is_src) add_src(d, RID_V + in->rd); else add_dst(d, RID_V + in->rd); break;
        case OPK_VA: add_src(d, RID_V + in->rs1); break;
        case OPK_VB: add_src(d, RID_V + in->rs2); break;
        case OPK_VC: add_src(d, RID_V + in->rs3); break;
        case OPK_PD: add_dst(d, RID_P + (in->rd & 7)); break;
        case OPK_PA: add_src(d, RID_P + (in->rs1 & 7)); break;
        case OPK_PB: add_src(d, RID_P + (in->rs2 & 7)); break;
        case OPK_PS: add_src(d, RID_P + (in->pg & 7)); break;
        default: break;
        }
    }
    if (in->pm) {
        /* Masked writes merge: the mask and the old destination are read too
         * (masked loads zero their inactive lanes instead, so they read only the mask). */
        add_src(d, RID_P + (in->pg & 7));
        if (in->op != NPU_OP_VLD && in->op != NPU_OP_VLDS)
            for (unsigned i = 0; i < d->ndst; i++)
                add_src(d, d->dst[i]);
    }
}

npu_timed_core *npu_timed_core_new(npu_core *core, const npu_timing_config *cfg)
{
    char msg[128];
    if (!core || !core->prog || npu_timing_config_check(cfg, msg, sizeof msg) != NPU_OK)
        return NULL;
    npu_timed_core *tc = calloc(1, sizeof *tc);
    if (!tc)
        return NULL;
    tc->core = core;
    tc->cfg = *cfg;
    tc->nprog = core->prog->count;
    tc->deps = calloc(tc->nprog ? tc->nprog : 1, sizeof *tc->deps);
    tc->pc_stalls = calloc((tc->nprog + 1) * NPU_NUM_STALLS, sizeof *tc->pc_stalls);
    if (!tc->deps || !tc->pc_stalls) {
        npu_timed_core_free(tc);
        return NULL;
    }
    for (uint64_t pc = 0; pc < tc->nprog; pc++)
        compute_deps(&core->prog->insns[pc], &tc->deps[pc]);
    for (unsigned s = 0; s < cfg->issue_width; s++)
        for (unsigned c = 0; c < NPU_NUM_CLASSES; c++)
            tc->class_slots[c] |= ((cfg->slot_classes[s] >> c) & 1u) << s;
    return tc;
}

void npu_timed_core_free(npu_timed_core *tc)
{
    if (!tc)
        return;
    free(tc->deps);
    free(tc->pc_stalls);
    free(tc);
}

void npu_timed_core_set_hook(npu_timed_core *tc, npu_issue_hook hook, void *ctx)
{
    tc->hook = hook;
    tc->hook_ctx = ctx;
}

void npu_timed_core_set_dma_backend(npu_timed_core *tc, npu_dma_backend fn, void *ctx)
{
    tc->dma_backend = fn;
    tc->dma_ctx = ctx;
}

npu_dma_backend npu_timed_core_dma_backend(const npu_timed_core *tc, void **ctx)
{
    if (ctx)
        *ctx = tc->dma_ctx;
    return tc->dma_backend;
}

const npu_timing_config *npu_timed_core_config(const npu_timed_core *tc) { return &tc->cfg; }
const npu_core_stats *npu_timed_stats(const npu_timed_core *tc) { return &tc->stats; }
npu_core *npu_timed_core_core(npu_timed_core *tc) { return tc->core; }

const uint64_t *npu_timed_pc_stalls(const npu_timed_core *tc, uint64_t pc)
{
    return &tc->pc_stalls[(pc < tc->nprog ? pc : tc->nprog) * NPU_NUM_STALLS];
}

uint64_t npu_timed_now(const npu_timed_core *tc)
{
    return tc->any_issued ? tc->last_issue : 0;
}

void npu_timed_release(npu_timed_core *tc, uint64_t cycle)
{
    if (cycle > tc->sync_ready)
        tc->sync_ready = cycle;
}

/* ---- the issue of one instruction -------------------------------------- */

/* UB bank occupancy of a vector access: the most lanes that hit one bank. */
static unsigned bank_cycles(const npu_timed_core *tc, const npu_step_info *info)
{
    const unsigned banks = tc->cfg.ub_banks, bw = tc->cfg.ub_bank_bytes;
    if (info->ub_lanes == 0)
        return 1;
    if (info->ub_stride == 0) { /* contiguous: chunks spread round-robin over the banks */
        uint64_t first = info->ub_addr / bw, last = (info->ub_addr + info->ub_bytes - 1) / bw;
        uint64_t chunks = last - first + 1;
        return (unsigned)((chunks + banks - 1) / banks);
    }
    uint8_t hits[64] = { 0 };
    unsigned worst = 1;
    uint64_t stride = (uint64_t)(info->ub_stride < 0 ? -info->ub_stride : info->ub_stride);
    for (unsigned i = 0; i < info->ub_lanes; i++) {
        unsigned b = (unsigned)(((info->ub_addr + i * stride) / bw) % banks);
        if (++hits[b] > worst)
            worst = hits[b];
    }
    return worst;
}

static void close_cycle(npu_timed_core *tc)
{
    if (tc->any_issued) {
        tc->stats.issue_histogram[tc->in_cycle]++;
        tc->stats.issue_cycles++;
    }
}

static void charge(npu_timed_core *tc, uint64_t pc, npu_stall reason, unsigned producer, uint64_t gap)
{
    if (!gap)
        return;
    tc->stats.stall[reason] += gap;
    tc->stats.issue_histogram[0] += gap;
    tc->pc_stalls[pc * NPU_NUM_STALLS + reason] += gap;
    if (reason == NPU_STALL_RAW)
        tc->stats.raw_by_unit[producer] += gap;
}

npu_core_state npu_timed_step(npu_timed_core *tc)
{
    npu_core *c = tc->core;
    npu_step_info info;
    const uint64_t pc = c->pc;
    npu_core_state st = npu_core_step(c, &info);
    if (st == NPU_CORE_TRAPPED)
        return st;
    const pc_deps *d = &tc->deps[pc];
    const npu_timing_config *cfg = &tc->cfg;
    const npu_insn *in = info.insn;

    /* The latest constraint wins; ties keep the earlier reason in npu_stall order. */
    uint64_t t = tc->any_issued ? tc->last_issue : 0;
    const uint64_t oldest = t;
    npu_stall why = NPU_STALL_SLOT;
    unsigned producer = 0;
#define CONSTRAIN(when, reason) \
    do { if ((when) > t) { t = (when); why = (reason); } } while (0)

    CONSTRAIN(tc->sync_ready, NPU_STALL_SYNC);
    if (in->op == NPU_OP_DMAWAIT)
        CONSTRAIN(tc->tag_done[(unsigned)in->imm & (NPU_NUM_DMA_TAGS - 1)], NPU_STALL_DMA_WAIT);
    if (info.has_dma && tc->dma_count >= cfg->dma_queue_depth)
        CONSTRAIN(tc->dma_fifo[tc->dma_head], NPU_STALL_DMA_WAIT);
    uint64_t df = 0; /* dataflow limit (below), from the same sources */
    for (unsigned i = 0; i < d->nsrc; i++) {
        const unsigned r = d->src[i];
        if (tc->ready[r] > t) {
            t = tc->ready[r];
            why = NPU_STALL_RAW;
            producer = tc->producer[r];
        }
        if (tc->df_ready[r] > df)
            df = tc->df_ready[r];
    }
    const npu_unit_timing *ut = &cfg->unit[d->unit];
    for (unsigned i = 0; i < d->ndst; i++) {
        /* WAW: this write may not complete before an older one to the same register. */
        uint64_t older = tc->ready[d->dst[i]];
        if (older > ut->latency && older - ut->latency + 1 > t) {
            t = older - ut->latency + 1;
            why = NPU_STALL_RAW;
            producer = tc->producer[d->dst[i]];
        }
    }
    unsigned inst = 0;
    for (unsigned k = 1; k < ut->count; k++)
        if (tc->unit_free[d->unit][k] < tc->unit_free[d->unit][inst])
            inst = k;
    CONSTRAIN(tc->unit_free[d->unit][inst], tc->unit_bank[d->unit][inst] ? NPU_STALL_UB_BANK : NPU_STALL_UNIT_BUSY);
    CONSTRAIN(tc->redirect, NPU_STALL_BRANCH);
#undef CONSTRAIN

    /* A slot: the lowest one that accepts the class and, in the current
     * cycle, is not yet taken. */
    unsigned slot = 0;
    for (;;) {
        uint32_t taken = (tc->any_issued && t == tc->last_issue) ? tc->slots_used : 0;
        uint32_t open = tc->class_slots[d->cls] & ~taken;
        if (open) {
            while (!((open >> slot) & 1))
                slot++;
            break;
        }
        t++; /* every fitting slot is taken this cycle: the next one has them free */
    }

    /* Book the cycles between the previous issue cycle and this one. */
    uint64_t gap = 0;
    if (!tc->any_issued || t > tc->last_issue) {
        uint64_t from = tc->any_issued ? tc->last_issue + 1 : 0;
        gap = t - from;
        close_cycle(tc);
        charge(tc, pc, why, producer, gap);
        tc->last_issue = t;
        tc->slots_used = 0;
        tc->in_cycle = 0;
        tc->any_issued = 1;
    }
    tc->slots_used |= 1u << slot;
    tc->in_cycle++;

    /* Occupy the unit; bank conflicts stretch an LSU access. */
    uint64_t extra = 0;
    if (d->unit == UNIT_LSU && info.ub_lanes) {
        extra = bank_cycles(tc, &info) - 1;
        tc->stats.ub_bank_extra += extra;
    }
    tc->unit_free[d->unit][inst] = t + ut->interval + extra;
    tc->unit_bank[d->unit][inst] = extra != 0;
    uint64_t complete = t + ut->latency + extra;
    uint64_t dma_start = 0;

    if (info.has_dma) {
        const npu_dma_request *rq = &info.dma;
        while (tc->dma_count && tc->dma_fifo[tc->dma_head] <= t) {
            tc->dma_head = (tc->dma_head + 1) % DMA_FIFO;
            tc->dma_count--;
        }
        if (tc->dma_count >= cfg->dma_queue_depth) { /* cannot happen after the constraint; keep FIFO sane */
            tc->dma_head = (tc->dma_head + 1) % DMA_FIFO;
            tc->dma_count--;
        }
        uint64_t start = t + 1 > tc->dma_engine_free ? t + 1 : tc->dma_engine_free;
        uint64_t transfer = (rq->total_bytes + cfg->dma_bytes_per_cycle - 1) / cfg->dma_bytes_per_cycle;
        tc->dma_engine_free = start + transfer;
        dma_start = start;
        uint64_t done = start + transfer + cfg->dma_latency;
        if (tc->dma_backend) {
            done = tc->dma_backend(tc->dma_ctx, c->cfg.core_id, start, rq);
            if (done < start)
                done = start;
        }
        tc->dma_fifo[(tc->dma_head + tc->dma_count) % DMA_FIFO] = done;
        tc->dma_count++;
        if (done > tc->tag_done[rq->tag])
            tc->tag_done[rq->tag] = done;
        tc->stats.dma_transfers++;
        if (rq->to_ub)
            tc->stats.dma_bytes_in += rq->total_bytes;
        else
            tc->stats.dma_bytes_out += rq->total_bytes;
        complete = done;
    }

    for (unsigned i = 0; i < d->ndst; i++) {
        tc->ready[d->dst[i]] = t + ut->latency + extra;
        tc->producer[d->dst[i]] = d->unit;
    }
    if (d->branch) {
        /* Static prediction: direct jumps and backward conditional branches
         * (loop back-edges) are predicted taken, forward ones not taken, and
         * jr never. A taken branch ends the issue group; a mispredicted one
         * also costs the refetch penalty. */
        const int taken = info.next_pc != pc + 1;
        int predicted;
        if (in->op == NPU_OP_J || in->op == NPU_OP_JAL)
            predicted = 1;
        else if (in->op == NPU_OP_JR)
            predicted = 0;
        else
            predicted = in->imm <= 0; /* backward, or a branch to itself */
        if (taken != predicted)
            tc->redirect = t + 1 + cfg->branch_penalty;
        else if (taken)
            tc->redirect = t + 1;
    }
    if (complete > tc->last_completion)
        tc->last_completion = complete;

    /* Dataflow limit: the same dependencies with unlimited slots and units
     * (df, the latest source, was read with the RAW constraints above). */
    for (unsigned i = 0; i < d->ndst; i++)
        tc->df_ready[d->dst[i]] = df + ut->latency;
    if (d->ndst && df + ut->latency > tc->stats.critical_path)
        tc->stats.critical_path = df + ut->latency;

    tc->stats.instructions++;
    tc->stats.slot_issued[slot]++;
    tc->stats.unit_issued[d->unit]++;
    tc->stats.unit_busy[d->unit] += ut->interval + extra;
    tc->stats.class_issued[d->cls]++;

    if (tc->hook) {
        npu_issue_event ev = { tc->seq, pc, in, oldest, t, complete, slot, (npu_unit)d->unit, why, gap,
                               tc->dma_count, dma_start };
        tc->hook(tc->hook_ctx, &ev);
    }
    tc->seq++;
    return c->state;
}

void npu_timed_finish(npu_timed_core *tc)
{
    if (!tc->any_issued || tc->finished) {
        return;
    }
    tc->finished = 1;
    close_cycle(tc);
    uint64_t end = tc->last_issue + 1;
    if (tc->last_completion > end) {
        uint64_t pc = tc->core->pc < tc->nprog ? tc->core->pc : tc->nprog;
        charge(tc, pc, NPU_STALL_DRAIN, 0, tc->last_completion - end);
        end = tc->last_completion;
    }
    tc->stats.cycles = end;
}
