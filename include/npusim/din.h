/* Dinero IV "din" address traces: a reader for the text format, and a replay
 * of a trace through an L2 (and whatever sits behind it).
 *
 * One record per line: `label address [size]`, fields separated by blanks or
 * tabs, a CR before the newline allowed.
 *   label    decimal: 0 read data, 1 write data, 2 instruction fetch (replayed
 *            as a read), 3 "escape: unknown access type" (Dinero simulates it
 *            as a read, and so does the replay), 4 "escape: flush the cache"
 *            (the replay calls npu_l2_flush; its address may be left out and
 *            is otherwise ignored). Anything else is an error.
 *   address  hexadecimal, without 0x as Dinero writes it; a 0x/0X prefix is
 *            accepted too. At most 64 bits.
 *   size     optional, decimal bytes, 1 .. NPU_DIN_MAX_SIZE (an npusim
 *            extension: Dinero takes the size from -maxaccess instead; the
 *            bound keeps one record's replay short).
 * Blank lines are skipped, and `#` starts a comment that runs to the end of
 * the line (npusim extensions too). Anything else after the record is an
 * error (Dinero ignores it; being strict catches truncated or mixed files).
 *
 * The reader works on a memory buffer (not NUL-terminated; NUL bytes are just
 * invalid characters), never allocates and never reads outside it. */
#ifndef NPUSIM_DIN_H
#define NPUSIM_DIN_H

#include "npusim/export.h"

#include <stddef.h>
#include <stdint.h>

#include "npusim/errors.h"
#include "npusim/l2.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { NPU_DIN_MAX_SIZE = 1 << 20 };

typedef enum npu_din_kind {
    NPU_DIN_READ = 0,
    NPU_DIN_WRITE = 1,
    NPU_DIN_IFETCH = 2,
    NPU_DIN_MISC = 3,  /* unknown access type */
    NPU_DIN_FLUSH = 4
} npu_din_kind;

typedef struct npu_din_record {
    npu_din_kind kind;
    uint64_t addr;  /* 0 for a flush without an address */
    unsigned size;  /* bytes; 0 when the record gives none */
    int line;       /* 1-based line of the record in the buffer */
} npu_din_record;

typedef struct npu_din_reader {
    const char *name; /* for diagnostics; not copied */
    const char *buf;
    size_t len, pos;
    int line;         /* line of buf[pos] */
} npu_din_reader;

NPU_API void npu_din_reader_init(npu_din_reader *rd, const char *name, const char *buf, size_t len);

/* Reads the next record: returns 1 with *rec filled, 0 at the end of the
 * buffer, or NPU_ESYNTAX with `name:line:col: message` in diag (may be NULL).
 * After an error the reader stands at the next line, so a caller may go on. */
NPU_API int npu_din_next(npu_din_reader *rd, npu_din_record *rec, npu_diag *diag);

/* ---- replay ---------------------------------------------------------- */

typedef struct npu_din_replay_config {
    unsigned default_size; /* bytes of a record without a size (0 means 4) */
    unsigned issue_gap;    /* 0: each access issues when the previous one and its fill
                              have completed (one outstanding, so nothing merges: the
                              hits and misses are Dinero's); n: one access every n
                              cycles, so MSHRs and banks overlap misses */
    uint64_t start_cycle;
    unsigned core, tensor; /* charged in the L2's per-core/per-tensor counters */
} npu_din_replay_config;

typedef struct npu_din_replay_result {
    uint64_t records;                /* records read (all kinds) */
    uint64_t by_kind[5];             /* indexed by npu_din_kind */
    uint64_t accesses;               /* L2 accesses after cutting records at line boundaries */
    uint64_t end_cycle;              /* the last completion */
} npu_din_replay_result;

/* Replays a din buffer through l2 (whose next level the caller has set, e.g.
 * to a DRAM), record by record; a record spanning lines becomes one access
 * per line. The L2's and the next level's stats accumulate as usual.
 * cfg may be NULL (defaults: size 4, blocking, cycle 0, core 0, tensor 0).
 * Returns 0, or NPU_ESYNTAX (diag set) at the first bad record, with the
 * records before it replayed and counted in res: a syntax error
 * (`name:line:col: ...`), or a record whose bytes (its size, else
 * default_size) run past the top of the 64-bit address space
 * (`name:line: 256 bytes at 0xffffffffffffff80 run past ...`). */
NPU_API int npu_l2_replay_din(npu_l2 *l2, const char *name, const char *buf, size_t len,
                              const npu_din_replay_config *cfg, npu_din_replay_result *res, npu_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
