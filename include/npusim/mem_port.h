/* The one interface between levels of the memory system: a level asks the
 * level below it for a line and learns the cycle the data arrives. The L2
 * sits on a DRAM through it; a SystemC adapter, a test's fake memory or an
 * external DRAM simulator can sit behind it as well. */
#ifndef NPUSIM_MEM_PORT_H
#define NPUSIM_MEM_PORT_H

#include "npusim/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Cycles [start, end) for which a shared resource behind a port (an L2
 * bank, a DRAM channel) is booked; the models keep their latest bookings
 * (sim/calendar.h) so that a request arriving earlier than ones booked before
 * it can use a gap between them. */
typedef struct npu_busy_interval {
    uint64_t start, end;
} npu_busy_interval;

/* The bookings of one such resource, by start, none overlapping (private to
 * the models: sim/calendar.h). */
typedef struct npu_calendar {
    npu_busy_interval *slot;
    unsigned n, cap;
    uint64_t floor; /* nothing starts before this: the end of bookings forgotten past 4,096 held */
} npu_calendar;

/* A time-based, non-blocking request interface: each call books the request
 * at cycle `now` and returns its completion cycle (>= now) at once.
 *   read_line:  the cycle the `bytes` at `addr` have arrived at the requester.
 *   write_line: the cycle the write has been accepted (posted writes: the
 *               requester does not wait for it to reach the cells).
 * The L2 calls read_line with a line-aligned addr and bytes = its line size;
 * write_line with a line (writeback) or with the store's own addr/bytes
 * (write-through, write-around). Calls should arrive in non-decreasing `now`
 * for the model behind the port to be exact. A NULL function in a port means
 * an ideal memory: the request completes at `now`. */
typedef struct npu_mem_port {
    void *ctx;
    uint64_t (*read_line)(void *ctx, uint64_t now, uint64_t addr, unsigned bytes);
    uint64_t (*write_line)(void *ctx, uint64_t now, uint64_t addr, unsigned bytes);
    /* Optional: what read_line would return, without booking the request. */
    uint64_t (*probe_line)(void *ctx, uint64_t now, uint64_t addr, unsigned bytes);
} npu_mem_port;

#ifdef __cplusplus
}
#endif
#endif
