/* The npusim assembler: source text to npu_program.
 *
 * One statement a line; `;` or `#` starts a comment (outside "strings").
 *   label:                      labels (several may precede a statement)
 *   .equ NAME, expr             named constant, integer or float; defined
 *                               before use, never redefined
 *   .macro NAME a, b ... .endm  macro; in the body \a is an argument, \@ a
 *                               number unique to each expansion (for labels),
 *                               \() nothing (a separator); invoked `NAME x, y`
 *                               (commas inside [] or () do not split)
 *   .include "file.s"           read next to the including file, then in each
 *                               include_dirs entry; a file already included
 *                               is skipped (include-once)
 *   .ifdef NAME / .ifndef NAME / .if expr  ...  [.else ...]  .endif
 *                               conditional assembly (NAME: a constant, a
 *                               dtype alias or a macro; expr non-zero, with
 *                               == != < <= > >= giving 1 or 0); a
 *                               block closes in the file or macro it opened in
 *   .error "message"            stops with that message
 *   .word expr                  one raw 64-bit instruction word (kept as
 *                               NPU_OP_INVALID when it does not decode)
 *   mnemonic[.dt] operands[, pN]
 *
 * `.dt` is f16, f32, i16 or i32, or a dtype alias from npu_asm_options
 * defines (`vadd.DT`), and must be in the row's dtype set; rows without
 * dtypes take no suffix. A trailing predicate on a maskable row sets
 * pm = 1, pg = N. Operands, by kind (isa/formats.def):
 *   scalar / vector / predicate register   s0..s31, v0..v31, p0..p7, or
 *           v[expr] (a computed number: register banks in macros)
 *   imm     integer expression, signed 32-bit
 *   u6      shift amount 0..63; ulane: 0 .. lane bits - 1
 *   lit     literal rounded once to the lane type: f16/f32 from any number
 *           (ties to even, overflow to infinity is an error), i16 -32768..65535
 *           (stored sign-extended), i32 -2^31..2^32-1; or bits(N), one
 *           lane's raw pattern (NaN payloads): 0..0xffff for f16 and i16
 *           (stored as their literals are), 0..0xffffffff for f32 and i32
 *   f32     number rounded to binary32, or bits(N)
 *   label   a label, or @N (absolute instruction index); encoded pc-relative
 *   mem     [sN], [sN + expr], [sN - expr]
 *   spr     special register name (lanes.f32, vlenb, ... isa/sprs.def)
 *   dim     1..2; tag: 0..31
 *   .pipeline sC, sT[, trips] ... .endpipeline
 *                               linear assembly: one loop iteration on
 *                               virtual registers (%name), run sC times
 *                               (sC consumed, sT scratch), modulo-scheduled
 *                               for npu_asm_options.machine
 *                               (docs/scheduling.md)
 * Predefined from the machine: VLENB and UB_BYTES, its bytes per vector
 * register and unified-buffer bytes (32 and 32768, the smallest legal ones,
 * without a machine), for tile sizes and trip estimates; a host define or a
 * .equ of either is an error.
 * Pseudo-instruction: `li sd, value` takes any 64-bit integer and emits li,
 * plus lih when the value does not fit in 32 signed bits.
 * Integer literals: 42, -7, 0x2a, 0b101 (up to 2^64 - 1, kept as bits);
 * float literals: 0.044715, 1e-3, .5, 0x1p-3, inf, nan. Expressions: + - * /
 * ( ) over literals and .equ names, in 64-bit integers (overflow and division
 * by zero are errors) until an operand is a float, then in double.
 *
 * Errors: the first one only, as npu_diag {file, line, col, message} naming
 * the offending token at its real place (inside an included file; for a
 * macro, its body line). Limits that bound hostile input: includes and macro
 * calls nest 64 deep, expressions 256; macro expansion stops at 1M lines,
 * 64 MiB in all, or 1 MiB for one line.
 */
#ifndef NPUSIM_ASM_H
#define NPUSIM_ASM_H

#include "npusim/export.h"

#include <stddef.h>

#include <stdint.h>

#include "npusim/errors.h"
#include "npusim/isa.h"
#include "npusim/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the source text of `path` into a malloc'ed NUL-terminated buffer;
 * returns 0 or a negative error. Hosts may supply their own (fuzzers do). */
typedef int (*npu_asm_reader)(void *ctx, const char *path, char **text, size_t *len);

/* A name defined by the host before assembly, like `cc -D`. A numeric value
 * acts as `.equ NAME, value`; a lane-type name (f16, f32, i16, i32) makes NAME
 * a dtype alias usable as a mnemonic suffix (`vadd.DT v1, v2, v3`), so one
 * kernel source serves every dtype. Both are visible to `.ifdef NAME`. An
 * empty or NULL value defines NAME as 1. A bad name or value fails the
 * assembly with a diag for the file "<defines>". */
typedef struct npu_asm_define {
    const char *name;
    const char *value;
} npu_asm_define;

/* The machine a `.pipeline` loop is scheduled for (docs/scheduling.md): the
 * issue slots and the units' count, latency and interval, as the timing
 * model sees them (npusim fills it from the run's config). */
typedef struct npu_asm_unit {
    unsigned count, latency, interval;
} npu_asm_unit;

typedef struct npu_asm_machine {
    unsigned issue_width;          /* 1..8 */
    uint32_t slot_classes[8];      /* bit c: slot accepts npu_class c */
    npu_asm_unit unit[NPU_NUM_UNITS];
    unsigned vlen_bytes;           /* bytes per vector register (VLENB in kernels) */
    unsigned ub_bytes;             /* unified buffer bytes (UB_BYTES in kernels) */
} npu_asm_machine;

typedef struct npu_asm_options {
    const char *const *include_dirs; /* searched after the including file's folder */
    size_t num_include_dirs;
    npu_asm_reader reader;           /* NULL: read files from disk */
    void *reader_ctx;
    const npu_asm_define *defines;   /* predefined names (may be NULL) */
    size_t num_defines;
    /* `.pipeline` loops: NULL, or schedule = 0, assembles them in written
     * order (a plain loop); otherwise they are modulo-scheduled for `machine`. */
    const npu_asm_machine *machine;
    int schedule;
} npu_asm_options;

/* Assembles `text` (`len` bytes, NUL bytes are an error; named `name` in
 * diagnostics, whose folder is where its includes are looked up). *out is
 * initialised here (free any earlier content first). Returns 0, or
 * NPU_ESYNTAX (bad source, missing include), NPU_ENOMEM, with *diag holding
 * the first error and *out empty. `opts` and `diag` may be NULL.
 * npu_assemble_file reads `path` first; failing that it returns NPU_EIO with
 * a diag for the file (line 0). From disk (no opts->reader) it keeps the
 * last 32 programs it assembled, as ccache keeps compilations: a call with
 * the same path, include folders, defines, machine and schedule flag gets
 * a copy of the kept program when every file the assembly tried reads the
 * same bytes again (or fails to open again) and every path it resolved
 * resolves the same; otherwise it assembles anew. The copy is the program
 * the assembly would give, and takes no schedule (neither count of
 * npu_asm_cache_stats moves); npu_asm_cache_clear and
 * npu_asm_cache_set_file forget the kept programs too. */
NPU_API int npu_assemble(const char *name, const char *text, size_t len, const npu_asm_options *opts,
                         npu_program *out, npu_diag *diag);
NPU_API int npu_assemble_file(const char *path, const npu_asm_options *opts, npu_program *out,
                              npu_diag *diag);

/* The process's schedule cache: a `.pipeline` block scheduled before for the
 * same machine (its instructions, virtual registers and trip count; the
 * machine's slots, units and registers) takes the (unroll, II) found then,
 * and the placement variant, or the placement itself where register relief
 * found it, and skips the search, giving the same bits. It holds at most 1,024 blocks (the
 * oldest goes first) and is shared by the process's threads.
 * npu_asm_cache_clear forgets every block (and npu_assemble_file's kept
 * programs) and zeroes the counts;
 * npu_asm_cache_stats gives how many scheduled blocks took a cached schedule
 * (hits) and how many were searched (misses) since then. */
NPU_API void npu_asm_cache_clear(void);
NPU_API void npu_asm_cache_stats(unsigned long *hits, unsigned long *misses);
/* Keeps schedules across processes as well, in the file at `path` (NULL or
 * "": none, the default): every block the search schedules is appended to
 * it as one line. At the first block the process's cache does not hold the
 * file is read (and kept in memory until the path is set again or the cache
 * cleared), and every block the cache does not hold is looked up among its
 * lines (a line written by any other build of the scheduler, or not whole,
 * is skipped; a file above 16 MiB starts again).
 * Processes may share the file. As with the process's cache, the programs
 * are the same bits; a file that cannot be read or written only costs the
 * time it would have saved. `npusim` sets one unless NPUSIM_SCHEDULE_CACHE
 * says otherwise (docs/scheduling.md). Returns NPU_OK or NPU_ENOMEM. */
NPU_API int npu_asm_cache_set_file(const char *path);

#ifdef __cplusplus
}
#endif
#endif
