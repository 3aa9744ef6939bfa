/* The functional model of one NPU vector core: architectural state, the
 * unified buffer (UB), and the execution of one instruction at a time.
 * Timing models drive it through npu_core_step() and read npu_step_info. */
#ifndef NPUSIM_CORE_H
#define NPUSIM_CORE_H

#include "npusim/export.h"

#include <stddef.h>
#include <stdint.h>

#include "npusim/errors.h"
#include "npusim/isa.h"
#include "npusim/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the special-function unit computes exp, ln, rcp, rsqrt, sqrt. */
typedef enum npu_sfu_mode {
    NPU_SFU_EXACT = 0, /* correctly rounded to the lane type (binary64 math, one rounding) */
    NPU_SFU_APPROX = 1 /* the exact value rounded to `sfu_bits` significant bits first, as a
                          table-plus-polynomial unit with an N-bit result would */
} npu_sfu_mode;

typedef struct npu_core_config {
    unsigned vlen_bits;  /* 128 .. 2048, power of two */
    size_t ub_bytes;     /* unified buffer capacity */
    unsigned core_id;
    unsigned num_cores;
    npu_sfu_mode sfu_mode;
    unsigned sfu_bits;   /* significant bits of an approximate SFU result, 8 .. 24 */
    /* The cube unit's buffers (docs/cube.md): L1 (filled by DMA from GM), L0A
     * and L0B (the cube's operands, filled from L1) and L0C (its fp32
     * accumulators, read out to the UB). Each a multiple of 512 bytes. */
    size_t l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes;
    /* Trap on a race: an access to local bytes that a DMA or cube operation
     * still in flight (issued, its tag not yet waited for) writes, or reads
     * while the access writes them; and, between the cores of a run (those
     * sharing one npu_gm, num_cores > 1), a transfer over GM bytes another
     * core's transfer touches with no dmawait and barrier between them
     * (docs/timing.md, "Races"). On by default. */
    int race_check;
} npu_core_config;

/* Global memory as the cores see it: one flat byte array, shared by every
 * core of a run. `race` is the library's: the race check's record of the
 * cores' transfers (docs/timing.md, "Races"), made by the first core that
 * needs it and freed by the last core's npu_core_fini. Start it at NULL
 * (`npu_gm gm = { data, size }` does) and leave it alone while cores use
 * this GM. */
typedef struct npu_gm {
    uint8_t *data;
    uint64_t size;
    struct npu_gm_race *race;
} npu_gm;

typedef enum npu_core_state {
    NPU_CORE_RUNNING = 0,
    NPU_CORE_HALTED,       /* executed halt */
    NPU_CORE_AT_BARRIER,   /* waiting at a barrier for the other cores */
    NPU_CORE_TRAPPED
} npu_core_state;

typedef enum npu_trap_kind {
    NPU_TRAP_NONE = 0,
    NPU_TRAP_ILLEGAL,       /* word does not decode, or bad operands at run time */
    NPU_TRAP_PC_OUT_OF_RANGE, /* ran off the program's end or jumped outside it */
    NPU_TRAP_UB_BOUNDS,     /* UB access outside the buffer */
    NPU_TRAP_GM_BOUNDS,     /* DMA outside global memory */
    NPU_TRAP_MISALIGNED,    /* access not aligned to its element size */
    NPU_TRAP_DMA_TAG,       /* dmawait on a tag that was never issued */
    NPU_TRAP_BARRIER,       /* cores disagree on barriers (some halted) */
    NPU_TRAP_MAX_CYCLES,    /* npu_run_limits.max_cycles reached */
    NPU_TRAP_MAX_INSNS,     /* npu_run_limits.max_instructions reached */
    NPU_TRAP_DEADLOCK,      /* no core can make progress */
    NPU_TRAP_DMA_SIZE,      /* one DMA would move more bytes than global memory holds */
    NPU_TRAP_CUBE_BOUNDS,   /* a cube move or mmad outside L1, L0A, L0B or L0C */
    NPU_TRAP_RACE,          /* an access to bytes a DMA or cube operation in flight may still move */
    NPU_NUM_TRAP_KINDS
} npu_trap_kind;

typedef struct npu_trap {
    npu_trap_kind kind;
    uint64_t pc;      /* instruction index */
    uint64_t addr;    /* faulting address where there is one */
    char message[160];
} npu_trap;

NPU_API const char *npu_trap_name(npu_trap_kind k); /* "illegal_instruction", ... */

/* DMA descriptor: rows of `row_bytes`, repeated over up to two outer
 * dimensions with their own GM and UB strides (NC1HWC0 tiles). */
typedef struct npu_dma_desc {
    uint64_t count[2];
    int64_t gm_stride[2];
    int64_t ub_stride[2];
} npu_dma_desc;

/* One transfer, as the core issued it (for the DMA/memory timing model). */
typedef struct npu_dma_request {
    int to_ub;        /* 1: GM -> UB (dmald) or GM -> L1 (dmaldl1), 0: UB -> GM (dmast) */
    int to_l1;        /* 1: dmaldl1 (ub_addr is then the L1 address) */
    unsigned tag;
    uint64_t ub_addr, gm_addr, row_bytes;
    npu_dma_desc shape;
    uint64_t total_bytes;
} npu_dma_request;

/* The cube unit's pipes (docs/cube.md). Each runs its operations in issue
 * order, one at a time, asynchronously to the core, like the DMA engine. */
typedef enum npu_pipe {
    NPU_PIPE_MTE1,  /* L1 -> L0A / L0B moves (mvla, mvlb) */
    NPU_PIPE_CUBE,  /* matrix multiply-accumulate (mmad, mmadz) */
    NPU_PIPE_FIX,   /* L0C -> UB moves (mvub) */
    NPU_NUM_PIPES
} npu_pipe;

/* One operation issued into a cube pipe. */
typedef struct npu_pipe_request {
    npu_pipe pipe;
    unsigned tag;
    uint64_t bytes;    /* moves: bytes moved */
    uint64_t fractals; /* mmad: 16x16x16 fractal products (m x k x n) */
    uint64_t ub_addr;  /* mvub: the UB address it writes `bytes` at */
} npu_pipe_request;

/* What one executed instruction did, for timing models and traces. */
typedef struct npu_step_info {
    uint64_t pc;
    const npu_insn *insn;
    uint64_t next_pc;
    int branch_taken;
    /* UB traffic of a vector or scalar load/store, over its active lanes:
     * lowest byte touched, bytes spanned (lowest to highest touched byte),
     * byte stride between lanes (0 for sld/sst and unit-stride vld/vst;
     * vlds/vsts report sb as given, which may itself be 0 or negative) and
     * the number of active lanes. All zero when no lane is active. */
    uint64_t ub_addr;
    uint64_t ub_bytes;
    int64_t ub_stride;
    unsigned ub_lanes;
    int has_dma;
    npu_dma_request dma;   /* valid only when has_dma */
    int has_pipe;
    npu_pipe_request pipe; /* valid only when has_pipe */
} npu_step_info;

typedef struct npu_core {
    npu_core_config cfg;
    const npu_program *prog;
    npu_gm *gm;
    uint8_t *ub;
    uint64_t pc;
    uint64_t next_pc; /* during a step: where the PC goes after this instruction */
    uint64_t s[NPU_NUM_SREGS];
    /* v[NPU_NUM_VREGS] is no architectural register: the vector-scalar forms
     * (vadds, vfmai, ...) broadcast their scalar operand into it and run the
     * vector form's body on it. */
    uint8_t v[NPU_NUM_VREGS + 1][NPU_VLENB_MAX];
    uint64_t p[NPU_NUM_PREGS][NPU_MAX_LANES / 64]; /* one bit per lane */
    uint64_t spr[NPU_NUM_SPRS];
    npu_dma_desc dma_desc;
    uint32_t dma_tags_issued; /* bit t: a DMA or cube-pipe operation with tag t was issued */
    uint8_t *l1, *l0a, *l0b, *l0c; /* the cube's buffers: NULL until used (npu_core_cube_buffers)
                                      or when their size is 0 */
    uint64_t mm_dim[3];            /* mmdim: m, k, n in 16-element fractals */
    uint64_t im2_dim[6];           /* im2dim: H, W, kh, kw, stride, pad of mvlai's feature map */
    int cube_used;                 /* the cube's buffers exist (zeroed at their creation) */
    struct npu_race *race;         /* operations in flight, when cfg.race_check (sim/race.c) */
    npu_core_state state;
    npu_trap trap;
    uint64_t retired;                  /* instructions executed (a trapping one is not) */
    uint64_t op_count[NPU_NUM_OPS];    /* retired instructions per opcode */
} npu_core;

/* The default core, the one place its values live (configs/default.yaml and
 * `npusim config show` give the same): VLEN 256, a 256 KiB unified buffer,
 * core 0 of 1, an exact SFU (12 bits when approximate), a cube with a 1 MiB
 * L1, 64 KiB L0A and L0B and a 256 KiB L0C, and the race check on. */
NPU_API void npu_core_config_default(npu_core_config *cfg);

/* Allocates the UB and resets the state. prog and gm stay owned by the host. */
NPU_API int npu_core_init(npu_core *c, const npu_core_config *cfg, const npu_program *prog, npu_gm *gm);
NPU_API void npu_core_fini(npu_core *c);
NPU_API void npu_core_reset(npu_core *c);

/* Creates the cube's buffers (all zero) if they do not exist yet; the cube's
 * instructions do so at their first use, a host that fills a buffer before
 * the run calls it first. NPU_OK, or NPU_ENOMEM. npu_core_reset frees them. */
NPU_API int npu_core_cube_buffers(npu_core *c);

/* Executes the instruction at c->pc. Returns the core state afterwards; on a
 * trap, c->trap says why and the architectural state is that before the
 * faulting instruction. `info` may be NULL. */
NPU_API npu_core_state npu_core_step(npu_core *c, npu_step_info *info);

/* Stops the core with a trap (used by run loops for limits and deadlock). */
NPU_API void npu_core_raise(npu_core *c, npu_trap_kind kind, uint64_t addr, const char *fmt, ...);

/* Lane access helpers for hosts and tests. */
static inline unsigned npu_lanes(const npu_core *c, npu_dtype dt)
{
    return c->cfg.vlen_bits / (8 * (dt == NPU_F16 || dt == NPU_I16 ? 2 : 4));
}

#ifdef __cplusplus
}
#endif
#endif
