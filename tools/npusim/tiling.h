// The host's tiling decision: how large a kernel's tiles are on the machine
// it runs on, as CANN's per-operator tiling functions decide on the host
// (docs/kernels.md, "Tiles"). The skeletons (kernels/lib/eltwise.s,
// lib/perchan.s) take their tiles up to TILE_MAX bytes (16384 when nobody
// defines it, as `npusim asm` without -D). A tile loop whose schedule is
// slower per iteration than its memory traffic gains from larger tiles
// (fewer pipeline fills and drains); one bound by memory loses (its first
// load and last store grow), so it keeps 16 KiB, or takes the L2 MSHRs'
// reach where they fill reads slower than the DMA engines send them (on
// one core the host then also defines DMA_CHUNK, the reach: lib/perchan.s
// keeps its tiles and sends them in transfers of that size).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config.h"
#include "npusim/asm.h"
#include "npusim/program.h"

namespace npusim {

struct TileChoice {
    // How TILE_MAX was set: "host" (the caller gave it), "compute" (the
    // tile loop is compute-bound: larger tiles), "memory" (bound by memory:
    // 16 KiB), "reads" (bound by memory, its reads paced by the L2 MSHRs:
    // tiles of their reach, mshr_reach), "paced" (compute-bound, its reads
    // the MSHRs pace nearly as slowly: larger tiles, transfers in pieces of
    // the reach, kPacedMargin), "share" (compute-bound, but the
    // core's share is too small for 8 tiles above 16 KiB), "cores" (several cores: 16 KiB),
    // a reason with "_slower" (the run checked the rule's tiles by
    // simulation and took others, RunOptions::check_tiles: on one core the
    // reach's against the tiles without it, reads_slower and paced_slower;
    // on several cores against 16, 8, 4 and 2 KiB), "measured"
    // (simulated, below), or "default" (no scheduled tile loop to measure,
    // or no share given: 16 KiB).
    std::string reason = "default";
    unsigned tile_max = 16384;  // bytes: the TILE_MAX the kernel was assembled with
    // The tile loop (the scheduled `.pipeline` with the most expected trips
    // and vector loads or stores) and its costs per iteration, in cycles,
    // both per core: its schedule (II / unroll), and the fastest its memory
    // traffic can go through the core's own DMA engine (`core_cycles`) and
    // through the L2 MSHRs and DRAM channels the cores share
    // (`shared_cycles`, every core's traffic counted).
    std::string loop;
    double compute_cycles = 0, core_cycles = 0, shared_cycles = 0;
    std::string core_resource, shared_resource;
    // Each TILE_MAX simulated and its cycles, in the order tried (the rule's
    // pick first): with reason "measured", the fewest won (the first of
    // equals); with a checked rule, its tiles and the others simulated.
    std::vector<std::pair<unsigned, uint64_t>> measured;
};

// The tiling rule (docs/kernels.md, "Tiles"). On one core, a tile loop is
// compute-bound when its schedule takes at least the memory cycles of its
// loads and stores per iteration, through every resource; its tiles then
// grow to an eighth of the core's share (in 1 KiB steps), so that it still
// runs at least 8 tiles and its first load and last store stay short; the
// kernel caps them by the UB. With several cores a compute-bound loop's
// tiles stay 16 KiB:
// the cores run the same tile rhythm side by side and their loads meet in
// the shared L2, and larger tiles measured up to 4.6% slower there (geglu
// fp32 on 4 cores) where one core gains up to 4%. The run then checks the
// rule's pick against smaller tiles by simulation (runner.cc, run_checked).
constexpr unsigned kTilesPerCore = 8;
constexpr unsigned kSmallTile = 16384;
// TILE_MAX is a multiple of this many bytes (and at least it).
constexpr unsigned kTileStep = 256;
// The least TILE_MAX a kernel runs with: `vectors` vectors of the config's
// VLEN (Manifest::tile_vectors), at least kTileStep bytes, rounded up to a
// multiple of it. A skeleton's tile loop runs (TILE_MAX / VLENB / vectors)
// iterations of `vectors` vectors; below this it would expect none (the
// assembler refuses a .pipeline's expected trip count of 0). The rule
// never picks less, and a tile_max below it is refused.
uint64_t least_tile(const Config &cfg, unsigned vectors);
// A memory-bound tile loop whose reads the L2 MSHRs fill slower than the
// cores' DMA engines send bytes (l2.mshrs lines per fill time, M2 and M3,
// below system.cores x dma.bytes_per_cycle): an engine sends a transfer's
// line requests in order (M1), so with large tiles a tile's store waits
// behind the next tile's loads, which leave only as MSHRs free, and the
// engine idles for the reads' latency; on several cores, whose tiles keep
// the same rhythm, the cores load at once and then store at once. Tiles of
// the MSHRs' reach alternate a load that fills the MSHRs with a store the
// engine sends while those fills are outstanding: l2.mshrs x l2.line_bytes
// on one core; on more, while one core loads about half the others store,
// so the loading cores share the MSHRs: l2.mshrs / (cores / 2) lines
// (rounded up to kTileStep bytes, and to the kernel's least_tile). Measured (docs/kernels.md, "Tiles"):
// relu fp32 on configs/edge.yaml 281,859 -> 224,510 cycles; on the default
// config with 4 cores 24,771 -> 20,766. Returns that reach in bytes, or 0
// where the MSHRs fill more than half what the engines send (the default
// config on 1 and 2 cores: 16 KiB tiles measured faster), inputs are warm
// or there is no L2 model; the rule takes it when it is under 16 KiB and the loop's
// schedule takes at most kReadsMargin of its memory cycles per iteration.
uint64_t mshr_reach(const Config &cfg);
// The largest share of its memory cycles per iteration a loop's schedule
// may take for the reach to apply: closer to its memory, a loop loses to
// the small tiles' fills and drains (docs/kernels.md, "Tiles").
constexpr double kReadsMargin = 0.9;
// Reason "paced": a compute-bound loop on one core whose reads the MSHRs
// pace (mshr_reach under 16 KiB; the MSHRs the tighter shared term, not
// the DRAM channels) at least this share of its schedule's cycles per
// iteration keeps its larger tiles, and the host also defines DMA_CHUNK =
// the reach: a skeleton that can sends those tiles' transfers in pieces of
// it from its compute loop (lib/eltwise.s ELT_TILE3C), so the engine
// alternates reads the MSHRs pace with writes; one that sends none from its
// loop keeps the program without. Measured on configs/edge.yaml fp32
// 1x64x56x56 (docs/kernels.md, "Tiles"): softsign 282,813 -> 225,135
// cycles, hardswish 287,603 -> 262,353.
constexpr double kPacedMargin = 0.75;

// Assembles `path` into `prog` (initialised; its old content freed) as
// written: `defines`, `include_dirs`, `.pipeline` loops scheduled for
// `machine` when `schedule`. Throws Error with the first diagnostic.
void assemble_program(const std::string &path, const std::vector<npu_asm_define> &defines,
                      const std::vector<std::string> &include_dirs, const npu_asm_machine &machine, bool schedule,
                      npu_program &prog);

// The tile loop of an assembled program and its costs on `cfg` (reason
// "compute" or "memory"), or reason "default" when it has none.
TileChoice measure_tile_loop(const npu_program &prog, const Config &cfg);

// Assembles `path` for `cfg`: `defines` as given plus TILE_MAX, `.pipeline`
// loops scheduled when `schedule`. With `tile_max` (bytes; the caller checked
// it, at least `least` bytes) TILE_MAX is that; the rule's picks are at
// least `least` (the kernel's least_tile). With 0 the kernel is assembled with TILE_MAX=16384
// and, when its tile loop is compute-bound and `share_bytes` (the largest
// core's bytes of each tensor; 0: unknown) holds more than 8 larger tiles,
// again with the larger TILE_MAX; when it is memory-bound (its schedule at
// most kReadsMargin of its memory) and mshr_reach is under 16 KiB, again
// with TILE_MAX = that reach. On one core with such a share, scheduled, it
// tries the larger TILE_MAX first and keeps that program when its tile loop
// is compute-bound (one assembly where two were; the choice is the same on
// every kernel and shipped config, measured), or, when that loop is paced
// (kPacedMargin), the program assembled again with DMA_CHUNK if its tile
// loop sends pieces. Throws Error with the first assembler diagnostic.
TileChoice assemble_for_config(const std::string &path, const std::vector<npu_asm_define> &defines,
                               const std::vector<std::string> &include_dirs, const Config &cfg, bool schedule,
                               uint64_t share_bytes, uint64_t tile_max, uint64_t least, npu_program &prog);

}  // namespace npusim
