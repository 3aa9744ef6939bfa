// Sweep specs: validation messages, grid/zip expansion, point-id stability,
// one spec per output folder, per-point limits, and a stopped or killed
// sweep taking its point processes with it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include "error.h"
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "compare.h"
#include "report.h"
#include "runner.h"
#include "sweep.h"

using namespace npusim;

namespace {

std::string write_spec(const std::string &name, const std::string &text)
{
    std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

std::string error_of(const std::string &text)
{
    try {
        expand_sweep(load_sweep(write_spec("bad.yaml", text)));
    } catch (const Error &e) {
        std::string m = e.what();
        size_t at = m.find("bad.yaml");
        return at == std::string::npos ? m : m.substr(at);
    }
    return "(no error)";
}

}  // namespace

TEST(Sweep, GridIsCrossedAndZipMovesInLockStep)
{
    SweepSpec s = load_sweep(write_spec("g.yaml",
                                        "kernels: [relu, gelu_tanh]\n"
                                        "dtypes: [fp16, fp32]\n"
                                        "grid:\n  core.vlen: [128, 256, 512]\n  units.sfu.latency: [8, 12]\n"
                                        "zip:\n  issue.width: [1, 2]\n  issue.slots: [any, 'any,any']\n"));
    std::vector<SweepPoint> pts = expand_sweep(s);
    EXPECT_EQ(pts.size(), 2u * 2u * 3u * 2u * 2u);
    std::set<std::string> ids;
    for (const SweepPoint &p : pts)
        ids.insert(p.id);
    EXPECT_EQ(ids.size(), pts.size());
    // Zip rows keep width and slots together.
    for (const SweepPoint &p : pts)
        EXPECT_EQ(p.config.timing.issue_width == 1, p.config.timing.slot_classes[1] == 0);
    // The last grid key varies fastest.
    EXPECT_EQ(pts[0].config.core.vlen_bits, 128u);
    EXPECT_EQ(pts[0].config.timing.unit[NPU_UNIT_SFU].latency, 8u);
    EXPECT_EQ(pts[2].config.timing.unit[NPU_UNIT_SFU].latency, 12u);
}

TEST(Sweep, PointIdsAreStableAndDependOnWhatRuns)
{
    Config a = default_config();
    std::string id = point_id(a, "relu", "fp16", "1,64,56,56");
    EXPECT_EQ(id.size(), 16u);
    EXPECT_EQ(id, point_id(default_config(), "relu", "fp16", "1,64,56,56"));
    EXPECT_NE(id, point_id(a, "relu", "fp32", "1,64,56,56"));
    EXPECT_NE(id, point_id(a, "relu", "fp16", "1,64,56,57"));
    Config b = a;
    apply_override(b, "core.vlen=512");
    EXPECT_NE(id, point_id(b, "relu", "fp16", "1,64,56,56"));
    // Where the config came from is not part of the point.
    b = a;
    b.source = "elsewhere.yaml";
    EXPECT_EQ(id, point_id(b, "relu", "fp16", "1,64,56,56"));
    // Measured tiles are another run.
    EXPECT_NE(id, point_id(a, "relu", "fp16", "1,64,56,56", true));
}

TEST(Sweep, SpecErrorsNameFileLineAndKey)
{
    EXPECT_EQ(error_of("kernels: [relu]\ngrid:\n  core.vlne: [1]\n"),
              "bad.yaml:3:3: grid.core.vlne: unknown config key (see `npusim config docs`)");
    EXPECT_EQ(error_of("kernels: [relu]\nzip:\n  core.vlen: [128, 256]\n  system.cores: [1]\n"),
              "bad.yaml:3:3: zip.system.cores: has 1 values but zip.core.vlen has 2 (zip lists move in lock-step)");
    EXPECT_EQ(error_of("kernels: [relu]\nsweep: 3\n"),
              "bad.yaml:2:1: sweep: unknown key (base, kernels, dtypes, shapes, set, grid, zip, limits, tiling)");
    EXPECT_EQ(error_of("dtypes: [fp16]\n"), "bad.yaml: kernels: at least one kernel is needed");
    EXPECT_EQ(error_of("kernels: [relu]\ngrid:\n  core.vlen: [100]\n"),
              "bad.yaml:3:15: grid.core.vlen: 100 is out of range (128 .. 2048 bits)");
}

TEST(Sweep, ASpecIsOneYamlDocument)
{
    EXPECT_EQ(error_of("kernels: [relu]\n---\nkernels: [gelu_tanh]\n"),
              "bad.yaml:2:1: a second YAML document (after '---'): a sweep spec is one document");
    // yaml-cpp's Load reads a stray top-level ',' as an empty document.
    EXPECT_EQ(error_of(", kernels: [relu]\n"), "bad.yaml:1:1: cannot parse this: it is not the start of a YAML value "
                                                "(a stray ',' or ']' outside a [ ] or { } list?)");
}

TEST(Sweep, KeyInGridAndZipIsAnError)
{
    EXPECT_EQ(error_of("kernels: [relu]\ngrid:\n  core.vlen: [128, 256]\nzip:\n  core.vlen: [512]\n"),
              "bad.yaml:5:3: zip.core.vlen: also in grid (a key is either crossed or zipped, not both)");
    EXPECT_EQ(error_of("kernels: [relu]\nzip:\n  core.vlen: [512]\ngrid:\n  system.cores: [1]\n  core.vlen: [128]\n"),
              "bad.yaml:6:3: grid.core.vlen: also in zip (a key is either crossed or zipped, not both)");
}

TEST(Sweep, RepeatedValuesAreErrors)
{
    EXPECT_EQ(error_of("kernels: [relu, mish, relu]\n"),
              "bad.yaml:1:23: kernels: 'relu' is listed twice (its points would share one id)");
    EXPECT_EQ(error_of("kernels: [relu]\ndtypes: [fp32, fp32]\n"),
              "bad.yaml:2:16: dtypes: 'fp32' is listed twice (its points would share one id)");
    EXPECT_EQ(error_of("kernels: [relu]\nshapes:\n  - \"1,64,56,56\"\n  - \"1,64,56,56\"\n"),
              "bad.yaml:4:5: shapes: '1,64,56,56' is listed twice (its points would share one id)");
    EXPECT_EQ(error_of("kernels: [relu]\ngrid:\n  core.vlen: [128, 256, 128]\n"),
              "bad.yaml:3:25: grid.core.vlen: '128' is listed twice (its points would share one id)");
    // Two zip rows that are the same point.
    const std::string id =
        expand_sweep(load_sweep_text("kernels: [relu]\nset: {core.vlen: 128, system.cores: 1}\n", "x.yaml"))[0].id;
    EXPECT_EQ(error_of("kernels: [relu]\nzip:\n  core.vlen: [128, 256, 128]\n  system.cores: [1, 1, 1]\n"),
              "bad.yaml: points 0 and 2 are the same point (id " + id + ": their overrides resolve to one config)");
    // A zip value may repeat when another zip key moves with it.
    EXPECT_EQ(expand_sweep(load_sweep_text("kernels: [relu]\nzip:\n  core.vlen: [128, 128]\n  system.cores: [1, 2]\n",
                                           "ok.yaml"))
                  .size(),
              2u);
}

TEST(Sweep, RepeatedMappingKeysAreErrors)
{
    EXPECT_EQ(error_of("kernels: [relu]\ngrid:\n  core.vlen: [128]\n  system.cores: [1, 2]\n  core.vlen: [256]\n"),
              "bad.yaml:5:3: grid.core.vlen: repeated key (first at line 3)");
    EXPECT_EQ(error_of("kernels: [relu]\nzip:\n  core.vlen: [128]\n  core.vlen: [256]\n"),
              "bad.yaml:4:3: zip.core.vlen: repeated key (first at line 3)");
    EXPECT_EQ(error_of("kernels: [relu]\nset:\n  core.vlen: 128\n  core.vlen: 256\n"),
              "bad.yaml:4:3: set.core.vlen: repeated key (first at line 3)");
    EXPECT_EQ(error_of("kernels: [relu]\nkernels: [mish]\n"), "bad.yaml:2:1: kernels: repeated key (first at line 1)");
}

TEST(Sweep, PointCountIsLimitedBeforeExpanding)
{
    // 7 keys of 10 values: 10^7 points, refused without expanding them.
    std::string text = "kernels: [relu]\ngrid:\n";
    for (const char *unit : {"scalar", "branch", "valu", "sfu", "lsu", "dma", "sync"})
        text += std::string("  units.") + unit + ".latency: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
    EXPECT_EQ(sweep_point_count(load_sweep_text(text, "big.yaml")), 10000000u);
    EXPECT_EQ(error_of(text),
              "bad.yaml: 10000000 points; a sweep may have at most 100000 (split it into several specs)");
    // The product is checked for overflow: 20 axes of 10 values.
    SweepSpec s = load_sweep_text("kernels: [relu]\n", "huge.yaml");
    for (int i = 0; i < 20; i++)
        s.grid.push_back({"core.vlen", std::vector<std::string>(10, "128")});
    EXPECT_EQ(sweep_point_count(s), UINT64_MAX);
    try {
        expand_sweep(s);
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_STREQ(e.what(),
                     "huge.yaml: more than 18446744073709551615 points; a sweep may have at most 100000 (split it into "
                     "several specs)");
    }
    // The limit is a named, documented constant.
    EXPECT_EQ(kMaxSweepPoints, 100000u);
}

namespace {

// A sweep folder whose points "run" as /bin/true: status ok, no stats.
std::string fresh_dir(const std::string &name)
{
    std::string dir = ::testing::TempDir() + "/" + name;
    std::filesystem::remove_all(dir);
    return dir;
}

unsigned run_into(const std::string &dir, const std::string &spec_text)
{
    SweepSpec spec = load_sweep_text(spec_text, "spec.yaml");
    SweepRunOptions o;
    o.out_dir = dir;
    o.jobs = 1;
    // A point's run that only writes its stats (merge counts a point done
    // by its status and its stats).
    static const std::string exe = [] {
        const std::string path = ::testing::TempDir() + "/sweep_stats_only.sh";
        std::ofstream(path) << "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --json ] && echo '{}' > \"$2\"; shift; done\n"
                               "exit 0\n";
        std::filesystem::permissions(path, std::filesystem::perms::owner_all);
        return path;
    }();
    o.npusim_exe = exe;
    return run_sweep(spec, expand_sweep(spec), o).failed;
}

std::string read_all(const std::string &path)
{
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string error_of_run(const std::string &dir, const std::string &spec_text)
{
    try {
        run_into(dir, spec_text);
    } catch (const Error &e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(Sweep, FolderBelongsToOneSpec)
{
    const std::string a = "kernels: [relu]\ngrid:\n  core.vlen: [128, 256]\n";
    const std::string b = "kernels: [gelu_tanh]\n";
    const std::string dir = fresh_dir("sweep_one_spec");
    ASSERT_EQ(run_into(dir, a), 0u);
    const std::string manifest = read_all(dir + "/points.json");
    // The same spec again resumes.
    EXPECT_EQ(run_into(dir, a), 0u);
    // Another spec is refused, naming what differs, and leaves the folder as it was.
    EXPECT_EQ(error_of_run(dir, b), dir + ": holds the sweep of another spec (kernels: [\"relu\"] there, "
                                          "[\"gelu_tanh\"] in this spec); use another output folder");
    EXPECT_EQ(error_of_run(dir, "kernels: [relu]\ngrid:\n  core.vlen: [128, 256, 512]\n"),
              dir + ": holds the sweep of another spec (grid: [{\"core.vlen\":[\"128\",\"256\"]}] there, "
                    "[{\"core.vlen\":[\"128\",\"256\",\"512\"]}] in this spec); use another output folder");
    EXPECT_EQ(read_all(dir + "/points.json"), manifest);
    MergeSummary m = merge_sweep(dir, dir + "/out.csv", "");
    EXPECT_EQ(m.points, 2u);
    EXPECT_EQ(m.done, 2u);
    // A folder from before spec.json is judged by its points alone.
    std::filesystem::remove(dir + "/spec.json");
    EXPECT_EQ(error_of_run(dir, b),
              dir + ": holds another sweep's points (2 points, this spec has 1, first difference at point 0); use "
                    "another output folder");
    EXPECT_EQ(run_into(dir, a), 0u);  // the same spec resumes and records itself
    EXPECT_NE(read_all(dir + "/spec.json"), "");
}

TEST(Sweep, SpecsWithTheSamePointsButAnotherBaseOrSetAreRefused)
{
    // The default core.vlen is 256: `set` changes no point, yet it is another spec.
    const std::string dir = fresh_dir("sweep_same_points");
    ASSERT_EQ(run_into(dir, "kernels: [relu]\n"), 0u);
    const std::string set = "kernels: [relu]\nset: {core.vlen: 256}\n";
    EXPECT_EQ(expand_sweep(load_sweep_text(set, "x.yaml"))[0].id,
              expand_sweep(load_sweep_text("kernels: [relu]\n", "x.yaml"))[0].id);
    EXPECT_EQ(error_of_run(dir, set), dir + ": holds the sweep of another spec (set.core.vlen: unset there, 256 in "
                                            "this spec); use another output folder");
    // The base is judged by its values: the same values resume from any path,
    // an edited base file is another spec.
    const std::string base_dir = fresh_dir("sweep_bases"), out = fresh_dir("sweep_base_out");
    std::filesystem::create_directories(base_dir);
    std::ofstream(base_dir + "/a.yaml") << "core:\n  vlen: 512\n";
    std::ofstream(base_dir + "/b.yaml") << "# the same machine\ncore: {vlen: 512}\n";
    ASSERT_EQ(run_into(out, "base: " + base_dir + "/a.yaml\nkernels: [relu]\n"), 0u);
    EXPECT_EQ(run_into(out, "base: " + base_dir + "/b.yaml\nkernels: [relu]\n"), 0u);
    std::ofstream(base_dir + "/a.yaml") << "core:\n  vlen: 512\nl2:\n  mshrs: 8\n";
    EXPECT_EQ(error_of_run(out, "base: " + base_dir + "/a.yaml\nkernels: [relu]\n"),
              out + ": holds the sweep of another spec (base.l2.mshrs: 32 there, 8 in this spec); use another output "
                    "folder");
    // Limits are not part of the spec's content: raising one resumes.
    EXPECT_EQ(run_into(out, "base: " + base_dir + "/b.yaml\nkernels: [relu]\nlimits: {max_cycles: 9}\n"), 0u);
}

TEST(Sweep, LimitsAreWholeNumbersUnderKnownKeys)
{
    SweepSpec s = load_sweep_text("kernels: [relu]\nlimits: {max_cycles: 100000, max_instructions: 0}\n", "l.yaml");
    EXPECT_EQ(s.limits.max_cycles, std::optional<uint64_t>(100000));
    EXPECT_EQ(s.limits.max_instructions, std::optional<uint64_t>(0));
    EXPECT_FALSE(load_sweep_text("kernels: [relu]\n", "l.yaml").limits.max_cycles);
    const std::string whole = ": expected a whole number (0 .. 2^64 - 1; 0: no limit)";
    EXPECT_EQ(error_of("kernels: [relu]\nlimits: {max_cycles: -5}\n"),
              "bad.yaml:2:22: limits.max_cycles" + whole + ", got '-5'");
    EXPECT_EQ(error_of("kernels: [relu]\nlimits:\n  max_instructions: 1.5\n"),
              "bad.yaml:3:21: limits.max_instructions" + whole + ", got '1.5'");
    EXPECT_EQ(error_of("kernels: [relu]\nlimits:\n  max_cycles: 18446744073709551616\n"),
              "bad.yaml:3:15: limits.max_cycles" + whole + ", got '18446744073709551616'");
    EXPECT_EQ(error_of("kernels: [relu]\nlimits:\n  max_cycles: [1]\n"), "bad.yaml:3:15: limits.max_cycles" + whole);
    // A quoted "5" is a string, not the number (config values aside, which are --set's text).
    EXPECT_EQ(error_of("kernels: [relu]\nlimits:\n  max_cycles: \"5\"\n"),
              "bad.yaml:3:15: limits.max_cycles: '5' is quoted: a number is written without quotes");
    EXPECT_EQ(error_of("kernels: [relu]\nlimits:\n  max_cycle: 5\n"),
              "bad.yaml:3:3: limits.max_cycle: unknown key (max_cycles, max_instructions)");
    EXPECT_EQ(error_of("kernels: [relu]\nlimits:\n  max_cycles: 5\n  max_cycles: 6\n"),
              "bad.yaml:4:3: limits.max_cycles: repeated key (first at line 3)");
    EXPECT_EQ(error_of("kernels: [relu]\nlimits: 5\n"),
              "bad.yaml:2:9: limits: expected a mapping (max_cycles, max_instructions)");
    EXPECT_EQ(parse_count("18446744073709551615"), std::optional<uint64_t>(UINT64_MAX));
    EXPECT_FALSE(parse_count(""));
    EXPECT_FALSE(parse_count("+1"));
}

TEST(Sweep, MergeRefusesForeignResults)
{
    const std::string dir = fresh_dir("sweep_foreign");
    ASSERT_EQ(run_into(dir, "kernels: [relu]\n"), 0u);
    EXPECT_EQ(merge_sweep(dir, dir + "/out.csv", "").done, 1u);
    // A folder left without a status (a point that never started) is not a result.
    std::filesystem::create_directories(dir + "/points/00000000000000aa");
    EXPECT_EQ(merge_sweep(dir, dir + "/out.csv", "").done, 1u);
    // Another sweep's result, e.g. from before a folder kept to one spec.
    std::filesystem::create_directories(dir + "/points/0123456789abcdef");
    std::ofstream(dir + "/points/0123456789abcdef/status") << "ok\n";
    try {
        merge_sweep(dir, dir + "/out.csv", "");
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()), dir + "/points: 1 result(s) of points that points.json does not list (e.g. "
                                               "0123456789abcdef), from another sweep; move them to their own folder");
    }
}

TEST(Sweep, ShardSyntax)
{
    EXPECT_EQ(parse_shard("0/3"), std::make_pair(0u, 3u));
    EXPECT_EQ(parse_shard("2/3"), std::make_pair(2u, 3u));
    EXPECT_THROW(parse_shard("3/3"), Error);
    EXPECT_THROW(parse_shard("1"), Error);
    EXPECT_THROW(parse_shard("1/0"), Error);
    // sscanf's %u took these, wrapping them to other shards without a word.
    for (const char *wrapped : {"0/4294967298", "-4294967295/3", "0/-1", "1/18446744073709551617", " 1/3", "1/3 "})
        EXPECT_THROW(parse_shard(wrapped), Error) << wrapped;
}

// merge reads points.json as the sweep wrote it: an entry of another shape
// is one line naming the point and the key (an entry without a kernel
// aborted on a JSON assertion), and a point that ended ok without its
// stats (removed, cut short, not JSON) is failed, not a row of empty cells.
TEST(Sweep, MergeChecksThePointsAndTheirStats)
{
    const std::string dir = fresh_dir("sweep_merge_checks");
    ASSERT_EQ(run_into(dir, "kernels: [relu]\n"), 0u);
    const std::string manifest = read_file(dir + "/points.json");
    const nlohmann::json good = nlohmann::json::parse(manifest);
    const std::string id = good[0]["id"];
    const struct {
        const char *key;
        nlohmann::json value;
        const char *error;
    } bad[] = {
        {"kernel", nullptr, "'kernel' must be a string"},
        {"kernel", 5, "'kernel' must be a string"},
        {"index", "a", "'index' must be a whole number"},
        {"index", -1, "'index' must be a whole number"},
        {"id", "../x", "'id' must name a folder of points/"},
        {"id", "", "'id' must name a folder of points/"},
        {"overrides", nlohmann::json::array(), "'overrides' must be an object"},
    };
    for (const auto &b : bad) {
        nlohmann::json edited = good;
        if (b.value.is_null())
            edited[0].erase(b.key);
        else
            edited[0][b.key] = b.value;
        std::ofstream(dir + "/points.json") << edited.dump();
        try {
            merge_sweep(dir, dir + "/out.csv", "");
            ADD_FAILURE() << "no error for " << edited.dump();
        } catch (const Error &e) {
            EXPECT_EQ(std::string(e.what()), dir + "/points.json: point 0: " + b.error);
        }
    }
    std::ofstream(dir + "/points.json") << manifest;
    const std::string stats = dir + "/points/" + id + "/stats.json";
    const std::string kept = read_file(stats);
    for (const char *text : {"", "{bad", "[]"}) {
        if (*text)
            std::ofstream(stats) << text;
        else
            std::filesystem::remove(stats);
        const MergeSummary sum = merge_sweep(dir, dir + "/out.csv", "");
        EXPECT_EQ(sum.done, 0u) << text;
        EXPECT_EQ(sum.failed, 1u) << text;
        EXPECT_NE(read_file(dir + "/out.csv").find(*text ? "ok, but its stats.json is not a JSON object"
                                                     : "ok, but its stats.json is missing"),
                  std::string::npos);
    }
    std::ofstream(stats) << kept;
    EXPECT_EQ(merge_sweep(dir, dir + "/out.csv", "").done, 1u);
}

namespace {

// The npusim binary of this build: unit_tests is BUILD/tests/unit_tests.
std::string npusim_binary()
{
    return (std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "npusim").string();
}

// A kernel that never ends on its own.
std::string loop_kernel()
{
    const std::string path = ::testing::TempDir() + "/sweep_loop.s";
    std::ofstream(path) << "; @kernel     loop\n; @input      x range=-8,8\n; @output     y\n; @dtypes     fp32\n"
                           "; @reference  relu\n; @tolerance  fp32 ulp=0\ntop:\n    j top\n";
    return path;
}

// Parent pid and state of a process, from /proc/PID/stat; state 0 if it is gone.
std::pair<pid_t, char> proc_stat(pid_t pid)
{
    std::string stat = read_all("/proc/" + std::to_string(pid) + "/stat");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 4 > stat.size())
        return {0, 0};
    return {pid_t(std::atol(stat.c_str() + paren + 4)), stat[paren + 2]};
}

bool alive(pid_t pid)
{
    char state = proc_stat(pid).second;
    return state != 0 && state != 'Z';  // a zombie has ended
}

// Polls `done` every 20 ms for at most `seconds`.
template <class F> bool within(double seconds, F done)
{
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > end)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

// `npusim sweep ARGS...` in the background with stderr in a file. On
// destruction it and any point found are SIGKILLed if still there, so a
// failing test leaves no process behind.
class SweepProcess {
public:
    explicit SweepProcess(std::vector<std::string> args) : err_(::testing::TempDir() + "/sweep_stderr.txt")
    {
        args.insert(args.begin(), {npusim_binary(), "sweep"});
        std::vector<char *> argv;
        for (std::string &a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_ = fork();
        if (pid_ == 0) {
            for (int sig : {SIGTERM, SIGINT, SIGHUP})  // as from a shell, whatever this test inherited
                signal(sig, SIG_DFL);
            setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
            if (!freopen(err_.c_str(), "w", stderr) || !freopen("/dev/null", "w", stdout))
                _exit(126);
            execv(argv[0], argv.data());
            _exit(127);
        }
    }
    ~SweepProcess()
    {
        if (status_ < 0 && pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        if (point_ > 0 && alive(point_))
            kill(point_, SIGKILL);
        if (point_ > 0)
            waitpid(point_, nullptr, 0);  // an orphan handed to a Subreaper; else ECHILD at once
    }
    pid_t pid() const { return pid_; }
    // The sweep's `npusim run` child once it runs; -1 if none within 20 s.
    pid_t wait_for_point()
    {
        within(20, [&] {
            for (const auto &e : std::filesystem::directory_iterator("/proc")) {
                const pid_t p = std::atoi(e.path().filename().c_str());
                const std::string cmdline = read_all("/proc/" + std::to_string(p) + "/cmdline");
                if (p > 0 && proc_stat(p).first == pid_ && alive(p) &&
                    cmdline.find(std::string("\0run\0", 5)) != std::string::npos)
                    point_ = p;
            }
            return point_ > 0;
        });
        return point_;
    }
    // The wait status once the sweep ended, -1 if it runs after `seconds`.
    int wait(double seconds)
    {
        within(seconds, [&] { return waitpid(pid_, &status_, WNOHANG) == pid_; });
        return status_;
    }
    std::string err() const { return read_all(err_); }

private:
    pid_t pid_ = -1, point_ = -1;
    int status_ = -1;
    std::string err_;
};

// While it lives, orphans among this process's descendants (the points of a
// SIGKILLed sweep) become its children, so a test can reap them: an init
// that reaps nothing (as in some containers) would keep them as zombies.
struct Subreaper {
    Subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
    ~Subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

std::string loop_spec(const std::string &name, const std::string &more = "")
{
    return write_spec(name, "kernels: [" + loop_kernel() + "]\ndtypes: [fp32]\nshapes: ['1,8,2,2']\n" + more);
}

}  // namespace

TEST(Sweep, PointStoppedByALimitFailsNamingItAndTheSweepGoesOn)
{
    const std::string spec = write_spec("limited.yaml", "kernels: [" + loop_kernel() +
                                                            ", relu]\ndtypes: [fp32]\nshapes: ['1,8,2,2']\n"
                                                            "limits: {max_cycles: 1000}\n");
    const std::string dir = fresh_dir("sweep_limited");
    const std::vector<SweepPoint> points = expand_sweep(load_sweep(spec));
    const std::string loop_status = dir + "/points/" + points[0].id + "/status";
    {
        SweepProcess sweep({spec, "-o", dir, "-j", "1"});
        const int st = sweep.wait(60);
        ASSERT_TRUE(WIFEXITED(st)) << sweep.err();
        EXPECT_EQ(WEXITSTATUS(st), 1);
        EXPECT_NE(sweep.err().find("2/2 points done (0 skipped as already done, 1 failed)"), std::string::npos)
            << sweep.err();
    }
    EXPECT_EQ(read_all(loop_status),
              "failed: trap: core 0: max_cycles at pc 0 (j @0) [" + loop_kernel() +
                  ":8], core stopped at cycle 1000, after 1001 instructions: stopped at cycle 1000, its first step at or past the run's cycle limit of 1000\n");
    EXPECT_EQ(read_all(dir + "/points/" + points[1].id + "/status"), "ok\n");
    // The flags override the spec's limits; the same spec resumes (limits are
    // not part of it) and reruns only the failed point.
    SweepProcess again({spec, "-o", dir, "-j", "1", "--max-cycles", "0", "--max-instructions", "500"});
    const int st = again.wait(60);
    ASSERT_TRUE(WIFEXITED(st)) << again.err();
    EXPECT_EQ(WEXITSTATUS(st), 1);
    EXPECT_NE(again.err().find("2/2 points done (1 skipped as already done, 1 failed)"), std::string::npos)
        << again.err();
    EXPECT_NE(read_all(loop_status).find("after 500 instructions: stopped after 500 instructions, the run's instruction limit"),
              std::string::npos)
        << read_all(loop_status);
}

TEST(Sweep, LimitFlagsAreWholeNumbers)
{
    SweepProcess sweep({loop_spec("flags.yaml"), "-o", fresh_dir("sweep_flags"), "--max-cycles", "-1"});
    const int st = sweep.wait(30);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 2);
    EXPECT_EQ(sweep.err(), "sweep: --max-cycles: expected a whole number (0 .. 2^64 - 1; 0: no limit), got '-1'\n");
}

TEST(Sweep, KilledSweepTakesItsPointWithIt)
{
    // No instruction limit: the point runs until something stops it.
    const Subreaper subreaper;
    SweepProcess sweep(
        {loop_spec("endless.yaml"), "-o", fresh_dir("sweep_killed"), "-j", "1", "--max-instructions", "0"});
    const pid_t point = sweep.wait_for_point();
    ASSERT_GT(point, 0) << "no `npusim run` child appeared\n" << sweep.err();
    kill(sweep.pid(), SIGKILL);
    const int st = sweep.wait(10);
    ASSERT_NE(st, -1) << "the sweep still runs 10 s after SIGKILL";
    ASSERT_TRUE(WIFSIGNALED(st));
    EXPECT_TRUE(within(5, [&] { return !alive(point); })) << "point " << point << " outlived its sweep";
}

TEST(Sweep, StoppedSweepStopsItsPointsAndExits128PlusTheSignal)
{
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
        SCOPED_TRACE(strsignal(sig));
        const std::string dir = fresh_dir("sweep_stopped");
        const std::string spec = loop_spec("stopped.yaml", "limits: {max_instructions: 0}\n");
        SweepProcess sweep({spec, "-o", dir, "-j", "1"});
        const pid_t point = sweep.wait_for_point();
        ASSERT_GT(point, 0) << "no `npusim run` child appeared\n" << sweep.err();
        kill(sweep.pid(), sig);
        const int st = sweep.wait(10);
        ASSERT_NE(st, -1) << "the sweep still runs 10 s after the signal";
        ASSERT_TRUE(WIFEXITED(st)) << sweep.err();
        EXPECT_EQ(WEXITSTATUS(st), 128 + sig);
        EXPECT_FALSE(alive(point));  // waited for before the sweep exits
        EXPECT_NE(sweep.err().find("sweep: stopped by signal " + std::to_string(sig) + " (" + strsignal(sig) +
                                   "); the points it stopped have no status and run on the next run\n"),
                  std::string::npos)
            << sweep.err();
        // The stopped point is no result: merge counts it missing.
        const std::string id = expand_sweep(load_sweep(spec))[0].id;
        EXPECT_FALSE(std::filesystem::exists(dir + "/points/" + id + "/status"));
        EXPECT_EQ(merge_sweep(dir, dir + "/out.csv", "").missing, 1u);
    }
}

// A kernel given as a path is taken from the spec's folder, as base: is (it
// was looked for from the current folder); its id is the text as written.
TEST(Sweep, AKernelGivenAsAPathIsTakenFromTheSpecsFolder)
{
    const std::string dir = fresh_dir("sweep_kernel_path");
    std::filesystem::create_directories(dir + "/k");
    std::ofstream(dir + "/k/mine.s") << "; @kernel     mine\n; @input      x range=-8,8\n; @output     y\n"
                                        "; @dtypes     fp16 fp32\n; @reference  relu\n; @tolerance  fp16 ulp=0\n"
                                        "; @tolerance  fp32 ulp=0\n    halt\n";
    std::ofstream(dir + "/s.yaml") << "kernels: [k/mine.s, relu]\nshapes: ['1,16,8,8']\n";
    const std::vector<SweepPoint> points = expand_sweep(load_sweep(dir + "/s.yaml"));
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].kernel, "k/mine.s");
    EXPECT_EQ(points[0].kernel_file, dir + "/k/mine.s");
    EXPECT_EQ(points[1].kernel_file, "relu");
    // The same spec from its own folder: the same points, the same ids.
    const std::string here = std::filesystem::current_path();
    std::filesystem::current_path(dir);
    const std::vector<SweepPoint> again = expand_sweep(load_sweep("s.yaml"));
    std::filesystem::current_path(here);
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].id, points[0].id);
    EXPECT_EQ(again[0].kernel_file, "k/mine.s");
}

// A point killed by a stop signal is stopped, not failed, whether the sweep
// got one too (a terminal's ^C reaches the whole group: the point could be
// reaped first and was marked "failed: killed by signal 2") or not.
TEST(Sweep, APointStoppedByASignalIsNotAFailure)
{
    for (int sig : {SIGINT, SIGTERM}) {
        SCOPED_TRACE(strsignal(sig));
        const std::string dir = fresh_dir("sweep_point_stopped");
        const std::string spec = loop_spec("point_stopped.yaml", "limits: {max_instructions: 0}\n");
        SweepProcess sweep({spec, "-o", dir, "-j", "1"});
        const pid_t point = sweep.wait_for_point();
        ASSERT_GT(point, 0) << "no `npusim run` child appeared\n" << sweep.err();
        kill(point, sig);  // the point alone: the sweep goes on, and ends
        const int st = sweep.wait(10);
        ASSERT_NE(st, -1) << "the sweep still runs 10 s after its point stopped";
        ASSERT_TRUE(WIFEXITED(st)) << sweep.err();
        EXPECT_EQ(WEXITSTATUS(st), 1);
        EXPECT_NE(sweep.err().find("sweep: 1 point was stopped by a signal; it has no status and runs on the next "
                                   "run\n"),
                  std::string::npos)
            << sweep.err();
        const std::string id = expand_sweep(load_sweep(spec))[0].id;
        EXPECT_FALSE(std::filesystem::exists(dir + "/points/" + id + "/status"));
        EXPECT_EQ(merge_sweep(dir, dir + "/out.csv", "").missing, 1u);
    }
}

// `tiling: measure` runs every point with --tiling measure and is part of the
// spec; `tiling: rule` is the default, the same spec as none.
TEST(Sweep, TilingMeasureIsPassedToEveryPointAndIsPartOfTheSpec)
{
    EXPECT_EQ(error_of("kernels: [relu]\ntiling: guess\n"), "bad.yaml:2:9: tiling: 'guess' is not rule or measure");
    const std::string dir = fresh_dir("sweep_tiling");
    ASSERT_EQ(run_into(dir, "kernels: [relu]\n"), 0u);
    EXPECT_EQ(run_into(dir, "kernels: [relu]\ntiling: rule\n"), 0u);
    EXPECT_EQ(error_of_run(dir, "kernels: [relu]\ntiling: measure\n"),
              dir + ": holds the sweep of another spec (tiling: unset there, measure in this spec); use another "
                    "output folder");
    const std::string spec = write_spec("measured.yaml", "kernels: [relu]\nshapes: ['1,16,8,8']\ntiling: measure\n");
    const std::string out = fresh_dir("sweep_measured");
    SweepProcess sweep({spec, "-o", out, "-j", "1"});
    const int st = sweep.wait(60);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << sweep.err();
    const SweepPoint p = expand_sweep(load_sweep(spec))[0];
    const nlohmann::json stats = nlohmann::json::parse(read_all(out + "/points/" + p.id + "/stats.json"));
    EXPECT_EQ(stats["tiling"]["reason"], "measured");
}

TEST(Sweep, AKeyIsSetCrossedOrZippedOnlyOnce)
{
    // set's 256 was dropped for the grid's values without a word.
    EXPECT_EQ(error_of("kernels: relu\nset: {core.vlen: 256}\ngrid: {core.vlen: [512, 1024]}\n"),
              "bad.yaml:3:8: grid.core.vlen: also in set (a key is either set, crossed or zipped: set's value would "
              "never run)");
    EXPECT_EQ(error_of("kernels: relu\nzip: {core.vlen: [512, 1024]}\nset: {core.vlen: 256}\n"),
              "bad.yaml:3:7: set.core.vlen: also in zip (a key is either set, crossed or zipped: set's value would "
              "never run)");
}

TEST(Sweep, AOneValueListIsNotAValue)
{
    // [512] was taken as 512 where --set core.vlen=[512] is refused.
    EXPECT_EQ(error_of("kernels: relu\nset: {core.vlen: [512]}\n"),
              "bad.yaml:2:18: set.core.vlen: expected a single value, not a list");
    EXPECT_EQ(error_of("kernels: relu\ngrid: {core.vlen: [[512]]}\n"),
              "bad.yaml:2:20: grid.core.vlen: expected a single value, not a list");
    EXPECT_EQ(error_of("kernels: [[relu]]\n"), "bad.yaml:1:11: kernels: expected a single value, not a list");
    // issue.slots is a list key.
    EXPECT_EQ(expand_sweep(load_sweep_text("kernels: relu\nzip: {issue.width: [1, 2], issue.slots: [[any], [any, any]]}\n",
                                           "ok.yaml"))
                  .size(),
              2u);
}

TEST(Sweep, AShapeIsItsRunsNchwWhateverItsSpelling)
{
    // "1,16,8,8" and "16,8,8" were two ids for one run (so were "1, 16, 8,
    // 8", "+1,16,8,8" and "1,16,8,8,", which parse_shape now refuses).
    for (const char *other : {"16,8,8", "01,16,8,8", "1,016,8,8"})
        EXPECT_EQ(error_of("kernels: relu\nshapes: [\"1,16,8,8\", \"" + std::string(other) + "\"]\n"),
                  "bad.yaml:2:22: shapes: '" + std::string(other) + "' is listed twice (as 1,16,8,8; its points would "
                  "share one id)")
            << other;
    const std::vector<SweepPoint> a = expand_sweep(load_sweep_text("kernels: relu\nshapes: [\"16,8,8\"]\n", "a.yaml"));
    const std::vector<SweepPoint> b = expand_sweep(load_sweep_text("kernels: relu\nshapes: [\"1,16,8,8\"]\n", "b.yaml"));
    EXPECT_EQ(a[0].shape, "1,16,8,8");
    EXPECT_EQ(a[0].id, b[0].id);
    EXPECT_EQ(b[0].id, point_id(default_config(), "relu", "fp16", "1,16,8,8"));
}

// An infinite error is null in a report's JSON; both CSV writers leave its
// cell empty (NaN to a reader), where compare --csv wrote "inf" and merge "".
TEST(Sweep, AnInfiniteErrorIsAnEmptyCellInMergesCsvAsInCompares)
{
    RunOptions o;
    o.kernel = "relu";
    o.dtype = "fp16";
    o.shape = {1, 16, 2, 2};
    RunResult r = run_kernel(o);
    r.accuracy.max_ulp = INFINITY;
    const nlohmann::json report = report_json(r);
    ASSERT_TRUE(report.at("accuracy").at("max_ulp").is_null());

    const std::string compared = compare_csv({report});
    const std::string header = compared.substr(0, compared.find('\n'));
    ASSERT_EQ(header.substr(header.rfind(',') + 1), "max ULP");
    EXPECT_EQ(compared.substr(compared.size() - 2), ",\n") << compared;  // the row's last cell, max ULP, empty
    EXPECT_TRUE(nlohmann::json::parse(compare_json({report}).dump())[0].at("max ULP").is_null());  // as written

    const std::string dir = fresh_dir("sweep_infinite_error");
    std::filesystem::create_directories(dir + "/points/p0");
    std::ofstream(dir + "/points.json") << R"([{"index": 0, "id": "p0", "kernel": "relu", "dtype": "fp16", "overrides": {}}])";
    std::ofstream(dir + "/points/p0/status") << "ok\n";
    std::ofstream(dir + "/points/p0/stats.json") << report.dump();
    ASSERT_EQ(merge_sweep(dir, dir + "/out.csv", "").done, 1u);
    const std::string merged = read_all(dir + "/out.csv");
    // One CSV line's cells; a quoted cell ("a,b") is one.
    auto cells_of = [](const std::string &line) {
        std::vector<std::string> out(1);
        bool quoted = false;
        for (char c : line) {
            if (c == '"')
                quoted = !quoted;
            else if (c == ',' && !quoted)
                out.emplace_back();
            else
                out.back() += c;
        }
        return out;
    };
    const size_t eol = merged.find('\n');
    const std::vector<std::string> cols = cells_of(merged.substr(0, eol)),
                                   cells = cells_of(merged.substr(eol + 1, merged.find('\n', eol + 1) - eol - 1));
    const auto at = std::find(cols.begin(), cols.end(), "accuracy.max_ulp");
    ASSERT_NE(at, cols.end()) << merged;
    ASSERT_EQ(cols.size(), cells.size()) << merged;
    EXPECT_EQ(cells[size_t(at - cols.begin())], "");
    EXPECT_EQ(cells[size_t(std::find(cols.begin(), cols.end(), "accuracy.checked") - cols.begin())], "64");
}
