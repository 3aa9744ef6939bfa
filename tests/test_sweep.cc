// Sweep specs: validation messages, grid/zip expansion, point-id stability,
// one spec per output folder.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "error.h"
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
    EXPECT_EQ(pts[0].config.timing.unit[UNIT_SFU].latency, 8u);
    EXPECT_EQ(pts[2].config.timing.unit[UNIT_SFU].latency, 12u);
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
}

TEST(Sweep, SpecErrorsNameFileLineAndKey)
{
    EXPECT_EQ(error_of("kernels: [relu]\ngrid:\n  core.vlne: [1]\n"),
              "bad.yaml:3:3: grid.core.vlne: unknown config key (see `npusim config docs`)");
    EXPECT_EQ(error_of("kernels: [relu]\nzip:\n  core.vlen: [128, 256]\n  system.cores: [1]\n"),
              "bad.yaml:3:3: zip.system.cores: has 1 values but zip.core.vlen has 2 (zip lists move in lock-step)");
    EXPECT_EQ(error_of("kernels: [relu]\nsweep: 3\n"),
              "bad.yaml:2:1: sweep: unknown key (base, kernels, dtypes, shapes, set, grid, zip)");
    EXPECT_EQ(error_of("dtypes: [fp16]\n"), "bad.yaml: kernels: at least one kernel is needed");
    EXPECT_EQ(error_of("kernels: [relu]\ngrid:\n  core.vlen: [100]\n"),
              "bad.yaml:3:15: grid.core.vlen: 100 is out of range (128 .. 2048 bits)");
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
    o.npusim_exe = "/bin/true";
    return run_sweep(spec, expand_sweep(spec), o);
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
    // Another spec is refused and leaves the folder as it was.
    EXPECT_EQ(error_of_run(dir, b),
              dir + ": holds another sweep's points (2 points, this spec has 1, first difference at point 0); use "
                    "another output folder");
    EXPECT_EQ(error_of_run(dir, "kernels: [relu]\ngrid:\n  core.vlen: [128, 256, 512]\n"),
              dir + ": holds another sweep's points (2 points, this spec has 3, first difference at point 2); use "
                    "another output folder");
    EXPECT_EQ(read_all(dir + "/points.json"), manifest);
    MergeSummary m = merge_sweep(dir, dir + "/out.csv", "");
    EXPECT_EQ(m.points, 2u);
    EXPECT_EQ(m.done, 2u);
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
}
