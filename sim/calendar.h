/* Booking calendars for the memory system's shared resources (an L2 bank, a
 * DRAM channel): private to sim/. Requests are booked transfer by transfer,
 * in the transfers' start order, which is not exactly the lines' time order
 * (a transfer books all its lines at once, so a later transfer's first lines
 * can arrive before an earlier one's last lines). A resource that
 * only knew the cycle it is next free would make a request arriving earlier
 * wait behind every request booked before it; a calendar keeps the latest
 * bookings and gives such a request the first gap that fits at or after its
 * arrival. Bookings older than the calendar holds are merged into `floor`:
 * nothing starts before it. Per booking: one pass over at most `cap`
 * intervals, no allocation. */
#ifndef NPUSIM_CALENDAR_H
#define NPUSIM_CALENDAR_H

#include <stdint.h>
#include <string.h>

#include "npusim/mem_port.h"

/* Books `cycles` (>= 1) on a calendar of *n intervals (sorted by start,
 * capacity cap) from the first cycle >= now they fit; returns that cycle. */
static inline uint64_t npu_calendar_book(npu_busy_interval *slot, unsigned *n, uint64_t *floor, unsigned cap,
                                         uint64_t now, uint64_t cycles)
{
    unsigned count = *n, i = 0;
    if (count == cap) {
        /* Forget the earliest booking: nothing may start before its end any more. */
        if (slot[0].end > *floor)
            *floor = slot[0].end;
        memmove(slot, slot + 1, sizeof *slot * --count);
    }
    uint64_t t = now > *floor ? now : *floor;
    for (; i < count; i++) {
        if (t + cycles <= slot[i].start)
            break;
        if (slot[i].end > t)
            t = slot[i].end;
    }
    memmove(slot + i + 1, slot + i, sizeof *slot * (count - i));
    slot[i] = (npu_busy_interval){ t, t + cycles };
    *n = count + 1;
    return t;
}

#endif
