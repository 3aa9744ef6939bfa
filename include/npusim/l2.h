/* The shared L2 cache: a set-associative tag model with replacement, write
 * policy, banks, MSHRs with miss merging, and Dinero-style miss
 * classification. It keeps tags only: data lives in global memory, and the
 * cache decides when it arrives.
 *
 * Time-based, event by event: npu_l2_access(now, ...) books one access and
 * returns the cycle it completes; nothing is ticked. Tags change at the call
 * (a line being filled is already present, marked "in flight" until its fill
 * arrives), so calls should come in non-decreasing `now` for the timing to be
 * exact; earlier calls are still handled, with the resources as booked.
 *
 * The timing of one access, all in cycles:
 *   start  = the first cycle >= now the bank  bank = line number % banks;
 *            is free for bank_interval        the bank stays busy bank_interval
 *   lookup = start + hit_latency             tags answer
 *   hit:    done = lookup
 *   merged (the line is present but its fill has not arrived yet: a second
 *           miss to a line in flight): done = the fill's arrival
 *   miss:   req  = max(lookup, an MSHR frees) the MSHR stays busy until the fill
 *           fill = next level's read_line(req, line)
 *           done = fill (reads), req (writes are posted into the MSHR)
 *           a dirty victim is written back through write_line(req, ...)
 *           after the fill request (reads go first).
 * A write that covers a whole line allocates it without reading it
 * (skip_fetch_on_full_write), as a DMA writing full lines would.
 * Write-through and write-around (no-write-allocate) stores complete when the
 * next level accepts them.
 *
 * Counting: accesses = hits + misses; misses include the merged ones
 * (mshr_merges); every other (primary) miss is exactly one of compulsory /
 * capacity / conflict:
 *   compulsory  first touch of the line since npu_l2_reset;
 *   capacity    also misses in a fully-associative LRU cache of the same size
 *               that sees the same accesses (the shadow model);
 *   conflict    hits in that shadow cache.
 * Unlike Dinero IV, which derives conflict = misses - compulsory - capacity in
 * aggregate (and can go negative), each miss is classified on its own.
 *
 * A bank keeps its bookings, not just the cycle it is next free: an access
 * arriving earlier than accesses already booked (a line of a later transfer,
 * booked after an earlier transfer's lines) takes the first gap that fits at
 * or after its arrival instead of queueing behind them. So bank timing does
 * not depend on which core was booked first, only on the arrival cycles.
 * Bookings that end by the horizon (npu_l2_set_horizon) are forgotten.
 *
 * A fill holds an MSHR from its request to its arrival. A miss requests its
 * fill at the first cycle >= its lookup from which fewer than `mshrs` of the
 * fills booked so far are in flight until its own fill arrives (the next
 * level's probe_line tells when, before it is booked): fills booked ahead
 * (by a transfer that started earlier) for later cycles do not hold an MSHR
 * before their request, and no cycle has more than `mshrs` in flight.
 *
 * Not modelled: sectors (a line is filled whole), MSHR target limits (any
 * number of accesses merge into one fill), coherence; a line still in flight
 * may be chosen as a victim (its MSHR stays busy until its fill arrives). An access must lie in
 * one line: the DMA splits transfers into line requests (npu_l2_line_bytes);
 * an access that crosses its line is modelled on its first line and reports
 * NPU_ERANGE in its result. */
#ifndef NPUSIM_L2_H
#define NPUSIM_L2_H

#include "npusim/export.h"

#include <stdint.h>

#include "npusim/mem_port.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    NPU_L2_MAX_CORES = 64,   /* per-core counters; higher ids count in the last slot */
    NPU_L2_MAX_TENSORS = 16, /* per-tensor counters; likewise */
    NPU_L2_MAX_WAYS = 64,    /* tree-PLRU keeps ways - 1 bits in one 64-bit word */
    NPU_L2_MAX_MSHRS = 1024,
    NPU_L2_MAX_BANKS = 256
};

typedef enum npu_l2_replacement {
    NPU_L2_LRU,    /* true least recently used */
    NPU_L2_PLRU,   /* tree pseudo-LRU: ways - 1 bits per set */
    NPU_L2_RANDOM  /* splitmix64 seeded with `seed`: the same seed, the same victims */
} npu_l2_replacement;

typedef enum npu_l2_write_policy {
    NPU_L2_WRITE_BACK,    /* stores dirty the line; dirty victims are written back */
    NPU_L2_WRITE_THROUGH  /* every store also goes to the next level; lines stay clean */
} npu_l2_write_policy;

typedef struct npu_l2_config {
    uint64_t size_bytes;     /* total capacity (power of two) */
    unsigned ways;           /* associativity 1 .. NPU_L2_MAX_WAYS (power of two) */
    unsigned line_bytes;     /* 4 .. 4096 (power of two) */
    npu_l2_replacement replacement;
    uint64_t seed;           /* NPU_L2_RANDOM only */
    npu_l2_write_policy write_policy;
    int write_allocate;      /* 1: a store miss fills the line; 0: it goes around the cache */
    int skip_fetch_on_full_write; /* 1: a store covering the whole line allocates without a read */
    unsigned hit_latency;    /* cycles from bank grant to the tags' answer (and a hit's data) */
    unsigned mshrs;          /* fills in flight at once, 1 .. NPU_L2_MAX_MSHRS */
    unsigned banks;          /* 1 .. NPU_L2_MAX_BANKS, interleaved by line number */
    unsigned bank_interval;  /* cycles a bank is busy per access (1: one access per cycle) */
    int classify_misses;     /* 1: keep the shadow models for compulsory/capacity/conflict */
    int index_xor;           /* 0: set = line number mod sets; 1: the line number's bits XOR-folded
                                in set-index-wide pieces (set = l0 ^ l1 ^ l2 ...), as hashed L2s do */
} npu_l2_config;

/* 2 MiB, 16 ways, 128-byte lines, LRU, write-back + write-allocate, 20-cycle
 * hits, 32 MSHRs, 8 banks at one access per cycle, misses classified. */
NPU_API void npu_l2_config_default(npu_l2_config *cfg);
/* Returns 0, or NPU_EINVAL with a message naming the bad field. */
NPU_API int npu_l2_config_check(const npu_l2_config *cfg, char *msg, unsigned size);

typedef struct npu_l2_counts {
    uint64_t accesses, hits, misses;
    uint64_t read_fills; /* reads that requested their line's fill (read misses, not merged) */
} npu_l2_counts;

/* Plain counters; rates are the printer's business (hit_rate = hits / accesses). */
typedef struct npu_l2_stats {
    uint64_t accesses, hits, misses;
    uint64_t reads, writes;             /* accesses by direction */
    uint64_t read_misses, write_misses;
    uint64_t compulsory, capacity, conflict; /* primary misses (see the file comment) */
    uint64_t unclassified;              /* primary misses not classified (shadow off or out of memory) */
    uint64_t mshr_merges;               /* misses merged into a fill in flight */
    uint64_t fills;                     /* lines read from the next level */
    uint64_t evictions;                 /* valid lines replaced by a fill */
    uint64_t writebacks;                /* dirty lines written to the next level (victims, flushes, cleans) */
    uint64_t clean_writebacks;          /* of which written by npu_l2_clean (the end-of-run write-back) */
    uint64_t clean_cycles;              /* cycles from a clean's start until the next level accepted its last line */
    uint64_t write_throughs;            /* stores sent to the next level (write-through, write-around) */
    uint64_t flushes;
    uint64_t mshr_full_cycles;          /* cycles misses waited for a free MSHR */
    uint64_t bank_conflict_cycles;      /* cycles accesses waited for a busy bank */
    uint64_t crossing_accesses;         /* accesses that crossed their line (modelled on the first) */
    npu_l2_counts core[NPU_L2_MAX_CORES];
    npu_l2_counts tensor[NPU_L2_MAX_TENSORS];
} npu_l2_stats;

typedef enum npu_l2_outcome {
    NPU_L2_HIT,
    NPU_L2_MISS,
    NPU_L2_MERGED /* a miss merged into the fill of a line already in flight */
} npu_l2_outcome;

typedef enum npu_l2_miss_kind {
    NPU_L2_NOT_A_MISS,
    NPU_L2_COMPULSORY,
    NPU_L2_CAPACITY,
    NPU_L2_CONFLICT,
    NPU_L2_UNCLASSIFIED
} npu_l2_miss_kind;

/* What one access did, for traces and for the caller's own attribution. */
typedef struct npu_l2_result {
    uint64_t done;       /* cycle the access completes (also the return value) */
    uint64_t line_ready; /* cycle the line's data is present: done, or later for a store
                            posted ahead of its fill */
    uint64_t start;      /* cycle its bank accepted it */
    uint64_t bank_wait;  /* start - now */
    uint64_t mshr_wait;  /* cycles a miss waited for a free MSHR */
    int fetched;         /* the miss read its line from the next level ... */
    uint64_t fill_request; /* ... asking at this cycle: it held an MSHR from then to line_ready */
    npu_l2_outcome outcome;
    npu_l2_miss_kind miss_kind;
    int evicted;         /* a valid line was replaced ... */
    int wrote_back;      /* ... and it was dirty, so it was written back */
    uint64_t victim_addr;
    int status;          /* NPU_OK, or NPU_ERANGE if the access crossed its line */
} npu_l2_result;

/* One line's tag state (private to sim/l2.c; public only so that callers can
 * own the struct npu_l2). */
typedef struct npu_l2_line {
    uint64_t line;   /* line number = addr / line_bytes; UINT64_MAX when invalid */
    uint64_t ready;  /* cycle its fill arrives (in flight while later than an access's lookup) */
    uint64_t stamp;  /* LRU: last use */
    uint8_t dirty;
} npu_l2_line;

struct npu_l2_shadow; /* the 3C classifier, sim/l2_shadow.c */

typedef struct npu_l2 {
    npu_l2_config cfg;
    npu_mem_port next;
    unsigned line_shift;
    uint64_t sets;
    npu_l2_line *lines;     /* [set * ways + way] */
    uint64_t *plru;         /* tree bits per set */
    uint64_t *fill_start;   /* the fills booked, each holding an MSHR over [request, arrival): */
    uint64_t *fill_end;     /* their requests and their arrivals, each list sorted (sim/l2.c) */
    unsigned nfills, fills_cap;
    uint64_t fills_floor;   /* no fill is requested before this (the arrivals of fills forgotten) */
    uint64_t horizon;       /* no access arrives before this cycle (npu_l2_set_horizon) */
    uint64_t full_from, full_until; /* cycles at which every MSHR is known held (sim/l2.c) */
    npu_calendar *banks;    /* per bank: its bookings */
    uint64_t clock;         /* LRU stamp counter */
    uint64_t rng;           /* splitmix64 state */
    struct npu_l2_shadow *shadow;
    npu_l2_stats stats;
} npu_l2;

/* Allocates the tag arrays. Returns 0, NPU_EINVAL for a bad config (call
 * npu_l2_config_check for the message) or NPU_ENOMEM. The next level starts
 * as an ideal memory; set it with npu_l2_set_next_level. */
NPU_API int npu_l2_init(npu_l2 *l2, const npu_l2_config *cfg);
NPU_API void npu_l2_fini(npu_l2 *l2);
/* Empty cache, idle banks and MSHRs, zero stats, forgotten history, reseeded. */
NPU_API void npu_l2_reset(npu_l2 *l2);
/* Zeroes the counters only (e.g. after a warm-up pass). */
NPU_API void npu_l2_clear_stats(npu_l2 *l2);
NPU_API void npu_l2_set_next_level(npu_l2 *l2, const npu_mem_port *next);
/* Promises that no later access arrives before `cycle` (accesses are booked
 * out of time order, so the L2 cannot tell): the fills that arrive by then
 * no longer hold an MSHR for any later access, nor do bank bookings that end
 * by then hold the bank; they are forgotten. Never changes a result. Without
 * it the L2 keeps 4,096 fills and busy stretches per bank at most, then
 * forgets the earliest half (no later one starts before the last of them
 * ends). Only raises the horizon. */
NPU_API void npu_l2_set_horizon(npu_l2 *l2, uint64_t cycle);

NPU_API unsigned npu_l2_line_bytes(const npu_l2 *l2);

/* One access of `bytes` (1 .. line) at `addr`, arriving at cycle `now`, by
 * `core` on behalf of `tensor` (both only for the per-core/per-tensor
 * counters). Returns the cycle it completes; `out` (may be NULL) says how. */
NPU_API uint64_t npu_l2_access(npu_l2 *l2, uint64_t now, uint64_t addr, unsigned bytes, int is_write,
                               unsigned core, unsigned tensor, npu_l2_result *out);

/* Installs every line of [addr, addr + bytes) as a previous run leaves it:
 * clean (that run's end-of-run write-back, npu_l2_clean, wrote it back),
 * already arrived, most recently used, and known to the classifier; counts
 * nothing and sends nothing to the next level. A line it displaces is
 * dropped. Of a range longer than the cache only the last size_bytes are
 * installed. core and tensor are accepted for symmetry with
 * npu_l2_access and are not used yet. */
NPU_API void npu_l2_warm(npu_l2 *l2, uint64_t addr, uint64_t bytes, unsigned core, unsigned tensor);

/* Writes back every dirty line from cycle `now` and invalidates the whole
 * cache (Dinero's flush record). The classifier's fully-associative shadow is
 * flushed too; the first-touch history is kept. Returns the cycle the last
 * writeback is accepted (now if none). */
NPU_API uint64_t npu_l2_flush(npu_l2 *l2, uint64_t now);

/* Writes back every dirty line from cycle `now` and keeps it, clean and
 * valid: the write-back at the end of a run (an ARM "clean"), which leaves the
 * cache warm for a next run. Counted in writebacks and clean_writebacks; the
 * cycles until the next level accepted the last line add to clean_cycles.
 * Banks and MSHRs are not booked (the writes leave straight for the next
 * level, in set order). Returns that cycle (now if nothing was dirty). */
NPU_API uint64_t npu_l2_clean(npu_l2 *l2, uint64_t now);

/* 1 if the line holding addr is present (in flight or arrived); for tests. */
NPU_API int npu_l2_contains(const npu_l2 *l2, uint64_t addr);

NPU_API const npu_l2_stats *npu_l2_get_stats(const npu_l2 *l2);

NPU_API const char *npu_l2_replacement_name(npu_l2_replacement r); /* "lru", "plru", "random" */

#ifdef __cplusplus
}
#endif
#endif
