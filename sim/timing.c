/* The cycle-exact, event-driven timing model of one core (see timing.h).
 * Per instruction: execute it functionally, then compute its issue cycle as
 * the latest of its constraints, charge the gap before it to the constraint
 * that bound, and book its slot, unit, result and DMA. Nothing is ticked. */
#include "npusim/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "race.h"

/* Register ids in the scoreboard: s0..s31, v0..v31, p0..p7. */
enum { RID_S = 0, RID_V = 32, RID_P = 64, NUM_RIDS = 72, MAX_SRCS = 6, MAX_DSTS = 2 };
enum { DMA_FIFO = 64, PIPE_FIFO = 64 };

/* One of the cube unit's pipes: when it is free, and the completion cycles
 * of its operations in flight, oldest first. */
typedef struct pipe_state {
    uint64_t free;
    uint64_t fifo[PIPE_FIFO];
    unsigned head, count;
} pipe_state;

/* One of the core's UB loads or stores still completing (T7): its bytes
 * (lowest to highest of its active lanes; `write` for a store) and its
 * completion cycle. */
typedef struct ub_flight {
    npu_span bytes;
    uint64_t done;
} ub_flight;

/* What the timing model needs of one static instruction, computed once. */
typedef struct pc_deps {
    uint8_t nsrc, ndst;
    uint8_t src[MAX_SRCS];
    uint8_t dst[MAX_DSTS];
    uint8_t unit, cls;
    uint8_t cf;       /* npu_control_flow of the row */
    uint8_t wait_tag; /* 1 + the DMA tag it waits for (a TAG-file source), or 0 */
} pc_deps;

struct npu_timed_core {
    npu_core *core;
    npu_timing_config cfg;
    pc_deps *deps;       /* one per static instruction */
    uint64_t *pc_stalls; /* [pc * NPU_NUM_STALLS + reason] */
    uint64_t *pc_issued; /* [pc]: times issued */
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
    uint8_t unit_next[NPU_NUM_UNITS]; /* the instance next in turn (every unit but the LSU) */
    uint64_t redirect;             /* first cycle after a taken branch's refetch */
    uint64_t sync_ready;           /* barrier release */
    uint64_t tag_done[NPU_NUM_DMA_TAGS];
    uint64_t dma_engine_free;
    uint64_t dma_fifo[DMA_FIFO];   /* completion cycles of transfers in flight, in order */
    unsigned dma_head, dma_count;
    pipe_state pipe[NPU_NUM_PIPES];
    uint64_t last_completion;

    /* dataflow (critical path): registers' ready times with unlimited resources */
    uint64_t df_ready[NUM_RIDS];

    int finished;
    npu_core_stats stats;
    npu_issue_hook hook;
    void *hook_ctx;
    npu_dma_backend dma_backend; /* NULL: the ideal memory */
    void *dma_ctx;
    int dma_pending;
    uint64_t ub_bank_free[64];     /* UB banks, shared by every LSU: next free cycle */
    unsigned bank_bytes_log2, banks_log2; /* log2 of ub_bank_bytes and ub_banks, when powers of two */
    int bank_pow2;                 /* both are (then UB words and banks need no division) */
    ub_flight *fly;                /* UB loads and stores in flight, in issue order (a ring) */
    unsigned fly_head, fly_count, fly_cap; /* a ring of fly_cap entries, a power of two */
    uint64_t fly_lost;             /* the latest completion of one not kept (out of host memory) */
    /* A transfer issued into a DMA backend but not yet booked there (the run
     * loop books transfers of all cores in start order, see run.h). */
    npu_dma_request pending_rq;
    npu_issue_event pending_ev;
};

const char *npu_stall_name(npu_stall s)
{
    static const char *const names[NPU_NUM_STALLS] = {
        [NPU_STALL_SYNC] = "sync",         [NPU_STALL_DMA_WAIT] = "dma_wait",
        [NPU_STALL_RAW] = "raw",           [NPU_STALL_UB_BANK] = "ub_bank",
        [NPU_STALL_UNIT_BUSY] = "unit_busy", [NPU_STALL_BRANCH] = "branch",
        [NPU_STALL_SLOT] = "slot",         [NPU_STALL_DRAIN] = "drain",
        [NPU_STALL_WAW] = "waw",
    };
    return (unsigned)s < NPU_NUM_STALLS ? names[s] : "?";
}

const char *npu_unit_name(npu_unit u)
{
    static const char *const names[NPU_NUM_UNITS] = { "scalar", "branch", "valu", "sfu", "lsu", "dma", "sync" };
    return (unsigned)u < NPU_NUM_UNITS ? names[u] : "?";
}

const char *npu_pipe_name(npu_pipe p)
{
    static const char *const names[NPU_NUM_PIPES] = { "mte1", "cube", "fix" };
    return (unsigned)p < NPU_NUM_PIPES ? names[p] : "?";
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
    cfg->slot_classes[0] = 1u << NPU_CLASS_SCALAR | 1u << NPU_CLASS_BRANCH | 1u << NPU_CLASS_SYNC;
    cfg->slot_classes[1] = 1u << NPU_CLASS_VECTOR;
    cfg->slot_classes[2] = 1u << NPU_CLASS_VECTOR;
    cfg->slot_classes[3] = 1u << NPU_CLASS_MEM | 1u << NPU_CLASS_DMA;
    cfg->unit[NPU_UNIT_SCALAR] = (npu_unit_timing){ 1, 1, 1 };
    cfg->unit[NPU_UNIT_BRANCH] = (npu_unit_timing){ 1, 1, 1 };
    cfg->unit[NPU_UNIT_VALU] = (npu_unit_timing){ 2, 4, 1 };
    cfg->unit[NPU_UNIT_SFU] = (npu_unit_timing){ 1, 12, 2 };
    cfg->unit[NPU_UNIT_LSU] = (npu_unit_timing){ 1, 6, 1 };
    cfg->unit[NPU_UNIT_DMA] = (npu_unit_timing){ 1, 1, 1 };
    cfg->unit[NPU_UNIT_SYNC] = (npu_unit_timing){ 1, 1, 1 };
    cfg->branch_penalty = 2;
    cfg->ub_banks = 16;
    cfg->ub_bank_bytes = 32;
    cfg->dma_latency = 20; /* the ideal memory answers like an L2 hit (npu_l2_config_default) */
    cfg->dma_bytes_per_cycle = 32;
    cfg->dma_queue_depth = 8;
    cfg->dma_outstanding = NPU_DMA_OUTSTANDING_DEFAULT;
    cfg->cube = (npu_unit_timing){ 1, 8, 1 };
    cfg->mte1_bytes_per_cycle = 512;
    cfg->mte1_latency = 4;
    cfg->fix_bytes_per_cycle = 128;
    cfg->fix_latency = 4;
    cfg->cube_queue_depth = 8;
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
    if (cfg->cube.count < 1 || cfg->cube.count > NPU_MAX_UNIT_COUNT || cfg->cube.latency < 1 ||
        cfg->cube.interval < 1 || cfg->mte1_bytes_per_cycle < 1 || cfg->fix_bytes_per_cycle < 1 ||
        cfg->cube_queue_depth < 1 || cfg->cube_queue_depth > PIPE_FIFO) {
        snprintf(msg, size, "the cube needs count 1 .. %d, latency and interval >= 1, moves of >= 1 byte/cycle "
                 "and queue depth 1 .. %d", NPU_MAX_UNIT_COUNT, PIPE_FIFO);
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

/* The scoreboard id of a register operand, or -1 for a DMA tag (waited on
 * separately) or a non-register. */
static int operand_rid(const npu_operand_desc *od, const npu_insn *in)
{
    const uint32_t reg = npu_insn_field(in, (npu_field)od->field);
    switch ((npu_regfile)od->file) {
    case NPU_RF_S: return RID_S + (int)(reg & 31);
    case NPU_RF_V: return RID_V + (int)(reg & 31);
    case NPU_RF_P: return RID_P + (int)(reg & 7);
    case NPU_RF_TAG:
    case NPU_RF_NONE: break;
    }
    return -1;
}

/* What an instruction reads and writes, from its row alone: every operand's
 * register file, field and access (isa/operands.def), the mask rule of its
 * flags and its control-flow kind. No opcode is named here. */
static void compute_deps(const npu_insn *in, pc_deps *d)
{
    memset(d, 0, sizeof *d);
    if (in->op == NPU_OP_INVALID || in->op >= NPU_NUM_OPS)
        return;
    const npu_insn_desc *desc = &npu_insn_table[in->op];
    const npu_format_desc *f = &npu_format_table[desc->format];
    d->unit = desc->unit;
    d->cls = desc->cls;
    d->cf = desc->cf;
    for (unsigned i = 0; i < f->num_operands; i++) {
        const npu_operand_desc *od = &npu_operand_table[f->operands[i]];
        if (od->file == NPU_RF_TAG) {
            if (od->access & NPU_ACC_R) /* waits until the tag's transfers complete */
                d->wait_tag = (uint8_t)(1 + (npu_insn_field(in, (npu_field)od->field) & (NPU_NUM_DMA_TAGS - 1)));
            continue;
        }
        const int rid = operand_rid(od, in);
        if (rid < 0)
            continue;
        if (od->access & NPU_ACC_W)
            add_dst(d, (unsigned)rid);
        if (od->access & NPU_ACC_R)
            add_src(d, (unsigned)rid);
    }
    if (in->pm) {
        /* Masked writes merge: the mask and the old destination are read too
         * (NPU_F_MASK_ZERO rows, masked loads, zero their inactive lanes instead). */
        add_src(d, RID_P + (in->pg & 7));
        if (!(desc->flags & NPU_F_MASK_ZERO))
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
    tc->pc_issued = calloc(tc->nprog + 1, sizeof *tc->pc_issued);
    if (!tc->deps || !tc->pc_stalls || !tc->pc_issued) {
        npu_timed_core_free(tc);
        return NULL;
    }
    for (uint64_t pc = 0; pc < tc->nprog; pc++)
        compute_deps(&core->prog->insns[pc], &tc->deps[pc]);
    for (unsigned s = 0; s < cfg->issue_width; s++)
        for (unsigned c = 0; c < NPU_NUM_CLASSES; c++)
            tc->class_slots[c] |= ((cfg->slot_classes[s] >> c) & 1u) << s;
    const unsigned bw = cfg->ub_bank_bytes, banks = cfg->ub_banks;
    tc->bank_pow2 = (bw & (bw - 1)) == 0 && (banks & (banks - 1)) == 0;
    tc->bank_bytes_log2 = (unsigned)__builtin_ctz(bw);
    tc->banks_log2 = (unsigned)__builtin_ctz(banks);
    return tc;
}

void npu_timed_core_free(npu_timed_core *tc)
{
    if (!tc)
        return;
    free(tc->deps);
    free(tc->fly);
    free(tc->pc_stalls);
    free(tc->pc_issued);
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

_Static_assert(sizeof(npu_core_stats) % sizeof(uint64_t) == 0, "npu_core_stats holds uint64_t counts only");

void npu_core_stats_merge(npu_core_stats *total, const npu_core_stats *core)
{
    const uint64_t cycles = total->cycles > core->cycles ? total->cycles : core->cycles;
    const uint64_t path = total->critical_path > core->critical_path ? total->critical_path : core->critical_path;
    uint64_t *t = (uint64_t *)total;
    const uint64_t *c = (const uint64_t *)core;
    for (size_t i = 0; i < sizeof *total / sizeof(uint64_t); i++)
        t[i] += c[i];
    total->cycles = cycles;
    total->critical_path = path;
}
npu_core *npu_timed_core_core(npu_timed_core *tc) { return tc->core; }

uint64_t npu_timed_pc_issued(const npu_timed_core *tc, uint64_t pc)
{
    return pc < tc->nprog ? tc->pc_issued[pc] : 0;
}

const uint64_t *npu_timed_pc_stalls(const npu_timed_core *tc, uint64_t pc)
{
    return &tc->pc_stalls[(pc < tc->nprog ? pc : tc->nprog) * NPU_NUM_STALLS];
}

uint64_t npu_timed_now(const npu_timed_core *tc)
{
    return tc->last_issue; /* 0 until the first issue */
}

void npu_timed_release(npu_timed_core *tc, uint64_t cycle)
{
    if (cycle > tc->sync_ready)
        tc->sync_ready = cycle;
}

/* ---- the issue of one instruction -------------------------------------- */

/* The UB word of byte address a, and the bank of word w; shifts and masks
 * where the config's sizes are powers of two (the host's division is slow). */
static inline uint64_t ub_word(const npu_timed_core *tc, uint64_t a)
{
    return tc->bank_pow2 ? a >> tc->bank_bytes_log2 : a / tc->cfg.ub_bank_bytes;
}

static inline unsigned ub_bank(const npu_timed_core *tc, uint64_t w)
{
    return (unsigned)(tc->bank_pow2 ? w & (tc->cfg.ub_banks - 1) : w % tc->cfg.ub_banks);
}

/* UB banks: bank b holds the bank words (ub_bank_bytes wide) w with
 * w % ub_banks == b, and moves one word per cycle for every LSU (the banks
 * are shared). An access needs, in each bank, the distinct words its active
 * lanes touch; it starts in every bank at its issue cycle or when the bank
 * is free, whichever is later, and takes one cycle per word there. Returns
 * the extra cycles beyond the first: (latest bank end) - (issue + 1). */
static unsigned ub_bank_book(npu_timed_core *tc, const npu_step_info *info, uint64_t t)
{
    const unsigned banks = tc->cfg.ub_banks;
    if (info->ub_lanes == 0)
        return 0;
    uint64_t end = t + 1;
    if (info->ub_stride == 0) {
        /* Contiguous: consecutive words go round-robin over the banks. */
        const uint64_t first = ub_word(tc, info->ub_addr), last = ub_word(tc, info->ub_addr + info->ub_bytes - 1);
        const uint64_t nwords = last - first + 1;
        const unsigned touched = nwords < banks ? (unsigned)nwords : banks;
        /* Bank b0 + i (mod banks) holds the words first + i, first + i +
         * banks, ...: ceil((nwords - i) / banks) of them, which is q + 1
         * for i < r and q after, nwords = q banks + r. */
        const uint64_t q = tc->bank_pow2 ? nwords >> tc->banks_log2 : nwords / banks;
        const uint64_t r = nwords - q * banks;
        unsigned b = ub_bank(tc, first);
        for (unsigned i = 0; i < touched; i++, b = b + 1 == banks ? 0 : b + 1) {
            const uint64_t words = q + (i < r);
            const uint64_t from = tc->ub_bank_free[b] > t ? tc->ub_bank_free[b] : t;
            tc->ub_bank_free[b] = from + words;
            if (from + words > end)
                end = from + words;
        }
        return (unsigned)(end - (t + 1));
    }
    /* Strided: lane addresses are monotonic, so repeated words come
     * together: a word counts once per bank when it differs from the
     * bank's last. */
    uint16_t words[64] = { 0 };
    uint64_t last_word[64];
    memset(last_word, 0xff, sizeof last_word);
    const uint64_t stride = (uint64_t)(info->ub_stride < 0 ? -info->ub_stride : info->ub_stride);
    for (unsigned i = 0; i < info->ub_lanes; i++) {
        const uint64_t w = ub_word(tc, info->ub_addr + i * stride);
        const unsigned b = ub_bank(tc, w);
        if (w != last_word[b]) {
            last_word[b] = w;
            words[b]++;
        }
    }
    for (unsigned b = 0; b < banks; b++) {
        if (!words[b])
            continue;
        const uint64_t from = tc->ub_bank_free[b] > t ? tc->ub_bank_free[b] : t;
        tc->ub_bank_free[b] = from + words[b];
        if (from + words[b] > end)
            end = from + words[b];
    }
    return (unsigned)(end - (t + 1));
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
    tc->stats.slots_lost[reason] += gap * tc->cfg.issue_width;
    tc->pc_stalls[pc * NPU_NUM_STALLS + reason] += gap;
    if (reason == NPU_STALL_RAW)
        tc->stats.raw_by_unit[producer] += gap;
}

/* A transfer's completion is known: queue it, mark its tag, finish the
 * instruction's event. */
static void dma_complete(npu_timed_core *tc, npu_issue_event *ev, uint64_t done)
{
    const npu_dma_request *rq = &tc->pending_rq;
    if (done < ev->dma_start)
        done = ev->dma_start;
    tc->dma_fifo[(tc->dma_head + tc->dma_count) % DMA_FIFO] = done;
    tc->dma_count++;
    if (done > tc->tag_done[rq->tag])
        tc->tag_done[rq->tag] = done;
    ev->complete = done;
    ev->dma_inflight = tc->dma_count;
    if (done > tc->last_completion)
        tc->last_completion = done;
    if (tc->hook)
        tc->hook(tc->hook_ctx, ev);
}

/* Keeps a UB load or store issued at t (`bytes` of the UB from `addr`; a
 * store when `write`) until it completes; those that completed by t are
 * dropped (no later transfer starts before t). Its span is built in place:
 * one passed by value was written a byte at a time and read back a word at
 * a time, which stalled the host's store forwarding. */
static void fly_push(npu_timed_core *tc, uint64_t t, int write, uint64_t addr, uint64_t bytes, uint64_t done)
{
    while (tc->fly_count && tc->fly[tc->fly_head].done <= t) {
        tc->fly_head = (tc->fly_head + 1) & (tc->fly_cap - 1);
        tc->fly_count--;
    }
    if (tc->fly_count == tc->fly_cap) {
        const unsigned cap = tc->fly_cap ? 2 * tc->fly_cap : 64;
        ub_flight *grown = malloc(cap * sizeof *grown);
        if (!grown) { /* then every later UB transfer waits for it, whatever its bytes */
            tc->fly_lost = done > tc->fly_lost ? done : tc->fly_lost;
            return;
        }
        for (unsigned i = 0; i < tc->fly_count; i++)
            grown[i] = tc->fly[(tc->fly_head + i) & (tc->fly_cap - 1)];
        free(tc->fly);
        tc->fly = grown;
        tc->fly_head = 0;
        tc->fly_cap = cap;
    }
    ub_flight *f = &tc->fly[(tc->fly_head + tc->fly_count++) & (tc->fly_cap - 1)];
    f->bytes = npu_span_range(NPU_SPACE_UB, write, addr, bytes);
    f->done = done;
}

/* The latest completion of the core's UB stores (and loads, when `loads`)
 * in flight that touch a byte of `sp` (T7). */
static uint64_t fly_hazard(const npu_timed_core *tc, const npu_span *sp, int loads)
{
    uint64_t h = tc->fly_lost;
    for (unsigned i = 0; i < tc->fly_count; i++) {
        const ub_flight *f = &tc->fly[(tc->fly_head + i) & (tc->fly_cap - 1)];
        if ((f->bytes.write || loads) && f->done > h && npu_spans_meet(&f->bytes, sp))
            h = f->done;
    }
    return h;
}

/* An operation enters its cube pipe at cycle `entry` (units.dma.latency
 * after its issue; an mvub no earlier than the core's loads and stores of its
 * UB bytes complete, T7), starts when the pipe has finished the one before,
 * keeps the pipe busy for its work and completes its tag the pipe's latency
 * later. */
static void pipe_issue(npu_timed_core *tc, const npu_pipe_request *rq, npu_issue_event *ev, uint64_t entry)
{
    const npu_timing_config *cfg = &tc->cfg;
    pipe_state *p = &tc->pipe[rq->pipe];
    while (p->count && p->fifo[p->head] <= ev->issue) {
        p->head = (p->head + 1) % PIPE_FIFO;
        p->count--;
    }
    uint64_t busy, latency;
    switch (rq->pipe) {
    case NPU_PIPE_CUBE:
        busy = (rq->fractals * cfg->cube.interval + cfg->cube.count - 1) / cfg->cube.count;
        latency = cfg->cube.latency;
        break;
    case NPU_PIPE_MTE1:
        busy = (rq->bytes + cfg->mte1_bytes_per_cycle - 1) / cfg->mte1_bytes_per_cycle;
        latency = cfg->mte1_latency;
        break;
    default:
        busy = (rq->bytes + cfg->fix_bytes_per_cycle - 1) / cfg->fix_bytes_per_cycle;
        latency = cfg->fix_latency;
        break;
    }
    if (rq->pipe == NPU_PIPE_FIX) { /* its UB bytes: after the core's loads and stores of them */
        const npu_span ub = npu_span_range(NPU_SPACE_UB, 1, rq->ub_addr, rq->bytes);
        const uint64_t h = fly_hazard(tc, &ub, 1);
        entry = h > entry ? h : entry;
    }
    const uint64_t start = entry > p->free ? entry : p->free;
    const uint64_t done = start + busy + latency;
    p->free = start + busy;
    p->fifo[(p->head + p->count) % PIPE_FIFO] = done;
    p->count++;
    if (done > tc->tag_done[rq->tag])
        tc->tag_done[rq->tag] = done;
    if (done > tc->last_completion)
        tc->last_completion = done;
    tc->stats.pipe_ops[rq->pipe]++;
    tc->stats.pipe_busy[rq->pipe] += busy;
    tc->stats.pipe_bytes[rq->pipe] += rq->bytes;
    tc->stats.cube_fractals += rq->fractals;
    ev->dma_start = start;
    ev->complete = done;
    ev->pipe = 1 + (unsigned)rq->pipe;
    if (tc->hook)
        tc->hook(tc->hook_ctx, ev);
}

uint64_t npu_timed_dma_pending(const npu_timed_core *tc)
{
    return tc->dma_pending ? tc->pending_ev.dma_start : UINT64_MAX;
}

uint64_t npu_timed_next_dma_start(const npu_timed_core *tc)
{
    if (tc->dma_pending)
        return tc->pending_ev.dma_start;
    /* The next instruction issues at or after npu_timed_now. */
    const uint64_t earliest = npu_timed_now(tc) + tc->cfg.unit[NPU_UNIT_DMA].latency;
    return earliest > tc->dma_engine_free ? earliest : tc->dma_engine_free;
}

void npu_timed_book_dma(npu_timed_core *tc)
{
    if (!tc->dma_pending)
        return;
    tc->dma_pending = 0;
    const uint64_t done =
        tc->dma_backend(tc->dma_ctx, tc->core->cfg.core_id, tc->pending_ev.dma_start, &tc->pending_rq);
    dma_complete(tc, &tc->pending_ev, done);
}

/* The cycles a fitting slot is free from cycle t on: the first cycle >= t
 * in which some slot accepting the class is not yet taken. */
static uint64_t first_slot(const npu_timed_core *tc, unsigned cls, uint64_t t, unsigned *slot)
{
    uint32_t taken = t == tc->last_issue ? tc->slots_used : 0; /* none before the first issue */
    uint32_t open = tc->class_slots[cls] & ~taken;
    if (!open) { /* every fitting slot is taken this cycle: the next one has them free */
        t++;
        open = tc->class_slots[cls];
    }
    *slot = (unsigned)__builtin_ctz(open);
    return t;
}

/* One instruction (npu_timed_step); inlined into npu_timed_run's loop. */
static inline __attribute__((always_inline)) npu_core_state timed_step(npu_timed_core *tc)
{
    if (tc->dma_pending)
        npu_timed_book_dma(tc);
    npu_core *c = tc->core;
    npu_step_info info;
    const uint64_t pc = c->pc;
    npu_core_state st = npu_core_step(c, &info);
    if (st == NPU_CORE_TRAPPED)
        return st;
    const pc_deps *d = &tc->deps[pc];
    const npu_timing_config *cfg = &tc->cfg;
    const npu_insn *in = info.insn;
    const npu_unit_timing *ut = &cfg->unit[d->unit];

    /* The latest constraint wins; ties keep the earlier reason in npu_stall order. */
    uint64_t t = tc->last_issue; /* 0 until the first issue */
    const uint64_t oldest = t;
    npu_stall why = NPU_STALL_SLOT;
    unsigned producer = 0;
#define CONSTRAIN(when, reason) \
    do { if ((when) > t) { t = (when); why = (reason); } } while (0)

    CONSTRAIN(tc->sync_ready, NPU_STALL_SYNC);
    if (d->wait_tag)
        CONSTRAIN(tc->tag_done[d->wait_tag - 1], NPU_STALL_DMA_WAIT);
    const int plain = !(info.has_dma | info.has_pipe); /* no DMA transfer or cube operation */
    if (!plain) {
        if (info.has_dma && tc->dma_count >= cfg->dma_queue_depth)
            CONSTRAIN(tc->dma_fifo[tc->dma_head], NPU_STALL_DMA_WAIT);
        if (info.has_pipe && tc->pipe[info.pipe.pipe].count >= cfg->cube_queue_depth) {
            const pipe_state *p = &tc->pipe[info.pipe.pipe];
            CONSTRAIN(p->fifo[p->head], NPU_STALL_DMA_WAIT);
        }
    }
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
    for (unsigned i = 0; i < d->ndst; i++) {
        /* WAW: this write completes strictly after an older one to the same
         * register (t + latency > older), so the younger value is the one left. */
        const uint64_t older = tc->ready[d->dst[i]];
        if (older + 1 > t + ut->latency) {
            t = older + 1 - ut->latency;
            why = NPU_STALL_WAW;
            producer = tc->producer[d->dst[i]];
        }
    }
    /* The instance free first. Issue cycles never fall, and an instance of
     * any unit but the LSU is busy for the unit's interval, so the instances
     * free up in the order they were taken: the next in turn is free first
     * (of equally free ones, not always the lowest: no figure tells). The LSU's
     * bank conflicts stretch some of its accesses: its instances are searched. */
    unsigned inst = tc->unit_next[d->unit];
    if (d->unit == NPU_UNIT_LSU)
        for (unsigned k = 1; k < ut->count; k++)
            if (tc->unit_free[d->unit][k] < tc->unit_free[d->unit][inst])
                inst = k;
    CONSTRAIN(tc->unit_free[d->unit][inst], tc->unit_bank[d->unit][inst] ? NPU_STALL_UB_BANK : NPU_STALL_UNIT_BUSY);
    CONSTRAIN(tc->redirect, NPU_STALL_BRANCH);
#undef CONSTRAIN

    /* A slot: the lowest one that accepts the class and is not yet taken in cycle t. */
    const uint64_t ready = t;
    unsigned slot;
    t = first_slot(tc, d->cls, t, &slot);

    /* Book the cycles between the previous issue cycle and this one. The
     * slots the previous issue cycle left empty are lost to what kept this
     * instruction out of it: its slots were taken, or the constraint above. */
    uint64_t gap = 0;
    if (!tc->any_issued || t > tc->last_issue) {
        if (tc->any_issued)
            tc->stats.slots_lost[ready > tc->last_issue ? why : NPU_STALL_SLOT] += cfg->issue_width - tc->in_cycle;
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
    if (d->unit == NPU_UNIT_LSU) {
        extra = ub_bank_book(tc, &info, t);
        tc->stats.ub_bank_extra += extra;
    }
    tc->unit_free[d->unit][inst] = t + ut->interval + extra;
    tc->unit_bank[d->unit][inst] = extra != 0;
    if (d->unit != NPU_UNIT_LSU)
        tc->unit_next[d->unit] = (uint8_t)(inst + 1 == ut->count ? 0 : inst + 1);
    const uint64_t complete = t + ut->latency + extra;

    /* The destinations' ready cycles, and their dataflow limit: the same
     * dependencies with unlimited slots and units (df, the latest source,
     * was read with the RAW constraints above). */
    for (unsigned i = 0; i < d->ndst; i++) {
        tc->ready[d->dst[i]] = complete;
        tc->producer[d->dst[i]] = d->unit;
        tc->df_ready[d->dst[i]] = df + ut->latency;
    }
    if (d->cf == NPU_CF_BRANCH || d->cf == NPU_CF_JUMP || d->cf == NPU_CF_INDIRECT) {
        /* Static prediction: direct jumps and backward conditional branches
         * (loop back-edges) are predicted taken, forward ones not taken, and
         * indirect jumps never. A taken branch ends the issue group; a
         * mispredicted one also costs the refetch penalty. */
        const int taken = info.branch_taken; /* jumped (a jump to the next instruction too) */
        const int predicted = d->cf == NPU_CF_JUMP || (d->cf == NPU_CF_BRANCH && in->imm <= 0);
        if (taken != predicted)
            tc->redirect = t + 1 + cfg->branch_penalty;
        else if (taken)
            tc->redirect = t + 1;
    }

    if (d->ndst && df + ut->latency > tc->stats.critical_path)
        tc->stats.critical_path = df + ut->latency;

    tc->stats.instructions++;
    tc->pc_issued[pc]++;
    tc->stats.slot_issued[slot]++;
    tc->stats.unit_issued[d->unit]++;
    tc->stats.unit_busy[d->unit] += ut->interval + extra;
    tc->stats.class_issued[d->cls]++;

    if (info.ub_lanes) /* a UB load or store (T7: transfers over its bytes wait for it) */
        fly_push(tc, t, npu_insn_table[in->op].category == NPU_CAT_MEM && d->ndst == 0, info.ub_addr,
                 info.ub_bytes, complete);

    /* The issue event: built only when a hook reads it or a DMA or cube
     * operation completes it. */
    if (plain) {
        if (complete > tc->last_completion)
            tc->last_completion = complete;
        if (!tc->hook) {
            tc->seq++;
            return c->state;
        }
    }
    npu_issue_event ev = { tc->seq++, pc, in, oldest, t, complete, slot, (npu_unit)d->unit, why, gap,
                           tc->dma_count, 0, 0 };
    if (plain) {
        tc->hook(tc->hook_ctx, &ev);
        return c->state;
    }
    if (info.has_pipe) {
        pipe_issue(tc, &info.pipe, &ev, t + ut->latency);
        return c->state;
    }

    /* DMA: the transfer starts units.dma.latency cycles after the issue, or
     * when the engine has sent the previous transfer's last byte. */
    const npu_dma_request *rq = &info.dma;
    while (tc->dma_count && tc->dma_fifo[tc->dma_head] <= t) {
        tc->dma_head = (tc->dma_head + 1) % DMA_FIFO;
        tc->dma_count--;
    }
    uint64_t issued = t + ut->latency;
    if (!rq->to_l1) { /* its UB bytes: after the core's stores of them (and loads, when it writes them) */
        const npu_span ub = npu_span_dma(NPU_SPACE_UB, rq->to_ub, rq->ub_addr, rq->row_bytes, &rq->shape);
        const uint64_t h = fly_hazard(tc, &ub, rq->to_ub);
        issued = h > issued ? h : issued;
    }
    const uint64_t start = issued > tc->dma_engine_free ? issued : tc->dma_engine_free;
    const uint64_t transfer = (rq->total_bytes + cfg->dma_bytes_per_cycle - 1) / cfg->dma_bytes_per_cycle;
    tc->dma_engine_free = start + transfer;
    tc->stats.dma_transfers++;
    if (rq->to_ub)
        tc->stats.dma_bytes_in += rq->total_bytes;
    else
        tc->stats.dma_bytes_out += rq->total_bytes;
    ev.dma_start = start;
    tc->pending_rq = *rq;
    if (tc->dma_backend) {
        /* Booked by npu_timed_book_dma: by the run loop once no other core
         * can start a transfer earlier, or before this core's next step. */
        tc->pending_ev = ev;
        tc->dma_pending = 1;
    } else {
        dma_complete(tc, &ev, start + transfer + cfg->dma_latency);
    }
    return c->state;
}

npu_core_state npu_timed_step(npu_timed_core *tc) { return timed_step(tc); }

int npu_timed_run(npu_timed_core *tc, uint64_t horizon, uint64_t max_cycles, uint64_t max_instructions,
                  uint64_t *steps)
{
    const npu_core *c = tc->core;
    uint64_t n = 0;
    int why = NPU_TIMED_STOPPED;
    /* Where the loop stops, in one compare each (0: no limit). */
    const uint64_t cycle_stop = max_cycles && max_cycles < horizon ? max_cycles : horizon;
    const uint64_t insn_stop = max_instructions ? max_instructions : UINT64_MAX;
    while (c->state == NPU_CORE_RUNNING) {
        const uint64_t now = tc->last_issue;
        if (now >= cycle_stop || c->retired >= insn_stop) {
            why = now >= horizon ? NPU_TIMED_HORIZON : NPU_TIMED_LIMIT;
            break;
        }
        timed_step(tc);
        n++;
        if (tc->dma_pending) {
            why = NPU_TIMED_DMA;
            break;
        }
    }
    *steps = n;
    return why;
}

void npu_timed_finish(npu_timed_core *tc)
{
    npu_timed_book_dma(tc);
    if (!tc->any_issued || tc->finished) {
        return;
    }
    tc->finished = 1;
    tc->stats.slots_lost[NPU_STALL_DRAIN] += tc->cfg.issue_width - tc->in_cycle;
    close_cycle(tc);
    uint64_t end = tc->last_issue + 1;
    if (tc->last_completion > end) {
        uint64_t pc = tc->core->pc < tc->nprog ? tc->core->pc : tc->nprog;
        charge(tc, pc, NPU_STALL_DRAIN, 0, tc->last_completion - end);
        end = tc->last_completion;
    }
    tc->stats.cycles = end;
}
