/* Internals shared by the assembler's source files (isa/asm*.c); not
 * installed. One asm_ctx lives for one npu_assemble() call. */
#ifndef NPUSIM_ASM_INTERNAL_H
#define NPUSIM_ASM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "npusim/asm.h"

/* Bounds that keep hostile input (a fuzzer, a runaway macro) finite. No real
 * kernel comes near them; everything else (labels, program length, line
 * length) grows dynamically. */
enum {
    ASM_MAX_INCLUDE_DEPTH = 64,
    ASM_MAX_MACRO_DEPTH = 64,
    ASM_MAX_EXPR_DEPTH = 256,
    ASM_MAX_NUMBER_LEN = 1024,
    ASM_MAX_MACRO_PARAMS = 64
};
#define ASM_MAX_EXPANDED_LINES ((size_t)1 << 20)
#define ASM_MAX_EXPANDED_BYTES ((size_t)64 << 20)
#define ASM_MAX_EXPANDED_LINE ((size_t)1 << 20) /* one body line after substitution */
#define ASM_MAX_FILE_BYTES ((size_t)1 << 30)

/* ---- string-keyed hash map (labels, constants, macros, files) ---------- */

typedef struct asm_map_slot {
    char *key; /* owned, NUL-terminated */
    size_t len;
    void *val;
} asm_map_slot;

typedef struct asm_map {
    asm_map_slot *slots;
    size_t cap; /* power of two, or 0 */
    size_t count;
} asm_map;

void *asm_map_get(const asm_map *m, const char *key, size_t len);
/* Adds a key that is not yet present; 0 or NPU_ENOMEM. */
int asm_map_put(asm_map *m, const char *key, size_t len, void *val);
void asm_map_free(asm_map *m, void (*free_val)(void *));

/* ---- values of constant expressions ------------------------------------ */

/* An integer of an expression: any value from -2^63 to 2^64 - 1, so that a
 * 64-bit word or register value (.word, li) can be written signed or
 * unsigned and every literal keeps its value; each operand checks its own
 * range. A result outside is an overflow error, a literal outside an error
 * at its column. */
__extension__ typedef __int128 asm_int;
#define ASM_INT_MIN ((asm_int)INT64_MIN)
#define ASM_INT_MAX ((asm_int)UINT64_MAX)

typedef struct asm_value {
    int is_float;
    asm_int i; /* when !is_float */
    double d;  /* when is_float */
    /* A float literal as written (or negated, or a name for one): `odd` is
     * it rounded to odd in binary64, which rounds to nearest in binary32 or
     * binary16 exactly as the decimal itself would (53 bits >= 24 + 2), so
     * the literal is rounded once; `d`, rounded to nearest, is what
     * expressions compute with. */
    int literal;
    double odd;
} asm_value;

/* Decimal text of an integer (buf of 48 bytes holds any). */
const char *asm_int_str(asm_int v, char *buf, size_t size);
/* The nearest double, rounded once. */
double asm_int_to_double(asm_int v);

/* ---- tokens of one statement ------------------------------------------- */

typedef enum asm_tok_kind {
    TOK_EOL,       /* end of the statement (or a comment) */
    TOK_IDENT,     /* vadd.f32, s1, loop, lanes.f32 */
    TOK_DIRECTIVE, /* .equ */
    TOK_NUMBER,    /* 42, 0x1p-3, .5 (validated by the expression parser) */
    TOK_STRING,    /* "file.s", text excludes the quotes */
    TOK_PUNCT,     /* one of , [ ] ( ) + - * / : @ */
    TOK_BAD        /* already reported */
} asm_tok_kind;

typedef struct asm_token {
    asm_tok_kind kind;
    const char *text;
    size_t len;
    int col; /* 1-based byte column of the token's first byte */
} asm_token;

struct asm_ctx;

typedef struct asm_lexer {
    struct asm_ctx *ctx;
    const char *line;
    size_t len; /* the statement's bytes before any comment */
    size_t pos;
    asm_token peeked;
    int has_peeked;
} asm_lexer;

/* ---- input: files, macros, the frame stack ------------------------------ */

typedef struct asm_file {
    char *name;    /* as shown in diagnostics: the path the source was opened by */
    char *key;     /* canonical path, for recursive-include detection */
    char *text;    /* owned unless it is the caller's top-level text */
    size_t len;
    int owns_text;
} asm_file;

typedef struct asm_body_line {
    char *text;
    size_t len;
    uint32_t file, line;
} asm_body_line;

typedef struct asm_macro {
    char *name;
    char **params;
    size_t nparams;
    asm_body_line *lines;
    size_t nlines, lines_cap;
    uint32_t file, line; /* where `.macro` was */
} asm_macro;

typedef struct asm_frame {
    int is_macro;
    /* file frame */
    uint32_t file;
    size_t pos;
    uint32_t line;
    /* macro frame */
    const asm_macro *macro;
    char **args;
    size_t next_line;
    unsigned long expansion; /* value of \@ */
} asm_frame;

/* The statement being assembled: where its text comes from. */
typedef struct asm_line {
    const char *text;
    size_t len;
    uint32_t file, line;
} asm_line;

typedef struct asm_label {
    size_t index;
    uint32_t file, line;
} asm_label;

typedef struct asm_const {
    asm_value value;
    uint32_t file, line;
} asm_const;

/* A branch target waiting for the program's end: a label's definition, or
 * an `@N` index (label NULL) to check against the program's length. */
typedef struct asm_fixup {
    size_t index;
    char *label;
    asm_int target; /* the @N when label is NULL */
    uint32_t file, line;
    int col;
} asm_fixup;

/* An open .if/.ifdef/.ifndef block. */
typedef struct asm_cond {
    uint32_t file, line;
    int col;
    size_t depth; /* c->nframes when opened: it must close in the same file or expansion */
    unsigned char parent_active, active, taken, in_else;
    char kind[8]; /* ".ifdef" */
} asm_cond;

struct asm_pipe; /* a .pipeline block being recorded (asm_pipe.c) */

typedef struct asm_ctx {
    const npu_asm_options *opts;
    npu_diag *diag;
    int failed;
    int status; /* NPU_ESYNTAX unless an error says otherwise */
    npu_program *prog;

    asm_file *files;
    size_t nfiles, files_cap;
    asm_frame *frames;
    size_t nframes, frames_cap;

    asm_map labels, consts, macros;
    asm_map dtypes; /* dtype aliases (DT -> f32), value = (void *)(npu_dtype + 1) */
    asm_cond *conds;
    size_t nconds, conds_cap;
    asm_fixup *fixups;
    size_t nfixups, fixups_cap;

    asm_line cur;
    char *linebuf; /* a macro body line after substitution */
    size_t linebuf_cap;
    asm_macro *recording; /* the macro between .macro and .endm */
    unsigned long expansions;
    size_t expanded_lines, expanded_bytes;
    struct asm_pipe *pipe;   /* open .pipeline block, or NULL */
    uint8_t *virt_fields[6]; /* fields of the statement being parsed that name a %virtual */
    size_t nvirt_fields;
} asm_ctx;

/* ---- errors -------------------------------------------------------------- */

/* Records the first error at the current statement and returns -1. Later
 * errors are dropped, so callers simply propagate -1. */
int asm_error(asm_ctx *c, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int asm_error_at(asm_ctx *c, uint32_t file, uint32_t line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* `'text'` (shortened when long, control bytes escaped) or `end of line`. */
const char *asm_tok_str(const asm_token *t, char *buf, size_t size);
/* 0 when t (the token after a statement) ends the line; otherwise the
 * "unexpected trailing text" error (-1, or -1 quietly for a bad token the
 * lexer has already reported). */
int asm_expect_eol(struct asm_ctx *c, asm_token t);
/* Quotes arbitrary bytes the same way. */
const char *asm_quote(const char *s, size_t len, char *buf, size_t size);
/* Makes room for `need` elements of `elem` bytes in *ptr; reports "out of
 * memory" itself. */
int asm_grow(struct asm_ctx *c, void **ptr, size_t *cap, size_t need, size_t elem);

/* A NUL-terminated copy; reports "out of memory" itself. */
char *asm_strndup(struct asm_ctx *c, const char *s, size_t len);

/* ---- lexer (asm_lex.c) ----------------------------------------------------- */

/* Length of `text` before a `;` or `#` comment (quotes are skipped). */
size_t asm_code_len(const char *text, size_t len);
void asm_lex_init(asm_lexer *lx, asm_ctx *c, const char *text, size_t len);
asm_token asm_lex_next(asm_lexer *lx);
asm_token asm_lex_peek(asm_lexer *lx);
int asm_tok_is(const asm_token *t, char punct);
int asm_ident_start(int ch);
int asm_ident_char(int ch);
/* Register name: 's', 'v' or 'p' + decimal index without leading zeros. */
int asm_reg_parse(const asm_token *t, char *cls, unsigned *num);

/* ---- expressions (asm_expr.c) -------------------------------------------- */

int asm_parse_expr(asm_lexer *lx, asm_value *out);
/* An expression that must be an integer; `what` names it in messages. */
int asm_parse_int(asm_lexer *lx, const char *what, asm_int *out, int *col);

/* ---- statements (asm_insn.c) ---------------------------------------------- */

/* Assembles one instruction statement whose mnemonic token is `mn`. */
int asm_insn(asm_ctx *c, asm_lexer *lx, asm_token mn);

/* ---- predefined names, conditional assembly (asm_cond.c) ------------------ */

int asm_apply_defines(asm_ctx *c);
/* The lane type a dtype alias names, or -1. */
int asm_dtype_alias(const asm_ctx *c, const char *name, size_t len);
/* Is the current line .if/.ifdef/.ifndef/.else/.endif? (Looked at even
 * while skipping, so only the first word is read.) */
int asm_is_conditional(const asm_ctx *c);
int asm_conditional(asm_ctx *c);
int asm_skipping(const asm_ctx *c);
/* Before the frame on top ends: no block opened in it may stay open. */
int asm_conds_closed(asm_ctx *c);
int asm_reserved_name(const asm_token *t);

/* ---- sources (asm_source.c) and macros (asm_macro.c) ----------------------- */

int asm_add_file(asm_ctx *c, const char *name, const char *key, char *text, size_t len,
                 int owns_text, uint32_t *index);
int asm_push_file(asm_ctx *c, uint32_t file);
/* Next statement into c->cur; 1 = got one, 0 = input exhausted, -1 = error. */
int asm_next_line(asm_ctx *c);
int asm_include(asm_ctx *c, asm_lexer *lx, asm_token directive);
int asm_macro_begin(asm_ctx *c, asm_lexer *lx, asm_token directive);
/* While a macro is being recorded: take the current line into it. */
int asm_macro_record(asm_ctx *c);
int asm_macro_call(asm_ctx *c, asm_lexer *lx, asm_macro *m, asm_token name);
void asm_macro_free(void *m);
void asm_free_args(char **args, size_t n);
/* Substitutes one body line of the expansion `f` into c->linebuf / c->cur. */
int asm_macro_substitute(asm_ctx *c, const asm_frame *f, const asm_body_line *bl);
char *asm_canonical_path(const char *path, int on_disk);
/* Reads a whole source file through opts->reader, or from disk. */
int asm_read_source(const npu_asm_options *opts, const char *path, char **text, size_t *len);

/* What an assembly from disk read: each file it tried (its path, and its
 * bytes or that it did not open) and each path it resolved (realpath, for
 * include-once), in order. While a log is set on this thread (asm_log_reads;
 * NULL stops), asm_read_source and asm_canonical_path append to it; a
 * failed append marks it broken (it is then not used). npu_assemble_file
 * keeps its programs with their logs (asm.c). */
typedef struct asm_read {
    char *path;
    int resolved;  /* 0: a read (rc, text, len); 1: a realpath (text: its result, or NULL) */
    int rc;
    char *text;
    size_t len;
} asm_read;
typedef struct asm_read_log {
    asm_read *reads;
    size_t count, cap;
    int broken;
} asm_read_log;
void asm_log_reads(asm_read_log *log);
void asm_read_log_free(asm_read_log *log);
/* Whether every read and path of `log` gives the same now (the files are
 * read and the paths resolved again). */
int asm_read_log_holds(const asm_read_log *log);

/* Every field of `m` an assembly depends on, field by field (no padding),
 * written to `out` (may be NULL); returns their size. The schedule cache's
 * key and npu_assemble_file's kept programs both take it. */
size_t asm_machine_bytes(const npu_asm_machine *m, unsigned char *out);

/* A deep copy of `src` into `dst` (initialised here): 0, or NPU_ENOMEM with
 * dst empty. */
int asm_program_copy(npu_program *dst, const npu_program *src);

/* Forgets the programs npu_assemble_file keeps (npu_asm_cache_clear and
 * npu_asm_cache_set_file call it). */
void asm_programs_clear(void);

/* ---- .pipeline blocks (asm_pipe.c) ------------------------------------------ */

int asm_pipe_begin(asm_ctx *c, asm_lexer *lx, asm_token directive);
int asm_pipe_end(asm_ctx *c, asm_lexer *lx, asm_token directive);
/* `.pass sN[, scale]` inside a block: what follows is its pass block. */
int asm_pipe_pass(asm_ctx *c, asm_lexer *lx, asm_token directive);
/* `%name` in a register operand of class `cls` ('v' or 'p'): its number
 * within the block goes to *field. */
int asm_pipe_virtual(asm_ctx *c, asm_lexer *lx, char cls, uint8_t *field);
/* Records one instruction of the open block; `virt` has bit f set when
 * field f (npu_field) names a virtual register; `col` is its mnemonic's. */
int asm_pipe_add(asm_ctx *c, const npu_insn *in, unsigned virt, int col);
/* At the end of the input: a block still open is an error. */
int asm_pipe_check_closed(asm_ctx *c);
void asm_pipe_free(struct asm_pipe *p);

#endif
