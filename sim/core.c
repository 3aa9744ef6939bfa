/* The functional core's life cycle and its one-instruction step: fetch,
 * operand-type check, dispatch to the exec_<ID> bodies, retire or trap. */
#include "exec.h"
#include "race.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int config_valid(const npu_core_config *cfg)
{
    unsigned v = cfg->vlen_bits;
    if (v < NPU_VLEN_MIN || v > NPU_VLEN_MAX || (v & (v - 1)))
        return 0;
    if (cfg->ub_bytes == 0 || cfg->num_cores == 0 || cfg->core_id >= cfg->num_cores)
        return 0;
    if (cfg->sfu_mode != NPU_SFU_EXACT && cfg->sfu_mode != NPU_SFU_APPROX)
        return 0;
    if (cfg->sfu_mode == NPU_SFU_APPROX && (cfg->sfu_bits < 8 || cfg->sfu_bits > 24))
        return 0;
    if (cfg->l1_bytes % 512 || cfg->l0a_bytes % 512 || cfg->l0b_bytes % 512 || cfg->l0c_bytes % 512)
        return 0;
    return 1;
}

void npu_core_config_default(npu_core_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->vlen_bits = 256;
    cfg->ub_bytes = 256 * 1024;
    cfg->core_id = 0;
    cfg->num_cores = 1;
    cfg->sfu_mode = NPU_SFU_EXACT;
    cfg->sfu_bits = 12;
    cfg->l1_bytes = 1024 * 1024;
    cfg->l0a_bytes = 64 * 1024;
    cfg->l0b_bytes = 64 * 1024;
    cfg->l0c_bytes = 256 * 1024;
    cfg->race_check = 1;
}

/* calloc that treats 0 bytes as "no buffer" (NULL, and no failure). */
static int alloc_buffer(uint8_t **p, size_t bytes)
{
    if (!*p && bytes)
        *p = calloc(1, bytes);
    return !bytes || *p;
}

/* The cube's buffers exist from the first instruction that uses them on
 * (or a host's call): an activation kernel never pays for them. */
int npu_core_cube_buffers(npu_core *c)
{
    if (c->cube_used)
        return NPU_OK;
    if (!alloc_buffer(&c->l1, c->cfg.l1_bytes) || !alloc_buffer(&c->l0a, c->cfg.l0a_bytes) ||
        !alloc_buffer(&c->l0b, c->cfg.l0b_bytes) || !alloc_buffer(&c->l0c, c->cfg.l0c_bytes))
        return NPU_ENOMEM;
    c->cube_used = 1;
    return NPU_OK;
}

int npu_core_init(npu_core *c, const npu_core_config *cfg, const npu_program *prog, npu_gm *gm)
{
    memset(c, 0, sizeof *c);
    if (!cfg || !config_valid(cfg))
        return NPU_EINVAL;
    c->ub = calloc(1, cfg->ub_bytes);
    if (!c->ub)
        return NPU_ENOMEM;
    c->cfg = *cfg;
    c->prog = prog;
    c->gm = gm;
    if (!npu_race_init(c)) {
        free(c->ub);
        memset(c, 0, sizeof *c);
        return NPU_ENOMEM;
    }
    npu_core_reset(c);
    return NPU_OK;
}

void npu_core_fini(npu_core *c)
{
    free(c->ub);
    free(c->l1);
    free(c->l0a);
    free(c->l0b);
    free(c->l0c);
    npu_race_free(c);
    memset(c, 0, sizeof *c);
}

/* Clears registers, UB, DMA state and the trap. The SPRs that describe the
 * kernel's tensors (shape.*, elems, esize) are the host's: reset keeps them. */
void npu_core_reset(npu_core *c)
{
    c->pc = 0;
    c->next_pc = 0;
    memset(c->s, 0, sizeof c->s);
    memset(c->v, 0, sizeof c->v);
    memset(c->p, 0, sizeof c->p);
    if (c->ub)
        memset(c->ub, 0, c->cfg.ub_bytes);
    /* The cube's buffers go until used again (npu_core_cube_buffers). */
    uint8_t **const bufs[4] = { &c->l1, &c->l0a, &c->l0b, &c->l0c };
    for (int b = 0; b < 4; b++) {
        free(*bufs[b]);
        *bufs[b] = NULL;
    }
    c->cube_used = 0;
    c->mm_dim[0] = c->mm_dim[1] = c->mm_dim[2] = 1;
    c->im2_dim[0] = c->im2_dim[1] = c->im2_dim[2] = c->im2_dim[3] = c->im2_dim[4] = 1; /* 1 x 1 map, 1 x 1 kernel, */
    c->im2_dim[5] = 0;                                                                 /* stride 1, no padding */

    c->spr[NPU_SPR_LANES_F16] = c->cfg.vlen_bits / 16;
    c->spr[NPU_SPR_LANES_F32] = c->cfg.vlen_bits / 32;
    c->spr[NPU_SPR_VLENB] = c->cfg.vlen_bits / 8;
    c->spr[NPU_SPR_COREID] = c->cfg.core_id;
    c->spr[NPU_SPR_NCORES] = c->cfg.num_cores;
    c->spr[NPU_SPR_UB_BYTES] = c->cfg.ub_bytes;
    c->spr[NPU_SPR_L1_BYTES] = c->cfg.l1_bytes;
    c->spr[NPU_SPR_L0A_BYTES] = c->cfg.l0a_bytes;
    c->spr[NPU_SPR_L0B_BYTES] = c->cfg.l0b_bytes;
    c->spr[NPU_SPR_L0C_BYTES] = c->cfg.l0c_bytes;

    for (int d = 0; d < 2; d++) {
        c->dma_desc.count[d] = 1;
        c->dma_desc.gm_stride[d] = 0;
        c->dma_desc.ub_stride[d] = 0;
    }
    c->dma_tags_issued = 0;
    npu_race_reset(c);
    c->state = NPU_CORE_RUNNING;
    memset(&c->trap, 0, sizeof c->trap);
    c->retired = 0;
    memset(c->op_count, 0, sizeof c->op_count);
}

const char *npu_trap_name(npu_trap_kind k)
{
    static const char *const names[NPU_NUM_TRAP_KINDS] = {
        [NPU_TRAP_NONE] = "none",
        [NPU_TRAP_ILLEGAL] = "illegal_instruction",
        [NPU_TRAP_PC_OUT_OF_RANGE] = "pc_out_of_range",
        [NPU_TRAP_UB_BOUNDS] = "ub_out_of_bounds",
        [NPU_TRAP_GM_BOUNDS] = "gm_out_of_bounds",
        [NPU_TRAP_MISALIGNED] = "misaligned",
        [NPU_TRAP_DMA_TAG] = "dma_tag",
        [NPU_TRAP_BARRIER] = "barrier",
        [NPU_TRAP_MAX_CYCLES] = "max_cycles",
        [NPU_TRAP_MAX_INSNS] = "max_instructions",
        [NPU_TRAP_DEADLOCK] = "deadlock",
        [NPU_TRAP_DMA_SIZE] = "dma_too_large",
        [NPU_TRAP_CUBE_BOUNDS] = "cube_buffer_out_of_bounds",
        [NPU_TRAP_RACE] = "race",
    };
    return (unsigned)k < NPU_NUM_TRAP_KINDS ? names[k] : "unknown";
}

/* The first trap wins: a core that has already trapped keeps its cause. The
 * recorded pc is c->pc, the instruction that faulted (or, from a run loop,
 * the next one the core would have executed). */
void npu_core_raise(npu_core *c, npu_trap_kind kind, uint64_t addr, const char *fmt, ...)
{
    if (c->state == NPU_CORE_TRAPPED)
        return;
    c->state = NPU_CORE_TRAPPED;
    c->trap.kind = kind;
    c->trap.pc = c->pc;
    c->trap.addr = addr;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->trap.message, sizeof c->trap.message, fmt, ap);
    va_end(ap);
}

/* Decoded instructions already satisfy this; hand-built ones may not. */
static int dtype_allowed(const npu_insn *in)
{
    unsigned set = npu_insn_table[in->op].dtypes;
    return set == NPU_DT_NONE ? in->dt == 0 : in->dt < 4 && ((set >> in->dt) & 1);
}

static void trap_undecodable(npu_core *c)
{
    const uint64_t *words = c->prog->words;
    if (words)
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0,
                       "illegal instruction: word 0x%016llx does not decode",
                       (unsigned long long)words[c->pc]);
    else
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "illegal instruction: not a valid instruction");
}

npu_core_state npu_core_step(npu_core *c, npu_step_info *info)
{
    if (c->state != NPU_CORE_RUNNING)
        return c->state;

    uint64_t count = c->prog ? c->prog->count : 0;
    if (c->pc >= count) {
        npu_core_raise(c, NPU_TRAP_PC_OUT_OF_RANGE, c->pc,
                       "ran off the end of the program (pc %llu, %llu instructions)",
                       (unsigned long long)c->pc, (unsigned long long)count);
        if (info) {
            memset(info, 0, sizeof *info);
            info->pc = info->next_pc = c->pc;
        }
        return c->state;
    }

    const npu_insn *in = &c->prog->insns[c->pc];
    if (info) {
        /* Field by field: a memset of the whole struct compiles to `rep stos`,
         * whose start-up cost was a tenth of the time of a timed step. */
        info->pc = c->pc;
        info->insn = in;
        info->next_pc = 0;
        info->branch_taken = 0;
        info->ub_addr = 0;
        info->ub_bytes = 0;
        info->ub_stride = 0;
        info->ub_lanes = 0;
        info->has_dma = 0; /* dma and pipe are set with these flags, read only under them */
        info->has_pipe = 0;
    }
    c->next_pc = c->pc + 1;

    if (in->op == NPU_OP_INVALID || in->op >= NPU_NUM_OPS) {
        trap_undecodable(c);
    } else if (!dtype_allowed(in)) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "illegal instruction: %s does not take dtype %s",
                       npu_insn_table[in->op].mnemonic, npu_dtype_name((npu_dtype)in->dt));
    } else {
        switch (in->op) {
#define INSN(id, ...) case NPU_OP_##id: exec_##id(c, in, info); break;
#include "insns.def"
#undef INSN
        default:
            break;
        }
    }

    if (c->state == NPU_CORE_TRAPPED) {
        if (info)
            info->next_pc = c->pc;
        return c->state;
    }
    c->pc = c->next_pc;
    c->retired++;
    c->op_count[in->op]++;
    if (info)
        info->next_pc = c->pc;
    return c->state;
}
