/* The L2's miss classifier: a fully-associative LRU cache of the same number
 * of lines (a hash index over a recency list, O(1) per access, allocated
 * once), and the history of lines ever touched (an open-addressing set that
 * doubles when half full: the only allocation after init, a logarithmic
 * number of times in a run). */
#include "l2_shadow.h"

#include <stdlib.h>
#include <string.h>

enum { NIL = UINT32_MAX };

typedef struct fa_node {
    uint64_t line;
    uint32_t prev, next; /* towards MRU, towards LRU */
} fa_node;

struct npu_l2_shadow {
    uint32_t capacity, count;
    uint32_t mru, lru;
    fa_node *node;
    uint32_t *index;     /* open addressing, linear probing: node ids or NIL */
    uint64_t index_mask;
    uint64_t *seen;      /* line + 1, 0 = empty */
    uint64_t seen_mask, seen_count;
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

enum { SEEN_INITIAL = 1024 };

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
    uint64_t seen_slots = pow2_at_least(4 * (uint64_t)capacity);
    if (seen_slots < SEEN_INITIAL)
        seen_slots = SEEN_INITIAL;
    s->seen = malloc(sizeof *s->seen * seen_slots);
    s->seen_mask = seen_slots - 1;
    if (!s->node || !s->index || !s->seen) {
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
    free(s->seen);
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
    memset(s->seen, 0, sizeof *s->seen * (s->seen_mask + 1));
    s->seen_count = 0;
    s->seen_broken = 0;
}

/* ---- first-touch history ------------------------------------------------ */

static int seen_grow(struct npu_l2_shadow *s)
{
    uint64_t slots = (s->seen_mask + 1) * 2;
    uint64_t *grown = calloc(slots, sizeof *grown);
    if (!grown)
        return -1;
    for (uint64_t i = 0; i <= s->seen_mask; i++) {
        uint64_t key = s->seen[i];
        if (!key)
            continue;
        uint64_t j = mix(key) & (slots - 1);
        while (grown[j])
            j = (j + 1) & (slots - 1);
        grown[j] = key;
    }
    free(s->seen);
    s->seen = grown;
    s->seen_mask = slots - 1;
    return 0;
}

int npu_l2_shadow_first_touch(struct npu_l2_shadow *s, uint64_t line)
{
    if (s->seen_broken)
        return -1;
    uint64_t key = line + 1; /* line numbers are addr >> 2 at most: never wraps */
    uint64_t i = mix(key) & s->seen_mask;
    while (s->seen[i]) {
        if (s->seen[i] == key)
            return 0;
        i = (i + 1) & s->seen_mask;
    }
    /* Keep the table at most half full, so probes stay short and always end. */
    if ((s->seen_count + 1) * 2 > s->seen_mask + 1) {
        if (seen_grow(s) != 0) {
            s->seen_broken = 1;
            return -1;
        }
        i = mix(key) & s->seen_mask;
        while (s->seen[i])
            i = (i + 1) & s->seen_mask;
    }
    s->seen[i] = key;
    s->seen_count++;
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
