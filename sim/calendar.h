/* Booking calendars for the memory system's shared resources (an L2 bank, a
 * DRAM channel): private to sim/. Requests are booked transfer by transfer,
 * in the transfers' start order, which is not exactly the lines' time order
 * (a transfer books all its lines at once, so a later transfer's first lines
 * can arrive before an earlier one's last lines). A resource that only knew
 * the cycle it is next free would make a request arriving earlier wait behind
 * every request booked before it; a calendar keeps the bookings and gives
 * such a request the first gap that fits at or after its arrival. Bookings
 * with no cycle between them are kept as one busy stretch (no request fits
 * a gap of none).
 *
 * A booking is forgotten once it ends by the model's horizon (no later
 * request arrives before it: the start of the transfer being booked, which
 * the run loop promises), which changes nothing. Past NPU_CALENDAR_MAX
 * stretches still held (only a model given no horizon gets there, or out of
 * host memory) the earliest half is forgotten and `floor` keeps their end:
 * nothing starts before it. */
#ifndef NPUSIM_CALENDAR_H
#define NPUSIM_CALENDAR_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npusim/mem_port.h"

enum { NPU_CALENDAR_MIN = 16, NPU_CALENDAR_MAX = 4096 };

/* Returns 0, or -1 out of host memory. */
static inline int npu_calendar_init(npu_calendar *c)
{
    c->slot = malloc(sizeof *c->slot * NPU_CALENDAR_MIN);
    c->cap = c->slot ? NPU_CALENDAR_MIN : 0;
    c->n = 0;
    c->floor = 0;
    return c->slot ? 0 : -1;
}

static inline void npu_calendar_fini(npu_calendar *c)
{
    free(c->slot);
    c->slot = NULL;
    c->n = c->cap = 0;
}

static inline void npu_calendar_clear(npu_calendar *c)
{
    c->n = 0;
    c->floor = 0;
}

/* Forgets the first `k` bookings, keeping the latest end as the floor. */
static inline void npu_calendar_drop(npu_calendar *c, unsigned k, int keep_floor)
{
    if (keep_floor && c->slot[k - 1].end > c->floor)
        c->floor = c->slot[k - 1].end;
    memmove(c->slot, c->slot + k, sizeof *c->slot * (c->n - k));
    c->n -= k;
}

/* The first booking at or after `lo` that ends after t (ends grow with
 * starts: no two bookings overlap). */
static inline unsigned npu_calendar_ending_after(const npu_calendar *c, unsigned lo, uint64_t t)
{
    unsigned hi = c->n;
    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (c->slot[mid].end <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first cycle >= max(now, floor) at which `cycles` fit between the
 * bookings from `from` on and the `extra` intervals (bookings not yet in the
 * calendar: a request's earlier pieces on this resource); *at is where a
 * booking there goes among the calendar's. */
static inline uint64_t npu_calendar_fit(const npu_calendar *c, unsigned from, uint64_t floor, uint64_t now,
                                        uint64_t cycles, const npu_busy_interval *extra, unsigned nextra,
                                        unsigned *at)
{
    uint64_t t = now > floor ? now : floor;
    unsigned i;
    for (int moved = 1; moved;) {
        moved = 0;
        for (i = npu_calendar_ending_after(c, from, t); i < c->n; i++) {
            if (t + cycles <= c->slot[i].start)
                break;
            if (c->slot[i].end > t)
                t = c->slot[i].end;
        }
        for (unsigned k = 0; k < nextra; k++)
            if (t < extra[k].end && extra[k].start < t + cycles) {
                t = extra[k].end;
                moved = 1;
            }
    }
    *at = i;
    return t;
}

/* Books `cycles` (>= 1) from the first cycle >= now they fit, forgetting the
 * bookings that end by `horizon`; returns that cycle. */
static inline uint64_t npu_calendar_book(npu_calendar *c, uint64_t horizon, uint64_t now, uint64_t cycles)
{
    const unsigned old = npu_calendar_ending_after(c, 0, horizon);
    if (old)
        npu_calendar_drop(c, old, 0);
    if (c->n == c->cap) {
        npu_busy_interval *grown =
            c->cap < NPU_CALENDAR_MAX ? realloc(c->slot, sizeof *grown * 2 * c->cap) : NULL;
        if (grown) {
            c->slot = grown;
            c->cap *= 2;
        } else if (c->n) {
            npu_calendar_drop(c, (c->n + 1) / 2, 1);
        }
    }
    unsigned i;
    const uint64_t t = npu_calendar_fit(c, 0, c->floor, now, cycles, NULL, 0, &i);
    /* A booking that touches its neighbours joins them: no request fits a
     * gap of no cycles, so the calendar answers the same with fewer entries
     * to pass over. */
    const int left = i > 0 && c->slot[i - 1].end == t, right = i < c->n && c->slot[i].start == t + cycles;
    if (left && right) {
        c->slot[i - 1].end = c->slot[i].end;
        memmove(c->slot + i, c->slot + i + 1, sizeof *c->slot * (c->n - i - 1));
        c->n--;
    } else if (left) {
        c->slot[i - 1].end = t + cycles;
    } else if (right) {
        c->slot[i].start = t;
    } else if (c->n < c->cap) { /* else out of host memory with nothing held: a calendar of none */
        memmove(c->slot + i + 1, c->slot + i, sizeof *c->slot * (c->n - i));
        c->slot[i] = (npu_busy_interval){ t, t + cycles };
        c->n++;
    }
    return t;
}

/* The cycle npu_calendar_book(c, horizon, now, cycles) would give, without
 * booking (what it forgets first, it skips); `extra` as for npu_calendar_fit. */
static inline uint64_t npu_calendar_probe(const npu_calendar *c, uint64_t horizon, uint64_t now, uint64_t cycles,
                                          const npu_busy_interval *extra, unsigned nextra)
{
    uint64_t floor = c->floor;
    unsigned from = npu_calendar_ending_after(c, 0, horizon), at;
    if (c->n - from == c->cap && c->cap >= NPU_CALENDAR_MAX) { /* the booking would forget half first */
        from += (c->n - from + 1) / 2;
        if (c->slot[from - 1].end > floor)
            floor = c->slot[from - 1].end;
    }
    return npu_calendar_fit(c, from, floor, now, cycles, extra, nextra, &at);
}

#endif
