/* The assembler's lexer: splits one statement into tokens. Numbers are only
 * delimited here; asm_expr.c validates and converts them. */
#include "asm_internal.h"

#include <stdio.h>
#include <string.h>

size_t asm_code_len(const char *text, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '"')
            in_string = !in_string;
        else if (!in_string && (ch == ';' || ch == '#'))
            return i;
    }
    return len;
}

int asm_ident_start(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

int asm_ident_char(int ch)
{
    return asm_ident_start(ch) || (ch >= '0' && ch <= '9') || ch == '.' || ch == '$';
}

static int is_digit(int ch) { return ch >= '0' && ch <= '9'; }

void asm_lex_init(asm_lexer *lx, asm_ctx *c, const char *text, size_t len)
{
    memset(lx, 0, sizeof *lx);
    lx->ctx = c;
    lx->line = text;
    lx->len = asm_code_len(text, len);
}

static asm_token make(asm_lexer *lx, asm_tok_kind kind, size_t start, size_t end)
{
    asm_token t = { kind, lx->line + start, end - start, (int)(start + 1) };
    if (start + 1 > (size_t)0x7fffffff)
        t.col = 0x7fffffff;
    return t;
}

/* A number runs over alphanumerics and dots, and over a sign right after a
 * decimal exponent (1e-3) or a binary one (0x1p-3). */
static size_t scan_number(const char *s, size_t pos, size_t len)
{
    int hex = len - pos > 1 && s[pos] == '0' && (s[pos + 1] == 'x' || s[pos + 1] == 'X');
    size_t i = pos;
    while (i < len) {
        char ch = s[i];
        if (asm_ident_char((unsigned char)ch) && ch != '$') {
            i++;
            continue;
        }
        char prev = s[i - 1];
        int exp = hex ? (prev == 'p' || prev == 'P') : (prev == 'e' || prev == 'E');
        if ((ch == '+' || ch == '-') && exp) {
            i++;
            continue;
        }
        break;
    }
    return i;
}

static asm_token lex(asm_lexer *lx)
{
    const char *s = lx->line;
    size_t n = lx->len;
    while (lx->pos < n && (s[lx->pos] == ' ' || s[lx->pos] == '\t' || s[lx->pos] == '\r' ||
                           s[lx->pos] == '\f' || s[lx->pos] == '\v'))
        lx->pos++;
    size_t start = lx->pos;
    if (start >= n)
        return make(lx, TOK_EOL, n, n);
    unsigned char ch = (unsigned char)s[start];
    if (asm_ident_start(ch)) {
        size_t i = start + 1;
        while (i < n && asm_ident_char((unsigned char)s[i]))
            i++;
        lx->pos = i;
        return make(lx, TOK_IDENT, start, i);
    }
    if (ch == '.' && start + 1 < n && asm_ident_start((unsigned char)s[start + 1])) {
        size_t i = start + 1;
        while (i < n && asm_ident_char((unsigned char)s[i]))
            i++;
        lx->pos = i;
        return make(lx, TOK_DIRECTIVE, start, i);
    }
    if (is_digit(ch) || (ch == '.' && start + 1 < n && is_digit((unsigned char)s[start + 1]))) {
        lx->pos = scan_number(s, start, n);
        return make(lx, TOK_NUMBER, start, lx->pos);
    }
    if (ch == '"') {
        const char *close = memchr(s + start + 1, '"', n - start - 1);
        if (!close) {
            lx->pos = n;
            asm_error(lx->ctx, (int)start + 1, "unterminated string");
            return make(lx, TOK_BAD, start, n);
        }
        size_t end = (size_t)(close - s);
        lx->pos = end + 1;
        asm_token t = make(lx, TOK_STRING, start + 1, end);
        t.col = (int)start + 1;
        return t;
    }
    /* Comparisons for .if: == != <= >= < > (two-character forms first). */
    /* The text need not be NUL-terminated: never look past n (fuzz_exec). */
    if ((ch == '=' || ch == '!' || ch == '<' || ch == '>') && start + 1 < n && s[start + 1] == '=') {
        lx->pos = start + 2;
        return make(lx, TOK_PUNCT, start, start + 2);
    }
    if (strchr(",[]()+-*/:@<>=!%", ch) && ch != '\0') {
        lx->pos = start + 1;
        return make(lx, TOK_PUNCT, start, start + 1);
    }
    char q[32];
    lx->pos = start + 1;
    asm_error(lx->ctx, (int)start + 1, "unexpected character %s", asm_quote(s + start, 1, q, sizeof q));
    return make(lx, TOK_BAD, start, start + 1);
}

asm_token asm_lex_next(asm_lexer *lx)
{
    if (lx->has_peeked) {
        lx->has_peeked = 0;
        return lx->peeked;
    }
    return lex(lx);
}

asm_token asm_lex_peek(asm_lexer *lx)
{
    if (!lx->has_peeked) {
        lx->peeked = lex(lx);
        lx->has_peeked = 1;
    }
    return lx->peeked;
}

int asm_tok_is(const asm_token *t, char punct)
{
    return t->kind == TOK_PUNCT && t->text[0] == punct;
}

int asm_reg_parse(const asm_token *t, char *cls, unsigned *num)
{
    if (t->kind != TOK_IDENT || t->len < 2 || t->len > 4)
        return 0;
    char c0 = t->text[0];
    if (c0 != 's' && c0 != 'v' && c0 != 'p')
        return 0;
    if (t->text[1] == '0' && t->len > 2)
        return 0;
    unsigned v = 0;
    for (size_t i = 1; i < t->len; i++) {
        if (!is_digit((unsigned char)t->text[i]))
            return 0;
        v = v * 10 + (unsigned)(t->text[i] - '0');
    }
    *cls = c0;
    *num = v;
    return 1;
}

const char *asm_quote(const char *s, size_t len, char *buf, size_t size)
{
    enum { SHOWN = 48 };
    size_t o = 0;
    if (size < 16) {
        if (size)
            buf[0] = '\0';
        return buf;
    }
    buf[o++] = '\'';
    for (size_t i = 0; i < len && o + 8 < size; i++) {
        if (i == SHOWN) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch >= 0x7f)
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", ch);
        else
            buf[o++] = (char)ch;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

const char *asm_tok_str(const asm_token *t, char *buf, size_t size)
{
    if (t->kind == TOK_EOL) {
        snprintf(buf, size, "end of line");
        return buf;
    }
    if (t->kind == TOK_STRING) /* show the quotes the user wrote */
        return asm_quote(t->text - 1, t->len + 2, buf, size);
    return asm_quote(t->text, t->len, buf, size);
}

int asm_expect_eol(asm_ctx *c, asm_token t)
{
    char q[96];
    if (t.kind == TOK_EOL)
        return 0;
    if (t.kind == TOK_BAD)
        return -1;
    return asm_error(c, t.col, "unexpected trailing text %s", asm_tok_str(&t, q, sizeof q));
}
