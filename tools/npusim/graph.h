// npusim graph: chains of operators from a YAML spec (docs/fusion.md).
//
// A spec names the chain's input tensors (generated) and one or more
// variants, each a list of steps: a kernel, which tensor feeds each of its
// inputs, and the tensor its output becomes. Every step is one kernel run
// on the config, checked against its reference as `npusim run` checks it;
// a variant's figures are the sums of its steps'. Tensors between steps go
// through the DRAM and the L2: a step writes its output back to the DRAM
// (the end-of-run write-back), and the next step finds in the L2 what the
// L2 can hold of a tensor the step before wrote (--warm-l2 of that run).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace npusim {

struct GraphTensor {
    std::string name;
    // 2-D: an fp16 matrix; 1-D: an fp32 vector (a bias); 4-D: an fp16 NCHW
    // tensor (a feature map, or a convolution's weights (cout, cin, k, k))
    std::vector<uint64_t> shape;
    double lo = -1.0, hi = 1.0;   // generated uniformly in [lo, hi)
};

struct GraphStep {
    std::string kernel;       // as the spec gives it: a name, or a .s file (beside the spec)
    std::string kernel_name;  // its manifest's name, which its trace file is named after
    std::vector<std::pair<std::string, std::string>> inputs;  // the kernel's input name -> tensor
    std::string output;                                       // the tensor its output becomes
    std::vector<std::pair<std::string, double>> params;       // the kernel's parameters given (a convolution's stride, pad)
    std::string where;  // "file:line:col: variants.NAME[i]" for messages
};

// A variant's name names its trace files: 1 to kMaxVariantName of the
// POSIX portable file name characters (A-Z a-z 0-9 . _ -), not starting with
// '.' (hidden, `.`, `..`) or '-' (an option); never a slash or an empty name.
constexpr size_t kMaxVariantName = 128;

struct GraphVariant {
    std::string name;
    std::vector<GraphStep> steps;
    std::string where;  // "file:line:col: variants.NAME" for messages
};

struct GraphSpec {
    std::string path, name, description;
    std::string dtype = "fp16";  // of the runs: C's dtype of a matmul, the tensor's of an activation
    uint64_t samples = 1;        // samples one pass of the chain computes (samples/s)
    uint64_t seed = 1;
    std::string config;          // a config file, relative to the spec ("" : the default)
    std::vector<GraphTensor> tensors;
    std::vector<GraphVariant> variants;
};

// Parses and checks a spec. Throws npusim::Error `file:line:col: key path: what`.
GraphSpec load_graph(const std::string &path);
GraphSpec load_graph_text(const std::string &text, const std::string &path);

struct GraphStepResult {
    std::string kernel, output;
    std::vector<std::pair<std::string, std::string>> inputs;
    uint64_t cycles = 0;
    uint64_t dram_bytes = 0;        // read and written, the end-of-run write-back included
    uint64_t l2_accesses = 0, l2_hits = 0;
    uint64_t cube_busy = 0;         // the busiest core's cube pipe
    double vector_busy = 0;         // the busiest core's busiest vector unit (valu, sfu) / its count
    double dma_busy = 0;            // the busiest core's DMA bytes / dma.bytes_per_cycle
    bool passed = false;
    std::string failure;            // why not, in one line
    std::string trace;              // its Perfetto trace, when asked for
};

struct GraphVariantResult {
    std::string name;
    std::vector<GraphStepResult> steps;
    uint64_t cycles = 0, dram_bytes = 0, l2_accesses = 0, l2_hits = 0;
    uint64_t cube_busy = 0;
    double vector_busy = 0, dma_busy = 0;
    double overlap_min = 0;          // max(0, cube + vector + dma busy - cycles), summed over steps
    double samples_per_second = 0;   // samples x core.freq_mhz x 1e6 / cycles
    bool passed = true;
    std::string trace;               // its steps end to end in one Perfetto trace, when asked for
};

struct GraphResult {
    GraphSpec spec;
    Config config;
    std::vector<GraphVariantResult> variants;
    bool passed() const;
};

// Runs the variants (those named in `only`, or all), `jobs` at once (0: one
// per core). With a trace_dir (an existing folder), each step writes its
// Perfetto trace there as VARIANT.I.KERNEL.json (I its place in the
// variant, from 0; KERNEL its manifest's name), and each variant its steps
// end to end as VARIANT.json (PerfettoTrace::begin_step / end_step); names
// two variants would share are refused before any run (graph_trace_files).
GraphResult run_graph(const GraphSpec &spec, const Config &config, const std::vector<std::string> &only,
                      unsigned jobs, const std::string &trace_dir = "");

// The files run_graph writes into trace_dir for these variants. Throws
// npusim::Error ("file:line:col: variants.NAME: the trace file of its ...")
// when two of them would have one name.
std::vector<std::string> graph_trace_files(const GraphSpec &spec, const std::vector<std::string> &only,
                                           const std::string &trace_dir);

nlohmann::json graph_json(const GraphResult &g);
std::string graph_text(const GraphResult &g);

}  // namespace npusim
