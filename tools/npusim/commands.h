// Subcommands that study many runs: sweep, merge, compare. Each registers
// its options on the app and returns the action main() calls when it was
// chosen, so main.cc stays a list of commands.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace npusim {

struct Command {
    CLI::App *sub;
    std::function<int()> run;
};

std::vector<Command> add_study_commands(CLI::App &app);

// A whole number in 0 .. 2^64 - 1, written in decimal (whole_number_problem,
// runner.h): CLI11 would wrap `-1` or saturate a 30-digit seed without a word.
extern const CLI::Validator kUint64;

// The running binary, for commands that start `npusim run` children.
std::string self_exe();
// Folder of the helper scripts (tools/), for plots.
std::string tools_dir();

}  // namespace npusim
