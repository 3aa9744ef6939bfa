// A Dinero IV din trace replayed through a config's L2 and DRAM, one access
// at a time (Dinero's blocking order: the hits and misses are Dinero's):
// what `npusim cache` prints and Python's npusim.cache returns. Its end is
// a run's end: the L2's dirty lines are written back (npu_l2_clean, as
// npu_memsys_drain after a run), counted in the DRAM's bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config.h"
#include "npusim/din.h"
#include "npusim/dram.h"
#include "npusim/l2.h"

namespace npusim {

struct DinReplay {
    std::string trace;           // the trace's name in messages and reports
    npu_din_replay_result replay{};
    npu_l2_stats l2{};
    npu_dram_stats dram{};               // every DRAM byte, the end's write-back included
    npu_dram_checkpoint dram_trace{};    // the DRAM at the trace's end, before that write-back
    npu_dram_config dram_config{};
    uint64_t dram_busy_cycles = 0;
};

// A replay reads the config's l2.* and dram.* keys only. A --set of any
// other key would change nothing, and memory.model: ideal (no L2 model) is
// not what a replay does: both are refused with one line naming the key
// ("set dma.outstanding: ...", "edge.yaml:3:3: memory.model: ..."). A
// config file's other sections (a whole machine, configs/edge.yaml) are
// read, checked and not used.
void check_replay_config(const Config &cfg);

// Replays `text`, the trace named `name`, on cfg's l2 and dram sections,
// after check_replay_config. Throws Error with the trace's
// `name:line:col: ...` line on a bad record.
DinReplay replay_din(const Config &cfg, const std::string &name, const std::string &text);

// `npusim cache --json`'s document: trace, records, cycles, and the `l2` and
// `dram` objects of a run report (docs/metrics.md), without per-core or
// per-tensor parts.
nlohmann::json din_replay_json(const DinReplay &r);
// Its text summary: the trace, L2 hits and misses by kind, write-backs, DRAM bytes.
std::string din_replay_text(const DinReplay &r);

}  // namespace npusim
