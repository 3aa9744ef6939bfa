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

typedef struct npu_race {
    race_op ops[RACE_MAX_OPS]; /* in issue order, oldest first */
    unsigned n;
} npu_race;

static const char *const space_names[] = { "UB", "L1", "L0A", "L0B", "L0C" };

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

int npu_race_access(npu_core *c, npu_agent agent, unsigned tag, const npu_span *spans, unsigned n)
{
    npu_race *r = c->race;
    if (!r || (r->n == 0 && agent == NPU_AGENT_CORE))
        return 1;
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
    op->pc = c->pc;
    op->agent = (uint8_t)agent;
    op->tag = (uint8_t)tag;
    op->nspans = (uint8_t)n;
    memcpy(op->span, mine, n * sizeof *mine);
    return 1;
}

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
    unsigned last[NPU_AGENT_FIX + 1] = { 0 }; /* 1 + the latest landed operation's index, per pipe */
    for (unsigned i = 0; i < r->n; i++)
        if (r->ops[i].tag == tag && r->ops[i].agent != NPU_AGENT_DMA)
            last[r->ops[i].agent] = i + 1;
    unsigned kept = 0;
    for (unsigned i = 0; i < r->n; i++)
        if (r->ops[i].tag != tag && i + 1 > last[r->ops[i].agent])
            r->ops[kept++] = r->ops[i];
    r->n = kept;
}

int npu_race_init(npu_core *c)
{
    c->race = c->cfg.race_check ? calloc(1, sizeof *c->race) : NULL;
    return !c->cfg.race_check || c->race;
}

void npu_race_reset(npu_core *c)
{
    if (c->race)
        c->race->n = 0;
}

void npu_race_free(npu_core *c)
{
    free(c->race);
    c->race = NULL;
}
