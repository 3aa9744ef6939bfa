/* The race check: operations in flight, their bytes, and the conflicts
 * (sim/race.h says what a race is; docs/timing.md, "Races"). */
#include "race.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    RACE_MAX_SPANS = 3,    /* mmad: L0A, L0B and L0C */
    RACE_MAX_OPS = 256,    /* operations kept in flight; the oldest is forgotten past this */
    RACE_MAX_WORK = 1 << 22 /* row comparisons one pair may take before the extents decide */
};

/* A span with its rows normalized and their extent, [lo, hi). */
typedef struct shape {
    struct rows {
        uint64_t base, row, n0, n1, s0, s1;
    } r;
    uint64_t lo, hi;
    uint8_t space, write;
} shape;

typedef struct race_op {
    shape span[RACE_MAX_SPANS];
    uint64_t pc;
    uint8_t nspans, agent, tag;
} race_op;

/* A span in flight as the core's loads and stores see it: its extent, and
 * the accesses that may conflict with it (bit 0: a load, the span writing;
 * bit 1: a store, any span), both in its space. */
typedef struct race_extent {
    uint64_t lo, hi;
    uint8_t space, against;
} race_extent;

typedef struct npu_race {
    race_op ops[RACE_MAX_OPS]; /* in issue order, oldest first */
    unsigned n;
    /* The extents of ops' spans, made again after ops change (ext_stale):
     * operations come and go with transfers and waits, the core's accesses
     * are checked against them at every load and store. */
    race_extent ext[RACE_MAX_OPS * RACE_MAX_SPANS];
    unsigned n_ext;
    int ext_stale;
} npu_race;

static const char *const space_names[] = { "UB", "L1", "L0A", "L0B", "L0C", "GM" };

/* ---- a span's rows --------------------------------------------------------
 * Normalized: non-negative strides, a stride of 0 or a count of 1 dropped,
 * and rows that touch or overlap along dimension 0 merged into one. Then the
 * span is n1 groups (stride s1) of n0 rows (stride s0 > row), or of one
 * range when n0 = 1. */

typedef struct rows rows;

static void flip(uint64_t *base, uint64_t *n, int64_t s, uint64_t *stride)
{
    if (*n <= 1 || s == 0) {
        *n = 1;
        *stride = 0;
        return;
    }
    uint64_t mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    if (s < 0)
        *base -= mag * (*n - 1);
    *stride = mag;
}

static rows normalize(const npu_span *sp)
{
    rows r = { sp->base, sp->row, sp->n0, sp->n1, 0, 0 };
    flip(&r.base, &r.n0, sp->s0, &r.s0);
    flip(&r.base, &r.n1, sp->s1, &r.s1);
    if (r.n0 > 1 && r.s0 <= r.row) { /* contiguous: one range per group */
        r.row += r.s0 * (r.n0 - 1);
        r.n0 = 1;
        r.s0 = 0;
    }
    return r;
}

/* Whether [x, y) meets one of the n rows of `row` bytes at b + k s. */
static int range_meets_group(uint64_t x, uint64_t y, uint64_t b, uint64_t n, uint64_t s, uint64_t row)
{
    if (y <= b)
        return 0;
    uint64_t kmax = n - 1; /* the last row starting before y */
    if (s && (y - 1 - b) / s < kmax)
        kmax = (y - 1 - b) / s;
    if (b + row > x)
        return 1; /* row 0 starts before y and ends after x */
    /* the first row ending after x: b + k s + row > x */
    uint64_t need = x - row - b + 1; /* k s >= need */
    if (!s)
        return 0;
    uint64_t kmin = (need + s - 1) / s;
    return kmin <= kmax;
}

/* n0 x n1, saturated. */
static uint64_t count(const rows *r)
{
    return r->n0 > UINT64_MAX / r->n1 ? UINT64_MAX : r->n0 * r->n1;
}

static shape shape_of(const npu_span *sp)
{
    shape h;
    if (sp->n0 == 1 && sp->n1 == 1) /* a plain range, the common case */
        h.r = (rows){ sp->base, sp->row, 1, 1, 0, 0 };
    else
        h.r = normalize(sp);
    h.lo = h.r.base;
    h.hi = h.r.base + h.r.s0 * (h.r.n0 - 1) + h.r.s1 * (h.r.n1 - 1) + h.r.row;
    h.space = sp->space;
    h.write = sp->write;
    return h;
}

/* Whether two shapes' extents overlap, then whether their rows do. */
static int rows_meet(const shape *sa, const shape *sb)
{
    if (sa->hi <= sb->lo || sb->hi <= sa->lo)
        return 0;
    rows a = sa->r, b = sb->r;
    if (a.n0 == 1 && a.n1 == 1 && b.n0 == 1 && b.n1 == 1)
        return 1; /* two ranges */
    if (count(&a) > count(&b)) { /* walk the span with fewer rows */
        rows t = a;
        a = b;
        b = t;
    }
    if (count(&a) > RACE_MAX_WORK / b.n1)
        return 1; /* too many rows to compare: the extents meet */
    for (uint64_t k1 = 0; k1 < a.n1; k1++)
        for (uint64_t k0 = 0; k0 < a.n0; k0++) {
            const uint64_t x = a.base + k1 * a.s1 + k0 * a.s0, y = x + a.row;
            for (uint64_t g = 0; g < b.n1; g++)
                if (range_meets_group(x, y, b.base + g * b.s1, b.n0, b.s0, b.row))
                    return 1;
        }
    return 0;
}

int npu_spans_meet(const npu_span *a, const npu_span *b)
{
    const shape x = shape_of(a), y = shape_of(b);
    return rows_meet(&x, &y);
}

/* ---- conflicts ------------------------------------------------------------- */

/* Whether a later access by `agent` to span x must wait for span p of the
 * operation `op`, which is still in flight. */
static int conflicts(const race_op *op, const shape *p, npu_agent agent, const shape *x)
{
    if (p->space != x->space || (!p->write && !x->write))
        return 0;
    /* A cube pipe runs its operations in issue order, one at a time. */
    if (agent == op->agent && agent != NPU_AGENT_DMA && agent != NPU_AGENT_CORE)
        return 0;
    /* The DMA engine sends transfers in issue order: a transfer has read its
     * local bytes before a later one's bytes can land. */
    if (agent == NPU_AGENT_DMA && op->agent == NPU_AGENT_DMA && !p->write)
        return 0;
    return rows_meet(p, x);
}

static const char *mnemonic_at(const npu_core *c, uint64_t pc)
{
    return c->prog && pc < c->prog->count ? npu_insn_table[c->prog->insns[pc].op].mnemonic : "?";
}

/* " (FILE:LINE)" of an instruction, or nothing. */
static void where(const npu_core *c, uint64_t pc, char *out, size_t size)
{
    out[0] = 0;
    const npu_program *p = c->prog;
    if (p && p->locs && pc < p->count && p->locs[pc].line) {
        const char *file = p->locs[pc].file < p->nfiles ? p->files[p->locs[pc].file] : "";
        const char *base = strrchr(file, '/');
        snprintf(out, size, " (%s:%u)", base ? base + 1 : file, (unsigned)p->locs[pc].line);
    }
}

static void raise_race(npu_core *c, const race_op *op, const shape *p, const npu_span *x)
{
    char at[96];
    where(c, op->pc, at, sizeof at);
    const char *mine = mnemonic_at(c, c->pc), *theirs = mnemonic_at(c, op->pc);
    npu_core_raise(c, NPU_TRAP_RACE, x->base,
                   "%s %s %s at 0x%llx, which %s at pc %llu%s (tag %u) may still be %s: no dmawait %u between them",
                   mine, x->write ? "writes" : "reads", space_names[x->space], (unsigned long long)x->base, theirs,
                   (unsigned long long)op->pc, at, (unsigned)op->tag, p->write ? "writing" : "reading",
                   (unsigned)op->tag);
}

static void make_extents(npu_race *r)
{
    r->n_ext = 0;
    for (unsigned i = 0; i < r->n; i++)
        for (unsigned a = 0; a < r->ops[i].nspans; a++) {
            const shape *p = &r->ops[i].span[a];
            r->ext[r->n_ext++] = (race_extent){ p->lo, p->hi, p->space, (uint8_t)(p->write ? 3 : 2) };
        }
    r->ext_stale = 0;
}

/* Whether a span in flight may conflict with the core's access sp: the same
 * space, one of the two writing, their extents overlapping. conflicts()
 * holds for a core access only where this does (its agent rules exempt no
 * operation from the core, and rows_meet starts with the extents), so an
 * access this clears has no race: the loads and stores of a kernel that
 * overlaps its transfers with compute pass here, a few compares per span in
 * flight, without the rows. */
static int core_may_conflict(npu_race *r, const npu_span *sp)
{
    uint64_t lo, hi;
    if (sp->n0 == 1 && sp->n1 == 1) { /* a plain range, the common case */
        lo = sp->base;
        hi = sp->base + sp->row;
    } else {
        const shape x = shape_of(sp);
        lo = x.lo;
        hi = x.hi;
    }
    if (r->ext_stale)
        make_extents(r);
    const uint8_t mine = sp->write ? 2 : 1;
    for (unsigned i = 0; i < r->n_ext; i++) {
        const race_extent *e = &r->ext[i];
        if (e->lo < hi && lo < e->hi && e->space == sp->space && (e->against & mine))
            return 1;
    }
    return 0;
}

/* npu_race_access where a span in flight may meet the access. */
static int race_access(npu_core *c, npu_race *r, npu_agent agent, unsigned tag, const npu_span *spans, unsigned n)
{
    n = n < RACE_MAX_SPANS ? n : RACE_MAX_SPANS;
    shape mine[RACE_MAX_SPANS];
    for (unsigned b = 0; b < n; b++)
        mine[b] = shape_of(&spans[b]);
    for (unsigned i = 0; i < r->n; i++) {
        const race_op *op = &r->ops[i];
        for (unsigned a = 0; a < op->nspans; a++)
            for (unsigned b = 0; b < n; b++)
                if (conflicts(op, &op->span[a], agent, &mine[b])) {
                    raise_race(c, op, &op->span[a], &spans[b]);
                    return 0;
                }
    }
    if (agent == NPU_AGENT_CORE)
        return 1;
    if (r->n == RACE_MAX_OPS) { /* forget the oldest */
        memmove(r->ops, r->ops + 1, (RACE_MAX_OPS - 1) * sizeof r->ops[0]);
        r->n--;
    }
    race_op *op = &r->ops[r->n++];
    r->ext_stale = 1;
    op->pc = c->pc;
    op->agent = (uint8_t)agent;
    op->tag = (uint8_t)tag;
    op->nspans = (uint8_t)n;
    memcpy(op->span, mine, n * sizeof *mine);
    return 1;
}

int npu_race_access(npu_core *c, npu_agent agent, unsigned tag, const npu_span *spans, unsigned n)
{
    npu_race *r = c->race;
    if (!r || (r->n == 0 && agent == NPU_AGENT_CORE))
        return 1;
    if (agent == NPU_AGENT_CORE && n == 1 && !core_may_conflict(r, &spans[0]))
        return 1;
    return race_access(c, r, agent, tag, spans, n);
}

static void gm_wait(npu_core *c, unsigned tag);

/* A cube pipe completes its operations in issue order (each starts when
 * the one before has left the pipe, and every one of a pipe has the same
 * latency: docs/timing.md, T7a), so an operation that has landed has every
 * earlier one of its pipe landed too. The DMA engine's transfers complete
 * when the memory answers, in any order. */
void npu_race_wait(npu_core *c, unsigned tag)
{
    npu_race *r = c->race;
    if (!r)
        return;
    gm_wait(c, tag);
    unsigned last[NPU_AGENT_FIX + 1] = { 0 }; /* 1 + the latest landed operation's index, per pipe */
    for (unsigned i = 0; i < r->n; i++)
        if (r->ops[i].tag == tag && r->ops[i].agent != NPU_AGENT_DMA)
            last[r->ops[i].agent] = i + 1;
    unsigned kept = 0;
    for (unsigned i = 0; i < r->n; i++)
        if (r->ops[i].tag != tag && i + 1 > last[r->ops[i].agent])
            r->ops[kept++] = r->ops[i];
    r->ext_stale |= kept != r->n;
    r->n = kept;
}

/* ---- global memory, between cores -------------------------------------------
 * A core's transfers reach GM in issue order (the engine sends in order), so
 * one core's transfers never race each other there. Two cores' transfers are
 * ordered only by a barrier after a dmawait: transfer P of core A comes before
 * transfer X of core B when A waited for P before a barrier that B passed
 * before issuing X. Barriers are the whole machine's (every running core
 * meets at each one, docs/timing.md T9), so counting the barriers each core
 * has executed names them: P is ordered before X when A had passed fewer
 * barriers at P's dmawait than B had at X's issue. No core runs past a
 * barrier another core has yet to reach, so P, kept when X is checked, was
 * issued no later than X's barrier count: the other order never holds. */

enum { GM_MAX_OPS = 4096 }; /* transfers kept per core; the oldest is forgotten past this */
#define NOT_WAITED UINT64_MAX

typedef struct gm_op {
    shape span;
    uint64_t pc;
    uint64_t waited; /* barriers its core had executed at the dmawait that retired it, or NOT_WAITED */
    uint8_t tag;
} gm_op;

typedef struct gm_core {
    npu_core *core;
    uint64_t barriers;     /* barriers this core has executed */
    gm_op *ops;            /* a ring, oldest first: ops[(first + i) % GM_MAX_OPS], i < n */
    unsigned first, n;
    uint64_t lo[2], hi[2]; /* the extent of its kept reads [0] and writes [1] */
} gm_core;

struct npu_gm_race {
    gm_core *cores; /* in the order they joined */
    unsigned n, cap;
    uint64_t pruned; /* the least barrier count of the cores at the last pruning */
};

static gm_core *gm_core_of(const npu_core *c)
{
    if (!c->race || c->cfg.num_cores < 2 || !c->gm) /* no record joined (gm_join) */
        return NULL;
    struct npu_gm_race *g = c->gm->race;
    if (g)
        for (unsigned i = 0; i < g->n; i++)
            if (g->cores[i].core == c)
                return &g->cores[i];
    return NULL;
}

static gm_op *gm_op_at(gm_core *k, unsigned i)
{
    return &k->ops[(k->first + i) % GM_MAX_OPS];
}

static void gm_extents(gm_core *k)
{
    k->lo[0] = k->lo[1] = UINT64_MAX;
    k->hi[0] = k->hi[1] = 0;
    for (unsigned i = 0; i < k->n; i++) {
        const shape *h = &gm_op_at(k, i)->span;
        if (h->lo < k->lo[h->write])
            k->lo[h->write] = h->lo;
        if (h->hi > k->hi[h->write])
            k->hi[h->write] = h->hi;
    }
}

/* The core joins its GM's record when its run has other cores to race. */
static int gm_join(npu_core *c)
{
    if (!c->cfg.race_check || c->cfg.num_cores < 2 || !c->gm)
        return 1;
    struct npu_gm_race *g = c->gm->race;
    if (!g) {
        g = calloc(1, sizeof *g);
        if (!g)
            return 0;
        c->gm->race = g;
    }
    if (g->n == g->cap) {
        const unsigned cap = g->cap ? 2 * g->cap : 4;
        gm_core *more = realloc(g->cores, cap * sizeof *more);
        if (!more) {
            if (!g->n) {
                free(g);
                c->gm->race = NULL;
            }
            return 0;
        }
        g->cores = more;
        g->cap = cap;
    }
    gm_core *k = &g->cores[g->n++];
    memset(k, 0, sizeof *k);
    k->core = c;
    gm_extents(k);
    return 1;
}

static void gm_leave(npu_core *c)
{
    gm_core *k = gm_core_of(c);
    if (!k)
        return;
    struct npu_gm_race *g = c->gm->race;
    free(k->ops);
    const unsigned i = (unsigned)(k - g->cores);
    memmove(k, k + 1, (g->n - i - 1) * sizeof *k); /* keep the others' order */
    if (--g->n == 0) {
        free(g->cores);
        free(g);
        c->gm->race = NULL;
    }
}

static void raise_gm_race(npu_core *c, const gm_core *o, const gm_op *op, const npu_span *x)
{
    char at[96], why[96];
    where(o->core, op->pc, at, sizeof at);
    const unsigned id = o->core->cfg.core_id, tag = op->tag;
    if (op->waited == NOT_WAITED)
        snprintf(why, sizeof why, "no dmawait %u on core %u, then a barrier, between them", tag, id);
    else
        snprintf(why, sizeof why, "no barrier between them after core %u's dmawait %u", id, tag);
    npu_core_raise(c, NPU_TRAP_RACE, x->base, "%s %s GM at 0x%llx, which %s at pc %llu%s on core %u (tag %u) may still be %s: %s",
                   mnemonic_at(c, c->pc), x->write ? "writes" : "reads", (unsigned long long)x->base,
                   mnemonic_at(o->core, op->pc), (unsigned long long)op->pc, at, id, tag,
                   op->span.write ? "writing" : "reading", why);
}

int npu_race_gm(npu_core *c, unsigned tag, const npu_span *gm_span)
{
    gm_core *me = gm_core_of(c);
    if (!me)
        return 1;
    const struct npu_gm_race *g = c->gm->race;
    const shape x = shape_of(gm_span);
    for (unsigned j = 0; j < g->n; j++) {
        const gm_core *o = &g->cores[j];
        if (o == me)
            continue;
        for (int w = !x.write; w < 2; w++) { /* a read meets only writes; a write both */
            if (o->hi[w] <= x.lo || x.hi <= o->lo[w])
                continue;
            for (unsigned i = 0; i < o->n; i++) {
                const gm_op *op = gm_op_at((gm_core *)o, i);
                if (op->span.write != w || (op->waited != NOT_WAITED && op->waited < me->barriers))
                    continue;
                if (rows_meet(&op->span, &x)) {
                    raise_gm_race(c, o, op, gm_span);
                    return 0;
                }
            }
        }
    }
    if (!me->ops && !(me->ops = malloc(GM_MAX_OPS * sizeof *me->ops)))
        return 1; /* no host memory to keep it: this transfer goes unchecked */
    if (me->n == GM_MAX_OPS) { /* forget the oldest */
        me->first = (me->first + 1) % GM_MAX_OPS;
        me->n--;
    }
    gm_op *op = gm_op_at(me, me->n++);
    op->span = x;
    op->pc = c->pc;
    op->waited = NOT_WAITED;
    op->tag = (uint8_t)tag;
    if (x.lo < me->lo[x.write])
        me->lo[x.write] = x.lo;
    if (x.hi > me->hi[x.write])
        me->hi[x.write] = x.hi;
    return 1;
}

static void gm_wait(npu_core *c, unsigned tag)
{
    gm_core *me = gm_core_of(c);
    if (!me)
        return;
    for (unsigned i = 0; i < me->n; i++) {
        gm_op *op = gm_op_at(me, i);
        if (op->tag == tag && op->waited == NOT_WAITED)
            op->waited = me->barriers;
    }
}

/* A transfer waited for before the barrier count every core has reached is
 * ordered before whatever any core issues from now on: forget it. */
void npu_race_barrier(npu_core *c)
{
    gm_core *me = gm_core_of(c);
    if (!me)
        return;
    me->barriers++;
    struct npu_gm_race *g = c->gm->race;
    uint64_t least = UINT64_MAX;
    for (unsigned j = 0; j < g->n; j++)
        if (g->cores[j].barriers < least)
            least = g->cores[j].barriers;
    if (least <= g->pruned)
        return;
    g->pruned = least;
    for (unsigned j = 0; j < g->n; j++) {
        gm_core *k = &g->cores[j];
        unsigned kept = 0;
        for (unsigned i = 0; i < k->n; i++) {
            const gm_op *op = gm_op_at(k, i);
            if (op->waited == NOT_WAITED || op->waited >= least)
                *gm_op_at(k, kept++) = *op;
        }
        k->n = kept;
        gm_extents(k);
    }
}

int npu_race_init(npu_core *c)
{
    c->race = c->cfg.race_check ? calloc(1, sizeof *c->race) : NULL;
    if (c->cfg.race_check && (!c->race || !gm_join(c))) {
        free(c->race);
        c->race = NULL;
        return 0;
    }
    return 1;
}

void npu_race_reset(npu_core *c)
{
    if (c->race) {
        c->race->n = 0;
        c->race->ext_stale = 1;
    }
    gm_core *me = gm_core_of(c);
    if (me) {
        me->n = me->first = 0;
        me->barriers = 0;
        gm_extents(me);
        c->gm->race->pruned = 0;
    }
}

void npu_race_free(npu_core *c)
{
    gm_leave(c);
    free(c->race);
    c->race = NULL;
}
