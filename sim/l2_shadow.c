/* The L2's miss classifier: a fully-associative LRU cache of the same number
 * of lines (a hash index over a recency list, O(1) per access, allocated
 * once), and the history of lines ever touched: a bit per line, in pages of
 * 512 consecutive lines (64 bytes, one host cache line) found through an
 * open-addressing table of page numbers that doubles when half full. A
 * kernel's lines come in runs, so consecutive touches share a page (a set of
 * lines hashed one by one missed the host's caches on nearly every touch);
 * a trace of scattered lines pays at most a page per line. Pages are
 * allocated as first touched, the table a logarithmic number of times in a
 * run. */
#include "l2_shadow.h"

#include <stdlib.h>
#include <string.h>

enum { NIL = UINT32_MAX };

typedef struct fa_node {
    uint64_t line;
    uint32_t prev, next; /* towards MRU, towards LRU */
} fa_node;

enum { PAGE_SHIFT = 9, PAGE_WORDS = (1 << PAGE_SHIFT) / 64 };

typedef struct seen_page {
    uint64_t key;   /* line >> PAGE_SHIFT, plus 1; 0 = empty */
    uint64_t *bits; /* bit l of the page: line (key - 1) << PAGE_SHIFT | l was touched */
} seen_page;

struct npu_l2_shadow {
    uint32_t capacity, count;
    uint32_t mru, lru;
    fa_node *node;
    uint32_t *index;     /* open addressing, linear probing: node ids or NIL */
    uint64_t index_mask;
    seen_page *pages;    /* open addressing, linear probing */
    uint64_t page_mask, page_count;
    uint64_t last_key;   /* the page touched last (0: none), and its bits */
    uint64_t *last_bits;
    int seen_broken;
};

/* splitmix64's finaliser: line numbers are sequential, so spread them. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t pow2_at_least(uint64_t n)
{
    uint64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

enum { PAGES_INITIAL = 64 };

struct npu_l2_shadow *npu_l2_shadow_new(uint32_t capacity)
{
    struct npu_l2_shadow *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->capacity = capacity;
    uint64_t slots = pow2_at_least(2 * (uint64_t)capacity);
    s->index_mask = slots - 1;
    s->node = malloc(sizeof *s->node * capacity);
    s->index = malloc(sizeof *s->index * slots);
    s->pages = calloc(PAGES_INITIAL, sizeof *s->pages);
    s->page_mask = PAGES_INITIAL - 1;
    if (!s->node || !s->index || !s->pages) {
        npu_l2_shadow_free(s);
        return NULL;
    }
    npu_l2_shadow_reset(s);
    return s;
}

void npu_l2_shadow_free(struct npu_l2_shadow *s)
{
    if (!s)
        return;
    free(s->node);
    free(s->index);
    if (s->pages)
        for (uint64_t i = 0; i <= s->page_mask; i++)
            free(s->pages[i].bits);
    free(s->pages);
    free(s);
}

void npu_l2_shadow_flush(struct npu_l2_shadow *s)
{
    s->count = 0;
    s->mru = s->lru = NIL;
    for (uint64_t i = 0; i <= s->index_mask; i++)
        s->index[i] = NIL;
}

void npu_l2_shadow_reset(struct npu_l2_shadow *s)
{
    npu_l2_shadow_flush(s);
    for (uint64_t i = 0; i <= s->page_mask; i++) {
        free(s->pages[i].bits);
        s->pages[i] = (seen_page){ 0, NULL };
    }
    s->page_count = 0;
    s->last_key = 0;
    s->last_bits = NULL;
    s->seen_broken = 0;
}

/* ---- first-touch history ------------------------------------------------ */

/* The slot of page `key` in a table of mask + 1 slots: its own, or the
 * empty one where it goes. */
static uint64_t page_slot(const seen_page *pages, uint64_t mask, uint64_t key)
{
    uint64_t i = mix(key) & mask;
    while (pages[i].key && pages[i].key != key)
        i = (i + 1) & mask;
    return i;
}

static int pages_grow(struct npu_l2_shadow *s)
{
    const uint64_t slots = (s->page_mask + 1) * 2;
    seen_page *grown = calloc(slots, sizeof *grown);
    if (!grown)
        return -1;
    for (uint64_t i = 0; i <= s->page_mask; i++)
        if (s->pages[i].key)
            grown[page_slot(grown, slots - 1, s->pages[i].key)] = s->pages[i];
    free(s->pages);
    s->pages = grown;
    s->page_mask = slots - 1;
    return 0;
}

/* The bits of page `key`, created (all clear) if new; NULL when out of memory. */
static uint64_t *page_bits(struct npu_l2_shadow *s, uint64_t key)
{
    uint64_t i = page_slot(s->pages, s->page_mask, key);
    if (s->pages[i].key)
        return s->pages[i].bits;
    /* Keep the table at most half full, so probes stay short and always end. */
    if ((s->page_count + 1) * 2 > s->page_mask + 1) {
        if (pages_grow(s) != 0)
            return NULL;
        i = page_slot(s->pages, s->page_mask, key);
    }
    uint64_t *bits = calloc(PAGE_WORDS, sizeof *bits);
    if (!bits)
        return NULL;
    s->pages[i] = (seen_page){ key, bits };
    s->page_count++;
    return bits;
}

int npu_l2_shadow_first_touch(struct npu_l2_shadow *s, uint64_t line)
{
    if (s->seen_broken)
        return -1;
    const uint64_t key = (line >> PAGE_SHIFT) + 1; /* line numbers are addr >> 2 at most: never wraps */
    if (key != s->last_key) {
        uint64_t *bits = page_bits(s, key);
        if (!bits) {
            s->seen_broken = 1;
            return -1;
        }
        s->last_key = key;
        s->last_bits = bits;
    }
    uint64_t *w = &s->last_bits[(line >> 6) & (PAGE_WORDS - 1)];
    const uint64_t bit = 1ull << (line & 63);
    if (*w & bit)
        return 0;
    *w |= bit;
    return 1;
}

/* ---- fully-associative LRU --------------------------------------------- */

static uint64_t index_slot(const struct npu_l2_shadow *s, uint64_t line)
{
    return mix(line) & s->index_mask;
}

/* The slot holding line's node id, or the empty slot where it would go. */
static uint64_t index_find(const struct npu_l2_shadow *s, uint64_t line)
{
    uint64_t i = index_slot(s, line);
    while (s->index[i] != NIL && s->node[s->index[i]].line != line)
        i = (i + 1) & s->index_mask;
    return i;
}

/* Linear-probing deletion by backward shift: no tombstones, so probe chains
 * never grow with churn. */
static void index_remove(struct npu_l2_shadow *s, uint64_t hole)
{
    s->index[hole] = NIL;
    uint64_t j = hole;
    for (;;) {
        j = (j + 1) & s->index_mask;
        if (s->index[j] == NIL)
            return;
        uint64_t home = index_slot(s, s->node[s->index[j]].line);
        int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays)
            continue;
        s->index[hole] = s->index[j];
        s->index[j] = NIL;
        hole = j;
    }
}

static void list_unlink(struct npu_l2_shadow *s, uint32_t n)
{
    fa_node *x = &s->node[n];
    if (x->prev != NIL)
        s->node[x->prev].next = x->next;
    else
        s->mru = x->next;
    if (x->next != NIL)
        s->node[x->next].prev = x->prev;
    else
        s->lru = x->prev;
}

static void list_push_mru(struct npu_l2_shadow *s, uint32_t n)
{
    fa_node *x = &s->node[n];
    x->prev = NIL;
    x->next = s->mru;
    if (s->mru != NIL)
        s->node[s->mru].prev = n;
    s->mru = n;
    if (s->lru == NIL)
        s->lru = n;
}

int npu_l2_shadow_access(struct npu_l2_shadow *s, uint64_t line, int allocate)
{
    uint64_t slot = index_find(s, line);
    if (s->index[slot] != NIL) {
        uint32_t n = s->index[slot];
        if (s->mru != n) {
            list_unlink(s, n);
            list_push_mru(s, n);
        }
        return 1;
    }
    if (!allocate || s->capacity == 0)
        return 0;
    uint32_t n;
    if (s->count < s->capacity) {
        n = s->count++;
    } else {
        n = s->lru;
        list_unlink(s, n);
        index_remove(s, index_find(s, s->node[n].line));
        slot = index_find(s, line); /* the shift may have moved the empty slot */
    }
    s->node[n].line = line;
    s->index[slot] = (uint32_t)n;
    list_push_mru(s, n);
    return 0;
}
