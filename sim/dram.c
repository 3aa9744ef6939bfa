/* The DRAM bandwidth-and-latency model (see dram.h). */
#include "npusim/dram.h"

#include <stdio.h>
#include <string.h>

#include "npusim/errors.h"
#include "calendar.h"

void npu_dram_config_default(npu_dram_config *cfg)
{
    cfg->latency = 100;
    cfg->bytes_per_cycle = 32;
    cfg->channels = 4;
    cfg->interleave_bytes = 256;
}

int npu_dram_config_check(const npu_dram_config *cfg, char *msg, unsigned size)
{
    if (cfg->bytes_per_cycle < 1) {
        snprintf(msg, size, "DRAM bytes_per_cycle must be at least 1");
        return NPU_EINVAL;
    }
    if (cfg->channels < 1 || cfg->channels > NPU_DRAM_MAX_CHANNELS) {
        snprintf(msg, size, "DRAM channels %u outside 1 .. %d", cfg->channels, NPU_DRAM_MAX_CHANNELS);
        return NPU_EINVAL;
    }
    unsigned g = cfg->interleave_bytes;
    if (g < 1 || (g & (g - 1))) {
        snprintf(msg, size, "DRAM interleave_bytes %u must be a power of two", g);
        return NPU_EINVAL;
    }
    return NPU_OK;
}

int npu_dram_init(npu_dram *dram, const npu_dram_config *cfg)
{
    char msg[128];
    memset(dram, 0, sizeof *dram);
    if (npu_dram_config_check(cfg, msg, sizeof msg) != NPU_OK)
        return NPU_EINVAL;
    dram->cfg = *cfg;
    for (unsigned ch = 0; ch < cfg->channels; ch++)
        if (npu_calendar_init(&dram->channel[ch]) != 0) {
            npu_dram_fini(dram);
            return NPU_ENOMEM;
        }
    return NPU_OK;
}

void npu_dram_fini(npu_dram *dram)
{
    for (unsigned ch = 0; ch < NPU_DRAM_MAX_CHANNELS; ch++)
        npu_calendar_fini(&dram->channel[ch]);
}

void npu_dram_set_horizon(npu_dram *dram, uint64_t cycle)
{
    if (cycle > dram->horizon)
        dram->horizon = cycle;
}

void npu_dram_reset(npu_dram *dram)
{
    memset(dram->channel_free, 0, sizeof dram->channel_free);
    for (unsigned ch = 0; ch < dram->cfg.channels; ch++)
        npu_calendar_clear(&dram->channel[ch]);
    dram->horizon = 0;
    memset(&dram->stats, 0, sizeof dram->stats);
}

unsigned npu_dram_channel(const npu_dram *dram, uint64_t addr)
{
    return (unsigned)((addr / dram->cfg.interleave_bytes) % dram->cfg.channels);
}

/* A request is cut at interleave boundaries: the piece at *addr (at most
 * *bytes), its channel and its busy cycles; moves *addr and *bytes past it. */
static unsigned next_piece(const npu_dram *dram, uint64_t *addr, uint64_t *bytes, uint64_t *busy)
{
    const npu_dram_config *c = &dram->cfg;
    const uint64_t room = c->interleave_bytes - (*addr & (c->interleave_bytes - 1));
    const uint64_t piece = *bytes < room ? *bytes : room;
    const unsigned ch = npu_dram_channel(dram, *addr);
    *busy = (piece + c->bytes_per_cycle - 1) / c->bytes_per_cycle;
    *addr += piece;
    *bytes -= piece;
    return ch;
}

/* Books every piece on its channel; returns the cycle the last one leaves. */
static uint64_t book(npu_dram *dram, uint64_t now, uint64_t addr, uint64_t bytes)
{
    const npu_dram_config *c = &dram->cfg;
    uint64_t last = now;
    for (uint64_t piece_no = 0; bytes > 0; piece_no++) {
        uint64_t busy;
        const unsigned ch = next_piece(dram, &addr, &bytes, &busy);
        uint64_t start = npu_calendar_book(&dram->channel[ch], dram->horizon, now, busy);
        /* Pieces visit the channels in turn: the first `channels` pieces are
         * the first on theirs, and only they wait for earlier requests. */
        if (piece_no < c->channels)
            dram->stats.queue_cycles += start - now;
        dram->stats.busy_cycles[ch] += busy;
        if (start + busy > dram->channel_free[ch])
            dram->channel_free[ch] = start + busy;
        if (start + busy > dram->stats.busy_end)
            dram->stats.busy_end = start + busy;
        if (start + busy > last)
            last = start + busy;
    }
    return last + c->latency;
}

/* book() without booking: each piece against its channel's calendar and
 * the request's earlier pieces on that channel. */
uint64_t npu_dram_probe_read(const npu_dram *dram, uint64_t now, uint64_t addr, uint64_t bytes)
{
    const npu_dram_config *c = &dram->cfg;
    if (bytes > (uint64_t)(NPU_DRAM_PROBE_PIECES - 1) * c->interleave_bytes)
        return UINT64_MAX;
    npu_busy_interval mine[NPU_DRAM_PROBE_PIECES]; /* by channel, in piece order */
    unsigned nmine = 0, ch_of[NPU_DRAM_PROBE_PIECES];
    uint64_t last = now;
    while (bytes > 0) {
        uint64_t busy;
        const unsigned ch = next_piece(dram, &addr, &bytes, &busy);
        npu_busy_interval same[NPU_DRAM_PROBE_PIECES];
        unsigned nsame = 0;
        for (unsigned k = 0; k < nmine; k++)
            if (ch_of[k] == ch)
                same[nsame++] = mine[k];
        uint64_t start = npu_calendar_probe(&dram->channel[ch], dram->horizon, now, busy, same, nsame);
        mine[nmine] = (npu_busy_interval){ start, start + busy };
        ch_of[nmine++] = ch;
        if (start + busy > last)
            last = start + busy;
    }
    return last + c->latency;
}

uint64_t npu_dram_read(npu_dram *dram, uint64_t now, uint64_t addr, uint64_t bytes)
{
    dram->stats.reads++;
    dram->stats.bytes_read += bytes;
    return book(dram, now, addr, bytes);
}

uint64_t npu_dram_write(npu_dram *dram, uint64_t now, uint64_t addr, uint64_t bytes)
{
    dram->stats.writes++;
    dram->stats.bytes_written += bytes;
    return book(dram, now, addr, bytes);
}

static uint64_t port_read(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return npu_dram_read(ctx, now, addr, bytes);
}

static uint64_t port_write(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return npu_dram_write(ctx, now, addr, bytes);
}

static uint64_t port_probe(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return npu_dram_probe_read(ctx, now, addr, bytes);
}

npu_mem_port npu_dram_port(npu_dram *dram)
{
    return (npu_mem_port){ dram, port_read, port_write, port_probe };
}

const npu_dram_stats *npu_dram_get_stats(const npu_dram *dram)
{
    return &dram->stats;
}

uint64_t npu_dram_busy_cycles(const npu_dram *dram)
{
    uint64_t sum = 0;
    for (unsigned ch = 0; ch < dram->cfg.channels; ch++)
        sum += dram->stats.busy_cycles[ch];
    return sum;
}

void npu_dram_checkpoint_take(const npu_dram *dram, uint64_t cycle, npu_dram_checkpoint *out)
{
    out->cycle = cycle;
    out->stats = dram->stats;
    out->booked_after = 0;
    /* channel_free is the end of the channel's latest booking: nothing on it
     * is busy later, so channel_free - cycle bounds its busy cycles after cycle. */
    for (unsigned ch = 0; ch < dram->cfg.channels; ch++)
        if (dram->channel_free[ch] > cycle)
            out->booked_after += dram->channel_free[ch] - cycle;
}
