// `npusim compare K1 K2 ...`: runs each kernel on the same input and config
// in this process, `jobs` at once in threads (the C engine: the figures of
// `npusim run`'s SystemC engine, as the tests check), and lays the reports
// side by side, in the kernels' order whatever the threads.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner.h"

namespace npusim {

struct CompareOptions {
    std::vector<std::string> kernels;
    RunOptions run;  // every kernel's run (dtype, shape, config, seed, against); its kernel is ignored
    unsigned jobs = 0;  // kernels run at once; 0: the number of cores
};

// One JSON report per kernel, in order. Throws npusim::Error when a kernel
// cannot run (bad input): the first such kernel's, in order, as one after
// another would; a kernel that runs but fails its check is kept.
std::vector<nlohmann::json> run_compare(const CompareOptions &opts);

std::string compare_table(const std::vector<nlohmann::json> &reports);
nlohmann::json compare_json(const std::vector<nlohmann::json> &reports);
std::string compare_csv(const std::vector<nlohmann::json> &reports);

}  // namespace npusim
