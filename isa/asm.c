/* The npusim assembler's driver: statements, labels, .equ, directives, the
 * label fix-ups, and the public npu_assemble() entry points. */
#include "asm_internal.h"
#include "c_locale.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and small helpers ------------------------------------------ */

static void set_diag_file(asm_ctx *c, uint32_t file)
{
    const char *name = file < c->nfiles && c->files[file].name ? c->files[file].name : "";
    snprintf(c->diag->file, sizeof c->diag->file, "%s", name);
}

static int vreport(asm_ctx *c, uint32_t file, uint32_t line, int col, const char *fmt, va_list ap)
{
    if (c->failed)
        return -1;
    c->failed = 1;
    set_diag_file(c, file);
    c->diag->line = (int)line;
    c->diag->col = line ? col : 0;
    vsnprintf(c->diag->message, sizeof c->diag->message, fmt, ap);
    return -1;
}

int asm_error(asm_ctx *c, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, c->cur.file, c->cur.line, col, fmt, ap);
    va_end(ap);
    return -1;
}

int asm_error_at(asm_ctx *c, uint32_t file, uint32_t line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, file, line, col, fmt, ap);
    va_end(ap);
    return -1;
}

int asm_grow(asm_ctx *c, void **ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need && n <= SIZE_MAX / 2)
        n *= 2;
    void *p = n >= need && n <= SIZE_MAX / elem ? realloc(*ptr, n * elem) : NULL;
    if (!p) {
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    *ptr = p;
    *cap = n;
    return 0;
}

char *asm_strndup(asm_ctx *c, const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (!p) {
        c->status = NPU_ENOMEM;
        asm_error(c, 0, "out of memory");
        return NULL;
    }
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

/* ---- hash map -------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

void *asm_map_get(const asm_map *m, const char *key, size_t len)
{
    if (!m->cap)
        return NULL;
    for (size_t i = hash_bytes(key, len) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const asm_map_slot *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->len == len && memcmp(s->key, key, len) == 0)
            return s->val;
    }
}

static void map_insert(asm_map_slot *slots, size_t cap, asm_map_slot slot)
{
    size_t i = hash_bytes(slot.key, slot.len) & (cap - 1);
    while (slots[i].key)
        i = (i + 1) & (cap - 1);
    slots[i] = slot;
}

int asm_map_put(asm_map *m, const char *key, size_t len, void *val)
{
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        asm_map_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return NPU_ENOMEM;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].key)
                map_insert(slots, cap, m->slots[i]);
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    char *k = malloc(len + 1);
    if (!k)
        return NPU_ENOMEM;
    memcpy(k, key, len);
    k[len] = '\0';
    map_insert(m->slots, m->cap, (asm_map_slot){ k, len, val });
    m->count++;
    return NPU_OK;
}

void asm_map_free(asm_map *m, void (*free_val)(void *))
{
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key) {
            free(m->slots[i].key);
            free_val(m->slots[i].val);
        }
    }
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* ---- labels and constants ------------------------------------------------- */

/* "at line 3" in the same file, "at other.s:3" elsewhere. */
static const char *where(const asm_ctx *c, uint32_t file, uint32_t line, char *buf, size_t size)
{
    if (line == 0)
        snprintf(buf, size, "as a predefined name");
    else if (file == c->cur.file)
        snprintf(buf, size, "at line %u", (unsigned)line);
    else
        snprintf(buf, size, "at %s:%u", c->files[file].name, (unsigned)line);
    return buf;
}

static int define_label(asm_ctx *c, const asm_token *t)
{
    char q[96], at[300];
    char cls;
    unsigned num;
    if (asm_reg_parse(t, &cls, &num))
        return asm_error(c, t->col, "%s is a register name, not a label",
                         asm_tok_str(t, q, sizeof q));
    const asm_label *old = asm_map_get(&c->labels, t->text, t->len);
    if (old)
        return asm_error(c, t->col, "duplicate label %s (first defined %s)",
                         asm_tok_str(t, q, sizeof q), where(c, old->file, old->line, at, sizeof at));
    asm_label *l = malloc(sizeof *l);
    if (!l || asm_map_put(&c->labels, t->text, t->len, l) < 0) {
        free(l);
        c->status = NPU_ENOMEM;
        return asm_error(c, t->col, "out of memory");
    }
    *l = (asm_label){ c->prog->count, c->cur.file, c->cur.line };
    return 0;
}

/* .equ NAME, expr */
static int directive_equ(asm_ctx *c, asm_lexer *lx)
{
    char q[96], at[300];
    asm_token name = asm_lex_next(lx);
    if (name.kind != TOK_IDENT) {
        if (name.kind == TOK_BAD)
            return -1;
        return asm_error(c, name.col, "expected a constant name, found %s",
                         asm_tok_str(&name, q, sizeof q));
    }
    if (asm_reserved_name(&name))
        return asm_error(c, name.col, "%s is reserved and cannot name a constant",
                         asm_tok_str(&name, q, sizeof q));
    const asm_const *old = asm_map_get(&c->consts, name.text, name.len);
    if (old)
        return asm_error(c, name.col, "duplicate constant %s (first defined %s)",
                         asm_tok_str(&name, q, sizeof q),
                         where(c, old->file, old->line, at, sizeof at));
    asm_token comma = asm_lex_next(lx);
    if (!asm_tok_is(&comma, ','))
        return comma.kind == TOK_BAD ? -1
                                     : asm_error(c, comma.col, "expected ',', found %s",
                                                 asm_tok_str(&comma, q, sizeof q));
    asm_value v;
    if (asm_parse_expr(lx, &v) < 0)
        return -1;
    if (asm_expect_eol(c, asm_lex_next(lx)) < 0)
        return -1;
    asm_const *k = malloc(sizeof *k);
    if (!k || asm_map_put(&c->consts, name.text, name.len, k) < 0) {
        free(k);
        c->status = NPU_ENOMEM;
        return asm_error(c, name.col, "out of memory");
    }
    *k = (asm_const){ v, c->cur.file, c->cur.line };
    return 0;
}

/* .word expr: one raw 64-bit instruction word, as is. A word that does not
 * decode is kept as NPU_OP_INVALID, as the binary loader keeps it, so tests
 * and kernels can make the core trap "illegal instruction" on purpose. */
static int directive_word(asm_ctx *c, asm_lexer *lx, asm_token t)
{
    asm_value v;
    if (asm_parse_expr(lx, &v) < 0)
        return -1;
    if (v.is_float)
        return asm_error(c, t.col, ".word takes an integer, not a float");
    if (asm_expect_eol(c, asm_lex_next(lx)) < 0)
        return -1;
    uint64_t word = (uint64_t)v.i;
    npu_insn insn;
    if (npu_decode(word, &insn) != 0) {
        memset(&insn, 0, sizeof insn);
        insn.op = NPU_OP_INVALID;
    }
    npu_srcloc loc = { c->cur.file, c->cur.line };
    if (npu_program_append(c->prog, &insn, loc) < 0) {
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    c->prog->words[c->prog->count - 1] = word; /* the bits as written, unused ones too */
    return 0;
}

/* .error "message": stops assembly, e.g. when a needed name is not defined. */
static int directive_error(asm_ctx *c, asm_lexer *lx, asm_token t)
{
    asm_token msg = asm_lex_next(lx);
    if (msg.kind == TOK_STRING && msg.len > 0)
        return asm_error(c, t.col, "%.*s", (int)(msg.len > 200 ? 200 : msg.len), msg.text);
    return msg.kind == TOK_BAD ? -1 : asm_error(c, t.col, ".error directive");
}

static int directive(asm_ctx *c, asm_lexer *lx, asm_token t)
{
    char q[96];
#define IS(word) (t.len == sizeof(word) - 1 && memcmp(t.text, word, t.len) == 0)
    if (IS(".equ"))
        return directive_equ(c, lx);
    if (IS(".macro"))
        return asm_macro_begin(c, lx, t);
    if (IS(".include"))
        return asm_include(c, lx, t);
    if (IS(".endm"))
        return asm_error(c, t.col, ".endm without .macro");
    if (IS(".pipeline"))
        return asm_pipe_begin(c, lx, t);
    if (IS(".endpipeline"))
        return asm_pipe_end(c, lx, t);
    if (IS(".pass"))
        return asm_pipe_pass(c, lx, t);
    if (c->pipe && !IS(".equ"))
        return asm_error(c, t.col, "%s is not allowed inside a .pipeline block",
                         asm_tok_str(&t, q, sizeof q));
    if (IS(".error"))
        return directive_error(c, lx, t);
    if (IS(".word"))
        return directive_word(c, lx, t);
    if (IS(".if") || IS(".ifdef") || IS(".ifndef") || IS(".else") || IS(".endif"))
        return asm_error(c, t.col, "%s must start its line", asm_quote(t.text, t.len, q, sizeof q));
#undef IS
    return asm_error(c, t.col, "unknown directive %s", asm_tok_str(&t, q, sizeof q));
}

/* label: label: mnemonic operands  |  macro args  |  .directive args */
static int statement(asm_ctx *c)
{
    char q[96];
    asm_lexer lx;
    asm_lex_init(&lx, c, c->cur.text, c->cur.len);
    for (;;) {
        asm_token t = asm_lex_next(&lx);
        if (t.kind == TOK_EOL)
            return 0;
        if (t.kind == TOK_DIRECTIVE)
            return directive(c, &lx, t);
        if (t.kind != TOK_IDENT) {
            if (t.kind == TOK_BAD)
                return -1;
            return asm_error(c, t.col, "expected an instruction, found %s",
                             asm_tok_str(&t, q, sizeof q));
        }
        asm_token next = asm_lex_peek(&lx);
        if (asm_tok_is(&next, ':')) {
            asm_lex_next(&lx);
            if (c->pipe)
                return asm_error(c, t.col, "labels are not allowed inside a .pipeline block "
                                           "(the assembler lays the loop out itself)");
            if (define_label(c, &t) < 0)
                return -1;
            continue;
        }
        asm_macro *m = asm_map_get(&c->macros, t.text, t.len);
        if (m)
            return asm_macro_call(c, &lx, m, t);
        return asm_insn(c, &lx, t);
    }
}

/* Every branch target names an instruction of the program: the core would
 * trap at the branch otherwise ("branch to instruction N, outside the
 * program"), so the assembler says so first. */
static int resolve_fixups(asm_ctx *c)
{
    npu_program *p = c->prog;
    for (size_t i = 0; i < c->nfixups; i++) {
        const asm_fixup *f = &c->fixups[i];
        char q[96], num[48];
        asm_int target = f->target;
        if (f->label) {
            const asm_label *l = asm_map_get(&c->labels, f->label, strlen(f->label));
            if (!l)
                return asm_error_at(c, f->file, f->line, f->col, "undefined label %s",
                                    asm_quote(f->label, strlen(f->label), q, sizeof q));
            target = (asm_int)l->index;
        }
        if (target < 0 || target >= (asm_int)p->count) {
            if (f->label)
                return asm_error_at(c, f->file, f->line, f->col,
                                    "branch target %s is instruction %zu, outside the program (0..%zu)",
                                    asm_quote(f->label, strlen(f->label), q, sizeof q),
                                    (size_t)target, p->count - 1);
            return asm_error_at(c, f->file, f->line, f->col,
                                "branch target @%s is outside the program (0..%zu)",
                                asm_int_str(target, num, sizeof num), p->count - 1);
        }
        /* A program holds fewer than 2^31 instructions (ASM_MAX_EXPANDED_LINES). */
        p->insns[f->index].imm = (int32_t)(target - (asm_int)f->index);
        p->words[f->index] = npu_encode(&p->insns[f->index]);
    }
    return 0;
}

/* Hands the file names over to the program. */
static int finish_files(asm_ctx *c)
{
    npu_program *p = c->prog;
    p->files = calloc(c->nfiles ? c->nfiles : 1, sizeof *p->files);
    if (!p->files) {
        c->status = NPU_ENOMEM;
        return asm_error_at(c, 0, 0, 0, "out of memory");
    }
    for (size_t i = 0; i < c->nfiles; i++) {
        p->files[i] = c->files[i].name;
        c->files[i].name = NULL;
    }
    p->nfiles = c->nfiles;
    return 0;
}

static void free_const(void *p) { free(p); }
static void free_nothing(void *p) { (void)p; }

static void cleanup(asm_ctx *c)
{
    for (size_t i = 0; i < c->nframes; i++) {
        asm_frame *f = &c->frames[i];
        if (f->is_macro && f->args) {
            for (size_t k = 0; k < f->macro->nparams; k++)
                free(f->args[k]);
            free(f->args);
        }
    }
    free(c->frames);
    for (size_t i = 0; i < c->nfiles; i++) {
        free(c->files[i].name);
        free(c->files[i].key);
        if (c->files[i].owns_text)
            free(c->files[i].text);
    }
    free(c->files);
    asm_map_free(&c->labels, free_const);
    asm_map_free(&c->consts, free_const);
    asm_map_free(&c->macros, asm_macro_free);
    asm_map_free(&c->dtypes, free_nothing);
    free(c->conds);
    asm_macro_free(c->recording);
    for (size_t i = 0; i < c->nfixups; i++)
        free(c->fixups[i].label);
    free(c->fixups);
    free(c->linebuf);
    asm_pipe_free(c->pipe);
}

static int is_on_disk(const npu_asm_options *opts) { return !(opts && opts->reader); }

/* Takes ownership of `text` when owns_text. */
static int assemble(const char *name, const char *text, size_t len, int owns_text,
                    const npu_asm_options *opts, npu_program *out, npu_diag *diag)
{
    npu_diag scratch;
    asm_ctx c;
    memset(&c, 0, sizeof c);
    c.opts = opts;
    c.diag = diag ? diag : &scratch;
    memset(c.diag, 0, sizeof *c.diag);
    c.status = NPU_ESYNTAX;
    c.prog = out;
    npu_program_init(out);
    if (!name)
        name = "<input>";
    if (!text) {
        text = "";
        len = 0;
    }
    char *key = asm_canonical_path(name, is_on_disk(opts));
    uint32_t top;
    if (!key) {
        c.status = NPU_ENOMEM;
        asm_error_at(&c, 0, 0, 0, "out of memory");
        if (owns_text)
            free((char *)text);
    } else if (asm_apply_defines(&c) < 0) {
        if (owns_text)
            free((char *)text);
    } else if (asm_add_file(&c, name, key, (char *)text, len, owns_text, &top) == 0 &&
               asm_push_file(&c, top) == 0) {
        int r;
        while ((r = asm_next_line(&c)) > 0) {
            int rc = c.recording              ? asm_macro_record(&c)
                     : asm_is_conditional(&c) ? asm_conditional(&c)
                     : asm_skipping(&c)       ? 0
                                              : statement(&c);
            if (rc < 0)
                break;
        }
        if (!c.failed)
            asm_pipe_check_closed(&c);
        if (!c.failed)
            resolve_fixups(&c);
        if (!c.failed)
            finish_files(&c);
    }
    free(key);
    cleanup(&c);
    if (c.failed) {
        npu_program_free(out);
        npu_program_init(out);
        return c.status;
    }
    return NPU_OK;
}

int npu_assemble(const char *name, const char *text, size_t len, const npu_asm_options *opts,
                 npu_program *out, npu_diag *diag)
{
    const locale_t host = isa_locale_enter(); /* literals are C-locale numbers */
    const int rc = assemble(name, text, len, 0, opts, out, diag);
    isa_locale_restore(host);
    return rc;
}

/* ---- programs assembled before, from disk --------------------------------
 * npu_assemble_file keeps the last kProgramsKept programs it assembled from
 * disk, as ccache keeps compilations: each under its options (the path as
 * given, include folders, defines, machine, schedule), with the log of
 * every file the assembly tried (the bytes it read, or that it did not
 * open) and every path it resolved. A later call with the same options
 * whose log holds (every file read again gives the same bytes or fails the
 * same way, every path resolves the same) takes a copy of the program: the
 * assembly is a function of those, so a fresh one would give the same
 * bits. A kernel run in a loop in one process (Python, compare, sweep)
 * assembled its kernel every time, half of a small run's host time. */
enum { kProgramsKept = 32 };

typedef struct kept_program {
    char *key;
    size_t key_len;
    asm_read_log log;
    npu_program prog;
} kept_program;

static struct {
    pthread_mutex_t lock;
    kept_program e[kProgramsKept];
    size_t count, next;
} kept = { .lock = PTHREAD_MUTEX_INITIALIZER };

typedef struct key_buf {
    char *p;
    size_t len, cap;
    int broken;
} key_buf;

static void key_add(key_buf *k, const char *bytes, size_t n)
{
    if (k->broken)
        return;
    if (k->len + n + 1 > k->cap) {
        size_t cap = k->cap ? k->cap : 256;
        while (cap < k->len + n + 1)
            cap *= 2;
        char *bigger = realloc(k->p, cap);
        if (!bigger) {
            k->broken = 1;
            return;
        }
        k->p = bigger;
        k->cap = cap;
    }
    memcpy(k->p + k->len, bytes, n);
    k->len += n;
    k->p[k->len++] = '\0';
}

static void key_str(key_buf *k, const char *s) { key_add(k, s ? s : "", s ? strlen(s) : 0); }

static void key_num(key_buf *k, unsigned long long v)
{
    char t[32];
    key_add(k, t, (size_t)snprintf(t, sizeof t, "%llu", v));
}

/* Everything of the options an assembly depends on, NUL-separated; NULL when
 * out of memory. */
static char *program_key(const char *path, const npu_asm_options *opts, size_t *len)
{
    key_buf k = { 0 };
    key_str(&k, path);
    const size_t ndirs = opts && opts->include_dirs ? opts->num_include_dirs : 0;
    const size_t ndefs = opts && opts->defines ? opts->num_defines : 0;
    key_num(&k, ndirs);
    for (size_t i = 0; i < ndirs; i++)
        key_str(&k, opts->include_dirs[i]); /* NULL searches as "" does */
    key_num(&k, ndefs);
    for (size_t i = 0; i < ndefs; i++) {
        key_num(&k, (opts->defines[i].name != NULL) | (opts->defines[i].value != NULL) << 1);
        key_str(&k, opts->defines[i].name);
        key_str(&k, opts->defines[i].value);
    }
    const npu_asm_machine *m = opts ? opts->machine : NULL;
    key_num(&k, opts && opts->schedule);
    key_num(&k, m != NULL);
    if (m) {
        unsigned char bytes[sizeof *m]; /* its fields without padding fit */
        key_add(&k, (const char *)bytes, asm_machine_bytes(m, bytes));
    }
    if (k.broken) {
        free(k.p);
        return NULL;
    }
    *len = k.len;
    return k.p;
}

/* 1 with a copy of the kept program in *out, 0 when none holds, -1 out of memory. */
static int kept_find(const char *key, size_t key_len, npu_program *out)
{
    int found = 0;
    pthread_mutex_lock(&kept.lock);
    for (size_t i = 0; i < kept.count && !found; i++) {
        kept_program *e = &kept.e[i];
        if (e->key_len == key_len && memcmp(e->key, key, key_len) == 0 && asm_read_log_holds(&e->log))
            found = asm_program_copy(out, &e->prog) == NPU_OK ? 1 : -1;
    }
    pthread_mutex_unlock(&kept.lock);
    return found;
}

/* Keeps `prog` (copied) under `key` (taken) with `log` (taken), in place of
 * an entry of the same key or the oldest. */
static void kept_add(char *key, size_t key_len, asm_read_log *log, const npu_program *prog)
{
    npu_program copy;
    if (asm_program_copy(&copy, prog) != NPU_OK) {
        free(key);
        asm_read_log_free(log);
        return;
    }
    pthread_mutex_lock(&kept.lock);
    size_t at = kept.count < kProgramsKept ? kept.count : kept.next;
    for (size_t i = 0; i < kept.count; i++)
        if (kept.e[i].key_len == key_len && memcmp(kept.e[i].key, key, key_len) == 0)
            at = i;
    if (at < kept.count) {
        free(kept.e[at].key);
        asm_read_log_free(&kept.e[at].log);
        npu_program_free(&kept.e[at].prog);
    } else {
        kept.count++;
    }
    if (at == kept.next)
        kept.next = (kept.next + 1) % kProgramsKept;
    kept.e[at] = (kept_program){ key, key_len, *log, copy };
    memset(log, 0, sizeof *log);
    pthread_mutex_unlock(&kept.lock);
}

void asm_programs_clear(void)
{
    pthread_mutex_lock(&kept.lock);
    for (size_t i = 0; i < kept.count; i++) {
        free(kept.e[i].key);
        asm_read_log_free(&kept.e[i].log);
        npu_program_free(&kept.e[i].prog);
    }
    kept.count = kept.next = 0;
    pthread_mutex_unlock(&kept.lock);
}

static int assemble_file(const char *path, const npu_asm_options *opts, npu_program *out, npu_diag *diag);

int npu_assemble_file(const char *path, const npu_asm_options *opts, npu_program *out,
                      npu_diag *diag)
{
    if (opts && opts->reader) /* a host's files: not ours to read again */
        return assemble_file(path, opts, out, diag);
    size_t key_len = 0;
    char *key = program_key(path ? path : "", opts, &key_len);
    const int hit = key ? kept_find(key, key_len, out) : 0;
    if (hit != 0) {
        free(key);
        if (diag) {
            memset(diag, 0, sizeof *diag);
            if (hit < 0)
                snprintf(diag->message, sizeof diag->message, "out of memory");
        }
        return hit > 0 ? NPU_OK : NPU_ENOMEM; /* out is empty on NPU_ENOMEM (asm_program_copy) */
    }
    asm_read_log log = { 0 };
    asm_log_reads(&log);
    const int rc = assemble_file(path, opts, out, diag);
    asm_log_reads(NULL);
    if (rc == NPU_OK && key && !log.broken) {
        kept_add(key, key_len, &log, out);
    } else {
        free(key);
        asm_read_log_free(&log);
    }
    return rc;
}

static int assemble_file(const char *path, const npu_asm_options *opts, npu_program *out, npu_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    errno = 0;
    int rc = asm_read_source(opts, path ? path : "", &text, &len);
    if (rc != NPU_OK || !text) {
        int err = errno;
        npu_program_init(out);
        if (diag) {
            memset(diag, 0, sizeof *diag);
            snprintf(diag->file, sizeof diag->file, "%s", path ? path : "");
            if (is_on_disk(opts) && err)
                snprintf(diag->message, sizeof diag->message, "cannot read source file: %s",
                         strerror(err));
            else
                snprintf(diag->message, sizeof diag->message, "cannot read source file");
        }
        free(text);
        return rc == NPU_ENOMEM ? NPU_ENOMEM : NPU_EIO;
    }
    const locale_t host = isa_locale_enter();
    rc = assemble(path, text, len, 1, opts, out, diag);
    isa_locale_restore(host);
    return rc;
}
