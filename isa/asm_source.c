/* Where the assembler's statements come from: a stack of frames, each a
 * source file (the top one or an .include) or a macro expansion (whose
 * definition and substitution live in asm_macro.c). */
#include "asm_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- files ------------------------------------------------------------- */

int asm_add_file(asm_ctx *c, const char *name, const char *key, char *text, size_t len,
                 int owns_text, uint32_t *index)
{
    if (c->nfiles >= UINT32_MAX ||
        asm_grow(c, (void **)&c->files, &c->files_cap, c->nfiles + 1, sizeof *c->files) < 0) {
        if (owns_text)
            free(text);
        return -1;
    }
    asm_file *f = &c->files[c->nfiles];
    memset(f, 0, sizeof *f);
    f->text = text;
    f->len = len;
    f->owns_text = owns_text;
    f->name = asm_strndup(c, name, strlen(name));
    f->key = asm_strndup(c, key, strlen(key));
    *index = (uint32_t)c->nfiles++; /* counted now so cleanup frees what was set */
    return f->name && f->key ? 0 : -1;
}

int asm_push_file(asm_ctx *c, uint32_t file)
{
    if (asm_grow(c, (void **)&c->frames, &c->frames_cap, c->nframes + 1, sizeof *c->frames) < 0)
        return -1;
    c->frames[c->nframes++] = (asm_frame){ .file = file };
    return 0;
}

/* Lexical clean-up of a path: drops "." and empty parts, folds "x/..". Used
 * when the file is not on disk (a host reader) or realpath fails. */
static char *normalize_path(const char *path)
{
    size_t n = strlen(path);
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    size_t o = 0;
    int absolute = path[0] == '/';
    if (absolute)
        out[o++] = '/';
    size_t floor = o; /* ".." never climbs above this */
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *start = p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - start);
        if (len == 0 || (len == 1 && start[0] == '.'))
            continue;
        if (len == 2 && start[0] == '.' && start[1] == '.' && o > floor) {
            size_t prev = o - 1;
            while (prev > floor && out[prev - 1] != '/')
                prev--;
            if (!(o - prev == 3 && memcmp(out + prev, "../", 3) == 0)) {
                o = prev;
                continue;
            }
        }
        memcpy(out + o, start, len);
        o += len;
        out[o++] = '/';
    }
    if (o > floor)
        o--; /* trailing slash */
    out[o] = '\0';
    return out;
}

/* ---- what an assembly read (asm_read_log) ------------------------------- */

static _Thread_local asm_read_log *read_log;

void asm_log_reads(asm_read_log *log) { read_log = log; }

void asm_read_log_free(asm_read_log *log)
{
    for (size_t i = 0; i < log->count; i++) {
        free(log->reads[i].path);
        free(log->reads[i].text);
    }
    free(log->reads);
    memset(log, 0, sizeof *log);
}

/* Appends a record; `text` (len bytes, may be NULL) is copied. */
static void log_read(const char *path, int resolved, int rc, const char *text, size_t len)
{
    asm_read_log *log = read_log;
    if (!log || log->broken)
        return;
    const int saved_errno = errno; /* npu_assemble_file reports the read's */
    if (log->count == log->cap) {
        size_t cap = log->cap ? 2 * log->cap : 16;
        asm_read *bigger = realloc(log->reads, cap * sizeof *bigger);
        if (!bigger) {
            log->broken = 1;
            return;
        }
        log->reads = bigger;
        log->cap = cap;
    }
    asm_read r = { strdup(path), resolved, rc, NULL, len };
    if (text && (r.text = malloc(len + 1)))
        memcpy(r.text, text, len + 1);
    if (!r.path || (text && !r.text)) {
        free(r.path);
        free(r.text);
        log->broken = 1;
    } else {
        log->reads[log->count++] = r;
    }
    errno = saved_errno;
}

char *asm_canonical_path(const char *path, int on_disk)
{
    if (on_disk) {
        char *real = realpath(path, NULL);
        log_read(path, 1, 0, real, real ? strlen(real) : 0);
        if (real)
            return real;
    }
    return normalize_path(path);
}

static int read_disk(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NPU_EIO;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? NPU_OK : NPU_ENOMEM;
    while (rc == NPU_OK) {
        if (cap - n < 2) {
            char *bigger = cap < ASM_MAX_FILE_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                rc = cap < ASM_MAX_FILE_BYTES ? NPU_ENOMEM : NPU_EIO;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = NPU_EIO;
            break;
        }
    }
    fclose(f);
    if (rc != NPU_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return NPU_OK;
}

int asm_read_source(const npu_asm_options *opts, const char *path, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    if (opts && opts->reader)
        return opts->reader(opts->reader_ctx, path, text, len);
    const int rc = read_disk(path, text, len);
    log_read(path, 0, rc, rc == NPU_OK ? *text : NULL, rc == NPU_OK ? *len : 0);
    return rc;
}

int asm_read_log_holds(const asm_read_log *log)
{
    if (log->broken)
        return 0;
    for (size_t i = 0; i < log->count; i++) {
        const asm_read *r = &log->reads[i];
        char *text = NULL;
        size_t len = 0;
        int same;
        if (r->resolved) {
            text = realpath(r->path, NULL);
            same = text ? r->text && strcmp(text, r->text) == 0 : !r->text;
        } else {
            const int rc = read_disk(r->path, &text, &len);
            same = rc == r->rc && (rc != NPU_OK || (len == r->len && memcmp(text, r->text, len) == 0));
        }
        free(text);
        if (!same)
            return 0;
    }
    return 1;
}

/* dir/name, where dir is the folder part of `base` ("" for none). */
static char *join_path(const char *base_dir, size_t dir_len, const char *name)
{
    size_t n = strlen(name);
    char *p = malloc(dir_len + n + 2);
    if (!p)
        return NULL;
    size_t o = 0;
    if (dir_len && name[0] != '/') {
        memcpy(p, base_dir, dir_len);
        o = dir_len;
        if (p[o - 1] != '/')
            p[o++] = '/';
    }
    memcpy(p + o, name, n + 1);
    return p;
}

/* Opens an include: next to the including file first, then each include
 * directory in order. Returns the path that opened, or NULL. */
static char *open_include(asm_ctx *c, const char *name, char **text, size_t *len)
{
    const char *from = c->files[c->cur.file].name;
    const char *slash = strrchr(from, '/');
    size_t dir_len = slash ? (size_t)(slash - from) + 1 : 0;
    size_t ndirs = c->opts && name[0] != '/' ? c->opts->num_include_dirs : 0;
    for (size_t i = 0; i <= ndirs; i++) {
        char *path = i == 0 ? join_path(from, dir_len, name)
                            : join_path(c->opts->include_dirs[i - 1],
                                        c->opts->include_dirs[i - 1]
                                            ? strlen(c->opts->include_dirs[i - 1]) : 0,
                                        name);
        if (!path)
            return NULL;
        if (asm_read_source(c->opts, path, text, len) == NPU_OK && *text)
            return path;
        free(path);
    }
    return NULL;
}

/* May the file `key` open here? Not when it is already open further down
 * the stack (recursion) or the stack is too deep. */
static int check_include_stack(asm_ctx *c, const char *key, const asm_token *t)
{
    char q[96];
    size_t depth = 0;
    for (size_t i = 0; i < c->nframes; i++) {
        if (c->frames[i].is_macro)
            continue;
        depth++;
        if (strcmp(c->files[c->frames[i].file].key, key) == 0)
            return asm_error(c, t->col, "recursive include of %s",
                             asm_quote(t->text, t->len, q, sizeof q));
    }
    if (depth >= ASM_MAX_INCLUDE_DEPTH)
        return asm_error(c, t->col, "includes nested too deeply (limit %d)",
                         ASM_MAX_INCLUDE_DEPTH);
    return 0;
}

/* .include "file.s" */
int asm_include(asm_ctx *c, asm_lexer *lx, asm_token directive)
{
    char q[96];
    (void)directive;
    asm_token t = asm_lex_next(lx), end = asm_lex_next(lx);
    if (t.kind != TOK_STRING)
        return t.kind == TOK_BAD ? -1
                                 : asm_error(c, t.col, "expected a file name in quotes, found %s",
                                             asm_tok_str(&t, q, sizeof q));
    if (end.kind != TOK_EOL)
        return end.kind == TOK_BAD ? -1
                                   : asm_error(c, end.col, "unexpected trailing text %s",
                                               asm_tok_str(&end, q, sizeof q));
    if (t.len == 0)
        return asm_error(c, t.col, "empty include file name");
    char *name = asm_strndup(c, t.text, t.len), *text = NULL, *path = NULL, *key = NULL;
    size_t len = 0;
    int rc = -1;
    if (!name)
        return -1;
    if (!(path = open_include(c, name, &text, &len))) {
        asm_error(c, t.col, "cannot open include file %s", asm_quote(name, t.len, q, sizeof q));
        goto done;
    }
    if (!(key = asm_canonical_path(path, !(c->opts && c->opts->reader)))) {
        c->status = NPU_ENOMEM;
        asm_error(c, t.col, "out of memory");
        goto done;
    }
    if (check_include_stack(c, key, &t) < 0)
        goto done;
    /* Include-once: shared sequences (exp, tanh) include their constants
     * and macros themselves, so a kernel using two of them reaches the
     * same file twice; the second time is skipped, not a redefinition. */
    for (size_t i = 0; i < c->nfiles; i++) {
        if (strcmp(c->files[i].key, key) == 0) {
            rc = 0;
            goto done;
        }
    }
    uint32_t index;
    rc = asm_add_file(c, path, key, text, len, 1, &index);
    text = NULL;
    if (rc == 0)
        rc = asm_push_file(c, index);
done:
    free(text);
    free(key);
    free(path);
    free(name);
    return rc;
}

static int next_file_line(asm_ctx *c, asm_frame *f)
{
    const asm_file *file = &c->files[f->file];
    size_t start = f->pos;
    const char *nl = memchr(file->text + start, '\n', file->len - start);
    size_t end = nl ? (size_t)(nl - file->text) : file->len;
    f->pos = nl ? end + 1 : end;
    f->line++;
    c->cur = (asm_line){ file->text + start, end - start, f->file, f->line };
    const char *nul = memchr(c->cur.text, '\0', c->cur.len);
    if (nul)
        return asm_error(c, (int)(nul - c->cur.text) + 1, "NUL byte in source");
    return 1;
}

int asm_next_line(asm_ctx *c)
{
    while (c->nframes > 0) {
        asm_frame *f = &c->frames[c->nframes - 1];
        if (!f->is_macro) {
            if (f->pos < c->files[f->file].len)
                return next_file_line(c, f);
            if (c->recording) {
                asm_macro *m = c->recording;
                return asm_error_at(c, m->file, m->line, 1, "unterminated .macro '%s' (no .endm)",
                                    m->name);
            }
            if (asm_conds_closed(c) < 0)
                return -1;
            c->nframes--;
            continue;
        }
        if (f->next_line >= f->macro->nlines) {
            if (asm_conds_closed(c) < 0)
                return -1;
            asm_free_args(f->args, f->macro->nparams);
            c->nframes--;
            continue;
        }
        const asm_body_line *bl = &f->macro->lines[f->next_line++];
        c->cur = (asm_line){ bl->text, bl->len, bl->file, bl->line };
        if (++c->expanded_lines > ASM_MAX_EXPANDED_LINES)
            return asm_error(c, 0, "macro expansion too large (over %zu lines): recursive macro?",
                             (size_t)ASM_MAX_EXPANDED_LINES);
        return asm_macro_substitute(c, f, bl) < 0 ? -1 : 1;
    }
    return 0;
}
