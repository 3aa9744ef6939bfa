// Text and JSON reports of one run. The text report reads like llvm-mca's:
// summary, slot and unit pressure, stalls, the stalling lines, bound,
// memory (L2 and DRAM), accuracy.
#include "report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace npusim {
namespace {

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

// JSON has no infinity: an infinite error (an element that should be finite
// came out inf or NaN) is null, never a number that would sort as small.
nlohmann::json json_number(double v)
{
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

const char *dtype_text(const RunResult &r) { return r.dtype == NPU_F16 ? "fp16" : "fp32"; }

// The cube's pipes (npu_pipe_name) are reported only by runs that used them.
bool uses_cube(const npu_core_stats &s)
{
    for (unsigned p = 0; p < NPU_NUM_PIPES; p++)
        if (s.pipe_ops[p])
            return true;
    return false;
}

// Entry k of a derived list; 0 past its end (a result built by hand).
double at(const std::vector<double> &v, size_t k) { return k < v.size() ? v[k] : 0.0; }

unsigned unit_count(const RunResult &r, unsigned u)
{
    return r.config.timing.unit[u].count * unsigned(r.core_stats.size());
}

// The arithmetic behind one term of the memory bound (analyse_bound).
std::string memory_term_text(const RunResult &r, const std::string &term)
{
    const MemoryBound &m = r.bound_analysis.memory;
    if (term == "l2 banks") {
        std::string s = fmt("%" PRIu64 " L2 accesses x %u cycle%s over %u bank%s", m.l2_accesses,
                            r.config.l2.bank_interval, r.config.l2.bank_interval == 1 ? "" : "s", r.config.l2.banks,
                            r.config.l2.banks == 1 ? "" : "s");
        if (m.l2_bank_tail > 0)
            s += fmt(", less the %.0f cycles a bank stays busy after an access answers", m.l2_bank_tail);
        return s;
    }
    if (term == "l2 mshrs")
        return fmt("%" PRIu64 " read fills x %.0f cycles at least (dram.latency + the line's channel time) "
                   "over %u MSHR%s", m.l2_read_fills, m.l2_fill_min_cycles, r.config.l2.mshrs,
                   r.config.l2.mshrs == 1 ? "" : "s");
    if (term == "dma window") {
        std::string s;
        if (r.core_stats.size() > 1)
            s = fmt("core %u, the busiest of %zu: ", m.dma_window_core, r.core_stats.size());
        s += fmt("%" PRIu64 " line requests x %u cycle%s", m.dma_window_requests, r.config.l2.hit_latency,
                 r.config.l2.hit_latency == 1 ? "" : "s");
        if (m.dma_window_read_fills)
            s += fmt(" + %" PRIu64 " read fills x %.0f more", m.dma_window_read_fills, m.l2_fill_min_cycles);
        return s + fmt(", at most %u in flight", r.config.timing.dma_outstanding);
    }
    if (term == "dram channels") {
        std::string s = fmt("%" PRIu64 " DRAM bytes through %u channel%s at %u bytes/cycle", m.dram_bytes,
                            r.config.dram.channels, r.config.dram.channels == 1 ? "" : "s",
                            r.config.dram.bytes_per_cycle);
        if (m.dram_after_end_bytes)
            return s + fmt(": the kernel's, less %" PRIu64 " queued past its end; not the end-of-run write-back",
                           m.dram_after_end_bytes);
        return s + ": the kernel's, not the end-of-run write-back";
    }
    const unsigned ncores = unsigned(r.core_stats.size());
    if (ncores > 1)
        return fmt("%" PRIu64 " bytes through core %u's DMA engine at %u bytes/cycle, the busiest of %u", m.dma_bytes,
                   m.dma_core, r.config.timing.dma_bytes_per_cycle, ncores);
    return fmt("%" PRIu64 " bytes through the core's DMA engine at %u bytes/cycle", m.dma_bytes,
               r.config.timing.dma_bytes_per_cycle);
}

void text_timing(std::ostringstream &os, const RunResult &r)
{
    const npu_core_stats &s = r.stats;
    const DerivedFigures &d = r.derived;
    const unsigned ncores = unsigned(r.core_stats.size());
    const unsigned width = r.config.timing.issue_width;

    os << "\nIssue slots (instructions issued per cycle" << (ncores > 1 ? ", all cores" : "") << "):\n";
    for (unsigned k = 0; k <= width; k++)
        os << fmt("  %u: %12" PRIu64 "  (%5.1f%%)\n", k, s.issue_histogram[k], 100.0 * at(d.issue_share, k));
    os << "\nSlot pressure:\n";
    for (unsigned k = 0; k < width; k++)
        os << fmt("  slot %u  %-26s %12" PRIu64 " issued  %5.1f%% busy\n", k,
                  class_set_text(r.config.timing.slot_classes[k]).c_str(), s.slot_issued[k], 100.0 * at(d.slot_busy, k));
    os << "\nUnit pressure:\n";
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
        os << fmt("  %-7s x%-2u %12" PRIu64 " issued %12" PRIu64 " busy cycles  %5.1f%% utilised\n",
                  npu_unit_name(npu_unit(u)), unit_count(r, u), s.unit_issued[u], s.unit_busy[u],
                  100.0 * d.unit_utilisation[u]);

    if (uses_cube(s)) {
        os << "\nCube pipes (docs/cube.md; each runs its operations in order):\n";
        for (unsigned p = 0; p < NPU_NUM_PIPES; p++)
            os << fmt("  %-7s %12" PRIu64 " operations %12" PRIu64 " busy cycles  %5.1f%% utilised  %s\n", npu_pipe_name(npu_pipe(p)),
                      s.pipe_ops[p], s.pipe_busy[p], 100.0 * ratio(double(s.pipe_busy[p]), double(d.core_cycles)),
                      p == NPU_PIPE_CUBE ? fmt("%" PRIu64 " fractal products", s.cube_fractals).c_str()
                                         : fmt("%" PRIu64 " bytes", s.pipe_bytes[p]).c_str());
    }

    os << "\nStalls (cycles with no issue, by the reason that held the oldest instruction):\n";
    for (unsigned i = 0; i < NPU_NUM_STALLS; i++) {
        os << fmt("  %-10s %12" PRIu64 "  (%5.1f%%)", npu_stall_name(npu_stall(i)), s.stall[i], 100.0 * d.stall_share[i]);
        if (i == NPU_STALL_RAW && s.stall[i]) {
            os << "  on";
            for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
                if (s.raw_by_unit[u])
                    os << fmt(" %s %" PRIu64, npu_unit_name(npu_unit(u)), s.raw_by_unit[u]);
        }
        os << "\n";
    }
    os << fmt("  %-10s %12" PRIu64 "  (%5.1f%%)\n", "issue", s.issue_cycles, 100.0 * d.issue_cycle_share);

    // Top-down: every core's W x cycles slots are issued or lost to a reason.
    os << fmt("\nIssue slots lost (%u x cycles = %" PRIu64 " slots: issued + lost, by what kept the next "
              "instruction out):\n", width, d.issue_slots);
    for (unsigned i = 0; i < NPU_NUM_STALLS; i++)
        if (s.slots_lost[i] || i == NPU_STALL_SLOT)
            os << fmt("  %-10s %12" PRIu64 "  (%5.1f%%)\n", npu_stall_name(npu_stall(i)), s.slots_lost[i],
                      100.0 * d.slots_lost_share[i]);
    os << fmt("  %-10s %12" PRIu64 "  (%5.1f%%)\n", "issued", s.instructions, 100.0 * d.slots_issued_share);

    if (!r.hot_pcs.empty()) {
        os << "\nStalling instructions (most stall cycles first):\n";
        os << "  cycles   share  reason      pc     instruction\n";
        for (size_t i = 0; i < r.hot_pcs.size() && i < 8; i++) {
            const PcStalls &p = r.hot_pcs[i];
            unsigned worst = 0;
            for (unsigned k = 1; k < NPU_NUM_STALLS; k++)
                if (p.by_reason[k] > p.by_reason[worst])
                    worst = k;
            os << fmt("  %-8" PRIu64 " %5.1f%%  %-10s  %-5" PRIu64 "  %-34s %s\n", p.total,
                      100.0 * ratio(double(p.total), double(d.stall_cycles)), npu_stall_name(npu_stall(worst)), p.pc,
                      p.disasm.c_str(), p.srcloc.c_str());
        }
    }

    if (!r.loops.empty())
        os << "\nScheduled loops (.pipeline; `npusim asm --schedule-table` prints the schedules):\n"
           << indent(format_schedules(r.loops, false), "  ");
    os << "\nTiles:\n  " << format_tiling(r.tile) << "\n";

    const Bound &b = r.bound_analysis;
    os << "\nBound:\n";
    os << fmt("  Resource:                  %12.0f cycles (%s)\n", b.resource_cycles, b.resource_name.c_str());
    os << fmt("  Memory:                    %12.0f cycles (%s)\n", b.memory_cycles,
              memory_term_text(r, b.memory_resource).c_str());
    if (b.memory.shared) {  // the other bandwidths on the path, under the binding one
        const struct {
            const char *term, *label;
            double cycles;
        } terms[] = {{"dma engine", "DMA engine:", b.memory.dma_cycles},
                     {"dma window", "DMA window:", b.memory.dma_window_cycles},
                     {"l2 banks", "L2 banks:", b.memory.l2_bank_cycles},
                     {"l2 mshrs", "L2 MSHRs:", b.memory.l2_mshr_cycles},
                     {"dram channels", "DRAM channels:", b.memory.dram_cycles}};
        for (const auto &t : terms)
            if (t.term != b.memory_resource)
                os << fmt("    %-25s%12.0f cycles (%s)\n", t.label, t.cycles, memory_term_text(r, t.term).c_str());
    }
    os << fmt("  Registers:                 %12.0f cycles (values in flight / registers, Huff's MinAvg)\n",
              b.register_cycles);
    for (const ScheduledLoop &l : r.loops) {
        uint64_t n = 0;
        for (uint64_t k : l.iterations_per_core)
            n = std::max(n, k);
        if (n)
            os << fmt("    %s: %" PRIu64 " iterations x %lu lifetime cycles / %u vector registers (%lu / %u predicate)\n",
                      l.where.c_str(), n, l.info.lifetime_sum_v, l.info.regs_v, l.info.lifetime_sum_p, l.info.regs_p);
    }
    os << fmt("  Dependency:                %12.0f cycles (longest register chain)\n", b.dependency_cycles);
    os << fmt("  Bound:                     %12.0f cycles, %s-bound (%s)\n", b.bound_cycles, b.binding.c_str(),
              b.binding_resource.c_str());
    os << fmt("  Efficiency:                %12.3f (bound / cycles)\n", b.efficiency);
    if (b.roofline.on) {  // @op matmul: the machine's limit for this product (docs/cube.md)
        const Roofline &f = b.roofline;
        os << "\nRoofline (the cube's peak against the operand path carrying each input once and C once):\n";
        const std::string images = r.matmul.conv.on ? fmt("%" PRIu64 " x ", r.matmul.conv.images) : "";
        os << fmt("  Cube:                      %12.0f cycles (%s%" PRIu64 " x %" PRIu64 " x %" PRIu64
                  " fractal products)\n",
                  f.cube_cycles, images.c_str(), r.matmul.a.rows1, r.matmul.a.cols1, r.matmul.b.cols1);
        os << fmt("  Operand path:              %12.0f cycles (%s; %" PRIu64 " bytes read, %" PRIu64 " written)\n",
                  f.operand_cycles, f.operand_resource.c_str(), f.read_bytes, f.written_bytes);
        os << fmt("  Roofline:                  %12.0f cycles, %s-bound\n", f.cycles, f.binding.c_str());
        os << fmt("  Efficiency:                %12.3f (roofline / cycles)\n", f.efficiency);
    }
}

void text_memory(std::ostringstream &os, const RunResult &r)
{
    const npu_l2_stats &l2 = r.l2;
    const npu_dram_stats &d = r.dram;
    os << "\nMemory (shared L2 and DRAM, memory.model: l2):\n";
    os << fmt("  L2 accesses:               %12" PRIu64 "  (%" PRIu64 " reads, %" PRIu64 " writes)\n", l2.accesses,
              l2.reads, l2.writes);
    os << fmt("  L2 hit rate:               %12.4f  (%" PRIu64 " hits, %" PRIu64 " misses)\n",
              r.derived.l2_hit_rate, l2.hits, l2.misses);
    os << fmt("  L2 misses by kind:         compulsory %" PRIu64 ", capacity %" PRIu64 ", conflict %" PRIu64
              ", merged %" PRIu64 "\n",
              l2.compulsory, l2.capacity, l2.conflict, l2.mshr_merges);
    os << fmt("  L2 evictions:              %12" PRIu64 "  (%" PRIu64 " written back)\n", l2.evictions,
              l2.writebacks - l2.clean_writebacks);
    // After the last core: not in the kernel's cycles (docs/timing.md).
    os << fmt("  End-of-run write-back:     %12" PRIu64 "  dirty lines (%" PRIu64 " bytes), drained in %" PRIu64
              " cycles after the last core\n",
              l2.clean_writebacks, r.dram_traffic.end_of_run_bytes, l2.clean_cycles);
    for (size_t i = 0; i < r.l2_tensor_names.size() && i < NPU_L2_MAX_TENSORS; i++) {
        const npu_l2_counts &c = l2.tensor[i];
        os << fmt("  tensor %-18s %12" PRIu64 " accesses, %" PRIu64 " hits, %" PRIu64 " misses  (hit rate %.4f)\n",
                  r.l2_tensor_names[i].c_str(), c.accesses, c.hits, c.misses, at(r.derived.l2_tensor_hit_rate, i));
    }
    const uint64_t bytes = d.bytes_read + d.bytes_written;
    os << fmt("  DRAM bytes:                %12" PRIu64 "  (%" PRIu64 " read, %" PRIu64 " written)\n", bytes,
              d.bytes_read, d.bytes_written);
    const DramTraffic &t = r.dram_traffic;
    std::string span = fmt("%" PRIu64 " cycles", t.kernel_span);
    if (t.kernel_span > r.stats.cycles)
        span += fmt(" (its channels busy %" PRIu64 " cycles past the last core)", t.kernel_span - r.stats.cycles);
    os << fmt("  DRAM bandwidth, kernel:    %12.2f bytes/cycle of %u peak (%u channel%s x %u): %" PRIu64
              " bytes over %s\n",
              t.kernel_achieved, t.peak_bytes_per_cycle, r.config.dram.channels,
              r.config.dram.channels == 1 ? "" : "s", r.config.dram.bytes_per_cycle, t.kernel_read + t.kernel_written,
              span.c_str());
    os << fmt("  DRAM bandwidth, end of run:%12.2f bytes/cycle: %" PRIu64
              " bytes written back over %" PRIu64 " cycles after the last core\n",
              t.end_of_run_achieved, t.end_of_run_bytes, t.end_of_run_span);
}

}  // namespace

nlohmann::json l2_json(const npu_l2_stats &l2, const std::vector<std::string> &tensor_names, unsigned cores)
{
    using nlohmann::json;
    json j = {{"accesses", l2.accesses},
              {"hits", l2.hits},
              {"misses", l2.misses},
              {"hit_rate", ratio(double(l2.hits), double(l2.accesses))},
              {"evictions", l2.evictions},
              {"writebacks", l2.writebacks},
              {"end_of_run_writebacks", l2.clean_writebacks},
              {"compulsory", l2.compulsory},
              {"capacity", l2.capacity},
              {"conflict", l2.conflict},
              {"mshr_merges", l2.mshr_merges},
              {"reads", l2.reads},
              {"writes", l2.writes},
              {"fills", l2.fills}};
    json per_core = json::array();
    for (unsigned k = 0; k < cores && k < NPU_L2_MAX_CORES; k++)
        per_core.push_back({{"accesses", l2.core[k].accesses},
                            {"hits", l2.core[k].hits},
                            {"misses", l2.core[k].misses},
                            {"read_fills", l2.core[k].read_fills}});
    j["per_core"] = per_core;
    json per_tensor = json::object();
    for (size_t i = 0; i < tensor_names.size() && i < NPU_L2_MAX_TENSORS; i++)
        per_tensor[tensor_names[i]] = {
            {"accesses", l2.tensor[i].accesses},
            {"hits", l2.tensor[i].hits},
            {"misses", l2.tensor[i].misses},
            {"read_fills", l2.tensor[i].read_fills}};
    j["per_tensor"] = per_tensor;
    return j;
}

nlohmann::json l2_json(const RunResult &r) { return l2_json(r.l2, r.l2_tensor_names, unsigned(r.core_stats.size())); }

double achieved_bytes_per_cycle(uint64_t bytes, uint64_t cycles, uint64_t busy_end)
{
    return ratio(double(bytes), double(std::max(cycles, busy_end)));
}

nlohmann::json dram_json(const npu_dram_stats &d, const npu_dram_config &cfg, uint64_t busy_cycles, double achieved)
{
    return {{"model", "ddr"},
            {"bytes_read", d.bytes_read},
            {"bytes_written", d.bytes_written},
            {"busy_cycles", busy_cycles},
            {"reads", d.reads},
            {"writes", d.writes},
            {"achieved_bytes_per_cycle", achieved},
            {"peak_bytes_per_cycle", cfg.channels * cfg.bytes_per_cycle}};
}

namespace {

// The inputs that decided an element, by name: an elementwise kernel's
// inputs (prelu's alpha too), or a cube kernel's exact product.
std::vector<std::pair<std::string, double>> named_inputs(const RunResult &r, const double (&inputs)[NPU_REF_MAX_INPUTS])
{
    if (r.matmul.on)
        return {{"exact", inputs[0]}};
    const size_t n = std::min<size_t>(r.manifest.num_inputs(), NPU_REF_MAX_INPUTS);
    std::vector<std::pair<std::string, double>> out;
    for (size_t k = 0; k < std::max<size_t>(n, 1); k++)
        out.emplace_back(n ? r.manifest.tensors[k].name : "x", inputs[k]);
    return out;
}

std::string inputs_text(const RunResult &r, const double (&inputs)[NPU_REF_MAX_INPUTS])
{
    if (r.matmul.on)
        return fmt("exact %s %.9g", r.matmul.conv.on ? "convolution" : "A B", inputs[0]);
    std::string in;
    for (const auto &[name, v] : named_inputs(r, inputs))
        in += fmt("%s%s=%.9g", in.empty() ? "" : ", ", name.c_str(), v);
    return in;
}

// The bound analysis with every memory term and its operands.
nlohmann::json bound_json(const RunResult &r)
{
    using nlohmann::json;
    const Bound &b = r.bound_analysis;
    const MemoryBound &m = b.memory;
    json memory = {{"dma_engine",
                    {{"cycles", m.dma_cycles},
                     {"bytes", m.dma_bytes},
                     {"bytes_per_cycle", r.config.timing.dma_bytes_per_cycle},
                     {"core", m.dma_core}}}};
    if (m.shared) {
        memory["dma_window"] = {{"cycles", m.dma_window_cycles},
                                {"core", m.dma_window_core},
                                {"line_requests", m.dma_window_requests},
                                {"read_fills", m.dma_window_read_fills},
                                {"hit_latency", r.config.l2.hit_latency},
                                {"fill_min_cycles", m.l2_fill_min_cycles},
                                {"outstanding", r.config.timing.dma_outstanding}};
        memory["l2_banks"] = {{"cycles", m.l2_bank_cycles},
                              {"accesses", m.l2_accesses},
                              {"bank_interval", r.config.l2.bank_interval},
                              {"banks", r.config.l2.banks},
                              {"tail_cycles", m.l2_bank_tail}};
        memory["l2_mshrs"] = {{"cycles", m.l2_mshr_cycles},
                              {"read_fills", m.l2_read_fills},
                              {"fill_min_cycles", m.l2_fill_min_cycles},
                              {"mshrs", r.config.l2.mshrs}};
        memory["dram_channels"] = {{"cycles", m.dram_cycles},
                                   {"bytes", m.dram_bytes},
                                   {"channels", r.config.dram.channels},
                                   {"bytes_per_cycle", r.config.dram.bytes_per_cycle},
                                   {"end_of_run_counted", false},
                                   {"end_of_run_bytes_not_counted", m.dram_end_of_run_bytes},
                                   {"queued_after_end_bytes_not_counted", m.dram_after_end_bytes}};
    }
    json out = {{"compute_cycles", b.resource_cycles},
            {"resource", b.resource_name},
            {"memory_cycles", b.memory_cycles},
            {"memory_resource", b.memory_resource},
            {"memory", memory},
            {"register_cycles", b.register_cycles},
            {"dependency_cycles", b.dependency_cycles},
            {"bound_cycles", b.bound_cycles},
            {"binding", b.binding},
            {"binding_resource", b.binding_resource},
            {"efficiency", b.efficiency}};
    if (b.roofline.on) {
        const Roofline &f = b.roofline;
        out["roofline"] = {{"cube_cycles", f.cube_cycles},
                           {"operand_cycles", f.operand_cycles},
                           {"operand_resource", f.operand_resource},
                           {"operand",
                            {{"read_bytes", f.read_bytes},
                             {"written_bytes", f.written_bytes},
                             {"warmed_bytes", f.warmed_bytes},
                             {"dma_engine_cycles", f.dma_engine_cycles},
                             {"dma_window_cycles", f.dma_window_cycles},
                             {"l2_bank_cycles", f.l2_bank_cycles},
                             {"l2_mshr_cycles", f.l2_mshr_cycles},
                             {"dram_cycles", f.dram_cycles}}},
                           {"cycles", f.cycles},
                           {"binding", f.binding},
                           {"efficiency", f.efficiency}};
    }
    return out;
}

}  // namespace

std::string trap_text(const TrapReport &t)
{
    std::string s = fmt("trap: core %u: %s at pc %" PRIu64 " (%s)", t.core, npu_trap_name(t.trap.kind), t.trap.pc,
                        t.disasm.c_str());
    if (!t.srcloc.empty())
        s += " [" + t.srcloc + "]";
    if (t.trap.addr)
        s += fmt(", address 0x%" PRIx64, t.trap.addr);
    if (t.timed)
        s += fmt(", core stopped at cycle %" PRIu64, t.cycle);
    s += fmt(", after %" PRIu64 " instructions", t.retired);
    s += std::string(": ") + t.trap.message;
    return s;
}

nlohmann::json report_json(const RunResult &r)
{
    using nlohmann::json;
    json j;
    const uint64_t elements = npu_layout_logical_elems(&r.layout);
    j["kernel"] = r.manifest.name;
    j["seed"] = r.seed;
    j["dtype"] = dtype_text(r);
    if (r.matmul.conv.on) {  // the shape as given: x's; the geometry is in "params"; y's layout below
        const ConvShape &cv = r.matmul.conv;
        const MatmulShape &mm = r.matmul;
        j["shape"] = {cv.images, cv.cin, cv.h, cv.w};
        j["conv2d"] = {{"images", cv.images}, {"cin", cv.cin}, {"h", cv.h}, {"w", cv.w}, {"cout", cv.cout},
                       {"kernel", cv.kernel}, {"stride", cv.stride}, {"pad", cv.pad}, {"ho", cv.ho}, {"wo", cv.wo},
                       {"m1", mm.a.rows1}, {"k1", mm.a.cols1}, {"n1", mm.b.cols1}};
    } else if (r.matmul.on) {  // the shape as given: 1, M, K, N
        const MatmulShape &mm = r.matmul;
        j["shape"] = {1, mm.m, mm.k, mm.n};
        j["layout"] = {{"format", "fractal"}, {"m1", mm.a.rows1}, {"k1", mm.a.cols1}, {"n1", mm.b.cols1}};
        j["matmul"] = {{"m", mm.m}, {"k", mm.k}, {"n", mm.n}};
    } else {
        j["shape"] = {r.layout.n, r.layout.c, r.layout.h, r.layout.w};
    }
    if (!r.matmul.fractal_output())  // the output's NC1HWC0 layout
        j["layout"] = {{"n", r.layout.n}, {"c1", r.layout.c1}, {"h", r.layout.h}, {"w", r.layout.w}, {"c0", r.layout.c0}};
    json cfg = json::object();
    for (const auto &kv : config_values(r.config))
        cfg[kv.first] = kv.second;
    cfg["source"] = r.config.source;
    j["config"] = cfg;
    json params = json::object();
    for (size_t i = 0; i < r.manifest.params.size(); i++)
        params[r.manifest.params[i].name] = r.params[i];
    j["params"] = params;
    j["timing"] = r.timed ? "timed" : "functional";
    j["instructions"] = r.instructions;
    j["instructions_per_core"] = r.instructions_per_core;
    j["elements"] = elements;
    j["elements_padded"] = output_elements_padded(r);
    j["output_vectors"] = r.output_vectors;
    j["counted_instructions"] = r.counted_instructions;
    j["instructions_per_vector"] = r.derived.instructions_per_vector;
    json ops = json::object();
    for (unsigned op = 1; op < NPU_NUM_OPS; op++)
        if (r.op_counts[op])
            ops[npu_insn_table[op].mnemonic] = r.op_counts[op];
    j["opcodes"] = ops;
    if (r.timed) {
        const npu_core_stats &s = r.stats;
        const DerivedFigures &d = r.derived;
        j["cycles"] = s.cycles;
        j["ipc"] = d.ipc;
        j["cycles_per_element"] = d.cycles_per_element;
        json hist = json::array(), slots = json::array(), slot_issued = json::array();
        for (unsigned k = 0; k <= r.config.timing.issue_width; k++)
            hist.push_back(s.issue_histogram[k]);
        for (unsigned k = 0; k < r.config.timing.issue_width; k++) {
            slots.push_back(at(d.slot_busy, k));
            slot_issued.push_back(s.slot_issued[k]);
        }
        json lost = json::object();
        for (unsigned i = 0; i < NPU_NUM_STALLS; i++)
            lost[npu_stall_name(npu_stall(i))] = s.slots_lost[i];
        j["issue"] = {{"width", r.config.timing.issue_width}, {"histogram", hist}, {"slot_busy", slots},
                      {"slot_issued", slot_issued}, {"issue_cycles", s.issue_cycles}, {"slots_lost", lost}};
        json units = json::object();
        for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
            units[npu_unit_name(npu_unit(u))] = {
                {"busy_cycles", s.unit_busy[u]},
                {"issued", s.unit_issued[u]},
                {"count", unit_count(r, u)},
                {"utilisation", d.unit_utilisation[u]}};
        j["units"] = units;
        if (uses_cube(s)) {
            json pipes = json::object();
            for (unsigned p = 0; p < NPU_NUM_PIPES; p++) {
                json &pipe = pipes[npu_pipe_name(npu_pipe(p))];
                pipe = {{"operations", s.pipe_ops[p]},
                        {"busy_cycles", s.pipe_busy[p]},
                        {"utilisation", ratio(double(s.pipe_busy[p]), double(d.core_cycles))}};
                if (p == NPU_PIPE_CUBE)
                    pipe["fractal_products"] = s.cube_fractals;
                else
                    pipe["bytes"] = s.pipe_bytes[p];
            }
            j["pipes"] = pipes;
        }
        json stalls = json::object(), raw_by = json::object();
        for (unsigned i = 0; i < NPU_NUM_STALLS; i++)
            stalls[npu_stall_name(npu_stall(i))] = s.stall[i];
        for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
            raw_by[npu_unit_name(npu_unit(u))] = s.raw_by_unit[u];
        j["stalls"] = stalls;
        j["raw_by_unit"] = raw_by;
        json hot = json::array();
        for (size_t i = 0; i < r.hot_pcs.size() && i < 16; i++) {
            json reasons = json::object();
            for (unsigned k = 0; k < NPU_NUM_STALLS; k++)
                if (r.hot_pcs[i].by_reason[k])
                    reasons[npu_stall_name(npu_stall(k))] = r.hot_pcs[i].by_reason[k];
            hot.push_back({{"pc", r.hot_pcs[i].pc}, {"instruction", r.hot_pcs[i].disasm},
                           {"source", r.hot_pcs[i].srcloc}, {"cycles", r.hot_pcs[i].total}, {"reasons", reasons}});
        }
        j["stall_pcs"] = hot;
        j["schedule"] = schedules_json(r.loops);
        j["tiling"] = tiling_json(r.tile);
        if (r.has_l2) {
            j["l2"] = l2_json(r);
            const DramTraffic &t = r.dram_traffic;
            j["dram"] = dram_json(r.dram, r.config.dram, r.dram_busy_cycles, t.kernel_achieved);
            j["dram"]["kernel"] = {{"bytes_read", t.kernel_read},
                                   {"bytes_written", t.kernel_written},
                                   {"achieved_bytes_per_cycle", t.kernel_achieved},
                                   {"span_cycles", t.kernel_span},
                                   {"booked_after_end_cycles", t.kernel_booked_after}};
            j["dram"]["end_of_run"] = {{"bytes_written", t.end_of_run_bytes},
                                       {"drain_cycles", r.l2.clean_cycles},
                                       {"achieved_bytes_per_cycle", t.end_of_run_achieved},
                                       {"span_cycles", t.end_of_run_span}};
        } else {
            // Ideal memory: DMA bytes at the DMA bandwidth.
            j["dram"] = {{"model", "ideal"},
                         {"bytes_read", s.dma_bytes_in},
                         {"bytes_written", s.dma_bytes_out},
                         {"busy_cycles", d.dram_ideal_busy_cycles}};
        }
        j["dma"] = {{"transfers", s.dma_transfers}, {"bytes_in", s.dma_bytes_in}, {"bytes_out", s.dma_bytes_out}};
        j["bound"] = bound_json(r);
        json per_core = json::array();
        for (const npu_core_stats &cs : r.core_stats)
            per_core.push_back({{"cycles", cs.cycles}, {"instructions", cs.instructions}, {"issue_cycles", cs.issue_cycles}});
        j["cores"] = per_core;
    }
    j["accuracy"] = {{"checked", r.accuracy.checked},
                     {"failures", r.accuracy.failures},
                     {"max_ulp", json_number(r.accuracy.max_ulp)},
                     {"max_ulp_beyond_abs", json_number(r.accuracy.max_ulp_beyond_abs)},
                     {"sum_ulp", json_number(r.accuracy.sum_ulp)},
                     {"mean_ulp", json_number(r.derived.mean_ulp)},
                     {"max_abs_err", json_number(r.accuracy.max_abs_err)},
                     {"nan_mismatches", r.accuracy.nan_mismatches},
                     {"zero_sign_mismatches", r.accuracy.zero_sign_mismatches},
                     {"tolerance_ulp", r.tolerance.max_ulp},
                     {"tolerance_abs", r.tolerance.max_abs},
                     {"tolerance_zero_sign", r.tolerance.any_zero_sign ? "any" : "exact"},
                     {"padding_ok", r.padding_nonzero == 0},
                     {"padding_nonzero", r.padding_nonzero}};
    if (r.checked) {  // the element with the largest ULP error; null when every one is exact
        json worst = nullptr;
        if (r.accuracy.max_ulp > 0) {
            json in = json::object();
            for (const auto &[name, v] : named_inputs(r, r.worst_inputs))
                in[name] = json_number(v);
            worst = {{"index", r.accuracy.worst_index},
                     {"inputs", in},
                     {"got", json_number(r.accuracy.worst_got)},
                     {"reference", json_number(r.accuracy.worst_ref)},
                     {"ulp", json_number(r.accuracy.max_ulp)}};
        }
        j["accuracy"]["worst"] = worst;
    }
    if (!r.against.empty() && r.checked) {
        const npu_accuracy &a = r.against_accuracy;
        j["against"] = {{"reference", r.against},
                        {"max_abs_err", json_number(a.max_abs_err)},
                        {"worst_abs_x", json_number(r.against_worst_x)}};
    }
    json traps = json::array();
    for (const TrapReport &t : r.traps)
        traps.push_back({{"core", t.core},
                         {"kind", npu_trap_name(t.trap.kind)},
                         {"pc", t.trap.pc},
                         {"instruction", t.disasm},
                         {"source", t.srcloc},
                         {"address", t.trap.addr},
                         {"message", t.trap.message},
                         {"cycle", t.timed ? nlohmann::json(t.cycle) : nlohmann::json(nullptr)},
                         {"retired", t.retired}});
    j["traps"] = traps;
    j["passed"] = r.passed();
    j["sim"] = {{"host_seconds", r.host_seconds},
                {"sim_cycles_per_second",
                 r.timed ? nlohmann::json(r.derived.sim_cycles_per_second) : nlohmann::json(nullptr)},
                {"sim_instructions_per_second", r.derived.sim_instructions_per_second}};
    return j;
}

std::string ulp_text(double v, double tolerance)
{
    for (int digits = 3; digits <= 17; digits++) {
        const std::string t = fmt("%.*g", digits, v);
        const double shown = std::strtod(t.c_str(), nullptr);
        if ((shown > tolerance) == (v > tolerance) && (shown == tolerance) == (v == tolerance))
            return t;
    }
    return fmt("%.17g", v);
}

std::string report_text(const RunResult &r)
{
    std::ostringstream os;
    const uint64_t elements = npu_layout_logical_elems(&r.layout);
    os << fmt("Kernel:      %s (%s)\n", r.manifest.name.c_str(), r.manifest.path.c_str());
    // A cube kernel's epilogue around its product, unless the identity.
    const std::string f = r.manifest.reference == "identity" ? "" : r.manifest.reference + "(";
    const MatmulShape &mm = r.matmul;
    if (mm.conv.on) {
        const ConvShape &cv = mm.conv;
        os << fmt("Convolution: y %s %" PRIu64 "x%" PRIu64 "x%" PRIu64 "x%" PRIu64 " = %sconv(x fp16 %" PRIu64 "x%" PRIu64
                  "x%" PRIu64 "x%" PRIu64 ", w fp16 %" PRIu64 "x%" PRIu64 "x%" PRIu64 "x%" PRIu64 ", stride %" PRIu64
                  ", pad %" PRIu64 ")%s, NC1HWC0; per image fractals %" PRIu64 "x%" PRIu64 "x%" PRIu64 " (m1 k1 n1)\n",
                  dtype_text(r), cv.images, cv.cout, cv.ho, cv.wo, f.c_str(), cv.images, cv.cin, cv.h, cv.w, cv.cout,
                  cv.cin, cv.kernel, cv.kernel, cv.stride, cv.pad, f.empty() ? "" : ")", mm.a.rows1, mm.a.cols1,
                  mm.b.cols1);
    } else if (mm.on) {
        const std::string bias = mm.bias ? fmt(" + bias fp32 %" PRIu64, mm.n) : "";
        os << fmt("Matrices:    C %s %" PRIu64 "x%" PRIu64 " = %sA fp16 %" PRIu64 "x%" PRIu64 " B fp16 %" PRIu64 "x%" PRIu64
                  "%s%s, fractals %" PRIu64 "x%" PRIu64 "x%" PRIu64 " (m1 k1 n1)\n",
                  dtype_text(r), mm.m, mm.n, f.c_str(), mm.m, mm.k, mm.k, mm.n, bias.c_str(), f.empty() ? "" : ")",
                  mm.a.rows1, mm.a.cols1, mm.b.cols1);
    } else {
        os << fmt("Tensor:      %s NCHW %" PRIu64 "x%" PRIu64 "x%" PRIu64 "x%" PRIu64 ", NC1HWC0 %" PRIu64 "x%" PRIu64
                  "x%" PRIu64 "x%" PRIu64 "x%" PRIu64 "\n",
                  dtype_text(r), r.layout.n, r.layout.c, r.layout.h, r.layout.w, r.layout.n, r.layout.c1, r.layout.h,
                  r.layout.w, r.layout.c0);
    }
    os << fmt("Config:      %s (VLEN %u, W=%u, UB %zu KiB, SFU %s, %u core%s)\n", r.config.source.c_str(),
              r.config.core.vlen_bits, r.config.timing.issue_width, r.config.core.ub_bytes / 1024,
              r.config.core.sfu_mode == NPU_SFU_EXACT ? "exact" : "approx", r.config.cores,
              r.config.cores > 1 ? "s" : "");
    if (!r.params.empty()) {
        os << "Parameters: ";
        for (size_t i = 0; i < r.params.size(); i++)
            os << fmt(" %s=%g", r.manifest.params[i].name.c_str(), r.params[i]);
        os << "\n";
    }
    os << "\nSummary" << (r.timed ? "" : " (functional run: no timing, sim.mode=functional)") << "\n";
    if (r.timed) {
        os << fmt("  Cycles:                    %" PRIu64 "\n", r.stats.cycles);
        os << fmt("  Instructions:              %" PRIu64 "\n", r.instructions);
        os << fmt("  IPC:                       %.3f\n", r.derived.ipc);
    } else {
        os << fmt("  Instructions:              %" PRIu64 "\n", r.instructions);
    }
    os << fmt("  Elements:                  %" PRIu64 " (%" PRIu64 " with padding)\n", elements,
              output_elements_padded(r));
    if (r.timed)
        os << fmt("  Cycles per element:        %.4f\n", r.derived.cycles_per_element);
    os << fmt("  Output vectors:            %" PRIu64 "\n", r.output_vectors);
    os << fmt("  Instructions per vector:   %.2f (arithmetic, compare, select, SFU, logic, convert)\n",
              r.derived.instructions_per_vector);
    if (r.core_stats.size() > 1)
        for (size_t k = 0; k < r.core_stats.size(); k++)
            os << fmt("  Core %zu:                    %" PRIu64 " cycles, %" PRIu64 " instructions\n", k,
                      r.core_stats[k].cycles, r.core_stats[k].instructions);
    if (r.timed)
        text_timing(os, r);
    if (r.has_l2)
        text_memory(os, r);

    for (const TrapReport &t : r.traps)
        os << "\n" << trap_text(t) << "\n";

    if (r.checked) {
        if (r.matmul.on) {  // the tolerance's absolute part is each element's own (docs/cube.md)
            os << fmt("\nAccuracy (every element against the binary64 %s, epilogue '%s')\n",
                      r.matmul.conv.on ? "convolution" : "A B", r.manifest.reference.c_str());
            os << fmt("  Checked:                   %" PRIu64 "\n", r.accuracy.checked);
            os << fmt("  Max ULP:                   %s (tolerance %g ULP, or the accumulation bound from K plus half "
                      "an ULP)\n",
                      ulp_text(r.accuracy.max_ulp, r.tolerance.max_ulp).c_str(), r.tolerance.max_ulp);
        } else {
            os << fmt("\nAccuracy (every element against the binary64 reference '%s')\n", r.manifest.reference.c_str());
            os << fmt("  Checked:                   %" PRIu64 "\n", r.accuracy.checked);
            os << fmt("  Max ULP:                   %s (tolerance %g ULP or %g absolute)\n",
                      ulp_text(r.accuracy.max_ulp, r.tolerance.max_ulp).c_str(), r.tolerance.max_ulp,
                      r.tolerance.max_abs);
        }
        if (!r.matmul.on && r.tolerance.max_abs > 0 && r.accuracy.max_ulp_beyond_abs != r.accuracy.max_ulp)
            os << fmt("  Max ULP beyond tolerance:  %s (elements with an absolute error over %g)\n",
                      ulp_text(r.accuracy.max_ulp_beyond_abs, r.tolerance.max_ulp).c_str(), r.tolerance.max_abs);
        os << fmt("  Mean ULP:                  %.3g\n", r.derived.mean_ulp);
        os << fmt("  Max abs error:             %.3g\n", r.accuracy.max_abs_err);
        if (r.accuracy.max_ulp > 0)
            os << fmt("  Worst element:             #%" PRIu64 ": %s got %.9g, reference %.9g\n", r.accuracy.worst_index,
                      inputs_text(r, r.worst_inputs).c_str(), r.accuracy.worst_got, r.accuracy.worst_ref);
        if (r.accuracy.nan_mismatches)
            os << fmt("  NaN mismatches:            %" PRIu64 " (NaN where the reference is a number, or the reverse)\n",
                      r.accuracy.nan_mismatches);
        if (r.accuracy.zero_sign_mismatches || r.tolerance.any_zero_sign)
            os << fmt("  Zeros of the wrong sign:   %" PRIu64 "%s\n", r.accuracy.zero_sign_mismatches,
                      r.tolerance.any_zero_sign ? " (allowed: the manifest's zero_sign=any)" : "");
        os << fmt("  Failures:                  %" PRIu64 "\n", r.accuracy.failures);
        for (const FailedElement &f : r.failed) {
            const std::string in = inputs_text(r, f.inputs);
            // why it failed, where its ULP figure alone would not say
            const std::string why = std::isnan(f.got) != std::isnan(f.ref) ? "a NaN against a number"
                                    : f.got == 0 && std::signbit(f.got) != std::signbit(f.ref) && f.ulp == 0
                                        ? "a zero of the wrong sign"
                                        : ulp_text(f.ulp, r.tolerance.max_ulp) + " ULP";
            os << fmt("    element #%" PRIu64 ": %s got %.9g, reference %.9g (%s)\n", f.index, in.c_str(), f.got, f.ref,
                      why.c_str());
        }
        os << fmt("  Padding:                   %s\n",
                  r.padding_nonzero ? fmt("%" PRIu64 " padded elements are non-zero", r.padding_nonzero).c_str() : "zero");
        if (!r.against.empty()) {
            const npu_accuracy &a = r.against_accuracy;
            os << fmt("\nAgainst '%s' (for information: the kernel's own reference decides the result)\n",
                      r.against.c_str());
            os << fmt("  Max abs error:             %.3g (at x = %.9g)\n", a.max_abs_err, r.against_worst_x);
        }
    }
    os << "\nResult: " << (r.passed() ? "PASS" : "FAIL") << "\n";
    return os.str();
}

std::string indent(const std::string &text, const std::string &by)
{
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        end = end == std::string::npos ? text.size() : end + 1;
        out += by + text.substr(start, end - start);
        start = end;
    }
    return out;
}

std::string format_schedules(const std::vector<ScheduledLoop> &loops, bool tables)
{
    std::string out;
    for (const ScheduledLoop &s : loops) {
        const npu_sched_loop &l = s.info;
        if (!l.scheduled) {
            out += fmt("%s: .pipeline loop of %u instructions, in written order (%s)\n", s.where.c_str(), l.ops,
                       s.binding.empty() ? "schedule off" : s.binding.c_str());
            continue;
        }
        out += fmt("%s: .pipeline loop of %u instructions: %u iterations every %u cycles (%.2f per iteration); "
                   "MII %u (resources %u: %s; recurrences %u); %u stages; %u vector and %u predicate registers "
                   "(at most %u values live)\n",
                   s.where.c_str(), l.ops, l.unroll, l.ii, double(l.ii) / l.unroll, l.mii, l.mii_res,
                   s.binding.c_str(), l.mii_rec, l.stages, l.vregs, l.pregs, l.max_live);
        if (l.pad_leftovers) {
            out += fmt("  leftover iterations: rounded up to whole passes of %u where that is faster than written order "
                       "(%u or more past whole passes",
                       l.unroll, l.pad_leftovers);
            if (l.pad_from)
                out += fmt(", or a count from %u up to the %u the prologue takes", l.pad_from, l.prologue_iterations);
            out += fmt("; the block's room holds %lu)\n", l.room);
        }
        if (l.merged)
            out += fmt("  repeats merged: %u (each into its earlier identical instruction: holding the value "
                       "schedules at least as fast as computing it again)\n",
                       l.merged);
        if (tables)
            out += s.table;
    }
    return out;
}

std::string format_tiling(const TileChoice &t)
{
    const std::string cap = "TILE_MAX " + std::to_string(t.tile_max) + " bytes";
    if (t.reason == "default")
        return cap + " (no scheduled tile loop to measure)";
    if (t.loop.empty())
        return cap + " (given)";
    std::string costs = fmt("%.2f cycles per iteration scheduled; memory %.2f through the %s", t.compute_cycles,
                            t.core_cycles, t.core_resource.c_str());
    if (!t.shared_resource.empty())
        costs += fmt(", %.2f through the %s", t.shared_cycles, t.shared_resource.c_str());
    std::string why = t.reason == "host"      ? "given"
                      : t.reason == "compute" ? "compute-bound: tiles of an eighth of the core's share"
                      : t.reason == "share"   ? "compute-bound, but the core's share is under 8 larger tiles"
                      : t.reason == "cores"   ? "compute-bound, but several cores share the L2"
                      : t.reason == "reads"   ? "memory-bound, its reads paced by the L2 MSHRs: tiles (lib/perchan.s: transfers) of their reach"
                      : t.reason == "paced"   ? "compute-bound, its reads paced by the L2 MSHRs nearly as slowly: tiles of an eighth of the core's share, sent in pieces of the MSHRs' reach"
                      : t.reason == "reads_slower" ? "memory-bound, its reads paced by the L2 MSHRs, but tiles of their reach simulated slower"
                      : t.reason == "paced_slower" ? "compute-bound, its reads paced by the L2 MSHRs, but pieces of their reach simulated slower"
                      : t.reason == "cores_slower" ? "compute-bound, but several cores share the L2, where 16 KiB tiles simulated slower"
                      : t.reason == "memory_slower" ? "not compute-bound, but on several cores 16 KiB tiles simulated slower"
                                              : "not compute-bound";
    if (t.reason == "measured")
        why = "measured, the fewest cycles of";
    else if (!t.measured.empty())
        why += "; simulated";
    for (size_t i = 0; i < t.measured.size(); i++)
        why += (i ? ", " : " ") + std::to_string(t.measured[i].first) + ": " + std::to_string(t.measured[i].second);
    return cap + " (" + why + "; the kernel caps its tiles by the UB)\n  " + t.loop + ": " + costs;
}

nlohmann::json tiling_json(const TileChoice &t)
{
    nlohmann::json j = {{"tile_max_bytes", t.tile_max}, {"reason", t.reason}};
    if (t.reason != "default") {
        j["loop"] = t.loop;
        j["compute_cycles_per_iteration"] = t.compute_cycles;
        j["core_memory_cycles_per_iteration"] = t.core_cycles;
        j["core_memory_resource"] = t.core_resource;
        j["shared_memory_cycles_per_iteration"] = t.shared_cycles;
        j["shared_memory_resource"] = t.shared_resource;
    }
    if (!t.measured.empty()) {
        nlohmann::json m = nlohmann::json::array();
        for (const auto &c : t.measured)
            m.push_back({{"tile_max_bytes", c.first}, {"cycles", c.second}});
        j["measured"] = m;
    }
    return j;
}

nlohmann::json schedules_json(const std::vector<ScheduledLoop> &loops)
{
    nlohmann::json a = nlohmann::json::array();
    for (const ScheduledLoop &s : loops) {
        const npu_sched_loop &l = s.info;
        a.push_back({{"where", s.where},
                     {"scheduled", bool(l.scheduled)},
                     {"instructions", l.ops},
                     {"merged_instructions", l.merged},
                     {"iterations_per_pass", l.unroll},
                     {"ii", l.ii},
                     {"cycles_per_iteration", double(l.ii) / l.unroll},
                     {"mii", l.mii},
                     {"mii_resources", l.mii_res},
                     {"mii_recurrences", l.mii_rec},
                     {"binding", s.binding},
                     {"stages", l.stages},
                     {"room", l.room},
                     {"padded", l.pad_leftovers > 0},
                     {"pad_from", l.pad_from},
                     {"pad_leftovers", l.pad_leftovers},
                     {"prologue_iterations", l.prologue_iterations},
                     {"vector_loads", l.vector_loads},
                     {"vector_stores", l.vector_stores},
                     {"vector_registers", l.vregs},
                     {"predicate_registers", l.pregs},
                     {"max_live", l.max_live},
                     {"iterations_per_core", s.iterations_per_core},
                     {"lifetime_sum", {{"vector", l.lifetime_sum_v}, {"predicate", l.lifetime_sum_p}}},
                     {"registers_free", {{"vector", l.regs_v}, {"predicate", l.regs_p}}}});
    }
    return a;
}

}  // namespace npusim
