/* npusim activation ISA: opcodes, instruction fields, the descriptor table,
 * encode/decode. Everything here is expanded from isa/insns.def. */
#ifndef NPUSIM_ISA_H
#define NPUSIM_ISA_H

#include "npusim/export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Architectural sizes. */
enum {
    NPU_NUM_SREGS = 32,
    NPU_NUM_VREGS = 32,
    NPU_NUM_PREGS = 8,
    NPU_VLEN_MIN = 128,
    NPU_VLEN_MAX = 2048,
    NPU_VLENB_MAX = NPU_VLEN_MAX / 8,
    NPU_MAX_LANES = NPU_VLEN_MAX / 16,
    NPU_NUM_DMA_TAGS = 32,
    NPU_INSN_BYTES = 8
};

/* Lane types. The dtype field of an instruction word holds one of these. */
typedef enum npu_dtype { NPU_F16 = 0, NPU_F32 = 1, NPU_I16 = 2, NPU_I32 = 3 } npu_dtype;

/* Sets of lane types an instruction accepts (bit i = npu_dtype i). */
enum {
    NPU_DT_NONE = 0,
    NPU_DT_F16 = 1 << NPU_F16,
    NPU_DT_F32 = 1 << NPU_F32,
    NPU_DT_I16 = 1 << NPU_I16,
    NPU_DT_I32 = 1 << NPU_I32,
    NPU_DT_FLOAT = NPU_DT_F16 | NPU_DT_F32,
    NPU_DT_INT = NPU_DT_I16 | NPU_DT_I32,
    NPU_DT_ALL = NPU_DT_FLOAT | NPU_DT_INT
};

/* Row flags. NPU_F_MASK: takes an optional trailing predicate as a lane mask;
 * NPU_F_MASK_ZERO: its masked-off lanes become 0 (masked loads) instead of
 * keeping the destination's old value, so a masked form does not read it. */
enum { NPU_F_MASK = 1, NPU_F_MASK_ZERO = 2 };

/* How an instruction may change the flow of control (the row's `cf`). */
typedef enum npu_control_flow {
    NPU_CF_NONE,      /* falls through */
    NPU_CF_BRANCH,    /* conditional, PC-relative target (branches, loop) */
    NPU_CF_JUMP,      /* always taken, PC-relative target (j, jal) */
    NPU_CF_INDIRECT,  /* always taken, target in a register (jr) */
    NPU_CF_END        /* ends the core's program (halt) */
} npu_control_flow;

/* Issue-slot classes: config says which slots take which classes. */
typedef enum npu_class {
    NPU_CLASS_SCALAR, NPU_CLASS_BRANCH, NPU_CLASS_VECTOR, NPU_CLASS_MEM, NPU_CLASS_DMA, NPU_CLASS_SYNC,
    NPU_NUM_CLASSES
} npu_class;

/* Functional units. */
typedef enum npu_unit {
    NPU_UNIT_SCALAR, NPU_UNIT_BRANCH, NPU_UNIT_VALU, NPU_UNIT_SFU, NPU_UNIT_LSU, NPU_UNIT_DMA, NPU_UNIT_SYNC,
    NPU_NUM_UNITS
} npu_unit;

/* What an instruction does, for the instructions-per-vector metric. */
typedef enum npu_category {
    NPU_CAT_ARITH, NPU_CAT_CMP, NPU_CAT_SEL, NPU_CAT_SFU, NPU_CAT_LOGIC, NPU_CAT_CVT, NPU_CAT_MOVE, NPU_CAT_CONST,
    NPU_CAT_MEM, NPU_CAT_CTRL, NPU_NUM_CATEGORIES
} npu_category;

/* Operand kinds (operands.def): each names its register file, the
 * instruction field it lives in, and whether it is read or written. */
typedef enum npu_operand_kind {
    NPU_OPK_NONE = 0,
#define OPK(id, syntax, file, field, access, imm, desc) NPU_OPK_##id,
#include "operands.def"
#undef OPK
} npu_operand_kind;

enum {
    NPU_NUM_OPERAND_KINDS = 1
#define OPK(id, syntax, file, field, access, imm, desc) +1
#include "operands.def"
#undef OPK
};

/* Register files an operand may name. */
typedef enum npu_regfile { NPU_RF_NONE, NPU_RF_S, NPU_RF_V, NPU_RF_P, NPU_RF_TAG } npu_regfile;
/* Instruction fields (see the word layout below). */
typedef enum npu_field { NPU_FLD_RD, NPU_FLD_RS1, NPU_FLD_RS2, NPU_FLD_RS3, NPU_FLD_PG, NPU_FLD_IMM } npu_field;
/* What an instruction does with an operand. */
typedef enum npu_access { NPU_ACC_NONE = 0, NPU_ACC_R = 1, NPU_ACC_W = 2, NPU_ACC_RW = 3 } npu_access;

typedef struct npu_operand_desc {
    const char *syntax;      /* "vd", "[sa + off]", ... */
    const char *description;
    uint8_t file;            /* npu_regfile */
    uint8_t field;           /* npu_field: where the register number (or value) lives */
    uint8_t access;          /* npu_access */
    uint8_t uses_imm;        /* also uses the imm32 field (MEM: base register + offset) */
} npu_operand_desc;

typedef enum npu_format {
#define FMT(id, n, ...) id,
#include "formats.def"
#undef FMT
    NPU_NUM_FORMATS
} npu_format;

typedef enum npu_opcode {
    NPU_OP_INVALID = 0,
#define INSN(id, mn, opc, fmt, dts, flags, cf, cls, unit, cat, desc) NPU_OP_##id,
#include "insns.def"
#undef INSN
    NPU_NUM_OPS
} npu_opcode;

typedef enum npu_spr {
#define SPR(id, name, idx, desc) NPU_SPR_##id = idx,
#include "sprs.def"
#undef SPR
    NPU_NUM_SPRS
} npu_spr;

enum { NPU_MAX_OPERANDS = 4 };

typedef struct npu_format_desc {
    const char *name;
    uint8_t num_operands;
    uint8_t operands[NPU_MAX_OPERANDS]; /* npu_operand_kind */
} npu_format_desc;

typedef struct npu_insn_desc {
    const char *mnemonic;
    const char *description;
    uint8_t opcode; /* byte 0 of the word */
    uint8_t format; /* npu_format */
    uint8_t dtypes; /* DT_* set */
    uint8_t flags;  /* F_* */
    uint8_t cf;     /* npu_control_flow */
    uint8_t cls;    /* npu_class */
    uint8_t unit;   /* npu_unit */
    uint8_t category;
} npu_insn_desc;

typedef struct npu_spr_desc {
    const char *name;
    const char *description;
} npu_spr_desc;

/* A decoded instruction. Fields a format does not use are zero. */
typedef struct npu_insn {
    uint16_t op; /* npu_opcode */
    uint8_t dt;  /* npu_dtype */
    uint8_t rd, rs1, rs2, rs3;
    uint8_t pg; /* predicate: lane mask when pm = 1, selector for vsel */
    uint8_t pm; /* 1 when the instruction is masked by pg */
    uint8_t vl; /* vector memory operands: imm counts vector lengths (VLEN/8 bytes), as SVE's MUL VL */
    int32_t imm;
} npu_insn;

/* Instruction word layout (64 bits, little-endian in files):
 *   [7:0] opcode  [9:8] dtype  [14:10] rd  [19:15] rs1  [24:20] rs2
 *   [27:25] pg    [28] pm      [29] vl (vector memory offsets in vector lengths)  [31:30] zero
 *   [63:32] imm32, or rs3 in [36:32] for formats with a fourth register. */
enum {
    NPU_SH_OPCODE = 0, NPU_SH_DT = 8, NPU_SH_RD = 10, NPU_SH_RS1 = 15, NPU_SH_RS2 = 20,
    NPU_SH_PG = 25, NPU_SH_PM = 28, NPU_SH_VL = 29, NPU_SH_IMM = 32, NPU_SH_RS3 = 32
};

NPU_API extern const npu_insn_desc npu_insn_table[NPU_NUM_OPS];
NPU_API extern const npu_format_desc npu_format_table[NPU_NUM_FORMATS];
NPU_API extern const npu_spr_desc npu_spr_table[NPU_NUM_SPRS];
NPU_API extern const npu_operand_desc npu_operand_table[NPU_NUM_OPERAND_KINDS];

/* The value of field `f` of a decoded instruction: a register number (a
 * DMA tag in imm: imm & 31), or the immediate. */
static inline uint32_t npu_insn_field(const npu_insn *in, npu_field f)
{
    switch (f) {
    case NPU_FLD_RD: return in->rd;
    case NPU_FLD_RS1: return in->rs1;
    case NPU_FLD_RS2: return in->rs2;
    case NPU_FLD_RS3: return in->rs3;
    case NPU_FLD_PG: return in->pg;
    case NPU_FLD_IMM: return (uint32_t)in->imm;
    }
    return 0;
}

/* The letter a register file's registers are written with: 's', 'v', 'p';
 * 0 for a file without register syntax (DMA tags are plain numbers). */
static inline char npu_regfile_letter(npu_regfile f)
{
    return f == NPU_RF_S ? 's' : f == NPU_RF_V ? 'v' : f == NPU_RF_P ? 'p' : 0;
}

static inline const npu_insn_desc *npu_desc(unsigned op) { return &npu_insn_table[op]; }

/* The opcode enum for an opcode byte, or NPU_OP_INVALID. */
NPU_API npu_opcode npu_opcode_from_byte(uint8_t byte);
/* The row whose mnemonic (without a dtype suffix) is `mnemonic`, or NPU_OP_INVALID. */
NPU_API npu_opcode npu_opcode_from_mnemonic(const char *mnemonic, size_t len);
NPU_API const char *npu_dtype_name(npu_dtype dt);          /* "f16" ... */
NPU_API const char *npu_operand_syntax(npu_operand_kind k); /* "vd", "[sa + off]", ...; "" for none */
NPU_API const char *npu_category_name(npu_category c);      /* "arith", "sfu", ... */
NPU_API unsigned npu_dtype_bytes(npu_dtype dt);            /* 2 or 4 */
NPU_API int npu_spr_from_name(const char *name, size_t len); /* index or -1 */

/* 1 when a format has a memory operand beside a vector register (a vector
 * load or store), whose offset may count vector lengths (the vl bit). */
NPU_API int npu_format_has_vector_mem(npu_format fmt);
/* Which word bits a format uses (everything else must be zero). */
NPU_API uint64_t npu_format_field_mask(npu_format fmt, int maskable);

NPU_API uint64_t npu_encode(const npu_insn *insn);
/* Returns 0 and fills *out, or a negative NPU_E* code when the word is not a
 * valid instruction: unknown opcode, bad dtype, non-zero unused bits (pg of
 * a maskable row whose pm is clear too), or a field value the assembler
 * refuses (a shift of 64, special register 255, DMA dimension 3). A word
 * that decodes is the one npu_encode writes for *out. */
NPU_API int npu_decode(uint64_t word, npu_insn *out);

#ifdef __cplusplus
}
#endif
#endif
