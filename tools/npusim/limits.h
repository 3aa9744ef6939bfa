// Limits checked up front: a run (or a sweep) that cannot fit in host memory
// or on disk is refused before it starts, with an estimate of what it needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "npusim/tensor.h"

namespace npusim {

// Host bytes one run allocates, roughly: per tensor its NC1HWC0 image in GM,
// its logical NCHW copy (inputs generated or read, outputs unpacked) and the
// double-precision reference; per core its UB and core state. Saturates at
// UINT64_MAX instead of wrapping.
uint64_t run_bytes_needed(const npu_layout &layout, unsigned tensors, unsigned cores, size_t ub_bytes);

// Memory this process may still allocate: MemAvailable from /proc/meminfo
// (sysinfo's free + buffer RAM without it), capped by RLIMIT_AS and
// RLIMIT_DATA when they are set.
uint64_t available_memory_bytes();

// Throws npusim::Error ("the run needs about 7.6 TB of memory (...) but only
// 12.3 GB are available") when run_bytes_needed() exceeds `available`
// (default: available_memory_bytes()).
void check_run_fits(const npu_layout &layout, unsigned tensors, unsigned cores, size_t ub_bytes);
void check_run_fits(const npu_layout &layout, unsigned tensors, unsigned cores, size_t ub_bytes,
                    uint64_t available);

// Free bytes on the file system holding `dir` (or its nearest existing
// parent), for unprivileged users; UINT64_MAX when it cannot be told.
uint64_t available_disk_bytes(const std::string &dir);
// Throws npusim::Error when `points` outputs of about `bytes_per_point` each
// do not fit in available_disk_bytes(dir) (or `available`).
void check_sweep_fits(const std::string &dir, uint64_t points, uint64_t bytes_per_point);
void check_sweep_fits(const std::string &dir, uint64_t points, uint64_t bytes_per_point, uint64_t available);

// "12.3 GB" (decimal units, 3 significant digits), for messages.
std::string human_bytes(uint64_t bytes);

}  // namespace npusim
