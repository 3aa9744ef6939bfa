// Output files are written to a temporary name beside the target and renamed
// into place, so a killed run never leaves a truncated file that looks complete.
#pragma once

#include <string>

namespace npusim {

// Writes `data` to `path` atomically: to `path`.tmp.PID, flushed to disk
// (fsync), then renamed over `path`. Throws npusim::Error on failure.
void write_file_atomic(const std::string &path, const std::string &data);

// Removes the `path`.tmp.PID files of processes that no longer run (a run
// killed before its rename). Those of running processes are left alone.
void remove_stale_temps(const std::string &path);

// Writes `text` to stdout for "-", else as write_file_atomic does.
void write_output(const std::string &path, const std::string &text);

// Reads a whole file. Throws npusim::Error naming the file on failure.
std::string read_file(const std::string &path);

}  // namespace npusim
