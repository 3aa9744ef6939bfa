// run_kernel(): assemble, place tensors in GM (NC1HWC0), run the cores,
// unpack the outputs and check every element against the reference.
#include "runner.h"

#include <algorithm>
#include <chrono>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "c_locale.h"
#include "error.h"
#include "parallel.h"
#include "run_limits.h"
#include "trace.h"
#include "npusim/asm.h"
#include "npusim/fp16.h"
#include "npusim/reference.h"
#include "npusim/run.h"

namespace npusim {
const std::vector<uint64_t> RunOptions::kDefaultShape = {1, 16, 8, 8};

// The program's .pipeline loops, with their iterations per core (the runs of
// an instruction that executes once per iteration).
std::vector<ScheduledLoop> scheduled_loops(const npu_program &prog, const std::vector<npu_timed_core *> &timed)
{
    std::vector<ScheduledLoop> out;
    for (size_t i = 0; i < prog.nloops; i++) {
        const npu_sched_loop &l = prog.loops[i];
        ScheduledLoop s;
        s.where = (l.loc.file < prog.nfiles ? std::string(prog.files[l.loc.file]) : "?") + ":" +
                  std::to_string(l.loc.line);
        s.info = l;
        s.info.binding = nullptr;
        s.info.table = nullptr;
        s.info.iter_pcs = nullptr;
        s.binding = l.binding ? l.binding : "";
        s.table = l.table ? l.table : "";
        for (npu_timed_core *tc : timed) {
            uint64_t n = 0;
            for (size_t k = 0; k < l.n_iter_pcs; k++)
                n += npu_timed_pc_issued(tc, l.iter_pcs[k]);
            s.iterations_per_core.push_back(n);
        }
        // A macro that expands one .pipeline several times (a tile loop
        // unrolled over its buffers) gives one loop, its iterations summed.
        auto same = [&](const ScheduledLoop &o) {
            const npu_sched_loop &a = o.info;
            return o.where == s.where && a.scheduled == l.scheduled && a.unroll == l.unroll && a.ii == l.ii &&
                   a.stages == l.stages && a.vregs == l.vregs && a.pregs == l.pregs && a.ops == l.ops &&
                   a.merged == l.merged;
        };
        auto it = std::find_if(out.begin(), out.end(), same);
        if (it == out.end()) {
            out.push_back(s);
            continue;
        }
        for (size_t k = 0; k < s.iterations_per_core.size(); k++)
            it->iterations_per_core[k] += s.iterations_per_core[k];
    }
    return out;
}

double ScheduledLoop::register_cycles(unsigned core) const
{
    if (core >= iterations_per_core.size())
        return 0;
    const double n = double(iterations_per_core[core]);
    double v = info.regs_v ? n * double(info.lifetime_sum_v) / info.regs_v : 0;
    double p = info.regs_p ? n * double(info.lifetime_sum_p) / info.regs_p : 0;
    return std::max(v, p);
}

namespace {

constexpr uint64_t kGmAlign = 4096;  // tensors start on page boundaries in GM
constexpr size_t kMaxFailedShown = 8;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Dimensions as messages give them: "1,4,3,5".
std::string dims_text(const std::vector<uint64_t> &dims)
{
    std::string s;
    for (uint64_t d : dims)
        s += (s.empty() ? "" : ",") + std::to_string(d);
    return s;
}

// A tensor input's shape with leading dimensions of 1 (1-D to 3-D arrays are
// read as a shape is); other ranks as they are.
std::vector<uint64_t> nchw_of(std::vector<uint64_t> dims)
{
    if (!dims.empty())
        while (dims.size() < 4)
            dims.insert(dims.begin(), 1);
    return dims;
}

std::string nchw_mismatch(const std::string &source, const std::vector<uint64_t> &dims,
                          const std::vector<uint64_t> &run)
{
    return source + ": shape (" + dims_text(dims) + ") does not match the run's NCHW shape (" + dims_text(run) + ")";
}

struct Placed {
    const TensorDecl *decl;
    uint64_t gm_addr;
    NpyArray nchw;  // logical data
};

// The inputs the caller gave: a .npy file (RunOptions::inputs) or an array
// in memory (RunOptions::input_arrays), each read once, when first asked for.
class GivenInputs {
public:
    explicit GivenInputs(const RunOptions &opts) : opts_(opts)
    {
        for (const auto &kv : opts.input_arrays)
            if (opts.inputs.count(kv.first))
                throw Error("input '" + kv.first + "' is given twice: as " + opts.inputs.at(kv.first) +
                            " and as an array");
    }
    bool has(const std::string &name) const { return opts_.inputs.count(name) || opts_.input_arrays.count(name); }
    // What messages call it: the file's path, or "input 'x'".
    std::string source(const std::string &name) const
    {
        auto it = opts_.inputs.find(name);
        return it != opts_.inputs.end() ? it->second : "input '" + name + "'";
    }
    const NpyArray &array(const std::string &name)
    {
        auto mem = opts_.input_arrays.find(name);
        if (mem != opts_.input_arrays.end())
            return mem->second;
        auto it = read_.find(name);
        if (it == read_.end())
            it = read_.emplace(name, read_npy(opts_.inputs.at(name))).first;
        return it->second;
    }
    std::vector<std::string> names() const
    {
        std::vector<std::string> n;
        for (const auto &kv : opts_.inputs)
            n.push_back(kv.first);
        for (const auto &kv : opts_.input_arrays)
            n.push_back(kv.first);
        return n;
    }

private:
    const RunOptions &opts_;
    std::map<std::string, NpyArray> read_;
};

std::string shortest(double v);  // "%.9g", below

// A tensor input's logical shape is the run's NCHW shape; a per-channel
// input's is [C].
NpyArray make_input(const TensorDecl &t, const RunOptions &opts, GivenInputs &given, npu_dtype dt,
                    const std::vector<uint64_t> &nchw, unsigned index)
{
    const char *dtype_name = dt == NPU_F16 ? "fp16" : "fp32";
    const std::vector<uint64_t> shape = t.per_channel ? std::vector<uint64_t>{nchw[1]} : nchw;
    if (given.has(t.name)) {
        const std::string source = given.source(t.name);
        NpyArray a = given.array(t.name);
        if (a.dtype != dt)
            throw Error(source + ": dtype " + npu_dtype_name(a.dtype) + " does not match the run's dtype " + dtype_name);
        if (!t.per_channel)
            a.shape = nchw_of(a.shape);
        if (a.shape != shape) {
            if (t.per_channel)
                throw Error(source + ": shape (" + dims_text(a.shape) +
                            ") does not match the run's channels: per-channel input '" + t.name + "' is (" +
                            std::to_string(nchw[1]) + ")");
            throw Error(nchw_mismatch(source, a.shape, shape));
        }
        return a;
    }
    // Generated inputs are finite in the dtype: a range past it (range=-1e10,8
    // in fp16) made every element that rounds past it infinite.
    const double largest = dt == NPU_F16 ? 65504.0 : double(FLT_MAX);
    if (std::fabs(t.range_lo) > largest || std::fabs(t.range_hi) > largest)
        throw Error("input " + t.name + ": its range " + shortest(t.range_lo) + " .. " + shortest(t.range_hi) +
                    " is past " + dtype_name + "'s finite values (" + shortest(-largest) + " .. " +
                    shortest(largest) + "); give inputs, or a manifest range within them");
    NpyArray a;
    a.dtype = dt;
    a.shape = shape;
    uint64_t count = 1;
    for (uint64_t d : shape)
        count *= d;
    a.data.resize(count * npu_dtype_bytes(dt));
    Rng rng{opts.seed * 0x100000001b3ull + index};
    for (uint64_t i = 0; i < count; i++)
        npu_store_lane(a.data.data(), i, dt, rng.uniform(t.range_lo, t.range_hi));
    return a;
}

// GM bytes of a tensor: the NC1HWC0 layout, or C1 blocks of C0 lanes for a
// per-channel input.
uint64_t tensor_bytes(const TensorDecl &t, const npu_layout &layout)
{
    return t.per_channel ? layout.c1 * 32 : npu_layout_bytes(&layout);
}

}  // namespace

const npu_matrix_layout *matrix_of(const RunResult &r, size_t i)
{
    const MatmulShape &mm = r.matmul;
    if (mm.conv.on)
        return i == 1 ? &mm.b : nullptr;
    if (i + 1 == r.manifest.tensors.size())
        return &mm.c;
    return i == 0 ? &mm.a : i == 1 ? &mm.b : nullptr;
}

uint64_t placed_bytes(const RunResult &r, const TensorDecl &t)
{
    if (!r.matmul.on)
        return tensor_bytes(t, r.layout);
    for (size_t i = 0; i < r.manifest.tensors.size(); i++)
        if (&r.manifest.tensors[i] == &t) {
            const npu_matrix_layout *l = matrix_of(r, i);
            if (r.matmul.conv.on)  // x, w (B) and y
                return l ? npu_matrix_layout_bytes(l) : npu_layout_bytes(i == 0 ? &r.matmul.conv.x : &r.layout);
            return l ? npu_matrix_layout_bytes(l) : r.matmul.bias_bytes();
        }
    return 0;
}

namespace {

// Channel c of a per-channel input sits in C1 block c / C0, lane c % C0.
void pack_per_channel(const npu_layout &layout, const NpyArray &a, uint8_t *dst)
{
    const unsigned esize = npu_dtype_bytes(a.dtype);
    for (uint64_t c = 0; c < layout.c; c++)
        std::memcpy(dst + (c / layout.c0) * 32 + (c % layout.c0) * esize, a.data.data() + c * esize, esize);
}

// Per core, the GM bytes of each output it must write under the kernel's
// @split (empty when the kernel declares none).
std::vector<uint64_t> split_bytes(Split split, const npu_layout &layout, unsigned ncores,
                                  const MatmulShape &mm = MatmulShape(), uint64_t l1_bytes = 0)
{
    std::vector<uint64_t> out;
    if (split == Split::tiles && mm.conv.on) {
        // Per image, its C's tiles row by row (lib/matmul.s); a tile's rows
        // that are pixels go to nt C1 planes (C0 blocks of 32 bytes, fp16
        // or fp32 alike); round robin over the cores.
        const ConvShape &cv = mm.conv;
        const uint64_t pixels = cv.ho * cv.wo, rows = (mm.c.rows1 + 7) / 8, cols = (mm.c.cols1 + 7) / 8;
        const uint64_t planes_per_fractal = mm.c.esize == 2 ? 1 : 2;
        out.assign(ncores, 0);
        uint64_t t = 0;
        for (uint64_t img = 0; img < cv.images; img++)
            for (uint64_t ti = 0; ti < rows; ti++)
                for (uint64_t tj = 0; tj < cols; tj++) {
                    const uint64_t px = std::min<uint64_t>(128, pixels - 128 * ti);
                    const uint64_t p0 = 8 * tj * planes_per_fractal;
                    const uint64_t planes = std::min<uint64_t>(8 * planes_per_fractal, layout.c1 - p0);
                    out[t++ % ncores] += px * planes * 32;
                }
        return out;
    }
    if (split == Split::tiles) {
        // C's tiles of up to 8 x 8 fractals in the kernel's order (lib/matmul.s):
        // groups of G tile rows (the A panels L1 holds after 128 KiB, 1 to 8),
        // column by column within a group; round robin over the cores.
        const uint64_t fractal = NPU_FRACTAL * NPU_FRACTAL * mm.c.esize;
        const uint64_t panel = 8 * uint64_t(mm.a.cols1) * 512, room = l1_bytes > 131072 ? l1_bytes - 131072 : 0;
        const uint64_t g = std::max<uint64_t>(1, std::min<uint64_t>(8, panel ? room / panel : 0));
        const uint64_t rows = (mm.c.rows1 + 7) / 8, cols = (mm.c.cols1 + 7) / 8;
        out.assign(ncores, 0);
        uint64_t t = 0;
        for (uint64_t r0 = 0; r0 < rows; r0 += g)
            for (uint64_t tj = 0; tj < cols; tj++)
                for (uint64_t ti = r0; ti < std::min(rows, r0 + g); ti++)
                    out[t++ % ncores] += std::min<uint64_t>(8, mm.c.rows1 - 8 * ti) *
                                         std::min<uint64_t>(8, mm.c.cols1 - 8 * tj) * fractal;
        return out;
    }
    if (split != Split::blocks)
        return out;
    const uint64_t blocks = npu_layout_bytes(&layout) / 32;
    const uint64_t per = (blocks + ncores - 1) / ncores;
    for (unsigned k = 0; k < ncores; k++) {
        const uint64_t lo = std::min(blocks, k * per), hi = std::min(blocks, (k + 1) * per);
        out.push_back((hi - lo) * 32);
    }
    return out;
}

std::string disasm_at(const npu_program &prog, uint64_t pc, std::string *srcloc)
{
    if (pc >= prog.count)
        return "(outside the program)";
    char buf[128];
    npu_disasm(&prog.insns[pc], pc, buf, sizeof buf);
    if (prog.locs && prog.locs[pc].line)
        *srcloc = std::string(prog.files[prog.locs[pc].file]) + ":" + std::to_string(prog.locs[pc].line);
    return buf;
}

// Owners of the C library's objects, so that every path out of run_kernel,
// an Error thrown half-way included, frees them.
struct ProgramHolder {
    npu_program p;
    ProgramHolder() { npu_program_init(&p); }
    ~ProgramHolder() { npu_program_free(&p); }
};

struct CoreFini {
    void operator()(npu_core *c) const
    {
        npu_core_fini(c);  // safe on a core whose init failed (npu_core_init zeroes it first)
        delete c;
    }
};
using CorePtr = std::unique_ptr<npu_core, CoreFini>;

struct TimedCoreFree {
    void operator()(npu_timed_core *tc) const { npu_timed_core_free(tc); }
};
using TimedCorePtr = std::unique_ptr<npu_timed_core, TimedCoreFree>;

DramTraffic dram_traffic(const RunResult &r);

// Sums per-core stats (cycles: the slowest core), ranks stalling PCs, and
// computes the bound analysis.
void collect_timing(RunResult &r, const std::vector<npu_timed_core *> &timed, const npu_program &prog)
{
    r.loops = scheduled_loops(prog, timed);
    npu_core_stats &t = r.stats;
    std::vector<PcStalls> pcs(prog.count + 1);
    for (npu_timed_core *tc : timed) {
        const npu_core_stats &s = *npu_timed_stats(tc);
        r.core_stats.push_back(s);
        npu_core_stats_merge(&t, &s);
        for (uint64_t pc = 0; pc <= prog.count; pc++) {
            const uint64_t *st = npu_timed_pc_stalls(tc, pc);
            for (unsigned i = 0; i < NPU_NUM_STALLS; i++) {
                pcs[pc].by_reason[i] += st[i];
                pcs[pc].total += st[i];
            }
        }
    }
    for (uint64_t pc = 0; pc <= prog.count; pc++) {
        if (!pcs[pc].total)
            continue;
        pcs[pc].pc = pc;
        pcs[pc].disasm = pc < prog.count ? disasm_at(prog, pc, &pcs[pc].srcloc) : "(end of program: drain)";
        r.hot_pcs.push_back(pcs[pc]);
    }
    std::stable_sort(r.hot_pcs.begin(), r.hot_pcs.end(),
                     [](const PcStalls &a, const PcStalls &b) { return a.total > b.total; });
    if (r.has_l2)
        r.dram_traffic = dram_traffic(r);
    r.bound_analysis = analyse_bound(r);
}

// memory.model: l2: the shared memory system of one run, with its tensor
// table, warm-up and optional din trace of every line access.
struct MemorySystem {
    npu_memsys *ms = nullptr;
    std::unique_ptr<StreamFile> trace;
    uint64_t trace_lines = 0;
    bool trace_failed = false;

    ~MemorySystem() { npu_memsys_free(ms); }

    static void on_access(void *ctx, const npu_memsys_access *a)
    {
        auto *self = static_cast<MemorySystem *>(ctx);
        char line[64];
        int n = std::snprintf(line, sizeof line, "%d %llx %u\n", a->is_write ? 1 : 0, (unsigned long long)a->addr,
                              a->bytes);
        if (!self->trace->write(line, size_t(n)))
            self->trace_failed = true;
        self->trace_lines++;
    }
};

void build_memsys(MemorySystem &mem, RunResult &r, const RunOptions &opts, const std::vector<Placed> &placed)
{
    npu_memsys_config mc{};
    mc.l2 = r.config.l2;
    mc.l2.classify_misses = 1;  // not a config key: the report shows misses by kind
    mc.dram = r.config.dram;
    mc.cores = r.config.cores;
    mc.dma_bytes_per_cycle = r.config.timing.dma_bytes_per_cycle;
    mc.dma_outstanding = r.config.timing.dma_outstanding ? r.config.timing.dma_outstanding : unsigned(NPU_DMA_OUTSTANDING_DEFAULT);
    char msg[160];
    mem.ms = npu_memsys_new(&mc, msg, sizeof msg);
    if (!mem.ms)
        throw Error(std::string("memory system: ") + msg);
    // Tensor ids for the L2's per-tensor counters: inputs, then outputs, in
    // manifest order. An in-place output shares its input's range (and id).
    for (int pass = 0; pass < 2; pass++)
        for (const Placed &pl : placed)
            if (pl.decl->is_input == (pass == 0)) {
                unsigned id = unsigned(r.l2_tensor_names.size());
                if (id >= NPU_L2_MAX_TENSORS)
                    throw Error("memory system: more than " + std::to_string(NPU_L2_MAX_TENSORS) + " tensors");
                r.l2_tensor_names.push_back(pl.decl->name);
                npu_memsys_add_tensor(mem.ms, pl.gm_addr, placed_bytes(r, *pl.decl), id);
            }
    std::vector<std::string> warm = opts.warm_l2;
    if (r.config.warm_inputs)
        for (const Placed &pl : placed)
            if (pl.decl->is_input)
                warm.push_back(pl.decl->name);
    for (const std::string &name : warm) {
        bool found = false;
        for (const Placed &pl : placed)
            if (pl.decl->name == name) {
                npu_memsys_warm(mem.ms, pl.gm_addr, placed_bytes(r, *pl.decl),
                                npu_memsys_tensor_of(mem.ms, pl.gm_addr));
                found = true;
            }
        if (!found)
            throw Error("warm L2 tensor " + name + ": kernel '" + r.manifest.name + "' has no tensor of that name");
    }
    r.warm_l2_tensors = warm;
    if (!opts.mem_trace.empty()) {
        mem.trace = std::make_unique<StreamFile>(opts.mem_trace, UINT64_MAX);
        npu_memsys_set_trace(mem.ms, &MemorySystem::on_access, &mem);
    }
}

// `end`: the slowest core's last cycle, where the run engines drain the L2.
void collect_memsys(MemorySystem &mem, RunResult &r, uint64_t end)
{
    r.has_l2 = true;
    r.l2 = *npu_l2_get_stats(npu_memsys_l2(mem.ms));
    r.dram = *npu_dram_get_stats(npu_memsys_dram(mem.ms));
    if (const npu_dram_checkpoint *k = npu_memsys_kernel_dram(mem.ms))
        r.dram_kernel = *k;
    else  // not drained (an engine that does not): every request was the kernel's
        npu_dram_checkpoint_take(npu_memsys_dram(mem.ms), end, &r.dram_kernel);
    r.dram_busy_cycles = npu_dram_busy_cycles(npu_memsys_dram(mem.ms));
    r.mem_trace_lines = mem.trace_lines;
}

// The DRAM's traffic before and after the kernel's end. The kernel's bytes
// are booked inside [0, max(cycles, their busy_end)] and the write-back's
// inside [end, busy_end] (its lines leave at `end`); a channel moves at most
// bytes_per_cycle in each cycle, so each rate is at most the peak.
DramTraffic dram_traffic(const RunResult &r)
{
    const npu_dram_checkpoint &k = r.dram_kernel;
    DramTraffic t;
    t.peak_bytes_per_cycle = r.config.dram.channels * r.config.dram.bytes_per_cycle;
    t.kernel_read = k.stats.bytes_read;
    t.kernel_written = k.stats.bytes_written;
    t.kernel_span = std::max(r.stats.cycles, k.stats.busy_end);
    t.kernel_achieved = t.kernel_span ? double(t.kernel_read + t.kernel_written) / double(t.kernel_span) : 0.0;
    t.kernel_booked_after = k.booked_after;
    t.end_of_run_bytes = (r.dram.bytes_read - k.stats.bytes_read) + (r.dram.bytes_written - k.stats.bytes_written);
    if (t.end_of_run_bytes && r.dram.busy_end > k.cycle) {
        t.end_of_run_span = r.dram.busy_end - k.cycle;
        t.end_of_run_achieved = double(t.end_of_run_bytes) / double(t.end_of_run_span);
    }
    return t;
}

// The din trace into place, once the run is complete (throws Error).
void commit_mem_trace(MemorySystem &mem)
{
    if (!mem.trace)
        return;
    if (mem.trace_failed)
        throw Error(mem.trace->path() + ": cannot write the memory trace");
    mem.trace->commit();
}

}  // namespace

// The run's dtype: --dtype when given; else the first tensor input's .npy
// (as the shape is, so `run relu --input x=x.npy` works for fp16 files);
// else fp32.
static std::string run_dtype(const Manifest &m, const RunOptions &opts, GivenInputs &given)
{
    if (!opts.dtype.empty())
        return opts.dtype;
    if (m.op == Op::matmul)  // its inputs are fp16 whatever the output's dtype
        return "fp32";
    if (m.op == Op::conv2d)  // x and w are fp16; so is y, as the next layer reads it
        return "fp16";
    for (const TensorDecl &t : m.tensors)
        if (t.is_input && !t.per_channel && given.has(t.name)) {
            const npu_dtype dt = given.array(t.name).dtype;
            if (dt != NPU_F16 && dt != NPU_F32)
                throw Error(given.source(t.name) + ": dtype " + npu_dtype_name(dt) +
                            " is not one a kernel runs on (f16, f32)");
            return dt == NPU_F16 ? "fp16" : "fp32";
        }
    return "fp32";
}

uint64_t default_max_instructions(uint64_t vectors)
{
    return vectors > (UINT64_MAX / 1000) - 64 ? UINT64_MAX : 1000 * (vectors + 64);
}

npu_dtype parse_dtype(const std::string &name)
{
    if (name == "fp16")
        return NPU_F16;
    if (name == "fp32")
        return NPU_F32;
    throw Error("dtype: unknown dtype '" + name + "' (fp16, fp32)");
}

std::vector<uint64_t> parse_shape(const std::string &text)
{
    // Decimal digits between commas, nothing else: strtoull alone would
    // skip a space and take a sign, and getline drops a trailing empty field.
    if (text.empty())
        throw Error("shape: expected 1 to 4 dimensions N,C,H,W, got ''");
    std::vector<uint64_t> dims;
    size_t begin = 0;
    for (;;) {
        const size_t comma = text.find(',', begin);
        const std::string part = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
        const std::string shown = "'" + part.substr(0, 40) + (part.size() > 40 ? "..." : "") + "'";
        const size_t first = part.find_first_not_of('0');  // 007 is 7
        if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || first == std::string::npos)
            throw Error("shape: " + shown + " is not a positive integer (expected N,C,H,W)");
        const std::string digits = part.substr(first);
        if (digits.size() > 20 || (digits.size() == 20 && digits > "18446744073709551615"))
            throw Error("shape: " + shown + " is out of range (expected N,C,H,W)");
        dims.push_back(std::stoull(digits));
        if (comma == std::string::npos)
            break;
        begin = comma + 1;
    }
    if (dims.size() > 4)
        throw Error("shape: expected 1 to 4 dimensions N,C,H,W, got '" + text + "'");
    while (dims.size() < 4)  // leading 1s, as NumPy broadcasts: "C,H,W" -> 1,C,H,W; "W" -> 1,1,1,W
        dims.insert(dims.begin(), 1);
    return dims;
}

std::string whole_number_problem(const std::string &text)
{
    const std::string shown = "'" + text.substr(0, 40) + (text.size() > 40 ? "..." : "") + "'";
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return shown + " is not a whole number (0 .. 18446744073709551615)";
    if (text.size() > 20 || (text.size() == 20 && text > "18446744073709551615"))
        return shown + " is out of range (0 .. 18446744073709551615)";
    return "";
}

uint64_t parse_whole(const std::string &what, const std::string &text)
{
    const std::string problem = whole_number_problem(text);
    if (!problem.empty())
        throw Error(what + ": " + problem);
    return std::stoull(text);
}

std::string parameter_problem(double v)
{
    // NaN, infinity or a value that rounds to it would change the kernel's
    // meaning, as a non-finite @param default would.
    if (!std::isfinite(v) || std::fabs(v) >= 0x1.ffffffp127)
        return " is not finite in binary32 (kernels take parameters as binary32, up to 3.4028235e38)";
    // A non-zero value that rounds to zero, as the assembler refuses a literal.
    if (v != 0.0 && float(v) == 0.0f)
        return " underflows binary32 (kernels take parameters as binary32; the smallest non-zero is 1.4e-45)";
    return "";
}

bool parse_tiling(const std::string &text)
{
    if (text != "rule" && text != "measure")
        throw Error("tiling: '" + text + "' is not rule or measure");
    return text == "measure";
}

RunFootprint run_footprint(const Config &cfg, const Manifest &m)
{
    RunFootprint f;
    f.tensors = unsigned(m.num_full_tensors());
    f.cores = cfg.cores;
    f.ub_bytes = cfg.core.ub_bytes;
    f.l2_lines = cfg.timed && cfg.memory_l2 ? cfg.l2.size_bytes / cfg.l2.line_bytes : 0;  // only a timed run has one
    return f;
}

namespace {

// The steps of one run, in the order run_kernel takes them. Each fills its
// part of the RunResult; an Error thrown by any of them leaves nothing
// allocated (the owners below free what was built).

// The run's host memory (run_limits.h), with what the caller holds beside
// it; admit_run holds it against what is available.
RunFootprint footprint_of(const RunResult &r, const RunOptions &opts)
{
    RunFootprint f = run_footprint(r.config, r.manifest);
    f.held = opts.host_bytes_held;
    const MatmulShape &mm = r.matmul;
    if (mm.fractal_output()) {
        // A and B are as large as K makes them, and C is not an NC1HWC0
        // tensor: tensors x C's stand-in missed both ways.
        f.matrix_bytes = cube_matrix_bytes(npu_matrix_layout_bytes(&mm.a), npu_matrix_layout_bytes(&mm.b),
                                           npu_matrix_layout_bytes(&mm.c), mm.m, mm.k, mm.n,
                                           npu_dtype_bytes(r.dtype), mm.bias ? mm.bias_bytes() : 0);
        f.shape_text = std::to_string(mm.m) + "," + std::to_string(mm.k) + "," + std::to_string(mm.n);
    } else if (mm.conv.on) {
        // Not the output tensor times three: the check's im2col of every
        // image dwarfs it (16,64,56,56: 316 MB, where that counted 50).
        const ConvShape &cv = mm.conv;
        f.matrix_bytes = conv_matrix_bytes(npu_layout_bytes(&cv.x), cv.images * cv.cin * cv.h * cv.w,
                                           npu_matrix_layout_bytes(&mm.b), cv.images, mm.m, mm.k, mm.n,
                                           npu_layout_bytes(&r.layout), npu_dtype_bytes(r.dtype));
        f.shape_text = std::to_string(cv.images) + "," + std::to_string(cv.cin) + "," + std::to_string(cv.h) + "," +
                       std::to_string(cv.w);
    }
    return f;
}

// The input tensors in GM: each tensor's place, and GM's bytes.
struct GlobalMemory {
    std::vector<Placed> placed;  // manifest order
    std::vector<uint8_t> bytes;
    npu_gm gm{};                 // the cores' view of `bytes`
};

// The simulated machine of one run. Members are freed in reverse order: the
// timing models first, since each points at its core and at the memory system.
struct Machine {
    std::vector<CorePtr> cores;
    std::vector<npu_core *> core_ptrs;
    MemorySystem mem;                       // memory.model: l2 only
    std::vector<TimedCorePtr> timed_owned;  // sim.mode: timed only
    std::vector<npu_timed_core *> timed;
};

// The per-core instruction limit and where it came from, for the message of
// a core that hits it.
struct RunLimit {
    npu_run_limits lim{};
    bool derived = false;     // no --max-instructions: derived from the work
    uint64_t all_vectors = 0; // the vectors of every tensor
};

// Step 1: the kernel's manifest.
Manifest load_kernel(const RunOptions &opts)
{
    if (!opts.dtype.empty())
        parse_dtype(opts.dtype);  // a dtype no kernel runs on is the caller's error, not the kernel's
    return load_manifest(resolve_kernel(opts.kernel));
}

// Step 2: the run's dtype, accuracy tolerance and parameters; every tensor
// name the caller gave must be the kernel's.
std::string shortest(double v);  // "%.9g", below

void resolve_run(RunResult &r, const RunOptions &opts, GivenInputs &given)
{
    const Manifest &m = r.manifest;
    const std::string dtype = run_dtype(m, opts, given);
    if (!m.supports(dtype))
        throw Error(m.path + ": kernel '" + m.name + "' does not support dtype " + dtype);
    r.dtype = parse_dtype(dtype);
    r.seed = opts.seed;
    r.config = opts.config;

    for (const auto &kv : opts.params) {
        bool known = false;
        for (const ParamDecl &p : m.params)
            known |= p.name == kv.first;
        if (!known)
            throw Error("parameter " + kv.first + ": kernel '" + m.name + "' has no such parameter");
        // The CLI refuses the text first, naming --param.
        const std::string problem = parameter_problem(kv.second);
        if (!problem.empty())
            throw Error("parameter " + kv.first + ": " + shortest(kv.second) + problem);
    }
    for (const ParamDecl &p : m.params) {
        auto it = opts.params.find(p.name);
        // Kernels receive parameters as binary32, so the reference uses that value.
        r.params.push_back(double(float(it != opts.params.end() ? it->second : p.default_value)));
        const std::string problem = p.divisor ? param_divisor_problem(r.params.back()) : "";
        if (!problem.empty())
            throw Error("parameter " + p.name + ": " + shortest(r.params.back()) + ": " + m.name + " divides by " +
                        p.name + " (" + m.path + ":" + std::to_string(p.line) + "), and" + problem);
    }
    r.tolerance = m.tolerance(dtype, r.params);
    for (const std::string &name : given.names()) {
        bool ok = false;
        for (const TensorDecl &t : m.tensors)
            ok |= t.name == name && t.is_input;
        if (!ok)
            throw Error("input " + name + ": kernel '" + m.name + "' has no input of that name");
    }
    for (const auto &kv : opts.outputs) {
        bool ok = false;
        for (const TensorDecl &t : m.tensors)
            ok |= t.name == kv.first;
        if (!ok)
            throw Error("output " + kv.first + ": kernel '" + m.name + "' has no tensor of that name");
    }
}

// Step 2 too: the config holds what the kernel needs (@needs), so that a
// kernel whose buffers do not fit fails here in one line, not with a trap.
void check_needs(const RunResult &r)
{
    for (const NeedDecl &n : r.manifest.needs) {
        const ConfigKey &k = *find_config_key(n.key);  // the manifest checked it
        if (k.get(r.config) < n.min)
            throw Error(r.manifest.path + ":" + std::to_string(n.line) + ": " + r.manifest.name + " needs " +
                        n.key + " of at least " + std::to_string(n.min) + (k.unit.empty() ? "" : " " + k.unit) +
                        "; the config gives " + std::to_string(k.get(r.config)));
    }
}

// Step 3: the NCHW shape (the one given, else the first tensor input's,
// else the default; every tensor input must have it) and its NC1HWC0
// layout; a run that would not fit in host memory is refused here, with an
// estimate, rather than meet the OOM killer half-way.
std::vector<uint64_t> matmul_shape(RunResult &r, const RunOptions &opts, GivenInputs &given);
std::vector<uint64_t> conv_shape(RunResult &r, const RunOptions &opts, GivenInputs &given);

std::vector<uint64_t> run_shape(RunResult &r, const RunOptions &opts, GivenInputs &given)
{
    if (r.manifest.op == Op::matmul)
        return matmul_shape(r, opts, given);
    if (r.manifest.op == Op::conv2d)
        return conv_shape(r, opts, given);
    if (!opts.shape.empty() && opts.shape.size() != 4)
        throw Error("shape: expected N,C,H,W, got (" + dims_text(opts.shape) + ")");
    std::vector<uint64_t> shape = opts.shape;
    std::string shape_from = "shape";  // who said it, for messages
    for (const TensorDecl &t : r.manifest.tensors)
        if (t.is_input && !t.per_channel && given.has(t.name)) {
            const std::string source = given.source(t.name);
            const NpyArray &a = given.array(t.name);
            if (a.shape.empty() || a.shape.size() > 4)
                throw Error(source + ": expected a 1-D to 4-D array, got " + std::to_string(a.shape.size()) + "-D");
            if (shape.empty()) {
                shape = nchw_of(a.shape);
                shape_from = source;
            } else if (nchw_of(a.shape) != shape) {  // a shape given, or the first input's
                throw Error(nchw_mismatch(source, nchw_of(a.shape), shape));
            }
        }
    if (shape.empty())
        shape = RunOptions::kDefaultShape;
    for (uint64_t d : shape)
        if (d == 0)
            throw Error(shape_from + ": shape (" + dims_text(shape) +
                        ") is an empty tensor: every dimension must be at least 1");
    if (npu_layout_init(&r.layout, shape[0], shape[1], shape[2], shape[3], npu_dtype_bytes(r.dtype)) != NPU_OK)
        throw Error(shape_from + ": tensor too large");
    return shape;
}

// Step 3 of @op matmul: M, K, N from the shape (1, M, K, N) when given (the
// inputs a (M x K) and b (K x N) must agree), else from a and b, else the
// default shape's; the output's NCHW stand-in is (1, 1, M, N).
std::vector<uint64_t> matmul_shape(RunResult &r, const RunOptions &opts, GivenInputs &given)
{
    const Manifest &m = r.manifest;
    const bool shape_given = !opts.shape.empty();
    const std::vector<uint64_t> &shape = shape_given ? opts.shape : RunOptions::kDefaultShape;
    if (shape.size() != 4 || shape[0] != 1)
        throw Error("shape: a matmul takes M,K,N");
    uint64_t dims[3] = {0, 0, 0};  // M, K, N
    std::copy(shape.begin() + 1, shape.end(), dims);
    for (int i = 0; i < 2; i++) {  // a gives M and K, b gives K and N
        const TensorDecl &t = m.tensors[size_t(i)];
        if (!given.has(t.name))
            continue;
        const NpyArray &a = given.array(t.name);
        if (a.shape.size() != 2)
            throw Error(given.source(t.name) + ": expected a 2-D matrix, got " + std::to_string(a.shape.size()) + "-D");
        if (a.dtype != NPU_F16)
            throw Error(given.source(t.name) + ": dtype " + npu_dtype_name(a.dtype) +
                        " is not the cube's operand dtype f16");
        if (i == 1 && given.has(m.tensors[0].name) && a.shape[0] != dims[1])
            throw Error(given.source(t.name) + ": shape (" + std::to_string(a.shape[0]) + "," +
                        std::to_string(a.shape[1]) + "): its rows must be the columns of " + m.tensors[0].name +
                        " (K = " + std::to_string(dims[1]) + ")");
        if (shape_given && (a.shape[0] != dims[i] || a.shape[1] != dims[i + 1]))
            throw Error(given.source(t.name) + ": shape (" + dims_text(a.shape) + ") does not match the run's M,K,N (" +
                        dims_text({dims[0], dims[1], dims[2]}) + "): " + t.name + " is " + (i ? "K x N" : "M x K"));
        dims[i] = a.shape[0];
        dims[i + 1] = a.shape[1];
    }
    MatmulShape &mm = r.matmul;
    mm.on = true;
    mm.bias = m.num_inputs() == 3;
    if (mm.bias && given.has(m.tensors[2].name)) {  // one fp32 value per column of C
        const TensorDecl &t = m.tensors[2];
        const NpyArray &a = given.array(t.name);
        if (a.dtype != NPU_F32)
            throw Error(given.source(t.name) + ": dtype " + npu_dtype_name(a.dtype) +
                        " is not the bias's dtype f32 (it is added to the fp32 accumulators)");
        if (a.shape.size() != 1 || a.shape[0] != dims[2])
            throw Error(given.source(t.name) + ": expected a 1-D bias of N = " + std::to_string(dims[2]) +
                        " values (one per column of C)");
    }
    mm.m = dims[0];
    mm.k = dims[1];
    mm.n = dims[2];
    if (npu_matrix_layout_init(&mm.a, mm.m, mm.k, 2) != NPU_OK ||
        npu_matrix_layout_init(&mm.b, mm.k, mm.n, 2) != NPU_OK ||
        npu_matrix_layout_init(&mm.c, mm.m, mm.n, npu_dtype_bytes(r.dtype)) != NPU_OK ||
        npu_layout_init(&r.layout, 1, 1, mm.m, mm.n, npu_dtype_bytes(r.dtype)) != NPU_OK)
        throw Error("shape: matrices too large");
    return {1, 1, mm.m, mm.n};
}

std::string shortest(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

// Step 3 of @op conv2d: x's NCHW shape (x's array when given, else the
// shape), the geometry from the parameters cout, kernel, stride and pad
// (cout and kernel from w's array when given), and the product's fractal
// counts per image: M = ho wo pixels, K = C1 kh kw taps of 16 channels, N =
// cout. The output y is (images, cout, ho, wo). The kernel holds one
// image's feature map in L1 after its first 128 KiB (lib/matmul.s).
std::vector<uint64_t> conv_shape(RunResult &r, const RunOptions &opts, GivenInputs &given)
{
    const Manifest &m = r.manifest;
    ConvShape &cv = r.matmul.conv;
    std::vector<uint64_t> shape = opts.shape.empty() ? RunOptions::kDefaultShape : opts.shape;
    std::string shape_from = "shape";
    const TensorDecl &tx = m.tensors[0], &tw = m.tensors[1];
    if (given.has(tx.name)) {
        shape_from = given.source(tx.name);
        const NpyArray &a = given.array(tx.name);
        if (a.shape.size() != 4)
            throw Error(shape_from + ": expected a 4-D feature map (N, C, H, W), got " + std::to_string(a.shape.size()) + "-D");
        if (!opts.shape.empty() && a.shape != opts.shape)
            throw Error(nchw_mismatch(shape_from, a.shape, opts.shape));
        shape = a.shape;
    }
    if (shape.size() != 4)
        throw Error(shape_from + ": a convolution's input is N,C,H,W");
    for (uint64_t d : shape)
        if (d == 0)
            throw Error(shape_from + ": every dimension of the feature map must be at least 1");
    // The geometry: whole numbers in range (parameters are binary32 values).
    uint64_t geo[4];  // cout, kernel, stride, pad
    const uint64_t lo[4] = {1, 1, 1, 0}, hi[4] = {65535, 255, 255, 255};
    for (size_t i = 0; i < 4; i++) {
        const double v = r.params[i];
        if (!(v >= double(lo[i]) && v <= double(hi[i])) || v != std::floor(v))
            throw Error("parameter " + m.params[i].name + ": " + shortest(v) + " is not a whole number in " +
                        std::to_string(lo[i]) + " .. " + std::to_string(hi[i]));
        geo[i] = uint64_t(v);
    }
    for (const TensorDecl *t : {&tx, &tw})
        if (given.has(t->name) && given.array(t->name).dtype != NPU_F16)
            throw Error(given.source(t->name) + ": dtype " + npu_dtype_name(given.array(t->name).dtype) +
                        " is not the cube's operand dtype f16");
    if (given.has(tw.name)) {  // (cout, cin, kh, kw): cout and the kernel from it
        const std::string src = given.source(tw.name);
        const NpyArray &a = given.array(tw.name);
        if (a.shape.size() != 4 || a.shape[2] != a.shape[3] || a.shape[2] == 0 || a.shape[2] > 255 ||
            a.shape[0] == 0 || a.shape[0] > 65535)
            throw Error(src + ": expected 4-D weights (cout, cin, k, k), a square kernel of 1 .. 255 and 1 .. 65535 "
                              "output channels");
        if (a.shape[1] != shape[1])
            throw Error(src + ": " + std::to_string(a.shape[1]) + " input channels; the feature map has " +
                        std::to_string(shape[1]));
        const uint64_t from_w[2] = {a.shape[0], a.shape[2]};
        for (size_t i = 0; i < 2; i++) {
            if (opts.params.count(m.params[i].name) && geo[i] != from_w[i])
                throw Error(src + ": its " + m.params[i].name + " is " + std::to_string(from_w[i]) + ", parameter " +
                            m.params[i].name + " says " + std::to_string(geo[i]));
            geo[i] = from_w[i];
            r.params[i] = double(from_w[i]);
        }
    }
    cv.on = true;
    cv.images = shape[0];
    cv.cin = shape[1];
    cv.h = shape[2];
    cv.w = shape[3];
    cv.cout = geo[0];
    cv.kernel = geo[1];
    cv.stride = geo[2];
    cv.pad = geo[3];
    if (cv.h > 65535 || cv.w > 65535)
        throw Error(shape_from + ": a feature map of more than 65,535 rows or columns");
    if (cv.h + 2 * cv.pad < cv.kernel || cv.w + 2 * cv.pad < cv.kernel)
        throw Error(shape_from + ": a " + std::to_string(cv.kernel) + " x " + std::to_string(cv.kernel) +
                    " kernel does not fit the " + std::to_string(cv.h) + " x " + std::to_string(cv.w) +
                    " map padded by " + std::to_string(cv.pad));
    cv.ho = (cv.h + 2 * cv.pad - cv.kernel) / cv.stride + 1;
    cv.wo = (cv.w + 2 * cv.pad - cv.kernel) / cv.stride + 1;
    MatmulShape &mm = r.matmul;
    mm.on = true;
    const uint64_t c1 = (cv.cin + 15) / 16;
    mm.m = cv.ho * cv.wo;
    mm.k = cv.cin * cv.kernel * cv.kernel;
    mm.n = cv.cout;
    if (npu_layout_init(&cv.x, cv.images, cv.cin, cv.h, cv.w, 2) != NPU_OK ||
        npu_matrix_layout_init(&mm.a, mm.m, 16 * c1 * cv.kernel * cv.kernel, 2) != NPU_OK ||
        npu_matrix_layout_init(&mm.b, 16 * c1 * cv.kernel * cv.kernel, mm.n, 2) != NPU_OK ||
        npu_matrix_layout_init(&mm.c, mm.m, mm.n, npu_dtype_bytes(r.dtype)) != NPU_OK ||
        npu_layout_init(&r.layout, cv.images, cv.cout, cv.ho, cv.wo, npu_dtype_bytes(r.dtype)) != NPU_OK)
        throw Error(shape_from + ": tensors too large");
    const uint64_t map = npu_layout_bytes(&cv.x) / cv.images, room = r.config.core.l1_bytes - std::min<uint64_t>(r.config.core.l1_bytes, 131072);
    if (map > room)
        throw Error(shape_from + ": one image's feature map is " + std::to_string(map) +
                    " bytes; the conv2d kernels hold it in L1 after its first 128 KiB, " + std::to_string(room) +
                    " bytes here (cube.l1_bytes)");
    return {cv.images, cv.cout, cv.ho, cv.wo};
}

// Step 4: the kernel assembled for the run's config, with its dtype as the
// suffix alias DT and its size as DT_BYTES, and its tiles chosen for the
// config (tiling.h).
void assemble_kernel(RunResult &r, const RunOptions &opts, npu_program &prog)
{
    const char *dt_bytes = npu_dtype_bytes(r.dtype) == 2 ? "2" : "4";
    std::vector<npu_asm_define> defines = {{"DT", npu_dtype_name(r.dtype)}, {"DT_BYTES", dt_bytes}};
    if (r.matmul.on)  // the epilogue computes on fp32 accumulators; C's elements are OUT_BYTES
        defines = {{"DT", "f32"}, {"DT_BYTES", "4"}, {"OUT_BYTES", dt_bytes}};
    if (opts.tile_max % kTileStep || opts.tile_max > r.config.core.ub_bytes)
        throw Error("tile_max " + std::to_string(opts.tile_max) + ": give a multiple of " +
                    std::to_string(kTileStep) + " bytes up to the UB's " +
                    std::to_string(r.config.core.ub_bytes) + " bytes (0: chosen for the config)");
    if (r.matmul.on && opts.tile_max)  // its tiles are the cube's fractals (lib/matmul.s), not TILE_MAX
        throw Error("tile_max " + std::to_string(opts.tile_max) + ": " + r.manifest.name +
                    " takes no tile cap (its tiles are the cube's; tile_max is for the activations)");
    const unsigned vectors = r.manifest.tile_vectors();
    const uint64_t least = least_tile(r.config, vectors);
    if (opts.tile_max && opts.tile_max < least)
        throw Error("tile_max " + std::to_string(opts.tile_max) + ": " + r.manifest.name + "'s tiles hold at least " +
                    (vectors == 1 ? "one vector" : std::to_string(vectors) + " vectors") + ", " +
                    std::to_string(least) + " bytes at core.vlen " + std::to_string(r.config.core.vlen_bits) +
                    "; give " + std::to_string(least) + " .. " + std::to_string(r.config.core.ub_bytes) +
                    " (0: chosen for the config)");
    const std::vector<uint64_t> shares = split_bytes(r.manifest.split, r.layout, r.config.cores, r.matmul, r.config.core.l1_bytes);
    r.tile = assemble_for_config(r.manifest.path, defines, {kernels_dir()}, r.config, opts.schedule,
                                 shares.empty() || r.matmul.on ? 0 : shares[0], opts.tile_max, least, prog);
}

// --against: the second reference, checked against the kernel's inputs.
const npu_reference *find_against(const RunResult &r, const RunOptions &opts)
{
    if (opts.against.empty())
        return nullptr;
    const Manifest &m = r.manifest;
    const npu_reference *against = npu_reference_find(opts.against.c_str());
    if (!against)
        throw Error("reference " + opts.against + ": no such reference (`npusim kernels` lists them)");
    if (against->num_inputs != m.num_inputs())
        throw Error("reference " + opts.against + ": reads " + std::to_string(against->num_inputs) +
                    (against->num_inputs == 1 ? " input" : " inputs") + "; kernel '" + m.name + "' has " +
                    std::to_string(m.num_inputs()));
    return against;
}

// Step 5: tensors in GM, page-aligned, inputs then outputs, inputs packed
// NC1HWC0 and outputs poisoned. In place, the output takes the input's buffer.
void place_matrices(GlobalMemory &g, const RunResult &r, const RunOptions &opts, GivenInputs &given);

void place_tensors(GlobalMemory &g, const RunResult &r, const RunOptions &opts, GivenInputs &given,
                   const std::vector<uint64_t> &shape)
{
    const Manifest &m = r.manifest;
    if (is_cube_op(m.op))
        return place_matrices(g, r, opts, given);
    if (opts.inplace && (m.num_inputs() != 1 || m.tensors.size() != 2))
        throw Error("in place: kernel '" + m.name + "' does not have exactly one input and one output");
    uint64_t gm_size = 0;
    unsigned input_index = 0;
    for (const TensorDecl &t : m.tensors) {
        Placed pl{&t, gm_size, {}};
        if (t.is_input)
            pl.nchw = make_input(t, opts, given, r.dtype, shape, input_index++);
        if (opts.inplace && !t.is_input) {
            for (const Placed &in : g.placed)
                if (in.decl->is_input)
                    pl.gm_addr = in.gm_addr;
        } else {
            gm_size = align_up(gm_size + tensor_bytes(t, r.layout), kGmAlign);
        }
        g.placed.push_back(std::move(pl));
    }
    g.bytes.assign(gm_size, 0);
    for (Placed &pl : g.placed) {
        uint8_t *dst = g.bytes.data() + pl.gm_addr;
        if (pl.decl->per_channel)
            pack_per_channel(r.layout, pl.nchw, dst);
        else if (pl.decl->is_input)
            npu_pack_nc1hwc0(&r.layout, pl.nchw.data.data(), dst);
        else if (opts.inplace)
            continue;  // the input's data is already there
        else  // poison: an element the kernel never writes reads as NaN
            std::memset(dst, 0xff, npu_layout_bytes(&r.layout));
    }
    g.gm = npu_gm{g.bytes.data(), g.bytes.size(), nullptr};
}

// @op conv2d: the weights (cout, cin, k, k) as B, the fractal matrix of
// K1 = C1 k k taps by cout: row 16 q + c0 of tap q = (c1 k + i) k + j is
// input channel 16 c1 + c0 at kernel position (i, j), zero past cin, as
// mvlai's columns of im2col(x) are (docs/cube.md, "Convolution").
void pack_conv_weights(const ConvShape &cv, const npu_matrix_layout &b, const NpyArray &w, uint8_t *dst)
{
    const uint64_t kk = cv.kernel * cv.kernel;
    std::vector<uint8_t> mat(b.rows * b.cols * 2, 0);
    for (uint64_t co = 0; co < cv.cout; co++)
        for (uint64_t ci = 0; ci < cv.cin; ci++)
            for (uint64_t ij = 0; ij < kk; ij++) {
                const uint64_t row = 16 * ((ci / 16) * kk + ij) + ci % 16;
                std::memcpy(&mat[(row * b.cols + co) * 2], &w.data[((co * cv.cin + ci) * kk + ij) * 2], 2);
            }
    npu_pack_fractal(&b, mat.data(), dst);
}

// Step 5 of @op matmul: a and b fp16 fractal matrices (generated like any
// input, seeded by their index), c poisoned; each page-aligned.
void place_matrices(GlobalMemory &g, const RunResult &r, const RunOptions &opts, GivenInputs &given)
{
    if (opts.inplace)
        throw Error("in place: kernel '" + r.manifest.name + "' runs on the cube (@op " + op_name(r.manifest.op) +
                    "); its output is not its input's shape");
    const MatmulShape &mm = r.matmul;
    const ConvShape &cv = mm.conv;
    const size_t count = r.manifest.tensors.size();
    uint64_t gm_size = 0;
    for (size_t i = 0; i < count; i++) {
        const TensorDecl &t = r.manifest.tensors[i];
        const npu_matrix_layout *l = matrix_of(r, i);
        Placed pl{&t, gm_size, {}};
        if (cv.on && t.is_input) {  // x (N, C, H, W) and w (cout, cin, k, k)
            pl.nchw = make_input(t, opts, given, NPU_F16,
                                 i == 0 ? std::vector<uint64_t>{cv.images, cv.cin, cv.h, cv.w}
                                        : std::vector<uint64_t>{cv.cout, cv.cin, cv.kernel, cv.kernel},
                                 unsigned(i));
        } else if (t.is_input && l) {
            pl.nchw = make_input(t, opts, given, NPU_F16, {1, 1, l->rows, l->cols}, unsigned(i));
            pl.nchw.shape = {l->rows, l->cols};
        } else if (t.is_input) {  // the bias
            pl.nchw = make_input(t, opts, given, NPU_F32, {1, 1, 1, mm.n}, unsigned(i));
            pl.nchw.shape = {mm.n};
        }
        gm_size = align_up(gm_size + placed_bytes(r, t), kGmAlign);
        g.placed.push_back(std::move(pl));
    }
    g.bytes.assign(gm_size, 0);
    for (size_t i = 0; i < count; i++) {
        const npu_matrix_layout *l = matrix_of(r, i);
        uint8_t *dst = g.bytes.data() + g.placed[i].gm_addr;
        if (cv.on && i == 0)
            npu_pack_nc1hwc0(&cv.x, g.placed[i].nchw.data.data(), dst);
        else if (cv.on && i == 1)
            pack_conv_weights(cv, *l, g.placed[i].nchw, dst);
        else if (cv.on)
            std::memset(dst, 0xff, npu_layout_bytes(&r.layout));
        else if (!l)  // the bias: its N values, then zeros to the last fractal column's end
            std::memcpy(dst, g.placed[i].nchw.data.data(), mm.n * 4);
        else if (g.placed[i].decl->is_input)
            npu_pack_fractal(l, g.placed[i].nchw.data.data(), dst);
        else  // poison: an element the kernel never writes reads as NaN
            std::memset(dst, 0xff, npu_matrix_layout_bytes(l));
    }
    g.gm = npu_gm{g.bytes.data(), g.bytes.size(), nullptr};
}

// Step 6: the cores, under the calling convention: s1.. = tensor addresses
// in manifest order, then parameters as binary32 bits; the shape SPRs.
void build_cores(Machine &mc, const RunResult &r, GlobalMemory &g, const npu_program &prog)
{
    const unsigned ncores = r.config.cores;
    for (unsigned k = 0; k < ncores; k++) {
        npu_core_config cc = r.config.core;
        cc.core_id = k;
        cc.num_cores = ncores;
        CorePtr core(new npu_core());
        if (npu_core_init(core.get(), &cc, &prog, &g.gm) != NPU_OK)
            throw Error("cannot allocate core " + std::to_string(k) + " (UB of " + std::to_string(cc.ub_bytes) + " bytes)");
        unsigned reg = 1;
        for (const Placed &pl : g.placed)
            core->s[reg++] = pl.gm_addr;
        for (double p : r.params)
            core->s[reg++] = npu_f32_bits(float(p));
        core->spr[NPU_SPR_SHAPE_N] = r.layout.n;
        core->spr[NPU_SPR_SHAPE_C] = r.layout.c;
        core->spr[NPU_SPR_SHAPE_H] = r.layout.h;
        core->spr[NPU_SPR_SHAPE_W] = r.layout.w;
        core->spr[NPU_SPR_SHAPE_C1] = r.layout.c1;
        core->spr[NPU_SPR_SHAPE_C0] = r.layout.c0;
        core->spr[NPU_SPR_ELEMS] = npu_layout_elems(&r.layout);
        core->spr[NPU_SPR_ESIZE] = npu_dtype_bytes(r.dtype);
        core->spr[NPU_SPR_MM_M1] = r.matmul.a.rows1;
        core->spr[NPU_SPR_MM_K1] = r.matmul.a.cols1;
        core->spr[NPU_SPR_MM_N1] = r.matmul.b.cols1;
        core->spr[NPU_SPR_CONV_H] = r.matmul.conv.h;
        core->spr[NPU_SPR_CONV_W] = r.matmul.conv.w;
        core->spr[NPU_SPR_CONV_GEOM] = r.matmul.conv.geometry();
        mc.core_ptrs.push_back(core.get());
        mc.cores.push_back(std::move(core));
    }
}

// Every run ends: without --max-instructions, a limit derived from the work
// (the vectors of all tensors) stops a runaway kernel.
RunLimit run_limit(const RunResult &r, const RunOptions &opts)
{
    RunLimit l;
    const uint64_t vlenb = r.config.core.vlen_bits / 8;
    l.all_vectors = (output_bytes(r) + vlenb - 1) / vlenb * r.manifest.tensors.size();
    l.derived = opts.max_instructions == RunOptions::kDefaultLimit;
    l.lim = {l.derived ? default_max_instructions(l.all_vectors) : opts.max_instructions, opts.max_cycles};
    return l;
}

// Step 7: the memory system and timing models (sim.mode: timed), then the
// engine runs every core until it halts, traps or hits its limit.
void run_engine(Machine &mc, RunResult &r, const RunOptions &opts, const GlobalMemory &g, const RunLimit &limit)
{
    const unsigned ncores = r.config.cores;
    r.timed = r.config.timed;
    const bool use_l2 = r.timed && r.config.memory_l2;
    if (!use_l2 && (!opts.warm_l2.empty() || !opts.mem_trace.empty()))
        throw Error(std::string(opts.warm_l2.empty() ? "a memory trace" : "warming the L2") +
                    " needs memory.model: l2 and sim.mode: timed");
    if (use_l2)
        build_memsys(mc.mem, r, opts, g.placed);
    if (!r.timed) {
        npu_run_functional(mc.core_ptrs.data(), ncores, &limit.lim);
        return;
    }
    for (unsigned k = 0; k < ncores; k++) {
        npu_timed_core *tc = npu_timed_core_new(mc.cores[k].get(), &r.config.timing);
        if (!tc) {
            // The config was checked (validate_config): its own words if not.
            char why[128];
            if (npu_timing_config_check(&r.config.timing, why, sizeof why) != NPU_OK)
                throw Error(std::string("cannot build the timing model: ") + why);
            throw std::bad_alloc();
        }
        mc.timed_owned.emplace_back(tc);
        mc.timed.push_back(tc);
        // Every core's DMA into the one memory system (the SystemC engine
        // finds it here and routes its line requests through TLM).
        if (mc.mem.ms)
            npu_timed_core_set_dma_backend(tc, &npu_memsys_dma, mc.mem.ms);
        if (opts.attach)
            opts.attach(k, tc);
    }
    if (opts.engine)
        opts.engine(mc.timed.data(), ncores, limit.lim);
    else
        npu_run_timed(mc.timed.data(), ncores, &limit.lim);
}

// Step 8: what the cores did: instructions and opcodes, traps, the memory
// system's counters, timing stats and the bound; the memory trace into place.
void collect_counts(RunResult &r, Machine &mc, const npu_program &prog, const RunLimit &limit)
{
    for (unsigned k = 0; k < mc.cores.size(); k++) {
        const npu_core *c = mc.cores[k].get();
        r.instructions += c->retired;
        r.instructions_per_core.push_back(c->retired);
        for (unsigned op = 0; op < NPU_NUM_OPS; op++)
            r.op_counts[op] += c->op_count[op];
        if (c->state != NPU_CORE_TRAPPED)
            continue;
        TrapReport tr;
        tr.core = k;
        tr.trap = c->trap;
        if (limit.derived && c->trap.kind == NPU_TRAP_MAX_INSNS)
            std::snprintf(tr.trap.message, sizeof tr.trap.message,
                          "stopped after %llu instructions, the default limit 1000 x (%llu vectors + 64); "
                          "a larger instruction limit raises it, 0 lifts it",
                          (unsigned long long)c->retired, (unsigned long long)limit.all_vectors);
        tr.disasm = disasm_at(prog, c->trap.pc, &tr.srcloc);
        tr.retired = c->retired;
        if (r.timed && k < mc.timed.size()) {
            tr.timed = true;
            tr.cycle = npu_timed_now(mc.timed[k]);
        }
        r.traps.push_back(tr);
    }
    if (mc.mem.ms) {
        uint64_t end = 0;
        for (npu_timed_core *t : mc.timed)
            end = std::max(end, npu_timed_stats(t)->cycles);
        collect_memsys(mc.mem, r, end);
    }
    if (r.timed)
        collect_timing(r, mc.timed, prog);
    commit_mem_trace(mc.mem);
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        unsigned cat = npu_insn_table[op].category;
        if (cat == NPU_CAT_ARITH || cat == NPU_CAT_CMP || cat == NPU_CAT_SEL || cat == NPU_CAT_SFU || cat == NPU_CAT_LOGIC ||
            cat == NPU_CAT_CVT)
            r.counted_instructions += r.op_counts[op];
    }
    const uint64_t vlenb = r.config.core.vlen_bits / 8;
    const Manifest &m = r.manifest;
    r.output_vectors = (output_bytes(r) + vlenb - 1) / vlenb * (m.tensors.size() - m.num_inputs());
    r.split_bytes_per_core = split_bytes(m.split, r.layout, unsigned(mc.cores.size()), r.matmul, r.config.core.l1_bytes);
}

// Step 9: every output unpacked to NCHW.
void unpack_outputs(GlobalMemory &g, const RunResult &r, const std::vector<uint64_t> &shape)
{
    const unsigned esize = npu_dtype_bytes(r.dtype);
    for (Placed &pl : g.placed) {
        if (pl.decl->is_input)
            continue;
        if (r.matmul.fractal_output()) {  // c: M x N from its fractals
            pl.nchw.dtype = r.dtype;
            pl.nchw.shape = {r.matmul.m, r.matmul.n};
            pl.nchw.data.resize(r.matmul.m * r.matmul.n * esize);
            npu_unpack_fractal(&r.matmul.c, g.bytes.data() + pl.gm_addr, pl.nchw.data.data());
            continue;
        }
        pl.nchw.dtype = r.dtype;
        pl.nchw.shape = shape;
        pl.nchw.data.resize(npu_layout_logical_elems(&r.layout) * esize);
        npu_unpack_nc1hwc0(&r.layout, g.bytes.data() + pl.gm_addr, pl.nchw.data.data());
    }
}

// Step 10: every output element against the kernel's reference and its
// tolerance (and --against's reference, for information), and the padding.
// Only a run without traps is checked.
void check_matmul(RunResult &r, const GlobalMemory &g);

void check_accuracy(RunResult &r, const GlobalMemory &g, const npu_reference *against, const std::string &against_name)
{
    npu_accuracy_init(&r.accuracy);
    npu_accuracy_init(&r.against_accuracy);
    r.against = against_name;
    if (!r.traps.empty())
        return;
    if (r.matmul.on) {
        if (!against_name.empty())
            throw Error("against: kernel '" + r.manifest.name + "' is a " + op_name(r.manifest.op) +
                        " (its reference is exact A B)");
        return check_matmul(r, g);
    }
    const npu_reference *ref = npu_reference_find(r.manifest.reference.c_str());
    const npu_tolerance unbounded{INFINITY, INFINITY, 1};
    double against_params[NPU_REF_MAX_PARAMS] = {};  // the kernel's, in order; zeros after
    std::copy(r.params.begin(), r.params.begin() + std::min<size_t>(r.params.size(), NPU_REF_MAX_PARAMS),
              against_params);
    const uint64_t count = npu_layout_logical_elems(&r.layout);
    const uint64_t plane = r.layout.h * r.layout.w;  // elements of one channel
    std::vector<const Placed *> ins;
    for (const Placed &pl : g.placed)
        if (pl.decl->is_input)
            ins.push_back(&pl);
    // One fp16 input takes at most 65,536 values: past that many elements,
    // the reference is computed once per distinct input (the function is
    // pure: the same input and parameters give the same double). The table
    // is left uninitialised (a bit per entry says which are set), so only
    // the pages of values that occur are touched.
    const bool memo = r.dtype == NPU_F16 && ins.size() == 1 && count >= 65536;
    std::unique_ptr<double[]> memo_ref(memo ? new double[65536] : nullptr);
    std::vector<uint64_t> memo_have(memo ? 65536 / 64 : 0);
    // With the table, the reference's fp16 rounding is kept beside it: an
    // output whose bits are that rounding has an error of 0 ULP and 0
    // absolute, so checking it (npu_accuracy_add) would only count it,
    // after the first element (which sets the worst so far), and where an
    // exact result passes the tolerance; and --against would see it too.
    std::unique_ptr<uint16_t[]> memo_round(memo ? new uint16_t[65536] : nullptr);
    const bool count_exact =
        memo && !against && (r.tolerance.max_ulp >= 0 || r.tolerance.max_abs >= 0);
    const auto inputs_at = [&](uint64_t i, double *x) {
        for (size_t k = 0; k < ins.size(); k++)
            x[k] = npu_load_lane(ins[k]->nchw.data.data(), ins[k]->decl->per_channel ? i / plane % r.layout.c : i,
                                 r.dtype);
    };
    // Per element (without the table), the references are computed a block
    // at a time before the block's elements are checked: the kernel's own
    // and the one it is measured --against. They are pure functions of the
    // inputs and the parameters, the same double in any thread, and the
    // elements are checked one after another in index order, so the
    // figures, the failures listed and the worst element do not depend on
    // threads. Threads (parallel.h) take a block's references where a
    // task's time (the second: the first warms the caches) says the check's
    // would take more than kThreadsWorth on one thread: a thread took 0.05
    // to 0.36 ms to start on the development machine, and a block starts
    // one, so a cheap reference (relu's, 2.5 ms for 200,704 elements there)
    // is faster alone, mish's (9 ms) not.
    constexpr uint64_t kBlock = 1 << 16, kTask = 1 << 11;
    constexpr double kThreadsWorth = 4e-3;  // seconds
    const bool own_per_element = !memo;
    std::vector<double> want_block(own_per_element ? std::min(count, kBlock) : 0);
    std::vector<double> against_block(against ? std::min(count, kBlock) : 0);
    const auto refs = [&](uint64_t s, uint64_t i0, uint64_t i1) {
        for (uint64_t i = i0; i < i1; i++) {
            double x[NPU_REF_MAX_INPUTS];
            inputs_at(i, x);
            if (own_per_element)
                want_block[i - s] = ref->fn(x, r.params.data());
            if (against)
                against_block[i - s] = against->fn(x, against_params);
        }
    };
    int threads = -1;  // not yet decided
    uint64_t outputs = 0;
    for (const Placed &pl : g.placed)
        outputs += !pl.decl->is_input;
    for (const Placed &pl : g.placed) {
        if (pl.decl->is_input)
            continue;
        for (uint64_t s = 0; s < count; s += kBlock) {
            const uint64_t n = std::min(kBlock, count - s);
            if (own_per_element || against) {
                uint64_t from = s;
                if (threads < 0) {  // the first task warms the caches, the second is timed
                    const uint64_t warm = s + std::min(n, kTask);
                    refs(s, s, warm);
                    const auto t0 = std::chrono::steady_clock::now();
                    from = std::min(s + n, warm + kTask);
                    refs(s, warm, from);
                    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                    threads = from > warm &&
                              took * double(count * outputs) / double(from - warm) > kThreadsWorth &&
                              usable_cores() > 1;
                }
                const uint64_t tasks = (s + n - from + kTask - 1) / kTask;
                if (threads)
                    parallel_for(tasks, 0, [&](size_t t) {
                        refs(s, from + t * kTask, std::min(s + n, from + (t + 1) * kTask));
                    });
                else
                    refs(s, from, s + n);
            }
            for (uint64_t i = s; i < s + n; i++) {
                uint16_t bits = 0;
                if (memo) {
                    std::memcpy(&bits, ins[0]->nchw.data.data() + 2 * i, 2);
                    if (!(memo_have[bits / 64] >> (bits % 64) & 1)) {
                        double x0[NPU_REF_MAX_INPUTS] = {npu_f16_to_f32(bits)};
                        memo_ref[bits] = ref->fn(x0, r.params.data());
                        memo_round[bits] = npu_f64_to_f16(memo_ref[bits]);
                        memo_have[bits / 64] |= uint64_t(1) << (bits % 64);
                    }
                    uint16_t got_bits;
                    std::memcpy(&got_bits, pl.nchw.data.data() + 2 * i, 2);
                    if (count_exact && got_bits == memo_round[bits] && r.accuracy.checked > 0) {
                        r.accuracy.checked++;
                        continue;
                    }
                }
                double x[NPU_REF_MAX_INPUTS];
                inputs_at(i, x);
                double got = npu_load_lane(pl.nchw.data.data(), i, r.dtype);
                const double want = memo ? memo_ref[bits] : want_block[i - s];
                if (against) {
                    const double prev = r.against_accuracy.max_abs_err;
                    npu_accuracy_add(&r.against_accuracy, i, got, against_block[i - s], r.dtype, &unbounded);
                    if (r.against_accuracy.max_abs_err > prev)
                        r.against_worst_x = x[0];
                }
                const uint64_t worst = r.accuracy.worst_index;
                const double worst_ulp = r.accuracy.max_ulp;
                if (!npu_accuracy_add(&r.accuracy, i, got, want, r.dtype, &r.tolerance) &&
                    r.failed.size() < kMaxFailedShown) {
                    FailedElement f{i, {x[0], ins.size() > 1 ? x[1] : 0.0}, got, want, npu_ulp_error(got, want, r.dtype)};
                    r.failed.push_back(f);
                }
                if (r.accuracy.worst_index != worst || r.accuracy.max_ulp != worst_ulp)
                    std::copy(x, x + ins.size(), r.worst_inputs);
            }
        }
        r.padding_nonzero += npu_padding_nonzero(&r.layout, g.bytes.data() + pl.gm_addr);
    }
    r.checked = true;
}

// exact_dots (runner.h) keeps four rows of two columns in vector lanes: 16
// sums in flight where a loop per element has two, each still added in k
// order. Row blocks go to threads, and each thread takes B in slices that
// stay in its cache while its rows pass over them.
using DotLanes = double __attribute__((vector_size(16)));
using DotLaneBits = int64_t __attribute__((vector_size(16)));
constexpr uint64_t kDotLanes = 2, kDotRows = 4;

// One block: the 4 rows at a (K apart; the first `nrows` of them real)
// against column pairs q0 .. q1 of bq (K lane pairs each), into dots and
// sums (rows of N, up to column N).
void dot_block(const double *a, uint64_t nrows, uint64_t K, const double *bq, uint64_t q0, uint64_t q1, uint64_t N,
               double *dots, double *sums)
{
    const DotLaneBits magnitude = {INT64_MAX, INT64_MAX};
    for (uint64_t q = q0; q < q1; q++) {
        const double *b = bq + q * K * kDotLanes;
        DotLanes d0{}, d1{}, d2{}, d3{}, s0{}, s1{}, s2{}, s3{};
        for (uint64_t k = 0; k < K; k++) {
            DotLanes bk;
            std::memcpy(&bk, b + k * kDotLanes, sizeof bk);
            const DotLanes p0 = bk * a[k], p1 = bk * a[K + k], p2 = bk * a[2 * K + k], p3 = bk * a[3 * K + k];
            d0 += p0;
            d1 += p1;
            d2 += p2;
            d3 += p3;
            s0 += (DotLanes)((DotLaneBits)p0 & magnitude);
            s1 += (DotLanes)((DotLaneBits)p1 & magnitude);
            s2 += (DotLanes)((DotLaneBits)p2 & magnitude);
            s3 += (DotLanes)((DotLaneBits)p3 & magnitude);
        }
        const DotLanes *d[kDotRows] = {&d0, &d1, &d2, &d3}, *s[kDotRows] = {&s0, &s1, &s2, &s3};
        for (uint64_t r = 0; r < nrows; r++)
            for (uint64_t l = 0; l < kDotLanes && q * kDotLanes + l < N; l++) {
                dots[r * N + q * kDotLanes + l] = (*d[r])[l];
                sums[r * N + q * kDotLanes + l] = (*s[r])[l];
            }
    }
}

}  // namespace

void exact_dots(uint64_t rows, uint64_t K, uint64_t N, const std::function<double(uint64_t, uint64_t)> &a_at,
                const std::function<double(uint64_t, uint64_t)> &b_at, std::vector<double> &dots,
                std::vector<double> &sums)
{
    const uint64_t pairs = (N + kDotLanes - 1) / kDotLanes, blocks = (rows + kDotRows - 1) / kDotRows;
    std::vector<double> bq(pairs * K * kDotLanes, 0.0);  // pair q: b(k, 2q + l) at (q K + k) 2 + l
    for (uint64_t k = 0; k < K; k++)
        for (uint64_t j = 0; j < N; j++)
            bq[(j / kDotLanes * K + k) * kDotLanes + j % kDotLanes] = b_at(k, j);
    std::vector<double> at(blocks * kDotRows * K, 0.0);  // zero rows past `rows`
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t k = 0; k < K; k++)
            at[i * K + k] = a_at(i, k);
    dots.resize(rows * N);
    sums.resize(rows * N);
    // A task is 16 blocks (64 rows); it passes its blocks over a slice of B
    // of 256 KiB at a time.
    const uint64_t slice = std::max<uint64_t>(1, (256 << 10) / (K * kDotLanes * sizeof(double)));  // pairs per slice
    constexpr uint64_t kBlocksPerTask = 16;
    parallel_for((blocks + kBlocksPerTask - 1) / kBlocksPerTask, 0, [&](size_t task) {
        const uint64_t b0 = task * kBlocksPerTask, b1 = std::min(blocks, b0 + kBlocksPerTask);
        for (uint64_t q0 = 0; q0 < pairs; q0 += slice)
            for (uint64_t blk = b0; blk < b1; blk++) {
                const uint64_t row = blk * kDotRows;
                dot_block(&at[row * K], std::min(kDotRows, rows - row), K, bq.data(), q0,
                          std::min(pairs, q0 + slice), N, &dots[row * N], &sums[row * N]);
            }
    });
}

namespace {

// Step 10 of @op matmul: every element of c against the epilogue f of the
// binary64 z = A B + bias. The cube adds 16 exact products at a time to an
// fp32 accumulator with one rounding (docs/cube.md), so the accumulator is
// within E = (ceil(K / 16) x 2^-24 + K x 2^-53) x S of A B, S the sum of |a b|
// over k (each step's rounding is at most 2^-24 of a partial sum, each
// bounded by S, and binary64's own sums add K x 2^-53 S); the bias's fp32
// addition adds 2^-24 of |acc + bias|. The epilogue is computed on a value
// within E of z, so an element is judged against the nearest value f takes
// on [z - E, z + E] (the hull of f at z - E, z and z + E: for a smooth f an
// extremum inside so small an interval moves f by O(E^2)), with the
// manifest's tolerance, and at least half an ULP of C (its final rounding).
void check_matmul(RunResult &r, const GlobalMemory &g)
{
    const MatmulShape &mm = r.matmul;
    const ConvShape &cv = mm.conv;
    const npu_reference *ref = npu_reference_find(r.manifest.reference.c_str());
    const Placed &pc = g.placed.back();
    const NpyArray &a = g.placed[0].nchw, &b = g.placed[1].nchw, &c = pc.nchw;
    // Row i of A: a's row, or the patch of x under output pixel i of its
    // image (zero outside the map), in w's order (cin, kernel row, column).
    const uint64_t rows = cv.on ? cv.images * mm.m : mm.m;
    auto a_at = [&](uint64_t i, uint64_t k) -> double {
        if (!cv.on)
            return npu_load_lane(a.data.data(), i * mm.k + k, NPU_F16);
        const uint64_t img = i / mm.m, oh = i % mm.m / cv.wo, ow = i % mm.m % cv.wo;
        const uint64_t ci = k / (cv.kernel * cv.kernel), di = k / cv.kernel % cv.kernel, dj = k % cv.kernel;
        const int64_t y = int64_t(oh * cv.stride + di) - int64_t(cv.pad);
        const int64_t x = int64_t(ow * cv.stride + dj) - int64_t(cv.pad);
        return y < 0 || x < 0 || y >= int64_t(cv.h) || x >= int64_t(cv.w)
                   ? 0.0
                   : npu_load_lane(a.data.data(), ((img * cv.cin + ci) * cv.h + uint64_t(y)) * cv.w + uint64_t(x),
                                   NPU_F16);
    };
    // b(k, j): a convolution's weights (cout, cin, k, k) are N rows of K, in
    // the order of a patch.
    auto b_at = [&](uint64_t k, uint64_t j) {
        return npu_load_lane(b.data.data(), cv.on ? j * mm.k + k : k * mm.n + j, NPU_F16);
    };
    std::vector<double> dots, sums;
    exact_dots(rows, mm.k, mm.n, a_at, b_at, dots, sums);
    std::vector<double> bias(mm.n, 0.0);
    if (mm.bias)
        for (uint64_t j = 0; j < mm.n; j++)
            bias[j] = npu_load_lane(g.placed[2].nchw.data.data(), j, NPU_F32);
    // The cube rounds once per fractal column of A it adds (K1 of them).
    const double k1 = double(mm.a.cols1);
    const double per_s = k1 * std::ldexp(1.0, -24) + double(mm.k) * std::ldexp(1.0, -53);
    const int out_digits = r.dtype == NPU_F16 ? 11 : 24;
    const double *params = cv.on ? nullptr : r.params.data();  // a convolution's are its geometry
    for (uint64_t i = 0; i < rows; i++) {
        for (uint64_t j = 0; j < mm.n; j++) {
            const double dot = dots[i * mm.n + j], s = sums[i * mm.n + j];
            double e = per_s * s;
            const double z = dot + bias[j];
            if (mm.bias)
                e += std::ldexp(std::fabs(dot) + e + std::fabs(bias[j]), -24);
            e *= 1.0 + 0x1p-20;  // the bound's own rounding
            double zs[3] = {z - e, z, z + e};
            const double fz = ref->fn(&zs[1], params);
            const double f_lo = ref->fn(&zs[0], params), f_hi = ref->fn(&zs[2], params);
            const double lo = std::min({f_lo, fz, f_hi}), hi = std::max({f_lo, fz, f_hi});
            // c is M x N; y is (images, cout, ho, wo)
            const uint64_t idx = cv.on ? (i / mm.m * mm.n + j) * mm.m + i % mm.m : i * mm.n + j;
            const double got = npu_load_lane(c.data.data(), idx, r.dtype);
            const double want = std::isnan(got) || std::isnan(lo) || std::isnan(hi) ? fz : std::clamp(got, lo, hi);
            int ex;
            std::frexp(std::max(std::fabs(lo), std::fabs(hi)), &ex);
            npu_tolerance tol = r.tolerance;
            tol.max_abs = std::max(tol.max_abs, std::ldexp(1.0, ex - out_digits - 1));
            const uint64_t worst = r.accuracy.worst_index;
            const double worst_ulp = r.accuracy.max_ulp;
            if (!npu_accuracy_add(&r.accuracy, idx, got, want, r.dtype, &tol) && r.failed.size() < kMaxFailedShown)
                r.failed.push_back(FailedElement{idx, {z, s}, got, fz, npu_ulp_error(got, fz, r.dtype)});
            if (r.accuracy.worst_index != worst || r.accuracy.max_ulp != worst_ulp) {
                r.worst_inputs[0] = z;
                r.worst_inputs[1] = s;
            }
        }
    }
    if (cv.on) {  // y's NC1HWC0 padding: channels past cout
        r.padding_nonzero += npu_padding_nonzero(&r.layout, g.bytes.data() + pc.gm_addr);
        r.checked = true;
        return;
    }
    // C's padding (rows past M, columns past N of its last fractals) must be
    // zero, as the products of A's and B's zero padding are.
    const npu_matrix_layout &l = mm.c;
    const uint8_t *gc = g.bytes.data() + pc.gm_addr;
    const unsigned es = l.esize;
    for (uint64_t i = 0; i < l.rows1 * NPU_FRACTAL; i++)
        for (uint64_t j = 0; j < l.cols1 * NPU_FRACTAL; j++) {
            if (i < l.rows && j < l.cols)
                continue;
            uint32_t bits = 0;
            std::memcpy(&bits, gc + npu_matrix_layout_offset(&l, i, j) * es, es);
            r.padding_nonzero += bits != 0;
        }
    r.checked = true;
}

}  // namespace

static RunResult run_once(const RunOptions &opts);

// The run simulated only to compare cycles: the C engine (every engine gives
// the same cycles), no traces.
static RunOptions probe_of(const RunOptions &opts)
{
    RunOptions probe = opts;
    probe.engine = nullptr;
    probe.attach = nullptr;
    probe.mem_trace.clear();
    return probe;
}

// The TILE_MAX values measuring and the check on several cores try beside
// the rule's pick (`rule`, planned): 16, 8, 4 and 2 KiB, each within the UB
// and at least the kernel's least tile. Tiles that hold a core's whole
// share are one program whatever their size, so one of them at most, and
// none where the rule's pick holds it.
static std::vector<uint64_t> ladder(const RunResult &rule)
{
    std::vector<uint64_t> tiles;
    const uint64_t least = least_tile(rule.config, rule.manifest.tile_vectors());
    const std::vector<uint64_t> shares =
        split_bytes(rule.manifest.split, rule.layout, rule.config.cores, rule.matmul, rule.config.core.l1_bytes);
    const uint64_t share = shares.empty() ? UINT64_MAX : shares[0];
    bool whole = rule.tile.tile_max >= share;
    for (uint64_t t : {16384, 8192, 4096, 2048}) {
        if (t == rule.tile.tile_max || t > rule.config.core.ub_bytes || t < least || (t >= share && whole))
            continue;
        whole = whole || t >= share;
        tiles.push_back(t);
    }
    return tiles;
}

// The rule's run (`rule`, simulated) against the run with each TILE_MAX of
// `tiles`, given as the host's and simulated with `probe`: each that passes
// its check goes into `measured` (a candidate that traps or fails does not
// count), the rule's first. Returns the index in `tiles` of the fewest
// cycles, or -1 where that is the rule's run (the first of equals wins);
// the fastest candidate's run goes to `*fastest_run` where given.
static int fastest(const RunResult &rule, const std::vector<uint64_t> &tiles, RunOptions probe,
                   std::vector<std::pair<unsigned, uint64_t>> &measured, RunResult *fastest_run = nullptr)
{
    int best = -1;
    uint64_t best_cycles = UINT64_MAX;
    if (rule.passed()) {
        measured.push_back({rule.tile.tile_max, rule.stats.cycles});
        best_cycles = rule.stats.cycles;
    }
    for (size_t i = 0; i < tiles.size(); i++) {
        probe.tile_max = tiles[i];
        RunResult p = run_once(probe);
        if (!p.passed())
            continue;
        measured.push_back({unsigned(tiles[i]), p.stats.cycles});
        if (p.stats.cycles < best_cycles) {
            best = int(i), best_cycles = p.stats.cycles;
            if (fastest_run)
                *fastest_run = std::move(p);
        }
    }
    return best;
}

// RunOptions::measure_tiles: the run simulated with the rule's tiles and
// each of the ladder's (no traces, the C engine: every engine gives the
// same cycles), then once more, as asked, with the fastest.
static RunResult run_measured(const RunOptions &opts)
{
    RunOptions probe = probe_of(opts);
    probe.measure_tiles = false;
    probe.check_tiles = false;
    const RunResult rule = run_once(probe);
    RunOptions final = opts;
    final.measure_tiles = false;
    final.check_tiles = false;
    if (rule.tile.reason == "default" || rule.matmul.on)  // a cube kernel's tiles are the cube's
        return run_once(final);
    std::vector<std::pair<unsigned, uint64_t>> measured;
    const std::vector<uint64_t> tiles = ladder(rule);
    const int best = fastest(rule, tiles, probe, measured);
    // The rule's own pick runs as the rule runs it: its TILE_MAX given
    // would lose what the rule adds to it (pieces of the reach, DMA_CHUNK).
    final.tile_max = best < 0 ? 0 : tiles[best];
    RunResult r = run_once(final);
    r.tile.reason = "measured";
    r.tile.measured = measured;
    return r;
}

MemoryGrant admit_run(const RunOptions &opts)
{
    RunResult r;
    r.manifest = load_kernel(opts);
    GivenInputs given(opts);
    resolve_run(r, opts, given);
    check_needs(r);
    run_shape(r, opts, given);
    return admit_run(r.layout, footprint_of(r, opts));
}

uint64_t run_bytes_estimate(const RunOptions &opts)
{
    RunResult r;
    r.manifest = load_kernel(opts);
    GivenInputs given(opts);
    resolve_run(r, opts, given);
    run_shape(r, opts, given);
    return run_bytes_needed(r.layout, footprint_of(r, opts));
}

// A run up to its assembled program: what simulating it needs.
struct Plan {
    RunResult r;
    std::unique_ptr<GivenInputs> given;
    std::vector<uint64_t> shape;
    ProgramHolder prog;
    // The run's admission to the host's memory beside other threads' runs,
    // held until it is simulated (admit_run, run_limits.h).
    MemoryGrant grant;
    Plan() = default;
    Plan(const Plan &) = delete;
    Plan &operator=(const Plan &) = delete;
};

static void plan_run(Plan &p, const RunOptions &opts);
static RunResult simulate(const Plan &p, const RunOptions &opts);

// Where the rule is least sure of its tiles, the run checks them
// (docs/kernels.md, "Tiles"): it is also simulated with other tiles, each
// like a measured candidate (the C engine, no traces), and the fastest is the
// run (reason `<the rule's>_slower` where that is not the rule's pick;
// `tiling.measured` lists them all). The other tiles are
//  - on several cores, whose transfers meet in the shared L2 in ways the
//    rule does not see: the ladder's (16, 8, 4, 2 KiB), as measuring tries;
//  - on one core, where the rule takes the MSHRs' reach (reasons reads and
//    paced): the tiles it takes without it (16 KiB; for paced its larger
//    tiles, one transfer each).
// A run in written order takes the tiles its scheduled run would: the check
// simulates the scheduled program.
static RunResult run_checked(const RunOptions &opts)
{
    Plan p;
    plan_run(p, opts);
    const std::string reason = p.r.tile.reason;
    std::vector<uint64_t> tiles;
    if (opts.tile_max || !opts.check_tiles || reason == "default" || reason == "host" || p.r.matmul.on) {
    } else if (p.r.config.cores > 1) {
        tiles = ladder(p.r);
    } else if (reason == "reads" || reason == "paced") {
        const uint64_t ub = p.r.config.core.ub_bytes / kTileStep * kTileStep;
        const uint64_t without = reason == "paced" ? p.r.tile.tile_max : std::min<uint64_t>(kSmallTile, ub);
        if (without && (reason == "paced" || without != p.r.tile.tile_max))
            tiles = {without};
    }
    if (tiles.empty())
        return simulate(p, opts);
    RunOptions probe = probe_of(opts);
    probe.schedule = true;
    probe.check_tiles = false;
    // A probe is the run as asked.
    const bool plain = !opts.engine && !opts.attach && opts.mem_trace.empty() && opts.schedule;
    RunResult rule = opts.schedule ? simulate(p, probe) : run_once(probe);
    std::vector<std::pair<unsigned, uint64_t>> measured;
    RunResult other;
    const int best = fastest(rule, tiles, probe, measured, &other);
    if (best < 0) {
        if (!plain)
            rule = simulate(p, opts);
        rule.tile.measured = measured;
        return rule;
    }
    if (!plain) {
        RunOptions final = opts;
        final.tile_max = tiles[best];
        final.check_tiles = false;
        other = run_once(final);
    }
    other.tile.reason = reason + "_slower";
    other.tile.measured = measured;
    return other;
}

RunResult run_kernel(const RunOptions &opts)
{
    const CLocaleScope c_locale;  // numbers in the C locale (c_locale.h)
    if (opts.measure_tiles && opts.tile_max)
        throw Error("tile_max " + std::to_string(opts.tile_max) +
                    " with measured tiling: give one (tile_max fixes the tiles, measuring picks them)");
    // host_seconds is the whole call's: the tiles measured or checked by
    // simulating others included (a run's own plan and simulation alone
    // said 16.7 s of an 86 s run).
    const auto t0 = std::chrono::steady_clock::now();
    RunResult r = opts.measure_tiles ? run_measured(opts) : run_checked(opts);
    r.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.derived = derive_figures(r);
    return r;
}

static void plan_run(Plan &p, const RunOptions &opts)
{
    p.r.manifest = load_kernel(opts);
    p.given = std::make_unique<GivenInputs>(opts);
    resolve_run(p.r, opts, *p.given);
    check_needs(p.r);
    p.shape = run_shape(p.r, opts, *p.given);
    const RunFootprint fp = footprint_of(p.r, opts);
    p.grant = admit_run(p.r.layout, fp);
    if (opts.admitted)
        opts.admitted(run_bytes_touched(p.r.layout, fp));
    assemble_kernel(p.r, opts, p.prog.p);
}

// Simulates a planned run with `opts`' engine, traces and check (the plan's
// inputs, config and program): as often as asked.
static RunResult simulate(const Plan &p, const RunOptions &opts)
{
    RunResult r = p.r;
    const npu_reference *against = find_against(r, opts);
    GlobalMemory g;
    place_tensors(g, r, opts, *p.given, p.shape);
    Machine mc;
    build_cores(mc, r, g, p.prog.p);
    const RunLimit limit = run_limit(r, opts);
    run_engine(mc, r, opts, g, limit);
    collect_counts(r, mc, p.prog.p, limit);
    unpack_outputs(g, r, p.shape);
    check_accuracy(r, g, against, opts.against);
    for (Placed &pl : g.placed)
        r.tensors[pl.decl->name] = std::move(pl.nchw);
    r.derived = derive_figures(r);
    return r;
}

static RunResult run_once(const RunOptions &opts)
{
    Plan p;
    plan_run(p, opts);
    return simulate(p, opts);
}

}  // namespace npusim
