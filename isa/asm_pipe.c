/* `.pipeline` blocks: linear assembly, modulo-scheduled for the machine it
 * runs on (docs/scheduling.md).
 *
 *     .pipeline sC, sT[, trips[, room]]
 *         vld.DT   %x, [s10]            ; one iteration, written as plain
 *         vmax.DT  %y, %x, v31          ; dataflow on virtual registers
 *         vst.DT   %y, [s11]
 *         addvl    s10, s10, 1          ; pointer bumps: addvl or addi
 *         addvl    s11, s11, 1
 *     .endpipeline
 *
 * runs the body sC times (sC is consumed, sT is a scratch register;
 * room, when given, promises that the memory the body touches holds room
 * iterations, so the iterations left over from whole groups may run as one
 * more group, up to room, instead of in written order). A
 * `.pass sN[, scale]` line may end the block: the instructions after it
 * (scalar and DMA, on registers the body does not use) are the pass block,
 * which the kernel runs once a pass, that is once every K iterations, in
 * cycles the body leaves free; sN = K x scale (0 in written order).
 * The prologue, epilogue and written order never run it. The
 * assembler checks the block, then, given a machine, unrolls it K times
 * (K a power of two), modulo-schedules the K iterations at the smallest
 * initiation interval II it finds (Rau's iterative modulo scheduling),
 * allocates physical registers to the values (circular arcs of the
 * II-cycle kernel), and lays out a remainder loop, a prologue, the kernel
 * and an epilogue. Without a machine, or with schedule off, the block is a
 * plain loop in written order.
 *
 * Assumptions a block's author makes (as TI's linear assembly does): memory
 * accesses of different iterations are independent, and a pointer register
 * the block writes is written only by its one bump and read only as the base
 * of memory operands. Everything else is checked. */
#include "asm_internal.h"
#include "sched_simd.h"

#include "isa/sched_version.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    PIPE_MAX_VIRTUALS = 200,
    PIPE_MAX_OPS = 512,       /* instructions of one iteration */
    PIPE_MAX_NODES = 2048,    /* instructions of one unrolled kernel pass */
    PIPE_MAX_UNROLL = 32,
    PIPE_MAX_STREAMS = 8,
    PIPE_MAX_PASS = 32        /* instructions of a .pass block */
};

typedef struct pipe_op {
    npu_insn in;
    unsigned virt; /* bit f: field f (npu_field) holds a virtual number */
    npu_srcloc loc;
} pipe_op;

typedef struct asm_pipe {
    uint32_t file, line;
    uint8_t count_reg, temp_reg;
    double trips;
    unsigned long room; /* 0: none given */
    pipe_op *ops;
    size_t nops, cap;
    char *vname[PIPE_MAX_VIRTUALS];
    char vfile[PIPE_MAX_VIRTUALS]; /* 'v' or 'p' */
    size_t nv;
    /* the .pass block: pass_reg 0 when there is none */
    uint8_t pass_reg;
    int32_t pass_scale;
    pipe_op *pass;
    size_t npass, pass_cap;
} asm_pipe;

void asm_pipe_free(asm_pipe *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nv; i++)
        free(p->vname[i]);
    free(p->ops);
    free(p->pass);
    free(p);
}

/* ---- recording --------------------------------------------------------------- */

static int parse_sreg(asm_ctx *c, asm_lexer *lx, uint8_t *out)
{
    char q[96], cls;
    unsigned num;
    asm_token t = asm_lex_next(lx);
    if (!asm_reg_parse(&t, &cls, &num) || cls != 's' || num >= NPU_NUM_SREGS || num == 0)
        return t.kind == TOK_BAD ? -1
                                 : asm_error(c, t.col, "expected a scalar register s1..s31, found %s",
                                             asm_tok_str(&t, q, sizeof q));
    *out = (uint8_t)num;
    return 0;
}

int asm_pipe_begin(asm_ctx *c, asm_lexer *lx, asm_token directive)
{
    if (c->pipe)
        return asm_error(c, directive.col, ".pipeline blocks do not nest");
    asm_pipe *p = calloc(1, sizeof *p);
    if (!p) {
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    p->file = c->cur.file;
    p->line = c->cur.line;
    p->trips = 256;
    c->pipe = p;
    asm_token comma;
    if (parse_sreg(c, lx, &p->count_reg) < 0)
        return -1;
    comma = asm_lex_next(lx);
    if (!asm_tok_is(&comma, ','))
        return asm_error(c, comma.col, ".pipeline takes the trip-count register and a scratch "
                                       "register: .pipeline sC, sT[, trips[, room]]");
    if (parse_sreg(c, lx, &p->temp_reg) < 0)
        return -1;
    if (p->temp_reg == p->count_reg)
        return asm_error(c, directive.col, "the trip-count and scratch registers must differ");
    comma = asm_lex_next(lx);
    if (asm_tok_is(&comma, ',')) {
        asm_value v;
        int col = asm_lex_peek(lx).col;
        if (asm_parse_expr(lx, &v) < 0)
            return -1;
        double d = v.is_float ? v.d : asm_int_to_double(v.i);
        if (!(d >= 1 && d <= 1e9))
            return asm_error(c, col, "expected trip count must be 1..1e9, not %.9g", d);
        p->trips = d;
        comma = asm_lex_next(lx);
        if (asm_tok_is(&comma, ',')) {
            col = asm_lex_peek(lx).col;
            if (asm_parse_expr(lx, &v) < 0)
                return -1;
            if (v.is_float || v.i < 1 || v.i > 1000000000)
                return asm_error(c, col, "room must be a whole number of iterations, 1..1e9");
            p->room = (unsigned long)v.i;
            comma = asm_lex_next(lx);
        }
    }
    return asm_expect_eol(c, comma);
}

int asm_pipe_pass(asm_ctx *c, asm_lexer *lx, asm_token directive)
{
    asm_pipe *p = c->pipe;
    if (!p)
        return asm_error(c, directive.col, ".pass belongs inside a .pipeline block, after its body");
    if (p->pass_reg)
        return asm_error(c, directive.col, "a .pipeline block has one .pass");
    if (parse_sreg(c, lx, &p->pass_reg) < 0)
        return -1;
    if (p->pass_reg == p->count_reg || p->pass_reg == p->temp_reg)
        return asm_error(c, directive.col, ".pass needs a register the .pipeline loop itself does not use");
    p->pass_scale = 1;
    asm_token comma = asm_lex_next(lx);
    if (asm_tok_is(&comma, ',')) {
        asm_value v;
        int col = asm_lex_peek(lx).col;
        if (asm_parse_expr(lx, &v) < 0)
            return -1;
        if (v.is_float || v.i < 1 || v.i > 65536)
            return asm_error(c, col, ".pass scale must be a whole number 1..65536");
        p->pass_scale = (int32_t)v.i;
        comma = asm_lex_next(lx);
    }
    return asm_expect_eol(c, comma);
}

int asm_pipe_virtual(asm_ctx *c, asm_lexer *lx, char cls, uint8_t *field)
{
    char q[96];
    asm_token t = asm_lex_next(lx);
    if (t.kind != TOK_IDENT)
        return t.kind == TOK_BAD ? -1
                                 : asm_error(c, t.col, "expected a name after '%%', found %s",
                                             asm_tok_str(&t, q, sizeof q));
    asm_pipe *p = c->pipe;
    if (!p)
        return asm_error(c, t.col - 1, "virtual registers (%%name) exist only inside a .pipeline block");
    if (p->pass_reg)
        return asm_error(c, t.col - 1, "a .pass block takes physical registers, not virtual ones (%%name)");
    for (size_t i = 0; i < p->nv; i++) {
        if (strlen(p->vname[i]) == t.len && memcmp(p->vname[i], t.text, t.len) == 0) {
            if (p->vfile[i] != cls)
                return asm_error(c, t.col, "%%%s is a %s register, used here as a %s register",
                                 p->vname[i], p->vfile[i] == 'v' ? "vector" : "predicate",
                                 cls == 'v' ? "vector" : "predicate");
            *field = (uint8_t)i;
            return 0;
        }
    }
    if (p->nv == PIPE_MAX_VIRTUALS)
        return asm_error(c, t.col, "more than %d virtual registers in one .pipeline block",
                         PIPE_MAX_VIRTUALS);
    char *name = asm_strndup(c, t.text, t.len);
    if (!name)
        return -1;
    p->vname[p->nv] = name;
    p->vfile[p->nv] = cls;
    *field = (uint8_t)p->nv++;
    return 0;
}

int asm_pipe_add(asm_ctx *c, const npu_insn *in, unsigned virt, int col)
{
    asm_pipe *p = c->pipe;
    const npu_insn_desc *d = npu_desc((npu_opcode)in->op);
    if (p->pass_reg) {
        if (d->cf != NPU_CF_NONE || (d->cls != NPU_CLASS_SCALAR && d->cls != NPU_CLASS_DMA))
            return asm_error(c, col, "%s is not allowed in a .pass block (straight-line scalar and "
                                   "DMA instructions only)", d->mnemonic);
        if (p->npass == PIPE_MAX_PASS)
            return asm_error(c, col, "more than %d instructions in one .pass block", PIPE_MAX_PASS);
        if (asm_grow(c, (void **)&p->pass, &p->pass_cap, p->npass + 1, sizeof *p->pass) < 0)
            return -1;
        p->pass[p->npass++] = (pipe_op){ *in, 0, { c->cur.file, c->cur.line } };
        return 0;
    }
    if (d->cf != NPU_CF_NONE || d->cls == NPU_CLASS_SYNC || d->cls == NPU_CLASS_DMA)
        return asm_error(c, col, "%s is not allowed inside a .pipeline block (straight-line "
                               "vector, memory and scalar instructions only)",
                         d->mnemonic);
    if (p->nops == PIPE_MAX_OPS)
        return asm_error(c, col, "more than %d instructions in one .pipeline block", PIPE_MAX_OPS);
    if (asm_grow(c, (void **)&p->ops, &p->cap, p->nops + 1, sizeof *p->ops) < 0)
        return -1;
    p->ops[p->nops++] = (pipe_op){ *in, virt, { c->cur.file, c->cur.line } };
    return 0;
}

int asm_pipe_check_closed(asm_ctx *c)
{
    if (!c->pipe)
        return 0;
    return asm_error_at(c, c->pipe->file, c->pipe->line, 1, ".pipeline without .endpipeline");
}

/* ---- analysis: what each instruction reads and writes -------------------------- */

/* A register as the block sees it: file 'v'/'p'/'s', physical or virtual. */
typedef struct pipe_reg {
    char file;
    uint8_t virt;
    uint8_t num;
} pipe_reg;

typedef struct op_info {
    npu_unit unit;
    npu_class cls;
    int def_virt;          /* virtual written, or -1 */
    int uses[6];           /* virtuals read */
    int nuses;
    int is_mem, is_store;
    int base;              /* memory base register */
    int stream;            /* index of the bumped base it uses, or -1 */
    int bump;              /* this op is the bump of stream `bump`, or -1 */
} op_info;

typedef struct stream {
    uint8_t reg;
    int vl;        /* addvl (offsets in vector lengths) or addi (bytes) */
    int32_t delta; /* per iteration */
    size_t op;     /* the bump */
} stream;

typedef struct pipe_block {
    asm_ctx *c;
    asm_pipe *p;
    const npu_asm_machine *m;
    op_info *info;
    stream streams[PIPE_MAX_STREAMS];
    int nstreams;
    int def_op[PIPE_MAX_VIRTUALS];  /* op writing each virtual */
    uint32_t vpool, ppool;          /* physical registers free for values */
    /* body: the ops that are not bumps, in written order */
    size_t body[PIPE_MAX_OPS];
    size_t nbody;
    uint32_t *kernel_cycles;        /* handed to the loop record */
    unsigned written;               /* cycles of one iteration in written order (search_block) */
    unsigned pad_from, pad_leftovers; /* a room: sC rounds up to whole groups from these
                                       counts (emit_scheduled; 0: never) */
    unsigned prologue_iterations;   /* the least count the scheduled code runs */
    size_t *marks;                  /* pcs of the emitted copies of body[0] */
    size_t nmarks, marks_cap;
    /* least_lifetime_sum of the 'v' and 'p' files, once known (min_lifetimes
     * asks up to three times per block; the ops and latencies do not change) */
    long least_sum[2];
    unsigned char least_known[2];
} pipe_block;

static int op_error(pipe_block *b, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int op_error(pipe_block *b, size_t i, const char *fmt, ...)
{
    const pipe_op *o = &b->p->ops[i];
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return asm_error_at(b->c, o->loc.file, o->loc.line, 1, "%s", msg);
}

static const char *unit_name(npu_unit u)
{
    static const char *const names[] = { "scalar", "branch", "valu", "sfu", "lsu", "dma", "sync" };
    return (unsigned)u < NPU_NUM_UNITS ? names[u] : "?";
}

static const char *class_name(npu_class c)
{
    static const char *const names[] = { "scalar", "branch", "vector", "mem", "dma", "sync" };
    return (unsigned)c < NPU_NUM_CLASSES ? names[c] : "?";
}

static const char *mnem(const pipe_op *o) { return npu_desc((npu_opcode)o->in.op)->mnemonic; }

/* The physical scalar registers (s1..s31) an instruction reads (*r) and
 * writes (*w), from the ISA table's operand roles; fields whose bit is set
 * in `virt` (pipe_op.virt) hold virtual registers and do not count. */
static void sreg_masks(const npu_insn *in, unsigned virt, uint32_t *r, uint32_t *w)
{
    const npu_format_desc *f = &npu_format_table[npu_desc((npu_opcode)in->op)->format];
    *r = *w = 0;
    for (unsigned k = 0; k < f->num_operands; k++) {
        const npu_operand_desc *od = &npu_operand_table[f->operands[k]];
        if (od->file != NPU_RF_S || (virt >> od->field & 1))
            continue;
        unsigned num = npu_insn_field(in, (npu_field)od->field);
        if (num == 0)
            continue;
        if (od->access & NPU_ACC_R)
            *r |= 1u << num;
        if (od->access & NPU_ACC_W)
            *w |= 1u << num;
    }
}

/* The .pass block keeps to registers of its own: none the body (or the
 * loop) reads or writes, and it does not write sN, which the loop sets. */
static int check_pass(pipe_block *b)
{
    asm_pipe *p = b->p;
    uint32_t body = 1u << p->count_reg | 1u << p->temp_reg, r, w;
    for (size_t i = 0; i < p->nops; i++) {
        sreg_masks(&p->ops[i].in, p->ops[i].virt, &r, &w);
        body |= r | w;
    }
    for (size_t j = 0; j < p->npass; j++) {
        const pipe_op *o = &p->pass[j];
        sreg_masks(&o->in, 0, &r, &w);
        uint32_t clash = (r | w) & body;
        for (unsigned num = 1; num < 32; num++) {
            if (clash >> num & 1)
                return asm_error_at(b->c, o->loc.file, o->loc.line, 1,
                                    "%s uses s%u, which the .pipeline loop uses: a .pass block keeps to "
                                    "registers of its own", mnem(o), num);
            if ((w >> num & 1) && num == p->pass_reg)
                return asm_error_at(b->c, o->loc.file, o->loc.line, 1,
                                    "%s writes s%u, which .pass sets to the iterations of a pass", mnem(o), num);
        }
    }
    return 0;
}

static int analyse(pipe_block *b)
{
    asm_pipe *p = b->p;
    char name[16];
    b->vpool = 0xffffffffu;
    b->ppool = 0xffu;
    for (size_t v = 0; v < p->nv; v++)
        b->def_op[v] = -1;
    for (size_t i = 0; i < p->nops; i++) {
        const pipe_op *o = &p->ops[i];
        const npu_insn *in = &o->in;
        const npu_insn_desc *d = npu_desc((npu_opcode)in->op);
        const npu_format_desc *f = &npu_format_table[d->format];
        op_info *oi = &b->info[i];
        *oi = (op_info){ .unit = (npu_unit)d->unit, .cls = (npu_class)d->cls, .def_virt = -1,
                         .base = -1, .stream = -1, .bump = -1 };
        int phys_sdef = -1;
        for (unsigned k = 0; k < f->num_operands; k++) {
            const npu_operand_desc *od = &npu_operand_table[f->operands[k]];
            if (od->file != NPU_RF_S && od->file != NPU_RF_V && od->file != NPU_RF_P)
                continue;
            unsigned num = npu_insn_field(in, (npu_field)od->field);
            int virt = (o->virt >> od->field) & 1;
            if (f->operands[k] == NPU_OPK_MEM) {
                oi->is_mem = 1;
                oi->base = (int)num;
            }
            if (virt) {
                if (od->access & NPU_ACC_W)
                    oi->def_virt = (int)num;
                if (od->access & NPU_ACC_R)
                    oi->uses[oi->nuses++] = (int)num;
                continue;
            }
            if (od->file == NPU_RF_V)
                b->vpool &= ~(1u << num);
            if (od->file == NPU_RF_P)
                b->ppool &= ~(1u << num);
            if (od->access & NPU_ACC_W) {
                if (od->file != NPU_RF_S) {
                    snprintf(name, sizeof name, "%c%u", od->file == NPU_RF_V ? 'v' : 'p', num);
                    return op_error(b, i, "%s writes the physical register %s inside a .pipeline "
                                          "block: write a virtual register (%%name)", mnem(o), name);
                }
                phys_sdef = (int)num;
            }
            if (od->file == NPU_RF_S && num != 0 &&
                (num == p->count_reg || num == p->temp_reg)) {
                snprintf(name, sizeof name, "s%u", num);
                return op_error(b, i, "%s uses %s, which the .pipeline loop itself uses", mnem(o),
                                name);
            }
        }
        if (oi->is_mem) { /* a memory instruction that writes no register stores */
            oi->is_store = 1;
            for (unsigned k = 0; k < f->num_operands; k++)
                if (npu_operand_table[f->operands[k]].access & NPU_ACC_W)
                    oi->is_store = 0;
        }
        if (in->pm) {
            if (o->virt & (1u << NPU_FLD_PG))
                oi->uses[oi->nuses++] = in->pg;
            else
                b->ppool &= ~(1u << in->pg);
            if (oi->def_virt >= 0 && !(d->flags & NPU_F_MASK_ZERO))
                return op_error(b, i, "%s is a masked write to a virtual register: its inactive "
                                      "lanes would keep a value from another iteration",
                                mnem(o));
        }
        if (oi->def_virt >= 0) {
            if (b->def_op[oi->def_virt] >= 0)
                return op_error(b, i, "%%%s is written twice in one .pipeline iteration",
                                p->vname[oi->def_virt]);
            b->def_op[oi->def_virt] = (int)i;
        }
        for (int u = 0; u < oi->nuses; u++)
            if (b->def_op[oi->uses[u]] < 0)
                return op_error(b, i, "%%%s is read before it is written in the .pipeline block "
                                      "(values do not carry from one iteration to the next)",
                                p->vname[oi->uses[u]]);
        if (phys_sdef >= 0) {
            int is_bump = (in->op == NPU_OP_ADDVL || in->op == NPU_OP_ADDI) && in->rd == in->rs1 &&
                          in->rd != 0 && in->imm != 0;
            snprintf(name, sizeof name, "s%d", phys_sdef);
            if (!is_bump)
                return op_error(b, i, "%s writes %s: inside a .pipeline block a scalar register "
                                      "is written only by a pointer bump (addvl %s, %s, n or addi)",
                                mnem(o), name, name, name);
            for (int s = 0; s < b->nstreams; s++)
                if (b->streams[s].reg == in->rd)
                    return op_error(b, i, "%s bumps %s a second time in one iteration", mnem(o),
                                    name);
            if (b->nstreams == PIPE_MAX_STREAMS)
                return op_error(b, i, "more than %d pointers bumped in one .pipeline block",
                                PIPE_MAX_STREAMS);
            b->streams[b->nstreams] = (stream){ in->rd, in->op == NPU_OP_ADDVL, in->imm, i };
            oi->bump = b->nstreams++;
        }
    }
    /* Pointers: read only as memory bases, in the bump's units. */
    for (size_t i = 0; i < p->nops; i++) {
        op_info *oi = &b->info[i];
        pipe_op *o = &p->ops[i];
        const npu_format_desc *f = &npu_format_table[npu_desc((npu_opcode)o->in.op)->format];
        for (int s = 0; s < b->nstreams; s++) {
            const stream *st = &b->streams[s];
            if (oi->bump == s)
                continue;
            for (unsigned k = 0; k < f->num_operands; k++) {
                const npu_operand_desc *od = &npu_operand_table[f->operands[k]];
                if (od->file != NPU_RF_S || (o->virt >> od->field) & 1 ||
                    npu_insn_field(&o->in, (npu_field)od->field) != st->reg)
                    continue;
                snprintf(name, sizeof name, "s%u", st->reg);
                if (f->operands[k] != NPU_OPK_MEM)
                    return op_error(b, i, "%s reads the pointer %s, which the block bumps: a "
                                          "bumped pointer may only be a memory base",
                                    mnem(o), name);
                if (o->in.imm != 0 && o->in.vl != st->vl)
                    return op_error(b, i, "%s: the offset from %s must count %s, as its bump does",
                                    mnem(o), name, st->vl ? "vector lengths (N vl)" : "bytes");
                if (st->vl && !npu_format_has_vector_mem((npu_format)npu_desc((npu_opcode)o->in.op)->format))
                    return op_error(b, i, "%s: scalar accesses cannot follow %s, bumped in vector lengths",
                                    mnem(o), name);
                o->in.vl = (uint8_t)st->vl;
                oi->stream = s;
            }
        }
    }
    b->nbody = 0;
    for (size_t i = 0; i < p->nops; i++)
        if (b->info[i].bump < 0)
            b->body[b->nbody++] = i;
    if (b->nbody == 0)
        return asm_error_at(b->c, p->file, p->line, 1, "the .pipeline block has no instructions");
    return check_pass(b);
}

/* ---- the machine -------------------------------------------------------------------- */

/* ---- repeated computations ----------------------------------------------------------- */

/* The fields of an instruction that may hold a virtual register: field f is
 * *virt_field(in, f), its bit in pipe_op.virt is virt_field_id[f]. */
enum { VIRT_FIELDS = 5 };
static const npu_field virt_field_id[VIRT_FIELDS] = { NPU_FLD_RD, NPU_FLD_RS1, NPU_FLD_RS2, NPU_FLD_RS3, NPU_FLD_PG };
static uint8_t *virt_field(npu_insn *in, int f)
{
    uint8_t *fields[VIRT_FIELDS] = { &in->rd, &in->rs1, &in->rs2, &in->rs3, &in->pg };
    return fields[f];
}

/* The block with each repeated computation merged into its first: an
 * instruction identical to an earlier one (opcode, type, immediate, mask and
 * sources, after the merges before it) that writes one virtual register and
 * nothing else computes the same value; a load must also have no store and
 * no bump of its base between the two. A kernel writes such a repeat to
 * read x again late (LIN_X_AGAIN) rather than hold it: the search tries
 * both blocks and keeps the faster, so the repeat costs nothing where
 * registers are plenty. *out shares p's names; free only out->ops.
 * Returns how many instructions were merged (-1: out of memory). */
static int merge_repeats(const pipe_block *b, asm_pipe *out)
{
    const asm_pipe *p = b->p;
    *out = *p;
    out->ops = malloc((p->nops + 1) * sizeof *out->ops);
    if (!out->ops)
        return -1;
    out->cap = p->nops + 1;
    out->nops = 0;
    size_t src[PIPE_MAX_OPS]; /* the op of p each kept op is */
    int map[PIPE_MAX_VIRTUALS];
    for (size_t v = 0; v < p->nv; v++)
        map[v] = (int)v;
    int merged = 0;
    for (size_t i = 0; i < p->nops; i++) {
        pipe_op o = p->ops[i];
        const op_info *oi = &b->info[i];
        for (int f = 0; f < VIRT_FIELDS; f++)
            if (o.virt >> virt_field_id[f] & 1 && *virt_field(&o.in, f) != oi->def_virt)
                *virt_field(&o.in, f) = (uint8_t)map[*virt_field(&o.in, f)];
        const npu_insn_desc *d = npu_desc((npu_opcode)o.in.op);
        int pure = oi->def_virt >= 0 && oi->bump < 0 && !oi->is_store && d->cf == NPU_CF_NONE &&
                   oi->unit != NPU_UNIT_DMA && oi->unit != NPU_UNIT_SYNC;
        int same = -1;
        for (size_t k = out->nops; pure && k-- > 0;) {
            const pipe_op *q = &out->ops[k];
            const op_info *qi = &b->info[src[k]];
            if (oi->is_mem && (qi->is_store || (qi->bump >= 0 && b->streams[qi->bump].reg == oi->base)))
                break; /* memory may have changed since */
            if (q->virt != o.virt || q->in.op != o.in.op || q->in.dt != o.in.dt || q->in.pm != o.in.pm ||
                q->in.vl != o.in.vl || q->in.imm != o.in.imm || qi->def_virt < 0)
                continue;
            npu_insn a = q->in, c = o.in;
            for (int f = 0; f < VIRT_FIELDS; f++) { /* the written fields aside */
                if (q->virt >> virt_field_id[f] & 1 && *virt_field(&a, f) == qi->def_virt)
                    *virt_field(&a, f) = 0xff;
                if (o.virt >> virt_field_id[f] & 1 && *virt_field(&c, f) == oi->def_virt)
                    *virt_field(&c, f) = 0xff;
            }
            if (a.rd == c.rd && a.rs1 == c.rs1 && a.rs2 == c.rs2 && a.rs3 == c.rs3 && a.pg == c.pg) {
                same = qi->def_virt;
                break;
            }
        }
        if (same >= 0) {
            map[oi->def_virt] = same;
            merged++;
            continue;
        }
        src[out->nops] = i;
        out->ops[out->nops++] = o;
    }
    return merged;
}

/* ---- the schedule of one (unroll, II) attempt ----------------------------------------- */

typedef struct node {
    size_t op;       /* index into p->ops */
    unsigned copy;   /* iteration within the kernel pass */
    npu_unit unit;
    npu_class cls;
    unsigned lat, interval;
    int height;
    int placed;
    long t;          /* schedule time, while placed */
    unsigned row;    /* t mod II, while placed */
    long last_t;     /* time of the last placement, for IMS */
    int tried;       /* placed at least once (last_t is valid) */
    int late;        /* 1: no predecessor (a load): placed after its consumers, as late as they
                        allow; 2: a pointer bump, last */
    int writes_v;    /* it writes a vector value (vector_life) */
    unsigned row_key; /* its place in a cycle's emission order (row_order): bumps after the
                         body, then by the lowest slot its class may take */
} node;

typedef struct edge {
    unsigned from, to, lat;
    int vec; /* it carries a vector value its consumer reads (reads_vector) */
} edge;

typedef struct sched {
    pipe_block *b;
    unsigned K, II;
    node *n;
    unsigned nn;         /* K * nbody + nstreams; the loop branch is not a node */
    edge *e;
    unsigned ne;
    unsigned *pred_start, *pred_list; /* CSR of incoming edges */
    unsigned *succ_start, *succ_list;
    /* modulo reservation table, kept up to date by place and unplace so that
     * fits answers from it without recomputing a row */
    unsigned *unit_occ;  /* [unit][row] */
    /* where a node of a unit may start, as bitsets over the rows (for
     * first_fit to jump from one candidate row to the next): bit r of
     * unit_free[unit] is set while none of the rows r .. r + interval - 1
     * (mod II, with repeats) is full; bit r of row_room while the row has a
     * slot left (row_count, row_reserved). occupy keeps unit_free from
     * unit_blocked for a unit of short interval, from unit_full for a long
     * one (LONG_INTERVAL). */
    unsigned *unit_blocked; /* [unit][row]: how many of the rows row .. row + interval - 1
                               the unit has full (short intervals) */
    uint64_t *unit_full; /* [unit][row_words]: the rows the unit has full (long intervals) */
    uint64_t *unit_free; /* [unit][row_words] */
    uint64_t *row_room;  /* [row_words] */
    unsigned row_words;  /* ceil(II / 64) */
    unsigned **row_nodes; unsigned *row_count;
    unsigned *row_cap;   /* [row]: room in row_nodes[row] and row_sorted[row] */
    unsigned **row_sorted; /* each row's nodes in emission order, row_key then id (row_order) */
    unsigned char *row_fit; /* [row][kind]: row_slots_ok's cached answers (FIT_*) */
    unsigned *stream_rows; /* [stream][row]: placed body nodes reading the stream's pointer */
    int *row_pass;       /* [row]: the .pass instruction the row holds (one at most), or -1 */
    unsigned loop_row;
    /* registers, after a successful schedule */
    unsigned stages;
    unsigned U;          /* kernel copies (modulo variable expansion) */
    unsigned expanded;   /* U over the least U its lifetimes need (allocate) */
    unsigned strategy;   /* placement variant (see attempt) */
    unsigned way;        /* the try of attempt that gave it (kept with the schedule) */
    int *reg;            /* [(u K + copy) * nv + virt]: physical register, or -1 */
    unsigned vregs, pregs, max_live;
    unsigned cuts;       /* where the colouring may cut the circle, at most (colour) */
    int crowded;         /* the last colouring had more values live at once than registers */
    unsigned margin;     /* relieve: vector registers kept free below the pool */
    int margin_may_help; /* relieved, coloured without success, not crowded */
    char fail[240];
} sched;

/* The tries of attempt, each a way a schedule can be found: the
 * PIPE_VARIANTS placement variants, then relieved[] (variants placed again
 * for registers, relieve; the last three relieved once more for one
 * register fewer than the pool). A schedule kept across runs names its
 * way. */
enum { PIPE_VARIANTS = 5 };
/* variant 3 kept fewest values live in the measured kernels; 0 helps some
 * (tanh fp16 with SFU latency 30); the swing placement (4) is often the
 * closest to fitting where the others are too far to be searched (gelu_erf
 * fp32 with SFU latency 30: 2 to 6 registers above the pool, summed over
 * the rows, where variants 0 and 3 are 850 to 960 above) */
static const struct {
    unsigned variant, margin;
} relieved[] = { { 0, 0 }, { 3, 0 }, { 4, 0 }, { 0, 1 }, { 3, 1 }, { 4, 1 } };
/* The cuts of the circle the colouring tries (colour): a relieved placement,
 * whose search is long already, tries more (a way's count is part of what
 * its kept schedule reproduces). */
enum { PIPE_CUTS = 8, PIPE_CUTS_RELIEVED = 64 };
#define PIPE_WAYS (PIPE_VARIANTS + (unsigned)(sizeof relieved / sizeof *relieved))

/* A schedule as kept: unroll, II, the try of attempt that found it and,
 * for a relieved one (way >= PIPE_VARIANTS, whose search is long), every
 * node's cycle (nt of them, normalised), which a replay places again. */
typedef struct pipe_choice {
    unsigned K, II, way;
    unsigned nt;
    unsigned *t; /* owned by whoever holds the choice */
} pipe_choice;

static void sched_free(sched *s)
{
    free(s->n);
    free(s->e);
    free(s->pred_start);
    free(s->pred_list);
    free(s->succ_start);
    free(s->succ_list);
    free(s->unit_occ);
    free(s->unit_blocked);
    free(s->unit_free);
    free(s->unit_full);
    free(s->row_room);
    if (s->row_nodes)
        for (unsigned r = 0; r < s->II; r++)
            free(s->row_nodes[r]);
    free(s->row_nodes);
    if (s->row_sorted)
        for (unsigned r = 0; r < s->II; r++)
            free(s->row_sorted[r]);
    free(s->row_sorted);
    free(s->row_fit);
    free(s->stream_rows);
    free(s->row_pass);
    free(s->row_count);
    free(s->row_cap);
    free(s->reg);
    memset(s, 0, sizeof *s);
}

static unsigned node_of(const sched *s, unsigned copy, size_t body_index)
{
    return copy * (unsigned)s->b->nbody + (unsigned)body_index;
}

static int add_edge(sched *s, unsigned from, unsigned to, unsigned lat, unsigned *cap)
{
    if (s->ne == *cap) {
        unsigned nc = *cap ? *cap * 2 : 64;
        edge *e = realloc(s->e, nc * sizeof *e);
        if (!e)
            return -1;
        s->e = e;
        *cap = nc;
    }
    s->e[s->ne++] = (edge){ from, to, lat, 0 };
    return 0;
}

static int build_csr(sched *s)
{
    s->pred_start = calloc(s->nn + 1, sizeof(unsigned));
    s->succ_start = calloc(s->nn + 1, sizeof(unsigned));
    s->pred_list = malloc((s->ne + 1) * sizeof(unsigned));
    s->succ_list = malloc((s->ne + 1) * sizeof(unsigned));
    if (!s->pred_start || !s->succ_start || !s->pred_list || !s->succ_list)
        return -1;
    for (unsigned i = 0; i < s->ne; i++) {
        s->pred_start[s->e[i].to + 1]++;
        s->succ_start[s->e[i].from + 1]++;
    }
    for (unsigned i = 0; i < s->nn; i++) {
        s->pred_start[i + 1] += s->pred_start[i];
        s->succ_start[i + 1] += s->succ_start[i];
    }
    unsigned *pf = calloc(s->nn, sizeof(unsigned)), *sf = calloc(s->nn, sizeof(unsigned));
    if (!pf || !sf) {
        free(pf);
        free(sf);
        return -1;
    }
    for (unsigned i = 0; i < s->ne; i++) {
        s->pred_list[s->pred_start[s->e[i].to] + pf[s->e[i].to]++] = i;
        s->succ_list[s->succ_start[s->e[i].from] + sf[s->e[i].from]++] = i;
    }
    free(pf);
    free(sf);
    return 0;
}

static int reads_vector(const sched *s, const edge *e);

/* Nodes and edges of K iterations: each copy's dataflow (RAW at the
 * producer's latency) and its memory order (a store stays after the
 * accesses before it and before the ones after it); one bump per pointer. */
static int build_graph(sched *s)
{
    pipe_block *b = s->b;
    const npu_asm_machine *m = b->m;
    s->nn = s->K * (unsigned)b->nbody + (unsigned)b->nstreams;
    s->n = calloc(s->nn, sizeof *s->n);
    if (!s->n)
        return -1;
    unsigned cap = 0;
    for (unsigned k = 0; k < s->K; k++)
        for (size_t j = 0; j < b->nbody; j++) {
            const op_info *oi = &b->info[b->body[j]];
            node *n = &s->n[node_of(s, k, j)];
            *n = (node){ .op = b->body[j], .copy = k, .unit = oi->unit, .cls = oi->cls,
                         .lat = m->unit[oi->unit].latency, .interval = m->unit[oi->unit].interval,
                         .last_t = -1, .writes_v = oi->def_virt >= 0 && b->p->vfile[oi->def_virt] == 'v' };
        }
    for (int st = 0; st < b->nstreams; st++) {
        node *n = &s->n[s->K * b->nbody + (unsigned)st];
        *n = (node){ .op = b->streams[st].op, .copy = s->K, .unit = NPU_UNIT_SCALAR, .cls = NPU_CLASS_SCALAR,
                     .lat = m->unit[NPU_UNIT_SCALAR].latency, .interval = m->unit[NPU_UNIT_SCALAR].interval,
                     .last_t = -1 };
    }
    /* body index of each op */
    int idx[PIPE_MAX_OPS];
    for (size_t j = 0; j < b->nbody; j++)
        idx[b->body[j]] = (int)j;
    for (unsigned k = 0; k < s->K; k++)
        for (size_t j = 0; j < b->nbody; j++) {
            const op_info *oi = &b->info[b->body[j]];
            for (int u = 0; u < oi->nuses; u++) {
                int dj = idx[b->def_op[oi->uses[u]]];
                unsigned from = node_of(s, k, (size_t)dj);
                if (add_edge(s, from, node_of(s, k, j), s->n[from].lat, &cap) < 0)
                    return -1;
            }
            if (!oi->is_mem)
                continue;
            for (size_t i = 0; i < j; i++) {
                const op_info *pi = &b->info[b->body[i]];
                if (pi->is_mem && (pi->is_store || oi->is_store) &&
                    add_edge(s, node_of(s, k, i), node_of(s, k, j), 1, &cap) < 0)
                    return -1;
            }
        }
    if (build_csr(s) < 0)
        return -1;
    for (unsigned i = 0; i < s->ne; i++)
        s->e[i].vec = reads_vector(s, &s->e[i]);
    for (unsigned i = 0; i < s->nn; i++) {
        unsigned first = m->issue_width;
        for (unsigned sl = 0; sl < m->issue_width; sl++)
            if (m->slot_classes[sl] >> s->n[i].cls & 1) {
                first = sl;
                break;
            }
        s->n[i].row_key = (unsigned)(i >= s->K * (unsigned)b->nbody) << 16 | first << 8;
    }
    for (unsigned i = 0; i < s->nn; i++)
        s->n[i].late = i >= s->K * (unsigned)b->nbody ? 2
                       : s->strategy == 2 ? 0
                                          : (s->pred_start[i] == s->pred_start[i + 1] &&
                                             s->succ_start[i] != s->succ_start[i + 1]);
    /* heights: longest latency path to the end of the iteration */
    for (unsigned i = s->nn; i-- > 0;) {
        int h = 0;
        for (unsigned q = s->succ_start[i]; q < s->succ_start[i + 1]; q++) {
            const edge *e = &s->e[s->succ_list[q]];
            int v = (int)e->lat + s->n[e->to].height;
            h = v > h ? v : h;
        }
        s->n[i].height = h;
    }
    return 0;
}

/* Resource MII of K iterations: every unit's instance-cycles over its count,
 * and, for every set of classes, its instructions over the slots that accept
 * any of them (the loop branch included). Names the binding one. */
static unsigned res_mii(const pipe_block *b, unsigned K, char *binding, size_t size)
{
    const npu_asm_machine *m = b->m;
    unsigned long unit_cycles[NPU_NUM_UNITS] = { 0 }, cls_ops[NPU_NUM_CLASSES] = { 0 };
    for (size_t j = 0; j < b->nbody; j++) {
        const op_info *oi = &b->info[b->body[j]];
        unit_cycles[oi->unit] += (unsigned long)K * m->unit[oi->unit].interval;
        cls_ops[oi->cls] += K;
    }
    unit_cycles[NPU_UNIT_SCALAR] += (unsigned long)b->nstreams * m->unit[NPU_UNIT_SCALAR].interval;
    cls_ops[NPU_CLASS_SCALAR] += (unsigned long)b->nstreams;
    unit_cycles[NPU_UNIT_BRANCH] += m->unit[NPU_UNIT_BRANCH].interval;
    cls_ops[NPU_CLASS_BRANCH] += 1;
    for (size_t j = 0; j < b->p->npass; j++) { /* the .pass block: once a pass */
        const npu_insn_desc *d = npu_desc((npu_opcode)b->p->pass[j].in.op);
        unit_cycles[d->unit] += m->unit[d->unit].interval;
        cls_ops[d->cls] += 1;
    }
    unsigned best = 1;
    snprintf(binding, size, "none");
    if (b->p->npass && b->p->npass + 1 > best) { /* one a row, none beside the loop branch */
        best = (unsigned)b->p->npass + 1;
        snprintf(binding, size, "the .pass block");
    }
    for (int u = 0; u < NPU_NUM_UNITS; u++) {
        unsigned cnt = m->unit[u].count ? m->unit[u].count : 1;
        unsigned v = (unsigned)((unit_cycles[u] + cnt - 1) / cnt);
        if (v > best) {
            best = v;
            snprintf(binding, size, "unit %s", unit_name((npu_unit)u));
        }
    }
    for (unsigned set = 1; set < (1u << NPU_NUM_CLASSES); set++) {
        unsigned long ops = 0;
        unsigned slots = 0;
        for (int cl = 0; cl < NPU_NUM_CLASSES; cl++)
            if (set >> cl & 1)
                ops += cls_ops[cl];
        for (unsigned sl = 0; sl < m->issue_width; sl++)
            if (m->slot_classes[sl] & set)
                slots++;
        if (!ops)
            continue;
        unsigned v = slots ? (unsigned)((ops + slots - 1) / slots) : 0xffffffu;
        if (v > best) {
            best = v;
            size_t o = (size_t)snprintf(binding, size, "slots");
            for (int cl = 0; cl < NPU_NUM_CLASSES && o < size; cl++)
                if (set >> cl & 1)
                    o += (size_t)snprintf(binding + o, size - o, "%s%s", o > 5 ? "+" : " ",
                                          class_name((npu_class)cl));
        }
    }
    return best;
}

static long mod(long a, long m) { long r = a % m; return r < 0 ? r + m : r; }
static long floor_div(long a, long m) { return (a - mod(a, m)) / m; }

/* Emission order within a cycle: the body's instructions (by the lowest slot
 * their class may take), then the bumps (after every read of their pointer
 * in that cycle), then the loop branch. Returns 0 when in-order issue gives
 * every instruction of the row a slot in that order (rule T8). */
static int row_order(const sched *s, const unsigned *ids, unsigned cnt, int with_loop, unsigned *order)
{
    const npu_asm_machine *m = s->b->m;
    unsigned key[64];
    if (cnt > 64)
        return -1;
    for (unsigned i = 0; i < cnt; i++) {
        key[i] = s->n[ids[i]].row_key;
        order[i] = ids[i];
    }
    for (unsigned i = 1; i < cnt; i++) /* insertion sort: rows are short */
        for (unsigned j = i; j > 0 && (key[j - 1] > key[j] || (key[j - 1] == key[j] && order[j - 1] > order[j])); j--) {
            unsigned tk = key[j]; key[j] = key[j - 1]; key[j - 1] = tk;
            unsigned to = order[j]; order[j] = order[j - 1]; order[j - 1] = to;
        }
    uint32_t taken = 0;
    for (unsigned i = 0; i <= cnt; i++) {
        npu_class cls;
        if (i == cnt) {
            if (!with_loop)
                break;
            cls = NPU_CLASS_BRANCH;
        } else {
            cls = s->n[order[i]].cls;
        }
        unsigned sl = 0;
        while (sl < m->issue_width && ((taken >> sl & 1) || !(m->slot_classes[sl] >> cls & 1)))
            sl++;
        if (sl == m->issue_width)
            return -1;
        taken |= 1u << sl;
    }
    return 0;
}

/* s->row_fit's answers, per row and kind of node (its class; a bump or not) */
enum { FIT_UNKNOWN, FIT_YES, FIT_NO, FIT_DEPENDS };
enum { ROW_FIT_KINDS = 2 * NPU_NUM_CLASSES };

/* The kind of node id: its class and whether it is a bump, which together
 * make its row_key. */
static unsigned row_fit_kind(const sched *s, unsigned id)
{
    return (unsigned)s->n[id].cls * 2 + (id >= s->K * (unsigned)s->b->nbody);
}

static int bump_window_ok(const sched *s, unsigned id, long t)
{
    /* A read of a pointer in the cycles after its bump, before the bump's
     * result is ready, would wait (T2): keep such reads out of those rows. */
    const pipe_block *b = s->b;
    const node *n = &s->n[id];
    unsigned nb = s->K * (unsigned)b->nbody;
    long lat = (long)b->m->unit[NPU_UNIT_SCALAR].latency;
    if (lat <= 1)
        return 1;
    if (id >= nb) {
        /* a read at time t' waits when (t' - t) mod II lies in 1 .. lat - 1,
         * that is when its row is one of the lat - 1 rows after t's */
        const unsigned II = s->II, *reads = &s->stream_rows[(id - nb) * II];
        const long last = lat - 1 < (long)II - 1 ? lat - 1 : (long)II - 1;
        for (long d = 1; d <= last; d++)
            if (reads[mod(t + d, II)])
                return 0;
        return 1;
    }
    int st = b->info[n->op].stream;
    if (st < 0 || !s->n[nb + (unsigned)st].placed)
        return 1;
    long d = mod(t - s->n[nb + (unsigned)st].t, s->II);
    return !(d > 0 && d < lat);
}

/* Whether a node of class cls, added to row `row` at place `at` of its
 * emission order, leaves in-order issue a slot for every instruction of the
 * row (row_order's test, on the row kept sorted). */
static int row_slots_at(const sched *s, unsigned row, npu_class cls, unsigned at)
{
    const npu_asm_machine *m = s->b->m;
    const unsigned *sorted = s->row_sorted[row], cnt = s->row_count[row];
    const int pass = s->row_pass[row];
    uint32_t taken = 0;
    for (unsigned i = 0; i <= cnt + 2; i++) {
        npu_class c;
        if (i == cnt + 2) {
            if (row != s->loop_row)
                break;
            c = NPU_CLASS_BRANCH;
        } else if (i == cnt + 1) {
            if (pass < 0)
                continue;
            c = (npu_class)npu_desc((npu_opcode)s->b->p->pass[pass].in.op)->cls;
        } else {
            c = i == at ? cls : s->n[sorted[i < at ? i : i - 1]].cls;
        }
        unsigned sl = 0;
        while (sl < m->issue_width && ((taken >> sl & 1) || !(m->slot_classes[sl] >> c & 1)))
            sl++;
        if (sl == m->issue_width)
            return 0;
        taken |= 1u << sl;
    }
    return 1;
}

/* Where node id goes in row `row`'s emission order (row_key, then id). */
static unsigned row_place(const sched *s, unsigned row, unsigned id)
{
    const unsigned *sorted = s->row_sorted[row], cnt = s->row_count[row], key = s->n[id].row_key;
    unsigned at = 0;
    while (at < cnt && (s->n[sorted[at]].row_key < key || (s->n[sorted[at]].row_key == key && sorted[at] < id)))
        at++;
    return at;
}

/* row_slots_at for node id, at its place in the row's order. The answer
 * depends only on the node's class, its key (class and kind) and, among
 * the row's nodes of equal key, its id: s->row_fit keeps, per row and
 * (class, kind), the answer when it is the same at every place among the
 * equal keys, until the row changes (place, unplace). */
static int row_slots_ok(sched *s, unsigned row, unsigned id)
{
    const node *n = &s->n[id];
    const unsigned *sorted = s->row_sorted[row], cnt = s->row_count[row];
    unsigned char *fit = &s->row_fit[row * ROW_FIT_KINDS + row_fit_kind(s, id)];
    if (*fit == FIT_UNKNOWN) {
        unsigned lo = 0, hi;
        while (lo < cnt && s->n[sorted[lo]].row_key < n->row_key)
            lo++;
        hi = lo;
        while (hi < cnt && s->n[sorted[hi]].row_key == n->row_key)
            hi++;
        int first = row_slots_at(s, row, n->cls, lo);
        *fit = first ? FIT_YES : FIT_NO;
        for (unsigned at = lo + 1; at <= hi; at++)
            if (row_slots_at(s, row, n->cls, at) != first) {
                *fit = FIT_DEPENDS;
                break;
            }
    }
    if (*fit != FIT_DEPENDS)
        return *fit == FIT_YES;
    return row_slots_at(s, row, n->cls, row_place(s, row, id));
}

/* The instructions a row holds besides the body's: the loop branch, a .pass
 * instruction. */
static unsigned row_reserved(const sched *s, unsigned row)
{
    return (row == s->loop_row) + (s->row_pass[row] >= 0);
}

static inline void bit_put(uint64_t *bits, unsigned i, int on)
{
    if (on)
        bits[i >> 6] |= 1ull << (i & 63);
    else
        bits[i >> 6] &= ~(1ull << (i & 63));
}

/* row_room's bit for the row, after its count changed */
static void room_update(sched *s, unsigned row)
{
    const unsigned cnt = s->row_count[row];
    bit_put(s->row_room, row, cnt < 64 && cnt + 1 + row_reserved(s, row) <= s->b->m->issue_width);
}

/* Whether a node of the unit may start in the row: none of the rows it
 * would hold is full (unit_free). */
static int unit_free_at(const sched *s, unsigned unit, unsigned row)
{
    return (int)(s->unit_free[(size_t)unit * s->row_words + (row >> 6)] >> (row & 63) & 1);
}

static int fits(sched *s, unsigned id, long t)
{
    const node *n = &s->n[id];
    unsigned II = s->II;
    /* bumps stay in the first stage (their offsets assume it) */
    if (id >= s->K * s->b->nbody && t >= (long)II)
        return 0;
    const unsigned row = (unsigned)mod(t, II);
    if (!unit_free_at(s, n->unit, row))
        return 0; /* the unit is full in one of the rows the node would hold */
    unsigned cnt = s->row_count[row];
    if (cnt >= 64 || cnt + 1 + row_reserved(s, row) > s->b->m->issue_width)
        return 0; /* every instruction of a cycle takes a slot of its own */
    if (!row_slots_ok(s, row, id))
        return 0;
    return bump_window_ok(s, id, t);
}

/* The rows from `row` on (step +1) or back (step -1), round the table,
 * to the first whose bit is set in both a and b: their distance (0 ..
 * II - 1), or -1 when no row has both. */
static long next_row(const sched *s, const uint64_t *a, const uint64_t *b, unsigned row, int step)
{
    const unsigned II = s->II, nw = s->row_words;
    if (step > 0) {
        for (unsigned k = 0, w = row >> 6; k <= nw; k++, w = w + 1 == nw ? 0 : w + 1) {
            uint64_t m = a[w] & b[w];
            if (k == 0)
                m &= ~0ull << (row & 63); /* rows from row on */
            else if (k == nw)
                m &= (row & 63) ? ~(~0ull << (row & 63)) : 0; /* back round to row */
            if (m) {
                const unsigned r = w * 64 + (unsigned)__builtin_ctzll(m);
                return r >= row ? (long)(r - row) : (long)(r + II - row);
            }
        }
    } else {
        for (unsigned k = 0, w = row >> 6; k <= nw; k++, w = w == 0 ? nw - 1 : w - 1) {
            uint64_t m = a[w] & b[w];
            if (k == 0)
                m &= (row & 63) == 63 ? ~0ull : ~(~0ull << ((row & 63) + 1)); /* rows up to row */
            else if (k == nw)
                m &= (row & 63) == 63 ? 0 : ~0ull << ((row & 63) + 1); /* back round to row */
            if (m) {
                const unsigned r = w * 64 + 63u - (unsigned)__builtin_clzll(m);
                return r <= row ? (long)(row - r) : (long)(row + II - r);
            }
        }
    }
    return -1;
}

/* The first cycle from `from` to `to` (step +1 or -1, both included) where
 * node id fits: 1 found (*at), 0 none. Rows whose unit is full or that have
 * no slot left are jumped over by the bitsets (next_row); a row with no slot
 * for the node's kind (row_fit) is passed over from the table; fits decides
 * the rest. (Walking every row, each tested in turn, was a third of a
 * search.) */
static int first_fit(sched *s, unsigned id, long from, long to, int step, long *at)
{
    const unsigned II = s->II;
    const uint64_t *free_rows = &s->unit_free[(size_t)s->n[id].unit * s->row_words];
    const unsigned char *row_fit = &s->row_fit[row_fit_kind(s, id)];
    unsigned row = (unsigned)mod(from, II);
    long c = from, left = step > 0 ? to - from + 1 : from - to + 1; /* cycles still to try */
    while (left > 0) {
        const long skip = next_row(s, free_rows, s->row_room, row, step);
        if (skip < 0 || skip >= left)
            return 0;
        c += step * skip;
        left -= skip;
        if (step > 0) /* row + skip or row - skip round the table: skip < II */
            row = row + (unsigned)skip >= II ? row + (unsigned)skip - II : row + (unsigned)skip;
        else
            row = row >= (unsigned)skip ? row - (unsigned)skip : row + II - (unsigned)skip;
        if (row_fit[row * ROW_FIT_KINDS] != FIT_NO && fits(s, id, c)) {
            *at = c;
            return 1;
        }
        c += step;
        left--;
        row = step > 0 ? (row + 1 == II ? 0 : row + 1) : (row == 0 ? II - 1 : row - 1);
    }
    return 0;
}

/* The interval from which occupy finds a unit's free start rows from the
 * runs of its full rows (unit_full) instead of counting each start row's
 * full rows (unit_blocked): counting costs the rows that turn x the
 * interval, quadratic in it; the runs cost a scan of the words round the
 * node, more than counting the one or two rows a short interval turns. */
enum { LONG_INTERVAL = 16 };

/* The distance from `row` on, round the table, to the first row whose bit
 * in `bits` (II of them) is `want`: 0 .. II - 1, or II when none is. */
static unsigned next_bit(const uint64_t *bits, unsigned II, unsigned row, int want)
{
    const unsigned nw = (II + 63) / 64;
    for (unsigned k = 0, w = row >> 6; k <= nw; k++, w = w + 1 == nw ? 0 : w + 1) {
        uint64_t m = want ? bits[w] : ~bits[w];
        if (w == nw - 1 && (II & 63))
            m &= ~(~0ull << (II & 63)); /* no row past the table's end */
        if (k == 0)
            m &= ~0ull << (row & 63); /* rows from row on */
        else if (k == nw)
            m &= (row & 63) ? ~(~0ull << (row & 63)) : 0; /* back round to row */
        if (m) {
            const unsigned r = w * 64 + (unsigned)__builtin_ctzll(m);
            return r >= row ? r - row : r + II - row;
        }
    }
    return II;
}

/* Sets (on) or clears the bits of the n rows from `row`, round the table
 * (n <= II), a word at a time. */
static void bits_range(uint64_t *bits, unsigned II, unsigned row, unsigned n, int on)
{
    while (n > 0) {
        const unsigned end = II - row < n ? II : row + n; /* to the table's end at most */
        n -= end - row;
        while (row < end) {
            const unsigned bit = row & 63, take = 64 - bit < end - row ? 64 - bit : end - row;
            const uint64_t m = (take == 64 ? ~0ull : (1ull << take) - 1) << bit;
            bits[row >> 6] = on ? bits[row >> 6] | m : bits[row >> 6] & ~m;
            row += take;
        }
        row = 0;
    }
}

/* unit_free of a long-interval unit's `len` start rows from `from` (round
 * the table, len <= II), found again from its full rows: a start row is
 * free while none of the interval's rows from it (round the table, with
 * repeats) is full, so each run of full rows takes the starts from an
 * interval before its first row to its last. A run at a time, a word at a
 * time. */
static void free_starts(sched *s, unsigned unit, unsigned from, unsigned len)
{
    const unsigned II = s->II, interval = s->b->m->unit[unit].interval;
    const uint64_t *full = &s->unit_full[(size_t)unit * s->row_words];
    uint64_t *free_rows = &s->unit_free[(size_t)unit * s->row_words];
    bits_range(free_rows, II, from, len, 1);
    /* offsets from `from`: the starts are 0 .. len - 1, the rows they see 0 .. seen - 1 */
    const unsigned long seen = (unsigned long)len + interval - 1;
    for (unsigned long x = 0; x < seen;) {
        const unsigned d = next_bit(full, II, (unsigned)((from + x) % II), 1);
        if (d == II)
            return; /* no row is full */
        x += d;
        if (x >= seen)
            return;
        const unsigned run = next_bit(full, II, (unsigned)((from + x) % II), 0);
        if (run == II) { /* every row is full */
            bits_range(free_rows, II, from, len, 0);
            return;
        }
        /* rows x .. x + run - 1 are full: starts x - interval + 1 .. x + run - 1 see them */
        const unsigned long lo = x + 1 > interval ? x + 1 - interval : 0, hi = x + run < len ? x + run : len;
        if (lo < hi)
            bits_range(free_rows, II, (unsigned)((from + lo) % II), (unsigned)(hi - lo), 0);
        x += run;
    }
}

/* occupy for a unit of long interval (LONG_INTERVAL): its full rows are
 * kept as bits (unit_full), and the start rows round the rows that turned
 * found again from their runs (free_starts). */
static void occupy_long(sched *s, unsigned unit, unsigned row, unsigned len, int delta)
{
    const unsigned II = s->II, count = s->b->m->unit[unit].count, interval = s->b->m->unit[unit].interval;
    unsigned *occ = &s->unit_occ[unit * II];
    uint64_t *full = &s->unit_full[(size_t)unit * s->row_words];
    if (len > II) { /* rows repeat: one at a time */
        for (unsigned d = 0, r = row; d < len; d++, r = r + 1 == II ? 0 : r + 1) {
            const int was_full = occ[r] >= count;
            occ[r] += (unsigned)delta;
            if ((occ[r] >= count) != was_full)
                bit_put(full, r, !was_full);
        }
        free_starts(s, unit, 0, II);
        return;
    }
    /* rows do not repeat: a row turned where it now stands at the
     * threshold, found a word of rows at a time */
    const unsigned at = delta > 0 ? count : count - 1;
    unsigned turned = 0, first = 0, last = 0; /* whether a row turned, the first and last offset that did */
    for (unsigned done = 0, r = row; done < len; r = 0) {
        const unsigned end = II - r < len - done ? II : r + (len - done);
        for (unsigned i = r; i < end;) {
            const unsigned w = i >> 6, stop = end < (w + 1) * 64 ? end : (w + 1) * 64;
            uint64_t m = 0;
            for (unsigned j = i; j < stop; j++) {
                occ[j] += (unsigned)delta;
                m |= (uint64_t)(occ[j] == at) << (j & 63);
            }
            if (m) {
                full[w] ^= m;
                last = done + (w * 64 + 63u - (unsigned)__builtin_clzll(m)) - r;
                first = turned ? first : done + (w * 64 + (unsigned)__builtin_ctzll(m)) - r;
                turned = 1;
            }
            i = stop;
        }
        done += end - r;
    }
    if (!turned)
        return;
    const unsigned long starts = (unsigned long)(last - first) + interval; /* the start rows that see one */
    if (starts >= II)
        free_starts(s, unit, 0, II);
    else
        free_starts(s, unit, (unsigned)mod((long)row + (long)first - (long)interval + 1, II), (unsigned)starts);
}

/* Adds delta (+1 or -1) to the unit's occupancy of the len rows from
 * `row` (round the table, with repeats) and keeps its start rows' test
 * (unit_free) up to date. A row that turns full or stops being full
 * changes the test of the interval's start rows up to it: a unit of short
 * interval counts, per start row, the full rows it would hold
 * (unit_blocked); a long one finds them from the runs of its full rows
 * (occupy_long), since a node of interval 4,000 turns 4,000 rows and
 * counting them one by one made a search quadratic in the interval. */
static inline void occupy(sched *s, unsigned unit, unsigned row, unsigned len, int delta)
{
    const unsigned II = s->II, count = s->b->m->unit[unit].count, interval = s->b->m->unit[unit].interval;
    if (interval >= LONG_INTERVAL) {
        occupy_long(s, unit, row, len, delta);
        return;
    }
    unsigned *occ = &s->unit_occ[unit * II], *blocked = &s->unit_blocked[unit * II];
    uint64_t *free_rows = &s->unit_free[(size_t)unit * s->row_words];
    const unsigned step = delta > 0 ? 1u : -1u;
    for (unsigned d = 0, r = row; d < len; d++, r = r + 1 == II ? 0 : r + 1) {
        const int was_full = occ[r] >= count;
        occ[r] += step;
        if ((occ[r] >= count) == was_full)
            continue;
        for (unsigned k = 0, start = r; k < interval; k++, start = start ? start - 1 : II - 1) {
            blocked[start] += step; /* start is r - k, mod II */
            bit_put(free_rows, start, blocked[start] == 0);
        }
    }
}

/* Room for one more node in the row's two lists, grown by doubling (a
 * realloc per placement was a tenth of a search). */
static int row_room(sched *s, unsigned row)
{
    const unsigned cap = s->row_cap[row];
    if (s->row_count[row] < cap)
        return 0;
    const unsigned want = cap ? 2 * cap : 8;
    unsigned *nodes = realloc(s->row_nodes[row], want * sizeof *nodes);
    if (!nodes)
        return -1;
    s->row_nodes[row] = nodes;
    unsigned *sorted = realloc(s->row_sorted[row], want * sizeof *sorted);
    if (!sorted)
        return -1;
    s->row_sorted[row] = sorted;
    s->row_cap[row] = want;
    return 0;
}

static void row_add(unsigned *r, unsigned cnt, unsigned at, unsigned id)
{
    memmove(r + at + 1, r + at, (cnt - at) * sizeof *r);
    r[at] = id;
}

static int place(sched *s, unsigned id, long t)
{
    node *n = &s->n[id];
    unsigned II = s->II, row = (unsigned)mod(t, II), cnt = s->row_count[row];
    const unsigned at = row_place(s, row, id);
    if (row_room(s, row) < 0)
        return -1;
    row_add(s->row_nodes[row], cnt, cnt, id);
    row_add(s->row_sorted[row], cnt, at, id);
    s->row_count[row]++;
    room_update(s, row);
    memset(&s->row_fit[row * ROW_FIT_KINDS], FIT_UNKNOWN, ROW_FIT_KINDS);
    occupy(s, n->unit, row, n->interval, 1);
    int st = id < s->K * s->b->nbody ? s->b->info[n->op].stream : -1;
    if (st >= 0)
        s->stream_rows[(unsigned)st * II + row]++;
    n->placed = 1;
    n->tried = 1;
    n->t = t;
    n->row = row;
    n->last_t = t;
    return 0;
}

static void unplace(sched *s, unsigned id)
{
    node *n = &s->n[id];
    unsigned II = s->II, row = (unsigned)mod(n->t, II);
    occupy(s, n->unit, row, n->interval, -1);
    int st = id < s->K * s->b->nbody ? s->b->info[n->op].stream : -1;
    if (st >= 0)
        s->stream_rows[(unsigned)st * II + row]--;
    unsigned *r = s->row_nodes[row], *sorted = s->row_sorted[row], cnt = s->row_count[row];
    for (unsigned i = 0; i < cnt; i++)
        if (sorted[i] == id) {
            memmove(sorted + i, sorted + i + 1, (cnt - i - 1) * sizeof *sorted);
            break;
        }
    for (unsigned i = 0; i < cnt; i++)
        if (r[i] == id) {
            r[i] = r[--s->row_count[row]];
            break;
        }
    room_update(s, row);
    memset(&s->row_fit[row * ROW_FIT_KINDS], FIT_UNKNOWN, ROW_FIT_KINDS);
    n->placed = 0;
}

/* The .pass block's instructions take their rows before the body is
 * placed: in written order, one a row, spread over the rows before the loop
 * branch's, each at least its producers' latencies after them. 1, or 0
 * when they do not fit the II; -1 out of memory (s->row_pass NULL). */
static int reserve_pass(sched *s)
{
    const unsigned II = s->II;
    const asm_pipe *p = s->b->p;
    const npu_asm_machine *m = s->b->m;
    s->row_pass = malloc(II * sizeof *s->row_pass);
    if (!s->row_pass)
        return -1;
    for (unsigned r = 0; r < II; r++)
        s->row_pass[r] = -1;
    long prev = -1, ready[32] = { 0 };
    for (size_t j = 0; j < p->npass; j++) {
        const npu_insn_desc *d = npu_desc((npu_opcode)p->pass[j].in.op);
        uint32_t r, w;
        sreg_masks(&p->pass[j].in, 0, &r, &w);
        long row = (long)(j * (II - 1) / p->npass);
        row = row > prev + 1 ? row : prev + 1;
        for (unsigned num = 1; num < 32; num++)
            if ((r >> num & 1) && ready[num] > row)
                row = ready[num];
        while (row < (long)II - 1 && !unit_free_at(s, d->unit, (unsigned)row))
            row++;
        if (row >= (long)II - 1)
            return 0;
        occupy(s, d->unit, (unsigned)row, m->unit[d->unit].interval, 1);
        s->row_pass[row] = (int)j;
        prev = row;
        for (unsigned num = 1; num < 32; num++)
            if (w >> num & 1)
                ready[num] = row + (long)m->unit[d->unit].latency;
    }
    return 1;
}

/* An empty modulo reservation table holding the loop branch in the last
 * row and the .pass block (reserve_pass). 0: those alone do not fit this II. */
static int mrt_init(sched *s)
{
    unsigned II = s->II;
    const npu_asm_machine *m = s->b->m;
    s->unit_occ = calloc((size_t)NPU_NUM_UNITS * II, sizeof(unsigned));
    s->unit_blocked = calloc((size_t)NPU_NUM_UNITS * II, sizeof(unsigned));
    s->row_nodes = calloc(II, sizeof(unsigned *));
    s->row_sorted = calloc(II, sizeof(unsigned *));
    s->row_count = calloc(II, sizeof(unsigned));
    s->row_cap = calloc(II, sizeof(unsigned));
    s->stream_rows = calloc((size_t)s->b->nstreams * II + 1, sizeof(unsigned));
    s->row_fit = calloc((size_t)II * ROW_FIT_KINDS, 1); /* FIT_UNKNOWN */
    s->row_words = (II + 63) / 64;
    s->unit_free = calloc((size_t)NPU_NUM_UNITS * s->row_words, sizeof(uint64_t));
    s->unit_full = calloc((size_t)NPU_NUM_UNITS * s->row_words, sizeof(uint64_t));
    s->row_room = calloc(s->row_words, sizeof(uint64_t));
    if (!s->unit_free || !s->unit_full || !s->row_room)
        return -1;
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
        for (unsigned r = 0; r < II; r++)
            bit_put(&s->unit_free[(size_t)u * s->row_words], r, 1);
    if (!s->unit_occ || !s->unit_blocked || !s->row_nodes || !s->row_sorted || !s->row_count || !s->row_cap ||
        !s->stream_rows || !s->row_fit)
        return -1;
    s->loop_row = II - 1;
    occupy(s, NPU_UNIT_BRANCH, s->loop_row, m->unit[NPU_UNIT_BRANCH].interval, 1); /* the loop branch */
    if (reserve_pass(s) <= 0)
        return s->row_pass ? 0 : -1;
    for (unsigned r = 0; r < II; r++)
        room_update(s, r);
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
        for (unsigned r = 0; r < II; r++)
            if (s->unit_occ[u * II + r] > s->b->m->unit[u].count)
                return 0;
    return 1;
}

/* IMS' priority, a tuple compared in order: iteration by iteration (so each
 * one's chain is placed whole and its values live briefly), highest first
 * within one (strategy 3: every iteration's highest first); bumps last;
 * ties, the lower node id. */
typedef struct prio {
    long k[4];
    unsigned id;
} prio;

static int prio_cmp(const void *x, const void *y)
{
    const prio *a = x, *b = y;
    for (int i = 0; i < 4; i++)
        if (a->k[i] != b->k[i])
            return a->k[i] < b->k[i] ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int ims_run(sched *s, const unsigned *order, unsigned *pos, unsigned *evict, uint64_t *unplaced);

static int cmp_unsigned(const void *x, const void *y)
{
    const unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;
    return (a > b) - (a < b);
}

/* Rau's iterative modulo scheduling: highest node first, at the earliest
 * cycle its placed predecessors allow and a free row within II of it; when
 * no row is free, it takes one and evicts what conflicts. */
static int ims(sched *s)
{
    int r0 = mrt_init(s);
    if (r0 <= 0)
        return r0;
    /* the priority order, and each node's place in it */
    prio *pr = malloc(s->nn * sizeof *pr);
    unsigned *order = malloc(s->nn * sizeof *order), *pos = malloc(s->nn * sizeof *pos);
    unsigned *evict = malloc(s->nn * sizeof *evict);
    uint64_t *unplaced = malloc(((s->nn + 63) / 64) * sizeof *unplaced);
    int r = -1;
    if (pr && order && pos && evict && unplaced) {
        for (unsigned i = 0; i < s->nn; i++) {
            const node *n = &s->n[i];
            pr[i] = (prio){ { n->late, s->strategy != 3 ? (long)n->copy : 0, -(long)n->height, n->copy }, i };
        }
        qsort(pr, s->nn, sizeof *pr, prio_cmp);
        for (unsigned i = 0; i < s->nn; i++) {
            order[i] = pr[i].id;
            pos[pr[i].id] = i;
        }
        for (unsigned w = 0; w < (s->nn + 63) / 64; w++)
            unplaced[w] = ~0ull;
        r = ims_run(s, order, pos, evict, unplaced);
    }
    free(unplaced);
    free(pr);
    free(order);
    free(pos);
    free(evict);
    return r;
}

/* unplaced: a bit per place in the order, set while its node is not
 * placed (all set on entry), so the first unplaced node is found a word at a
 * time. */
static int ims_run(sched *s, const unsigned *order, unsigned *pos, unsigned *evict, uint64_t *unplaced)
{
    unsigned II = s->II;
    long budget = (long)s->nn * 6 + 64;
    unsigned left = s->nn;
    unsigned lo = 0; /* every node before order[lo] is placed */
#define IMS_UNPLACE(i)                                                                        \
    (unplace(s, (i)), unplaced[pos[(i)] >> 6] |= 1ull << (pos[(i)] & 63),                     \
     lo = pos[(i)] < lo ? pos[(i)] : lo, left++)
    while (left > 0) {
        if (budget-- <= 0)
            return 0; /* IMS's budget: this II is given up */
        {
            unsigned w = lo >> 6;
            uint64_t m = unplaced[w] & (~0ull << (lo & 63));
            while (!m) /* left > 0: some node is unplaced */
                m = unplaced[++w];
            lo = w * 64 + (unsigned)__builtin_ctzll(m);
        }
        unsigned id = order[lo]; /* the first unplaced in priority order */
        node *n = &s->n[id];
        /* iteration k of the pass starts no earlier than k II / K: the
         * iterations spread evenly over the pass, as one iteration every
         * II / K cycles would */
        long estart = id < s->K * (unsigned)s->b->nbody && s->strategy != 1 ? (long)n->copy * (long)II / (long)s->K : 0;
        for (unsigned q = s->pred_start[id]; q < s->pred_start[id + 1]; q++) {
            const edge *e = &s->e[s->pred_list[q]];
            if (s->n[e->from].placed) {
                long v = s->n[e->from].t + (long)e->lat;
                estart = v > estart ? v : estart;
            }
        }
        long t = 0, latest = LONG_MAX;
        int found = 0;
        if (n->late == 1)
            for (unsigned q = s->succ_start[id]; q < s->succ_start[id + 1]; q++) {
                const edge *e = &s->e[s->succ_list[q]];
                if (s->n[e->to].placed && s->n[e->to].t - (long)e->lat < latest)
                    latest = s->n[e->to].t - (long)e->lat;
            }
        if (latest != LONG_MAX) {
            found = first_fit(s, id, latest, latest - (long)II + 1, -1, &t);
            if (!found)
                estart = latest;
        } else {
            found = first_fit(s, id, estart, estart + (long)II - 1, 1, &t);
        }
        if (!found) {
            t = (!n->tried || estart > n->last_t) ? estart : n->last_t + 1;
            if (id >= s->K * s->b->nbody)
                t = mod(t, II);
            /* evict what shares the row's slots or the unit's rows, lowest id first */
            unsigned row = (unsigned)mod(t, II), nevict = 0;
            for (unsigned i = 0; i < s->row_count[row]; i++)
                evict[nevict++] = s->row_nodes[row][i];
            /* the unit's rows: o holds o->row .. + o->interval - 1, n would hold
             * row .. + n->interval - 1 (mod II); they meet when n starts within
             * o's or wraps round into it. Nodes of one unit share its interval I,
             * so o->row = row - delta with delta < I or delta > II - I. */
            const unsigned I = n->interval, near = I < II ? I : II, far = I > II ? 0 : II - I + 1;
            for (unsigned delta = 1; delta < II; delta++) {
                if (delta >= near && delta < far) {
                    delta = far - 1; /* rows too far from row on both sides */
                    continue;
                }
                const unsigned r = row >= delta ? row - delta : row + II - delta;
                for (unsigned i = 0; i < s->row_count[r]; i++) {
                    const node *o = &s->n[s->row_nodes[r][i]];
                    if (o->unit == n->unit && (delta < o->interval || delta + n->interval > II))
                        evict[nevict++] = s->row_nodes[r][i];
                }
            }
            qsort(evict, nevict, sizeof *evict, cmp_unsigned);
            for (unsigned i = 0; i < nevict; i++)
                IMS_UNPLACE(evict[i]);
            if (!fits(s, id, t))
                return 0; /* cannot fit even alone: this II is infeasible */
        }
        if (place(s, id, t) < 0)
            return -1;
        unplaced[pos[id] >> 6] &= ~(1ull << (pos[id] & 63));
        left--;
        /* successors now too early leave the schedule */
        for (unsigned q = s->succ_start[id]; q < s->succ_start[id + 1]; q++) {
            const edge *e = &s->e[s->succ_list[q]];
            if (s->n[e->to].placed && s->n[e->to].t < t + (long)e->lat)
                IMS_UNPLACE(e->to);
        }
    }
#undef IMS_UNPLACE
    return 1;
}

/* Swing modulo scheduling's order and placement (Llosa et al.), for the
 * acyclic body of each iteration copy: starting from its deepest
 * instruction, sweeps alternate bottom-up (predecessors of what is ordered,
 * deepest first) and top-down (successors, highest first), so each
 * instruction, when placed, has only its consumers placed (it goes as late
 * as they allow) or only its producers (as early as they allow): every value
 * is placed next to an end of its lifetime. No eviction: when an
 * instruction finds no row within II cycles of its window, the attempt
 * fails. */
/* Places id at the first cycle from `from` to `to` (step +1 or -1) whose rows
 * it fits: 1 placed, 0 none fits, -1 out of memory. */
static int place_first_fit(sched *s, unsigned id, long from, long to, int step)
{
    long c;
    if (!first_fit(s, id, from, to, step, &c))
        return 0;
    return place(s, id, c) < 0 ? -1 : 1;
}

/* Makes v's predecessors (up) or successors candidates for the order. */
static void sms_neighbours(const sched *s, unsigned char *state, unsigned v, int up)
{
    const unsigned *ls = up ? s->pred_start : s->succ_start;
    const unsigned *ll = up ? s->pred_list : s->succ_list;
    for (unsigned q = ls[v]; q < ls[v + 1]; q++) {
        const edge *e = &s->e[ll[q]];
        unsigned w = up ? e->from : e->to;
        if (state[w] == 0)
            state[w] = 1;
    }
}

static int sms(sched *s)
{
    const unsigned II = s->II, nb = s->K * (unsigned)s->b->nbody;
    int r0 = mrt_init(s);
    if (r0 <= 0)
        return r0;
    long *depth = calloc(s->nn, sizeof *depth);
    unsigned *order = malloc(nb * sizeof *order);
    unsigned char *state = calloc(nb, 1); /* 1 candidate, 2 ordered */
    int ok = depth && order && state ? 1 : -1;
    /* depth: the longest latency path from the iteration's start; the graph's
     * nodes are in program order within a copy, so one pass suffices */
    for (unsigned i = 0; ok > 0 && i < nb; i++)
        for (unsigned q = s->pred_start[i]; q < s->pred_start[i + 1]; q++) {
            const edge *e = &s->e[s->pred_list[q]];
            long v = depth[e->from] + (long)e->lat;
            depth[i] = v > depth[i] ? v : depth[i];
        }
    unsigned no = 0;
    const unsigned per = (unsigned)s->b->nbody;
    for (unsigned k = 0; ok > 0 && k < s->K; k++) {
        const unsigned lo = k * per, hi = lo + per;
        for (;;) {
            unsigned start = hi;
            for (unsigned i = lo; i < hi; i++)
                if (state[i] != 2 && (start == hi || depth[i] > depth[start]))
                    start = i;
            if (start == hi)
                break;
            state[start] = 1;
            int up = 1;
            for (int idle = 0; idle < 2;) {
                unsigned got = 0;
                for (;;) {
                    unsigned v = hi;
                    for (unsigned i = lo; i < hi; i++)
                        if (state[i] == 1 &&
                            (v == hi || (up ? depth[i] > depth[v] : s->n[i].height > s->n[v].height)))
                            v = i;
                    if (v == hi)
                        break;
                    state[v] = 2;
                    order[no++] = v;
                    got++;
                    sms_neighbours(s, state, v, up);
                }
                /* turn: the other side of everything ordered so far */
                up = !up;
                for (unsigned i = lo; i < hi; i++)
                    if (state[i] == 2)
                        sms_neighbours(s, state, i, up);
                idle = got ? 0 : idle + 1;
            }
        }
    }
    for (unsigned x = 0; ok > 0 && x < no; x++) {
        const unsigned id = order[x];
        const node *n = &s->n[id];
        long early = LONG_MIN, late = LONG_MAX;
        for (unsigned q = s->pred_start[id]; q < s->pred_start[id + 1]; q++) {
            const edge *e = &s->e[s->pred_list[q]];
            if (s->n[e->from].placed && s->n[e->from].t + (long)e->lat > early)
                early = s->n[e->from].t + (long)e->lat;
        }
        for (unsigned q = s->succ_start[id]; q < s->succ_start[id + 1]; q++) {
            const edge *e = &s->e[s->succ_list[q]];
            if (s->n[e->to].placed && s->n[e->to].t - (long)e->lat < late)
                late = s->n[e->to].t - (long)e->lat;
        }
        if (late == LONG_MAX) {
            /* a copy's first instruction starts k II / K into the pass */
            long from = early != LONG_MIN ? early : depth[id] + (long)n->copy * (long)II / (long)s->K;
            ok = place_first_fit(s, id, from, from + (long)II - 1, 1);
        } else if (early == LONG_MIN) {
            ok = place_first_fit(s, id, late, late - (long)II + 1, -1);
        } else {
            ok = place_first_fit(s, id, early, late < early + (long)II - 1 ? late : early + (long)II - 1, 1);
        }
    }
    for (unsigned id = nb; ok > 0 && id < s->nn; id++) /* the bumps, in the first stage */
        ok = place_first_fit(s, id, 0, (long)II - 1, 1);
    free(depth);
    free(order);
    free(state);
    return ok;
}

/* Lifetimes: IMS places every node as early as it can, so a value can wait
 * long for a consumer that the unit's other work pushed late. Moving each
 * node (successors first) to the latest cycle its successors and the rows
 * allow, except stores, which end values, keeps each value close to its
 * use (the stretch reduction of lifetime-sensitive modulo schedulers). */
static int stretch(sched *s)
{
    unsigned nb = s->K * (unsigned)s->b->nbody;
    for (unsigned i = nb; i-- > 0;) {
        node *n = &s->n[i];
        if (s->b->info[n->op].is_store || s->succ_start[i] == s->succ_start[i + 1])
            continue;
        long latest = LONG_MAX;
        for (unsigned q = s->succ_start[i]; q < s->succ_start[i + 1]; q++) {
            const edge *e = &s->e[s->succ_list[q]];
            long v = s->n[e->to].t - (long)e->lat;
            latest = v < latest ? v : latest;
        }
        if (latest <= n->t)
            continue;
        /* Moving later shortens the node's own value (vector or predicate)
         * and lengthens each vector input it reads last: no move that
         * lengthens more values than it shortens. A compare that reads one
         * vector moves next to its select (its input's producer, visited
         * next, can then follow): predicates are the scarcer file (geglu
         * and the erf GELUs at SFU latency 30 ran out of them). */
        const op_info *oi = &s->b->info[n->op];
        int gain = oi->def_virt >= 0;
        for (int u = 0; u < oi->nuses; u++) {
            unsigned v = (unsigned)oi->uses[u];
            if (s->b->p->vfile[v] != 'v')
                continue;
            long other = -1; /* the latest other reader of this input (same iteration) */
            const unsigned lo = n->copy * (unsigned)s->b->nbody, hi = lo + (unsigned)s->b->nbody;
            for (unsigned j = lo; j < hi; j++) { /* the nodes of i's iteration */
                if (j == i)
                    continue;
                const op_info *oj = &s->b->info[s->n[j].op];
                for (int w = 0; w < oj->nuses; w++)
                    if ((unsigned)oj->uses[w] == v && s->n[j].t > other)
                        other = s->n[j].t;
            }
            if (other < latest)
                gain--;
        }
        if (gain < 0)
            continue;
        long old = n->t;
        unplace(s, i);
        long t;
        if (!first_fit(s, i, latest, old + 1, -1, &t))
            t = old;
        if (place(s, i, t) < 0)
            return -1;
    }
    return 0;
}

/* Whether edge e carries a vector value its consumer reads. */
static int reads_vector(const sched *s, const edge *e)
{
    const pipe_block *b = s->b;
    const unsigned nb = s->K * (unsigned)b->nbody;
    if (e->from >= nb || e->to >= nb)
        return 0;
    const op_info *d = &b->info[s->n[e->from].op], *u = &b->info[s->n[e->to].op];
    if (d->def_virt < 0 || b->p->vfile[d->def_virt] != 'v')
        return 0;
    for (int k = 0; k < u->nuses; k++)
        if (u->uses[k] == d->def_virt)
            return 1;
    return 0;
}

/* The cycles node d's vector value holds its register (0: it writes none). */
static long vector_life(const sched *s, unsigned d)
{
    const node *n = &s->n[d];
    if (!n->writes_v)
        return 0;
    long end = n->t + (long)n->lat - 1;
    for (unsigned q = s->succ_start[d]; q < s->succ_start[d + 1]; q++) {
        const edge *e = &s->e[s->succ_list[q]];
        if (e->vec && s->n[e->to].t > end)
            end = s->n[e->to].t;
    }
    return end - n->t + 1;
}

/* The vector lifetimes node i's cycle decides: its own value's and those
 * of the values it reads. */
static long lives_around(const sched *s, unsigned i)
{
    long sum = vector_life(s, i);
    for (unsigned q = s->pred_start[i]; q < s->pred_start[i + 1]; q++) {
        const edge *e = &s->e[s->pred_list[q]];
        if (e->vec)
            sum += vector_life(s, e->from);
    }
    return sum;
}

/* lives_around(s, i) as a function of node i's cycle c, the others fixed:
 * its own value lives max(c + lat - 1, its last reader) - c + 1 cycles, and
 * each vector it reads (once per edge) max(end without i, c) - def + 1. */
enum { AROUND_MAX = 16 };

typedef struct around {
    int own;                     /* i writes a vector */
    long own_lat, own_last;      /* its latency; its last reader's cycle (LONG_MIN: none) */
    unsigned nin;                /* vector inputs, by edge */
    long in_end[AROUND_MAX], in_def[AROUND_MAX];
} around;

/* 0 when i reads more vectors than AROUND_MAX (use lives_around). */
static int around_init(const sched *s, unsigned i, around *a)
{
    const node *n = &s->n[i];
    a->own = n->writes_v;
    a->own_lat = (long)n->lat;
    a->own_last = LONG_MIN;
    for (unsigned q = s->succ_start[i]; q < s->succ_start[i + 1]; q++) {
        const edge *e = &s->e[s->succ_list[q]];
        if (e->vec && s->n[e->to].t > a->own_last)
            a->own_last = s->n[e->to].t;
    }
    a->nin = 0;
    for (unsigned q = s->pred_start[i]; q < s->pred_start[i + 1]; q++) {
        const edge *e = &s->e[s->pred_list[q]];
        if (!e->vec)
            continue;
        if (a->nin == AROUND_MAX)
            return 0;
        const node *d = &s->n[e->from];
        long end = d->t + (long)d->lat - 1;
        for (unsigned r = s->succ_start[e->from]; r < s->succ_start[e->from + 1]; r++) {
            const edge *f = &s->e[s->succ_list[r]];
            if (f->vec && f->to != i && s->n[f->to].t > end)
                end = s->n[f->to].t;
        }
        a->in_end[a->nin] = end;
        a->in_def[a->nin++] = d->t;
    }
    return 1;
}

static long around_at(const around *a, long c)
{
    long sum = 0;
    if (a->own) {
        long end = c + a->own_lat - 1;
        sum += (a->own_last > end ? a->own_last : end) - c + 1;
    }
    for (unsigned k = 0; k < a->nin; k++)
        sum += (a->in_end[k] > c ? a->in_end[k] : c) - a->in_def[k] + 1;
    return sum;
}

/* around_at(a, c + 1) - around_at(a, c): -1 while i's own value outlives
 * its latency (its last reader is later), plus 1 for each input whose
 * other readers end by c. It never falls as c grows: around_at is convex. */
static long around_slope(const around *a, long c)
{
    long d = a->own && c + a->own_lat - 1 < a->own_last ? -1 : 0;
    for (unsigned k = 0; k < a->nin; k++)
        d += c >= a->in_end[k];
    return d;
}

/* The cycle of [early, late] other than old, in whose rows node i fits,
 * where around_at is least and below `best` (the earliest of equals), or old
 * when there is none: the scan of every cycle compact made, found by
 * visiting the cycles in order of (around_at, cycle) from the least one
 * outwards (around_at is convex, so the cycles left of its least rise
 * leftwards and those right of it rightwards) and stopping at the first
 * that fits. */
static long least_around_fit(sched *s, unsigned i, const around *a, long early, long late, long old, long best)
{
    long lo = early, hi = late; /* the first cycle from which around_at no longer falls */
    while (lo < hi) {
        const long mid = lo + (hi - lo) / 2;
        if (around_slope(a, mid) >= 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    long left = lo - 1, right = lo;
    long lval = left >= early ? around_at(a, left) : 0, rval = around_at(a, right);
    for (;;) {
        const int has_left = left >= early, has_right = right <= late;
        if (!has_left && !has_right)
            return old;
        const int take_left = has_left && (!has_right || lval <= rval);
        const long c = take_left ? left : right, v = take_left ? lval : rval;
        if (v >= best)
            return old; /* every cycle still to visit lives as long at least */
        if (c != old && fits(s, i, c))
            return c;
        if (take_left) {
            left--;
            if (left >= early)
                lval = around_at(a, left);
        } else {
            right++;
            if (right <= late)
                rval = around_at(a, right);
        }
    }
}

/* The cycles node i may take with its producers and consumers where they
 * are: [*early, *late], LONG_MIN and LONG_MAX where it has none. */
static void dep_window(const sched *s, unsigned i, long *early, long *late)
{
    long lo = LONG_MIN, hi = LONG_MAX;
    for (unsigned q = s->pred_start[i]; q < s->pred_start[i + 1]; q++) {
        const edge *e = &s->e[s->pred_list[q]];
        long v = s->n[e->from].t + (long)e->lat;
        lo = v > lo ? v : lo;
    }
    for (unsigned q = s->succ_start[i]; q < s->succ_start[i + 1]; q++) {
        const edge *e = &s->e[s->succ_list[q]];
        long v = s->n[e->to].t - (long)e->lat;
        hi = v < hi ? v : hi;
    }
    *early = lo;
    *late = hi;
}

/* Stretch moves a node only later, to shorten its own value. Compaction
 * moves each node, either way, to the cycle between its producers and its
 * consumers, with free rows, where the vector values it writes and reads
 * live fewest cycles in all (an instruction that last reads two long
 * values is better early), and repeats while a pass moves any. */
static int compact(sched *s)
{
    const unsigned nb = s->K * (unsigned)s->b->nbody;
    for (int pass = 0, moved = 1; moved && pass < 8; pass++) {
        moved = 0;
        for (unsigned i = 0; i < nb; i++) {
            node *n = &s->n[i];
            long early, late;
            dep_window(s, i, &early, &late);
            /* a node with no producer (a load) or no consumer (a store) moves
             * at most an II: it has no end to be drawn to beyond that */
            if (early == LONG_MIN)
                early = n->t - (long)s->II;
            if (late == LONG_MAX)
                late = n->t + (long)s->II;
            if (late - early > 4 * (long)s->II) /* keep the search short */
                continue;
            long old = n->t, best_t = old;
            long best = lives_around(s, i);
            around a;
            const int closed = around_init(s, i, &a);
            unplace(s, i);
            if (closed) {
                best_t = least_around_fit(s, i, &a, early, late, old, best);
            } else {
                for (long c = early; c <= late; c++) {
                    if (c == old)
                        continue;
                    n->t = c; /* lives_around reads only the cycles, not the rows */
                    const long l = lives_around(s, i);
                    if (l < best && fits(s, i, c)) {
                        best = l;
                        best_t = c;
                    }
                }
                n->t = old;
            }
            if (place(s, i, best_t) < 0)
                return -1;
            moved |= best_t != old;
        }
    }
    return 0;
}

/* ---- register relief -------------------------------------------------------------------- */

/* When every placement variant needs more registers than the block has,
 * the placement is searched again, for registers: a local search (simulated
 * annealing, seeded by K, II and the variant, so the same block and machine
 * always give the same schedule) moves one instruction within its
 * dependences, or exchanges the rows of two instructions of one unit and
 * class, and keeps a move that lowers the registers wanted above the pool
 * (summed over the rows of the circle), then the sum of all lifetimes. Only
 * rows that fit are taken, so the result is a modulo schedule like any
 * other and allocation decides, as ever. */
enum { RELIEF_STEPS = 1000, RELIEF_STEPS_MAX = 100000 }; /* moves per instruction; at most */
#define RELIEF_TEMP 32.0     /* the first temperature, in cycles of lifetime */
#define RELIEF_TEMP_END 0.05 /* the last */

typedef struct relief {
    sched *s;
    unsigned nb;
    int *file;          /* [node]: 'v', 'p' or 0, the file of the value it writes */
    unsigned *cstart, *clist; /* [node]: the nodes that read its value (CSR) */
    int32_t *live;      /* [2][rows]: the values live in each row beyond base, vector then
                         * predicate (sched_simd.h's rows: II rounded up, SCHED_ROW_NONE past it) */
    unsigned rows;
    long base[2];       /* the values live in every row (for II cycles or more) */
    unsigned nvals[2];  /* the values of each file (none: its rows are not counted) */
    unsigned cap[2];    /* the registers free for them, per file */
    long sum;           /* the lifetimes' sum, in cycles */
} relief;

/* Adds (sign 1) or removes (-1) node i's value from the rows it is live in
 * and from the lifetime sum. */
static void relief_value(relief *r, unsigned i, int sign)
{
    if (!r->file[i])
        return;
    const sched *s = r->s;
    const long II = (long)s->II;
    const node *n = &s->n[i];
    /* rows t .. its write's last cycle or its last read's cycle before
     * (the reads of a cycle free registers its writes may take) */
    long end = n->t + (long)n->lat;
    for (unsigned q = r->cstart[i]; q < r->cstart[i + 1]; q++)
        end = s->n[r->clist[q]].t > end ? s->n[r->clist[q]].t : end;
    const long len = end - n->t;
    const int f = r->file[i] == 'p';
    int32_t *row = r->live + (size_t)f * r->rows;
    r->sum += sign * len;
    r->base[f] += sign * (len / II);
    const long rest = len % II, at = mod(n->t, II), to = at + rest; /* rows at .. to - 1, modulo II */
    rows_add(row, at, to < II ? to : II, sign);
    if (to > II)
        rows_add(row, 0, to - II, sign);
}

/* Adds to set (n so far, each node once) the nodes whose values' lifetimes
 * node i's cycle decides: i and the producers of what it reads. */
static void relief_collect(const relief *r, unsigned i, unsigned *set, unsigned *n)
{
    const sched *s = r->s;
    for (unsigned q = s->pred_start[i];; q++) {
        const unsigned d = q == s->pred_start[i + 1] ? i : s->e[s->pred_list[q]].from;
        int seen = d >= r->nb || !r->file[d];
        for (unsigned k = 0; k < *n && !seen; k++)
            seen = set[k] == d;
        if (!seen)
            set[(*n)++] = d;
        if (q == s->pred_start[i + 1])
            break;
    }
}

/* relief_value for each node of the set. */
static void relief_apply(relief *r, const unsigned *set, unsigned n, int sign)
{
    for (unsigned k = 0; k < n; k++)
        relief_value(r, set[k], sign);
}

/* What the search lowers: the registers wanted above the pool, summed over
 * the rows (one outweighs 64 cycles of lifetime), then the lifetimes. */
static long relief_cost(const relief *r)
{
    long over = 0;
    for (int f = 0; f < 2; f++)
        if (r->nvals[f]) /* each row's values less the pool */
            over += rows_over(r->live + (size_t)f * r->rows, r->rows, (int32_t)(r->base[f] - (long)r->cap[f]));
    return over * 64 + r->sum;
}

/* dep_window, kept within two IIs of the node's cycle (a move is local). */
static void relief_window(const relief *r, unsigned i, long *early, long *late)
{
    const long II = (long)r->s->II, t = r->s->n[i].t;
    dep_window(r->s, i, early, late);
    *early = *early > t - 2 * II ? *early : t - 2 * II;
    *late = *late < t + 2 * II ? *late : t + 2 * II;
}

/* xorshift64: the search's own numbers, the same on every host. */
static uint64_t relief_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* The cycle congruent to `row` in [lo, hi] nearest to t, or LONG_MIN. */
static long nearest_in_row(long row, long II, long lo, long hi, long t)
{
    long c = t + mod(row - t, II); /* the first at or after t */
    long best = LONG_MIN;
    if (c <= hi && c >= lo)
        best = c;
    if (c - II >= lo && c - II <= hi && (best == LONG_MIN || t - (c - II) < best - t))
        best = c - II;
    return best;
}

/* Where the nodes of each kind are, in kin's order (node i at place
 * at[i]), kept as relieve moves them: per row a bit for each place whose
 * node is in it, so that the walk to a drawn peer counts 64 places at a
 * time. */
typedef struct kin_rows {
    unsigned *at;
    uint64_t *bits; /* [row][words] */
    unsigned words;
} kin_rows;

static void kin_bit(kin_rows *kr, unsigned row, unsigned at, int on)
{
    uint64_t *w = &kr->bits[(size_t)row * kr->words + at / 64];
    *w = on ? *w | 1ull << (at % 64) : *w & ~(1ull << (at % 64));
}

/* place, for a node relieve took out (unplace leaves its row as it was) */
static int kin_place(sched *s, kin_rows *kr, unsigned id, long t)
{
    const unsigned at = kr->at[id], was = s->n[id].row;
    if (place(s, id, t) < 0)
        return -1;
    kin_bit(kr, was, at, 0);
    kin_bit(kr, s->n[id].row, at, 1);
    return 0;
}

/* 0 done (the placement may have changed), -1 out of memory. */
static int relieve(sched *s)
{
    const pipe_block *b = s->b;
    const unsigned nb = s->K * (unsigned)b->nbody;
    const unsigned rows = (s->II + SCHED_ROW_LANES - 1) / SCHED_ROW_LANES * SCHED_ROW_LANES;
    relief r = { s, nb, calloc(nb, sizeof(int)), calloc(nb + 1, sizeof(unsigned)),
                 malloc((size_t)s->ne * sizeof(unsigned) + 1), calloc(2 * (size_t)rows, sizeof(int32_t)), rows,
                 { 0, 0 }, { 0, 0 },
                 { (unsigned)__builtin_popcount(b->vpool), (unsigned)__builtin_popcount(b->ppool & 0xffu) }, 0 };
    long *best_t = malloc(nb * sizeof *best_t);
    unsigned *aff = malloc(nb * sizeof *aff); /* each node once */
    /* the nodes of each (unit, class), in order; a stamp on i's neighbours */
    enum { KINDS = NPU_NUM_UNITS * NPU_NUM_CLASSES };
    unsigned kin_start[KINDS + 1] = { 0 }, *kin = malloc(nb * sizeof *kin), *near = calloc(nb, sizeof *near);
    kin_rows kr = { malloc(nb * sizeof *kr.at), NULL, (nb + 63) / 64 };
    kr.bits = calloc((size_t)s->II * kr.words + 1, sizeof *kr.bits);
    unsigned *skip = malloc(nb * sizeof *skip); /* the places of i's neighbours not drawn */
    unsigned stamp = 0;
    int rc = -1;
    if (!r.file || !r.cstart || !r.clist || !r.live || !best_t || !aff || !kin || !near || !kr.at ||
        !kr.bits || !skip)
        goto out;
    for (unsigned x = s->II; x < rows; x++)
        r.live[x] = r.live[rows + x] = SCHED_ROW_NONE;
    for (unsigned i = 0; i < nb; i++)
        kin_start[s->n[i].unit * NPU_NUM_CLASSES + s->n[i].cls + 1]++;
    for (unsigned k = 0; k < KINDS; k++)
        kin_start[k + 1] += kin_start[k];
    {
        unsigned fill[KINDS];
        memcpy(fill, kin_start, sizeof fill);
        for (unsigned i = 0; i < nb; i++) {
            kr.at[i] = fill[s->n[i].unit * NPU_NUM_CLASSES + s->n[i].cls]++;
            kin[kr.at[i]] = i;
            kin_bit(&kr, s->n[i].row, kr.at[i], 1);
        }
    }
    for (unsigned i = 0; i < nb; i++) {
        const op_info *d = &b->info[s->n[i].op];
        if (d->def_virt >= 0)
            r.file[i] = b->p->vfile[d->def_virt];
        if (r.file[i])
            r.nvals[r.file[i] == 'p']++;
    }
    unsigned nc = 0;
    for (unsigned i = 0; i < nb; i++) {
        r.cstart[i] = nc;
        if (!r.file[i])
            continue;
        const int v = b->info[s->n[i].op].def_virt;
        for (unsigned q = s->succ_start[i]; q < s->succ_start[i + 1]; q++) {
            const unsigned j = s->e[s->succ_list[q]].to;
            if (j >= nb)
                continue;
            const op_info *u = &b->info[s->n[j].op];
            for (int k = 0; k < u->nuses; k++)
                if (u->uses[k] == v) {
                    r.clist[nc++] = j;
                    break;
                }
        }
    }
    r.cstart[nb] = nc;
    r.cap[0] = r.cap[0] > s->margin ? r.cap[0] - s->margin : 0;
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)s->K << 40 | (uint64_t)s->II << 8 | s->strategy);
    for (unsigned i = 0; i < nb; i++)
        relief_value(&r, i, 1);
    long cost = relief_cost(&r), best = cost;
    for (unsigned i = 0; i < nb; i++)
        best_t[i] = s->n[i].t;
    const long steps = nb < RELIEF_STEPS_MAX / RELIEF_STEPS ? (long)nb * RELIEF_STEPS : RELIEF_STEPS_MAX;
    double temp = RELIEF_TEMP;
    const double cool = pow(RELIEF_TEMP_END / temp, 1.0 / (double)steps);
    unsigned naff = 0;
    /* a placement wanting, summed over its rows, more than two registers
     * per row above the pool is too far from one that fits: not searched */
    const long over = (cost - r.sum) / 64;
    for (long step = over > 2 * (long)s->II ? steps : 0; step < steps; step++, temp *= cool) {
        const unsigned i = (unsigned)(relief_rand(&seed) % nb);
        node *n = &s->n[i];
        const long oi = n->t;
        long j = -1, oj = 0;
        if (relief_rand(&seed) % 4 == 0) { /* exchange rows with an instruction of its unit and class */
            unsigned np = 0;
            stamp++; /* i's producers and consumers: not exchanged with it */
            for (unsigned q = s->succ_start[i]; q < s->succ_start[i + 1]; q++)
                if (s->e[s->succ_list[q]].to < nb)
                    near[s->e[s->succ_list[q]].to] = stamp;
            for (unsigned q = s->pred_start[i]; q < s->pred_start[i + 1]; q++)
                if (s->e[s->pred_list[q]].from < nb)
                    near[s->e[s->pred_list[q]].from] = stamp;
            const unsigned kind = n->unit * NPU_NUM_CLASSES + n->cls;
            /* the peers: its kind less those in its row (i among them) and
             * its neighbours elsewhere, counted from the row and the edges;
             * the one drawn is found by walking the kind's places to it */
            unsigned nskip = 0;
            np = kin_start[kind + 1] - kin_start[kind];
            for (unsigned q = 0; q < s->row_count[n->row]; q++) {
                const unsigned k = s->row_nodes[n->row][q];
                np -= k < nb && s->n[k].unit * NPU_NUM_CLASSES + s->n[k].cls == kind;
            }
            for (unsigned q = s->succ_start[i]; q < s->succ_start[i + 1]; q++) {
                const unsigned k = s->e[s->succ_list[q]].to;
                if (k < nb && near[k] == stamp && s->n[k].row != n->row &&
                    s->n[k].unit * NPU_NUM_CLASSES + s->n[k].cls == kind) {
                    near[k] = stamp + 1; /* counted once */
                    skip[nskip++] = kr.at[k];
                    np--;
                }
            }
            for (unsigned q = s->pred_start[i]; q < s->pred_start[i + 1]; q++) {
                const unsigned k = s->e[s->pred_list[q]].from;
                if (k < nb && near[k] == stamp && s->n[k].row != n->row &&
                    s->n[k].unit * NPU_NUM_CLASSES + s->n[k].cls == kind) {
                    near[k] = stamp + 1;
                    skip[nskip++] = kr.at[k];
                    np--;
                }
            }
            stamp++; /* past both marks */
            if (!np)
                continue;
            unsigned draw = (unsigned)(relief_rand(&seed) % np);
            const unsigned lo = kin_start[kind], hi = kin_start[kind + 1];
            const uint64_t *in_row = kr.bits + (size_t)n->row * kr.words;
            for (unsigned w = lo / 64;; w++) {
                uint64_t m = ~in_row[w];
                if (w == lo / 64)
                    m &= ~0ull << (lo % 64);
                if (w == (hi - 1) / 64 && hi % 64)
                    m &= (1ull << (hi % 64)) - 1;
                for (unsigned q = 0; q < nskip; q++)
                    if (skip[q] / 64 == w)
                        m &= ~(1ull << (skip[q] % 64));
                const unsigned c = (unsigned)__builtin_popcountll(m);
                if (draw < c) {
                    while (draw--)
                        m &= m - 1;
                    j = kin[w * 64 + (unsigned)__builtin_ctzll(m)];
                    break;
                }
                draw -= c;
            }
            oj = s->n[j].t;
            long ei, li, ej, lj;
            relief_window(&r, i, &ei, &li);
            relief_window(&r, (unsigned)j, &ej, &lj);
            const long ci = nearest_in_row((long)s->n[j].row, (long)s->II, ei, li, oi);
            const long cj = nearest_in_row((long)n->row, (long)s->II, ej, lj, oj);
            if (ci == LONG_MIN || cj == LONG_MIN)
                continue;
            naff = 0;
            relief_collect(&r, i, aff, &naff);
            relief_collect(&r, (unsigned)j, aff, &naff);
            relief_apply(&r, aff, naff, -1);
            unplace(s, i);
            unplace(s, (unsigned)j);
            int ok = fits(s, i, ci);
            if (ok && kin_place(s, &kr, i, ci) < 0)
                goto out;
            if (ok && !(ok = fits(s, (unsigned)j, cj)))
                unplace(s, i);
            if (ok && kin_place(s, &kr, (unsigned)j, cj) < 0)
                goto out;
            if (!ok) {
                if (kin_place(s, &kr, i, oi) < 0 || kin_place(s, &kr, (unsigned)j, oj) < 0)
                    goto out;
                relief_apply(&r, aff, naff, 1);
                continue;
            }
            relief_apply(&r, aff, naff, 1);
        } else {
            long e, l;
            relief_window(&r, i, &e, &l);
            if (l <= e)
                continue;
            const long c = e + (long)(relief_rand(&seed) % (unsigned long)(l - e + 1));
            if (c == oi)
                continue;
            unplace(s, i);
            if (!fits(s, i, c)) {
                if (kin_place(s, &kr, i, oi) < 0)
                    goto out;
                continue;
            }
            naff = 0;
            relief_collect(&r, i, aff, &naff);
            relief_apply(&r, aff, naff, -1);
            if (kin_place(s, &kr, i, c) < 0)
                goto out;
            relief_apply(&r, aff, naff, 1);
        }
        const long next = relief_cost(&r), delta = next - cost;
        if (delta <= 0 || (double)(relief_rand(&seed) % 1000000) < 1e6 * exp(-(double)delta / temp)) {
            cost = next;
            if (cost < best) {
                best = cost;
                for (unsigned k = 0; k < nb; k++)
                    best_t[k] = s->n[k].t;
            }
            continue;
        }
        relief_apply(&r, aff, naff, -1); /* undo */
        unplace(s, i);
        if (j >= 0)
            unplace(s, (unsigned)j);
        if (kin_place(s, &kr, i, oi) < 0 || (j >= 0 && kin_place(s, &kr, (unsigned)j, oj) < 0))
            goto out;
        relief_apply(&r, aff, naff, 1);
    }
    for (unsigned k = 0; k < nb; k++)
        if (s->n[k].t != best_t[k])
            unplace(s, k);
    for (unsigned k = 0; k < nb; k++)
        if (!s->n[k].placed && place(s, k, best_t[k]) < 0)
            goto out;
    rc = 0;
out:
    free(r.file);
    free(r.cstart);
    free(r.clist);
    free(r.live);
    free(best_t);
    free(aff);
    free(kin);
    free(near);
    free(kr.at);
    free(kr.bits);
    free(skip);
    return rc;
}

/* Times start at 0 (late nodes may have gone below): shift by whole IIs,
 * which keeps every row; bumps go to their row in the first stage. */
static void normalise(sched *s)
{
    unsigned nb = s->K * (unsigned)s->b->nbody;
    long lo = 0;
    for (unsigned i = 0; i < nb; i++)
        lo = s->n[i].t < lo ? s->n[i].t : lo;
    long shift = lo < 0 ? ((-lo + (long)s->II - 1) / (long)s->II) * (long)s->II : 0;
    for (unsigned i = 0; i < nb; i++)
        s->n[i].t += shift;
    for (unsigned i = nb; i < s->nn; i++)
        s->n[i].t = mod(s->n[i].t, s->II);
}

/* ---- registers ------------------------------------------------------------------------ */

typedef struct value {
    unsigned virt, copy;
    long start, end;   /* cycles the register holds it: [def, max(last read, def + lat - 1)] */
} value;

/* DEFINE_MERGE_SORT(name, T, BEFORE) defines `static void name(T *v, size_t
 * n, T *tmp)`: sorts v by BEFORE(a, b) (a strictly before b), equal elements
 * kept in their order, by a bottom-up merge through tmp (n elements) with the
 * comparison inline, not a qsort callback per step: allocation sorts every
 * attempt's values and lifetimes. */
#define DEFINE_MERGE_SORT(name, T, BEFORE)                                                          \
    static void name(T *v, size_t n, T *tmp)                                                        \
    {                                                                                               \
        T *from = v, *to = tmp;                                                                     \
        for (size_t w = 1; w < n; w *= 2) {                                                         \
            for (size_t lo = 0; lo < n; lo += 2 * w) {                                              \
                size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;         \
                size_t a = lo, b = mid, o = lo;                                                     \
                while (a < mid && b < hi) /* the left run's first on a tie: stable */               \
                    to[o++] = BEFORE(from[b], from[a]) ? from[b++] : from[a++];                     \
                while (a < mid)                                                                     \
                    to[o++] = from[a++];                                                            \
                while (b < hi)                                                                      \
                    to[o++] = from[b++];                                                            \
            }                                                                                       \
            T *x = from;                                                                            \
            from = to;                                                                              \
            to = x;                                                                                 \
        }                                                                                           \
        if (from != v)                                                                              \
            memcpy(v, from, n * sizeof *v);                                                         \
    }

/* Lifetimes' starts and ends, ascending (equal numbers cannot show their
 * order, so any sort gives the same array). */
#define LONG_BEFORE(a, b) ((a) < (b))
DEFINE_MERGE_SORT(sort_longs, long, LONG_BEFORE)

/* Whether value a comes strictly before b: by start, the longer first. */
static int value_before(const value *a, const value *b)
{
    return a->start != b->start ? a->start < b->start : a->end > b->end;
}

/* Values by value_before, equal ones in their order (glibc's qsort, which the
 * order was first made with, is a stable merge sort). */
#define VALUE_BEFORE(a, b) value_before(&(a), &(b))
DEFINE_MERGE_SORT(sort_values, value, VALUE_BEFORE)

/* The last cycle the value `v` of iteration `k` (written by node d) holds
 * its register: its last read, or its write completing (def + lat - 1). */
static long value_end(const sched *s, unsigned k, unsigned v, const node *d)
{
    const pipe_block *b = s->b;
    long end = d->t + (long)d->lat - 1;
    for (unsigned i = node_of(s, k, 0); i < node_of(s, k + 1, 0); i++) { /* iteration k's nodes */
        const op_info *oi = &b->info[s->n[i].op];
        for (int u = 0; u < oi->nuses; u++)
            if ((unsigned)oi->uses[u] == v && s->n[i].t > end)
                end = s->n[i].t;
    }
    return end;
}

/* A cycle's instructions issue in emission order (row_order's sort, which
 * every emitted subset of the row keeps), and each reads its sources before
 * it writes: a value's register is held from just after its write's issue
 * to its last read's, in sub-cycles, two per instruction of a cycle (a
 * read at 2 rank, a write at 2 rank + 1). */
enum { SUB = 128 };

static void row_ranks(const sched *s, long *rank)
{
    unsigned order[64];
    for (unsigned i = 0; i < s->nn; i++)
        rank[i] = SUB / 2 - 1;
    for (unsigned r = 0; r < s->II; r++) {
        unsigned cnt = s->row_count[r];
        if (cnt > 64)
            continue;
        (void)row_order(s, s->row_nodes[r], cnt, 0, order);
        for (unsigned i = 0; i < cnt; i++)
            rank[order[i]] = (long)i;
    }
}

static int colour(sched *s, const value *base, size_t nbase, int *crowded);

/* Circular-arc colouring. Fails (0) when a value lives II cycles or more, or
 * the registers run out; s->fail says which values forced it. */
static int allocate(sched *s, int expand)
{
    pipe_block *b = s->b;
    asm_pipe *p = b->p;
    int idx[PIPE_MAX_OPS];
    for (size_t j = 0; j < b->nbody; j++)
        idx[b->body[j]] = (int)j;
    /* the base schedule's values: [def, max(last read, def + lat - 1)], in sub-cycles */
    size_t nbase = 0;
    value *base = calloc((size_t)s->K * p->nv + 1, sizeof *base);
    long *rank = malloc(((size_t)s->nn + 1) * sizeof *rank);
    if (!base || !rank) {
        free(base);
        free(rank);
        return -1;
    }
    row_ranks(s, rank);
    /* each value's last read: its cycle and, in it, the latest position */
    const size_t nval_k = (size_t)s->K * p->nv;
    long *last_t = malloc((nval_k + 1) * sizeof *last_t), *last_pos = malloc((nval_k + 1) * sizeof *last_pos);
    if (!last_t || !last_pos) {
        free(last_t);
        free(last_pos);
        free(base);
        free(rank);
        return -1;
    }
    for (size_t i = 0; i < nval_k; i++)
        last_t[i] = LONG_MIN;
    for (unsigned i = 0; i < s->K * (unsigned)b->nbody; i++) {
        const op_info *oi = &b->info[s->n[i].op];
        for (int u = 0; u < oi->nuses; u++) {
            size_t at = (size_t)s->n[i].copy * p->nv + (size_t)oi->uses[u];
            long t = s->n[i].t, pos = 2 * rank[i];
            if (t > last_t[at] || (t == last_t[at] && pos > last_pos[at])) {
                last_t[at] = t;
                last_pos[at] = pos;
            }
        }
    }
    long longest = 1;
    for (unsigned k = 0; k < s->K; k++)
        for (unsigned v = 0; v < p->nv; v++) {
            if (b->def_op[v] < 0)
                continue;
            unsigned di = node_of(s, k, (size_t)idx[b->def_op[v]]);
            const node *d = &s->n[di];
            /* in sub-cycles: a write after a read in the same cycle (or by
             * the same instruction) may take the register the read frees;
             * with no read after it, a value holds its register until its
             * write completes */
            long end = d->t + (long)d->lat - 1, end_pos = SUB - 1;
            const size_t at = (size_t)k * p->nv + v;
            if (last_t[at] > end) {
                end = last_t[at];
                end_pos = last_pos[at];
            }
            longest = end - d->t + 1 > longest ? end - d->t + 1 : longest;
            base[nbase++] = (value){ v, k, d->t * SUB + 2 * rank[di] + 1, end * SUB + end_pos };
        }
    free(last_t);
    free(last_pos);
    free(rank);
    /* Modulo variable expansion: U copies of the kernel, U a power of two,
     * so that no value lives longer than the U II cycles before the same
     * copy writes its register again. */
    s->U = 1;
    while ((long)s->U * (long)s->II < longest)
        s->U *= 2;
    if (s->U * s->K > 64) {
        snprintf(s->fail, sizeof s->fail, "%%%s lives %ld cycles: %u kernel copies would be needed",
                 p->vname[base[0].virt], longest, s->U);
        free(base);
        return 0;
    }
    /* expand: where no more values are live at once than there are
     * registers and the colouring still fails, the circle is at fault, not
     * the count: a circle U times longer (the kernel expanded twice as
     * often) lets the arcs pack more tightly (with enough copies, the most
     * live registers always suffice: Eisenbeis, Lelait and Marmol's meeting
     * graphs). So U doubles, up to four times the least, while U K stays
     * within 64; the message is the least U's. */
    const unsigned least = s->U;
    char fail[sizeof s->fail] = "";
    int r, crowded = 0;
    for (;;) {
        r = colour(s, base, nbase, &crowded);
        if (r != 0)
            break;
        if (!fail[0])
            memcpy(fail, s->fail, sizeof fail);
        if (!expand || crowded || s->U >= 4 * least || 2 * s->U * s->K > 64)
            break;
        free(s->reg);
        s->reg = NULL;
        s->U *= 2;
    }
    if (r == 0)
        memcpy(s->fail, fail, sizeof s->fail);
    s->expanded = s->U / least;
    s->crowded = crowded;
    free(base);
    return r;
}

/* Colours the values of the base schedule (base) repeated over s->U kernel
 * copies, on a circle of U II cycles: 1, or 0 when the registers run out
 * (s->fail says which values forced it; *crowded when more values are live
 * at once than registers), -1 out of memory. */
static int colour(sched *s, const value *base, size_t nbase, int *crowded)
{
    pipe_block *b = s->b;
    asm_pipe *p = b->p;
    size_t nvals = 0;
    value *vals = calloc(nbase * s->U + 1, sizeof *vals);
    size_t nreg = (size_t)s->U * s->K * p->nv + 1;
    s->reg = malloc(nreg * sizeof *s->reg);
    if (!vals || !s->reg) {
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < nreg; i++)
        s->reg[i] = -1;
    for (unsigned u = 0; u < s->U; u++)
        for (size_t i = 0; i < nbase; i++) {
            value v = base[i];
            v.copy += u * s->K;
            v.start += (long)u * (long)s->II * SUB;
            v.end += (long)u * (long)s->II * SUB;
            vals[nvals++] = v;
        }
    /* the circle the registers turn on, in sub-cycles */
    long II = (long)s->II * (long)s->U * SUB;
    /* the values in order of start on the circle, the longer first */
    for (size_t i = 0; i < nvals; i++) {
        long len = vals[i].end - vals[i].start;
        vals[i].start = mod(vals[i].start, II);
        vals[i].end = vals[i].start + len;
    }
    value *sort_tmp = malloc((nvals + 1) * sizeof *sort_tmp);
    if (!sort_tmp) {
        free(vals);
        return -1;
    }
    sort_values(vals, nvals, sort_tmp);
    free(sort_tmp);
    /* most values live at once, per file (at the values' starts), and the
     * starts where fewest are: each arc as one or two pieces of [0, II),
     * counted at each start by a walk through the sorted starts and ends */
    unsigned live_v = 0, live_p = 0;
    unsigned *live_at = calloc(nvals + 1, sizeof *live_at);
    long *ps = malloc(6 * (nvals + 1) * sizeof *ps); /* starts, ends, sort_longs' room */
    if (!live_at || !ps) {
        free(live_at);
        free(ps);
        free(vals);
        return -1;
    }
    for (int file = 0; file < 2; file++) {
        const char f = file ? 'p' : 'v';
        long *st = ps, *en = ps + 2 * (nvals + 1), *sorted_tmp = ps + 4 * (nvals + 1);
        size_t np = 0;
        for (size_t i = 0; i < nvals; i++) {
            if (p->vfile[vals[i].virt] != f)
                continue;
            long a = mod(vals[i].start, II), e = a + (vals[i].end - vals[i].start);
            st[np] = a;
            en[np++] = e < II ? e : II - 1;
            if (e >= II) {
                st[np] = 0;
                en[np++] = e - II;
            }
        }
        sort_longs(st, np, sorted_tmp);
        sort_longs(en, np, sorted_tmp);
        /* the points (vals' starts) ascend: the counts only grow */
        size_t started = 0, ended = 0;
        for (size_t r = 0; r < nvals; r++) {
            const long at = vals[r].start;
            while (started < np && st[started] <= at)
                started++;
            while (ended < np && en[ended] < at)
                ended++;
            unsigned live = (unsigned)(started - ended);
            live_at[r] += live;
            if (file)
                live_p = live > live_p ? live : live_p;
            else
                live_v = live > live_v ? live : live_v;
        }
    }
    free(ps);
    s->max_live = live_v + live_p;
    /* Colour from a cut: the values that cross it first, then the others by
     * start, as intervals on a line. Each takes, of the registers free for
     * it, the one whose next value (a crossing one, met again at the end of
     * the circle) starts soonest after it ends: the registers that stay free
     * longest are kept for the values that end latest. The colours needed
     * are at most the most live plus the few that cross the cut, so a few
     * cuts where fewest values are live are tried, the first that fits
     * wins. */
    value *cv = malloc((nvals + 1) * sizeof *cv);
    int *got_reg = malloc((nvals + 1) * sizeof *got_reg);
    long wall[64], last_end[64];
    unsigned char *tried = calloc(nvals + 1, 1); /* [r]: vals[r]'s start was a cut */
    int ok = cv && got_reg && tried ? 0 : -1;
    unsigned ntried = 0;
    char first_fail[sizeof s->fail] = "";
    /* more values live at once than registers: one cut, for the message */
    *crowded = live_v > (unsigned)__builtin_popcount(b->vpool) ||
               live_p > (unsigned)__builtin_popcount(b->ppool & 0xffu);
    const unsigned cuts = *crowded ? 1 : s->cuts; /* at most PIPE_CUTS_RELIEVED */
    while (ok == 0 && ntried < cuts && ntried < nvals) {
        long cut = -1, at = -1;
        for (size_t r = 0; r < nvals; r++) {
            if (!tried[r] && (at < 0 || live_at[r] < live_at[at])) {
                at = (long)r;
                cut = vals[r].start; /* on the circle already */
            }
        }
        if (cut < 0)
            break;
        ntried++;
        /* start measured from the cut (vals is in order of start on the
         * circle: from the cut round is the order of start), the values
         * across the cut before everything else */
        size_t first = 0, nc = 0;
        while (first < nvals && vals[first].start < cut)
            first++;
        for (size_t r = first; r < nvals && vals[r].start == cut; r++)
            tried[r] = 1; /* the values starting at the cut: not a cut again */
        for (int crossing = 1; crossing >= 0; crossing--)
            for (size_t j = 0; j < nvals; j++) {
                const value *v = &vals[(first + j) % nvals];
                long len = v->end - v->start, st = mod(v->start - cut, II);
                if ((st + len >= II) != crossing)
                    continue;
                cv[nc] = *v;
                cv[nc].start = st + cut - (crossing ? II : 0);
                cv[nc].end = cv[nc].start + len;
                nc++;
            }
        for (int r = 0; r < 64; r++) {
            wall[r] = LONG_MAX; /* the start, one turn on, of its value across the cut */
            last_end[r] = LONG_MIN;
        }
        ok = 1;
        for (size_t i = 0; ok && i < nvals; i++) {
            char f = p->vfile[cv[i].virt];
            uint32_t pool = f == 'v' ? b->vpool : b->ppool;
            int base = f == 'v' ? 0 : 32;
            const long *le = last_end + base, *wa = wall + base;
            uint32_t fit = fit_regs(le, wa, cv[i].start, cv[i].end);
            int got = -1;
            for (fit &= pool; fit; fit &= fit - 1) {
                const int r = __builtin_ctz(fit);
                if (got < 0 || wa[r] < wa[got] || (wa[r] == wa[got] && le[r] > le[got]))
                    got = r;
            }
            if (got < 0) {
                ok = 0;
                if (first_fail[0])
                    break;
                /* name the longest-lived values of this file */
                size_t o = (size_t)snprintf(first_fail, sizeof first_fail,
                                            "%s registers run out (%u values live at once); longest lifetimes:",
                                            f == 'v' ? "vector" : "predicate", f == 'v' ? live_v : live_p);
                long shown[3] = { -1, -1, -1 };
                for (int pick = 0; pick < 3; pick++) {
                    long best = -1;
                    size_t bi = 0;
                    for (size_t q = 0; q < nvals; q++) { /* in cycles */
                        long len = floor_div(cv[q].end, SUB) - floor_div(cv[q].start, SUB) + 1;
                        int dup = 0;
                        for (int z = 0; z < pick; z++)
                            dup |= shown[z] == (long)cv[q].virt;
                        if (p->vfile[cv[q].virt] == f && !dup && len > best) {
                            best = len;
                            bi = q;
                        }
                    }
                    if (best < 0)
                        break;
                    shown[pick] = (long)cv[bi].virt;
                    if (o < sizeof first_fail)
                        o += (size_t)snprintf(first_fail + o, sizeof first_fail - o, " %%%s %ld",
                                              p->vname[cv[bi].virt], best);
                }
                break;
            }
            int g = base + got;
            if (last_end[g] == LONG_MIN && cv[i].start < cut)
                wall[g] = cv[i].start + II;
            last_end[g] = cv[i].end;
            got_reg[i] = got;
        }
    }
    if (ok == 1) {
        uint64_t used = 0;
        for (size_t i = 0; i < nvals; i++) {
            s->reg[cv[i].copy * p->nv + cv[i].virt] = got_reg[i];
            used |= 1ull << ((p->vfile[cv[i].virt] == 'v' ? 0 : 32) + got_reg[i]);
        }
        s->vregs = (unsigned)__builtin_popcountll(used & 0xffffffffull);
        s->pregs = (unsigned)__builtin_popcountll(used >> 32);
    } else if (ok == 0) {
        memcpy(s->fail, first_fail, sizeof s->fail);
        s->vregs = s->pregs = 0;
    }
    free(cv);
    free(got_reg);
    free(tried);
    free(live_at);
    free(vals);
    return ok;
}

/* ---- one attempt ------------------------------------------------------------------------- */

/* The placement's times from 0, its stages, and its registers (allocate). */
static int place_and_allocate(sched *s, int expand)
{
    normalise(s);
    long tmax = 0;
    for (unsigned i = 0; i < s->nn; i++)
        tmax = s->n[i].t > tmax ? s->n[i].t : tmax;
    s->stages = (unsigned)(tmax / (long)s->II) + 1;
    return allocate(s, expand);
}

/* One placement variant at (K, II): 1 when its registers are allocated, 0
 * when they are not, -1 out of memory. Its last placement may be coloured
 * with the kernel expanded beyond its lifetimes' need (allocate's expand:
 * s->expanded > 1). */
static int attempt_one(pipe_block *b, unsigned K, unsigned II, unsigned strategy, int relief_on, sched *s)
{
    memset(s, 0, sizeof *s);
    s->b = b;
    s->K = K;
    s->II = II;
    s->strategy = strategy;
    s->cuts = relief_on ? PIPE_CUTS_RELIEVED : PIPE_CUTS;
    if (build_graph(s) < 0)
        return -1;
    int r = strategy == 4 ? sms(s) : ims(s);
    if (r <= 0)
        return r;
    if (stretch(s) < 0)
        return -1;
    /* the placement as it is, else compacted (which can also lengthen what
     * it does not look at), else (relief_on) relieved; a relieved placement
     * may be relieved again with a margin (relieve_again) */
    const int last = relief_on ? 2 : 1;
    for (int pass = 0;; pass++) {
        /* the tightest placement may take more kernel copies */
        r = place_and_allocate(s, pass == last);
        s->margin_may_help = r == 0 && relief_on && pass == last && !s->crowded;
        if (r != 0 || pass == last)
            return r;
        free(s->reg);
        s->reg = NULL;
        if ((pass == 0 ? compact(s) : relieve(s)) < 0)
            return -1;
    }
}

/* A relieved placement whose colouring ran out with no more values live at
 * once than registers (attempt_one's last pass, kept by attempt), relieved
 * again for `margin` vector registers fewer than the pool: lower peaks
 * leave the arcs room on the circle. */
static int relieve_again(sched *s, unsigned margin)
{
    free(s->reg);
    s->reg = NULL;
    s->margin = margin;
    if (relieve(s) < 0)
        return -1;
    return place_and_allocate(s, 1);
}

/* A kept relieved schedule placed again (ch->t): 1, or 0 when it is not
 * one of this block (only a file written by hand holds such a one), -1 out
 * of memory. Every node is checked against all the others where they are,
 * and every dependence, before registers are allocated as after a search. */
static int replay(pipe_block *b, const pipe_choice *ch, sched *s)
{
    memset(s, 0, sizeof *s);
    s->b = b;
    s->K = ch->K;
    s->II = ch->II;
    s->strategy = ch->way >= PIPE_VARIANTS ? relieved[ch->way - PIPE_VARIANTS].variant : ch->way;
    s->cuts = ch->way >= PIPE_VARIANTS ? PIPE_CUTS_RELIEVED : PIPE_CUTS;
    if (build_graph(s) < 0)
        return -1;
    const int r0 = mrt_init(s);
    if (r0 <= 0 || ch->nt != s->nn)
        return r0 < 0 ? r0 : 0;
    for (unsigned i = 0; i < s->nn; i++)
        if (place(s, i, (long)ch->t[i]) < 0)
            return -1;
    for (unsigned i = 0; i < s->nn; i++) {
        unplace(s, i);
        const int ok = fits(s, i, (long)ch->t[i]);
        if (place(s, i, (long)ch->t[i]) < 0)
            return -1;
        if (!ok)
            return 0;
    }
    for (unsigned q = 0; q < s->ne; q++)
        if (s->n[s->e[q].to].t < s->n[s->e[q].from].t + (long)s->e[q].lat)
            return 0;
    long tmax = 0;
    for (unsigned i = 0; i < s->nn; i++)
        tmax = s->n[i].t > tmax ? s->n[i].t : tmax;
    if (tmax / (long)s->II > (long)s->nn)
        return 0; /* a stage with no instruction: not a searched schedule (and a prologue without end) */
    s->stages = (unsigned)(tmax / (long)s->II) + 1;
    const int r = allocate(s, 1);
    s->way = ch->way;
    return r;
}

/* Placement variants, tried in turn until one fits the registers: IMS with
 * 0 iterations released II/K apart, placed one after the other, loads late;
 * 1 the same without release times; 2 loads as early as the rest;
 * 3 every iteration's highest instructions first; then
 * 4 swing modulo scheduling (sms), which keeps values shortest but cannot
 *   evict: it fits where the IMS variants run out of registers.
 * relief_on: then the relieved[] ways (relieve; with a margin, again).
 * When none fits with the kernel copies its lifetimes need, the first
 * whose last placement fits with more (allocate's expand) is taken.
 * only_way >= 0: that try alone (a kept schedule's). */
static int attempt(pipe_block *b, unsigned K, unsigned II, int relief_on, int only_way, sched *s)
{
    const unsigned ways = relief_on ? PIPE_WAYS : PIPE_VARIANTS;
    int r = 0, tried = 0;
    sched spare;
    memset(&spare, 0, sizeof spare);
    char fail[sizeof s->fail] = "";
    /* the relieved placements a margin may help (relieve_again), by variant */
    sched kept[PIPE_VARIANTS];
    memset(kept, 0, sizeof kept);
    for (unsigned way = 0; way < ways; way++) {
        if (only_way >= 0 && way != (unsigned)only_way)
            continue;
        const unsigned variant = way < PIPE_VARIANTS ? way : relieved[way - PIPE_VARIANTS].variant;
        const unsigned margin = way < PIPE_VARIANTS ? 0 : relieved[way - PIPE_VARIANTS].margin;
        if (margin && !kept[variant].n)
            continue; /* its relieved placement coloured, or too crowded for a margin to help
                         (or, a kept way alone, was not tried: the full search follows) */
        if (tried++)
            sched_free(s);
        if (margin) {
            *s = kept[variant];
            memset(&kept[variant], 0, sizeof kept[variant]);
            r = relieve_again(s, margin);
        } else {
            r = attempt_one(b, K, II, variant, way >= PIPE_VARIANTS, s);
        }
        if (r > 0)
            s->way = way;
        if (r < 0 || (r > 0 && s->expanded == 1)) {
            if (spare.n)
                sched_free(&spare);
            for (unsigned v = 0; v < PIPE_VARIANTS; v++)
                sched_free(&kept[v]);
            return r;
        }
        if (r == 0 && !margin && s->margin_may_help) {
            if (!fail[0])
                memcpy(fail, s->fail, sizeof fail);
            kept[variant] = *s; /* for its margin way, below */
            memset(s, 0, sizeof *s);
            continue;
        }
        if (r > 0) { /* fits with more copies: kept while a later way may fit with the least */
            if (!spare.n)
                spare = *s;
            else
                sched_free(s);
            memset(s, 0, sizeof *s);
            tried = 0;
            continue;
        }
        if (!fail[0])
            memcpy(fail, s->fail, sizeof fail);
    }
    for (unsigned v = 0; v < PIPE_VARIANTS; v++)
        sched_free(&kept[v]);
    if (spare.n) { /* no way fits with the least copies: the first that fits with more */
        if (tried)
            sched_free(s);
        *s = spare;
        return 1;
    }
    if (!tried)
        memset(s, 0, sizeof *s);
    memcpy(s->fail, fail, sizeof fail);
    return 0;
}

/* ---- output ------------------------------------------------------------------------------- */

static int mark(pipe_block *b, size_t op)
{
    if (op != b->body[0])
        return 0;
    if (asm_grow(b->c, (void **)&b->marks, &b->marks_cap, b->nmarks + 1, sizeof *b->marks) < 0)
        return -1;
    b->marks[b->nmarks++] = b->c->prog->count;
    return 0;
}

static int put(asm_ctx *c, const npu_insn *in, npu_srcloc loc)
{
    if (npu_program_append(c->prog, in, loc) < 0) {
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    return 0;
}

static int put_ctl(asm_ctx *c, npu_opcode op, uint8_t rd, uint8_t rs1, uint8_t rs2, int32_t imm,
                   npu_srcloc loc)
{
    npu_insn in = { .op = (uint16_t)op, .rd = rd, .rs1 = rs1, .rs2 = rs2, .imm = imm };
    return put(c, &in, loc);
}

static void patch(asm_ctx *c, size_t at, size_t target)
{
    npu_program *pr = c->prog;
    pr->insns[at].imm = (int32_t)((long)target - (long)at);
    pr->words[at] = npu_encode(&pr->insns[at]);
}

/* An instruction with its virtual registers replaced. */
static npu_insn concrete(const pipe_op *o, const int *reg_of_virt)
{
    npu_insn in = o->in;
    for (int f = 0; f < VIRT_FIELDS; f++)
        if (o->virt >> virt_field_id[f] & 1)
            *virt_field(&in, f) = (uint8_t)reg_of_virt[*virt_field(&in, f)];
    return in;
}

/* Written order, registers by a linear scan of one iteration: a value's
 * register is free again after its last read. */
static int plain_registers(pipe_block *b, int *reg)
{
    asm_pipe *p = b->p;
    int last[PIPE_MAX_VIRTUALS], freed[PIPE_MAX_VIRTUALS];
    for (size_t v = 0; v < p->nv; v++) {
        last[v] = b->def_op[v];
        reg[v] = -1;
        freed[v] = 0;
    }
    for (size_t i = 0; i < p->nops; i++)
        for (int u = 0; u < b->info[i].nuses; u++)
            last[b->info[i].uses[u]] = (int)i;
    uint32_t busy_v = ~b->vpool, busy_p = ~b->ppool & 0xffu;
    for (size_t i = 0; i < p->nops; i++) {
        for (size_t w = 0; w < p->nv; w++)
            if (reg[w] >= 0 && !freed[w] && last[w] <= (int)i) { /* i may write what it last reads */
                freed[w] = 1;
                if (p->vfile[w] == 'v')
                    busy_v &= ~(1u << reg[w]);
                else
                    busy_p &= ~(1u << reg[w]);
            }
        int v = b->info[i].def_virt;
        if (v < 0)
            continue;
        uint32_t *busy = p->vfile[v] == 'v' ? &busy_v : &busy_p;
        int n = p->vfile[v] == 'v' ? 32 : 8, got = -1;
        for (int r = 0; r < n && got < 0; r++)
            if (!(*busy >> r & 1))
                got = r;
        if (got < 0)
            return op_error(b, i, "%s: the .pipeline block needs more %s registers than are free",
                            mnem(&p->ops[i]), p->vfile[v] == 'v' ? "vector" : "predicate");
        *busy |= 1u << got;
        reg[v] = got;
    }
    return 0;
}

/* The plain loop: `beqz sC, done; top: body; loop sC, top; done:`. With
 * `count` it runs sC times; used for schedule off and for the iterations a
 * scheduled loop leaves over. */
static int emit_plain(pipe_block *b, const int *reg)
{
    asm_ctx *c = b->c;
    asm_pipe *p = b->p;
    npu_srcloc at = { p->file, p->line };
    size_t skip = c->prog->count;
    if (put_ctl(c, NPU_OP_BEQZ, 0, p->count_reg, 0, 0, at) < 0)
        return -1;
    size_t top = c->prog->count;
    for (size_t i = 0; i < p->nops; i++) {
        npu_insn in = concrete(&p->ops[i], reg);
        if (mark(b, i) < 0 || put(c, &in, p->ops[i].loc) < 0)
            return -1;
    }
    if (put_ctl(c, NPU_OP_LOOP, p->count_reg, 0, 0, 0, at) < 0)
        return -1;
    patch(c, c->prog->count - 1, top);
    patch(c, skip, c->prog->count);
    return 0;
}

/* Iterations' pointer bumps done before the op of node n at time t reads
 * its base: c(t) = #{j >= 0 : j II + t_bump < t}. */
static long bumps_before(const sched *s, int stream, long t)
{
    long tb = s->n[s->K * s->b->nbody + (unsigned)stream].t;
    return t > tb ? (t - tb + (long)s->II - 1) / (long)s->II : 0;
}

/* Emits the instructions of one row: epi < 0 for the kernel and prologue
 * slot (stage <= max_stage), or the epilogue's m-based clamp. */
static int emit_row(sched *s, unsigned row, int min_stage, int max_stage, long slot, int epi_e,
                    int with_pass, int with_loop, size_t loop_target)
{
    pipe_block *b = s->b;
    asm_ctx *c = b->c;
    asm_pipe *p = b->p;
    unsigned ids[64] = { 0 }, order[64], cnt = 0;
    for (unsigned i = 0; i < s->row_count[row] && cnt < 64; i++) {
        const node *n = &s->n[s->row_nodes[row][i]];
        int stage = (int)(n->t / (long)s->II);
        if (stage >= min_stage && stage <= max_stage)
            ids[cnt++] = s->row_nodes[row][i];
    }
    /* the kernel's order, which a subset keeps: the registers were allocated
     * for it (a write may follow a read of the register it takes in one
     * cycle); its slots stay valid */
    (void)row_order(s, ids, cnt, 0, order);
    unsigned nb = s->K * (unsigned)b->nbody;
    int regs[PIPE_MAX_VIRTUALS];
    for (unsigned i = 0; i < cnt; i++) {
        const node *n = &s->n[order[i]];
        const pipe_op *o = &p->ops[n->op];
        npu_insn in;
        if (order[i] >= nb) {
            const stream *st = &b->streams[order[i] - nb];
            in = o->in;
            in.imm = (int32_t)((long)st->delta * s->K);
        } else {
            /* the group this op belongs to decides its kernel copy's registers */
            long stage = n->t / (long)s->II;
            size_t phase = (size_t)mod(slot - stage, s->U);
            for (size_t v = 0; v < p->nv; v++)
                regs[v] = s->reg[(phase * s->K + n->copy) * p->nv + v];
            in = concrete(o, regs);
            int st = b->info[n->op].stream;
            if (st >= 0) {
                long cnt_b = bumps_before(s, st, n->t);
                if (epi_e >= 0) {
                    long m = (long)(n->t / (long)s->II) - epi_e;
                    cnt_b = cnt_b < m ? cnt_b : m;
                }
                long off = (long)o->in.imm + ((long)n->copy - cnt_b * (long)s->K) * b->streams[st].delta;
                if (off < INT32_MIN || off > INT32_MAX)
                    return asm_error_at(c, o->loc.file, o->loc.line, 1, "offset out of range after scheduling");
                in.imm = (int32_t)off;
            }
        }
        if ((order[i] < nb && mark(b, n->op) < 0) || put(c, &in, o->loc) < 0)
            return -1;
    }
    if (with_pass && s->row_pass[row] >= 0 && put(c, &p->pass[s->row_pass[row]].in, p->pass[s->row_pass[row]].loc) < 0)
        return -1;
    if (with_loop) {
        npu_srcloc at = { p->file, p->line };
        if (put_ctl(c, NPU_OP_LOOP, p->temp_reg, 0, 0, 0, at) < 0)
            return -1;
        patch(c, c->prog->count - 1, loop_target);
    }
    return 0;
}

static unsigned log2u(unsigned v)
{
    unsigned r = 0;
    while ((1u << r) < v)
        r++;
    return r;
}

/* The schedule as text: one line per kernel cycle, one column per slot, and
 * the values live in that cycle. */
static char *schedule_table(sched *s)
{
    pipe_block *b = s->b;
    asm_pipe *p = b->p;
    const npu_asm_machine *m = b->m;
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
#define APPEND(...)                                                                 \
    do {                                                                            \
        int need_ = snprintf(NULL, 0, __VA_ARGS__);                                 \
        if (len + (size_t)need_ + 1 > cap) {                                        \
            while (len + (size_t)need_ + 1 > cap)                                   \
                cap *= 2;                                                           \
            char *np_ = realloc(out, cap);                                          \
            if (!np_) {                                                             \
                free(out);                                                          \
                return NULL;                                                        \
            }                                                                       \
            out = np_;                                                              \
        }                                                                           \
        len += (size_t)snprintf(out + len, cap - len, __VA_ARGS__);                 \
    } while (0)
    APPEND("cycle");
    for (unsigned sl = 0; sl < m->issue_width; sl++)
        APPEND(" | slot %u", sl);
    APPEND(" | live v/p\n");
    unsigned nb = s->K * (unsigned)b->nbody;
    int idx[PIPE_MAX_OPS];
    for (size_t j = 0; j < b->nbody; j++)
        idx[b->body[j]] = (int)j;
    for (unsigned row = 0; row < s->II; row++) {
        unsigned order[64];
        char cell[8][64];
        memset(cell, 0, sizeof cell);
        unsigned cnt = s->row_count[row];
        if (row_order(s, s->row_nodes[row], cnt, 0, order) < 0)
            if (cnt)
                memcpy(order, s->row_nodes[row], cnt * sizeof *order);
        uint32_t taken = 0;
        const int pass = s->row_pass[row];
        for (unsigned i = 0; i <= cnt + 1; i++) {
            npu_class cls = i < cnt ? s->n[order[i]].cls : NPU_CLASS_BRANCH;
            if (i == cnt && pass < 0)
                continue;
            if (i == cnt)
                cls = (npu_class)npu_desc((npu_opcode)p->pass[pass].in.op)->cls;
            if (i == cnt + 1 && row != s->loop_row)
                break;
            unsigned sl = 0;
            while (sl < m->issue_width && ((taken >> sl & 1) || !(m->slot_classes[sl] >> cls & 1)))
                sl++;
            if (sl >= m->issue_width)
                break;
            taken |= 1u << sl;
            if (i == cnt) {
                snprintf(cell[sl], sizeof cell[sl], "%s (.pass)", mnem(&p->pass[pass]));
                continue;
            }
            if (i == cnt + 1) {
                snprintf(cell[sl], sizeof cell[sl], "loop");
                continue;
            }
            const node *n = &s->n[order[i]];
            const pipe_op *o = &p->ops[n->op];
            const op_info *oi = &b->info[n->op];
            if (order[i] >= nb) {
                snprintf(cell[sl], sizeof cell[sl], "%s s%u", mnem(o), o->in.rd);
            } else if (oi->def_virt >= 0) {
                snprintf(cell[sl], sizeof cell[sl], "%s %%%s.%u @%ld", mnem(o), p->vname[oi->def_virt],
                         n->copy, n->t / (long)s->II);
            } else {
                snprintf(cell[sl], sizeof cell[sl], "%s #%u @%ld", mnem(o), n->copy, n->t / (long)s->II);
            }
        }
        APPEND("%5u", row);
        for (unsigned sl = 0; sl < m->issue_width; sl++)
            APPEND(" | %-22s", cell[sl]);
        /* live values in this row */
        unsigned lv = 0, lp = 0;
        for (unsigned k = 0; k < s->K; k++)
            for (size_t v = 0; v < p->nv; v++) {
                if (b->def_op[v] < 0)
                    continue;
                const node *d = &s->n[node_of(s, k, (size_t)idx[b->def_op[v]])];
                long end = value_end(s, k, (unsigned)v, d);
                /* instances of this value (one per group, every II cycles) live in the row */
                long II = (long)s->II, r = (long)row;
                long first = d->t - r <= 0 ? (d->t - r) / II : (d->t - r + II - 1) / II;
                long last = end - r >= 0 ? (end - r) / II : -((r - end + II - 1) / II);
                long n_live = last >= first ? last - first + 1 : 0;
                if (p->vfile[v] == 'v')
                    lv += (unsigned)n_live;
                else
                    lp += (unsigned)n_live;
            }
        APPEND(" | %u/%u\n", lv, lp);
    }
#undef APPEND
    return out;
}

/* Huff's MinAvg inputs, from one iteration's dependence graph alone: the
 * least total lifetime of the values of one register file over every
 * timing of the iteration that its latencies allow. A value lives from its
 * producer's issue t_d to its last consumer's issue, and at least its
 * latency; each consumer issues at least its producers' latencies after
 * them. Minimising each value's lifetime on its own (the longest latency
 * path from its producer to its last consumer) would count two values that
 * cannot both be short as if they could (b read early and late, l made
 * early and read late); the least *sum* is a linear program in the issue
 * times t_j and each value's end L_v:
 *
 *   min sum_v (L_v - t_d(v))  s.t.  t_j - t_i >= lat_i (j reads i's value),
 *                                   L_v - t_j >= 0 (j reads v),
 *                                   L_v - t_d(v) >= lat_d(v)
 *
 * whose constraints are differences, so its dual is a maximum-weight flow:
 * one unit from each value's producer to some value's end, along the
 * constraints' arcs, weighted by their right-hand sides. Successive
 * shortest paths (costs = -weights; the arcs form a DAG, so the residual
 * graph never has a negative cycle) find it exactly, and its weight is the
 * program's optimum: every schedule's values of that file live at least
 * that many cycles per iteration. */
typedef struct flow_arc {
    int to, next;
    long cap, cost;
} flow_arc;

typedef struct flow_net {
    flow_arc *arc;
    int narcs, cap;
    int *head;
    int nodes;
} flow_net;

static int flow_add(flow_net *f, int from, int to, long cap, long cost)
{
    if (f->narcs + 2 > f->cap) {
        int ncap = f->cap ? 2 * f->cap : 256;
        flow_arc *na = realloc(f->arc, (size_t)ncap * sizeof *na);
        if (!na)
            return -1;
        f->arc = na;
        f->cap = ncap;
    }
    f->arc[f->narcs] = (flow_arc){ to, f->head[from], cap, cost };
    f->head[from] = f->narcs++;
    f->arc[f->narcs] = (flow_arc){ from, f->head[to], 0, -cost };
    f->head[to] = f->narcs++;
    return 0;
}

/* The least lifetime sum of file `file`'s values ('v' or 'p'), or -1 when
 * out of memory. */
static long least_lifetime_sum(const pipe_block *b, char file)
{
    const asm_pipe *p = b->p;
    enum { SRC = 0, SNK = 1, OPS = 2 };
    const int nodes = OPS + (int)p->nops + (int)p->nv;
    const long BIG = 1L << 40;
    flow_net f = { NULL, 0, 0, malloc((size_t)nodes * sizeof(int)), nodes };
    long *dist = malloc((size_t)nodes * sizeof *dist);
    int *via = malloc((size_t)nodes * sizeof *via), *queue = malloc((size_t)nodes * sizeof *queue);
    char *queued = calloc((size_t)nodes, 1);
    long total = -1;
    int units = 0;
    if (!f.head || !dist || !via || !queue || !queued)
        goto out;
    for (int i = 0; i < nodes; i++)
        f.head[i] = -1;
    for (size_t j = 0; j < p->nops; j++) {
        const op_info *oi = &b->info[j];
        for (int u = 0; u < oi->nuses; u++) {
            const int v = oi->uses[u], d = b->def_op[v];
            if (d < 0)
                continue;
            /* t_j >= t_d + lat_d */
            if (flow_add(&f, OPS + d, OPS + (int)j, BIG, -(long)b->m->unit[b->info[d].unit].latency) < 0)
                goto out;
            /* L_v >= t_j */
            if (p->vfile[v] == file && flow_add(&f, OPS + (int)j, OPS + (int)p->nops + v, BIG, 0) < 0)
                goto out;
        }
    }
    for (unsigned v = 0; v < p->nv; v++) {
        const int d = b->def_op[v];
        if (d < 0 || p->vfile[v] != file)
            continue;
        const int end = OPS + (int)p->nops + (int)v;
        if (flow_add(&f, OPS + d, end, BIG, -(long)b->m->unit[b->info[d].unit].latency) < 0 ||
            flow_add(&f, SRC, OPS + d, 1, 0) < 0 || flow_add(&f, end, SNK, 1, 0) < 0)
            goto out;
        units++;
    }
    total = 0;
    for (int k = 0; k < units; k++) {
        /* the cheapest residual path SRC -> SNK (Bellman-Ford with a queue) */
        for (int i = 0; i < nodes; i++)
            dist[i] = LONG_MAX, via[i] = -1;
        int qh = 0, qn = 0;
        dist[SRC] = 0;
        queue[qn++] = SRC;
        queued[SRC] = 1;
        while (qn) {
            const int x = queue[qh];
            qh = (qh + 1) % nodes;
            qn--;
            queued[x] = 0;
            for (int a = f.head[x]; a >= 0; a = f.arc[a].next) {
                const flow_arc *r = &f.arc[a];
                if (r->cap > 0 && dist[x] + r->cost < dist[r->to]) {
                    dist[r->to] = dist[x] + r->cost;
                    via[r->to] = a;
                    if (!queued[r->to]) {
                        queue[(qh + qn) % nodes] = r->to;
                        qn++;
                        queued[r->to] = 1;
                    }
                }
            }
        }
        if (via[SNK] < 0) { /* cannot happen: each producer reaches its value's end */
            total = -1;
            goto out;
        }
        for (int x = SNK; x != SRC; x = f.arc[via[x] ^ 1].to) {
            f.arc[via[x]].cap -= 1;
            f.arc[via[x] ^ 1].cap += 1;
        }
        total -= dist[SNK];
    }
out:
    free(f.arc);
    free(f.head);
    free(dist);
    free(via);
    free(queue);
    free(queued);
    return total;
}

/* Huff's MinAvg inputs: the registers free for the block's values, and per
 * file the least lifetime sum above (0 on its own failure, which only an
 * allocation can cause: then the floor is lost, never overstated). */
static long block_lifetime_sum(pipe_block *b, char file)
{
    const int k = file == 'p';
    if (!b->least_known[k]) {
        b->least_sum[k] = least_lifetime_sum(b, file);
        b->least_known[k] = b->least_sum[k] >= 0; /* out of memory: asked again */
    }
    return b->least_sum[k];
}

static void min_lifetimes(pipe_block *b, npu_sched_loop *l)
{
    l->regs_v = (unsigned)__builtin_popcount(b->vpool);
    l->regs_p = (unsigned)__builtin_popcount(b->ppool & 0xffu);
    if (!b->m)
        return;
    const long sv = block_lifetime_sum(b, 'v'), sp = block_lifetime_sum(b, 'p');
    l->lifetime_sum_v = sv > 0 ? (unsigned long)sv : 0;
    l->lifetime_sum_p = sp > 0 ? (unsigned long)sp : 0;
}

/* One iteration's vector loads and stores, each address once: a vector read
 * again (an address as written, plus its pointer's bump when the bump
 * comes first) is one load. */
static void count_vector_accesses(const pipe_block *b, unsigned *loads, unsigned *stores)
{
    const asm_pipe *p = b->p;
    long at[PIPE_MAX_OPS];
    int base[PIPE_MAX_OPS], kind[PIPE_MAX_OPS];
    size_t n = 0;
    *loads = *stores = 0;
    for (size_t j = 0; j < p->nops; j++) {
        const npu_insn *in = &p->ops[j].in;
        if (!npu_format_has_vector_mem((npu_format)npu_insn_table[in->op].format))
            continue;
        const op_info *oi = &b->info[j];
        const stream *st = oi->stream >= 0 ? &b->streams[oi->stream] : NULL;
        const long addr = (long)in->imm + (st && st->op < j ? st->delta : 0);
        const int store = oi->is_store;
        int seen = 0;
        for (size_t k = 0; k < n && !seen; k++)
            seen = base[k] == in->rs1 && at[k] == addr && kind[k] == store;
        if (seen)
            continue;
        base[n] = in->rs1;
        at[n] = addr;
        kind[n++] = store;
        (*(store ? stores : loads))++;
    }
}

static int record_loop(pipe_block *b, size_t begin, size_t kb, size_t ke, const sched *s,
                       unsigned mii_res, unsigned mii_rec, const char *binding, char *table)
{
    asm_ctx *c = b->c;
    npu_program *pr = c->prog;
    npu_sched_loop *l = realloc(pr->loops, (pr->nloops + 1) * sizeof *l);
    if (!l) {
        free(table);
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    pr->loops = l;
    l = &pr->loops[pr->nloops++];
    memset(l, 0, sizeof *l);
    l->loc = (npu_srcloc){ b->p->file, b->p->line };
    l->begin = begin;
    l->end = pr->count;
    l->kernel_begin = kb;
    l->kernel_end = ke;
    l->ops = (unsigned)b->p->nops;
    l->trips = b->p->trips;
    l->room = b->p->room;
    count_vector_accesses(b, &l->vector_loads, &l->vector_stores);
    l->pad_from = b->pad_from;
    l->pad_leftovers = b->pad_leftovers;
    l->prologue_iterations = b->prologue_iterations;
    l->table = table;
    l->kernel_cycles = b->kernel_cycles;
    b->kernel_cycles = NULL;
    l->iter_pcs = b->marks;
    l->n_iter_pcs = b->nmarks;
    b->marks = NULL;
    b->nmarks = b->marks_cap = 0;
    min_lifetimes(b, l);
    l->binding = binding ? strdup(binding) : NULL;
    if (s) {
        l->scheduled = 1;
        l->unroll = s->K * s->U;
        l->ii = s->II * s->U;
        l->mii_res = mii_res * s->U;
        l->mii_rec = mii_rec * s->U;
        l->mii = l->mii_res > l->mii_rec ? l->mii_res : l->mii_rec;
        l->stages = s->stages;
        l->vregs = s->vregs;
        l->pregs = s->pregs;
        l->max_live = s->max_live;
    } else {
        l->unroll = 1;
        l->stages = 1;
    }
    return 0;
}

/* remainder loop, prologue, kernel, epilogue (see the file's header). The
 * schedule runs K iterations (a group) per II cycles, stage by stage; the
 * kernel is U copies of it (register names rotate through the copies), so
 * the prologue fills P = a multiple of U >= stages - 1 slots, and sC is
 * split into groups of K U iterations, the rest run first in written order
 * (with a room, as one more group where that is cheaper: below). */
static int emit_scheduled(pipe_block *b, sched *s, const int *plain_reg, unsigned mii_res,
                          unsigned mii_rec, const char *binding)
{
    asm_ctx *c = b->c;
    asm_pipe *p = b->p;
    npu_srcloc at = { p->file, p->line };
    size_t begin = c->prog->count;
    unsigned K = s->K, U = s->U, S = s->stages, II = s->II, KU = K * U;
    unsigned P = U * ((S - 1 + U - 1) / U);
    uint8_t sc = p->count_reg, st = p->temp_reg;
    /* With a room whole groups fill, a count is rounded up to whole groups
     * where that is cheaper: its leftovers, at least pad_leftovers of them,
     * would cost more in written order (an iteration there takes `written`
     * cycles, search_block) than one more kernel pass (U II); a count too
     * small for the prologue, at least pad_from, would cost more there than
     * the prologue and epilogue (P / U groups; when the room holds them).
     * A count of whole groups runs the same code as without a room. */
    const double one = b->written;
    int padded = KU > 1 && p->room && p->room % KU == 0;
    unsigned pad_leftovers = 0, pad_from = 0;
    if (padded) {
        pad_leftovers = (unsigned)ceil((double)U * II / one - 1e-9);
        pad_leftovers = pad_leftovers ? pad_leftovers : 1;
        padded = pad_leftovers < KU; /* else no leftover is worth a pass */
        pad_leftovers = padded ? pad_leftovers : 0;
    }
    if (padded && (unsigned long)(P / U) * KU <= p->room) {
        pad_from = (unsigned)ceil((double)(P + S - 1) * II / one - 1e-9);
        pad_from = pad_from ? pad_from : 1; /* a count of 0 runs nothing */
    }
    if (p->pass_reg && put_ctl(c, NPU_OP_LI, p->pass_reg, 0, 0, (int32_t)K * p->pass_scale, at) < 0)
        return -1;
    /* sT = kernel passes = sC / (K U) - P / U; too few: all in the plain loop */
    if (put_ctl(c, KU > 1 ? NPU_OP_SRLI : NPU_OP_ADDI, st, sc, 0, KU > 1 ? (int32_t)log2u(KU) : 0, at) < 0)
        return -1;
    if (P && put_ctl(c, NPU_OP_ADDI, st, st, 0, -(int32_t)(P / U), at) < 0)
        return -1;
    size_t to_small = c->prog->count;
    if (put_ctl(c, NPU_OP_BLT, 0, st, 0, 0, at) < 0) /* blt sT, s0: sT < 0 */
        return -1;
    size_t prologue_from[2] = { 0, 0 };
    if (KU > 1) {
        if (put_ctl(c, NPU_OP_ANDI, sc, sc, 0, (int32_t)(KU - 1), at) < 0)
            return -1;
        if (padded) {
            /* leftovers: none, as without a room; enough: one more pass */
            prologue_from[0] = c->prog->count;
            if (put_ctl(c, NPU_OP_BEQZ, 0, sc, 0, 0, at) < 0)
                return -1;
            size_t few = 0;
            if (pad_leftovers > 1) {
                few = c->prog->count + 1;
                if (put_ctl(c, NPU_OP_ADDI, sc, sc, 0, -(int32_t)pad_leftovers, at) < 0 ||
                    put_ctl(c, NPU_OP_BLT, 0, sc, 0, 0, at) < 0)
                    return -1;
            }
            prologue_from[1] = c->prog->count + 1;
            if (put_ctl(c, NPU_OP_ADDI, st, st, 0, 1, at) < 0 || put_ctl(c, NPU_OP_J, 0, 0, 0, 0, at) < 0)
                return -1;
            if (few) {
                patch(c, few, c->prog->count);
                if (put_ctl(c, NPU_OP_ADDI, sc, sc, 0, (int32_t)pad_leftovers, at) < 0)
                    return -1;
            }
        }
        if (emit_plain(b, plain_reg) < 0) /* the sC % (K U) iterations left over, first */
            return -1;
        for (int k = 0; k < 2; k++)
            if (prologue_from[k])
                patch(c, prologue_from[k], c->prog->count);
    }
    const size_t prologue = c->prog->count;
    for (unsigned j = 0; j < P; j++) /* prologue */
        for (unsigned row = 0; row < II; row++)
            if (emit_row(s, row, 0, j < S - 1 ? (int)j : (int)S - 1, j, -1, 0, 0, 0) < 0)
                return -1;
    size_t skip_kernel = c->prog->count;
    if (put_ctl(c, NPU_OP_BEQZ, 0, st, 0, 0, at) < 0)
        return -1;
    size_t kb = c->prog->count;
    uint32_t *cycles = NULL;
    size_t ncycles = 0, cycles_cap = 0;
    for (unsigned u = 0; u < U; u++)
        for (unsigned row = 0; row < II; row++) {
            if (emit_row(s, row, 0, (int)S - 1, u, -1, 1, u == U - 1 && row == II - 1, kb) < 0 ||
                asm_grow(c, (void **)&cycles, &cycles_cap, c->prog->count - kb, sizeof *cycles) < 0) {
                free(cycles);
                return -1;
            }
            while (kb + ncycles < c->prog->count)
                cycles[ncycles++] = u * II + row;
        }
    size_t ke = c->prog->count;
    b->kernel_cycles = cycles;
    patch(c, skip_kernel, ke);
    for (unsigned e = 0; e + 1 < S; e++) /* epilogue */
        for (unsigned row = 0; row < II; row++)
            if (emit_row(s, row, (int)e + 1, (int)S - 1, e, (int)e, 0, 0, 0) < 0)
                return -1;
    size_t to_done = c->prog->count;
    if (put_ctl(c, NPU_OP_J, 0, 0, 0, 0, at) < 0)
        return -1;
    patch(c, to_small, c->prog->count);
    if (pad_from) {
        /* too few for the prologue, and enough to pay for it: the count
         * rounded up to the prologue's groups (sT = 0 kernel passes) */
        if (put_ctl(c, NPU_OP_ADDI, st, sc, 0, -(int32_t)pad_from, at) < 0)
            return -1;
        const size_t to_plain = c->prog->count;
        if (put_ctl(c, NPU_OP_BLT, 0, st, 0, 0, at) < 0 || put_ctl(c, NPU_OP_LI, st, 0, 0, 0, at) < 0 ||
            put_ctl(c, NPU_OP_J, 0, 0, 0, 0, at) < 0)
            return -1;
        patch(c, c->prog->count - 1, prologue);
        patch(c, to_plain, c->prog->count);
    }
    if (emit_plain(b, plain_reg) < 0)
        return -1;
    patch(c, to_done, c->prog->count);
    b->prologue_iterations = P / U * KU;
    b->pad_from = pad_from;
    b->pad_leftovers = pad_leftovers;
    return record_loop(b, begin, kb, ke, s, mii_res, mii_rec, binding, schedule_table(s));
}

/* ---- the schedules of this process, by block and machine ------------------------- */

/* A block scheduled before for the same machine (a macro expanded once per
 * buffer, the same kernel assembled again for another run or test) takes its
 * (K, II) without the search. The search is deterministic, and the key holds
 * everything it reads (the block's instructions, virtual marks, registers and
 * trips; the machine), so the program is the same bits: only assembly time
 * changes. Shared by the threads of the process; bounded (the oldest entry
 * goes first), so a long-lived process does not grow. */
enum { PIPE_CACHE_MAX = 1024 };

typedef struct pipe_cache_entry {
    unsigned char *key;
    size_t len;
    pipe_choice ch;
} pipe_cache_entry;

static struct {
    pthread_mutex_t lock;
    pipe_cache_entry e[PIPE_CACHE_MAX];
    size_t count, next; /* entries held; the slot the next one takes */
    unsigned long hits, misses;
} pipe_cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned char *put_bytes(unsigned char *o, const void *v, size_t n)
{
    memcpy(o, v, n);
    return o + n;
}

size_t asm_machine_bytes(const npu_asm_machine *m, unsigned char *out)
{
    unsigned char buf[sizeof m->issue_width + sizeof m->slot_classes + (NPU_NUM_UNITS * 3 + 2) * sizeof(unsigned)];
    unsigned char *o = out ? out : buf;
    o = put_bytes(o, &m->issue_width, sizeof m->issue_width);
    o = put_bytes(o, m->slot_classes, sizeof m->slot_classes);
    for (int u = 0; u < NPU_NUM_UNITS; u++) {
        o = put_bytes(o, &m->unit[u].count, sizeof(unsigned));
        o = put_bytes(o, &m->unit[u].latency, sizeof(unsigned));
        o = put_bytes(o, &m->unit[u].interval, sizeof(unsigned));
    }
    o = put_bytes(o, &m->vlen_bytes, sizeof(unsigned));
    o = put_bytes(o, &m->ub_bytes, sizeof(unsigned));
    return (size_t)(o - (out ? out : buf));
}

/* An instruction field by field (its padding bytes never take part). */
static unsigned char *put_insn(unsigned char *o, const npu_insn *in)
{
    npu_insn clean;
    memset(&clean, 0, sizeof clean);
    clean.op = in->op, clean.dt = in->dt, clean.rd = in->rd, clean.rs1 = in->rs1, clean.rs2 = in->rs2;
    clean.rs3 = in->rs3, clean.pg = in->pg, clean.pm = in->pm, clean.vl = in->vl, clean.imm = in->imm;
    return put_bytes(o, &clean, sizeof clean);
}

static unsigned char *cache_key(const asm_pipe *p, const npu_asm_machine *m, size_t *len)
{
    *len = sizeof p->count_reg + sizeof p->temp_reg + sizeof p->trips + asm_machine_bytes(m, NULL) +
           p->nops * (sizeof(npu_insn) + sizeof(unsigned));
    if (p->npass) /* only then: the keys of blocks without one stay as they were */
        *len += sizeof p->pass_reg + sizeof p->pass_scale + p->npass * sizeof(npu_insn);
    unsigned char *k = calloc(*len, 1), *o = k;
    if (!k)
        return NULL;
    /* field by field: padding bytes never take part */
    o = put_bytes(o, &p->count_reg, sizeof p->count_reg);
    o = put_bytes(o, &p->temp_reg, sizeof p->temp_reg);
    o = put_bytes(o, &p->trips, sizeof p->trips);
    o += asm_machine_bytes(m, o);
    for (size_t i = 0; i < p->nops; i++) {
        o = put_insn(o, &p->ops[i].in);
        o = put_bytes(o, &p->ops[i].virt, sizeof(unsigned));
    }
    if (p->npass) {
        o = put_bytes(o, &p->pass_reg, sizeof p->pass_reg);
        o = put_bytes(o, &p->pass_scale, sizeof p->pass_scale);
    }
    for (size_t i = 0; i < p->npass; i++)
        o = put_insn(o, &p->pass[i].in);
    return k;
}

/* *to = a copy of from, its times too: 0, or -1 out of memory. */
static int choice_copy(pipe_choice *to, const pipe_choice *from)
{
    *to = *from;
    to->t = NULL;
    if (!from->nt)
        return 0;
    if (!(to->t = malloc(from->nt * sizeof *to->t))) {
        *to = (pipe_choice){ 0, 0, 0, 0, NULL }; /* nothing found */
        return -1;
    }
    memcpy(to->t, from->t, from->nt * sizeof *to->t);
    return 0;
}

/* The table, pipe_cache.lock held. table_find copies the choice (the caller
 * frees its times); table_put takes k and ch's times (freed with the
 * entry). */
static int table_find(const unsigned char *k, size_t len, pipe_choice *ch)
{
    for (size_t i = 0; i < pipe_cache.count; i++)
        if (pipe_cache.e[i].len == len && memcmp(pipe_cache.e[i].key, k, len) == 0)
            return choice_copy(ch, &pipe_cache.e[i].ch) < 0 ? 0 : 1;
    return 0;
}

static void table_put(unsigned char *k, size_t len, pipe_choice ch)
{
    pipe_cache_entry *e = &pipe_cache.e[pipe_cache.next];
    free(e->key);
    free(e->ch.t);
    *e = (pipe_cache_entry){ k, len, ch };
    pipe_cache.next = (pipe_cache.next + 1) % PIPE_CACHE_MAX;
    if (pipe_cache.count < PIPE_CACHE_MAX)
        pipe_cache.count++;
}

/* ---- schedules kept across processes (npu_asm_cache_set_file) ------------
 *
 * One line per block a search scheduled, appended by one write(2) to a file
 * opened with O_APPEND (so processes that share the file never interleave
 * their lines):
 *
 *   npusim-schedule <NPU_SCHED_VERSION>-<host> <K> <II> <way> <cycles> <key in hex> <sum>\n
 *
 * <sum> is 16 hex digits, a hash of the line before it (disk_hash), checked
 * before a line is taken: a line edited by hand or damaged on the disk, whose
 * (K, II) would still schedule into another program, is skipped. A file that
 * is neither empty nor starts with "npusim-schedule " is not a schedule
 * file: it is neither read, appended to nor emptied (a mistyped
 * NPUSIM_SCHEDULE_CACHE naming a user's file), and a path that is not a
 * plain file (a FIFO, a device) is never opened to block.
 *
 * The version is a hash of the scheduler's sources (isa/gen_sched_version.py)
 * and the host tag the key's byte order and word size, so a line written by
 * any other build is never taken. The file is read once per process, at the
 * first block the table does not hold, a slice at a time, into an index of
 * its lines of this build (where each lies, and a hash of its key); a block
 * the table does not hold is then looked up in the index, and the lines
 * whose key hashes alike are read again, parsed and compared whole (the
 * first for its key wins): a process keeps no copy of the file, however
 * large. The block joins the table. A line that is not whole and well
 * formed, or for another build, is skipped. A file above DISK_MAX_BYTES is
 * emptied before it is read. Nothing here can change a program: a key holds
 * everything the search reads, and a cached (K, II) that does not schedule
 * sends the block to the full search (asm_pipe_end). <way> is the try of
 * attempt that found it, the only one a kept schedule repeats; <cycles> is
 * `-`, or for a relieved one every node's cycle (`12,0,7,...`), placed
 * again instead of searched (replay). Errors of the file (no
 * folder, no room) only cost the time the file would have saved. */
enum { DISK_MAX_BYTES = 16 << 20, DISK_MAX_KEY = 1 << 16, DISK_SUM_DIGITS = 16 };

/* Every line of a schedule file starts so; a file that does not is not one. */
static const char disk_magic[] = "npusim-schedule ";

/* A line of the file this build may take: its key in hex (in the file's
 * text, not decoded) and its schedule. */
typedef struct {
    const char *hex;
    size_t hexlen;
    pipe_choice ch;     /* its times not parsed (disk_times) */
    const char *times;  /* the cycles field, `-` or a list */
    size_t timeslen;
    const char *sum;    /* DISK_SUM_DIGITS hex digits at the line's end */
} disk_line_ref;

/* Where a line of this build lies in the file, and its key's hash. */
typedef struct {
    off_t at;
    size_t len; /* without its '\n' */
    size_t hexlen;
    uint64_t hash;
} disk_index;

static struct {
    char *path;  /* NULL: no file */
    int loaded;  /* read once since the path was set */
    int fd;      /* open from the first read on (-1: none) */
    disk_index *lines;
    size_t nlines;
} disk = { NULL, 0, -1, NULL, 0 };

/* The start of every line of this build: "npusim-schedule VERSION-HOST ",
 * HOST the byte order and pointer bits (le64). */
static void disk_prefix(char *out, size_t size)
{
    const uint16_t one = 1;
    snprintf(out, size, "npusim-schedule %s-%s%zu ", NPU_SCHED_VERSION, *(const uint8_t *)&one ? "le" : "be",
             8 * sizeof(void *));
}

/* One line of the file: 1 and *out when it is whole, well formed and of
 * this build (its hex digits are checked by the comparison that finds it:
 * a line with any other character matches no key). */
static int disk_parse(const char *line, size_t n, const char *prefix, disk_line_ref *out)
{
    const size_t pl = strlen(prefix);
    if (n <= pl || memcmp(line, prefix, pl) != 0)
        return 0;
    const char *q = line + pl, *end = line + n;
    unsigned long v[3]; /* K, II, way */
    for (int f = 0; f < 3; f++) {
        char *stop;
        errno = 0;
        v[f] = strtoul(q, &stop, 10);
        if (stop == q || *stop != ' ' || errno)
            return 0;
        q = stop + 1;
    }
    if (end - q < DISK_SUM_DIGITS + 1 || end[-DISK_SUM_DIGITS - 1] != ' ')
        return 0;
    out->sum = end - DISK_SUM_DIGITS;
    end -= DISK_SUM_DIGITS + 1;
    const char *times = q, *sp = memchr(q, ' ', (size_t)(end - q));
    if (!sp)
        return 0;
    const size_t timeslen = (size_t)(sp - times);
    q = sp + 1;
    const size_t hex = (size_t)(end - q);
    if (v[0] == 0 || v[0] > PIPE_MAX_UNROLL || v[1] == 0 || v[1] > UINT_MAX / 2 || v[2] >= PIPE_WAYS || hex == 0 ||
        hex % 2 || hex / 2 > DISK_MAX_KEY || timeslen == 0)
        return 0;
    const char *sum = out->sum;
    *out = (disk_line_ref){ q, hex, { (unsigned)v[0], (unsigned)v[1], (unsigned)v[2], 0, NULL }, times, timeslen,
                            sum };
    return 1;
}

/* A key's hex text hashed (FNV-1a over 8-byte words): equal texts, equal
 * hashes; the index compares these before it reads a line again. */
static uint64_t disk_hash(const char *hex, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, hex + i, 8);
        h = (h ^ w) * 0x100000001b3u;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)hex[i]) * 0x100000001b3u;
    return h;
}

static const char hex_digits[] = "0123456789abcdef";

/* The sum a line of n bytes (without " SUM") ends with. */
static void disk_sum(const char *line, size_t n, char out[DISK_SUM_DIGITS])
{
    uint64_t h = disk_hash(line, n);
    for (int i = DISK_SUM_DIGITS - 1; i >= 0; i--, h >>= 4)
        out[i] = hex_digits[h & 15];
}

/* 1 when the open file `fd` may be a schedule file: a plain file, empty or
 * starting with disk_magic. */
static int disk_ours(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    if (st.st_size == 0)
        return 1;
    char head[sizeof disk_magic - 1];
    return pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head && memcmp(head, disk_magic, sizeof head) == 0;
}

static void disk_forget(void)
{
    if (disk.fd >= 0)
        close(disk.fd);
    disk.fd = -1;
    free(disk.lines);
    disk.lines = NULL;
    disk.nlines = 0;
}

/* The longest line of this build: the prefix, three numbers, every node's
 * cycle and the key. Longer lines are skipped unread. */
enum { DISK_SLICE = 256 << 10,
       DISK_MAX_LINE = 128 + 11 * (PIPE_MAX_NODES + PIPE_MAX_STREAMS) + 2 * DISK_MAX_KEY };

/* Reads the file, once (pipe_cache.lock held), a slice at a time, and
 * indexes the lines this build may take: a process pays one pass over the
 * file however many blocks it looks up, keeps no copy of it, and can find
 * every line of it (the in-memory table holds only the last PIPE_CACHE_MAX
 * blocks). */
static void disk_load(void)
{
    if (!disk.path || disk.loaded)
        return;
    disk.loaded = 1;
    disk_forget();
    /* O_NONBLOCK: a FIFO opens at once (and is refused below) */
    const int fd = open(disk.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (!disk_ours(fd) || fstat(fd, &st) != 0) {
        close(fd);
        return;
    }
    if (st.st_size > DISK_MAX_BYTES) {
        close(fd);
        if (truncate(disk.path, 0) != 0) {
            /* start again; lines being appended are lost, no more */
        }
        return;
    }
    const size_t size = DISK_SLICE > DISK_MAX_LINE ? DISK_SLICE : DISK_MAX_LINE + 1;
    char *buf = malloc(size);
    if (!buf) {
        close(fd);
        return;
    }
    char prefix[96];
    disk_prefix(prefix, sizeof prefix);
    size_t cap = 0, have = 0; /* bytes in buf, from file offset base */
    off_t base = 0;
    int skipping = 0;         /* inside a line too long to index */
    for (;;) {
        const ssize_t r = read(fd, buf + have, size - have);
        if (r <= 0)
            break; /* the end (a last line without its end is still being written) */
        have += (size_t)r;
        size_t at = 0;
        for (;;) {
            const char *nl = memchr(buf + at, '\n', have - at);
            if (!nl)
                break;
            const size_t n = (size_t)(nl - (buf + at));
            disk_line_ref ref;
            if (!skipping && disk_parse(buf + at, n, prefix, &ref)) {
                if (disk.nlines == cap) {
                    cap = cap ? 2 * cap : 256;
                    disk_index *grown = realloc(disk.lines, cap * sizeof *grown);
                    if (!grown)
                        goto out; /* the lines indexed so far serve */
                    disk.lines = grown;
                }
                disk.lines[disk.nlines++] =
                    (disk_index){ base + (off_t)at, n, ref.hexlen, disk_hash(ref.hex, ref.hexlen) };
            }
            skipping = 0;
            at += n + 1;
        }
        /* What is left is the start of a line: moved to the front, or
         * dropped when not even the longest line fits before it ends. */
        if (at == 0 && have == size) {
            skipping = 1;
            at = have;
        }
        memmove(buf, buf + at, have - at);
        base += (off_t)at;
        have -= at;
    }
out:
    free(buf);
    if (disk.nlines)
        disk.fd = fd;
    else
        close(fd);
}

/* A line's choice with its cycles parsed: 1, or 0 when the field is not `-`
 * or a list of at most PIPE_MAX_NODES + PIPE_MAX_STREAMS numbers (or out of
 * memory). */
static int disk_times(const disk_line_ref *ref, pipe_choice *ch)
{
    *ch = ref->ch;
    if (ref->timeslen == 1 && ref->times[0] == '-')
        return 1;
    const size_t most = PIPE_MAX_NODES + PIPE_MAX_STREAMS;
    ch->t = malloc(most * sizeof *ch->t);
    if (!ch->t) {
        *ch = (pipe_choice){ 0, 0, 0, 0, NULL };
        return 0;
    }
    const char *q = ref->times, *end = ref->times + ref->timeslen;
    while (q < end && ch->nt < most) {
        unsigned v = 0;
        const char *d = q;
        while (q < end && *q >= '0' && *q <= '9' && v <= UINT_MAX / 20)
            v = v * 10 + (unsigned)(*q++ - '0');
        if (q == d || (q < end && *q != ','))
            break;
        ch->t[ch->nt++] = v;
        if (q < end)
            q++;
        else
            return 1;
    }
    free(ch->t);
    *ch = (pipe_choice){ 0, 0, 0, 0, NULL };
    return 0;
}

/* The file's first line for key k (pipe_cache.lock held): 1 and its
 * choice. Lines whose key hashes as k's are read again, parsed and compared
 * whole; a line the file no longer holds as indexed (emptied since) is not
 * taken. */
static int disk_find(const unsigned char *k, size_t len, pipe_choice *ch)
{
    disk_load();
    if (!disk.nlines || len > DISK_MAX_KEY)
        return 0;
    char *hex = malloc(2 * len);
    if (!hex)
        return 0;
    for (size_t i = 0; i < len; i++) {
        hex[2 * i] = hex_digits[k[i] >> 4];
        hex[2 * i + 1] = hex_digits[k[i] & 15];
    }
    const uint64_t h = disk_hash(hex, 2 * len);
    char prefix[96];
    disk_prefix(prefix, sizeof prefix);
    char *line = NULL;
    int found = 0;
    for (size_t i = 0; i < disk.nlines && !found; i++) {
        const disk_index *x = &disk.lines[i];
        if (x->hexlen != 2 * len || x->hash != h)
            continue;
        if (!line && !(line = malloc(DISK_MAX_LINE)))
            break;
        disk_line_ref ref;
        if (x->len <= DISK_MAX_LINE && pread(disk.fd, line, x->len, x->at) == (ssize_t)x->len &&
            disk_parse(line, x->len, prefix, &ref) && ref.hexlen == 2 * len && memcmp(ref.hex, hex, 2 * len) == 0) {
            char sum[DISK_SUM_DIGITS];
            disk_sum(line, x->len - DISK_SUM_DIGITS - 1, sum);
            if (memcmp(sum, ref.sum, DISK_SUM_DIGITS) == 0)
                found = disk_times(&ref, ch);
        }
    }
    free(line);
    free(hex);
    return found;
}

/* Makes the folders above `path` (mkdir -p of its parent), as the first
 * schedule kept needs them: 1 when they exist after. */
static int disk_make_folders(const char *path)
{
    char *dir = strdup(path);
    if (!dir)
        return 0;
    char *slash = strrchr(dir, '/');
    int ok = 1;
    if (slash && slash != dir) {
        *slash = '\0';
        for (char *p = dir + 1; ok && *p; p++)
            if (*p == '/') {
                *p = '\0';
                ok = mkdir(dir, 0755) == 0 || errno == EEXIST;
                *p = '/';
            }
        ok = ok && (mkdir(dir, 0755) == 0 || errno == EEXIST);
    }
    free(dir);
    return ok;
}

/* Appends one block's schedule (pipe_cache.lock held). */
static void disk_append(const unsigned char *k, size_t len, pipe_choice ch)
{
    if (!disk.path || len > DISK_MAX_KEY)
        return;
    char head[128];
    disk_prefix(head, sizeof head);
    const size_t pl = strlen(head);
    int hl = (int)pl + snprintf(head + pl, sizeof head - pl, "%u %u %u ", ch.K, ch.II, ch.way);
    char *line = malloc((size_t)hl + 11 * (size_t)ch.nt + 2 + 2 * len + 1 + DISK_SUM_DIGITS + 1);
    if (!line)
        return;
    memcpy(line, head, (size_t)hl);
    if (!ch.nt)
        line[hl++] = '-';
    for (unsigned i = 0; i < ch.nt; i++)
        hl += sprintf(line + hl, i ? ",%u" : "%u", ch.t[i]);
    line[hl++] = ' ';
    for (size_t i = 0; i < len; i++) {
        line[hl + 2 * i] = hex_digits[k[i] >> 4];
        line[hl + 2 * i + 1] = hex_digits[k[i] & 15];
    }
    size_t n = (size_t)hl + 2 * len;
    line[n] = ' ';
    disk_sum(line, n, line + n + 1);
    n += 1 + DISK_SUM_DIGITS;
    line[n++] = '\n';
    /* O_NONBLOCK: a FIFO is not waited on (and is refused by disk_ours) */
    int fd = open(disk.path, O_RDWR | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT && disk_make_folders(disk.path))
        fd = open(disk.path, O_RDWR | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (disk_ours(fd) && write(fd, line, n) != (ssize_t)n) {
            /* a short write leaves a line without its end, which readers skip */
        }
        close(fd);
    }
    free(line);
}

int npu_asm_cache_set_file(const char *path)
{
    char *copy = NULL;
    if (path && *path && !(copy = strdup(path)))
        return NPU_ENOMEM;
    pthread_mutex_lock(&pipe_cache.lock);
    free(disk.path);
    disk.path = copy;
    disk.loaded = 0;
    disk_forget();
    pthread_mutex_unlock(&pipe_cache.lock);
    asm_programs_clear();
    return NPU_OK;
}

/* 1 and its choice when the block was scheduled before, 0 when not, -1 out
 * of memory. */
static int cache_find(asm_ctx *c, const asm_pipe *p, const npu_asm_machine *m, pipe_choice *ch)
{
    size_t len;
    unsigned char *k = cache_key(p, m, &len);
    if (!k) {
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    pthread_mutex_lock(&pipe_cache.lock);
    int found = table_find(k, len, ch);
    pipe_choice kept;
    if (!found && (found = disk_find(k, len, ch)) != 0 && choice_copy(&kept, ch) == 0) {
        table_put(k, len, kept); /* the table takes k and the copy */
        k = NULL;
    }
    pthread_mutex_unlock(&pipe_cache.lock);
    free(k);
    return found;
}

static int cache_add(asm_ctx *c, const asm_pipe *p, const npu_asm_machine *m, pipe_choice ch)
{
    size_t len;
    unsigned char *k = cache_key(p, m, &len);
    if (!k) {
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    pthread_mutex_lock(&pipe_cache.lock);
    pipe_choice kept;
    if (choice_copy(&kept, &ch) < 0) {
        pthread_mutex_unlock(&pipe_cache.lock);
        free(k);
        c->status = NPU_ENOMEM;
        return asm_error(c, 0, "out of memory");
    }
    disk_append(k, len, ch);
    table_put(k, len, kept);
    pthread_mutex_unlock(&pipe_cache.lock);
    return 0;
}

static void cache_count(int hit)
{
    pthread_mutex_lock(&pipe_cache.lock);
    if (hit)
        pipe_cache.hits++;
    else
        pipe_cache.misses++;
    pthread_mutex_unlock(&pipe_cache.lock);
}

void npu_asm_cache_clear(void)
{
    pthread_mutex_lock(&pipe_cache.lock);
    for (size_t i = 0; i < pipe_cache.count; i++) {
        free(pipe_cache.e[i].key);
        free(pipe_cache.e[i].ch.t);
        pipe_cache.e[i].key = NULL;
        pipe_cache.e[i].ch.t = NULL;
    }
    disk_forget(); /* and the file is not read again until set anew */
    pipe_cache.count = pipe_cache.next = 0;
    pipe_cache.hits = pipe_cache.misses = 0;
    pthread_mutex_unlock(&pipe_cache.lock);
    asm_programs_clear();
}

void npu_asm_cache_stats(unsigned long *hits, unsigned long *misses)
{
    pthread_mutex_lock(&pipe_cache.lock);
    *hits = pipe_cache.hits;
    *misses = pipe_cache.misses;
    pthread_mutex_unlock(&pipe_cache.lock);
}

/* One block's search: unroll K = 1, 2, 4 ... ; for each, II upward from the
 * larger of its MII and its register floor (K x Huff's MinAvg: no schedule
 * of K iterations fits in fewer cycles); the cost is (trips / K + stages -
 * 1) II cycles, the smallest wins. cached->K: only that (K, II), by its way. */
typedef struct search {
    sched best;
    double cost;
    unsigned res, rec;
    char binding[64], fail[240];
} search;

/* s (its cost, resource MII and what binds it) becomes the best. */
static void take_best(search *out, sched *s, double cost, unsigned res, const char *binding)
{
    sched_free(&out->best);
    out->best = *s;
    out->cost = cost;
    out->res = res;
    snprintf(out->binding, sizeof out->binding, "%s", binding);
}

/* The cycles a schedule takes for the expected trips: (trips / K + stages
 * - 1) II; with U kernel copies, the trips past a multiple of K U run in
 * written order (the plain loop before the prologue), each about its
 * latency chain (chain + 2 cycles) instead of II / K. */
static double block_cost(double trips, const sched *s, unsigned chain)
{
    const double K = s->K, II = s->II, KU = K * s->U;
    const double plain = s->U > 1 ? fmod(trips, KU) - fmod(trips, K) : 0;
    return (trips / K + s->stages - 1) * II + plain * ((double)chain + 2 - II / K);
}

static int search_block(pipe_block *b, const pipe_choice *cached, search *out)
{
    const unsigned cached_K = cached ? cached->K : 0, cached_II = cached ? cached->II : 0;
    asm_pipe *p = b->p;
    memset(out, 0, sizeof *out);
    unsigned rec = b->nstreams ? b->m->unit[NPU_UNIT_SCALAR].latency : 1;
    out->rec = rec ? rec : 1;
    npu_sched_loop floor_inputs;
    memset(&floor_inputs, 0, sizeof floor_inputs);
    min_lifetimes(b, &floor_inputs);
    double minavg = 0;
    if (floor_inputs.regs_v)
        minavg = (double)floor_inputs.lifetime_sum_v / floor_inputs.regs_v;
    if (floor_inputs.regs_p && (double)floor_inputs.lifetime_sum_p / floor_inputs.regs_p > minavg)
        minavg = (double)floor_inputs.lifetime_sum_p / floor_inputs.regs_p;
    /* One iteration, in one pass over written order (which is
     * topological): its longest latency chain, from the first issue to the
     * last write's completion (each instruction as soon as its operands
     * are ready), and its cycles in written order (in-order issue: none
     * before the one before it; the next iteration after the loop branch). */
    unsigned chain = 0;
    if (b->m) {
        long ready[PIPE_MAX_OPS], in_order[PIPE_MAX_OPS], issue = 0;
        for (size_t j = 0; j < p->nops; j++) {
            const op_info *oi = &b->info[j];
            const long lat = (long)b->m->unit[oi->unit].latency;
            long t = 0;
            for (int u = 0; u < oi->nuses; u++) {
                int d = b->def_op[oi->uses[u]];
                if (d >= 0 && ready[d] > t)
                    t = ready[d];
                if (d >= 0 && in_order[d] > issue)
                    issue = in_order[d];
            }
            ready[j] = t + lat;
            in_order[j] = issue + lat;
            chain = ready[j] > (long)chain ? (unsigned)ready[j] : chain;
        }
        b->written = (unsigned)issue + 2;
    }
    char binding[64];
    int best_tight = 0;
    for (unsigned K = 1; K <= PIPE_MAX_UNROLL && K * b->nbody <= PIPE_MAX_NODES; K *= 2) {
        unsigned res = res_mii(b, K, binding, sizeof binding);
        unsigned mii = res > out->rec ? res : out->rec;
        if (cached_K && K != cached_K)
            continue;
        if (out->best.n && (double)mii * (p->trips / K) >= out->cost)
            break; /* no larger unroll can win */
        if (out->best.n && !best_tight && K > 4 * out->best.K * out->best.U)
            break; /* registers, not resources, set the best II: unrolling further frees none,
                      but two more doublings still may (interleaved iterations, and a
                      fraction of a cycle per iteration: 4.5 needs K = 2, 4.25 K = 4) */
        unsigned floor_ii = (unsigned)ceil(minavg * K - 1e-9);
        unsigned first = cached_K ? cached_II : mii > floor_ii ? mii : floor_ii;
        /* up to one iteration at a time (the chain's cycles per iteration):
         * beyond, written order is as fast, and is what runs when no II fits */
        unsigned limit = first * 4 + 64;
        const int one_at_a_time = limit >= K * (chain + 2) && K * (chain + 2) >= first;
        if (one_at_a_time)
            limit = K * (chain + 2);
        if (cached_K)
            limit = first; /* the kept II or none: the full search follows (asm_pipe_end) */
        for (unsigned II = first; II <= limit; II += 1 + (II - first) / 16) {
            if (out->best.n && (p->trips / K) * II >= out->cost)
                break;
            sched s;
            int r = cached_K && cached->nt ? replay(b, cached, &s)
                                           : attempt(b, K, II, cached_K != 0, cached_K ? (int)cached->way : -1, &s);
            if (r < 0) {
                sched_free(&s);
                return -1;
            }
            if (r == 0) {
                if (s.fail[0])
                    snprintf(out->fail, sizeof out->fail, "%s", s.fail);
                sched_free(&s);
                continue;
            }
            double cost = block_cost(p->trips, &s, chain);
            if (!out->best.n || cost < out->cost) {
                best_tight = II == mii;
                take_best(out, &s, cost, res, binding);
            } else {
                sched_free(&s);
            }
            break;
        }
        if (!out->best.n && one_at_a_time)
            break; /* not even one iteration at a time fits: nor will K more */
    }
    /* Registers held the best above its unroll's floor: the IIs below it
     * are searched again with register relief (attempt), at its unroll and
     * at twice it (a finer fraction of a cycle per iteration; with its
     * kernel expanded beyond its lifetimes' need, up to twice its K U),
     * downward until three in a row fit nowhere (a fit dearer by its
     * stages goes on from the highest II that could win with as many). */
    const unsigned best_K = out->best.n ? out->best.K : 0, top_K = out->best.n ? 2 * best_K * out->best.expanded : 0;
    for (unsigned K = best_K; K && !cached_K && K <= top_K && K <= PIPE_MAX_UNROLL && K * b->nbody <= PIPE_MAX_NODES; K *= 2) {
        const unsigned res = res_mii(b, K, binding, sizeof binding);
        const unsigned mii = res > out->rec ? res : out->rec, floor_ii = (unsigned)ceil(minavg * K - 1e-9);
        const unsigned lo = mii > floor_ii ? mii : floor_ii;
        const unsigned top = out->best.II * K / out->best.K;
        for (unsigned II = top, misses = 0; II-- > lo && misses < 3;) {
            if ((p->trips / K) * II >= out->cost)
                continue;
            sched s;
            int r = attempt(b, K, II, 1, -1, &s);
            if (r < 0) {
                sched_free(&s);
                return -1;
            }
            const double cost = r ? block_cost(p->trips, &s, chain) : 0;
            if (r == 0 || cost >= out->cost) {
                /* a fit dearer in all (by its stages) is no miss: the IIs
                 * that cannot win with as many stages are skipped */
                const double groups = p->trips / K + s.stages - 1;
                sched_free(&s);
                if (r == 0) {
                    misses++;
                } else {
                    const double win = ceil(out->cost / groups) - 1;
                    if (win + 1 < (double)II)
                        II = win >= (double)lo ? (unsigned)win + 1 : lo; /* below lo: none can */
                }
                continue;
            }
            misses = 0;
            take_best(out, &s, cost, res, binding);
        }
    }
    return 0;
}

/* The block as a plain loop in written order, recorded as not scheduled and
 * why. */
static int emit_written_order(pipe_block *b, const int *reg, const char *why)
{
    size_t begin = b->c->prog->count;
    asm_pipe *p = b->p;
    npu_srcloc at = { p->file, p->line };
    if (p->pass_reg && put_ctl(b->c, NPU_OP_LI, p->pass_reg, 0, 0, 0, at) < 0)
        return -1; /* no kernel: the pass block never runs */
    if (emit_plain(b, reg) < 0)
        return -1;
    return record_loop(b, begin, 0, 0, NULL, 0, 0, why, NULL);
}

int asm_pipe_end(asm_ctx *c, asm_lexer *lx, asm_token directive)
{
    if (asm_expect_eol(c, asm_lex_next(lx)) < 0)
        return -1;
    asm_pipe *p = c->pipe;
    if (!p)
        return asm_error(c, directive.col, ".endpipeline without .pipeline");
    c->pipe = NULL;
    pipe_block b = { .c = c, .p = p, .m = c->opts ? c->opts->machine : NULL };
    asm_pipe merged_p = { 0 };
    pipe_block mb = { .c = c, .p = &merged_p, .m = b.m };
    search found[2];
    memset(found, 0, sizeof found);
    pipe_choice cached[2] = { { 0, 0, 0, 0, NULL }, { 0, 0, 0, 0, NULL } };
    int rc = -1, nmerged = 0;
    b.info = calloc(p->nops + 1, sizeof *b.info);
    int plain_reg[PIPE_MAX_VIRTUALS], merged_reg[PIPE_MAX_VIRTUALS];
    if (!b.info) {
        c->status = NPU_ENOMEM;
        asm_error(c, 0, "out of memory");
        goto out;
    }
    if (analyse(&b) < 0 || plain_registers(&b, plain_reg) < 0)
        goto out;
    /* Without a machine, with schedule off, or for a loop expected to run
     * once (a masked tail: no iteration would reach a kernel), written order. */
    if (!b.m || !c->opts->schedule || p->trips < 2) {
        rc = emit_written_order(&b, plain_reg,
                                !b.m ? "no machine" : !c->opts->schedule ? "schedule off" : "one trip expected");
        goto out;
    }
    /* Two blocks: as written, and with its repeated computations merged
     * (when it has any); each searched (search_block), the faster scheduled,
     * the merged one on a tie (fewer instructions). A block already
     * scheduled for this machine in this process (pipe_cache) reuses its
     * block and (K, II). */
    nmerged = merge_repeats(&b, &merged_p);
    if (nmerged < 0)
        goto oom;
    if (nmerged > 0) {
        mb.info = calloc(merged_p.nops + 1, sizeof *mb.info);
        if (!mb.info)
            goto oom;
        if (analyse(&mb) < 0 || plain_registers(&mb, merged_reg) < 0)
            goto out;
    }
    int hit = cache_find(c, p, b.m, &cached[0]), hit_merged = 0;
    if (hit < 0 || (nmerged > 0 && (hit_merged = cache_find(c, &merged_p, b.m, &cached[1])) < 0))
        goto out;
    cache_count(hit || hit_merged);
    for (int v = 0; v < (nmerged > 0 ? 2 : 1); v++) {
        if ((cached[0].K || cached[1].K) && !cached[v].K)
            continue; /* the other block won before */
        if (search_block(v ? &mb : &b, cached[v].K ? &cached[v] : NULL, &found[v]) < 0)
            goto oom;
    }
    if ((cached[0].K || cached[1].K) && !found[0].best.n && !found[1].best.n) {
        /* A kept (K, II) that does not schedule (only a file written by
         * hand could hold one): the full search, as for a new block. */
        cached[0].K = cached[1].K = 0;
        for (int v = 0; v < (nmerged > 0 ? 2 : 1); v++) {
            sched_free(&found[v].best);
            if (search_block(v ? &mb : &b, NULL, &found[v]) < 0)
                goto oom;
        }
    }
    int w = found[1].best.n && (!found[0].best.n || found[1].cost <= found[0].cost);
    if (!found[w].best.n) {
        /* No II the search tries fits the registers: the loop in written
         * order (one iteration at a time, which fits: plain_registers), and
         * its record says why, naming the longest-lived values. */
        const char *fail = found[0].fail[0] ? found[0].fail : found[1].fail;
        char why[sizeof found[0].fail + 32];
        snprintf(why, sizeof why, "no schedule fits%s%s", fail[0] ? ": " : "", fail);
        rc = emit_written_order(&b, plain_reg, why);
        goto out;
    }
    if (!cached[w].K) {
        const sched *bs = &found[w].best;
        pipe_choice ch = { bs->K, bs->II, bs->way, 0, NULL };
        if (bs->way >= PIPE_VARIANTS) { /* relieved: its cycles, for a replay */
            if (!(ch.t = malloc(bs->nn * sizeof *ch.t)))
                goto oom;
            for (unsigned i = 0; i < bs->nn; i++)
                ch.t[i] = (unsigned)bs->n[i].t;
            ch.nt = bs->nn;
        }
        const int added = cache_add(c, w ? &merged_p : p, b.m, ch);
        free(ch.t);
        if (added < 0)
            goto out;
    }
    pipe_block *wb = w ? &mb : &b;
    rc = emit_scheduled(wb, &found[w].best, w ? merged_reg : plain_reg, found[w].res, found[w].rec,
                        found[w].binding);
    if (rc == 0) {
        /* The loop as written, and what the search merged; the register
         * floor of the bound is the lower of the two blocks' (either may run). */
        npu_sched_loop *l = &c->prog->loops[c->prog->nloops - 1];
        l->ops = (unsigned)p->nops;
        l->merged = w ? (unsigned)nmerged : 0;
        if (nmerged > 0) {
            npu_sched_loop other;
            memset(&other, 0, sizeof other);
            min_lifetimes(w ? &b : &mb, &other);
            if (other.lifetime_sum_v < l->lifetime_sum_v)
                l->lifetime_sum_v = other.lifetime_sum_v;
            if (other.lifetime_sum_p < l->lifetime_sum_p)
                l->lifetime_sum_p = other.lifetime_sum_p;
        }
    }
    goto out;
oom:
    c->status = NPU_ENOMEM;
    asm_error(c, 0, "out of memory");
out:
    sched_free(&found[0].best);
    sched_free(&found[1].best);
    free(cached[0].t);
    free(cached[1].t);
    free(b.kernel_cycles);
    free(b.marks);
    free(b.info);
    free(mb.kernel_cycles);
    free(mb.marks);
    free(mb.info);
    free(merged_p.ops);
    asm_pipe_free(p);
    return rc;
}
