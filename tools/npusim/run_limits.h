// Limits checked up front: a run (or a sweep) that cannot fit in host memory
// or on disk is refused before it starts, with an estimate of what it needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "npusim/tensor.h"

namespace npusim {

// What a run holds in host memory, for run_bytes_needed().
struct RunFootprint {
    unsigned tensors = 0;    // full tensors (inputs and outputs; per-channel ones are small)
    unsigned cores = 0;
    uint64_t ub_bytes = 0;   // per core
    uint64_t l2_lines = 0;   // the L2's lines (0 with memory.model: ideal)
    // Bytes the process holds already beside the run and keeps through it
    // (npusim graph: its inputs and its steps' outputs so far).
    uint64_t held = 0;
    // A cube run's matrices, in place of tensors x the layout's
    // (cube_matrix_bytes, conv_matrix_bytes), and how a matmul's message
    // names the shape ("M,K,N").
    uint64_t matrix_bytes = 0;
    std::string shape_text{};
};

// A matmul's host bytes for its matrices: A (M x K) and B (K x N) as fp16
// fractal images in GM, their row-major copies and the check's binary64
// copies (12 bytes an element, and the images' padding), C (M x N) as its
// image, its copy and the check's two binary64 figures per element (its
// exact value and magnitude sum), and the bias. Measured: 1024,20000,16
// peaks at 264.5 MB (estimate 262), 128,16,20000 at 67.6 MB (67),
// docs/reliability.md.
uint64_t cube_matrix_bytes(uint64_t gm_a, uint64_t gm_b, uint64_t gm_c, uint64_t m, uint64_t k, uint64_t n,
                           unsigned out_esize, uint64_t bias_bytes);

// A convolution's the same way: the feature map (its NC1HWC0 image and NCHW
// copy, `map_elements` of fp16), the weights (fractal image and copy), the
// check's binary64 im2col of every image (images x M x K) and weights
// (K x N), and the output (its image, its copy and two binary64 figures per
// element). Measured: 16,64,56,56 peaks at 316 MB (estimate 320), 4,64,56,56
// at 89.3 MB (89).
uint64_t conv_matrix_bytes(uint64_t gm_x, uint64_t map_elements, uint64_t gm_w, uint64_t images, uint64_t m,
                           uint64_t k, uint64_t n, uint64_t gm_y, unsigned out_esize);

// Host bytes one run touches, measured (tests/test_cli.cc holds it within
// 1.5x of the peak resident size): the process itself (binary, libraries:
// kProcessBytes; `npusim run relu --shape 1,1,1,1` peaks at 7.3 MB, and
// about 5 MB more on the SystemC engine, which loads libsystemc), per tensor its NC1HWC0 image in GM and its
// logical NCHW copy (inputs generated or read, outputs unpacked; the
// reference is computed per element, not stored), per core its UB and core
// state, per L2 line its tag and the miss classifier's shadow entries; and
// what the process holds already (RunFootprint::held).
// Saturates at UINT64_MAX instead of wrapping.
constexpr uint64_t kProcessBytes = 8u << 20;
constexpr uint64_t kCoreStateBytes = 16u << 10;
constexpr uint64_t kL2BytesPerLine = 80;
uint64_t run_bytes_needed(const npu_layout &layout, const RunFootprint &run);

// The host bytes a run touches beyond the process's own, for
// prefault_heap: run_bytes_needed less kProcessBytes and RunFootprint::held,
// and kRunTableBytes more for the tables whose size does not follow the
// tensors (the check's reference per fp16 value, 640 KB; the stall rows of
// each instruction; the timing models), which run_bytes_needed leaves in
// kProcessBytes. gelu_tanh fp16 1x64x56x56: 3.2 MB estimated, 3.7 MB
// touched; with these 2 MiB more, 412 page faults in the run were 303.
constexpr uint64_t kRunTableBytes = 2u << 20;
uint64_t run_bytes_touched(const npu_layout &layout, const RunFootprint &run);

// Prepares the heap of a process that makes one run and exits (npusim
// run) for the `bytes` the run will touch: malloc keeps what it is given
// back and serves blocks up to 256 MiB from its heap (mallopt), and the
// run's bytes are mapped at once, in 2 MiB pages where the kernel has them
// (MADV_HUGEPAGE) and with one call (MADV_POPULATE_WRITE), so that the run
// takes them from there. A page faulted in one at a time costs 5 to 12 us
// on a virtual machine (docs/performance.md, "Page faults"), a run like
// gelu_tanh fp16 1x64x56x56 touches about 900 of them, and its engine takes
// about 7 ms. It changes how malloc keeps memory for the whole process, so
// a process that runs many (the C API, Python, compare, sweep) does not
// call it; nor does anything else change: without glibc or these madvise
// flags it does what it can, and no result depends on it. At most 256 MiB
// are prefaulted; the rest of a larger run is faulted in as it is touched.
// Each call maps its bytes: a run's inner runs (its tiles measured, one
// after another) find them mapped already, in the blocks the run before
// them freed, and npusim run also calls it before it loads SystemC, whose
// static initialiser allocates and zeroes 3 MiB (kSystemcLoadBytes).
constexpr uint64_t kSystemcLoadBytes = 3u << 20;
void prefault_heap(uint64_t bytes);

// Memory this process may still allocate: MemAvailable from /proc/meminfo
// (sysinfo's free + buffer RAM without it), capped by RLIMIT_AS and
// RLIMIT_DATA when they are set. With `held`, the memory for a need that
// counts `held` bytes the process holds already: they are in use, so not in
// MemAvailable (it is raised by them), while a limit counts them (it is not).
uint64_t available_memory_bytes(uint64_t held = 0);

// MemAvailable alone (no process's limits): what processes side by side
// share (npusim sweep's points).
uint64_t host_memory_available();

// Throws npusim::Error ("the run needs about 7.6 TB of memory (...) but only
// 12.3 GB are available") when run_bytes_needed() exceeds `available`
// (default: available_memory_bytes(run.held)).
void check_run_fits(const npu_layout &layout, const RunFootprint &run);
void check_run_fits(const npu_layout &layout, const RunFootprint &run, uint64_t available);

// The room runs side by side share (threads or processes): what was
// available when the first of them started (`available` to take() when
// empty), less what they reserved, and never more than what is available
// now plus what they reserved (what they have not allocated yet is still in
// what is available now). Alone, a run fits what is available.
class MemoryRoom {
public:
    bool empty() const { return runs_ == 0; }
    bool fits(uint64_t bytes, uint64_t available) const;
    void take(uint64_t bytes, uint64_t available);
    void give(uint64_t bytes);

private:
    uint64_t base_ = 0, reserved_ = 0;
    unsigned runs_ = 0;
};

// Runs in threads of one process (`npusim compare -j`, `npusim graph -j`,
// the C API's and Python's threads) share its memory, and two runs that
// each fit alone may not fit together: checked at the same moment, both
// passed and one ran out of memory half-way, so `-j 2` failed where `-j 1`
// passed. A run is admitted by admit_run: while other runs hold grants it
// waits until its new bytes (run_bytes_needed less RunFootprint::held) fit
// the room they leave (MemoryRoom); alone, it is checked as check_run_fits
// checks it and refused if it does not fit. How many run at once therefore
// decides only when a run starts, never whether it fits. A thread that
// holds a grant is not admitted again (a run's inner runs: tiles measured;
// a graph's step, admitted before its inputs are copied): its grant covers
// them, and admit_run gives an empty grant at once. npusim sweep admits its
// point processes the same way (with host_memory_available: each process
// has its own limits).
class MemoryGrant {
public:
    MemoryGrant() = default;
    MemoryGrant(MemoryGrant &&other) noexcept;
    MemoryGrant &operator=(MemoryGrant &&other) noexcept;
    MemoryGrant(const MemoryGrant &) = delete;
    MemoryGrant &operator=(const MemoryGrant &) = delete;
    ~MemoryGrant();

private:
    friend MemoryGrant admit_run(const npu_layout &layout, const RunFootprint &run,
                                 uint64_t (*available)(uint64_t held));
    explicit MemoryGrant(uint64_t bytes);
    void release();
    uint64_t bytes_ = 0;
    bool held_ = false;
};
// `available` is available_memory_bytes but for tests.
MemoryGrant admit_run(const npu_layout &layout, const RunFootprint &run,
                      uint64_t (*available)(uint64_t held) = available_memory_bytes);
// Whether this thread holds a grant (its runs are admitted already).
bool memory_granted_here();

// Free bytes on the file system holding `dir` (or its nearest existing
// parent), for unprivileged users; UINT64_MAX when it cannot be told.
uint64_t available_disk_bytes(const std::string &dir);
// Throws npusim::Error when `points` outputs of about `bytes_per_point` each
// do not fit in available_disk_bytes(dir) (or `available`).
void check_sweep_fits(const std::string &dir, uint64_t points, uint64_t bytes_per_point);
void check_sweep_fits(const std::string &dir, uint64_t points, uint64_t bytes_per_point, uint64_t available);

// "12.3 GB" (decimal units, 3 significant digits), for messages.
std::string human_bytes(uint64_t bytes);

}  // namespace npusim
