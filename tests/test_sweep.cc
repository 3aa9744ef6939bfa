// Sweep specs: validation messages, grid/zip expansion, point-id stability.
#include <gtest/gtest.h>

#include <fstream>
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

TEST(Sweep, ShardSyntax)
{
    EXPECT_EQ(parse_shard("0/3"), std::make_pair(0u, 3u));
    EXPECT_EQ(parse_shard("2/3"), std::make_pair(2u, 3u));
    EXPECT_THROW(parse_shard("3/3"), Error);
    EXPECT_THROW(parse_shard("1"), Error);
    EXPECT_THROW(parse_shard("1/0"), Error);
}
