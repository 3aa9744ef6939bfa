/* The race check (docs/timing.md, "Races"): internal to the functional core.
 *
 * Every operation of the DMA engine and the cube's pipes takes effect at its
 * issue here, but on the machine it lands later, and only a `dmawait` on its
 * tag tells the kernel it has. So the core keeps each such operation, with
 * the bytes it reads and writes in the local buffers (UB, L1, L0A, L0B,
 * L0C), until a `dmawait` on its tag retires it, and an instruction that
 * touches those bytes in a conflicting way before then (one of the two
 * writes) is a race: it traps, naming both instructions. Two operations that
 * their own unit orders (one cube pipe's, in issue order; a transfer's read
 * of local bytes before a later transfer's write, the engine sending in
 * order) do not race. Between cores, global memory is checked too: a
 * transfer whose GM bytes another core's transfer touches (one of the two
 * writing them) races unless that one was waited for before a barrier this
 * core has passed since. The check follows program order, not time, so a
 * kernel that passes it passes on every config and every sim.quantum. */
#ifndef NPUSIM_SIM_RACE_H
#define NPUSIM_SIM_RACE_H

#include <stdint.h>

#include "npusim/core.h"

/* The local buffers the check watches. */
typedef enum npu_space {
    NPU_SPACE_UB,
    NPU_SPACE_L1,
    NPU_SPACE_L0A,
    NPU_SPACE_L0B,
    NPU_SPACE_L0C,
    NPU_SPACE_GM /* global memory, shared by the cores: checked between cores */
} npu_space;

/* Who touches the bytes: the core itself (scalar and vector loads and
 * stores, which complete in order) or one of the asynchronous units. */
typedef enum npu_agent {
    NPU_AGENT_CORE,
    NPU_AGENT_DMA,
    NPU_AGENT_MTE1,
    NPU_AGENT_CUBE,
    NPU_AGENT_FIX
} npu_agent;

/* Bytes read or written in one buffer: n1 x n0 rows of `row` bytes, row
 * (k0, k1) at base + k0 s0 + k1 s1 (a plain range: n0 = n1 = 1). */
typedef struct npu_span {
    uint64_t base, row, n0, n1;
    int64_t s0, s1;
    uint8_t space, write;
} npu_span;

static inline npu_span npu_span_range(npu_space space, int write, uint64_t base, uint64_t bytes)
{
    npu_span s = { base, bytes, 1, 1, 0, 0, (uint8_t)space, (uint8_t)write };
    return s;
}

/* The local side of a transfer: its rows as a DMA descriptor lays them. */
static inline npu_span npu_span_dma(npu_space space, int write, uint64_t base, uint64_t row, const npu_dma_desc *d)
{
    npu_span s = { base, row, d->count[0], d->count[1], d->ub_stride[0], d->ub_stride[1], (uint8_t)space,
                   (uint8_t)write };
    return s;
}

/* The GM side of a transfer: its rows at the descriptor's GM strides. */
static inline npu_span npu_span_dma_gm(int write, uint64_t base, uint64_t row, const npu_dma_desc *d)
{
    npu_span s = { base, row, d->count[0], d->count[1], d->gm_stride[0], d->gm_stride[1], (uint8_t)NPU_SPACE_GM,
                   (uint8_t)write };
    return s;
}

/* Whether two spans share a byte (their spaces are not compared). */
int npu_spans_meet(const npu_span *a, const npu_span *b);

/* Checks the spans an instruction is about to touch against the operations
 * still in flight. On a race, traps (NPU_TRAP_RACE) and returns 0, before
 * anything changes. Otherwise returns 1 and, for an asynchronous agent,
 * keeps the operation (tag `tag`) in flight. A core without the check
 * (cfg.race_check 0) always returns 1. */
int npu_race_access(npu_core *c, npu_agent agent, unsigned tag, const npu_span *spans, unsigned n);

/* `dmawait tag`: every operation with that tag has landed. */
void npu_race_wait(npu_core *c, unsigned tag);

/* Checks the GM bytes of a transfer about to be issued against the other
 * cores' transfers that no barrier orders before it (one of the two writing
 * them). On a race, traps and returns 0; otherwise keeps the transfer and
 * returns 1. A core whose run has one core, or without the check, always
 * returns 1. */
int npu_race_gm(npu_core *c, unsigned tag, const npu_span *gm_span);

/* `barrier`: what follows it on this core is ordered after every transfer
 * another core waited for before the same barrier. */
void npu_race_barrier(npu_core *c);

/* The state, when c->cfg.race_check asks for it: 1, or 0 without memory
 * (npu_core_init); forgetting every operation (npu_core_reset); freeing the
 * state (npu_core_fini). */
int npu_race_init(npu_core *c);
void npu_race_reset(npu_core *c);
void npu_race_free(npu_core *c);

#endif
