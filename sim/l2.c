/* The shared L2 cache (see l2.h): tags, replacement, write policy, banks and
 * MSHRs, booked per access at the cycle it arrives. One access walks one set
 * and the MSHR list; it allocates nothing and formats nothing. */
#include "npusim/l2.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npusim/errors.h"
#include "calendar.h"
#include "l2_shadow.h"

enum { MAX_LINES_LOG2 = 26 }; /* 64 Mi lines: far beyond any L2, bounds the tag arrays */
#define INVALID_LINE UINT64_MAX

void npu_l2_config_default(npu_l2_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size_bytes = 2u << 20;
    cfg->ways = 16;
    cfg->line_bytes = 128;
    cfg->replacement = NPU_L2_LRU;
    cfg->seed = 1;
    cfg->write_policy = NPU_L2_WRITE_BACK;
    cfg->write_allocate = 1;
    cfg->skip_fetch_on_full_write = 1;
    cfg->hit_latency = 20;
    cfg->mshrs = 32;
    cfg->banks = 8;
    cfg->bank_interval = 1;
    cfg->classify_misses = 1;
}

static int is_pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

static unsigned log2_of(uint64_t x)
{
    unsigned n = 0;
    while (x > 1) {
        x >>= 1;
        n++;
    }
    return n;
}

int npu_l2_config_check(const npu_l2_config *cfg, char *msg, unsigned size)
{
    if (!is_pow2(cfg->line_bytes) || cfg->line_bytes < 4 || cfg->line_bytes > 4096) {
        snprintf(msg, size, "L2 line_bytes %u must be a power of two in 4 .. 4096", cfg->line_bytes);
        return NPU_EINVAL;
    }
    if (!is_pow2(cfg->ways) || cfg->ways > NPU_L2_MAX_WAYS) {
        snprintf(msg, size, "L2 ways %u must be a power of two in 1 .. %d", cfg->ways, NPU_L2_MAX_WAYS);
        return NPU_EINVAL;
    }
    uint64_t way_set = (uint64_t)cfg->ways * cfg->line_bytes;
    if (!is_pow2(cfg->size_bytes) || cfg->size_bytes < way_set ||
        cfg->size_bytes / cfg->line_bytes > (1ull << MAX_LINES_LOG2)) {
        snprintf(msg, size,
                 "L2 size_bytes %llu must be a power of two, at least ways x line_bytes (%llu) "
                 "and at most %llu lines",
                 (unsigned long long)cfg->size_bytes, (unsigned long long)way_set,
                 1ull << MAX_LINES_LOG2);
        return NPU_EINVAL;
    }
    if ((unsigned)cfg->replacement > NPU_L2_RANDOM) {
        snprintf(msg, size, "L2 replacement %d is not lru, plru or random", (int)cfg->replacement);
        return NPU_EINVAL;
    }
    if ((unsigned)cfg->write_policy > NPU_L2_WRITE_THROUGH) {
        snprintf(msg, size, "L2 write policy %d is not write-back or write-through", (int)cfg->write_policy);
        return NPU_EINVAL;
    }
    if (cfg->hit_latency < 1) {
        snprintf(msg, size, "L2 hit_latency must be at least 1 cycle");
        return NPU_EINVAL;
    }
    if (cfg->mshrs < 1 || cfg->mshrs > NPU_L2_MAX_MSHRS) {
        snprintf(msg, size, "L2 mshrs %u outside 1 .. %d", cfg->mshrs, NPU_L2_MAX_MSHRS);
        return NPU_EINVAL;
    }
    if (cfg->banks < 1 || cfg->banks > NPU_L2_MAX_BANKS || cfg->bank_interval < 1) {
        snprintf(msg, size, "L2 needs 1 .. %d banks and bank_interval >= 1 cycle", NPU_L2_MAX_BANKS);
        return NPU_EINVAL;
    }
    return NPU_OK;
}

const char *npu_l2_replacement_name(npu_l2_replacement r)
{
    static const char *const names[] = { "lru", "plru", "random" };
    return (unsigned)r <= NPU_L2_RANDOM ? names[r] : "?";
}

/* ---- lifetime ------------------------------------------------------------ */

int npu_l2_init(npu_l2 *l2, const npu_l2_config *cfg)
{
    char msg[160];
    memset(l2, 0, sizeof *l2);
    if (npu_l2_config_check(cfg, msg, sizeof msg) != NPU_OK)
        return NPU_EINVAL;
    l2->cfg = *cfg;
    l2->line_shift = log2_of(cfg->line_bytes);
    uint64_t nlines = cfg->size_bytes >> l2->line_shift;
    l2->sets = nlines / cfg->ways;
    l2->lines = malloc(sizeof *l2->lines * nlines);
    l2->plru = malloc(sizeof *l2->plru * l2->sets);
    l2->fills_cap = cfg->mshrs < 16 ? 16 : cfg->mshrs;
    l2->fill_start = malloc(sizeof *l2->fill_start * l2->fills_cap);
    l2->fill_end = malloc(sizeof *l2->fill_end * l2->fills_cap);
    l2->banks = calloc(cfg->banks, sizeof *l2->banks);
    int banks_ok = l2->banks != NULL;
    for (unsigned b = 0; banks_ok && b < cfg->banks; b++)
        banks_ok = npu_calendar_init(&l2->banks[b]) == 0;
    if (cfg->classify_misses)
        l2->shadow = npu_l2_shadow_new((uint32_t)nlines);
    if (!l2->lines || !l2->plru || !l2->fill_start || !l2->fill_end || !banks_ok ||
        (cfg->classify_misses && !l2->shadow)) {
        npu_l2_fini(l2);
        return NPU_ENOMEM;
    }
    npu_l2_reset(l2);
    return NPU_OK;
}

void npu_l2_fini(npu_l2 *l2)
{
    free(l2->lines);
    free(l2->plru);
    free(l2->fill_start);
    free(l2->fill_end);
    l2->fill_start = l2->fill_end = NULL;
    if (l2->banks)
        for (unsigned b = 0; b < l2->cfg.banks; b++)
            npu_calendar_fini(&l2->banks[b]);
    free(l2->banks);
    l2->banks = NULL;
    npu_l2_shadow_free(l2->shadow);
    l2->lines = NULL;
    l2->plru = NULL;
    l2->shadow = NULL;
}

static void invalidate_all(npu_l2 *l2)
{
    uint64_t nlines = l2->sets * l2->cfg.ways;
    for (uint64_t i = 0; i < nlines; i++)
        l2->lines[i] = (npu_l2_line){ INVALID_LINE, 0, 0, 0 };
    memset(l2->plru, 0, sizeof *l2->plru * l2->sets);
}

void npu_l2_reset(npu_l2 *l2)
{
    invalidate_all(l2);
    l2->nfills = 0;
    l2->fills_floor = 0;
    l2->horizon = 0;
    l2->full_from = l2->full_until = 0;
    for (unsigned b = 0; b < l2->cfg.banks; b++)
        npu_calendar_clear(&l2->banks[b]);
    l2->clock = 0;
    l2->rng = l2->cfg.seed;
    if (l2->shadow)
        npu_l2_shadow_reset(l2->shadow);
    npu_l2_clear_stats(l2);
}

void npu_l2_clear_stats(npu_l2 *l2)
{
    memset(&l2->stats, 0, sizeof l2->stats);
}

void npu_l2_set_next_level(npu_l2 *l2, const npu_mem_port *next)
{
    if (next)
        l2->next = *next;
    else
        memset(&l2->next, 0, sizeof l2->next);
}

unsigned npu_l2_line_bytes(const npu_l2 *l2)
{
    return l2->cfg.line_bytes;
}

const npu_l2_stats *npu_l2_get_stats(const npu_l2 *l2)
{
    return &l2->stats;
}

/* ---- the next level --------------------------------------------------- */

static uint64_t next_read(npu_l2 *l2, uint64_t now, uint64_t addr, unsigned bytes)
{
    if (!l2->next.read_line)
        return now;
    uint64_t t = l2->next.read_line(l2->next.ctx, now, addr, bytes);
    return t < now ? now : t;
}

static uint64_t next_write(npu_l2 *l2, uint64_t now, uint64_t addr, unsigned bytes)
{
    if (!l2->next.write_line)
        return now;
    uint64_t t = l2->next.write_line(l2->next.ctx, now, addr, bytes);
    return t < now ? now : t;
}

/* ---- replacement ------------------------------------------------------- */

/* splitmix64: a full-period 64-bit generator, deterministic per seed. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Tree-PLRU over ways (a power of two): node n has children 2n+1 (lower half
 * of its ways) and 2n+2 (upper half); a bit of 0 says the victim is in the
 * lower half, 1 in the upper. A use points every node on its path away. */
static void plru_touch(uint64_t *bits, unsigned ways, unsigned way)
{
    unsigned node = 0, lo = 0;
    for (unsigned span = ways; span > 1; span /= 2) {
        unsigned half = span / 2;
        if (way < lo + half) {
            *bits |= 1ull << node;
            node = 2 * node + 1;
        } else {
            *bits &= ~(1ull << node);
            node = 2 * node + 2;
            lo += half;
        }
    }
}

static unsigned plru_victim(uint64_t bits, unsigned ways)
{
    unsigned node = 0, lo = 0;
    for (unsigned span = ways; span > 1; span /= 2) {
        unsigned half = span / 2;
        if ((bits >> node) & 1) {
            node = 2 * node + 2;
            lo += half;
        } else {
            node = 2 * node + 1;
        }
    }
    return lo;
}

static void touch(npu_l2 *l2, uint64_t set, unsigned way)
{
    l2->lines[set * l2->cfg.ways + way].stamp = ++l2->clock;
    if (l2->cfg.replacement == NPU_L2_PLRU)
        plru_touch(&l2->plru[set], l2->cfg.ways, way);
}

/* Invalid ways fill first, lowest way first, under every policy. */
static unsigned choose_victim(npu_l2 *l2, uint64_t set)
{
    const npu_l2_line *ln = &l2->lines[set * l2->cfg.ways];
    unsigned ways = l2->cfg.ways;
    for (unsigned w = 0; w < ways; w++)
        if (ln[w].line == INVALID_LINE)
            return w;
    switch (l2->cfg.replacement) {
    case NPU_L2_PLRU:
        return plru_victim(l2->plru[set], ways);
    case NPU_L2_RANDOM:
        return (unsigned)(next_random(&l2->rng) & (ways - 1));
    case NPU_L2_LRU:
    default: {
        unsigned victim = 0;
        for (unsigned w = 1; w < ways; w++)
            if (ln[w].stamp < ln[victim].stamp)
                victim = w;
        return victim;
    }
    }
}

/* The set of a line number: its low bits, or (index_xor) every set-index-
 * wide piece of it XOR-ed together, so that strides of a power of two
 * spread over the sets instead of landing on a few. */
static uint64_t set_of(const npu_l2 *l2, uint64_t line)
{
    const uint64_t mask = l2->sets - 1;
    if (!l2->cfg.index_xor || l2->sets == 1)
        return line & mask;
    const unsigned bits = (unsigned)__builtin_ctzll(l2->sets);
    uint64_t set = 0;
    for (; line; line >>= bits)
        set ^= line & mask;
    return set;
}

static int find_way(const npu_l2 *l2, uint64_t set, uint64_t line)
{
    const npu_l2_line *ln = &l2->lines[set * l2->cfg.ways];
    for (unsigned w = 0; w < l2->cfg.ways; w++)
        if (ln[w].line == line)
            return (int)w;
    return -1;
}

int npu_l2_contains(const npu_l2 *l2, uint64_t addr)
{
    uint64_t line = addr >> l2->line_shift;
    return find_way(l2, set_of(l2, line), line) >= 0;
}

/* ---- MSHRs and banks ---------------------------------------------------- */

void npu_l2_set_horizon(npu_l2 *l2, uint64_t cycle)
{
    if (cycle > l2->horizon)
        l2->horizon = cycle;
}

/* The fills are kept as two sorted lists, their requests and their
 * arrivals: at a cycle x, count(x) = #requests <= x - #arrivals <= x are in
 * flight. Forgetting a request and an arrival both at or before the horizon
 * leaves count(x) unchanged for every x at or after it, where accesses
 * arrive. */

/* Entries of the sorted list v[0..n) that are <= x. */
static unsigned upto(const uint64_t *v, unsigned n, uint64_t x)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Forgets the first k requests and the first k arrivals. */
static void fills_drop(npu_l2 *l2, unsigned k)
{
    memmove(l2->fill_start, l2->fill_start + k, sizeof *l2->fill_start * (l2->nfills - k));
    memmove(l2->fill_end, l2->fill_end + k, sizeof *l2->fill_end * (l2->nfills - k));
    l2->nfills -= k;
}

/* The request cycle of a fill of the line at addr: the first cycle >= t
 * from which fewer than l2.mshrs booked fills are in flight for the whole
 * of its flight [req, ready) (a fill holds its MSHR so long; fills booked
 * ahead by an earlier transfer count only where they are in flight). The
 * next level tells ready before it is booked (probe_line); without that,
 * the fill waits until fewer than l2.mshrs fills are booked from then on. */
static uint64_t mshr_acquire(npu_l2 *l2, uint64_t t, uint64_t addr, unsigned bytes)
{
    const unsigned gone = upto(l2->fill_end, l2->nfills, l2->horizon);
    if (gone)
        fills_drop(l2, gone);
    const unsigned m = l2->cfg.mshrs, n = l2->nfills;
    const uint64_t *start = l2->fill_start, *end = l2->fill_end;
    if (t < l2->fills_floor)
        t = l2->fills_floor;
    /* One pass forward over both lists: i requests and e arrivals are <= t. */
    unsigned i = upto(start, n, t), e = upto(end, n, t);
    for (;;) {
        /* Cycles in [full_from, full_until) had l2.mshrs or more fills in
         * flight when a walk below passed them, and still have: a booking
         * only adds fills, and a fill forgotten had arrived before any cycle
         * an access arrives at (the horizon, fills_floor). A walk starts
         * where the last one ended: with fills booked far ahead (accesses
         * sent faster than the next level fills them), walking from t, one
         * arrival at a time, passed every fill for every access. */
        if (t >= l2->full_from && t < l2->full_until) {
            t = l2->full_until; /* an arrival still booked: the walk stopped there */
            i = upto(start, n, t);
            e = upto(end, n, t);
        }
        const uint64_t walk = t;
        while (i - e >= m) { /* the count falls only where a fill arrives */
            t = end[e];
            while (i < n && start[i] <= t)
                i++;
            while (e < n && end[e] <= t)
                e++;
        }
        if (t > walk) { /* [walk, t): every MSHR held */
            if (walk >= l2->full_from && walk <= l2->full_until) {
                l2->full_until = t > l2->full_until ? t : l2->full_until;
            } else {
                l2->full_from = walk;
                l2->full_until = t;
            }
        }
        const uint64_t ready = l2->next.probe_line ? l2->next.probe_line(l2->next.ctx, t, addr, bytes) : UINT64_MAX;
        /* It rises only where a fill is requested: the first such cycle in
         * (t, ready) at which the MSHRs run out moves the request past it. */
        unsigned si = i, se = e;
        int full = 0;
        while (si < n && start[si] < ready) {
            const uint64_t s = start[si];
            while (si < n && start[si] == s)
                si++;
            while (se < n && end[se] <= s)
                se++;
            if (si - se >= m) {
                full = 1;
                t = s;
                break;
            }
        }
        if (!full)
            return t;
        i = si;
        e = se;
    }
}

static void insert_sorted(uint64_t *v, unsigned n, uint64_t x)
{
    const unsigned at = upto(v, n, x);
    memmove(v + at + 1, v + at, sizeof *v * (n - at));
    v[at] = x;
}

/* Books a fill's MSHR over [req, ready). Past NPU_CALENDAR_MAX fills held
 * (only without a horizon) or out of host memory, the earliest half is
 * forgotten and no later fill is requested before the last of their arrivals. */
static void mshr_book(npu_l2 *l2, uint64_t req, uint64_t ready)
{
    if (l2->nfills == l2->fills_cap) {
        uint64_t *s = NULL, *e = NULL;
        if (l2->fills_cap < NPU_CALENDAR_MAX) {
            s = realloc(l2->fill_start, sizeof *s * 2 * l2->fills_cap);
            if (s)
                l2->fill_start = s;
            e = s ? realloc(l2->fill_end, sizeof *e * 2 * l2->fills_cap) : NULL;
            if (e)
                l2->fill_end = e;
        }
        if (s && e) {
            l2->fills_cap *= 2;
        } else {
            const unsigned k = (l2->nfills + 1) / 2;
            if (l2->fill_end[k - 1] > l2->fills_floor)
                l2->fills_floor = l2->fill_end[k - 1];
            fills_drop(l2, k);
        }
    }
    insert_sorted(l2->fill_start, l2->nfills, req);
    insert_sorted(l2->fill_end, l2->nfills, ready);
    l2->nfills++;
}

/* Books the access's bank from the first cycle >= now it is free for
 * bank_interval cycles (see l2.h). */
static uint64_t bank_acquire(npu_l2 *l2, uint64_t now, uint64_t line)
{
    const unsigned b = (unsigned)(line % l2->cfg.banks);
    return npu_calendar_book(&l2->banks[b], l2->horizon, now, l2->cfg.bank_interval);
}

/* ---- one access -------------------------------------------------------- */

static npu_l2_miss_kind classify(npu_l2 *l2, int first_touch, int shadow_hit)
{
    if (!l2->shadow || first_touch < 0)
        return NPU_L2_UNCLASSIFIED;
    if (first_touch)
        return NPU_L2_COMPULSORY;
    return shadow_hit ? NPU_L2_CONFLICT : NPU_L2_CAPACITY;
}

static void count(npu_l2 *l2, const npu_l2_result *r, int is_write, unsigned core, unsigned tensor)
{
    npu_l2_stats *st = &l2->stats;
    uint64_t hit = r->outcome == NPU_L2_HIT;
    npu_l2_counts *per[2] = {
        &st->core[core < NPU_L2_MAX_CORES ? core : NPU_L2_MAX_CORES - 1],
        &st->tensor[tensor < NPU_L2_MAX_TENSORS ? tensor : NPU_L2_MAX_TENSORS - 1],
    };
    st->accesses++;
    for (int i = 0; i < 2; i++) {
        per[i]->accesses++;
        per[i]->hits += hit;
        per[i]->misses += !hit;
    }
    if (is_write)
        st->writes++;
    else
        st->reads++;
    if (hit) {
        st->hits++;
        return;
    }
    st->misses++;
    if (is_write)
        st->write_misses++;
    else
        st->read_misses++;
    switch (r->miss_kind) {
    case NPU_L2_COMPULSORY: st->compulsory++; break;
    case NPU_L2_CAPACITY: st->capacity++; break;
    case NPU_L2_CONFLICT: st->conflict++; break;
    case NPU_L2_UNCLASSIFIED: st->unclassified++; break;
    default: break;
    }
    if (r->outcome == NPU_L2_MERGED)
        st->mshr_merges++;
    if (!is_write && r->fetched)
        for (int i = 0; i < 2; i++)
            per[i]->read_fills++;
}

/* A primary miss that allocates: pick and evict a victim, request the fill,
 * install the line. Returns the cycle the access completes; *ready is the
 * cycle the line arrives. */
static uint64_t miss_fill(npu_l2 *l2, uint64_t lookup, uint64_t line, uint64_t set, unsigned bytes,
                          int is_write, npu_l2_result *r, uint64_t *ready_out)
{
    const npu_l2_config *c = &l2->cfg;
    unsigned way = choose_victim(l2, set);
    npu_l2_line *ln = &l2->lines[set * c->ways + way];
    int fetch = !(is_write && c->skip_fetch_on_full_write && bytes == c->line_bytes);
    uint64_t req = lookup, ready = lookup;
    if (fetch) {
        req = mshr_acquire(l2, lookup, line << l2->line_shift, c->line_bytes);
        r->mshr_wait = req - lookup;
        l2->stats.mshr_full_cycles += r->mshr_wait;
        ready = next_read(l2, req, line << l2->line_shift, c->line_bytes);
        mshr_book(l2, req, ready);
        r->fetched = 1;
        r->fill_request = req;
        l2->stats.fills++;
    }
    if (ln->line != INVALID_LINE) {
        r->evicted = 1;
        r->victim_addr = ln->line << l2->line_shift;
        l2->stats.evictions++;
        if (ln->dirty) {
            /* After the fill request: the next level serves the read first. */
            next_write(l2, req, r->victim_addr, c->line_bytes);
            r->wrote_back = 1;
            l2->stats.writebacks++;
        }
    }
    *ln = (npu_l2_line){ line, ready, 0, (uint8_t)(is_write && c->write_policy == NPU_L2_WRITE_BACK) };
    touch(l2, set, way);
    *ready_out = ready;
    /* A store is posted into its MSHR; a load waits for its data. */
    return is_write ? req : ready;
}

/* The bytes of the access inside its line (at least one). */
static unsigned clip_to_line(npu_l2 *l2, uint64_t addr, unsigned bytes, npu_l2_result *r)
{
    unsigned room = l2->cfg.line_bytes - (unsigned)(addr & (l2->cfg.line_bytes - 1));
    if (bytes == 0)
        return 1;
    if (bytes <= room)
        return bytes;
    r->status = NPU_ERANGE;
    l2->stats.crossing_accesses++;
    return room;
}

uint64_t npu_l2_access(npu_l2 *l2, uint64_t now, uint64_t addr, unsigned bytes, int is_write,
                       unsigned core, unsigned tensor, npu_l2_result *out)
{
    const npu_l2_config *c = &l2->cfg;
    npu_l2_result r = { 0 };
    bytes = clip_to_line(l2, addr, bytes, &r);
    uint64_t line = addr >> l2->line_shift;
    uint64_t set = set_of(l2, line);
    r.start = bank_acquire(l2, now, line);
    r.bank_wait = r.start - now;
    l2->stats.bank_conflict_cycles += r.bank_wait;
    uint64_t lookup = r.start + c->hit_latency;

    int allocate = !is_write || c->write_allocate;
    int first_touch = 0, shadow_hit = 0;
    if (l2->shadow) {
        first_touch = npu_l2_shadow_first_touch(l2->shadow, line);
        shadow_hit = npu_l2_shadow_access(l2->shadow, line, allocate);
    }

    int way = find_way(l2, set, line);
    int through = is_write && c->write_policy == NPU_L2_WRITE_THROUGH;
    uint64_t done, ready = 0;
    if (way >= 0) {
        npu_l2_line *ln = &l2->lines[set * c->ways + (unsigned)way];
        touch(l2, set, (unsigned)way);
        ready = ln->ready;
        if (ln->ready > lookup) {
            r.outcome = NPU_L2_MERGED;
            done = is_write ? lookup : ln->ready;
        } else {
            r.outcome = NPU_L2_HIT;
            done = lookup;
        }
        if (is_write && !through)
            ln->dirty = 1;
    } else {
        r.outcome = NPU_L2_MISS;
        r.miss_kind = classify(l2, first_touch, shadow_hit);
        if (allocate) {
            done = miss_fill(l2, lookup, line, set, bytes, is_write, &r, &ready);
        } else {
            /* Write-around: the store goes to the next level, the cache keeps nothing. */
            done = next_write(l2, lookup, addr, bytes);
            l2->stats.write_throughs++;
            through = 0;
        }
    }
    if (through) {
        uint64_t accepted = next_write(l2, done, addr, bytes);
        done = accepted > done ? accepted : done;
        l2->stats.write_throughs++;
    }
    count(l2, &r, is_write, core, tensor);
    r.done = done;
    r.line_ready = ready > done ? ready : done;
    if (out)
        *out = r;
    return done;
}

/* ---- warm-up and flush ------------------------------------------------- */

void npu_l2_warm(npu_l2 *l2, uint64_t addr, uint64_t bytes, unsigned core, unsigned tensor)
{
    (void)core;
    (void)tensor;
    if (bytes == 0)
        return;
    uint64_t first = addr >> l2->line_shift;
    uint64_t last = (addr + (bytes - 1)) >> l2->line_shift;
    if (addr + (bytes - 1) < addr) /* wraps past the top of the address space */
        last = UINT64_MAX >> l2->line_shift;
    /* Only the last cache-full of a longer range can stay resident. */
    uint64_t nlines = l2->sets * l2->cfg.ways;
    if (last - first >= nlines)
        first = last - nlines + 1;
    for (uint64_t line = first;; line++) {
        uint64_t set = set_of(l2, line);
        int way = find_way(l2, set, line);
        if (way < 0)
            way = (int)choose_victim(l2, set);
        l2->lines[set * l2->cfg.ways + (unsigned)way] = (npu_l2_line){ line, 0, 0, 0 };
        touch(l2, set, (unsigned)way);
        if (l2->shadow) {
            npu_l2_shadow_first_touch(l2->shadow, line);
            npu_l2_shadow_access(l2->shadow, line, 1);
        }
        if (line == last)
            break;
    }
}

/* Writes every dirty line back to the next level from cycle `now` and marks
 * it clean; returns the cycle the next level accepted the last one. */
static uint64_t write_back_dirty(npu_l2 *l2, uint64_t now)
{
    uint64_t nlines = l2->sets * l2->cfg.ways, done = now;
    for (uint64_t i = 0; i < nlines; i++) {
        npu_l2_line *ln = &l2->lines[i];
        if (ln->line != INVALID_LINE && ln->dirty) {
            uint64_t t = next_write(l2, now, ln->line << l2->line_shift, l2->cfg.line_bytes);
            done = t > done ? t : done;
            ln->dirty = 0;
            l2->stats.writebacks++;
        }
    }
    return done;
}

uint64_t npu_l2_flush(npu_l2 *l2, uint64_t now)
{
    uint64_t done = write_back_dirty(l2, now);
    invalidate_all(l2);
    if (l2->shadow)
        npu_l2_shadow_flush(l2->shadow);
    l2->stats.flushes++;
    return done;
}

uint64_t npu_l2_clean(npu_l2 *l2, uint64_t now)
{
    uint64_t before = l2->stats.writebacks;
    uint64_t done = write_back_dirty(l2, now);
    l2->stats.clean_writebacks += l2->stats.writebacks - before;
    l2->stats.clean_cycles += done - now;
    return done;
}
