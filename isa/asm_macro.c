/* Assembler macros: .macro/.endm recording, invocation with arguments, and
 * substitution of \\param, \\@ and \\() into each body line. */
#include "asm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void asm_macro_free(void *p)
{
    asm_macro *m = p;
    if (!m)
        return;
    free(m->name);
    for (size_t i = 0; i < m->nparams; i++)
        free(m->params[i]);
    free(m->params);
    for (size_t i = 0; i < m->nlines; i++)
        free(m->lines[i].text);
    free(m->lines);
    free(m);
}

static int is_param_char(int ch)
{
    return asm_ident_start(ch) || (ch >= '0' && ch <= '9');
}

static int valid_param(const asm_token *t)
{
    for (size_t i = 0; i < t->len; i++)
        if (!is_param_char((unsigned char)t->text[i]))
            return 0;
    return 1;
}

static int macro_params(asm_ctx *c, asm_lexer *lx, asm_macro *m)
{
    char q[96];
    asm_token t = asm_lex_next(lx);
    if (t.kind == TOK_EOL)
        return 0;
    for (;;) {
        if (t.kind != TOK_IDENT || !valid_param(&t)) {
            if (t.kind == TOK_BAD)
                return -1;
            return asm_error(c, t.col, "expected a macro parameter name, found %s",
                             asm_tok_str(&t, q, sizeof q));
        }
        for (size_t i = 0; i < m->nparams; i++)
            if (strlen(m->params[i]) == t.len && memcmp(m->params[i], t.text, t.len) == 0)
                return asm_error(c, t.col, "duplicate macro parameter %s",
                                 asm_tok_str(&t, q, sizeof q));
        if (m->nparams >= ASM_MAX_MACRO_PARAMS)
            return asm_error(c, t.col, "too many macro parameters (limit %d)",
                             ASM_MAX_MACRO_PARAMS);
        char **params = realloc(m->params, (m->nparams + 1) * sizeof *params);
        if (!params) {
            c->status = NPU_ENOMEM;
            return asm_error(c, t.col, "out of memory");
        }
        m->params = params;
        if (!(m->params[m->nparams] = asm_strndup(c, t.text, t.len)))
            return -1;
        m->nparams++;
        asm_token sep = asm_lex_next(lx);
        if (sep.kind == TOK_EOL)
            return 0;
        if (!asm_tok_is(&sep, ',')) {
            if (sep.kind == TOK_BAD)
                return -1;
            return asm_error(c, sep.col, "expected ',' between macro parameters, found %s",
                             asm_tok_str(&sep, q, sizeof q));
        }
        t = asm_lex_next(lx);
    }
}

int asm_macro_begin(asm_ctx *c, asm_lexer *lx, asm_token directive)
{
    char q[96];
    if (c->nframes > 0 && c->frames[c->nframes - 1].is_macro)
        return asm_error(c, directive.col, "a macro expansion cannot define a macro");
    asm_token t = asm_lex_next(lx);
    if (t.kind != TOK_IDENT) {
        if (t.kind == TOK_BAD)
            return -1;
        return asm_error(c, t.col, "expected a macro name, found %s", asm_tok_str(&t, q, sizeof q));
    }
    const char *dot = memchr(t.text, '.', t.len);
    if (npu_opcode_from_mnemonic(t.text, dot ? (size_t)(dot - t.text) : t.len) != NPU_OP_INVALID)
        return asm_error(c, t.col, "macro name %s is an instruction mnemonic",
                         asm_tok_str(&t, q, sizeof q));
    const asm_macro *old = asm_map_get(&c->macros, t.text, t.len);
    if (old)
        return asm_error(c, t.col, "duplicate macro %s (first defined at %s:%u)",
                         asm_tok_str(&t, q, sizeof q), c->files[old->file].name,
                         (unsigned)old->line);
    asm_macro *m = calloc(1, sizeof *m);
    if (!m) {
        c->status = NPU_ENOMEM;
        return asm_error(c, t.col, "out of memory");
    }
    m->file = c->cur.file;
    m->line = c->cur.line;
    c->recording = m; /* owned from here on: freed by cleanup on error */
    if (!(m->name = asm_strndup(c, t.text, t.len)))
        return -1;
    return macro_params(c, lx, m);
}

/* Is this raw line (leading blanks aside) the directive `word`? */
static const char *starts_with_directive(const char *s, size_t len, const char *word)
{
    size_t i = 0, n = strlen(word);
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v'))
        i++;
    if (len - i < n || memcmp(s + i, word, n) != 0)
        return NULL;
    if (i + n < len && asm_ident_char((unsigned char)s[i + n]))
        return NULL;
    return s + i;
}

int asm_macro_record(asm_ctx *c)
{
    asm_macro *m = c->recording;
    size_t code = asm_code_len(c->cur.text, c->cur.len);
    const char *at = starts_with_directive(c->cur.text, code, ".endm");
    if (at) {
        asm_lexer lx;
        asm_lex_init(&lx, c, c->cur.text, c->cur.len);
        asm_lex_next(&lx); /* .endm */
        if (asm_expect_eol(c, asm_lex_next(&lx)) < 0)
            return -1;
        if (asm_map_put(&c->macros, m->name, strlen(m->name), m) < 0) {
            c->status = NPU_ENOMEM;
            return asm_error(c, 0, "out of memory");
        }
        c->recording = NULL;
        return 0;
    }
    at = starts_with_directive(c->cur.text, code, ".macro");
    if (at)
        return asm_error(c, (int)(at - c->cur.text) + 1,
                         "nested .macro definitions are not supported (in macro '%s')", m->name);
    if (asm_grow(c, (void **)&m->lines, &m->lines_cap, m->nlines + 1, sizeof *m->lines) < 0)
        return -1;
    char *text = asm_strndup(c, c->cur.text, code);
    if (!text)
        return -1;
    m->lines[m->nlines++] = (asm_body_line){ text, code, c->cur.file, c->cur.line };
    return 0;
}

void asm_free_args(char **args, size_t n)
{
    if (!args)
        return;
    for (size_t i = 0; i < n; i++)
        free(args[i]);
    free(args);
}

/* Splits the text after a macro name at commas outside (), [] and quotes. */
static int split_args(asm_ctx *c, const char *s, size_t len, int col0, char ***out, size_t *n)
{
    size_t cap = 0, count = 0;
    char **args = NULL;
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v'))
        i++;
    if (i == len) {
        *out = NULL;
        *n = 0;
        return 0;
    }
    size_t start = 0;
    int depth = 0, in_string = 0;
    for (size_t j = 0; j <= len; j++) {
        char ch = j < len ? s[j] : ',';
        if (j < len && ch == '"')
            in_string = !in_string;
        if (in_string && j < len)
            continue;
        if (j < len && (ch == '(' || ch == '['))
            depth++;
        else if (j < len && (ch == ')' || ch == ']') && depth > 0)
            depth--;
        if (ch != ',' || (depth > 0 && j < len))
            continue;
        size_t a = start, b = j;
        while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r'))
            b--;
        if (a == b) {
            asm_free_args(args, count);
            return asm_error(c, col0 + (int)a, "empty macro argument %zu", count + 1);
        }
        if (asm_grow(c, (void **)&args, &cap, count + 1, sizeof *args) < 0 ||
            !(args[count] = asm_strndup(c, s + a, b - a))) {
            asm_free_args(args, count);
            return -1;
        }
        count++;
        start = j + 1;
    }
    *out = args;
    *n = count;
    return 0;
}

int asm_macro_call(asm_ctx *c, asm_lexer *lx, asm_macro *m, asm_token name)
{
    size_t start = (size_t)(name.text + name.len - lx->line);
    char **args = NULL;
    size_t nargs = 0;
    if (split_args(c, lx->line + start, lx->len - start, (int)start + 1, &args, &nargs) < 0)
        return -1;
    if (nargs != m->nparams) {
        asm_free_args(args, nargs);
        return asm_error(c, name.col, "macro '%s' takes %zu argument%s, got %zu", m->name,
                         m->nparams, m->nparams == 1 ? "" : "s", nargs);
    }
    size_t depth = 0;
    for (size_t i = 0; i < c->nframes; i++)
        depth += c->frames[i].is_macro != 0;
    if (depth >= ASM_MAX_MACRO_DEPTH) {
        asm_free_args(args, nargs);
        return asm_error(c, name.col,
                         "macro calls nested too deeply (limit %d) expanding '%s': recursive macro?",
                         ASM_MAX_MACRO_DEPTH, m->name);
    }
    if (asm_grow(c, (void **)&c->frames, &c->frames_cap, c->nframes + 1, sizeof *c->frames) < 0) {
        asm_free_args(args, nargs);
        return -1;
    }
    c->frames[c->nframes++] = (asm_frame){ .is_macro = 1, .macro = m, .args = args,
                                           .expansion = ++c->expansions };
    return 0;
}

static int append(asm_ctx *c, size_t *o, const char *s, size_t n)
{
    /* Arguments that hold \a twice double per nesting level: stop early. */
    if (*o + n > ASM_MAX_EXPANDED_LINE)
        return asm_error(c, 0, "macro expansion of one line is too long (over %zu bytes)",
                         (size_t)ASM_MAX_EXPANDED_LINE);
    if (asm_grow(c, (void **)&c->linebuf, &c->linebuf_cap, *o + n + 1, 1) < 0)
        return -1;
    memcpy(c->linebuf + *o, s, n);
    *o += n;
    return 0;
}

/* Replaces \param, \@ (this expansion's number) and \() (nothing, a
 * separator) in one body line, into c->linebuf. */
int asm_macro_substitute(asm_ctx *c, const asm_frame *f, const asm_body_line *bl)
{
    const asm_macro *m = f->macro;
    const char *s = bl->text;
    size_t o = 0;
    for (size_t i = 0; i < bl->len; i++) {
        if (s[i] != '\\') {
            if (append(c, &o, s + i, 1) < 0)
                return -1;
            continue;
        }
        if (i + 1 < bl->len && s[i + 1] == '@') {
            char num[32];
            int n = snprintf(num, sizeof num, "%lu", f->expansion);
            if (append(c, &o, num, (size_t)n) < 0)
                return -1;
            i++;
            continue;
        }
        if (i + 2 < bl->len && s[i + 1] == '(' && s[i + 2] == ')') {
            i += 2;
            continue;
        }
        size_t j = i + 1;
        while (j < bl->len && is_param_char((unsigned char)s[j]))
            j++;
        size_t k = 0;
        while (k < m->nparams &&
               !(strlen(m->params[k]) == j - i - 1 && memcmp(m->params[k], s + i + 1, j - i - 1) == 0))
            k++;
        if (k == m->nparams) {
            char q[96];
            return asm_error(c, (int)i + 1, "unknown macro parameter %s in macro '%s'",
                             asm_quote(s + i, j - i, q, sizeof q), m->name);
        }
        if (append(c, &o, f->args[k], strlen(f->args[k])) < 0)
            return -1;
        i = j - 1;
    }
    if (append(c, &o, "", 0) < 0)
        return -1;
    c->linebuf[o] = '\0';
    c->expanded_bytes += o;
    c->cur.text = c->linebuf;
    c->cur.len = o;
    if (c->expanded_bytes > ASM_MAX_EXPANDED_BYTES)
        return asm_error(c, 0, "macro expansion too large (over %zu bytes): recursive macro?",
                         (size_t)ASM_MAX_EXPANDED_BYTES);
    return 0;
}
