/* Semantics of the scalar, control-flow, predicate, special-register and
 * synchronisation instructions (see the description column of insns.def). */
#include "exec.h"
#include "race.h"

#include <string.h>

#define SA sreg(c, in->rs1)
#define SB sreg(c, in->rs2)
#define IMM ((uint64_t)(int64_t)in->imm) /* imm32, sign-extended */
#define WRITE_SD(value) set_sreg(c, in->rd, (value))

/* ---- scalar integer ------------------------------------------------------ */

EXEC(ADD) { WRITE_SD(SA + SB); }
EXEC(SUB) { WRITE_SD(SA - SB); }
EXEC(MUL) { WRITE_SD(SA * SB); }
EXEC(DIVU) { WRITE_SD(SB ? SA / SB : UINT64_MAX); }
EXEC(REMU) { WRITE_SD(SB ? SA % SB : SA); }
EXEC(AND) { WRITE_SD(SA & SB); }
EXEC(OR) { WRITE_SD(SA | SB); }
EXEC(XOR) { WRITE_SD(SA ^ SB); }
EXEC(SLL) { WRITE_SD(SA << (SB & 63)); }
EXEC(SRL) { WRITE_SD(SA >> (SB & 63)); }
/* Right shift of a negative int64 is arithmetic on every compiler npusim supports. */
EXEC(SRA) { WRITE_SD((uint64_t)((int64_t)SA >> (SB & 63))); }
EXEC(SLT) { WRITE_SD((int64_t)SA < (int64_t)SB); }
EXEC(SLTU) { WRITE_SD(SA < SB); }
EXEC(SEQ) { WRITE_SD(SA == SB); }
EXEC(MIN) { WRITE_SD((int64_t)SA < (int64_t)SB ? SA : SB); }
EXEC(MAX) { WRITE_SD((int64_t)SA > (int64_t)SB ? SA : SB); }

EXEC(ADDI) { WRITE_SD(SA + IMM); }
EXEC(MULI) { WRITE_SD(SA * IMM); }
EXEC(ADDVL) { WRITE_SD(SA + IMM * c->spr[NPU_SPR_VLENB]); }
EXEC(ANDI) { WRITE_SD(SA & IMM); }
EXEC(ORI) { WRITE_SD(SA | IMM); }
EXEC(XORI) { WRITE_SD(SA ^ IMM); }
EXEC(SLTI) { WRITE_SD((int64_t)SA < (int64_t)IMM); }
EXEC(MINI) { WRITE_SD((int64_t)SA < (int64_t)IMM ? SA : IMM); }
EXEC(MAXI) { WRITE_SD((int64_t)SA > (int64_t)IMM ? SA : IMM); }

/* Shift-by-immediate: the encoding has 32 bits of imm, the ISA allows 0..63. */
static int shift_imm_ok(npu_core *c, const npu_insn *in)
{
    if (in->imm >= 0 && in->imm < 64)
        return 1;
    npu_core_raise(c, NPU_TRAP_ILLEGAL, 0, "illegal instruction: %s shift amount %d is not in 0..63",
                   npu_insn_table[in->op].mnemonic, (int)in->imm);
    return 0;
}

EXEC(SLLI) { if (shift_imm_ok(c, in)) WRITE_SD(SA << in->imm); }
EXEC(SRLI) { if (shift_imm_ok(c, in)) WRITE_SD(SA >> in->imm); }
EXEC(SRAI) { if (shift_imm_ok(c, in)) WRITE_SD((uint64_t)((int64_t)SA >> in->imm)); }

EXEC(LI) { WRITE_SD(IMM); }
EXEC(LIH) { WRITE_SD((sreg(c, in->rd) & 0xffffffffull) | ((uint64_t)(uint32_t)in->imm << 32)); }
EXEC(LF) { WRITE_SD((uint64_t)(uint32_t)in->imm); }
EXEC(MV) { WRITE_SD(SA); }

EXEC(SRD)
{
    if (in->imm < 0 || in->imm >= NPU_NUM_SPRS) {
        npu_core_raise(c, NPU_TRAP_ILLEGAL, 0,
                       "illegal instruction: srd of special register %d (there are %d)",
                       (int)in->imm, (int)NPU_NUM_SPRS);
        return;
    }
    WRITE_SD(c->spr[in->imm]);
}

/* ---- control flow ----------------------------------------------------------
 * A taken branch whose target lies outside the program traps at the branch,
 * before any register is written (jal's link, loop's counter). A branch not
 * taken never checks its target. */

static int jump_to(npu_core *c, npu_step_info *info, uint64_t target)
{
    uint64_t count = c->prog->count;
    if (target >= count) {
        npu_core_raise(c, NPU_TRAP_PC_OUT_OF_RANGE, target,
                       "branch to instruction %lld, outside the program (0..%llu)",
                       (long long)target, (unsigned long long)(count ? count - 1 : 0));
        return 0;
    }
    c->next_pc = target;
    if (info)
        info->branch_taken = 1;
    return 1;
}

#define REL_TARGET (c->pc + (uint64_t)(int64_t)in->imm)
#define BRANCH_IF(cond) do { if (cond) jump_to(c, info, REL_TARGET); } while (0)

EXEC(BEQ) { BRANCH_IF(SA == SB); }
EXEC(BNE) { BRANCH_IF(SA != SB); }
EXEC(BLT) { BRANCH_IF((int64_t)SA < (int64_t)SB); }
EXEC(BGE) { BRANCH_IF((int64_t)SA >= (int64_t)SB); }
EXEC(BLTU) { BRANCH_IF(SA < SB); }
EXEC(BGEU) { BRANCH_IF(SA >= SB); }
EXEC(BNEZ) { BRANCH_IF(SA != 0); }
EXEC(BEQZ) { BRANCH_IF(SA == 0); }
EXEC(J) { jump_to(c, info, REL_TARGET); }

EXEC(JAL)
{
    uint64_t link = c->pc + 1;
    if (jump_to(c, info, REL_TARGET))
        WRITE_SD(link);
}

EXEC(JR) { jump_to(c, info, SA); }

EXEC(LOOP)
{
    uint64_t left = sreg(c, in->rd) - 1;
    if (left == 0 || jump_to(c, info, REL_TARGET))
        WRITE_SD(left);
}

EXEC(NOP) { (void)c; (void)in; }

/* The PC stays on the halt, so a halted core reports where it stopped. */
EXEC(HALT)
{
    (void)in;
    c->state = NPU_CORE_HALTED;
    c->next_pc = c->pc;
}

/* The run loop releases the barrier by setting the core back to running;
 * the PC has already moved past it. */
EXEC(BARRIER)
{
    (void)in;
    c->state = NPU_CORE_AT_BARRIER;
    npu_race_barrier(c);
}

/* ---- predicates ------------------------------------------------------------ */

enum { PWORDS = NPU_MAX_LANES / 64 };

EXEC(PWHILE)
{
    int64_t limit = (int64_t)SA;
    unsigned lanes = lanes_of(c, in->dt);
    uint64_t bits[PWORDS] = { 0 };
    for (unsigned i = 0; i < lanes && (int64_t)i < limit; i++)
        bits[i >> 6] |= 1ull << (i & 63);
    memcpy(preg(c, in->rd), bits, sizeof bits);
}

EXEC(PCNT)
{
    unsigned lanes = lanes_of(c, in->dt), n = 0;
    for (unsigned i = 0; i < lanes; i++)
        n += (unsigned)pbit(c, in->rs1, i);
    WRITE_SD(n);
}

#define PRED_OP(expr)                                                     \
    do {                                                                  \
        const uint64_t *pa = preg(c, in->rs1), *pb = preg(c, in->rs2);    \
        uint64_t out[PWORDS];                                             \
        for (unsigned w = 0; w < PWORDS; w++)                             \
            out[w] = (expr);                                              \
        memcpy(preg(c, in->rd), out, sizeof out);                         \
        (void)pb;                                                         \
    } while (0)

EXEC(PAND) { PRED_OP(pa[w] & pb[w]); }
EXEC(POR) { PRED_OP(pa[w] | pb[w]); }
EXEC(PXOR) { PRED_OP(pa[w] ^ pb[w]); }
EXEC(PNOT) { PRED_OP(~pa[w]); }
