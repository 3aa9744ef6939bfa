// Determinism: the same inputs give byte-identical JSON reports (the `sim`
// host-timing object removed) across repeated runs, across `npusim sweep -j 1`
// and `-j 2`, and across sharded sweeps merged into one JSONL.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "cli_helpers.h"

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

using namespace cli_test;

namespace {

using nlohmann::json;

int run(const std::string &args)
{
    std::string cmd = std::string(NPUSIM_EXE) + " " + args + " >/dev/null 2>&1";
    int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The report without what depends on the host: the `sim` timing object, and
// `config.source`, the path of the config file (a sweep point's own folder).
std::string canonical(json j)
{
    j.erase("sim");
    if (j.contains("config") && j["config"].is_object())
        j["config"].erase("source");
    return j.dump(1);
}

std::string run_json(const std::string &name, const std::string &args)
{
    std::string path = tmpdir() + "/" + name + ".json";
    EXPECT_EQ(run("run " + args + " -q --json " + path), 0) << args;
    json j = json::parse(slurp(path), nullptr, false);
    EXPECT_TRUE(j.is_object()) << path;
    EXPECT_TRUE(j.contains("sim")) << "the host-timing object moved: update canonical()";
    return canonical(j);
}

std::vector<std::string> list_dir(const std::string &dir)
{
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d))
            if (e->d_name[0] != '.')
                names.push_back(e->d_name);
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// point id -> canonical stats.json of every point of a sweep folder.
std::map<std::string, std::string> sweep_points(const std::string &dir)
{
    std::map<std::string, std::string> out;
    for (const std::string &id : list_dir(dir + "/points")) {
        json j = json::parse(slurp(dir + "/points/" + id + "/stats.json"), nullptr, false);
        EXPECT_TRUE(j.is_object()) << id;
        out[id] = canonical(j);
    }
    return out;
}

// JSONL of a merge, one canonical line per point, sorted by point id.
std::vector<std::string> jsonl_lines(const std::string &path)
{
    std::vector<std::pair<std::string, std::string>> rows;
    std::istringstream in(slurp(path));
    std::string line;
    while (std::getline(in, line)) {
        json j = json::parse(line, nullptr, false);
        EXPECT_TRUE(j.is_object()) << line;
        std::string key = j.contains("point") ? j["point"].dump() : j.value("id", line);
        rows.emplace_back(key, canonical(j));
    }
    std::sort(rows.begin(), rows.end());
    std::vector<std::string> out;
    for (auto &r : rows)
        out.push_back(r.second);
    return out;
}

std::string spec()
{
    return std::string(NPUSIM_SOURCE_ROOT) + "/configs/sweeps/tiny.yaml";
}

}  // namespace

TEST(Determinism, RepeatedRunsGiveIdenticalJson)
{
    const std::string args = "gelu_tanh --dtype fp16 --shape 1,19,7,5 --seed 7";
    std::string a = run_json("rep_a", args), b = run_json("rep_b", args);
    EXPECT_EQ(a, b);
    EXPECT_GT(a.size(), 1000u);
}

TEST(Determinism, RepeatedMultiCoreRunsWithL2GiveIdenticalJson)
{
    // Two cores contending for one L2: the order of their transactions must
    // not depend on the host.
    const std::string args = "silu --dtype fp32 --shape 2,24,9,9 --set system.cores=2 --set memory.model=l2";
    std::string a = run_json("mc_a", args), b = run_json("mc_b", args), c = run_json("mc_c", args);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, c);
}

TEST(Determinism, SweepJobsOneAndTwoGiveIdenticalPoints)
{
    const std::string j1 = tmpdir() + "/sweep_j1", j2 = tmpdir() + "/sweep_j2";
    ASSERT_EQ(run("sweep " + spec() + " -o " + j1 + " -j 1"), 0);
    ASSERT_EQ(run("sweep " + spec() + " -o " + j2 + " -j 2"), 0);
    auto a = sweep_points(j1), b = sweep_points(j2);
    EXPECT_EQ(a.size(), 12u);
    EXPECT_EQ(a, b);
    ASSERT_EQ(run("merge " + j1 + " -o " + j1 + ".csv --jsonl " + j1 + ".jsonl"), 0);
    ASSERT_EQ(run("merge " + j2 + " -o " + j2 + ".csv --jsonl " + j2 + ".jsonl"), 0);
    EXPECT_EQ(jsonl_lines(j1 + ".jsonl"), jsonl_lines(j2 + ".jsonl"));
}

TEST(Determinism, ShardedSweepMergesToTheSameJsonl)
{
    const std::string whole = tmpdir() + "/sweep_whole", sharded = tmpdir() + "/sweep_sharded";
    ASSERT_EQ(run("sweep " + spec() + " -o " + whole + " -j 2"), 0);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(run("sweep " + spec() + " -o " + sharded + " -j 1 --shard " + std::to_string(i) + "/3"), 0);
    EXPECT_EQ(sweep_points(whole), sweep_points(sharded));
    ASSERT_EQ(run("merge " + whole + " -o " + whole + ".csv --jsonl " + whole + ".jsonl"), 0);
    ASSERT_EQ(run("merge " + sharded + " -o " + sharded + ".csv --jsonl " + sharded + ".jsonl"), 0);
    std::vector<std::string> a = jsonl_lines(whole + ".jsonl"), b = jsonl_lines(sharded + ".jsonl");
    EXPECT_EQ(a.size(), 12u);
    EXPECT_EQ(a, b);
    EXPECT_EQ(slurp(whole + ".csv"), slurp(sharded + ".csv")) << "merged CSV differs (host columns?)";
}
