/* The disassembler: one instruction to the canonical text that the
 * assembler turns back into the identical word. */
#include "c_locale.h"
#include "npusim/fp16.h"
#include "npusim/program.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text_out {
    char *buf;
    size_t size, len;
} text_out;

static void put(text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text_out *o, const char *fmt, ...)
{
    if (o->len + 1 >= o->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len = o->len + (size_t)n < o->size ? o->len + (size_t)n : o->size - 1;
}

/* A float literal must read back as a float: "1" would be an integer (and
 * "-0" the integer zero), so integral spellings get ".0". */
static void put_float_text(text_out *o, const char *text)
{
    put(o, "%s%s", text, strpbrk(text, ".eEin") ? "" : ".0");
}

/* Exact value of a binary16 pattern (not via npu_f16_to_f32, so the
 * disassembler does not lean on the arithmetic it helps to test). */
static double f16_value(uint16_t h)
{
    int exp = (h >> 10) & 0x1f;
    double mant = h & 0x3ff;
    double v = exp ? ldexp(1024.0 + mant, exp - 25) : ldexp(mant, -24);
    return (h & 0x8000) ? -v : v;
}

/* Shortest %.Ng text whose value rounds back to `v` in binary16: within an
 * eighth of an ulp of v, well inside the rounding interval. */
static void put_f16(text_out *o, uint16_t h)
{
    if ((h & 0x7fff) > 0x7c00) {
        if ((h & 0x7fff) == NPU_F16_QNAN)
            put(o, (h & 0x8000) ? "-nan" : "nan");
        else
            put(o, "bits(0x%04x)", h);
        return;
    }
    if ((h & 0x7fff) == 0x7c00) {
        put(o, (h & 0x8000) ? "-inf" : "inf");
        return;
    }
    double v = f16_value(h);
    int e = (h >> 10) & 0x1f;
    double tol = ldexp(1.0, (e ? e - 15 : -14) - 10) / 8;
    char text[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(text, sizeof text, "%.*g", prec, v);
        if (fabs(strtod(text, NULL) - v) <= tol)
            break;
    }
    put_float_text(o, text);
}

static void put_f32(text_out *o, uint32_t bits)
{
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        if ((bits & 0x7fffffffu) == NPU_F32_QNAN_BITS)
            put(o, (bits & 0x80000000u) ? "-nan" : "nan");
        else
            put(o, "bits(0x%08x)", bits);
        return;
    }
    float f = npu_f32_from_bits(bits);
    if (isinf(f)) {
        put(o, f < 0 ? "-inf" : "inf");
        return;
    }
    char text[40];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(text, sizeof text, "%.*g", prec, (double)f);
        if (npu_f32_bits((float)strtod(text, NULL)) == bits)
            break;
    }
    put_float_text(o, text);
}

/* The literal of vbcasti: canonical forms are a binary16 pattern
 * zero-extended, a binary32 pattern, a sign-extended i16, any i32. */
static void put_lit(text_out *o, npu_dtype dt, int32_t imm)
{
    uint32_t bits = (uint32_t)imm;
    switch (dt) {
    case NPU_F16:
        if (bits > 0xffff)
            put(o, "bits(0x%x)", bits);
        else
            put_f16(o, (uint16_t)bits);
        return;
    case NPU_F32: put_f32(o, bits); return;
    case NPU_I16:
        if (imm < INT16_MIN || imm > INT16_MAX)
            put(o, "bits(0x%x)", bits);
        else
            put(o, "%d", imm);
        return;
    case NPU_I32: put(o, "%d", imm); return;
    }
}

static void put_operand(text_out *o, const npu_insn *in, npu_operand_kind k, size_t index)
{
    const npu_operand_desc *od = &npu_operand_table[k];
    const char letter = npu_regfile_letter((npu_regfile)od->file);
    if (letter && k != NPU_OPK_MEM) { /* a plain register operand: file and field from the table */
        put(o, "%c%u", letter, (unsigned)npu_insn_field(in, (npu_field)od->field));
        return;
    }
    switch (k) {
    case NPU_OPK_IMM:
    case NPU_OPK_U6:
    case NPU_OPK_ULANE:
    case NPU_OPK_TAGI: put(o, "%d", in->imm); return;
    case NPU_OPK_LIT: put_lit(o, (npu_dtype)in->dt, in->imm); return;
    case NPU_OPK_F32: put_f32(o, (uint32_t)in->imm); return;
    case NPU_OPK_REL: put(o, "@%lld", (long long)index + in->imm); return;
    case NPU_OPK_MEM:
        if (in->imm == 0 && !in->vl)
            put(o, "[s%u]", in->rs1);
        else if (in->imm >= 0)
            put(o, "[s%u + %d%s]", in->rs1, in->imm, in->vl ? " vl" : "");
        else
            put(o, "[s%u - %lld%s]", in->rs1, -(long long)in->imm, in->vl ? " vl" : "");
        return;
    case NPU_OPK_SPR:
        if (in->imm >= 0 && in->imm < NPU_NUM_SPRS)
            put(o, "%s", npu_spr_table[in->imm].name);
        else
            put(o, "%d", in->imm);
        return;
    case NPU_OPK_DIM:
    case NPU_OPK_TAG: put(o, "%u", (unsigned)npu_insn_field(in, (npu_field)od->field)); return;
    default: return;
    }
}

static void disasm(const npu_insn *in, size_t index, char *buf, size_t size);

void npu_disasm(const npu_insn *in, size_t index, char *buf, size_t size)
{
    const locale_t host = isa_locale_enter(); /* "1.5", never "1,5" */
    disasm(in, index, buf, size);
    isa_locale_restore(host);
}

static void disasm(const npu_insn *in, size_t index, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    text_out o = { buf, size, 0 };
    buf[0] = '\0';
    if (in->op == NPU_OP_INVALID || in->op >= NPU_NUM_OPS) {
        put(&o, "<invalid>");
        return;
    }
    const npu_insn_desc *d = npu_desc(in->op);
    put(&o, "%s", d->mnemonic);
    if (d->dtypes != NPU_DT_NONE)
        put(&o, ".%s", npu_dtype_name((npu_dtype)in->dt));
    const npu_format_desc *f = &npu_format_table[d->format];
    for (unsigned i = 0; i < f->num_operands; i++) {
        put(&o, i ? ", " : " ");
        put_operand(&o, in, (npu_operand_kind)f->operands[i], index);
    }
    if ((d->flags & NPU_F_MASK) && in->pm)
        put(&o, ", p%u", in->pg);
}
