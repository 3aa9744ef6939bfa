/* The npusim assembler: source text to npu_program.
 *
 * Syntax (one statement a line, `;` or `#` starts a comment):
 *   label:                      labels; numeric `@N` names instruction N
 *   .equ NAME, expr             named constants (integers or floats)
 *   .macro NAME a, b ... .endm  macros, arguments referenced as \a
 *   .include "file.s"           relative to the including file, then the
 *                               include path
 *   vadd.f32 v1, v2, v3, p1     a trailing predicate masks the lanes
 *   vld.f16 v1, [s2 + 64]       memory operands
 * Integer literals: 42, -7, 0x2a, 0b101; float literals: 0.044715, 1e-3,
 * 0x1p-3, inf, nan; expressions with + - * / ( ) over literals and .equ names.
 */
#ifndef NPUSIM_ASM_H
#define NPUSIM_ASM_H

#include <stddef.h>

#include "npusim/errors.h"
#include "npusim/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the source text of `path` into a malloc'ed NUL-terminated buffer;
 * returns 0 or a negative error. Hosts may supply their own (fuzzers do). */
typedef int (*npu_asm_reader)(void *ctx, const char *path, char **text, size_t *len);

typedef struct npu_asm_options {
    const char *const *include_dirs; /* searched after the including file's folder */
    size_t num_include_dirs;
    npu_asm_reader reader;           /* NULL: read files from disk */
    void *reader_ctx;
} npu_asm_options;

/* Assembles `text` (named `name` in diagnostics). On error returns a negative
 * code, fills *diag with the first error (file, line, column, message) and
 * leaves *out empty. */
int npu_assemble(const char *name, const char *text, size_t len, const npu_asm_options *opts,
                 npu_program *out, npu_diag *diag);
int npu_assemble_file(const char *path, const npu_asm_options *opts, npu_program *out,
                      npu_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
