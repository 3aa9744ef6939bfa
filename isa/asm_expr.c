/* Constant expressions of the assembler: integer and float literals, .equ
 * names, + - * / and parentheses. Integers run from -2^63 to 2^64 - 1
 * (asm_int) and leaving that range is an error; as soon as one side is a
 * float the operation is done in double. */
#include "asm_internal.h"

#include <errno.h>
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *asm_int_str(asm_int v, char *buf, size_t size)
{
    char digits[48];
    size_t n = 0;
    unsigned __int128 m = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    do {
        digits[n++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    size_t o = 0;
    if (v < 0 && o + 1 < size)
        buf[o++] = '-';
    while (n && o + 1 < size)
        buf[o++] = digits[--n];
    if (size)
        buf[o] = '\0';
    return buf;
}

double asm_int_to_double(asm_int v)
{
    return v < 0 ? (double)(int64_t)v : (double)(uint64_t)v;
}

static int digit_value(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return 99;
}

/* 0 with the value, -1 for a bad digit, -2 for a value past 2^64 - 1. */
static int parse_uint(const char *s, size_t len, unsigned base, uint64_t *out)
{
    uint64_t v = 0;
    int big = 0;
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        int d = digit_value(s[i]);
        if (d >= (int)base)
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            big = 1; /* keep reading: a bad digit further on is the error to report */
        else
            v = v * base + (uint64_t)d;
    }
    *out = v;
    return big ? -2 : 0;
}

static int parse_number(asm_lexer *lx, const asm_token *t, asm_value *out)
{
    char q[96];
    const char *s = t->text;
    size_t n = t->len;
    int hex = n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    int bin = n > 1 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B');
    int is_float = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '.' || (hex ? (ch == 'p' || ch == 'P') : (!bin && (ch == 'e' || ch == 'E'))))
            is_float = 1;
    }
    if (!is_float) {
        uint64_t v;
        int rc = hex || bin ? parse_uint(s + 2, n - 2, hex ? 16 : 2, &v) : parse_uint(s, n, 10, &v);
        if (rc == -2)
            return asm_error(lx->ctx, t->col,
                             "integer literal %s out of range (at most 18446744073709551615, 2^64 - 1)",
                             asm_tok_str(t, q, sizeof q));
        if (rc < 0)
            return asm_error(lx->ctx, t->col, "malformed number %s", asm_tok_str(t, q, sizeof q));
        out->is_float = 0;
        out->literal = 0;
        out->i = (asm_int)v;
        return 0;
    }
    if (bin)
        return asm_error(lx->ctx, t->col, "malformed number %s", asm_tok_str(t, q, sizeof q));
    /* strtod is correctly rounded (glibc) and reads hex floats exactly; the
     * library assumes the "C" locale's decimal point. A long literal (1e-3
     * with a thousand digits) is read whole. */
    char small[ASM_MAX_NUMBER_LEN + 1];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) {
        lx->ctx->status = NPU_ENOMEM;
        return asm_error(lx->ctx, t->col, "out of memory");
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    int malformed = end != buf + n || (hex && !memchr(buf, 'p', n) && !memchr(buf, 'P', n));
    /* Rounded to odd: toward zero, then the last bit set where that was
     * inexact (glibc's strtod follows the rounding mode and raises
     * FE_INEXACT). */
    double odd = d;
    if (!malformed) {
        fenv_t env;
        feholdexcept(&env);
        fesetround(FE_TOWARDZERO);
        odd = strtod(buf, NULL);
        const int inexact = fetestexcept(FE_INEXACT) != 0;
        fesetenv(&env);
        if (inexact) {
            uint64_t b;
            memcpy(&b, &odd, sizeof b);
            b |= 1;
            memcpy(&odd, &b, sizeof b);
        }
    }
    if (buf != small)
        free(buf);
    if (malformed)
        return asm_error(lx->ctx, t->col, "malformed number %s", asm_tok_str(t, q, sizeof q));
    if (isinf(d))
        return asm_error(lx->ctx, t->col, "float literal %s is too large",
                         asm_tok_str(t, q, sizeof q));
    out->is_float = 1;
    out->d = d;
    out->literal = 1;
    out->odd = odd;
    return 0;
}

static double as_double(const asm_value *v) { return v->is_float ? v->d : asm_int_to_double(v->i); }

static int parse_sum(asm_lexer *lx, asm_value *out, int depth);
static int parse_compare(asm_lexer *lx, asm_value *out, int depth);

static int parse_primary(asm_lexer *lx, asm_value *out, int depth)
{
    char q[96];
    asm_token t = asm_lex_next(lx);
    if (depth > ASM_MAX_EXPR_DEPTH)
        return asm_error(lx->ctx, t.col, "expression nested too deeply (limit %d)",
                         ASM_MAX_EXPR_DEPTH);
    if (t.kind == TOK_NUMBER)
        return parse_number(lx, &t, out);
    if (asm_tok_is(&t, '(')) {
        if (parse_compare(lx, out, depth + 1) < 0)
            return -1;
        asm_token close = asm_lex_next(lx);
        if (!asm_tok_is(&close, ')'))
            return asm_error(lx->ctx, close.col, "expected ')', found %s",
                             asm_tok_str(&close, q, sizeof q));
        return 0;
    }
    if (t.kind == TOK_IDENT) {
        const asm_const *k = asm_map_get(&lx->ctx->consts, t.text, t.len);
        if (k) {
            *out = k->value;
            return 0;
        }
        if (t.len == 3 && (memcmp(t.text, "inf", 3) == 0 || memcmp(t.text, "nan", 3) == 0)) {
            out->is_float = 1;
            out->literal = 0;
            out->d = t.text[0] == 'i' ? INFINITY : NAN;
            return 0;
        }
        char cls;
        unsigned num;
        if (asm_reg_parse(&t, &cls, &num))
            return asm_error(lx->ctx, t.col, "expected a constant, found register %s",
                             asm_tok_str(&t, q, sizeof q));
        return asm_error(lx->ctx, t.col, "undefined constant %s", asm_tok_str(&t, q, sizeof q));
    }
    if (t.kind == TOK_BAD)
        return -1;
    return asm_error(lx->ctx, t.col, "expected a number, found %s", asm_tok_str(&t, q, sizeof q));
}

static int parse_unary(asm_lexer *lx, asm_value *out, int depth)
{
    asm_token t = asm_lex_peek(lx);
    if (asm_tok_is(&t, '-') || asm_tok_is(&t, '+')) {
        asm_lex_next(lx);
        if (depth > ASM_MAX_EXPR_DEPTH)
            return asm_error(lx->ctx, t.col, "expression nested too deeply (limit %d)",
                             ASM_MAX_EXPR_DEPTH);
        if (parse_unary(lx, out, depth + 1) < 0)
            return -1;
        if (t.text[0] == '-') {
            if (out->is_float) {
                out->d = -out->d;
                out->odd = -out->odd;
            } else if (out->i > -ASM_INT_MIN) { /* -2^63 is the least integer */
                char num[48];
                return asm_error(lx->ctx, t.col,
                                 "integer overflow in expression: -%s is outside -2^63 .. 2^64 - 1",
                                 asm_int_str(out->i, num, sizeof num));
            } else
                out->i = -out->i;
        }
        return 0;
    }
    return parse_primary(lx, out, depth);
}

static int arith(asm_lexer *lx, const asm_token *op, asm_value *a, const asm_value *b)
{
    char o = op->text[0];
    if (a->is_float || b->is_float) {
        double x = as_double(a), y = as_double(b);
        if (o == '/' && y == 0.0)
            return asm_error(lx->ctx, op->col, "division by zero");
        a->d = o == '+' ? x + y : o == '-' ? x - y : o == '*' ? x * y : x / y;
        a->is_float = 1;
        a->literal = 0;
        return 0;
    }
    asm_int x = a->i, y = b->i, r;
    int overflow;
    switch (o) {
    case '+': overflow = __builtin_add_overflow(x, y, &r); break;
    case '-': overflow = __builtin_sub_overflow(x, y, &r); break;
    case '*': overflow = __builtin_mul_overflow(x, y, &r); break;
    default:
        if (y == 0)
            return asm_error(lx->ctx, op->col, "division by zero");
        overflow = 0;
        r = x / y;
        break;
    }
    if (overflow || r < ASM_INT_MIN || r > ASM_INT_MAX) {
        char xs[48], ys[48];
        return asm_error(lx->ctx, op->col, "integer overflow in expression: %s %c %s is outside -2^63 .. 2^64 - 1",
                         asm_int_str(x, xs, sizeof xs), o, asm_int_str(y, ys, sizeof ys));
    }
    a->i = r;
    return 0;
}

static int parse_product(asm_lexer *lx, asm_value *out, int depth)
{
    if (parse_unary(lx, out, depth) < 0)
        return -1;
    for (;;) {
        asm_token op = asm_lex_peek(lx);
        if (!asm_tok_is(&op, '*') && !asm_tok_is(&op, '/'))
            return 0;
        asm_lex_next(lx);
        asm_value rhs;
        if (parse_unary(lx, &rhs, depth) < 0 || arith(lx, &op, out, &rhs) < 0)
            return -1;
    }
}

static int parse_sum(asm_lexer *lx, asm_value *out, int depth)
{
    if (parse_product(lx, out, depth) < 0)
        return -1;
    for (;;) {
        asm_token op = asm_lex_peek(lx);
        if (!asm_tok_is(&op, '+') && !asm_tok_is(&op, '-'))
            return 0;
        asm_lex_next(lx);
        asm_value rhs;
        if (parse_product(lx, &rhs, depth) < 0 || arith(lx, &op, out, &rhs) < 0)
            return -1;
    }
}

/* A comparison yields the integer 1 or 0, so `.if DT_BYTES == 2` reads
 * naturally. At most one comparison per expression: no chains. */
static int parse_compare(asm_lexer *lx, asm_value *out, int depth)
{
    if (parse_sum(lx, out, depth) < 0)
        return -1;
    asm_token op = asm_lex_peek(lx);
    if (op.kind != TOK_PUNCT || !strchr("=!<>", op.text[0]))
        return 0;
    asm_lex_next(lx);
    if (op.len == 1 && (op.text[0] == '=' || op.text[0] == '!'))
        return asm_error(lx->ctx, op.col, "expected '%c=', found '%c'", op.text[0], op.text[0]);
    asm_value rhs;
    if (parse_sum(lx, &rhs, depth) < 0)
        return -1;
    double x = as_double(out), y = as_double(&rhs);
    int both_int = !out->is_float && !rhs.is_float;
    int lt = both_int ? out->i < rhs.i : x < y;
    int gt = both_int ? out->i > rhs.i : x > y;
    int eq = both_int ? out->i == rhs.i : x == y;
    int r;
    if (op.len == 2)
        r = op.text[0] == '=' ? eq : op.text[0] == '!' ? !eq : op.text[0] == '<' ? lt || eq : gt || eq;
    else
        r = op.text[0] == '<' ? lt : gt;
    out->is_float = 0;
    out->literal = 0;
    out->i = r;
    return 0;
}

int asm_parse_expr(asm_lexer *lx, asm_value *out)
{
    return parse_compare(lx, out, 0);
}

int asm_parse_int(asm_lexer *lx, const char *what, asm_int *out, int *col)
{
    asm_token first = asm_lex_peek(lx);
    asm_value v;
    *col = first.col;
    if (asm_parse_expr(lx, &v) < 0)
        return -1;
    if (v.is_float)
        return asm_error(lx->ctx, first.col, "expected an integer %s, found the float %.9g", what,
                         v.d);
    *out = v.i;
    return 0;
}
