/* The instruction, format and special-register tables, and encode/decode,
 * all expanded from the .def files. */
#include "npusim/isa.h"
#include "npusim/errors.h"

#include <pthread.h>
#include <string.h>

const npu_insn_desc npu_insn_table[NPU_NUM_OPS] = {
    [NPU_OP_INVALID] = { "<invalid>", "not an instruction", 0, NPU_FMT_NONE, NPU_DT_NONE, 0, NPU_CF_NONE, NPU_CLASS_SCALAR,
                         NPU_UNIT_SCALAR, NPU_CAT_CTRL },
#define INSN(id, mn, opc, fmt, dts, flg, cflow, klass, un, cat, desc) \
    [NPU_OP_##id] = { mn, desc, opc, fmt, dts, flg, cflow, klass, un, cat },
#include "insns.def"
#undef INSN
};

const npu_format_desc npu_format_table[NPU_NUM_FORMATS] = {
#define FMT(id, n, ...) [id] = { #id, n, __VA_ARGS__ },
#include "formats.def"
#undef FMT
};

const npu_operand_desc npu_operand_table[NPU_NUM_OPERAND_KINDS] = {
    [NPU_OPK_NONE] = { "", "no operand", NPU_RF_NONE, NPU_FLD_IMM, NPU_ACC_NONE, 0 },
#define OPK(id, syn, file, field, access, imm, desc) \
    [NPU_OPK_##id] = { syn, desc, NPU_RF_##file, NPU_FLD_##field, NPU_ACC_##access, imm },
#include "operands.def"
#undef OPK
};

const npu_spr_desc npu_spr_table[NPU_NUM_SPRS] = {
#define SPR(id, nm, idx, desc) [idx] = { nm, desc },
#include "sprs.def"
#undef SPR
};

/* Opcode byte -> enum, built from the table on first use, once per process
 * whichever threads decode first. */
static uint16_t opcode_map[256];
static pthread_once_t opcode_map_once = PTHREAD_ONCE_INIT;

static void build_opcode_map(void)
{
    for (unsigned op = 1; op < NPU_NUM_OPS; op++)
        opcode_map[npu_insn_table[op].opcode] = (uint16_t)op;
}

npu_opcode npu_opcode_from_byte(uint8_t byte)
{
    pthread_once(&opcode_map_once, build_opcode_map);
    return (npu_opcode)opcode_map[byte];
}

npu_opcode npu_opcode_from_mnemonic(const char *mnemonic, size_t len)
{
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const char *m = npu_insn_table[op].mnemonic;
        if (strlen(m) == len && memcmp(m, mnemonic, len) == 0)
            return (npu_opcode)op;
    }
    return NPU_OP_INVALID;
}

const char *npu_dtype_name(npu_dtype dt)
{
    static const char *const names[] = { "f16", "f32", "i16", "i32" };
    return (unsigned)dt < 4 ? names[dt] : "?";
}

const char *npu_operand_syntax(npu_operand_kind k)
{
    return (unsigned)k < NPU_NUM_OPERAND_KINDS ? npu_operand_table[k].syntax : "?";
}

const char *npu_category_name(npu_category c)
{
    static const char *const names[NPU_NUM_CATEGORIES] = { "arith", "cmp",  "sel",   "sfu", "logic",
                                                            "cvt",   "move", "const", "mem", "ctrl" };
    return (unsigned)c < NPU_NUM_CATEGORIES ? names[c] : "?";
}

unsigned npu_dtype_bytes(npu_dtype dt)
{
    return (dt == NPU_F16 || dt == NPU_I16) ? 2 : 4;
}

int npu_spr_from_name(const char *name, size_t len)
{
    for (int i = 0; i < NPU_NUM_SPRS; i++) {
        const char *n = npu_spr_table[i].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0)
            return i;
    }
    return -1;
}

#define FIELD(shift, bits) (((uint64_t)((1u << (bits)) - 1)) << (shift))

/* The word bits of an operand: its field (3 bits for a predicate register,
 * 5 for any other register or number in a register field), and imm32. */
static uint64_t operand_field_mask(npu_operand_kind k)
{
    if (k == NPU_OPK_NONE || (unsigned)k >= NPU_NUM_OPERAND_KINDS)
        return 0;
    const npu_operand_desc *o = &npu_operand_table[k];
    const unsigned bits = o->file == NPU_RF_P ? 3 : 5;
    uint64_t m = o->uses_imm ? 0xffffffff00000000ull : 0;
    switch ((npu_field)o->field) {
    case NPU_FLD_RD: m |= FIELD(NPU_SH_RD, bits); break;
    case NPU_FLD_RS1: m |= FIELD(NPU_SH_RS1, bits); break;
    case NPU_FLD_RS2: m |= FIELD(NPU_SH_RS2, bits); break;
    case NPU_FLD_RS3: m |= FIELD(NPU_SH_RS3, bits); break;
    case NPU_FLD_PG: m |= FIELD(NPU_SH_PG, bits); break;
    case NPU_FLD_IMM: break;
    }
    return m;
}

int npu_format_has_vector_mem(npu_format fmt)
{
    const npu_format_desc *f = &npu_format_table[fmt];
    int mem = 0, vector = 0;
    for (unsigned i = 0; i < f->num_operands; i++) {
        mem |= f->operands[i] == NPU_OPK_MEM;
        vector |= npu_operand_table[f->operands[i]].file == NPU_RF_V;
    }
    return mem && vector;
}

uint64_t npu_format_field_mask(npu_format fmt, int maskable)
{
    uint64_t m = FIELD(NPU_SH_OPCODE, 8) | FIELD(NPU_SH_DT, 2);
    const npu_format_desc *f = &npu_format_table[fmt];
    for (unsigned i = 0; i < f->num_operands; i++)
        m |= operand_field_mask((npu_operand_kind)f->operands[i]);
    if (maskable)
        m |= FIELD(NPU_SH_PG, 3) | FIELD(NPU_SH_PM, 1);
    if (npu_format_has_vector_mem(fmt))
        m |= FIELD(NPU_SH_VL, 1);
    return m;
}

uint64_t npu_encode(const npu_insn *in)
{
    const npu_insn_desc *d = &npu_insn_table[in->op];
    uint64_t w = (uint64_t)d->opcode << NPU_SH_OPCODE;
    w |= (uint64_t)(in->dt & 3) << NPU_SH_DT;
    w |= (uint64_t)(in->rd & 31) << NPU_SH_RD;
    w |= (uint64_t)(in->rs1 & 31) << NPU_SH_RS1;
    w |= (uint64_t)(in->rs2 & 31) << NPU_SH_RS2;
    w |= (uint64_t)(in->pg & 7) << NPU_SH_PG;
    w |= (uint64_t)(in->pm & 1) << NPU_SH_PM;
    w |= (uint64_t)(in->vl & 1) << NPU_SH_VL;
    w |= (uint64_t)(uint32_t)in->imm << NPU_SH_IMM;
    w |= (uint64_t)(in->rs3 & 31) << NPU_SH_RS3;
    return w;
}

/* The values an operand's field may hold: what the assembler accepts for
 * it, so every word that decodes disassembles to text that assembles back
 * to it (Isa.EveryWordThatDecodesReassemblesToItself). */
static int operand_value_ok(npu_operand_kind k, const npu_insn *in)
{
    switch (k) {
    case NPU_OPK_U6: return in->imm >= 0 && in->imm <= 63;
    case NPU_OPK_ULANE: return in->imm >= 0 && in->imm < 8 * (int32_t)npu_dtype_bytes((npu_dtype)in->dt);
    case NPU_OPK_SPR: return in->imm >= 0 && in->imm < NPU_NUM_SPRS;
    case NPU_OPK_DIM: return in->rd >= 1 && in->rd <= 2;
    case NPU_OPK_TAG: return in->rd < NPU_NUM_DMA_TAGS;
    case NPU_OPK_TAGI: return in->imm >= 0 && in->imm < NPU_NUM_DMA_TAGS;
    /* A 16-bit lane's literal uses the low half of imm, kept as the assembler
     * writes it (f16 zero-extended, i16 sign-extended): any other high half
     * would be a second word for one instruction. */
    case NPU_OPK_LIT:
        if (in->dt == NPU_F16)
            return in->imm >= 0 && in->imm <= 0xffff;
        if (in->dt == NPU_I16)
            return in->imm >= INT16_MIN && in->imm <= INT16_MAX;
        return 1;
    default: return 1;
    }
}

/* One word, one instruction: a word decodes only in the form the encoder
 * writes (bits the format does not use are zero, pg too while pm is clear)
 * and with values the assembler accepts; anything else is NPU_EDECODE. */
int npu_decode(uint64_t w, npu_insn *out)
{
    memset(out, 0, sizeof *out);
    npu_opcode op = npu_opcode_from_byte((uint8_t)(w & 0xff));
    if (op == NPU_OP_INVALID)
        return NPU_EDECODE;
    const npu_insn_desc *d = &npu_insn_table[op];
    if (w & ~npu_format_field_mask((npu_format)d->format, d->flags & NPU_F_MASK))
        return NPU_EDECODE; /* a bit set in a field this format does not use */
    unsigned dt = (unsigned)(w >> NPU_SH_DT) & 3;
    if (d->dtypes == NPU_DT_NONE ? dt != 0 : !(d->dtypes & (1u << dt)))
        return NPU_EDECODE;
    out->op = (uint16_t)op;
    out->dt = (uint8_t)dt;
    out->rd = (uint8_t)((w >> NPU_SH_RD) & 31);
    out->rs1 = (uint8_t)((w >> NPU_SH_RS1) & 31);
    out->rs2 = (uint8_t)((w >> NPU_SH_RS2) & 31);
    out->pg = (uint8_t)((w >> NPU_SH_PG) & 7);
    out->pm = (uint8_t)((w >> NPU_SH_PM) & 1);
    out->vl = (uint8_t)((w >> NPU_SH_VL) & 1);
    const npu_format_desc *f = &npu_format_table[d->format];
    int has_rs3 = 0;
    for (unsigned i = 0; i < f->num_operands; i++)
        has_rs3 |= f->operands[i] == NPU_OPK_SC || f->operands[i] == NPU_OPK_VC;
    if (has_rs3)
        out->rs3 = (uint8_t)((w >> NPU_SH_RS3) & 31);
    else
        out->imm = (int32_t)(uint32_t)(w >> NPU_SH_IMM);
    /* A maskable row's pg is its mask, there only when pm says so. */
    int ok = !((d->flags & NPU_F_MASK) && !out->pm && out->pg);
    for (unsigned i = 0; i < f->num_operands && ok; i++)
        ok = operand_value_ok((npu_operand_kind)f->operands[i], out);
    if (!ok || npu_encode(out) != w) {
        memset(out, 0, sizeof *out);
        return NPU_EDECODE;
    }
    return NPU_OK;
}
