// Shared by the tests that drive the npusim binary: a per-process scratch
// folder, file helpers, and running `npusim ARGS` with stdout, stderr and the
// exit status captured.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace cli_test {

struct Result {
    int status;  // exit status; 124 when the run hit the test's own timeout
    std::string out, err;
};

std::string tmpdir();  // created once per test process
std::string slurp(const std::string &path);
void write(const std::string &path, const std::string &text);
int count_lines(const std::string &s);
// Runs NPUSIM_EXE with `args` under `timeout 120`, so a run that hangs fails
// its test instead of hanging the suite.
Result run_cli(const std::string &args);
// `npusim run ARGS --json -`: expects exit 0 and returns the report (a
// discarded value when the output is not JSON).
nlohmann::json run_json(const std::string &args);

}  // namespace cli_test
