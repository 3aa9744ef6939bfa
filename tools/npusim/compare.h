// `npusim compare K1 K2 ...`: runs each kernel on the same input and config
// (each in its own `npusim run` process, as SystemC wants one scenario per
// process) and lays the reports side by side.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace npusim {

struct CompareOptions {
    std::vector<std::string> kernels;
    std::vector<std::string> run_args;  // passed to every `npusim run` (--dtype, --shape, --config, --set ...)
    std::string npusim_exe;
};

// One JSON report per kernel, in order. Throws npusim::Error when a kernel
// cannot run (bad input); a kernel that runs but fails its check is kept.
std::vector<nlohmann::json> run_compare(const CompareOptions &opts);

std::string compare_table(const std::vector<nlohmann::json> &reports);
nlohmann::json compare_json(const std::vector<nlohmann::json> &reports);
std::string compare_csv(const std::vector<nlohmann::json> &reports);

}  // namespace npusim
