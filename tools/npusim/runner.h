// One kernel run, as data: kernel + config + inputs in, outputs + stats +
// accuracy out. The CLI, `compare` and sweeps all go through run_kernel().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "tiling.h"
#include "run_limits.h"
#include "manifest.h"
#include "npy.h"
#include "npusim/core.h"
#include "npusim/dram.h"
#include "npusim/l2.h"
#include "npusim/memsys.h"
#include "npusim/program.h"
#include "npusim/run.h"
#include "npusim/tensor.h"
#include "npusim/timing.h"

namespace npusim {

// Drives the timed cores to completion: the C run loop (npu_run_timed, the
// default) or the SystemC top. Must leave every core finished.
using Engine = std::function<void(npu_timed_core *const *cores, unsigned n, const npu_run_limits &lim)>;

struct RunOptions {
    std::string kernel;  // name or path
    std::string dtype;  // fp16 or fp32; empty: the first tensor input's .npy, else fp32
    // N, C, H, W (@op matmul: 1, M, K, N; conv2d: x's). Empty: the first
    // tensor input's (matmul: a's and b's), else kDefaultShape. Given with
    // inputs, every input must have it (no input overrides it).
    std::vector<uint64_t> shape;
    static const std::vector<uint64_t> kDefaultShape;  // 1, 16, 8, 8
    Config config = default_config();
    uint64_t seed = 1;
    std::map<std::string, std::string> inputs;   // tensor name -> .npy path
    // tensor name -> data in memory (the Python module's arrays); a name is
    // given here or in `inputs`, not both. Messages call it "input 'x'".
    std::map<std::string, NpyArray> input_arrays;
    std::map<std::string, std::string> outputs;  // tensor name -> .npy path
    std::map<std::string, double> params;        // overrides of manifest defaults
    uint64_t max_cycles = 0;  // per core; 0: no limit
    // Per core; 0: no limit; kDefaultLimit: derived from the work
    // (default_max_instructions), so that every run ends.
    static constexpr uint64_t kDefaultLimit = UINT64_MAX;
    uint64_t max_instructions = kDefaultLimit;
    Engine engine;  // empty: npu_run_timed
    // Called once per core after its timing model exists (traces attach hooks here).
    std::function<void(unsigned core, npu_timed_core *)> attach;
    // memory.model: l2 only. Tensors placed in the L2 before the run (--warm-l2).
    std::vector<std::string> warm_l2;
    // One-input, one-output kernels: the output aliases the input's GM buffer
    // (in-place, as production ReLU with inplace=true). The accuracy check
    // compares against the input values captured before the run.
    bool inplace = false;
    // memory.model: l2 only. Every L2 line access, Dinero din (`0 addr size`
    // read, `1 addr size` write, hex address), streamed and renamed into place.
    std::string mem_trace;
    // A second reference (e.g. gelu_erf for gelu_tanh): every output is also
    // measured against it, for information. Pass/fail stays with the kernel's
    // own reference and tolerance.
    std::string against;
    // `.pipeline` loops: modulo-scheduled for the run's config (true), or in
    // written order (--schedule off).
    bool schedule = true;
    // The tiles' cap, TILE_MAX (bytes, a multiple of 256 up to the UB): 0 lets
    // the host decide for the config and shape (tiling.h).
    uint64_t tile_max = 0;
    // With tile_max 0: false picks the tiles by the rule (tiling.h); true
    // measures them, as FFTW_MEASURE plans: the run is simulated with the
    // rule's tiles and with 16, 8, 4 and 2 KiB, and the fewest cycles win
    // (docs/kernels.md, "Tiles").
    bool measure_tiles = false;
    // With the rule: where it is least sure of its tiles (several cores; on
    // one core, where it takes the MSHRs' reach, reasons reads and paced),
    // the run is also simulated with other tiles and the fastest is the run
    // (docs/kernels.md, "Tiles"); false runs the rule's pick unchecked, one
    // simulation.
    bool check_tiles = true;
    // Called once the run is admitted (its memory checked), before it is
    // assembled and simulated, with the host bytes it will touch beyond the
    // process's own (run_bytes_touched): npusim run prefaults its heap for
    // them (prefault_heap).
    std::function<void(uint64_t bytes)> admitted;
    // Host bytes the caller holds beside the run and keeps through it (npusim
    // graph: its tensors), counted in the run's memory check (check_run_fits).
    uint64_t host_bytes_held = 0;
};

struct TrapReport {
    unsigned core = 0;
    npu_trap trap{};
    std::string disasm;   // the faulting instruction
    std::string srcloc;   // file:line of it, when known
    bool timed = false;   // cycle is known (a timed run)
    uint64_t cycle = 0;   // the core's clock when it stopped: its last issue cycle
    uint64_t retired = 0; // instructions the core completed before the trap
};

struct FailedElement {
    uint64_t index;   // NCHW element index
    double inputs[NPU_REF_MAX_INPUTS];
    double got, ref, ulp;
};

// Where a kernel stalls: one static instruction and its stall cycles by reason.
struct PcStalls {
    uint64_t pc = 0;
    std::string disasm, srcloc;
    uint64_t total = 0;
    uint64_t by_reason[NPU_NUM_STALLS] = {};
};

// The bandwidths on the memory path, each as the cycles the run's traffic
// needs through it at least (analyse_bound proves each a lower bound).
struct MemoryBound {
    // Each core's DMA engine moves dma.bytes_per_cycle: the busiest core's bytes.
    double dma_cycles = 0;
    uint64_t dma_bytes = 0;  // that core's bytes in + out
    unsigned dma_core = 0;   // which core (the first of equals)
    // memory.model: l2 (shared by every core): the terms below exist.
    bool shared = false;
    double l2_bank_cycles = 0;  // accesses x bank_interval / banks - l2_bank_tail
    uint64_t l2_accesses = 0;
    double l2_bank_tail = 0;    // max(0, bank_interval - hit_latency): see analyse_bound
    // Little's law on the L2's MSHRs: a read miss holds one from its fill
    // request until the line arrives, at least dram.latency + the line's
    // channel time, and must be back before the kernel ends.
    double l2_mshr_cycles = 0;  // l2_read_fills x l2_fill_min_cycles / mshrs
    uint64_t l2_read_fills = 0; // read misses less every merge: at most the reads that filled
    double l2_fill_min_cycles = 0;
    // Little's law on a core's DMA window: a line request holds one of its
    // engine's dma.outstanding slots from its issue until it completes, at
    // least l2.hit_latency, and a read that fills its line at least
    // hit_latency + l2_fill_min_cycles. The busiest core's engine binds.
    double dma_window_cycles = 0; // (requests x hit_latency + read fills x fill_min) / outstanding
    unsigned dma_window_core = 0; // which core (the first of equals)
    uint64_t dma_window_requests = 0;     // that core's line requests (its L2 accesses)
    uint64_t dma_window_read_fills = 0; // of which reads that filled their line
    double dram_cycles = 0;     // dram_bytes / (channels x bytes_per_cycle)
    uint64_t dram_bytes = 0;    // counted: the kernel's DRAM bytes, less the two below
    uint64_t dram_end_of_run_bytes = 0;  // not counted: the end-of-run write-back moves after `cycles`
    uint64_t dram_after_end_bytes = 0;   // not counted: at most this much of the kernel's own
                                         // (posted) traffic was still queued after `cycles`
};

// One `.pipeline` loop of the kernel as the assembler scheduled it, and how
// often its body ran (npu_sched_loop; docs/scheduling.md).
struct ScheduledLoop {
    std::string where;                      // file:line of the .pipeline
    npu_sched_loop info{};                  // scalars only (its pointers are null)
    std::string binding, table;
    std::vector<uint64_t> iterations_per_core;
    // Huff's MinAvg: iterations x lifetime_sum / registers, the larger file
    double register_cycles(unsigned core) const;
};

// The program's .pipeline loops; iterations per core from the timed cores
// (none: empty counts).
std::vector<ScheduledLoop> scheduled_loops(const npu_program &prog, const std::vector<npu_timed_core *> &timed);

// @op matmul: the roofline of the machine, not of the kernel: the cube's
// MAC peak against the operand path carrying only the compulsory traffic
// (every input read once, C written once), over the same bandwidths as
// MemoryBound. A lower bound on any kernel's cycles for this product on
// this config; analyse_bound (bound.cc) proves each term.
struct Roofline {
    bool on = false;
    uint64_t read_bytes = 0, written_bytes = 0;  // A, B (and the bias), and C, as placed in GM
    uint64_t warmed_bytes = 0;  // of read_bytes, in the L2 before the run (they need no fill)
    double cube_cycles = 0;     // m1 k1 n1 fractal products x interval / count / cores
    double operand_cycles = 0;  // the tightest term below
    std::string operand_resource;
    double dma_engine_cycles = 0, dma_window_cycles = 0, l2_bank_cycles = 0, l2_mshr_cycles = 0, dram_cycles = 0;
    double cycles = 0;          // max(cube_cycles, operand_cycles)
    std::string binding;        // "cube" or "operand path"
    double efficiency = 0;      // cycles / the run's cycles
};

// The hardware limit of a run: the largest of its bounds, and how close the
// run came to it (efficiency = bound_cycles / cycles, never above 1).
struct Bound {
    Roofline roofline;            // @op matmul only
    double resource_cycles = 0;   // max over units and slots of work / capacity (the busiest core)
    std::string resource_name;    // the compute resource, e.g. "unit valu"
    double memory_cycles = 0;     // the tightest of the terms in `memory`
    std::string memory_resource;  // "dma engine", "dma window", "l2 banks", "l2 mshrs" or "dram channels"
    MemoryBound memory;
    double dependency_cycles = 0; // longest register-dependency chain
    // Registers (Huff's MinAvg): on the busiest core, the sum over its
    // .pipeline loops of iterations x the least lifetime sum of an
    // iteration's values / the registers free for them (ScheduledLoop).
    double register_cycles = 0;
    double bound_cycles = 0;
    std::string binding;          // "resource", "memory", "registers" or "dependency"
    std::string binding_resource; // resource_name, memory_resource, "registers" or "dependency chain"
    double efficiency = 0;
};

// memory.model: l2: the DRAM's traffic split where the kernel ends (the start
// of the end-of-run write-back, npu_memsys_kernel_dram). Bandwidths divide by
// spans that contain every channel booking of their bytes, so neither exceeds
// peak_bytes_per_cycle (see dram.h: npu_dram_checkpoint).
struct DramTraffic {
    unsigned peak_bytes_per_cycle = 0;  // channels x bytes_per_cycle
    uint64_t kernel_read = 0, kernel_written = 0;  // requested before the write-back
    uint64_t kernel_span = 0;      // max(cycles, the cycle the channels finished those requests)
    double kernel_achieved = 0;    // (kernel_read + kernel_written) / kernel_span
    uint64_t kernel_booked_after = 0;  // channel-cycles of them booked after `cycles`, summed over channels
    uint64_t end_of_run_bytes = 0;     // written by the write-back
    uint64_t end_of_run_span = 0;      // from `cycles` until the channels finished (0: nothing written)
    double end_of_run_achieved = 0;    // end_of_run_bytes / end_of_run_span
};

// Every figure of a run that is a ratio of its counts, computed once
// (derive_figures) and printed as-is by the text and JSON reports.
// docs/metrics.md gives each formula; "cores" is the number of cores that
// ran timed, "cycles" the slowest core's. A ratio over zero is 0.
struct DerivedFigures {
    double ipc = 0;                      // instructions / (cycles x cores)
    double cycles_per_element = 0;       // cycles / elements
    double instructions_per_vector = 0;  // counted_instructions / output_vectors
    uint64_t core_cycles = 0;            // cycles x cores: the denominator of the shares below
    std::vector<double> issue_share;     // [k]: issue_histogram[k] / core_cycles, k = 0..width
    std::vector<double> slot_busy;       // [k]: slot_issued[k] / core_cycles
    double unit_utilisation[NPU_NUM_UNITS] = {};  // unit_busy / (cycles x unit count x cores)
    double stall_share[NPU_NUM_STALLS] = {};      // stall / core_cycles
    double issue_cycle_share = 0;        // issue_cycles / core_cycles
    uint64_t stall_cycles = 0;           // sum of stall[]
    uint64_t issue_slots = 0;            // width x the sum of every core's own cycles
    double slots_lost_share[NPU_NUM_STALLS] = {};  // slots_lost / issue_slots
    double slots_issued_share = 0;       // instructions (timed) / issue_slots
    double l2_hit_rate = 0;              // l2 hits / accesses
    std::vector<double> l2_tensor_hit_rate;  // per L2 tensor id: hits / accesses
    uint64_t dram_ideal_busy_cycles = 0; // memory.model ideal: ceil(dma bytes / dma.bytes_per_cycle)
    double mean_ulp = 0;                 // accuracy: sum of ULP errors / elements checked
    double sim_cycles_per_second = 0;    // cycles / host_seconds (timed runs)
    double sim_instructions_per_second = 0;  // instructions / host_seconds
};

// @op conv2d: y = epilogue(conv(x, w)), x (images, cin, h, w) fp16 in
// NC1HWC0, w (cout, cin, kh, kw) fp16 as the fractal matrix B of the
// product im2col(x) B (docs/cube.md, "Convolution"), y (images, cout, ho,
// wo) in the run's dtype, NC1HWC0.
struct ConvShape {
    bool on = false;
    uint64_t images = 0, cin = 0, h = 0, w = 0, cout = 0, kernel = 0, stride = 0, pad = 0, ho = 0, wo = 0;
    npu_layout x{};  // the input's NC1HWC0 layout (the output's is RunResult::layout)
    uint64_t geometry() const { return kernel | kernel << 8 | stride << 16 | pad << 24; }
};

// @op matmul: C (M x N, the run's dtype) = epilogue(A (M x K) B (K x N)), A
// and B fp16; all three fractal matrices in GM (npu_matrix_layout).
// @op conv2d is a product of the same shape per image: A = im2col(x) (M =
// ho wo, K = cin kh kw in 16-channel taps), B the weights, C = y; only b is
// a fractal matrix in GM (a and c give the fractal counts).
struct MatmulShape {
    bool on = false;
    bool bias = false;  // a third input: N fp32 values, added to each row of A B
    uint64_t m = 0, k = 0, n = 0;
    npu_matrix_layout a{}, b{}, c{};
    ConvShape conv;
    // C is a fractal matrix in GM (matmul), not an NC1HWC0 tensor (conv2d).
    bool fractal_output() const { return on && !conv.on; }
    // The bias in GM: C's fractal columns of 16 fp32 values, zero past N.
    uint64_t bias_bytes() const { return c.cols1 * NPU_FRACTAL * 4; }
};

struct RunResult {
    Manifest manifest;
    npu_dtype dtype = NPU_F32;
    uint64_t seed = 0;  // of the generated inputs (RunOptions::seed)
    // Eltwise: the NCHW tensors' layout. Matmul: the output C as an NCHW
    // tensor (1, 1, M, N), for the figures per element; `matmul` has the rest.
    npu_layout layout{};
    MatmulShape matmul;
    std::vector<std::string> warm_l2_tensors;  // placed in the L2 before the run (--warm-l2, memory.warm_inputs)
    Config config;
    std::vector<double> params;  // resolved, manifest order
    uint64_t instructions = 0;   // all cores
    std::vector<uint64_t> instructions_per_core;
    uint64_t op_counts[NPU_NUM_OPS] = {};
    uint64_t counted_instructions = 0;  // arith/cmp/sel/sfu/logic/cvt
    uint64_t output_vectors = 0;
    // From the manifest's @split: GM bytes core k must write to each output
    // (its dma_bytes_out is this times the outputs). Empty without @split.
    std::vector<uint64_t> split_bytes_per_core;
    npu_accuracy accuracy{};
    // --against: the same outputs measured against another reference (no tolerance).
    std::string against;
    npu_accuracy against_accuracy{};
    double against_worst_x = 0;  // first input of the element with the largest absolute error
    // The manifest's accuracy tolerance for the dtype (its @tolerance line): the
    // largest ULP or absolute error an element may have, and the sign of zero.
    // "Bound" alone, in reports and docs, is the cycle bound (bound_analysis).
    npu_tolerance tolerance{};
    std::vector<FailedElement> failed;  // the first few elements outside the tolerance
    // The inputs of the element with the largest ULP error (accuracy.worst_index;
    // a cube kernel's exact product and its sum of magnitudes).
    double worst_inputs[NPU_REF_MAX_INPUTS] = {};
    uint64_t padding_nonzero = 0;
    bool checked = false;       // accuracy computed (the run completed)
    std::vector<TrapReport> traps;
    bool timed = false;
    npu_core_stats stats{};                 // all cores: sums, with cycles = the slowest core
    std::vector<npu_core_stats> core_stats; // per core
    std::vector<PcStalls> hot_pcs;          // static instructions by stall cycles, worst first
    std::vector<ScheduledLoop> loops;       // the kernel's .pipeline loops
    TileChoice tile;                        // the host's tiling decision (tiling.h)
    Bound bound_analysis;
    double host_seconds = 0;
    std::map<std::string, NpyArray> tensors;  // every tensor, NCHW, after the run

    // memory.model: l2 (has_l2): the memory system's counters after the run.
    bool has_l2 = false;
    npu_l2_stats l2{};
    npu_dram_stats dram{};                   // at the end, the write-back included
    npu_dram_checkpoint dram_kernel{};       // where the kernel ended (before the write-back)
    DramTraffic dram_traffic;
    uint64_t dram_busy_cycles = 0;           // summed over channels
    std::vector<std::string> l2_tensor_names; // index = the L2's tensor id
    uint64_t mem_trace_lines = 0;

    // Ratios and shares of the counts above: computed once by run_kernel
    // (derive_figures), printed by both report writers.
    DerivedFigures derived;

    bool passed() const { return traps.empty() && checked && accuracy.failures == 0 && padding_nonzero == 0; }
};

// The generated inputs' numbers: splitmix64, a tiny, well-mixed generator.
// Seeds must give the same inputs on every machine, so no std::
// distributions (their output is unspecified).
struct Rng {
    uint64_t s;
    uint64_t next()
    {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1p-53; }
};

// @op matmul: the fractal layout of manifest tensor i (a, b, then c), or
// null for the bias; @op conv2d: b's for w, null for x and y.
const npu_matrix_layout *matrix_of(const RunResult &r, size_t i);
// A placed tensor's GM bytes in run r: its NC1HWC0 layout (or C1 blocks of
// a per-channel input), or for @op matmul its fractal matrix or the bias.
uint64_t placed_bytes(const RunResult &r, const TensorDecl &t);

// The output tensor's elements with its padding, and its GM bytes: NC1HWC0,
// or C's fractals for @op matmul.
inline uint64_t output_elements_padded(const RunResult &r)
{
    return r.matmul.fractal_output() ? r.matmul.c.rows1 * r.matmul.c.cols1 * NPU_FRACTAL * NPU_FRACTAL
                                     : npu_layout_elems(&r.layout);
}
inline uint64_t output_bytes(const RunResult &r)
{
    return r.matmul.fractal_output() ? npu_matrix_layout_bytes(&r.matmul.c) : npu_layout_bytes(&r.layout);
}

// Throws npusim::Error for bad input (unknown kernel, assembly error, bad .npy).
// Guest faults are not exceptions: they come back in RunResult::traps.
RunResult run_kernel(const RunOptions &opts);
// The checks run_kernel makes before it allocates: the kernel, its inputs'
// shapes and dtypes, the config's @needs, and the run's admission to the
// host's memory (admit_run in run_limits.h: alone, refused if it does not
// fit; beside other threads' runs, it waits for room). It throws what
// run_kernel would. Only the input arrays' shapes and dtypes are read, so a
// caller that holds large tensors (npusim graph) can admit a run before it
// copies them; the grant, held through run_kernel, covers that run.
MemoryGrant admit_run(const RunOptions &opts);
// The host bytes run_kernel counts for this run (run_bytes_needed, a cube
// kernel's matrices included), whether it fits or not (npusim sweep admits
// its points with it); throws what admit_run would for bad input.
uint64_t run_bytes_estimate(const RunOptions &opts);

// What a run of kernel `m` on config `cfg` holds in host memory
// (run_bytes_needed; run_kernel refuses a run that would not fit).
RunFootprint run_footprint(const Config &cfg, const Manifest &m);

Bound analyse_bound(const RunResult &r);
// The ratios of r's counts (r.derived); run_kernel calls it last.
DerivedFigures derive_figures(const RunResult &r);
// a / b, and 0 when b is not positive: every ratio of the reports.
double ratio(double a, double b);

npu_dtype parse_dtype(const std::string &name);  // "fp16" / "fp32"
std::vector<uint64_t> parse_shape(const std::string &text);  // "1,3,5,7"
// A seed, a limit or a tile cap as text: a whole number in 0 .. 2^64 - 1,
// in decimal. whole_number_problem gives "" or what is wrong ("'-1' is not a
// whole number (0 .. 18446744073709551615)"); parse_whole throws it as
// "what: ...".
std::string whole_number_problem(const std::string &text);

// A kernel parameter's value as kernels receive it, binary32: "" or what is
// wrong with it (NaN, infinite, rounding to infinity such as 1e39, or a
// non-zero value rounding to zero such as 1e-50).
std::string parameter_problem(double v);
uint64_t parse_whole(const std::string &what, const std::string &text);
// "rule" or "measure" (RunOptions::measure_tiles); else "tiling: 'x' is not rule or measure".
bool parse_tiling(const std::string &text);
// The instruction limit per core when none is given: 1000 x (the vectors of
// every tensor + 64). Every kernel retires under 100 instructions per vector,
// so a legal run stays 10x below it, and a runaway loop stops within about a
// second of host time per million vectors.
uint64_t default_max_instructions(uint64_t vectors);

// The binary64 A B of a cube kernel's check, rows x n elements:
// dots[i n + j] the sum over k of a(i, k) b(k, j), and abs_sums[i n + j]
// the sum of |a(i, k) b(k, j)| (the accumulation bound's S), each added in
// k order from 0, as one loop per element adds them: the same bits, however
// many threads compute them.
void exact_dots(uint64_t rows, uint64_t k, uint64_t n, const std::function<double(uint64_t, uint64_t)> &a_at,
                const std::function<double(uint64_t, uint64_t)> &b_at, std::vector<double> &dots,
                std::vector<double> &abs_sums);

}  // namespace npusim
