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

}  // namespace npusim
