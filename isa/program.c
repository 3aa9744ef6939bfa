/* npu_program: the container of an assembled or loaded program, its binary
 * file format, and the one-line diagnostic formatter. */
#include "npusim/program.h"

#include "asm_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char npu_magic[8] = { 'N', 'P', 'U', 'S', 'I', 'M', 'B', '1' };
enum { HEADER_BYTES = 16 };

void npu_diag_format(const npu_diag *d, char *buf, unsigned size)
{
    if (!buf || size == 0)
        return;
    if (d->file[0] == '\0')
        snprintf(buf, size, "%s", d->message);
    else if (d->line <= 0)
        snprintf(buf, size, "%s: %s", d->file, d->message);
    else if (d->col <= 0)
        snprintf(buf, size, "%s:%d: %s", d->file, d->line, d->message);
    else
        snprintf(buf, size, "%s:%d:%d: %s", d->file, d->line, d->col, d->message);
}

static void set_diag(npu_diag *diag, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_diag(npu_diag *diag, const char *file, const char *fmt, ...)
{
    if (!diag)
        return;
    memset(diag, 0, sizeof *diag);
    snprintf(diag->file, sizeof diag->file, "%s", file ? file : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->message, sizeof diag->message, fmt, ap);
    va_end(ap);
}

void npu_program_init(npu_program *p)
{
    memset(p, 0, sizeof *p);
}

void npu_program_free(npu_program *p)
{
    free(p->words);
    free(p->insns);
    free(p->locs);
    for (size_t i = 0; i < p->nfiles; i++)
        free(p->files[i]);
    free(p->files);
    for (size_t i = 0; i < p->nloops; i++) {
        free(p->loops[i].binding);
        free(p->loops[i].iter_pcs);
        free(p->loops[i].kernel_cycles);
        free(p->loops[i].table);
    }
    free(p->loops);
    npu_program_init(p);
}

static void *dup_bytes(const void *src, size_t n)
{
    void *p = n ? malloc(n) : NULL;
    if (p)
        memcpy(p, src, n);
    return p;
}

int asm_program_copy(npu_program *dst, const npu_program *src)
{
    npu_program_init(dst);
    const size_t n = src->count;
    if (n && (!(dst->words = dup_bytes(src->words, n * sizeof *src->words)) ||
              !(dst->insns = dup_bytes(src->insns, n * sizeof *src->insns)) ||
              (src->locs && !(dst->locs = dup_bytes(src->locs, n * sizeof *src->locs)))))
        goto oom;
    dst->count = dst->capacity = n;
    if (src->nfiles) {
        if (!(dst->files = calloc(src->nfiles, sizeof *dst->files)))
            goto oom;
        for (; dst->nfiles < src->nfiles; dst->nfiles++)
            if (!(dst->files[dst->nfiles] = strdup(src->files[dst->nfiles])))
                goto oom;
    }
    if (src->nloops) {
        if (!(dst->loops = calloc(src->nloops, sizeof *dst->loops)))
            goto oom;
        for (; dst->nloops < src->nloops; dst->nloops++) {
            const npu_sched_loop *from = &src->loops[dst->nloops];
            npu_sched_loop *to = &dst->loops[dst->nloops];
            *to = *from;
            to->binding = to->table = NULL;
            to->iter_pcs = NULL;
            to->kernel_cycles = NULL;
            if ((from->binding && !(to->binding = strdup(from->binding))) ||
                (from->table && !(to->table = strdup(from->table))) ||
                (from->n_iter_pcs &&
                 !(to->iter_pcs = dup_bytes(from->iter_pcs, from->n_iter_pcs * sizeof *from->iter_pcs))) ||
                (from->kernel_cycles && from->kernel_end > from->kernel_begin &&
                 !(to->kernel_cycles = dup_bytes(from->kernel_cycles,
                                                 (from->kernel_end - from->kernel_begin) *
                                                     sizeof *from->kernel_cycles)))) {
                dst->nloops++; /* freed with the others */
                goto oom;
            }
        }
    }
    return NPU_OK;
oom:
    npu_program_free(dst);
    return NPU_ENOMEM;
}

/* Grows all three arrays to hold `need` entries; a program built by hand
 * (capacity 0) is reallocated from its exact-size arrays. */
static int reserve(npu_program *p, size_t need)
{
    if (need <= p->capacity)
        return NPU_OK;
    size_t cap = p->capacity > p->count ? p->capacity : p->count;
    cap = cap < 16 ? 16 : cap;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / sizeof(npu_insn))
            return NPU_ENOMEM;
        cap *= 2;
    }
    uint64_t *words = realloc(p->words, cap * sizeof *words);
    if (!words)
        return NPU_ENOMEM;
    p->words = words;
    npu_insn *insns = realloc(p->insns, cap * sizeof *insns);
    if (!insns)
        return NPU_ENOMEM;
    p->insns = insns;
    npu_srcloc *locs;
    if (p->locs) {
        locs = realloc(p->locs, cap * sizeof *locs);
    } else {
        locs = calloc(cap, sizeof *locs); /* a program that had none: line 0, "unknown" */
    }
    if (!locs)
        return NPU_ENOMEM;
    p->locs = locs;
    p->capacity = cap;
    return NPU_OK;
}

int npu_program_append(npu_program *p, const npu_insn *insn, npu_srcloc loc)
{
    if (reserve(p, p->count + 1) != NPU_OK)
        return NPU_ENOMEM;
    p->words[p->count] = npu_encode(insn);
    p->insns[p->count] = *insn;
    p->locs[p->count] = loc;
    p->count++;
    return NPU_OK;
}

int npu_program_add_file(npu_program *p, const char *name)
{
    if (p->nfiles >= 0x7fffffff)
        return NPU_ENOMEM;
    char **files = realloc(p->files, (p->nfiles + 1) * sizeof *files);
    if (!files)
        return NPU_ENOMEM;
    p->files = files;
    size_t n = strlen(name);
    char *copy = malloc(n + 1);
    if (!copy)
        return NPU_ENOMEM;
    memcpy(copy, name, n + 1);
    p->files[p->nfiles] = copy;
    return (int)p->nfiles++;
}

static void put_le32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t get_le64(const uint8_t *b)
{
    return (uint64_t)get_le32(b) | (uint64_t)get_le32(b + 4) << 32;
}

/* The header and words to f: 1 when every byte was taken. */
static int write_words(const npu_program *p, FILE *f)
{
    uint8_t header[HEADER_BYTES];
    memcpy(header, npu_magic, sizeof npu_magic);
    put_le32(header + 8, (uint32_t)p->count);
    put_le32(header + 12, 0);
    int ok = fwrite(header, 1, sizeof header, f) == sizeof header;
    uint8_t chunk[8 * 512];
    for (size_t i = 0; ok && i < p->count;) {
        size_t k = 0;
        for (; k < 512 && i < p->count; k++, i++) {
            put_le32(chunk + 8 * k, (uint32_t)p->words[i]);
            put_le32(chunk + 8 * k + 4, (uint32_t)(p->words[i] >> 32));
        }
        ok = fwrite(chunk, 8, k, f) == k;
    }
    return ok && fflush(f) == 0;
}

static int write_in_place(const npu_program *p, const char *path, npu_diag *diag)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        set_diag(diag, path, "cannot write: %s", strerror(errno));
        return NPU_EIO;
    }
    int ok = write_words(p, f);
    int err = errno;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        set_diag(diag, path, "cannot write: %s", strerror(err ? err : EIO));
        return NPU_EIO;
    }
    return NPU_OK;
}

int npu_program_write_binary(const npu_program *p, const char *path, npu_diag *diag)
{
    if (p->count > UINT32_MAX) {
        set_diag(diag, path, "program too large for the binary format (%zu instructions)",
                 p->count);
        return NPU_EINVAL;
    }
    /* A device or FIFO (/dev/null, a pipe) is written in place: renaming
     * over it would replace it with a plain file (as root, /dev/null). */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return write_in_place(p, path, diag);
    size_t n = strlen(path);
    char *tmp = malloc(n + 5);
    if (!tmp) {
        set_diag(diag, path, "out of memory");
        return NPU_ENOMEM;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        set_diag(diag, path, "cannot create '%s': %s", tmp, strerror(errno));
        free(tmp);
        return NPU_EIO;
    }
    int ok = write_words(p, f) && fsync(fileno(f)) == 0;
    int err = errno;
    ok = (fclose(f) == 0) && ok;
    if (ok && rename(tmp, path) != 0) {
        err = errno;
        ok = 0;
    }
    if (!ok) {
        set_diag(diag, path, "cannot write '%s': %s", tmp, strerror(err ? err : EIO));
        remove(tmp);
        free(tmp);
        return NPU_EIO;
    }
    free(tmp);
    return NPU_OK;
}

int npu_program_read_binary(npu_program *p, const void *data, size_t size, const char *name,
                            npu_diag *diag)
{
    const uint8_t *b = data;
    npu_program_init(p);
    if (!name)
        name = "<binary>";
    if (size < HEADER_BYTES) {
        set_diag(diag, name, "not an npusim binary: %zu bytes, shorter than the %d-byte header",
                 size, HEADER_BYTES);
        return NPU_EFORMAT;
    }
    if (memcmp(b, npu_magic, sizeof npu_magic) != 0) {
        set_diag(diag, name, "not an npusim binary: bad magic (expected \"NPUSIMB1\")");
        return NPU_EFORMAT;
    }
    uint32_t count = get_le32(b + 8), reserved = get_le32(b + 12);
    if (reserved != 0) {
        set_diag(diag, name, "unsupported npusim binary: reserved header field is 0x%x, not 0",
                 reserved);
        return NPU_EFORMAT;
    }
    uint64_t want = HEADER_BYTES + 8 * (uint64_t)count;
    if (size < want) {
        set_diag(diag, name,
                 "truncated npusim binary: header says %u instructions (%llu bytes), file has "
                 "%zu bytes",
                 count, (unsigned long long)want, size);
        return NPU_EFORMAT;
    }
    if (size > want) {
        set_diag(diag, name, "bad npusim binary: %llu bytes after the %u instructions",
                 (unsigned long long)(size - want), count);
        return NPU_EFORMAT;
    }
    size_t n = count ? count : 1;
    p->words = malloc(n * sizeof *p->words);
    p->insns = calloc(n, sizeof *p->insns);
    p->locs = calloc(n, sizeof *p->locs);
    if (!p->words || !p->insns || !p->locs || npu_program_add_file(p, name) < 0) {
        npu_program_free(p);
        set_diag(diag, name, "out of memory");
        return NPU_ENOMEM;
    }
    p->capacity = n;
    p->count = count;
    for (size_t i = 0; i < count; i++) {
        p->words[i] = get_le64(b + HEADER_BYTES + 8 * i);
        if (npu_decode(p->words[i], &p->insns[i]) != NPU_OK)
            memset(&p->insns[i], 0, sizeof p->insns[i]); /* op = NPU_OP_INVALID: traps when run */
    }
    return NPU_OK;
}

int npu_program_load_binary_file(npu_program *p, const char *path, npu_diag *diag)
{
    npu_program_init(p);
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_diag(diag, path, "cannot open: %s", strerror(errno));
        return NPU_EIO;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    int rc = buf ? NPU_OK : NPU_ENOMEM;
    while (rc == NPU_OK) {
        if (n == cap) {
            uint8_t *bigger = cap <= ((size_t)1 << 35) ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                rc = NPU_ENOMEM;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = NPU_EIO;
            break;
        }
    }
    fclose(f);
    if (rc != NPU_OK) {
        if (rc == NPU_EIO)
            set_diag(diag, path, "cannot read: %s", strerror(errno));
        else
            set_diag(diag, path, "out of memory");
        free(buf);
        return rc;
    }
    rc = npu_program_read_binary(p, buf, n, path, diag);
    free(buf);
    return rc;
}
