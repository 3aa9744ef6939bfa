// The host's tiling decision (tiling.h).
#include "tiling.h"

#include <algorithm>
#include <cmath>

#include "error.h"

namespace npusim {

namespace {

// The cycles one L2 miss holds its MSHR: the DRAM's latency and the line's
// first piece on its channel (docs/timing.md, M2 and M3).
double fill_cycles(const Config &cfg)
{
    const double piece = std::min(cfg.l2.line_bytes, cfg.dram.interleave_bytes);
    return cfg.dram.latency + std::ceil(piece / cfg.dram.bytes_per_cycle);
}

// Per iteration of a loop, the fastest its vector loads and stores can move
// through the machine, per core: each load's bytes come in by DMA and each
// store's go out (the skeletons stream every vector through the UB once).
// With the L2 model, a streamed input misses: its lines fill through the
// MSHRs and the DRAM, which the cores share. The same terms as the run's
// memory bound (docs/timing.md, "The bound"), taken per iteration.
void memory_cost(TileChoice &t, unsigned loads, unsigned stores, const Config &cfg)
{
    const double vlenb = cfg.core.vlen_bits / 8.0;
    const double in = loads * vlenb, out = stores * vlenb, cores = cfg.cores;
    auto consider = [](double &worst, std::string &name, double cycles, const char *what) {
        if (cycles > worst) {
            worst = cycles;
            name = what;
        }
    };
    consider(t.core_cycles, t.core_resource, (in + out) / cfg.timing.dma_bytes_per_cycle, "dma engine");
    if (!cfg.memory_l2)
        return;
    const double line = cfg.l2.line_bytes;
    const double fills = cfg.warm_inputs ? 0 : in / line;
    const double fill = fill_cycles(cfg);
    consider(t.core_cycles, t.core_resource,
             ((in + out) / line * cfg.l2.hit_latency + fills * fill) / cfg.timing.dma_outstanding, "dma window");
    consider(t.shared_cycles, t.shared_resource, fills * fill * cores / cfg.l2.mshrs, "l2 mshrs");
    consider(t.shared_cycles, t.shared_resource,
             (fills * line + out) * cores / (double(cfg.dram.bytes_per_cycle) * cfg.dram.channels), "dram channels");
}

// Whether a scheduled loop's kernel issues DMA transfers (a skeleton that
// sends its tiles in pieces from the loop's .pass block).
bool sends_in_tile_loop(const npu_program &prog)
{
    for (size_t i = 0; i < prog.nloops; i++)
        for (size_t pc = prog.loops[i].kernel_begin; prog.loops[i].scheduled && pc < prog.loops[i].kernel_end; pc++)
            if (npu_insn_table[prog.insns[pc].op].cls == NPU_CLASS_DMA)
                return true;
    return false;
}

}  // namespace

uint64_t mshr_reach(const Config &cfg)
{
    if (!cfg.memory_l2 || cfg.warm_inputs)
        return 0;
    // Only where the MSHRs fill at most half what the engines send: closer
    // to the engines' rate, 16 KiB tiles measured faster (docs/kernels.md).
    const double lines_per_cycle = cfg.l2.mshrs / fill_cycles(cfg);
    if (2 * lines_per_cycle * cfg.l2.line_bytes > double(cfg.timing.dma_bytes_per_cycle) * cfg.cores)
        return 0;
    // While one core's tile loads, about half the others store: the loading
    // cores share the MSHRs.
    const double loading = std::max(1.0, cfg.cores / 2.0);
    const uint64_t reach = uint64_t(std::ceil(cfg.l2.mshrs / loading)) * cfg.l2.line_bytes;
    return std::max<uint64_t>(kTileStep, (reach + kTileStep - 1) / kTileStep * kTileStep);
}

uint64_t least_tile(const Config &cfg, unsigned vectors)
{
    const uint64_t bytes = std::max<uint64_t>(kTileStep, uint64_t(vectors) * (cfg.core.vlen_bits / 8));
    return (bytes + kTileStep - 1) / kTileStep * kTileStep;
}

void assemble_program(const std::string &path, const std::vector<npu_asm_define> &defines,
                      const std::vector<std::string> &include_dirs, const npu_asm_machine &machine, bool schedule,
                      npu_program &prog)
{
    std::vector<const char *> dirs;
    for (const std::string &d : include_dirs)
        dirs.push_back(d.c_str());
    npu_asm_options o{};
    o.include_dirs = dirs.data();
    o.num_include_dirs = dirs.size();
    o.defines = defines.data();
    o.num_defines = defines.size();
    o.machine = &machine;
    o.schedule = schedule;
    npu_program_free(&prog);
    npu_diag d{};
    if (npu_assemble_file(path.c_str(), &o, &prog, &d) != NPU_OK) {
        char line[600];
        npu_diag_format(&d, line, sizeof line);
        throw Error(line);
    }
}

TileChoice measure_tile_loop(const npu_program &prog, const Config &cfg)
{
    TileChoice t;
    const npu_sched_loop *best = nullptr;
    for (size_t i = 0; i < prog.nloops; i++) {
        const npu_sched_loop &l = prog.loops[i];
        if (!l.scheduled || l.unroll == 0 || l.vector_loads + l.vector_stores == 0 || (best && l.trips <= best->trips))
            continue;
        best = &l;
    }
    if (!best)
        return t;
    t.loop = (best->loc.file < prog.nfiles ? std::string(prog.files[best->loc.file]) : "?") + ":" +
             std::to_string(best->loc.line);
    t.compute_cycles = double(best->ii) / best->unroll;
    // One iteration's loads and stores, each address once: a vector the
    // body reads again (lib/eltwise.s, LIN_X_AGAIN) came in once.
    memory_cost(t, best->vector_loads, best->vector_stores, cfg);
    t.reason = t.compute_cycles >= std::max(t.core_cycles, t.shared_cycles) ? "compute" : "memory";
    return t;
}

TileChoice assemble_for_config(const std::string &path, const std::vector<npu_asm_define> &defines,
                               const std::vector<std::string> &include_dirs, const Config &cfg, bool schedule,
                               uint64_t share_bytes, uint64_t tile_max, uint64_t least, npu_program &prog)
{
    const npu_asm_machine machine = asm_machine(cfg);
    std::vector<npu_asm_define> with = defines;
    std::string tile = std::to_string(tile_max ? tile_max : kSmallTile);
    with.push_back({"TILE_MAX", tile.c_str()});
    if (tile_max) {
        assemble_program(path, with, include_dirs, machine, schedule, prog);
        TileChoice t = measure_tile_loop(prog, cfg);
        t.reason = "host";
        t.tile_max = unsigned(tile_max);
        return t;
    }
    // The tiles are chosen on the scheduled loop, for a run in written order
    // too, so that `--schedule off` differs from the scheduled run in its
    // schedule alone.
    const uint64_t larger = share_bytes / kTilesPerCore / 1024 * 1024;
    const unsigned large = unsigned(std::min<uint64_t>(larger, cfg.core.ub_bytes));
    // Tiles of the reach where the kernel runs them (several cores share the
    // MSHRs down to a line or two), else its least tile.
    const uint64_t of_mshrs = mshr_reach(cfg), reach = of_mshrs ? std::max(of_mshrs, least) : 0;
    // A compute-bound loop on one core (assembled with its larger tiles,
    // `with`) whose reads the MSHRs pace nearly as slowly: its tiles go in
    // pieces of the reach (kPacedMargin) where the skeleton sends pieces from
    // its tile loop (else its program, and the reason, stay as they were).
    auto paced = [&](TileChoice &t) {
        if (!reach || reach >= kSmallTile || t.shared_resource != "l2 mshrs" ||
            t.shared_cycles < kPacedMargin * t.compute_cycles)
            return false;
        const std::string chunk = std::to_string(reach);
        std::vector<npu_asm_define> chunked = with;
        chunked.push_back({"DMA_CHUNK", chunk.c_str()});
        npu_program pieces;
        npu_program_init(&pieces);
        try {
            assemble_program(path, chunked, include_dirs, machine, schedule, pieces);
        } catch (...) {
            npu_program_free(&pieces);
            throw;
        }
        if (!sends_in_tile_loop(pieces)) {
            npu_program_free(&pieces);
            return false;
        }
        npu_program_free(&prog);
        prog = pieces;
        t.reason = "paced";
        return true;
    };
    if (schedule && cfg.cores == 1 && larger > kSmallTile) {
        // Most loops are compute-bound: assemble with the larger tiles first,
        // and keep that program when its loop is. Measured on the program
        // with 16 KiB tiles instead, the choice was the same on every kernel
        // and shipped config (docs/kernels.md, "Tiles"); the loop's schedule
        // per iteration can differ a little (its trips do), and the one
        // reported is then the running program's.
        tile = std::to_string(large);
        with.back().value = tile.c_str();
        assemble_program(path, with, include_dirs, machine, true, prog);
        TileChoice t = measure_tile_loop(prog, cfg);
        if (t.reason == "compute") {
            t.tile_max = large;
            paced(t);
            return t;
        }
        tile = std::to_string(kSmallTile);
        with.back().value = tile.c_str();
    }
    assemble_program(path, with, include_dirs, machine, true, prog);
    TileChoice t = measure_tile_loop(prog, cfg);
    const double memory = std::max(t.core_cycles, t.shared_cycles);
    if (t.reason == "memory" && reach && reach < kSmallTile && t.compute_cycles <= kReadsMargin * memory) {
        t.reason = "reads";
        t.tile_max = unsigned(reach);
    } else if (t.reason == "compute" && cfg.cores > 1)
        t.reason = "cores";
    else if (t.reason == "compute" && larger <= kSmallTile)
        t.reason = "share";
    else if (t.reason == "compute")
        t.tile_max = large;
    if (schedule && t.tile_max == kSmallTile)
        return t;
    tile = std::to_string(t.tile_max);
    with.back().value = tile.c_str();
    // On one core the reach is also the largest transfer: a skeleton that
    // splits its tiles' transfers (lib/perchan.s) keeps larger tiles and
    // sends them in pieces of it; the others take tiles of it. On several
    // cores the pieces measured slower than tiles of the reach
    // (docs/kernels.md, "Tiles").
    if (t.reason == "reads" && cfg.cores == 1)
        with.push_back({"DMA_CHUNK", tile.c_str()});
    assemble_program(path, with, include_dirs, machine, schedule, prog);
    return t;
}

}  // namespace npusim
