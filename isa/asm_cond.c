/* Names the host defines before assembly (`npusim asm -D DT=f32`) and
 * conditional assembly over them: .if expr, .ifdef/.ifndef NAME, .else,
 * .endif. One kernel source then serves every dtype and variant. */
#include "asm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int asm_reserved_name(const asm_token *t)
{
    char cls;
    unsigned num;
    static const char *const words[] = { "inf", "nan", "bits" };
    if (asm_reg_parse(t, &cls, &num))
        return 1;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == t->len && memcmp(words[i], t->text, t->len) == 0)
            return 1;
    return 0;
}

int asm_dtype_alias(const asm_ctx *c, const char *name, size_t len)
{
    void *v = asm_map_get(&c->dtypes, name, len);
    return v ? (int)((uintptr_t)v - 1) : -1;
}

static int lane_type(const char *s)
{
    for (int dt = 0; dt < 4; dt++)
        if (strcmp(s, npu_dtype_name((npu_dtype)dt)) == 0)
            return dt;
    return -1;
}

static int valid_define_name(const char *name)
{
    if (!asm_ident_start((unsigned char)name[0]))
        return 0;
    for (const char *p = name + 1; *p; p++)
        if (!asm_ident_start((unsigned char)*p) && !(*p >= '0' && *p <= '9'))
            return 0;
    return 1;
}

/* Rewrites the diag of a failed definition so it names the definition. */
static int define_error(asm_ctx *c, const npu_asm_define *d, const char *fmt, const char *detail)
{
    char message[120];
    snprintf(message, sizeof message, fmt, detail);
    c->failed = 1;
    memset(c->diag, 0, sizeof *c->diag);
    snprintf(c->diag->file, sizeof c->diag->file, "<defines>");
    snprintf(c->diag->message, sizeof c->diag->message, "definition %.60s=%.60s: %s", d->name,
             d->value ? d->value : "", message);
    return -1;
}

static int apply_define(asm_ctx *c, const npu_asm_define *d)
{
    const char *value = d->value ? d->value : "";
    size_t nlen = strlen(d->name);
    asm_token name = { TOK_IDENT, d->name, nlen, 1 };
    if (!valid_define_name(d->name) || asm_reserved_name(&name))
        return define_error(c, d, "%s", "not a valid name (letters, digits and _, not a register)");
    if (asm_map_get(&c->consts, d->name, nlen) || asm_map_get(&c->dtypes, d->name, nlen))
        return define_error(c, d, "%s", "defined twice");
    int dt = lane_type(value);
    if (dt >= 0) {
        if (asm_map_put(&c->dtypes, d->name, nlen, (void *)(uintptr_t)(dt + 1)) < 0)
            return define_error(c, d, "%s", "out of memory");
        return 0;
    }
    asm_value v = { 0, 1, 0.0, 0, 0.0 }; /* a bare name is 1, as with cc -D */
    if (value[0]) {
        c->cur = (asm_line){ value, strlen(value), 0, 0 };
        asm_lexer lx;
        asm_lex_init(&lx, c, value, strlen(value));
        if (asm_parse_expr(&lx, &v) < 0 || asm_lex_next(&lx).kind != TOK_EOL)
            return define_error(c, d, "%s",
                                "neither a number nor a lane type (f16, f32, i16, i32)");
    }
    asm_const *k = malloc(sizeof *k);
    if (!k || asm_map_put(&c->consts, d->name, nlen, k) < 0) {
        free(k);
        return define_error(c, d, "%s", "out of memory");
    }
    *k = (asm_const){ v, 0, 0 };
    return 0;
}

int asm_apply_defines(asm_ctx *c)
{
    /* VLENB and UB_BYTES: the machine's vector and unified-buffer bytes (the
     * smallest legal ones without a machine). They come from the machine
     * only: a host definition would build code for a machine the run does
     * not have, so it is refused, as a .equ of them is. */
    const npu_asm_machine *m = c->opts ? c->opts->machine : NULL;
    const struct { const char *name, *key; unsigned value; } facts[] = {
        { "VLENB", "core.vlen / 8", m && m->vlen_bytes ? m->vlen_bytes : 32u },
        { "UB_BYTES", "core.ub_bytes", m && m->ub_bytes ? m->ub_bytes : 32768u },
    };
    for (size_t i = 0; c->opts && c->opts->defines && i < c->opts->num_defines; i++) {
        const npu_asm_define *d = &c->opts->defines[i];
        if (!d->name)
            continue;
        for (size_t k = 0; k < sizeof facts / sizeof facts[0]; k++)
            if (strcmp(d->name, facts[k].name) == 0)
                return define_error(c, d, "predefined from the machine's config (%s); change the config instead",
                                    facts[k].key);
        if (apply_define(c, d) < 0)
            return -1;
    }
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        char value[16];
        snprintf(value, sizeof value, "%u", facts[i].value);
        npu_asm_define d = { facts[i].name, value };
        if (apply_define(c, &d) < 0)
            return -1;
    }
    return 0;
}

/* ---- conditional assembly ------------------------------------------------ */

static const char *const cond_words[] = { ".if", ".ifdef", ".ifndef", ".else", ".endif" };
enum { COND_IF, COND_IFDEF, COND_IFNDEF, COND_ELSE, COND_ENDIF, NUM_COND };

static int cond_word(const char *text, size_t len)
{
    size_t code = asm_code_len(text, len), i = 0;
    while (i < code && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\f' ||
                        text[i] == '\v'))
        i++;
    size_t j = i;
    while (j < code && (text[j] == '.' || asm_ident_char((unsigned char)text[j])))
        j++;
    for (int w = 0; w < NUM_COND; w++)
        if (strlen(cond_words[w]) == j - i && memcmp(text + i, cond_words[w], j - i) == 0)
            return w;
    return -1;
}

int asm_is_conditional(const asm_ctx *c)
{
    return cond_word(c->cur.text, c->cur.len) >= 0;
}

int asm_skipping(const asm_ctx *c)
{
    return c->nconds > 0 && !c->conds[c->nconds - 1].active;
}

static int is_defined(const asm_ctx *c, const asm_token *t)
{
    return asm_map_get(&c->consts, t->text, t->len) || asm_map_get(&c->dtypes, t->text, t->len) ||
           asm_map_get(&c->macros, t->text, t->len);
}

static int expect_eol(asm_ctx *c, asm_lexer *lx) { return asm_expect_eol(c, asm_lex_next(lx)); }

/* The condition of .if/.ifdef/.ifndef, read only when the block's parent is
 * being assembled (a skipped block may name things that do not exist). */
static int evaluate(asm_ctx *c, asm_lexer *lx, int word, int *truth)
{
    char q[96];
    if (word == COND_IF) {
        asm_value v;
        if (asm_parse_expr(lx, &v) < 0)
            return -1;
        *truth = v.is_float ? v.d != 0.0 : v.i != 0;
        return expect_eol(c, lx);
    }
    asm_token name = asm_lex_next(lx);
    if (name.kind != TOK_IDENT)
        return name.kind == TOK_BAD ? -1
                                    : asm_error(c, name.col, "expected a name after %s, found %s",
                                                cond_words[word], asm_tok_str(&name, q, sizeof q));
    *truth = is_defined(c, &name) == (word == COND_IFDEF);
    return expect_eol(c, lx);
}

int asm_conditional(asm_ctx *c)
{
    asm_lexer lx;
    asm_lex_init(&lx, c, c->cur.text, c->cur.len);
    asm_token dir = asm_lex_next(&lx);
    int word = cond_word(c->cur.text, c->cur.len);
    asm_cond *top = c->nconds ? &c->conds[c->nconds - 1] : NULL;
    if (word == COND_ELSE || word == COND_ENDIF) {
        if (!top || top->depth != c->nframes)
            return asm_error(c, dir.col, "%s without .if", cond_words[word]);
        if (top->parent_active && expect_eol(c, &lx) < 0)
            return -1;
        if (word == COND_ENDIF) {
            c->nconds--;
            return 0;
        }
        if (top->in_else)
            return asm_error(c, dir.col, ".else after .else (the %s is at line %u)", top->kind,
                             (unsigned)top->line);
        top->in_else = 1;
        top->active = top->parent_active && !top->taken;
        return 0;
    }
    int parent_active = !asm_skipping(c), truth = 0;
    if (parent_active && evaluate(c, &lx, word, &truth) < 0)
        return -1;
    if (asm_grow(c, (void **)&c->conds, &c->conds_cap, c->nconds + 1, sizeof *c->conds) < 0)
        return -1;
    asm_cond *k = &c->conds[c->nconds++];
    memset(k, 0, sizeof *k);
    k->file = c->cur.file;
    k->line = c->cur.line;
    k->col = dir.col;
    k->depth = c->nframes;
    k->parent_active = (unsigned char)parent_active;
    k->taken = (unsigned char)truth;
    k->active = (unsigned char)(parent_active && truth);
    snprintf(k->kind, sizeof k->kind, "%s", cond_words[word]);
    return 0;
}

int asm_conds_closed(asm_ctx *c)
{
    if (c->nconds == 0 || c->conds[c->nconds - 1].depth != c->nframes)
        return 0;
    const asm_cond *k = &c->conds[c->nconds - 1];
    return asm_error_at(c, k->file, k->line, k->col, "unterminated %s (no .endif)", k->kind);
}
