// Reports of a run: the llvm-mca-like text report and the JSON document
// with the stable keys of docs/DESIGN.md. Printing knows nothing of how the
// numbers were made.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runner.h"

namespace npusim {

nlohmann::json report_json(const RunResult &r);
std::string report_text(const RunResult &r);
std::string trap_text(const TrapReport &t);

// The `l2` and `dram` objects of a run report (memory.model: l2); `npusim
// cache` prints the same keys for a replayed trace. A run's DRAM counts
// include the end-of-run write-back of the L2's dirty lines (end_of_run_bytes
// of the bytes written); achieved_bytes_per_cycle is the rest, the traffic
// inside the kernel's cycles, over those cycles.
nlohmann::json l2_json(const RunResult &r);
nlohmann::json l2_json(const npu_l2_stats &l2, const std::vector<std::string> &tensor_names, unsigned cores);
nlohmann::json dram_json(const npu_dram_stats &d, uint64_t busy_cycles, uint64_t cycles, uint64_t end_of_run_bytes = 0);

}  // namespace npusim
