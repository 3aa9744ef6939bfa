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
    std::string dtype = "fp32";
    std::vector<uint64_t> shape = {1, 16, 8, 8};  // N, C, H, W
    Config config = default_config();
    uint64_t seed = 1;
    std::map<std::string, std::string> inputs;   // tensor name -> .npy path
    std::map<std::string, std::string> outputs;  // tensor name -> .npy path
    std::map<std::string, double> params;        // overrides of manifest defaults
    uint64_t max_cycles = 0;
    uint64_t max_instructions = 0;
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
    // own reference and bound.
    std::string against;
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

// The hardware limit of a run: the largest of its bounds, and how close the
// run came to it (efficiency = bound_cycles / cycles).
struct Bound {
    double resource_cycles = 0;   // max over units and slots of work / capacity
    std::string resource_name;    // the binding resource, e.g. "unit valu"
    double memory_cycles = 0;     // DMA bytes / DMA bandwidth (ideal), DRAM bytes / DRAM bandwidth (l2)
    double dependency_cycles = 0; // longest register-dependency chain
    double bound_cycles = 0;
    std::string binding;          // "resource", "memory" or "dependency"
    double efficiency = 0;
};

struct RunResult {
    Manifest manifest;
    npu_dtype dtype = NPU_F32;
    npu_layout layout{};
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
    // --against: the same outputs measured against another reference (no bound).
    std::string against;
    npu_accuracy against_accuracy{};
    double against_worst_x = 0;  // first input of the element with the largest absolute error
    npu_bound bound{};
    std::vector<FailedElement> failed;  // the first few elements outside the bound
    uint64_t padding_nonzero = 0;
    bool checked = false;       // accuracy computed (the run completed)
    std::vector<TrapReport> traps;
    bool timed = false;
    npu_core_stats stats{};                 // all cores: sums, with cycles = the slowest core
    std::vector<npu_core_stats> core_stats; // per core
    std::vector<PcStalls> hot_pcs;          // static instructions by stall cycles, worst first
    Bound bound_analysis;
    double host_seconds = 0;
    std::map<std::string, NpyArray> tensors;  // every tensor, NCHW, after the run

    // memory.model: l2 (has_l2): the memory system's counters after the run.
    bool has_l2 = false;
    npu_l2_stats l2{};
    npu_dram_stats dram{};
    uint64_t dram_busy_cycles = 0;           // summed over channels
    std::vector<std::string> l2_tensor_names; // index = the L2's tensor id
    uint64_t mem_trace_lines = 0;

    bool passed() const { return traps.empty() && checked && accuracy.failures == 0 && padding_nonzero == 0; }
};

// Throws npusim::Error for bad input (unknown kernel, assembly error, bad .npy).
// Guest faults are not exceptions: they come back in RunResult::traps.
RunResult run_kernel(const RunOptions &opts);

Bound analyse_bound(const RunResult &r);

npu_dtype parse_dtype(const std::string &name);  // "fp16" / "fp32"
std::vector<uint64_t> parse_shape(const std::string &text);  // "1,3,5,7"

}  // namespace npusim
