// Reports of a run: the llvm-mca-like text report and the JSON document,
// whose every key docs/metrics.md defines. Both format the same RunResult,
// its derived figures included (RunResult::derived, computed once by the
// run), and know nothing of how the numbers were made.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runner.h"

namespace npusim {

nlohmann::json report_json(const RunResult &r);
std::string report_text(const RunResult &r);

// An ULP figure beside its tolerance, as the report prints it: three
// significant digits, or as many more as it takes to show which side of the
// tolerance it is on (1.000035 over a tolerance of 1 is "1.00004", not "1").
std::string ulp_text(double ulp, double tolerance);
std::string trap_text(const TrapReport &t);
// The program's `.pipeline` loops: MII, II, stages, registers (and with
// `tables`, each schedule as cycles x slots); one JSON object per loop.
// Each line of text prefixed with `by`.
std::string indent(const std::string &text, const std::string &by);
std::string format_schedules(const std::vector<ScheduledLoop> &loops, bool tables);
nlohmann::json schedules_json(const std::vector<ScheduledLoop> &loops);
// The host's tiling decision (tiling.h): one line for the report, and its JSON.
std::string format_tiling(const TileChoice &t);
nlohmann::json tiling_json(const TileChoice &t);

// The `l2` and `dram` objects of a run report (memory.model: l2); `npusim
// cache` prints the same keys for a replayed trace. A run's DRAM counts
// include the end-of-run write-back of the L2's dirty lines; its
// achieved_bytes_per_cycle is the kernel's traffic alone (RunResult::
// dram_traffic), which report_json also shows apart (`dram.kernel`,
// `dram.end_of_run`).
nlohmann::json l2_json(const RunResult &r);
nlohmann::json l2_json(const npu_l2_stats &l2, const std::vector<std::string> &tensor_names, unsigned cores);
nlohmann::json dram_json(const npu_dram_stats &d, const npu_dram_config &cfg, uint64_t busy_cycles, double achieved);
// Bytes over max(cycles, busy_end): requests made from cycle 0 whose channel
// bookings all end by busy_end never exceed the peak this way (dram.h).
double achieved_bytes_per_cycle(uint64_t bytes, uint64_t cycles, uint64_t busy_end);

}  // namespace npusim
