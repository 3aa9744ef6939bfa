// Sweeps: a YAML spec of kernels x dtypes x shapes x config points (grid:
// crossed, zip: lock-step), each point identified by a hash of what it runs,
// run as separate `npusim run` processes (a crash or a limit stays with its point),
// resumable, shardable, and merged into one tidy table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config.h"

namespace npusim {

struct SweepAxis {
    std::string key;                  // config key, e.g. "core.vlen"
    std::vector<std::string> values;
};

// Limits passed to every point's `npusim run`; unset: the run's default
// (no cycle limit; 1000 x (vectors of all tensors + 64) instructions).
// A point stopped by one fails with the run's trap message.
struct SweepLimits {
    std::optional<uint64_t> max_cycles, max_instructions;  // 0: no limit
};

struct SweepSpec {
    std::string path;                 // the spec file
    std::string base;                 // base config file (resolved path), empty = defaults
    std::vector<std::string> kernels, dtypes, shapes;
    // What each of kernels runs: a name as written, a relative path from the
    // spec's folder (as base:, and as graph specs take theirs).
    std::vector<std::string> kernel_files;
    std::vector<std::pair<std::string, std::string>> set;  // fixed overrides
    std::vector<SweepAxis> grid;      // crossed
    std::vector<SweepAxis> zip;       // lock-step (equal lengths)
    SweepLimits limits;               // limits: {max_cycles: N, max_instructions: N}
    bool measure_tiles = false;       // tiling: measure (npusim run --tiling measure); default rule
};

struct SweepPoint {
    size_t index = 0;
    std::string id;                   // 16 hex digits
    std::string kernel, dtype, shape;  // kernel as the spec writes it (the id's)
    std::string kernel_file;           // what runs (SweepSpec::kernel_files)
    std::vector<std::pair<std::string, std::string>> overrides;  // set + grid + zip values
    Config config;                    // resolved
};

// Throws npusim::Error with `file:line:col: key: message`.
SweepSpec load_sweep(const std::string &path);
// The same from YAML text in memory; `path` names it in messages and is where
// a relative `base` is looked up (fuzzers and tests).
SweepSpec load_sweep_text(const std::string &text, const std::string &path);
// The most points one spec may expand to; past it expand_sweep refuses
// (split the sweep into several specs).
constexpr uint64_t kMaxSweepPoints = 100000;
// kernels x dtypes x shapes x grid sizes x zip length, without expanding;
// UINT64_MAX if the product overflows.
uint64_t sweep_point_count(const SweepSpec &spec);
// Every point, in a stable order. Throws on a bad override value, on more
// than kMaxSweepPoints points, and on two points with one id.
std::vector<SweepPoint> expand_sweep(const SweepSpec &spec);
// The point's id: FNV-1a 64 of its resolved config, kernel, dtype and shape
// (and, with `tiling: measure`, of that).
std::string point_id(const Config &cfg, const std::string &kernel, const std::string &dtype,
                     const std::string &shape, bool measure_tiles = false);

struct SweepRunOptions {
    std::string out_dir;
    unsigned jobs = 0;                // 0: number of cores
    unsigned shard = 0, shards = 1;   // this process runs points with index % shards == shard
    std::string npusim_exe;           // the binary that runs one point
    bool progress_tty = false;
    SweepLimits limits;               // each one set overrides the spec's (--max-cycles, --max-instructions)
};

struct SweepResult {
    unsigned failed = 0;              // points that ended with an error (a limit included)
    int stopped_by = 0;               // the signal (SIGTERM, SIGINT, SIGHUP) that stopped the sweep; 0: none
};

// Runs the points of this shard that are not done yet. Each point gets
// DIR/points/ID/{config.yaml,point.json,stats.json,log.txt,status}.
// A folder belongs to one spec: DIR/spec.json records the spec's content
// (the base config's values, kernels, dtypes, shapes, set, grid, zip; not its
// limits) and DIR/points.json its points; another spec is refused before the
// folder is touched. SIGTERM, SIGINT or SIGHUP stops the sweep: its running
// points get SIGTERM, are waited for and left without a status (a rerun runs
// them). A point dies with the sweep process, even a SIGKILLed one.
SweepResult run_sweep(const SweepSpec &spec, const std::vector<SweepPoint> &points, const SweepRunOptions &opts);

struct MergeSummary {
    size_t points = 0, done = 0, failed = 0, missing = 0;
};
// Writes one CSV row per finished point (flattened dotted keys, e.g.
// l2.hit_rate), optionally JSONL. Expected points come from DIR/points.json;
// result folders under DIR/points/ for ids not listed there (another sweep's
// results) are an error, never silently left out.
MergeSummary merge_sweep(const std::string &dir, const std::string &csv_path, const std::string &jsonl_path);

// The files of a sweep folder that merge reads or a rerun needs (points.json,
// spec.json, each listed point's files), as (what, path) pairs for
// check_inputs_kept: merge's outputs may not replace them.
std::vector<std::pair<std::string, std::string>> sweep_folder_files(const std::string &dir);

// A limit's decimal text (0 .. 2^64 - 1); nullopt if it is not one.
std::optional<uint64_t> parse_count(const std::string &text);

// "i/n" -> (i, n), 0 <= i < n.
std::pair<unsigned, unsigned> parse_shard(const std::string &text);

}  // namespace npusim
