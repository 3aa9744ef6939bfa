/* An assembled program: instruction words, their decoded form, and where
 * each came from in the source (for traps, listings and per-PC stalls). */
#ifndef NPUSIM_PROGRAM_H
#define NPUSIM_PROGRAM_H

#include "npusim/export.h"

#include <stddef.h>
#include <stdint.h>

#include "npusim/errors.h"
#include "npusim/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_srcloc {
    uint32_t file; /* index into npu_program.files */
    uint32_t line; /* 1-based, 0 when unknown (a program loaded from binary) */
} npu_srcloc;

/* One `.pipeline` loop as the assembler emitted it (docs/scheduling.md).
 * Cycle figures are per kernel pass, which runs `unroll` iterations. */
typedef struct npu_sched_loop {
    npu_srcloc loc;          /* the .pipeline line */
    size_t begin, end;       /* instruction indices of all the loop's code */
    size_t kernel_begin, kernel_end; /* the steady-state kernel (empty when not scheduled) */
    unsigned scheduled;      /* 0: written order (schedule off, or no machine) */
    unsigned ops;            /* instructions of one iteration as written */
    double trips;            /* the trips the source expects (.pipeline's third operand, else 256) */
    unsigned merged;         /* of those, repeats merged into an earlier identical one: holding
                                the value scheduled at least as fast as computing it again */
    unsigned unroll;         /* iterations per kernel pass */
    unsigned ii;             /* cycles per kernel pass (achieved) */
    unsigned mii, mii_res, mii_rec; /* its lower bounds: resources, recurrences */
    unsigned stages;
    unsigned vregs, pregs;   /* physical registers holding the loop's values */
    unsigned max_live;       /* most values live in one cycle */
    /* Registers, before scheduling (Huff's MinAvg): the least sum of one
     * iteration's value lifetimes (each from its producer's issue to its last
     * reader's, at least its latency) over every timing of the iteration its
     * latencies allow, per register file, and the registers free for them. An
     * iteration needs at least lifetime_sum / regs cycles on average,
     * whatever the schedule (docs/scheduling.md). */
    unsigned long lifetime_sum_v, lifetime_sum_p;
    unsigned regs_v, regs_p;
    uint32_t *kernel_cycles; /* each kernel instruction's cycle within its pass (0 .. ii-1) */
    size_t *iter_pcs;        /* instructions that run exactly once per iteration */
    size_t n_iter_pcs;
    char *binding;           /* the resource that sets mii_res ("unit sfu", "slots vector", ...);
                                unscheduled: why ("schedule off", "no machine", "one trip expected") */
    char *table;             /* the schedule as cycles x slots, with live registers (text) */
    unsigned long room;      /* the iterations the body's memory holds (.pipeline's fourth operand; 0: not given) */
    unsigned pad_leftovers, pad_from; /* with a room that is a multiple of unroll, a count rounds up to whole
                                         passes where that is faster (docs/scheduling.md, Code): when
                                         pad_leftovers or more iterations are left past whole passes (0:
                                         never, no room), or from a count of pad_from up to
                                         prologue_iterations (0: never) */
    unsigned prologue_iterations; /* the least count the scheduled code runs (the prologue's groups): a count
                                     below it runs in written order, or rounded up to it (pad_from) */
    unsigned vector_loads, vector_stores; /* one iteration's, each address once (a vector read again
                                             is one load) */
} npu_sched_loop;

typedef struct npu_program {
    uint64_t *words;     /* count instruction words */
    npu_insn *insns;     /* the same, decoded */
    npu_srcloc *locs;    /* the same, source positions (may be NULL) */
    size_t count;
    char **files;        /* source file names, nfiles of them */
    size_t nfiles;
    size_t capacity;     /* entries allocated in words/insns/locs (0: exactly count) */
    npu_sched_loop *loops; /* `.pipeline` loops, in program order (assembled programs) */
    size_t nloops;
} npu_program;

/* A program owns every array it points to. init makes it empty; free
 * releases everything and leaves it empty again. */
NPU_API void npu_program_init(npu_program *p);
NPU_API void npu_program_free(npu_program *p);
/* Appends one instruction (words and insns kept in step); 0 or NPU_ENOMEM. */
NPU_API int npu_program_append(npu_program *p, const npu_insn *insn, npu_srcloc loc);
/* Adds a source file name; returns its index or NPU_ENOMEM. */
NPU_API int npu_program_add_file(npu_program *p, const char *name);

/* Binary file format: "NPUSIMB1" magic, uint32 count, uint32 reserved (0),
 * then count little-endian 64-bit words, all little-endian.
 *
 * write_binary writes `path`.tmp and renames it over `path`, so a reader
 * never sees half a file; a `path` that is a device or FIFO (/dev/null, a
 * pipe) is written in place, since renaming would replace it. read_binary initialises *p (any previous content
 * must have been freed) and decodes every word; a word that does not decode
 * is kept with insns[i].op = NPU_OP_INVALID, so the core traps "illegal
 * instruction" when it reaches it rather than refusing to load. A bad magic,
 * size or reserved field is NPU_EFORMAT with a diag naming the problem.
 * load_binary_file reads `path` and calls read_binary. */
NPU_API int npu_program_write_binary(const npu_program *p, const char *path, npu_diag *diag);
NPU_API int npu_program_read_binary(npu_program *p, const void *data, size_t size, const char *name,
                                    npu_diag *diag);
NPU_API int npu_program_load_binary_file(npu_program *p, const char *path, npu_diag *diag);

/* Writes the disassembly of one instruction ("vadd.f32 v1, v2, v3, p1"),
 * always NUL-terminated and truncated to `size`. `index` resolves
 * pc-relative operands to absolute instruction indices ("@12"); the result
 * assembles back to the same word (literals print with enough digits, NaNs
 * other than the canonical one and its negation, `nan` and `-nan`, as
 * `bits(0x...)`). NPU_OP_INVALID prints as
 * "<invalid>". */
NPU_API void npu_disasm(const npu_insn *insn, size_t index, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
