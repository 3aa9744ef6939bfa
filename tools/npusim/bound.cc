// What a finished run's counts say: the bound (the largest of the lower
// bounds on its cycles, each proved below) and the derived figures (every
// ratio of the reports, computed once). Both read a RunResult and nothing
// else; run_kernel calls them after the run (runner.cc).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "runner.h"

namespace npusim {

// The bound is the largest of lower bounds on `cycles`, one per resource:
// each is work the resource cannot overlap with itself over its capacity,
// for work that has to be done inside the kernel's cycles. So efficiency =
// bound / cycles never exceeds 1.
//
// Compute: a core's unit is busy unit_busy cycles over its `count`
// instances, its issue slots take `instructions` W at a time, a class
// only the slots that accept it, and each of the cube's pipes (MTE1, cube,
// FIX) runs its operations one after another for pipe_busy cycles, every
// one completing inside the core's cycles (docs/timing.md T7a, T10). Cores run in parallel, so the busiest core's
// figure binds (a sum over cores / cores would assume perfect balance).
//
// Memory, the tightest of every bandwidth on the path:
// * DMA engine (per core, both memory models): a core's engine serves its
//   transfers one after another, each for ceil(bytes / dma.bytes_per_cycle)
//   cycles, and the core ends after its last transfer completes, so cycles >=
//   the busiest core's bytes / dma.bytes_per_cycle.
// * DMA window (per core, memory.model: l2): an engine sends line requests
//   in order, and request j leaves only once request j - K has completed (K
//   = dma.outstanding; M1). Every request answers no earlier than
//   l2.hit_latency after it leaves (its lookup), and a read that fills its
//   line no earlier than hit_latency + dram.latency + the line's channel time
//   (its MSHR request is at or after the lookup). So along each of the K
//   chains j, j + K, j + 2K, ... the holds add up, the longest chain is at
//   least the average, and the core ends after its last request completes:
//   cycles >= (requests x hit_latency + read fills x fill_min) / K for the
//   busiest engine. (A core's requests are its L2 accesses.)
// * L2 banks (shared, memory.model: l2): an access holds its bank for
//   bank_interval cycles from its start; one bank's bookings never overlap;
//   every access answers at start + hit_latency or later, inside the cycles.
//   So every booking ends by cycles + max(0, bank_interval - hit_latency) (the
//   tail, 0 unless the interval outlasts a hit), and the busiest bank holds at
//   least the average: cycles >= accesses x bank_interval / banks - tail. (The
//   end-of-run write-back books no banks.)
// * DRAM channels (shared, memory.model: l2): one channel's bookings never
//   overlap, and b bytes hold it ceil(b / bytes_per_cycle) cycles. Counted:
//   the requests made before the end-of-run write-back. The write-back itself
//   is not: it starts when the last core has finished, after `cycles`. The
//   kernel's own writes are posted (nothing waits for a victim's write-back),
//   so a channel may still be busy with them after `cycles`: on channel c,
//   bytes_c <= bytes_per_cycle x (cycles + its cycles booked after), so summed
//   over channels, kernel bytes - bytes_per_cycle x booked_after <= channels x
//   bytes_per_cycle x cycles. The counted bytes are that difference.
//
// Dependency: the longest register-dependency chain of any core.
namespace {

// Compute: the busiest core's units and slots.
void bound_compute(const RunResult &r, const std::vector<npu_core_stats> &cores, Bound &b)
{
    const npu_timing_config &tc = r.config.timing;
    auto consider = [&](double cycles, const char *kind, const char *name) {
        if (cycles > b.resource_cycles) {
            b.resource_cycles = cycles;
            b.resource_name = std::string(kind) + name;
        }
    };
    for (const npu_core_stats &s : cores) {
        for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
            consider(double(s.unit_busy[u]) / tc.unit[u].count, "unit ", npu_unit_name(npu_unit(u)));
        consider(double(s.instructions) / tc.issue_width, "issue width", "");
        // The cube's pipes each run one operation at a time (T7a).
        for (unsigned p = 0; p < NPU_NUM_PIPES; p++)
            consider(double(s.pipe_busy[p]), "pipe ", npu_pipe_name(npu_pipe(p)));
        for (unsigned c = 0; c < NPU_NUM_CLASSES; c++) {
            unsigned slots = 0;
            for (unsigned i = 0; i < tc.issue_width; i++)
                slots += (tc.slot_classes[i] >> c) & 1;
            if (slots)
                consider(double(s.class_issued[c]) / slots, "slots for ", npu_class_name(npu_class(c)));
        }
    }
}

// The least time a read that fills its line holds an MSHR: dram.latency
// plus the line's channel time (its first interleave piece).
double fill_min_cycles(const Config &cfg)
{
    const npu_dram_config &dc = cfg.dram;
    const uint64_t piece = std::min<uint64_t>(cfg.l2.line_bytes, dc.interleave_bytes);
    return double(dc.latency + (piece + dc.bytes_per_cycle - 1) / dc.bytes_per_cycle);
}

// The cycles a bank booking may end after the run: its interval past the hit latency.
double l2_bank_tail(const npu_l2_config &l2)
{
    return l2.bank_interval > l2.hit_latency ? double(l2.bank_interval - l2.hit_latency) : 0.0;
}

// The L2 banks' term for `accesses`: every booking ends by cycles + the tail.
double l2_bank_cycles(const npu_l2_config &l2, double accesses)
{
    return std::max(0.0, accesses * l2.bank_interval / double(l2.banks) - l2_bank_tail(l2));
}

// Memory: every bandwidth on the path, the tightest binding.
void bound_memory(const RunResult &r, const std::vector<npu_core_stats> &cores, Bound &b)
{
    MemoryBound &m = b.memory;
    for (size_t k = 0; k < cores.size(); k++) {
        const uint64_t bytes = cores[k].dma_bytes_in + cores[k].dma_bytes_out;
        if (k == 0 || bytes > m.dma_bytes) {
            m.dma_bytes = bytes;
            m.dma_core = unsigned(k);
        }
    }
    m.dma_cycles = double(m.dma_bytes) / double(r.config.timing.dma_bytes_per_cycle);
    b.memory_cycles = m.dma_cycles;
    b.memory_resource = "dma engine";
    if (!r.has_l2)
        return;
    const npu_l2_config &l2 = r.config.l2;
    const npu_dram_config &dc = r.config.dram;
    m.shared = true;
    m.l2_accesses = r.l2.accesses;
    m.l2_bank_tail = l2_bank_tail(l2);
    m.l2_bank_cycles = l2_bank_cycles(l2, double(m.l2_accesses));
    m.l2_read_fills = r.l2.read_misses - std::min(r.l2.read_misses, r.l2.mshr_merges);
    m.l2_fill_min_cycles = fill_min_cycles(r.config);
    m.l2_mshr_cycles = double(m.l2_read_fills) * m.l2_fill_min_cycles / double(l2.mshrs);
    const double window = double(r.config.timing.dma_outstanding);
    for (size_t k = 0; k < cores.size() && k < NPU_L2_MAX_CORES; k++) {
        const npu_l2_counts &c = r.l2.core[k];
        const double cycles =
            (double(c.accesses) * l2.hit_latency + double(c.read_fills) * m.l2_fill_min_cycles) / window;
        if (k == 0 || cycles > m.dma_window_cycles) {
            m.dma_window_cycles = cycles;
            m.dma_window_core = unsigned(k);
            m.dma_window_requests = c.accesses;
            m.dma_window_read_fills = c.read_fills;
        }
    }
    const DramTraffic &d = r.dram_traffic;
    const uint64_t kernel = d.kernel_read + d.kernel_written;
    m.dram_end_of_run_bytes = d.end_of_run_bytes;
    m.dram_after_end_bytes = std::min<uint64_t>(kernel, d.kernel_booked_after * dc.bytes_per_cycle);
    m.dram_bytes = kernel - m.dram_after_end_bytes;
    m.dram_cycles = double(m.dram_bytes) / (double(dc.channels) * double(dc.bytes_per_cycle));
    for (const auto &term : {std::make_pair(m.dma_window_cycles, "dma window"),
                             std::make_pair(m.l2_bank_cycles, "l2 banks"), std::make_pair(m.l2_mshr_cycles, "l2 mshrs"),
                             std::make_pair(m.dram_cycles, "dram channels")})
        if (term.first > b.memory_cycles) {  // the first of equal terms names the binding one
            b.memory_cycles = term.first;
            b.memory_resource = term.second;
        }
}

// @op matmul: the roofline (Roofline). Each term is the memory bound's
// proof applied to the least traffic any kernel must make. Every input
// element is read from GM at least once and every element of C written at
// least once, through some core's DMA engine: the busiest core moves at
// least the average, (R + W) / cores bytes, and sends at least (R + W) /
// line_bytes / cores line requests (a request covers at most one line), of
// which at least R / line_bytes / cores are reads. A line read from GM that
// was not in the L2 before the run must fill, once: R / line_bytes fills in
// all (less the warmed inputs' lines), each holding an MSHR and reading the
// DRAM. The C writes need not reach the DRAM before the end (the L2 may hold
// them), so the DRAM term counts reads only. The cube must make every one of
// the m1 k1 n1 fractal products (a convolution: of each image), count at a
// time, each cube busy `interval` per product (T7a), the busiest core at
// least the average.
void bound_roofline(const RunResult &r, Roofline &f)
{
    const MatmulShape &mm = r.matmul;
    f.on = true;
    for (const TensorDecl &t : r.manifest.tensors) {
        if (!t.is_input)
            continue;
        const uint64_t bytes = placed_bytes(r, t);
        f.read_bytes += bytes;
        if (std::find(r.warm_l2_tensors.begin(), r.warm_l2_tensors.end(), t.name) != r.warm_l2_tensors.end())
            f.warmed_bytes += bytes;
    }
    f.written_bytes = output_bytes(r);
    const double cores = double(std::max(1u, r.config.cores));
    const npu_timing_config &tc = r.config.timing;
    const double images = mm.conv.on ? double(mm.conv.images) : 1.0;  // a convolution's product is per image
    f.cube_cycles = images * double(mm.a.rows1) * double(mm.a.cols1) * double(mm.b.cols1) *
                    double(tc.cube.interval) / double(tc.cube.count) / cores;
    const double bytes = double(f.read_bytes + f.written_bytes);
    f.dma_engine_cycles = bytes / cores / double(tc.dma_bytes_per_cycle);
    f.operand_cycles = f.dma_engine_cycles;
    f.operand_resource = "dma engine";
    if (r.has_l2) {
        const npu_l2_config &l2 = r.config.l2;
        const npu_dram_config &dc = r.config.dram;
        const double line = double(l2.line_bytes);
        const double requests = bytes / line;
        const double fills = double(f.read_bytes - f.warmed_bytes) / line;
        const double fill_min = fill_min_cycles(r.config);
        f.dma_window_cycles = (requests * l2.hit_latency + fills * fill_min) / double(tc.dma_outstanding) / cores;
        f.l2_bank_cycles = l2_bank_cycles(l2, requests);
        f.l2_mshr_cycles = fills * fill_min / double(l2.mshrs);
        f.dram_cycles = double(f.read_bytes - f.warmed_bytes) / (double(dc.channels) * double(dc.bytes_per_cycle));
        for (const auto &term : {std::make_pair(f.dma_window_cycles, "dma window"),
                                 std::make_pair(f.l2_bank_cycles, "l2 banks"),
                                 std::make_pair(f.l2_mshr_cycles, "l2 mshrs"),
                                 std::make_pair(f.dram_cycles, "dram channels")})
            if (term.first > f.operand_cycles) {
                f.operand_cycles = term.first;
                f.operand_resource = term.second;
            }
    }
    f.cycles = std::max(f.cube_cycles, f.operand_cycles);
    f.binding = f.cube_cycles >= f.operand_cycles ? "cube" : "operand path";
    f.efficiency = r.stats.cycles ? f.cycles / double(r.stats.cycles) : 0.0;
}

}  // namespace

Bound analyse_bound(const RunResult &r)
{
    // Per-core stats exist for every timed run; without them r.stats is one core's.
    const std::vector<npu_core_stats> one{r.stats};
    const std::vector<npu_core_stats> &cores = r.core_stats.empty() ? one : r.core_stats;
    Bound b;
    bound_compute(r, cores, b);
    bound_memory(r, cores, b);
    for (const npu_core_stats &s : cores)
        b.dependency_cycles = std::max(b.dependency_cycles, double(s.critical_path));
    for (unsigned k = 0; k < cores.size(); k++) {
        double sum = 0;
        for (const ScheduledLoop &l : r.loops)
            sum += l.register_cycles(k);
        b.register_cycles = std::max(b.register_cycles, sum);
    }
    b.bound_cycles = b.resource_cycles;
    b.binding = "resource";
    b.binding_resource = b.resource_name;
    struct Term {
        double cycles;
        const char *binding;
        std::string resource;
    };
    for (const Term &t : {Term{b.memory_cycles, "memory", b.memory_resource},
                          Term{b.register_cycles, "registers", "registers"},
                          Term{b.dependency_cycles, "dependency", "dependency chain"}})
        if (t.cycles > b.bound_cycles) {  // the first of equal terms binds
            b.bound_cycles = t.cycles;
            b.binding = t.binding;
            b.binding_resource = t.resource;
        }
    b.efficiency = r.stats.cycles ? b.bound_cycles / double(r.stats.cycles) : 0.0;
    if (r.matmul.on && r.timed)
        bound_roofline(r, b.roofline);
    return b;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// Every ratio of the run's counts, once; docs/metrics.md lists each formula.
DerivedFigures derive_figures(const RunResult &r)
{
    DerivedFigures d;
    d.instructions_per_vector = ratio(double(r.counted_instructions), double(r.output_vectors));
    const npu_accuracy &a = r.accuracy;
    d.mean_ulp = ratio(a.sum_ulp, double(a.checked));
    d.sim_instructions_per_second = ratio(double(r.instructions), r.host_seconds);
    if (!r.timed)
        return d;
    const npu_core_stats &s = r.stats;
    const unsigned ncores = unsigned(r.core_stats.size());
    const unsigned width = r.config.timing.issue_width;
    d.core_cycles = s.cycles * ncores;
    const double core_cycles = double(d.core_cycles);
    d.ipc = ratio(double(r.instructions), core_cycles);
    d.cycles_per_element = ratio(double(s.cycles), double(npu_layout_logical_elems(&r.layout)));
    for (unsigned k = 0; k <= width; k++)
        d.issue_share.push_back(ratio(double(s.issue_histogram[k]), core_cycles));
    for (unsigned k = 0; k < width; k++)
        d.slot_busy.push_back(ratio(double(s.slot_issued[k]), core_cycles));
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
        d.unit_utilisation[u] = ratio(double(s.unit_busy[u]), core_cycles * r.config.timing.unit[u].count);
    for (unsigned i = 0; i < NPU_NUM_STALLS; i++) {
        d.stall_share[i] = ratio(double(s.stall[i]), core_cycles);
        d.stall_cycles += s.stall[i];
    }
    d.issue_cycle_share = ratio(double(s.issue_cycles), core_cycles);
    // Each core's slots over its own cycles: a core that finishes early
    // loses no slots after its end.
    for (const npu_core_stats &c : r.core_stats)
        d.issue_slots += uint64_t(width) * c.cycles;
    for (unsigned i = 0; i < NPU_NUM_STALLS; i++)
        d.slots_lost_share[i] = ratio(double(s.slots_lost[i]), double(d.issue_slots));
    d.slots_issued_share = ratio(double(s.instructions), double(d.issue_slots));
    if (r.has_l2) {
        d.l2_hit_rate = ratio(double(r.l2.hits), double(r.l2.accesses));
        for (size_t i = 0; i < r.l2_tensor_names.size() && i < NPU_L2_MAX_TENSORS; i++)
            d.l2_tensor_hit_rate.push_back(ratio(double(r.l2.tensor[i].hits), double(r.l2.tensor[i].accesses)));
    } else {
        const uint64_t bpc = r.config.timing.dma_bytes_per_cycle;
        d.dram_ideal_busy_cycles = (s.dma_bytes_in + s.dma_bytes_out + bpc - 1) / bpc;
    }
    d.sim_cycles_per_second = ratio(double(s.cycles), r.host_seconds);
    return d;
}

}  // namespace npusim
