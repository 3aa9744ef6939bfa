// Helpers for the tests that run the npusim binary.
#include "cli_helpers.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

namespace cli_test {

std::string tmpdir()
{
    static std::string dir = [] {
        std::string t = ::testing::TempDir() + "/npusim_test_XXXXXX";
        return std::string(mkdtemp(t.data()));
    }();
    return dir;
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write(const std::string &path, const std::string &text)
{
    std::ofstream(path) << text;
}

int count_lines(const std::string &s)
{
    int n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

Result run_cli(const std::string &args)
{
    std::string err = tmpdir() + "/stderr.txt";
    std::string cmd = "timeout 120 " + std::string(NPUSIM_EXE) + " " + args + " 2>" + err;
    Result r{};
    FILE *p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
        r.out.append(buf.data(), n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.err = slurp(err);
    return r;
}

nlohmann::json run_json(const std::string &args)
{
    Result r = run_cli("run " + args + " --json -");
    EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
}

}  // namespace cli_test
