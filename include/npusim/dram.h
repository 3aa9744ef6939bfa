/* The DRAM behind the L2: fixed latency, per-channel bandwidth, channels
 * interleaved by address. A bandwidth-and-latency model (no banks, rows or
 * refresh), booked per request at the cycle it arrives, like the L2.
 *
 * A request is cut at interleave boundaries; each piece occupies its channel
 * for ceil(piece bytes / bytes_per_cycle) cycles from the first cycle at or
 * after its arrival that the channel is free that long, and the request
 * completes `latency` cycles after its last piece leaves its channel. Pieces
 * of one request on different channels overlap, which is the point of
 * interleaving. A channel keeps its bookings, so a request arriving earlier
 * than requests booked before it (the L2 books a transfer's misses at once)
 * uses the gaps between them instead of queueing behind them; bookings that
 * end by the horizon (npu_dram_set_horizon) are forgotten (sim/calendar.h).
 *
 * The seam for a detailed DRAM simulator: the L2 only sees an npu_mem_port
 * (mem_port.h), and npu_dram_port() is one implementation of it. A port for
 * Ramulator or DRAMsim3 (WillAcceptTransaction / AddTransaction / ClockTick +
 * read/write callbacks) keeps the simulator and its clock in its ctx; its
 * read_line(now, addr, bytes) ticks the simulator up to `now`, ticks further
 * while !WillAccept (the request waits in the controller queue), adds the
 * transaction, and ticks until the callback for it fires, returning that
 * cycle (converted from the DRAM clock to the core clock). Because requests
 * arrive in non-decreasing `now` and the answer is needed at once, this runs
 * the DRAM simulator ahead of the caller for one request at a time: exact for
 * one outstanding miss, and the SystemC layer can recover overlap by issuing
 * the requests of one temporal-decoupling quantum before waiting on any. No
 * caller changes: the L2 and the SystemC modules hold a port, not a dram. */
#ifndef NPUSIM_DRAM_H
#define NPUSIM_DRAM_H

#include "npusim/export.h"

#include <stdint.h>

#include "npusim/mem_port.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { NPU_DRAM_MAX_CHANNELS = 64 };

typedef struct npu_dram_config {
    unsigned latency;          /* cycles from a request leaving its channel to its completion */
    unsigned bytes_per_cycle;  /* peak bandwidth of one channel */
    unsigned channels;         /* 1 .. NPU_DRAM_MAX_CHANNELS */
    unsigned interleave_bytes; /* consecutive bytes on one channel before the next (power of two) */
} npu_dram_config;

/* 100 cycles, 32 bytes/cycle per channel, 4 channels, 256-byte interleave. */
NPU_API void npu_dram_config_default(npu_dram_config *cfg);
/* Returns 0, or NPU_EINVAL with a message naming the bad field. */
NPU_API int npu_dram_config_check(const npu_dram_config *cfg, char *msg, unsigned size);

typedef struct npu_dram_stats {
    uint64_t reads, writes;             /* requests */
    uint64_t bytes_read, bytes_written;
    uint64_t queue_cycles;              /* cycles requests waited for channels busy with earlier
                                           requests (summed over the channels a request uses) */
    uint64_t busy_cycles[NPU_DRAM_MAX_CHANNELS]; /* cycles each channel moved data */
    uint64_t busy_end;                  /* cycle the latest booking on any channel ends (0: none yet) */
} npu_dram_stats;

/* The DRAM's traffic up to cycle `cycle` (the end of a kernel, taken when the
 * end-of-run write-back starts): what a report needs to show the kernel's
 * traffic apart from what follows it. Bookings on one channel never overlap
 * and a booking of b bytes lasts ceil(b / bytes_per_cycle) cycles, so the
 * bytes in `stats` are at most channels x bytes_per_cycle x stats.busy_end:
 * bytes / max(cycle, busy_end) never exceeds the peak bandwidth. */
typedef struct npu_dram_checkpoint {
    uint64_t cycle;
    npu_dram_stats stats;     /* the counters at the checkpoint */
    uint64_t booked_after;    /* channel-cycles booked after `cycle`, summed over the channels (an
                                 upper bound of the busy ones: gaps between bookings count) */
} npu_dram_checkpoint;

typedef struct npu_dram {
    npu_dram_config cfg;
    uint64_t channel_free[NPU_DRAM_MAX_CHANNELS]; /* cycle each channel's latest booking ends */
    npu_calendar channel[NPU_DRAM_MAX_CHANNELS];  /* each channel's bookings */
    uint64_t horizon;                              /* no request arrives before this (npu_dram_set_horizon) */
    npu_dram_stats stats;
} npu_dram;

/* Returns 0, NPU_EINVAL (call npu_dram_config_check for the message) or
 * NPU_ENOMEM. A DRAM that was initialised is given back with npu_dram_fini. */
NPU_API int npu_dram_init(npu_dram *dram, const npu_dram_config *cfg);
NPU_API void npu_dram_fini(npu_dram *dram);
/* Promises that no later request arrives before `cycle`: bookings that end
 * by then are forgotten. Never changes a result. Only raises the horizon. */
NPU_API void npu_dram_set_horizon(npu_dram *dram, uint64_t cycle);
/* Idle channels, zero stats. */
NPU_API void npu_dram_reset(npu_dram *dram);

/* Books a request of `bytes` at `addr` arriving at `now`; returns the cycle it
 * completes (data arrived for a read, written for a write). A request of 0
 * bytes completes after the latency alone. */
NPU_API uint64_t npu_dram_read(npu_dram *dram, uint64_t now, uint64_t addr, uint64_t bytes);
NPU_API uint64_t npu_dram_write(npu_dram *dram, uint64_t now, uint64_t addr, uint64_t bytes);
/* What npu_dram_read would return now, without booking it; UINT64_MAX
 * (unknown) for a request of more than NPU_DRAM_PROBE_PIECES - 1 interleave
 * units (an L2 line never is: l2.line_bytes <= 4096, interleave >= 32). */
enum { NPU_DRAM_PROBE_PIECES = 4096 / 32 + 2 };
NPU_API uint64_t npu_dram_probe_read(const npu_dram *dram, uint64_t now, uint64_t addr, uint64_t bytes);

/* The channel serving addr. */
NPU_API unsigned npu_dram_channel(const npu_dram *dram, uint64_t addr);

/* This DRAM as the next level of a cache (the port refers to dram, which must
 * outlive it). */
NPU_API npu_mem_port npu_dram_port(npu_dram *dram);

NPU_API const npu_dram_stats *npu_dram_get_stats(const npu_dram *dram);
/* Sum of busy_cycles over the channels. */
NPU_API uint64_t npu_dram_busy_cycles(const npu_dram *dram);

/* The counters now, and how far the channels are booked beyond `cycle`. */
NPU_API void npu_dram_checkpoint_take(const npu_dram *dram, uint64_t cycle, npu_dram_checkpoint *out);

#ifdef __cplusplus
}
#endif
#endif
