/* The Dinero IV din trace reader and its replay through an L2 (see din.h).
 * The reader is built to be fuzzed: every index is checked against the
 * buffer's length, numbers are checked for overflow before they grow, and
 * every call consumes at least one line or ends. */
#include "npusim/din.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void npu_din_reader_init(npu_din_reader *rd, const char *name, const char *buf, size_t len)
{
    rd->name = name ? name : "";
    rd->buf = buf;
    rd->len = buf ? len : 0;
    rd->pos = 0;
    rd->line = 1;
}

/* One line being parsed: [pos, end) of the buffer. */
typedef struct din_line {
    const char *buf;
    size_t start, pos, end;
    int line;
    const char *name;
    npu_diag *diag;
} din_line;

static int at_end(const din_line *l)
{
    return l->pos >= l->end || l->buf[l->pos] == '#';
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static int hex_value(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

static void skip_blanks(din_line *l)
{
    while (l->pos < l->end && is_blank(l->buf[l->pos]))
        l->pos++;
}

/* The character at pos, quoted for a message: 'g', or \xNN when unprintable. */
static const char *quote_char(const din_line *l, char out[8])
{
    unsigned char ch = l->pos < l->end ? (unsigned char)l->buf[l->pos] : 0;
    if (l->pos >= l->end)
        snprintf(out, 8, "%s", "end");
    else if (ch >= 0x21 && ch < 0x7f)
        snprintf(out, 8, "'%c'", ch);
    else
        snprintf(out, 8, "\\x%02x", ch);
    return out;
}

static int fail(din_line *l, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(din_line *l, size_t at, const char *fmt, ...)
{
    if (l->diag) {
        npu_diag *d = l->diag;
        memset(d, 0, sizeof *d);
        snprintf(d->file, sizeof d->file, "%s", l->name);
        d->line = l->line;
        size_t col = at - l->start + 1;
        d->col = col > INT_MAX ? INT_MAX : (int)col;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->message, sizeof d->message, fmt, ap);
        va_end(ap);
    }
    return NPU_ESYNTAX;
}

/* A field must end at a blank, a comment or the end of the line. */
static int field_end(din_line *l, const char *what)
{
    char q[8];
    if (at_end(l) || is_blank(l->buf[l->pos]))
        return 0;
    return fail(l, l->pos, "unexpected %s in the %s", quote_char(l, q), what);
}

static int parse_label(din_line *l, npu_din_kind *kind)
{
    char q[8];
    size_t first = l->pos;
    if (!is_digit(l->buf[l->pos]))
        return fail(l, first, "expected a label 0 .. 4, found %s", quote_char(l, q));
    unsigned value = 0;
    int too_big = 0;
    while (l->pos < l->end && is_digit(l->buf[l->pos])) {
        value = value * 10 + (unsigned)(l->buf[l->pos] - '0');
        too_big |= value > NPU_DIN_FLUSH;
        if (too_big)
            value = NPU_DIN_FLUSH + 1; /* stays small: no overflow on long labels */
        l->pos++;
    }
    if (too_big) {
        size_t n = l->pos - first;
        return fail(l, first, "unknown label %.*s%s (expected 0 .. 4)", (int)(n > 12 ? 12 : n),
                    l->buf + first, n > 12 ? "..." : "");
    }
    *kind = (npu_din_kind)value;
    return field_end(l, "label");
}

static int parse_address(din_line *l, uint64_t *addr)
{
    char q[8];
    size_t first = l->pos;
    if (l->pos + 1 < l->end && l->buf[l->pos] == '0' && (l->buf[l->pos + 1] | 0x20) == 'x')
        l->pos += 2;
    if (l->pos >= l->end || hex_value(l->buf[l->pos]) < 0)
        return fail(l, l->pos, "expected a hexadecimal address, found %s", quote_char(l, q));
    uint64_t value = 0;
    while (l->pos < l->end && hex_value(l->buf[l->pos]) >= 0) {
        if (value >> 60)
            return fail(l, first, "address does not fit in 64 bits");
        value = value << 4 | (uint64_t)hex_value(l->buf[l->pos]);
        l->pos++;
    }
    *addr = value;
    return field_end(l, "address");
}

static int parse_size(din_line *l, unsigned *size)
{
    char q[8];
    size_t first = l->pos;
    if (!is_digit(l->buf[l->pos]))
        return fail(l, first, "expected a decimal size, found %s", quote_char(l, q));
    uint64_t value = 0;
    while (l->pos < l->end && is_digit(l->buf[l->pos])) {
        value = value * 10 + (uint64_t)(l->buf[l->pos] - '0');
        if (value > NPU_DIN_MAX_SIZE)
            return fail(l, first, "size exceeds %d bytes", NPU_DIN_MAX_SIZE);
        l->pos++;
    }
    /* The field first: "0x20" is a size with an 'x' in it, not a size of 0. */
    int rc = field_end(l, "size");
    if (rc)
        return rc;
    if (value == 0)
        return fail(l, first, "size must be at least 1 byte");
    *size = (unsigned)value;
    return 0;
}

static int parse_record(din_line *l, npu_din_record *rec)
{
    int rc = parse_label(l, &rec->kind);
    if (rc)
        return rc;
    skip_blanks(l);
    if (at_end(l)) {
        if (rec->kind == NPU_DIN_FLUSH)
            return 1;
        return fail(l, l->pos, "missing address after label %d", (int)rec->kind);
    }
    if ((rc = parse_address(l, &rec->addr)) != 0)
        return rc;
    skip_blanks(l);
    if (!at_end(l) && (rc = parse_size(l, &rec->size)) != 0)
        return rc;
    skip_blanks(l);
    if (!at_end(l)) {
        char q[8];
        return fail(l, l->pos, "unexpected %s after the record", quote_char(l, q));
    }
    return 1;
}

int npu_din_next(npu_din_reader *rd, npu_din_record *rec, npu_diag *diag)
{
    while (rd->pos < rd->len) {
        const char *nl = memchr(rd->buf + rd->pos, '\n', rd->len - rd->pos);
        din_line l = { rd->buf, rd->pos, rd->pos, nl ? (size_t)(nl - rd->buf) : rd->len,
                       rd->line, rd->name, diag };
        rd->pos = nl ? l.end + 1 : rd->len;
        if (rd->line < INT_MAX)
            rd->line++;
        skip_blanks(&l);
        if (at_end(&l))
            continue; /* blank or comment */
        npu_din_record r = { NPU_DIN_READ, 0, 0, l.line };
        int rc = parse_record(&l, &r);
        if (rc == 1 && rec)
            *rec = r;
        return rc;
    }
    return 0;
}

/* ---- replay -------------------------------------------------------------- */

int npu_l2_replay_din(npu_l2 *l2, const char *name, const char *buf, size_t len,
                      const npu_din_replay_config *cfg, npu_din_replay_result *res, npu_diag *diag)
{
    npu_din_replay_config c = { 4, 0, 0, 0, 0 };
    if (cfg)
        c = *cfg;
    if (c.default_size == 0)
        c.default_size = 4;
    npu_din_replay_result scratch;
    if (!res)
        res = &scratch;
    memset(res, 0, sizeof *res);

    npu_din_reader rd;
    npu_din_reader_init(&rd, name, buf, len);
    uint64_t line_bytes = npu_l2_line_bytes(l2);
    uint64_t t = c.start_cycle, end = c.start_cycle;
    npu_din_record rec;
    int rc;
    while ((rc = npu_din_next(&rd, &rec, diag)) == 1) {
        const uint64_t bytes = rec.size ? rec.size : c.default_size;
        if (rec.kind != NPU_DIN_FLUSH && bytes - 1 > UINT64_MAX - rec.addr) {
            /* Its bytes would wrap to address 0: an error, not a record cut short. */
            if (diag) {
                memset(diag, 0, sizeof *diag);
                snprintf(diag->file, sizeof diag->file, "%s", rd.name);
                diag->line = rec.line;
                snprintf(diag->message, sizeof diag->message,
                         "%" PRIu64 " bytes at 0x%" PRIx64 " run past the top of the 64-bit address space",
                         bytes, rec.addr);
            }
            rc = NPU_ESYNTAX;
            break;
        }
        res->records++;
        res->by_kind[rec.kind]++;
        if (rec.kind == NPU_DIN_FLUSH) {
            uint64_t done = npu_l2_flush(l2, t);
            end = done > end ? done : end;
            t = c.issue_gap ? t + c.issue_gap : done;
            continue;
        }
        int is_write = rec.kind == NPU_DIN_WRITE;
        uint64_t addr = rec.addr, left = bytes;
        while (left > 0) {
            uint64_t room = line_bytes - (addr & (line_bytes - 1));
            unsigned piece = (unsigned)(left < room ? left : room);
            npu_l2_result r;
            npu_l2_set_horizon(l2, t); /* one access at a time, in time order */
            npu_l2_access(l2, t, addr, piece, is_write, c.core, c.tensor, &r);
            res->accesses++;
            end = r.line_ready > end ? r.line_ready : end;
            t = c.issue_gap ? t + c.issue_gap : r.line_ready;
            left -= piece;
            addr += piece; /* wraps to 0 only after a record's last byte at the top */
        }
    }
    res->end_cycle = end;
    return rc < 0 ? rc : NPU_OK;
}
