/* One instruction statement: mnemonic and dtype suffix, then the operands the
 * row's format lists (isa/formats.def), each parsed by its operand kind. */
#include "asm_internal.h"

#include "npusim/fp16.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { QBUF = 96 };

static const char *reg_class_name(char cls)
{
    return cls == 's' ? "scalar" : cls == 'v' ? "vector" : "predicate";
}

static int parse_reg(asm_lexer *lx, char cls, uint8_t *field)
{
    char q[QBUF];
    asm_token t = asm_lex_next(lx);
    char got;
    unsigned num;
    /* `%name`: a virtual register of a .pipeline block. */
    if (asm_tok_is(&t, '%')) {
        if (cls == 's')
            return asm_error(lx->ctx, t.col, "virtual registers are vector or predicate registers; "
                                             "scalar operands name s0..s31");
        if (asm_pipe_virtual(lx->ctx, lx, cls, field) < 0)
            return -1;
        if (lx->ctx->nvirt_fields < sizeof lx->ctx->virt_fields / sizeof lx->ctx->virt_fields[0])
            lx->ctx->virt_fields[lx->ctx->nvirt_fields++] = field;
        return 0;
    }
    /* `v[expr]`: a computed register number, so macros can place unrolled
     * copies in register banks: `v[\r + 6]`). */
    asm_token open = asm_lex_peek(lx);
    if (t.kind == TOK_IDENT && t.len == 1 && t.text[0] == cls && asm_tok_is(&open, '[')) {
        asm_lex_next(lx);
        asm_int n;
        int col;
        char num[32];
        if (asm_parse_int(lx, "register number", &n, &col) < 0)
            return -1;
        asm_token close = asm_lex_next(lx);
        if (!asm_tok_is(&close, ']'))
            return asm_error(lx->ctx, close.col, "expected ']', found %s", asm_tok_str(&close, q, sizeof q));
        unsigned count = cls == 'p' ? NPU_NUM_PREGS : cls == 'v' ? NPU_NUM_VREGS : NPU_NUM_SREGS;
        if (n < 0 || n >= (asm_int)count)
            return asm_error(lx->ctx, col, "no register %c%s (%s registers are %c0..%c%u)", cls,
                             asm_int_str(n, num, sizeof num), reg_class_name(cls), cls, cls, count - 1);
        *field = (uint8_t)n;
        return 0;
    }
    if (asm_reg_parse(&t, &got, &num) && got == cls) {
        unsigned count = cls == 'p' ? NPU_NUM_PREGS : cls == 'v' ? NPU_NUM_VREGS : NPU_NUM_SREGS;
        if (num >= count)
            return asm_error(lx->ctx, t.col, "no register %s (%s registers are %c0..%c%u)",
                             asm_tok_str(&t, q, sizeof q), reg_class_name(cls), cls, cls,
                             count - 1);
        *field = (uint8_t)num;
        return 0;
    }
    if (t.kind == TOK_BAD)
        return -1;
    return asm_error(lx->ctx, t.col, "expected a %s register, found %s", reg_class_name(cls),
                     asm_tok_str(&t, q, sizeof q));
}

/* An integer expression in [lo, hi]; `what` words the range error. */
static int parse_ranged(asm_lexer *lx, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
    int col;
    asm_int v;
    char num[32];
    if (asm_parse_int(lx, what, &v, &col) < 0)
        return -1;
    if (v < lo || v > hi)
        return asm_error(lx->ctx, col, "%s %s out of range (%lld..%lld)", what,
                         asm_int_str(v, num, sizeof num), (long long)lo, (long long)hi);
    *out = (int64_t)v;
    return 0;
}

static int parse_imm32(asm_lexer *lx, int32_t *imm)
{
    asm_int v;
    int col;
    char num[32];
    if (asm_parse_int(lx, "immediate", &v, &col) < 0)
        return -1;
    if (v < INT32_MIN || v > INT32_MAX)
        return asm_error(lx->ctx, col, "immediate %s out of range for a 32-bit signed immediate",
                         asm_int_str(v, num, sizeof num));
    *imm = (int32_t)v;
    return 0;
}

/* `bits(N)`: the raw pattern of one lane of type dt (0..0xffff for f16 and
 * i16 lanes, 0..0xffffffff for f32 and i32; `lanes` 0: lf's binary32), for
 * literals no decimal spelling reaches (NaN payloads). It is kept in imm as
 * the lane's literal is: f16 zero-extended, i16 sign-extended. */
static int parse_bits(asm_lexer *lx, npu_dtype dt, int lanes, int32_t *imm)
{
    char q[QBUF];
    asm_token open = asm_lex_next(lx);
    if (!asm_tok_is(&open, '('))
        return asm_error(lx->ctx, open.col, "expected '(' after bits, found %s",
                         asm_tok_str(&open, q, sizeof q));
    const int narrow = npu_dtype_bytes(dt) == 2;
    asm_int v;
    int col;
    char num[32];
    if (asm_parse_int(lx, "bit pattern", &v, &col) < 0)
        return -1;
    if (v < 0 || v > (narrow ? UINT16_MAX : UINT32_MAX))
        return asm_error(lx->ctx, col, "bit pattern %s out of range for %s%s (0..%u)", asm_int_str(v, num, sizeof num),
                         npu_dtype_name(dt), lanes ? " lanes" : "", narrow ? 0xffffu : 0xffffffffu);
    asm_token close = asm_lex_next(lx);
    if (!asm_tok_is(&close, ')'))
        return asm_error(lx->ctx, close.col, "expected ')', found %s",
                         asm_tok_str(&close, q, sizeof q));
    *imm = dt == NPU_I16 ? (int32_t)(int16_t)(uint16_t)v : (int32_t)(uint32_t)v;
    return 0;
}

static int peek_bits(asm_lexer *lx)
{
    asm_token t = asm_lex_peek(lx);
    if (t.kind == TOK_IDENT && t.len == 4 && memcmp(t.text, "bits", 4) == 0) {
        asm_lex_next(lx);
        return 1;
    }
    return 0;
}

/* Rounds a literal once to binary16 or binary32. Finite values that would
 * round to infinity, and non-zero values that would round to zero, are
 * errors: a kernel constant silently becoming inf or 0 is never what the
 * author meant. A NaN is the canonical quiet NaN with the literal's sign
 * (`-nan` sets the sign bit, as -0.0 does). */
static int float_bits(asm_lexer *lx, const asm_value *v, int col, npu_dtype dt, uint32_t *bits)
{
    /* A literal rounds from its odd-rounded binary64 (asm_value), once. */
    double d = !v->is_float ? asm_int_to_double(v->i) : v->literal ? v->odd : v->d;
    if (dt == NPU_F16) {
        if (isnan(d)) {
            *bits = NPU_F16_QNAN | (signbit(d) ? 0x8000u : 0);
        } else if (!isinf(d) && fabs(d) >= 65520.0) {
            return asm_error(lx->ctx, col,
                             "literal %.9g overflows f16 (largest finite value is 65504)", d);
        } else {
            *bits = npu_f64_to_f16(d);
            if (d != 0.0 && (*bits & 0x7fffu) == 0)
                return asm_error(lx->ctx, col,
                                 "literal %.9g underflows f16 (smallest non-zero value is "
                                 "5.96046448e-08)",
                                 d);
        }
        return 0;
    }
    if (isnan(d)) {
        *bits = NPU_F32_QNAN_BITS | (signbit(d) ? 0x80000000u : 0);
    } else if (!isinf(d) && fabs(d) >= 0x1.ffffffp127) {
        return asm_error(lx->ctx, col, "literal %.9g overflows f32", d);
    } else {
        /* From an integer, one rounding int64 -> float, not two via double. */
        float f = v->is_float ? (float)d
                  : v->i < 0  ? (float)(int64_t)v->i
                              : (float)(uint64_t)v->i;
        if (d != 0.0 && f == 0.0f)
            return asm_error(lx->ctx, col,
                             "literal %.9g underflows f32 (smallest non-zero value is "
                             "1.40129846e-45)",
                             d);
        *bits = npu_f32_bits(f);
    }
    return 0;
}

static int parse_lit(asm_lexer *lx, npu_dtype dt, int32_t *imm)
{
    if (peek_bits(lx))
        return parse_bits(lx, dt, 1, imm);
    asm_token first = asm_lex_peek(lx);
    asm_value v;
    if (asm_parse_expr(lx, &v) < 0)
        return -1;
    if (dt == NPU_F16 || dt == NPU_F32) {
        uint32_t bits = 0;
        if (float_bits(lx, &v, first.col, dt, &bits) < 0)
            return -1;
        *imm = (int32_t)bits;
        return 0;
    }
    const char *name = npu_dtype_name(dt);
    if (v.is_float)
        return asm_error(lx->ctx, first.col, "expected an integer for %s lanes, found the float %.9g",
                         name, v.d);
    /* Signed values and unsigned bit patterns both fit (0xffff is -1 as i16);
     * i16 is kept sign-extended in imm. */
    int64_t lo = dt == NPU_I16 ? INT16_MIN : INT32_MIN;
    int64_t hi = dt == NPU_I16 ? UINT16_MAX : UINT32_MAX;
    char num[32];
    if (v.i < lo || v.i > hi)
        return asm_error(lx->ctx, first.col, "literal %s out of range for %s lanes (%lld..%lld)",
                         asm_int_str(v.i, num, sizeof num), name, (long long)lo, (long long)hi);
    *imm = dt == NPU_I16 ? (int16_t)(uint16_t)v.i : (int32_t)(uint32_t)v.i;
    return 0;
}

static int parse_f32(asm_lexer *lx, int32_t *imm)
{
    if (peek_bits(lx))
        return parse_bits(lx, NPU_F32, 0, imm);
    asm_token first = asm_lex_peek(lx);
    asm_value v;
    uint32_t bits = 0;
    if (asm_parse_expr(lx, &v) < 0 || float_bits(lx, &v, first.col, NPU_F32, &bits) < 0)
        return -1;
    *imm = (int32_t)bits;
    return 0;
}

/* [sN], [sN + expr], [sN - expr] */
static int parse_mem(asm_lexer *lx, npu_insn *in)
{
    char q[QBUF];
    asm_token open = asm_lex_next(lx);
    if (!asm_tok_is(&open, '[')) {
        if (open.kind == TOK_BAD)
            return -1;
        return asm_error(lx->ctx, open.col, "expected a memory operand '[sN + offset]', found %s",
                         asm_tok_str(&open, q, sizeof q));
    }
    if (parse_reg(lx, 's', &in->rs1) < 0)
        return -1;
    asm_token t = asm_lex_next(lx);
    asm_int off = 0;
    if (asm_tok_is(&t, '+') || asm_tok_is(&t, '-')) {
        int col;
        char num[32];
        if (asm_parse_int(lx, "offset", &off, &col) < 0)
            return -1;
        if (t.text[0] == '-')
            off = -off; /* -(2^64 - 1) at least: __int128 holds it */
        if (off < INT32_MIN || off > INT32_MAX)
            return asm_error(lx->ctx, col, "offset %s out of range for a 32-bit signed offset",
                             asm_int_str(off, num, sizeof num));
        t = asm_lex_next(lx);
        /* `[s2 + 3 vl]`: the offset counts vector lengths (vector accesses only). */
        if (t.kind == TOK_IDENT && t.len == 2 && memcmp(t.text, "vl", 2) == 0) {
            if (!npu_format_has_vector_mem((npu_format)npu_insn_table[in->op].format))
                return asm_error(lx->ctx, t.col, "'vl' offsets are for vector loads and stores only");
            in->vl = 1;
            t = asm_lex_next(lx);
        }
    }
    if (!asm_tok_is(&t, ']')) {
        if (t.kind == TOK_BAD)
            return -1;
        return asm_error(lx->ctx, t.col, "expected ']', found %s", asm_tok_str(&t, q, sizeof q));
    }
    in->imm = (int32_t)off;
    return 0;
}

/* `label` (a label token) or, with label NULL, the index `target` of `@N`. */
static int add_fixup(asm_ctx *c, const asm_token *label, asm_int target, int col, size_t index)
{
    if (asm_grow(c, (void **)&c->fixups, &c->fixups_cap, c->nfixups + 1, sizeof *c->fixups) < 0)
        return -1;
    char *name = NULL;
    if (label && !(name = asm_strndup(c, label->text, label->len)))
        return -1;
    c->fixups[c->nfixups++] = (asm_fixup){ index, name, target, c->cur.file, c->cur.line, col };
    return 0;
}

/* A label, or `@N`: the absolute instruction index the disassembler prints.
 * Both are resolved at the end, when the program's length is known. */
static int parse_rel(asm_lexer *lx)
{
    char q[QBUF];
    asm_ctx *c = lx->ctx;
    size_t index = c->prog->count;
    asm_token t = asm_lex_peek(lx);
    if (asm_tok_is(&t, '@')) {
        asm_lex_next(lx);
        asm_int target;
        int col;
        if (asm_parse_int(lx, "instruction index", &target, &col) < 0)
            return -1;
        return add_fixup(c, NULL, target, t.col, index);
    }
    asm_lex_next(lx);
    char cls;
    unsigned num;
    if (t.kind != TOK_IDENT || asm_reg_parse(&t, &cls, &num)) {
        if (t.kind == TOK_BAD)
            return -1;
        return asm_error(c, t.col, "expected a label, found %s", asm_tok_str(&t, q, sizeof q));
    }
    return add_fixup(c, &t, 0, t.col, index);
}

static int parse_spr(asm_lexer *lx, int32_t *imm)
{
    char q[QBUF];
    asm_token t = asm_lex_next(lx);
    if (t.kind != TOK_IDENT) {
        if (t.kind == TOK_BAD)
            return -1;
        return asm_error(lx->ctx, t.col, "expected a special register name, found %s",
                         asm_tok_str(&t, q, sizeof q));
    }
    int idx = npu_spr_from_name(t.text, t.len);
    if (idx < 0)
        return asm_error(lx->ctx, t.col, "unknown special register %s",
                         asm_tok_str(&t, q, sizeof q));
    *imm = idx;
    return 0;
}

/* The register field an operand lives in (operands.def). */
static uint8_t *reg_field(npu_insn *in, npu_field f)
{
    switch (f) {
    case NPU_FLD_RS1: return &in->rs1;
    case NPU_FLD_RS2: return &in->rs2;
    case NPU_FLD_RS3: return &in->rs3;
    case NPU_FLD_PG: return &in->pg;
    case NPU_FLD_RD:
    case NPU_FLD_IMM: break;
    }
    return &in->rd;
}

static int parse_operand(asm_lexer *lx, npu_operand_kind k, npu_insn *in)
{
    int64_t v;
    const npu_operand_desc *od = &npu_operand_table[k];
    const char letter = npu_regfile_letter((npu_regfile)od->file);
    if (letter && k != NPU_OPK_MEM) /* a plain register operand: its file and field come from the table */
        return parse_reg(lx, letter, reg_field(in, (npu_field)od->field));
    switch (k) {
    case NPU_OPK_IMM: return parse_imm32(lx, &in->imm);
    case NPU_OPK_LIT: return parse_lit(lx, (npu_dtype)in->dt, &in->imm);
    case NPU_OPK_F32: return parse_f32(lx, &in->imm);
    case NPU_OPK_REL: return parse_rel(lx);
    case NPU_OPK_MEM: return parse_mem(lx, in);
    case NPU_OPK_SPR: return parse_spr(lx, &in->imm);
    case NPU_OPK_U6:
        if (parse_ranged(lx, "shift amount", 0, 63, &v) < 0)
            return -1;
        in->imm = (int32_t)v;
        return 0;
    case NPU_OPK_ULANE: {
        int64_t bits = 8 * npu_dtype_bytes((npu_dtype)in->dt);
        int col;
        asm_int amount;
        char num[32];
        if (asm_parse_int(lx, "shift amount", &amount, &col) < 0)
            return -1;
        if (amount < 0 || amount >= bits)
            return asm_error(lx->ctx, col, "shift amount %s out of range for %s lanes (0..%lld)",
                             asm_int_str(amount, num, sizeof num), npu_dtype_name((npu_dtype)in->dt),
                             (long long)bits - 1);
        in->imm = (int32_t)amount;
        return 0;
    }
    case NPU_OPK_DIM:
        if (parse_ranged(lx, "DMA dimension", 1, 2, &v) < 0)
            return -1;
        in->rd = (uint8_t)v;
        return 0;
    case NPU_OPK_TAG:
    case NPU_OPK_TAGI:
        if (parse_ranged(lx, "DMA tag", 0, NPU_NUM_DMA_TAGS - 1, &v) < 0)
            return -1;
        if (od->field == NPU_FLD_IMM)
            in->imm = (int32_t)v;
        else
            *reg_field(in, (npu_field)od->field) = (uint8_t)v;
        return 0;
    default:
        break;
    }
    return asm_error(lx->ctx, 0, "internal error: operand kind %d", (int)k);
}

static void dtype_list(unsigned dtypes, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned dt = 0; dt < 4; dt++)
        if (dtypes & (1u << dt))
            o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", npu_dtype_name(dt));
}

/* Splits `vadd.f32` and checks the suffix against the row's dtype set. */
static int parse_mnemonic(asm_ctx *c, asm_token mn, npu_opcode *op, npu_dtype *dt)
{
    char q[QBUF], allowed[32];
    const char *dot = memchr(mn.text, '.', mn.len);
    size_t base = dot ? (size_t)(dot - mn.text) : mn.len;
    *op = npu_opcode_from_mnemonic(mn.text, base);
    if (*op == NPU_OP_INVALID)
        return asm_error(c, mn.col, "unknown mnemonic %s", asm_quote(mn.text, base, q, sizeof q));
    const npu_insn_desc *d = npu_desc(*op);
    *dt = NPU_F16;
    if (!dot) {
        if (d->dtypes != NPU_DT_NONE)
            return asm_error(c, mn.col, "missing dtype suffix for %s", d->mnemonic);
        return 0;
    }
    const char *suffix = dot + 1;
    size_t slen = mn.len - base - 1;
    int col = mn.col + (int)base;
    char shown[QBUF];
    asm_quote(dot, slen + 1, shown, sizeof shown);
    shown[strlen(shown) - 1] = '\0'; /* drop the quotes: `.i16` reads better */
    if (d->dtypes == NPU_DT_NONE)
        return asm_error(c, col, "dtype suffix %s not allowed for %s (it takes none)", shown + 1,
                         d->mnemonic);
    int found = -1;
    for (int i = 0; i < 4; i++)
        if (slen == 3 && memcmp(suffix, npu_dtype_name((npu_dtype)i), 3) == 0)
            found = i;
    int alias = found < 0 ? asm_dtype_alias(c, suffix, slen) : -1;
    if (found < 0 && alias < 0)
        return asm_error(c, col,
                         "unknown dtype suffix %s for %s (expected f16, f32, i16, i32 or a "
                         "defined dtype alias)",
                         shown + 1, d->mnemonic);
    int chosen = found >= 0 ? found : alias;
    if (d->dtypes & (1u << chosen)) {
        *dt = (npu_dtype)chosen;
        return 0;
    }
    dtype_list(d->dtypes, allowed, sizeof allowed);
    if (alias >= 0)
        return asm_error(c, col, "dtype suffix %s (= %s) not allowed for %s (allowed: %s)",
                         shown + 1, npu_dtype_name((npu_dtype)alias), d->mnemonic, allowed);
    return asm_error(c, col, "dtype suffix %s not allowed for %s (allowed: %s)", shown + 1,
                     d->mnemonic, allowed);
}

static int emit(asm_ctx *c, const npu_insn *in, int col)
{
    if (c->pipe) {
        unsigned virt = 0;
        npu_insn *w = (npu_insn *)in;
        uint8_t *fields[] = { &w->rd, &w->rs1, &w->rs2, &w->rs3, &w->pg };
        const npu_field ids[] = { NPU_FLD_RD, NPU_FLD_RS1, NPU_FLD_RS2, NPU_FLD_RS3, NPU_FLD_PG };
        for (size_t i = 0; i < c->nvirt_fields; i++)
            for (size_t f = 0; f < 5; f++)
                if (c->virt_fields[i] == fields[f])
                    virt |= 1u << ids[f];
        c->nvirt_fields = 0;
        return asm_pipe_add(c, in, virt, col);
    }
    npu_srcloc loc = { c->cur.file, c->cur.line };
    if (npu_program_append(c->prog, in, loc) < 0) {
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    return 0;
}

static int expect_end(asm_lexer *lx) { return asm_expect_eol(lx->ctx, asm_lex_next(lx)); }

/* Between operands: a comma, or an error that says how many were wanted. */
static int expect_comma(asm_lexer *lx, const npu_insn_desc *d, unsigned wanted)
{
    char q[QBUF];
    asm_token t = asm_lex_next(lx);
    if (asm_tok_is(&t, ','))
        return 0;
    if (t.kind == TOK_BAD)
        return -1;
    if (t.kind == TOK_EOL)
        return asm_error(lx->ctx, t.col, "too few operands for %s (expected %u)", d->mnemonic,
                         wanted);
    return asm_error(lx->ctx, t.col, "expected ',', found %s", asm_tok_str(&t, q, sizeof q));
}

/* `li sd, value`: any 64-bit value, -2^63 .. 2^64 - 1 (0xffffffffffffffff is
 * all ones, as -1 is). One li when the 64 bits are the sign extension of
 * their low half, else li of the low half and lih of the high half. */
static int asm_li(asm_ctx *c, asm_lexer *lx, const npu_insn_desc *d, int col)
{
    npu_insn in = { .op = NPU_OP_LI };
    asm_int value;
    int value_col;
    if (parse_reg(lx, 's', &in.rd) < 0 || expect_comma(lx, d, 2) < 0 ||
        asm_parse_int(lx, "immediate", &value, &value_col) < 0 || expect_end(lx) < 0)
        return -1;
    const int64_t v = (int64_t)(uint64_t)value;
    in.imm = (int32_t)(uint32_t)(uint64_t)v;
    if (emit(c, &in, col) < 0)
        return -1;
    if (v >= INT32_MIN && v <= INT32_MAX)
        return 0;
    in.op = NPU_OP_LIH;
    in.imm = (int32_t)(uint32_t)((uint64_t)v >> 32);
    return emit(c, &in, col);
}

int asm_insn(asm_ctx *c, asm_lexer *lx, asm_token mn)
{
    npu_opcode op = NPU_OP_INVALID;
    npu_dtype dt = NPU_F16;
    if (parse_mnemonic(c, mn, &op, &dt) < 0)
        return -1;
    const npu_insn_desc *d = npu_desc(op);
    if (op == NPU_OP_LI) {
        c->nvirt_fields = 0;
        return asm_li(c, lx, d, mn.col);
    }
    npu_insn in = { .op = (uint16_t)op, .dt = (uint8_t)dt };
    c->nvirt_fields = 0;
    const npu_format_desc *f = &npu_format_table[d->format];
    for (unsigned i = 0; i < f->num_operands; i++) {
        if (i > 0 && expect_comma(lx, d, f->num_operands) < 0)
            return -1;
        if (i == 0 && asm_lex_peek(lx).kind == TOK_EOL)
            return asm_error(c, asm_lex_peek(lx).col, "too few operands for %s (expected %u)",
                             d->mnemonic, f->num_operands);
        if (parse_operand(lx, (npu_operand_kind)f->operands[i], &in) < 0)
            return -1;
    }
    asm_token t = asm_lex_peek(lx);
    if ((d->flags & NPU_F_MASK) && asm_tok_is(&t, ',')) {
        asm_lex_next(lx);
        if (parse_reg(lx, 'p', &in.pg) < 0)
            return -1;
        in.pm = 1;
    }
    if (expect_end(lx) < 0)
        return -1;
    return emit(c, &in, mn.col);
}
