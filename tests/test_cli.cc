// The npusim command line, end to end on real files: exit codes, the one-line
// error contract, reports, .npy in and out, asm/dis.
#include <gtest/gtest.h>
#include <npusim/sim.h>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"
#include "config.h"
#include "run_limits.h"
#include "manifest.h"
#include "runner.h"
#include "npusim/errors.h"
#include "npusim/isa.h"
#include "npy.h"
#include "report.h"

#include "cli_helpers.h"

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

using namespace cli_test;

namespace {

// A `run`'s flag for the SystemC engine, where the build has one: tests
// that compare the CLI with the library (the C engine) compare the engines.
#if NPUSIM_HAVE_SYSTEMC
const char *const kSystemcEngine = " --engine systemc";
#else
const char *const kSystemcEngine = "";
#endif

// `npusim ARGS` refuses them with exit status 2 and this one line.
void expect_refused(const std::string &args, const std::string &line)
{
    const Result r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err, line + "\n") << args;
}

// A version 1.0 .npy file of `descr` and `shape` (Python's text, e.g.
// "(1, 0, 3, 3)") holding `data`: magic, version, length and header, 128 bytes.
std::string npy_file(const std::string &descr, const std::string &shape, const std::string &data)
{
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append(128 - 10 - header.size() - 1, ' ');
    header += '\n';
    return std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) + char(header.size() >> 8) + header + data;
}

}  // namespace

TEST(Cli, GeluTanhFp16PrintsAReportAndPasses)
{
    Result r = run_cli("run gelu_tanh --dtype fp16 --shape 1,3,5,7");
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("Result: PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Max ULP"), std::string::npos);
    EXPECT_EQ(r.err, "");
}

TEST(Cli, GeluTanhFp32OnALargerShapePasses)
{
    Result r = run_cli("run gelu_tanh --dtype fp32 --shape 2,20,9,9");
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("Checked:                   3240"), std::string::npos) << r.out;
}

TEST(Cli, AssemblyErrorIsOneLineWithPosition)
{
    std::string path = tmpdir() + "/bad.s";
    write(path,
          "; @kernel bad\n; @input x\n; @output y\n; @dtypes fp32\n; @reference relu\n; @tolerance fp32 ulp=0\n"
          "    vbcasti.f32 v1, 0.0\n    vmax.f32 v2, v1, s3\n    halt\n");
    Result r = run_cli("run " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind(path + ":8:", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(Cli, UnknownKernelAndBadShapeAreOneLineErrors)
{
    Result r = run_cli("run no_such_kernel");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1);
    EXPECT_NE(r.err.find("unknown kernel 'no_such_kernel'"), std::string::npos) << r.err;
    r = run_cli("run relu --shape 1,0,3,3");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("shape: '0' is not a positive integer"), std::string::npos) << r.err;
}

TEST(Cli, BadConfigKeyNamesItsPath)
{
    std::string path = tmpdir() + "/bad.yaml";
    write(path, "core:\n  vlen: 256\n  vlne: 3\n");
    Result r = run_cli("run relu --config " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, path + ":3:3: core.vlne: unknown key\n");
    r = run_cli("run relu --set core.vlen=384");
    EXPECT_EQ(r.err, "set core.vlen: 384 is not a power of two (128 .. 2048)\n");
}

TEST(Cli, ConfigKeyThatIsNotANameIsOneLineNotACrash)
{
    // fuzz_config's finding: a mapping whose key is a list or a mapping
    // threw YAML::TypedBadConversion ("internal error", exit 3).
    std::string path = tmpdir() + "/listkey.yaml";
    write(path, "{[1]: 2}\n");
    Result r = run_cli("run relu --config " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, path + ":1:2: config: a key must be a plain name, not a list or a mapping\n");
    write(path, "core: {[vlen]: 256}\n");
    r = run_cli("run relu --config " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, path + ":1:8: core: a key must be a plain name, not a list or a mapping\n");
}

TEST(Cli, InputAloneSetsDtypeAndShapeAsTheReadmeSays)
{
    // README: `npusim run relu --input x=x.npy --output y=y.npy  # shape and
    // dtype from the .npy`, for an fp16 file too (it used to say "does not
    // match --dtype fp32" with no --dtype given).
    const std::string x = tmpdir() + "/x16.npy", y = tmpdir() + "/y16.npy";
    Result made = run_cli("run relu --dtype fp16 --shape 1,4,3,2 --seed 7 --output y=" + x);
    ASSERT_EQ(made.status, 0) << made.err;
    nlohmann::json j = run_json("relu --input x=" + x + " --output y=" + y);
    EXPECT_EQ(j["dtype"], "fp16");
    EXPECT_EQ(j["shape"], nlohmann::json::array({1, 4, 3, 2}));
    EXPECT_EQ(j["seed"], 1);  // the seed of generated inputs is always reported
    Result bad = run_cli("run relu --dtype fp32 --input x=" + x);
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.err, x + ": dtype f16 does not match the run's dtype fp32\n");
}

TEST(Cli, AShapeGivenWithAnInputMustBeTheInputs)
{
    // --shape beside --input used to be dropped without a word: the run took
    // the file's shape.
    const std::string x = tmpdir() + "/x4332.npy";
    Result made = run_cli("run relu --shape 1,4,3,2 --output y=" + x + " -q");
    ASSERT_EQ(made.status, 0) << made.err;
    Result bad = run_cli("run relu --shape 1,4,3,6 --input x=" + x);
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.err, x + ": shape (1,4,3,2) does not match the run's NCHW shape (1,4,3,6)\n");
    EXPECT_EQ(bad.out, "");
    nlohmann::json same = run_json("relu --shape 4,3,2 --input x=" + x);  // equal, with leading 1s: fine
    EXPECT_EQ(same["shape"], nlohmann::json::array({1, 4, 3, 2}));
    EXPECT_EQ(same["cycles"], run_json("relu --input x=" + x)["cycles"]);
}

TEST(Cli, AZeroOfTheWrongSignFailsUnlessTheManifestAllowsIt)
{
    // max(x, 0) against tanh's reference on x = -0: every value is right
    // (0 ULP), only the sign is not (tanh(-0) = -0, as IEEE, C and PyTorch).
    const std::string kernel = "; @kernel     plus_zero\n; @input      x range=-1,1\n; @output     y\n"
                               "; @dtypes     fp16 fp32\n; @reference  tanh\n; @tolerance  fp16 ulp=1e9\n"
                               "; @tolerance  fp32 ulp=1e9%s\n.include \"lib/eltwise.s\"\n"
                               ".macro plus_zero_math y, x\n    vmaxi.DT \\y, \\x, 0.0\n.endm\n"
                               "    ELTWISE_1IN_LINEAR plus_zero_math\n    halt\n";
    const std::string exact = tmpdir() + "/plus_zero.s", any = tmpdir() + "/plus_zero_any.s";
    char text[1024];
    std::snprintf(text, sizeof text, kernel.c_str(), "");
    write(exact, text);
    std::snprintf(text, sizeof text, kernel.c_str(), " zero_sign=any");
    write(any, text);
    npusim::NpyArray x;
    x.dtype = NPU_F32;
    x.shape = {1, 1, 2, 4};
    x.data.assign(8 * 4, 0);
    for (size_t i = 3; i < x.data.size(); i += 4)
        x.data[i] = 0x80;  // -0.0f
    const std::string xp = tmpdir() + "/minus_zero.npy";
    npusim::write_npy(xp, x);

    Result r = run_cli("run " + exact + " --input x=" + xp);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.out.find("  Zeros of the wrong sign:   8\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  Failures:                  8\n"), std::string::npos) << r.out;
    nlohmann::json j = nlohmann::json::parse(run_cli("run " + exact + " --input x=" + xp + " --json -").out);
    EXPECT_EQ(j["accuracy"]["zero_sign_mismatches"], 8);
    EXPECT_EQ(j["accuracy"]["nan_mismatches"], 0);
    EXPECT_EQ(j["accuracy"]["tolerance_zero_sign"], "exact");
    EXPECT_EQ(j["accuracy"]["max_ulp"], 0.0);

    r = run_cli("run " + any + " --input x=" + xp);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("  Zeros of the wrong sign:   8 (allowed: the manifest's zero_sign=any)\n"),
              std::string::npos)
        << r.out;
}

// abs=X*alpha and abs=X/beta (elu_fast, softplus_fast): `kernels --json`
// shows X and its scale, and a run's tolerance is X times |alpha| (X / |beta|)
// for the parameter as the kernel receives it.
TEST(Cli, AnAbsToleranceScaledByAParamShowsInKernelsAndTheRun)
{
    Result k = run_cli("kernels --json");
    ASSERT_EQ(k.status, 0) << k.err;
    const nlohmann::json list = nlohmann::json::parse(k.out);
    int seen = 0;
    for (const nlohmann::json &e : list) {
        const nlohmann::json &fp32 = e["tolerances"]["fp32"];
        if (e["name"] == "elu_fast") {
            EXPECT_EQ(fp32["abs"], 0x1p-23);
            EXPECT_EQ(fp32["abs_scale"], "|alpha|");
            seen++;
        } else if (e["name"] == "softplus_fast") {
            EXPECT_EQ(fp32["abs"], 0x1p-22);
            EXPECT_EQ(fp32["abs_scale"], "1/|beta|");
            seen++;
        } else if (e["name"] == "relu") {
            EXPECT_TRUE(fp32["abs_scale"].is_null());
            seen++;
        }
    }
    EXPECT_EQ(seen, 3);
    Result r = run_cli("run elu_fast --dtype fp32 --shape 1,16,8,8 --param alpha=-2 --json -");
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["accuracy"]["tolerance_abs"], 0x1p-22);
    r = run_cli("run softplus_fast --dtype fp32 --shape 1,16,8,8 --param beta=0.25 --json -");
    ASSERT_EQ(r.status, 0) << r.err;
    j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["accuracy"]["tolerance_abs"], 0x1p-20);
}

TEST(Cli, TwoOutputsOnOneFileAreAnError)
{
    const std::string d = tmpdir();
    Result r = run_cli("run relu --shape 1,1,4,4 --json " + d + "/both --trace " + d + "/./both");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, d + "/./both: named by both --json and --trace (each output needs a file of its own)\n");
    EXPECT_EQ(r.out, "");
    r = run_cli("run relu --shape 1,1,4,4 --output y=" + d + "/y.npy --vcd " + d + "/y.npy");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, d + "/y.npy: named by both --vcd and --output y (each output needs a file of its own)\n");
    r = run_cli("run relu --shape 1,1,4,4 --output y=" + d + "/y1.npy --output y=" + d + "/y2.npy");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "--output y=" + d + "/y2.npy: output 'y' is named twice\n");
    EXPECT_NE(::access((d + "/both").c_str(), F_OK), 0);
    EXPECT_NE(::access((d + "/y.npy").c_str(), F_OK), 0);
}

// A shipped config is named as a kernel is: `--config edge` is
// configs/edge.yaml (an installed npusim's installed copy), a file is named
// with its .yaml or a '/'; an installed npusim's users had to spell out
// PREFIX/share/npusim/configs/edge.yaml.
TEST(Cli, AShippedConfigIsNamedAsAKernelIs)
{
    const std::string configs = std::string(NPUSIM_SOURCE_ROOT) + "/configs";
    auto cycles = [](const Result &r) { return r.status == 0 ? nlohmann::json::parse(r.out)["cycles"] : nlohmann::json(); };
    Result by_name = run_cli("run relu --shape 1,16,8,8 -q --json - --config edge");
    Result by_path = run_cli("run relu --shape 1,16,8,8 -q --json - --config " + configs + "/edge.yaml");
    ASSERT_EQ(by_name.status, 0) << by_name.err;
    EXPECT_EQ(cycles(by_name), cycles(by_path));
    EXPECT_NE(cycles(by_name), cycles(run_cli("run relu --shape 1,16,8,8 -q --json -")));  // not the defaults
    EXPECT_EQ(run_cli("config show datacenter").out, run_cli("config show " + configs + "/datacenter.yaml").out);
    Result r = run_cli("run relu --config edgy");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "unknown config 'edgy' (shipped: datacenter, default, edge, tiny, in " + configs +
                         "; a file is named with its .yaml or a '/': ./edgy)\n");
    r = run_cli("config show tiny.yml");  // no such file here (the test runs in the build folder)
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tiny.yml: cannot open config file (there is none here; the shipped config of that name is "
                     "'tiny', named without the extension)\n");
    const std::string own = tmpdir() + "/edge";  // a file without .yaml, named with a '/'
    std::ofstream(own) << "core:\n  vlen: 512\n";
    r = run_cli("config show " + own);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("vlen: 512"), std::string::npos);
}

// "-" is standard output where a command writes it there (--json, --csv);
// every other output took it as a file called "-" (`--trace -` beside
// `--json -` left the trace in ./-).
TEST(Cli, DashIsStandardOutputOnlyWhereTheCommandWritesThere)
{
    const std::string why = ": this output is written to a file, not to standard output (- is standard output for "
                            "--json and --csv only; ./- names a file called -)\n";
    for (const char *flag : {"--trace", "--konata", "--vcd", "--mem-trace"}) {
        Result r = run_cli(std::string("run relu --shape 1,1,4,4 --json - ") + flag + " -");
        EXPECT_EQ(r.status, 2) << flag;
        EXPECT_EQ(r.err, std::string(flag) + " -" + why);
        EXPECT_EQ(r.out, "") << flag;
    }
    Result r = run_cli("run relu --shape 1,1,4,4 --output y=-");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "--output y=-" + why);
    r = run_cli("asm " + std::string(NPUSIM_SOURCE_ROOT) + "/kernels/relu.s -I " + NPUSIM_SOURCE_ROOT +
                "/kernels -D DT=f16 -D DT_BYTES=2 -o -");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "-o -" + why);
    r = run_cli("sweep " + std::string(NPUSIM_SOURCE_ROOT) + "/configs/sweeps/tiny.yaml -o -");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "-o -: a sweep writes a folder of points, not standard output (./- names a folder called -)\n");
    r = run_cli("run relu --shape 1,1,4,4 -q --json -");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["kernel"], "relu");
}

#if !NPUSIM_HAVE_SYSTEMC
// Built with -Dsystemc=disabled: `run` works on the C engine, --vcd and
// --engine systemc are refused.
TEST(Cli, WithoutSystemCTheVcdIsRefusedInOneLine)
{
    const std::string vcd = tmpdir() + "/none.vcd";
    expect_refused("run relu -q --vcd " + vcd,
                   "--vcd " + vcd + ": this npusim was built without SystemC (meson -Dsystemc=disabled)");
    EXPECT_FALSE(std::filesystem::exists(vcd));
    expect_refused("run relu -q --engine systemc",
                   "--engine systemc: this npusim was built without SystemC (meson -Dsystemc=disabled)");
    EXPECT_EQ(run_cli("run relu -q").status, 0);
    EXPECT_EQ(run_cli("run relu -q --engine c").status, 0);
}
#else
// `run` takes the C engine unless asked for the SystemC one, which it loads
// only then (sim/systemc/engine_plugin.h): the same report to the bit but
// for the host's timing, on several cores, every quantum, and traces.
TEST(Cli, TheEnginesGiveTheSameRunAndOnlyTheSystemCOneLoadsSystemC)
{
    const std::string d = tmpdir() + "/engines";
    std::filesystem::create_directories(d);
    const std::string runs[] = {
        "relu --shape 2,32,17,9 --set system.cores=3",
        "gelu_tanh --dtype fp16 --shape 1,16,28,28 --config edge --set system.cores=2 --set sim.quantum=7",
        "mish --shape 1,8,9,9 --set system.cores=4 --set l2.size_bytes=16384 --set sim.quantum=1",
    };
    for (const std::string &args : runs) {
        SCOPED_TRACE(args);
        nlohmann::json c = run_json(args + " --engine c --trace " + d + "/c.json --konata " + d + "/c.log");
        nlohmann::json sc = run_json(args + " --engine systemc --trace " + d + "/sc.json --konata " + d + "/sc.log");
        nlohmann::json plain = run_json(args);
        c.erase("sim");
        sc.erase("sim");
        plain.erase("sim");
        EXPECT_EQ(c, sc);
        EXPECT_EQ(c, plain);
        EXPECT_TRUE(slurp(d + "/c.json") == slurp(d + "/sc.json"));
        EXPECT_TRUE(slurp(d + "/c.log") == slurp(d + "/sc.log"));
    }
    // The dynamic loader lists every library it loads (LD_DEBUG=libs).
    auto loads_systemc = [&](const std::string &args) {
        const std::string err = d + "/ld.err";
        EXPECT_EQ(std::system(("LD_DEBUG=libs " + std::string(NPUSIM_EXE) + " " + args + " >/dev/null 2>" + err)
                                  .c_str()),
                  0)
            << args;
        return slurp(err).find("libsystemc") != std::string::npos;
    };
    EXPECT_FALSE(loads_systemc("--help"));
    EXPECT_FALSE(loads_systemc("run relu -q"));
    EXPECT_TRUE(loads_systemc("run relu -q --engine systemc"));
    EXPECT_TRUE(loads_systemc("run relu -q --vcd " + d + "/w.vcd"));
    EXPECT_NE(slurp(d + "/w.vcd").find("$enddefinitions"), std::string::npos);
}

TEST(Cli, AnEngineThatCannotBeUsedIsRefusedInOneLine)
{
    const std::string vcd = tmpdir() + "/refused.vcd";
    expect_refused("run relu -q --engine c --vcd " + vcd,
                   "--vcd " + vcd + ": the VCD is the SystemC engine's, and --engine c was given");
    EXPECT_FALSE(std::filesystem::exists(vcd));
    expect_refused("run relu -q --engine systemc --set sim.mode=functional",
                   "--engine systemc: a functional run (sim.mode: functional) has no timing engine to choose");
    Result r = run_cli("run relu -q --engine gem5");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.substr(0, 33), "--engine: gem5 not in {c,systemc}") << r.err;
    // A module that cannot be found: the binary copied where its run path
    // ($ORIGIN/sim/systemc first) holds none and libnpusim is found by
    // LD_LIBRARY_PATH.
    const std::string alone = tmpdir() + "/alone";
    std::filesystem::create_directories(alone);
    std::filesystem::copy_file(NPUSIM_EXE, alone + "/npusim", std::filesystem::copy_options::overwrite_existing);
    const std::string lib = std::filesystem::path(NPUSIM_EXE).parent_path().string();
    const std::string err = alone + "/err";
    const int status = std::system(("LD_LIBRARY_PATH=" + lib + " " + alone + "/npusim run relu -q --engine systemc 2>" +
                                    err).c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
    EXPECT_EQ(slurp(err), "--engine systemc: the SystemC engine cannot be loaded: npusim-systemc-engine.so: cannot "
                          "open shared object file: No such file or directory\n");
}
#endif

TEST(Cli, AVcdCutShortIsAnErrorAndLeavesNoFile)
{
#if !NPUSIM_HAVE_SYSTEMC
    GTEST_SKIP() << "built without SystemC (-Dsystemc=disabled): no VCD";
#endif
    // A file size limit stands in for a full disk: SystemC's writes fail
    // silently, and the file would have ended mid-record under its name.
    const std::string vcd = tmpdir() + "/cut.vcd";
    const std::string cmd = "sh -c \"trap '' XFSZ; ulimit -f 40; SC_COPYRIGHT_MESSAGE=DISABLE " + std::string(NPUSIM_EXE) +
                            " run gelu_tanh --shape 1,4,32,32 -q --vcd " + vcd + "\" 2>" + tmpdir() + "/cut.err";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
    EXPECT_EQ(slurp(tmpdir() + "/cut.err"),
              vcd + ": the VCD was not written whole (disk full or a file size limit?)\n");
    EXPECT_NE(::access(vcd.c_str(), F_OK), 0);
    // Without the limit the same run writes it whole.
    Result r = run_cli("run gelu_tanh --shape 1,4,32,32 -q --vcd " + vcd);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_GT(slurp(vcd).size(), 40u * 1024);
}

// The peak resident size of `npusim ARGS`, in bytes (wait4's ru_maxrss).
uint64_t peak_rss(const std::string &args)
{
    const pid_t pid = fork();
    if (pid == 0) {
        const std::string cmd = "exec " + std::string(NPUSIM_EXE) + " " + args + " -q >/dev/null 2>&1";
        execl("/bin/sh", "sh", "-c", cmd.c_str(), (char *)nullptr);
        _exit(127);
    }
    int status = 0;
    struct rusage ru {};
    EXPECT_EQ(wait4(pid, &status, 0, &ru), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << args;
    return uint64_t(ru.ru_maxrss) * 1024;
}

// The memory estimates' tests compare with a peak RSS: that of the CLI on
// its default engine, the C one (the estimate's process base), uninstrumented.
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_WHERE_PEAK_RSS_IS_NOT_THE_RUNS() GTEST_SKIP() << "ASan's shadow and quarantine are not the run's memory"
#else
#define SKIP_WHERE_PEAK_RSS_IS_NOT_THE_RUNS() (void)0
#endif

TEST(Cli, TheMemoryEstimateIsWithinOneAndAHalfOfTheMeasuredPeak)
{
    SKIP_WHERE_PEAK_RSS_IS_NOT_THE_RUNS();
    struct Case {
        const char *kernel, *dtype;
        uint64_t n, c, h, w;
        std::vector<std::string> sets;
    };
    const Case cases[] = {
        {"relu", "fp32", 1, 64, 112, 112, {}},
        {"geglu", "fp16", 1, 64, 112, 112, {}},
        {"relu", "fp32", 2, 64, 112, 112, {"sim.mode=functional"}},
        {"relu", "fp32", 1, 8, 8, 8, {"l2.size_bytes=268435456"}},
        {"relu", "fp32", 1, 8, 8, 8, {"core.ub_bytes=134217728"}},
        {"relu", "fp32", 1, 64, 56, 56, {"system.cores=16"}},
        {"relu", "fp32", 1, 1, 1, 1, {}},
    };
    for (const Case &k : cases) {
        std::string args = std::string("run ") + k.kernel + " --dtype " + k.dtype + " --shape " + std::to_string(k.n) +
                           "," + std::to_string(k.c) + "," + std::to_string(k.h) + "," + std::to_string(k.w);
        npusim::Config cfg = npusim::default_config();
        for (const std::string &set : k.sets) {
            npusim::apply_override(cfg, set);
            args += " --set " + set;
        }
        npu_layout layout{};
        ASSERT_EQ(npu_layout_init(&layout, k.n, k.c, k.h, k.w, std::string(k.dtype) == "fp16" ? 2 : 4), NPU_OK);
        const npusim::Manifest m = npusim::load_manifest(npusim::resolve_kernel(k.kernel));
        const double estimate = double(npusim::run_bytes_needed(layout, npusim::run_footprint(cfg, m)));
        const double measured = double(peak_rss(args));
        std::printf("%-70s estimate %6.1f MB, measured %6.1f MB: %.2f\n", args.c_str(), estimate / 1e6,
                    measured / 1e6, estimate / measured);
        EXPECT_LE(estimate, 1.5 * measured) << args << ": estimate " << estimate << ", measured " << measured;
        EXPECT_GE(estimate, measured / 1.5) << args << ": estimate " << estimate << ", measured " << measured;
    }
}

// A cube run's estimate, as run_kernel makes it, counts its matrices: a
// matmul's A and B as K makes them (it counted three tensors of C's size:
// 1024,200000,16 passed a 200 MB limit and ran out of memory, 128,16,200000
// was refused at 5.24 GB), a convolution's im2col of every image for the
// check (three output tensors: 50 MB for 16,64,56,56, which peaks at 316
// MB). Within 1.5x of the peak.
TEST(Cli, ACubeRunsMemoryEstimateCountsItsMatrices)
{
    SKIP_WHERE_PEAK_RSS_IS_NOT_THE_RUNS();
    const struct {
        const char *kernel, *shape;
    } cases[] = {{"matmul", "1024,20000,16"}, {"matmul", "128,16,20000"}, {"matmul", "512,1024,512"},
                 {"conv2d", "4,64,56,56"},    {"conv2d", "8,32,56,56"}};
    for (const auto &c : cases) {
        SCOPED_TRACE(std::string(c.kernel) + " " + c.shape);
        npusim::RunOptions o;
        o.kernel = c.kernel;
        o.dtype = "fp16";
        o.shape = npusim::parse_shape(c.shape);
        const double estimate = double(npusim::run_bytes_estimate(o));
        const double measured = double(
            peak_rss(std::string("run ") + c.kernel + " --dtype fp16 --schedule off --shape " + c.shape));
        std::printf("%s %-16s estimate %6.1f MB, measured %6.1f MB: %.2f\n", c.kernel, c.shape, estimate / 1e6,
                    measured / 1e6, estimate / measured);
        EXPECT_LE(estimate, 1.5 * measured);
        EXPECT_GE(estimate, measured / 1.5);
    }
    Result r = run_cli("run matmul --dtype fp16 --shape 100000,100000,100 -q");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("shape 100000,100000,100: the run needs about 120 GB of memory (the matrices 120 GB with "
                          "their copies for the check, ",
                          0),
              0u)
        << r.err;
}

TEST(Cli, OutOfRangeNumbersAndEmptyTensorsGetTheirOwnLine)
{
    Result r = run_cli("run relu --seed 99999999999999999999999");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--seed: '99999999999999999999999' is out of range (0 .. 18446744073709551615)"),
              std::string::npos)
        << r.err;
    r = run_cli("run relu --max-cycles -1");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--max-cycles: '-1' is not a whole number (0 .. 18446744073709551615)"), std::string::npos)
        << r.err;
    // An .npy with a 0 dimension is empty, not "too large" (and no --shape was given).
    const std::string empty = tmpdir() + "/empty.npy";
    write(empty, npy_file("<f4", "(1, 0, 3, 3)", ""));
    r = run_cli("run relu --input x=" + empty);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, empty + ": shape (1,0,3,3) is an empty tensor: every dimension must be at least 1\n");
}

TEST(Cli, MatmulReportsItsMatricesAndTheCubesPipes)
{
    Result t = run_cli("run matmul --dtype fp16 --shape 33,50,17");
    ASSERT_EQ(t.status, 0) << t.err;
    EXPECT_NE(t.out.find("Matrices:    C fp16 33x17 = A fp16 33x50 B fp16 50x17, fractals 3x4x2 (m1 k1 n1)\n"),
              std::string::npos) << t.out;
    EXPECT_NE(t.out.find("Cube pipes (docs/cube.md; each runs its operations in order):\n"), std::string::npos);
    EXPECT_NE(t.out.find("  Elements:                  561 (1536 with padding)\n"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("Accuracy (every element against the binary64 A B, epilogue 'identity')\n"), std::string::npos);
    EXPECT_NE(t.out.find("(tolerance 0.5 ULP, or the accumulation bound from K plus half an ULP)\n"), std::string::npos);
    Result r = run_cli("run matmul --dtype fp32 --shape 33,50,17 --json -");
    ASSERT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["shape"], nlohmann::json({1, 33, 50, 17}));
    EXPECT_EQ(j["matmul"], nlohmann::json({{"m", 33}, {"k", 50}, {"n", 17}}));
    EXPECT_EQ(j["pipes"]["cube"]["fractal_products"], 3 * 4 * 2);
    EXPECT_EQ(j["accuracy"]["checked"], 33 * 17);
    EXPECT_TRUE(j["passed"]);
    // Activation runs have no cube section.
    Result relu = run_cli("run relu --dtype fp16 --shape 1,4,4,4 --json -");
    EXPECT_FALSE(nlohmann::json::parse(relu.out).contains("pipes"));
}

TEST(Cli, JsonReportHasTheStableKeys)
{
    Result r = run_cli("run relu --dtype fp16 --shape 1,4,4,4 --json -");
    ASSERT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    for (const char *k : {"kernel", "dtype", "shape", "config", "instructions", "elements",
                          "instructions_per_vector", "accuracy", "sim"})
        EXPECT_TRUE(j.contains(k)) << k;
    for (const char *k : {"max_abs_err", "max_ulp", "mean_ulp", "checked", "failures", "padding_ok"})
        EXPECT_TRUE(j["accuracy"].contains(k)) << k;
    EXPECT_EQ(j["accuracy"]["checked"], 64);
    EXPECT_EQ(j["kernel"], "relu");
    for (const char *k : {"cycles", "ipc", "cycles_per_element", "issue", "units", "stalls", "bound", "dram"})
        EXPECT_TRUE(j.contains(k)) << k;
    for (const char *k : {"width", "histogram", "slot_busy", "slots_lost"})
        EXPECT_TRUE(j["issue"].contains(k)) << k;
    for (const char *k : {"raw", "waw", "unit_busy", "slot", "ub_bank", "dma_wait", "sync", "branch", "drain"})
        EXPECT_TRUE(j["stalls"].contains(k)) << k;
    for (const char *k : {"valu", "sfu", "lsu", "scalar"}) {
        EXPECT_TRUE(j["units"].contains(k)) << k;
        EXPECT_TRUE(j["units"][k].contains("busy_cycles"));
        EXPECT_TRUE(j["units"][k].contains("issued"));
    }
    for (const char *k : {"compute_cycles", "memory_cycles", "bound_cycles", "efficiency"})
        EXPECT_TRUE(j["bound"].contains(k)) << k;
    for (const char *k : {"host_seconds", "sim_cycles_per_second", "sim_instructions_per_second"})
        EXPECT_TRUE(j["sim"].contains(k)) << k;
    EXPECT_EQ(j["issue"]["histogram"].size(), size_t(j["issue"]["width"]) + 1);
    // Every cycle is an issue cycle or one stall reason's.
    uint64_t stalls = 0;
    for (auto &kv : j["stalls"].items())
        stalls += kv.value().get<uint64_t>();
    EXPECT_EQ(stalls + j["issue"]["issue_cycles"].get<uint64_t>(), j["cycles"].get<uint64_t>());
}

// host_seconds (and the rates derived from it) is the whole run's, the
// tiles measured by simulating each included: it was the last simulation's
// plan and run alone (16.7 s of an 86 s run).
TEST(Cli, HostSecondsIsTheWholeRun)
{
    npusim::RunOptions o;
    o.kernel = "gelu_tanh";
    o.dtype = "fp16";
    o.shape = {1, 32, 28, 28};
    o.measure_tiles = true;
    const auto t0 = std::chrono::steady_clock::now();
    const npusim::RunResult r = npusim::run_kernel(o);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_GT(r.tile.measured.size(), 1u);  // several simulations
    EXPECT_LE(r.host_seconds, wall);
    EXPECT_GE(r.host_seconds, 0.95 * wall);
    EXPECT_DOUBLE_EQ(r.derived.sim_cycles_per_second, double(r.stats.cycles) / r.host_seconds);
}

TEST(Cli, NpyInputAndOutputRoundTrip)
{
    npusim::NpyArray in;
    in.dtype = NPU_F32;
    in.shape = {1, 3, 2, 2};
    std::vector<float> vals = {-3, -2, -1, 0, 1, 2, 3, 4, -0.5f, 0.5f, -7, 7};
    in.data.assign(reinterpret_cast<uint8_t *>(vals.data()), reinterpret_cast<uint8_t *>(vals.data()) + 48);
    std::string ip = tmpdir() + "/x.npy", op = tmpdir() + "/y.npy";
    npusim::write_npy(ip, in);
    Result r = run_cli("run relu --dtype fp32 --input x=" + ip + " --output y=" + op + " -q");
    ASSERT_EQ(r.status, 0) << r.err;
    npusim::NpyArray out = npusim::read_npy(op);
    ASSERT_EQ(out.shape, in.shape);
    const float *y = reinterpret_cast<const float *>(out.data.data());
    for (size_t i = 0; i < vals.size(); i++)
        EXPECT_EQ(y[i], vals[i] > 0 ? vals[i] : 0.0f) << i;
}

TEST(Cli, ALowerRankInputIsReadWithLeadingDimensionsOfOne)
{
    // A (C, H, W) array is the run's (1, C, H, W), as --shape C,H,W is; it
    // used to be taken for the shape and then refused as not matching it.
    npusim::NpyArray in;
    in.dtype = NPU_F32;
    in.shape = {3, 1, 2};
    std::vector<float> vals = {-3, 2, -1, 0.5f, 1, -2};
    in.data.assign(reinterpret_cast<uint8_t *>(vals.data()), reinterpret_cast<uint8_t *>(vals.data()) + 24);
    std::string ip = tmpdir() + "/x3d.npy", op = tmpdir() + "/y3d.npy";
    npusim::write_npy(ip, in);
    nlohmann::json j = run_json("relu --input x=" + ip + " --output y=" + op);
    EXPECT_EQ(j["shape"], nlohmann::json::array({1, 3, 1, 2}));
    npusim::NpyArray out = npusim::read_npy(op);
    ASSERT_EQ(out.shape, (std::vector<uint64_t>{1, 3, 1, 2}));
    const float *y = reinterpret_cast<const float *>(out.data.data());
    for (size_t i = 0; i < vals.size(); i++)
        EXPECT_EQ(y[i], vals[i] > 0 ? vals[i] : 0.0f) << i;
}

TEST(Cli, RunawayProgramStopsWithANamedReason)
{
    std::string path = tmpdir() + "/spin.s";
    write(path,
          "; @kernel spin\n; @input x\n; @output y\n; @dtypes fp32\n; @reference relu\n; @tolerance fp32 ulp=0\n"
          "top:\n    j top\n");
    Result r = run_cli("run " + path + " --max-instructions 1000");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.out.find("trap: core 0: max_instructions"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Result: FAIL"), std::string::npos);
}

TEST(Cli, GuestFaultIsATrapReportNotACrash)
{
    std::string path = tmpdir() + "/oob.s";
    write(path,
          "; @kernel oob\n; @input x\n; @output y\n; @dtypes fp32\n; @reference relu\n; @tolerance fp32 ulp=0\n"
          "    li s5, 0x7ffffff0\n    vld.f32 v1, [s5]\n    halt\n");
    Result r = run_cli("run " + path);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.out.find("ub_out_of_bounds"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("vld.f32 v1, [s5]"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(path + ":8"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(", core stopped at cycle 0, after 1 instructions:"), std::string::npos) << r.out;
}

TEST(Cli, AsmThenDisRoundTrips)
{
    std::string src = tmpdir() + "/k.s", bin = tmpdir() + "/k.bin";
    write(src, "top:\n    vfma.f32 v1, v2, v3, v4, p2\n    loop s3, top\n    halt\n");
    Result a = run_cli("asm " + src + " -o " + bin);
    ASSERT_EQ(a.status, 0) << a.err;
    Result d = run_cli("dis " + bin);
    ASSERT_EQ(d.status, 0) << d.err;
    EXPECT_NE(d.out.find("vfma.f32 v1, v2, v3, v4, p2"), std::string::npos) << d.out;
    EXPECT_NE(d.out.find("loop s3, @0"), std::string::npos) << d.out;
}

namespace {

void write_binary(const std::string &path, const std::vector<uint64_t> &words)
{
    std::string b = "NPUSIMB1";
    auto le = [&](uint64_t v, int bytes) {
        for (int i = 0; i < bytes; i++)
            b += char(v >> (8 * i) & 0xff);
    };
    le(words.size(), 4);
    le(0, 4);
    for (uint64_t w : words)
        le(w, 8);
    write(path, b);
}

}  // namespace

// Every line `dis` prints assembles back to the same bytes: the audit's words
// whose fields the assembler refuses (`slli s1, s2, 64`, `vshli.i16 v1, v2,
// 16`, `srd s16, 255`, `dmadim 3, s0, s0, s0`, printed with exit 0 before), a
// predicate without its mask bit, branches outside the program, and
// thousands of random words around real opcodes.
TEST(Cli, EverythingDisPrintsAssemblesToTheSameBytes)
{
    std::vector<uint64_t> words = {0x0000004000010416, 0x000000100001065e, 0x000000ff00004020, 0x0000000000000c90,
                                   0x000000000e310540,
                                   0xfffffffa0000002e,   // j with imm -6 at 5: @-1
                                   0x000f42400000002e,   // j @1000006
                                   0x000000000000002e};  // j @7, inside
    std::mt19937_64 rng(7);
    for (int i = 0; i < 4000; i++) {
        const npu_insn_desc &d = npu_insn_table[1 + rng() % (NPU_NUM_OPS - 1)];
        uint64_t used = npu_format_field_mask(npu_format(d.format), d.flags & NPU_F_MASK);
        uint64_t w = d.opcode | (rng() & used & ~0xffull) | (rng() % 4 == 0 ? 1ull << (rng() % 64) : 0);
        words.push_back(rng() % 2 ? w & 0x0000000fffffffffull : w);
    }
    const std::string bin = tmpdir() + "/words.bin", src = tmpdir() + "/words.s", again = tmpdir() + "/again.bin";
    write_binary(bin, words);
    Result d = run_cli("dis " + bin);
    ASSERT_EQ(d.status, 0) << d.err;
    std::istringstream lines(d.out);
    std::string line, text;
    std::vector<std::string> shown;
    while (std::getline(lines, line)) {
        ASSERT_GT(line.size(), 27u) << line;
        shown.push_back(line.substr(27));  // "%6zu:  %016x  " before the text
        text += shown.back() + "\n";
    }
    ASSERT_EQ(shown.size(), words.size());
    EXPECT_EQ(shown[0], ".word 0x0000004000010416 ; does not decode");
    EXPECT_EQ(shown[1], ".word 0x000000100001065e ; does not decode");
    EXPECT_EQ(shown[2], ".word 0x000000ff00004020 ; does not decode");
    EXPECT_EQ(shown[3], ".word 0x0000000000000c90 ; does not decode");
    EXPECT_EQ(shown[4], ".word 0x000000000e310540 ; does not decode");
    EXPECT_EQ(shown[5], ".word 0xfffffffa0000002e ; j @-1: outside the program (0..4007)");
    EXPECT_EQ(shown[6], ".word 0x000f42400000002e ; j @1000006: outside the program (0..4007)");
    EXPECT_EQ(shown[7], "j @7");
    write(src, text);
    Result a = run_cli("asm " + src + " -o " + again);
    ASSERT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(slurp(again), slurp(bin));
}

TEST(Cli, IsaJsonListsEveryInstruction)
{
    Result r = run_cli("isa --json");
    ASSERT_EQ(r.status, 0);
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["instructions"].size(), size_t(NPU_NUM_OPS - 1));
    bool found = false;
    for (const auto &i : j["instructions"])
        if (i["mnemonic"] == "vexp") {
            found = true;
            EXPECT_EQ(i["unit"], "sfu");
        }
    EXPECT_TRUE(found);
}

TEST(Cli, KernelsListsTheManifests)
{
    Result r = run_cli("kernels");
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *k : {"relu", "leaky_relu", "gelu_tanh"})
        EXPECT_NE(r.out.find(k), std::string::npos) << k;
    EXPECT_NE(r.out.find("alpha=0.01"), std::string::npos) << r.out;
}

TEST(Cli, DefaultYamlIsTheBuiltInDefault)
{
    Result file = run_cli("config show " + std::string(NPUSIM_SOURCE_ROOT) + "/configs/default.yaml");
    Result builtin = run_cli("config show");
    ASSERT_EQ(file.status, 0) << file.err;
    EXPECT_EQ(file.out, builtin.out);
    Result tiny = run_cli("run relu --config " + std::string(NPUSIM_SOURCE_ROOT) + "/configs/tiny.yaml -q");
    EXPECT_EQ(tiny.status, 0) << tiny.err;
}

namespace {

std::string sweep_spec()
{
    return std::string(NPUSIM_SOURCE_ROOT) + "/configs/sweeps/tiny.yaml";
}

int sh(const std::string &cmd)
{
    int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

TEST(Cli, ShardedSweepUnderGnuParallelMergesToTheSameTable)
{
    const std::string a = tmpdir() + "/sweep_a", b = tmpdir() + "/sweep_b";
    Result whole = run_cli("sweep " + sweep_spec() + " -o " + a + " -j 2");
    ASSERT_EQ(whole.status, 0) << whole.err;
    ASSERT_EQ(sh("seq 0 2 | parallel --will-cite -j 3 " + std::string(NPUSIM_EXE) + " sweep " + sweep_spec() + " -o " +
                 b + " --shard {}/3 2>/dev/null"),
              0);
    ASSERT_EQ(run_cli("merge " + a + " -o " + a + ".csv").status, 0);
    ASSERT_EQ(run_cli("merge " + b + " -o " + b + ".csv --jsonl " + b + ".jsonl").status, 0);
    std::string ca = slurp(a + ".csv"), cb = slurp(b + ".csv");
    EXPECT_EQ(ca, cb);
    EXPECT_EQ(count_lines(ca), 1 + 12);  // header + 2 kernels x 3 VLENs x 2 widths
    EXPECT_EQ(count_lines(slurp(b + ".jsonl")), 12);
    std::string header = ca.substr(0, ca.find('\n'));
    for (const char *col : {"point.id", "param.core.vlen", "param.issue.width", "cycles", "ipc", "stalls.raw",
                            "bound.efficiency", "accuracy.max_ulp", "kernel", "dtype"})
        EXPECT_NE(("," + header + ",").find(std::string(",") + col + ","), std::string::npos) << col;
}

TEST(Cli, ResumedSweepRerunsOnlyUnfinishedPoints)
{
    const std::string a = tmpdir() + "/sweep_resume";
    ASSERT_EQ(run_cli("sweep " + sweep_spec() + " -o " + a + " -j 2").status, 0);
    ASSERT_EQ(run_cli("merge " + a + " -o " + a + ".first.csv").status, 0);
    // As if killed: three points lost their status (one mid-write of its stats).
    ASSERT_EQ(sh("cd " + a + "/points && ls | head -3 | while read p; do rm -f $p/status $p/stats.json; "
                 "echo '{\"trunc' > $p/stats.json.tmp.1; done"),
              0);
    Result merged = run_cli("merge " + a + " -o " + a + ".partial.csv");
    EXPECT_EQ(merged.status, 1);
    EXPECT_NE(merged.err.find("3 missing"), std::string::npos) << merged.err;
    Result again = run_cli("sweep " + sweep_spec() + " -o " + a + " -j 2");
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_NE(again.err.find("12/12 points done (9 skipped as already done, 0 failed)"), std::string::npos)
        << again.err;
    ASSERT_EQ(run_cli("merge " + a + " -o " + a + ".second.csv").status, 0);
    EXPECT_EQ(slurp(a + ".first.csv"), slurp(a + ".second.csv"));
}

TEST(Cli, SweepRecordsAFailedPointAndGoesOn)
{
    // A kernel whose manifest passes the spec's checks but whose code does
    // not assemble: its point fails when it runs.
    const std::string kernel = tmpdir() + "/bad_body.s", spec = tmpdir() + "/failing.yaml";
    write(kernel, "; @kernel     bad_body\n; @input      x range=-8,8\n; @output     y\n; @dtypes     fp16\n"
                  "; @reference  relu\n; @tolerance  fp16 ulp=0\n    frob v1\n");
    write(spec, "kernels: [relu, " + kernel + "]\nshapes: ['1,4,2,2']\n");
    Result r = run_cli("sweep " + spec + " -o " + tmpdir() + "/sweep_fail -j 1");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("2/2 points done (0 skipped as already done, 1 failed)"), std::string::npos) << r.err;
    Result m = run_cli("merge " + tmpdir() + "/sweep_fail -o " + tmpdir() + "/fail.csv");
    EXPECT_EQ(m.status, 1);
    EXPECT_NE(slurp(tmpdir() + "/fail.csv").find("failed: " + kernel + ":7:5: unknown mnemonic 'frob'"),
              std::string::npos)
        << slurp(tmpdir() + "/fail.csv");
}

TEST(Cli, CompareTabulatesKernelsSideBySide)
{
    std::string json = tmpdir() + "/cmp.json", csv = tmpdir() + "/cmp.csv";
    Result r = run_cli("compare relu leaky_relu --shape 1,16,8,8 --json " + json + " --csv " + csv);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("relu fp16"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("leaky_relu fp16"), std::string::npos);
    for (const char *row : {"cycles", "instructions/vector", "IPC", "stall raw", "util valu", "efficiency", "max ULP"})
        EXPECT_NE(r.out.find(row), std::string::npos) << row;
    auto j = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(j.size(), 2u);
    EXPECT_EQ(j[0]["instructions/vector"], 1.0);
    EXPECT_EQ(j[1]["instructions/vector"], 2.0);
    EXPECT_EQ(count_lines(slurp(csv)), 3);
}

TEST(Cli, CompareWritesJsonToStdoutWithTheFiguresOfRun)
{
    // `--json -` is stdout, as for `run` (it used to write a file named "-"),
    // and alone there. compare runs its kernels in its own process (the C
    // engine); `run` here on the SystemC engine: the same figures.
    Result r = run_cli("compare relu gelu_tanh --shape 1,16,8,8 --set units.sfu.latency=30 --json -");
    ASSERT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 2u);
    const char *kernels[] = {"relu", "gelu_tanh"};
    for (int i = 0; i < 2; i++) {
        nlohmann::json run = run_json(std::string(kernels[i]) +
                                      " --dtype fp16 --shape 1,16,8,8 --set units.sfu.latency=30" + kSystemcEngine);
        EXPECT_EQ(j[i]["cycles_total"], run["cycles"]) << kernels[i];
        EXPECT_EQ(j[i]["stalls"], run["stalls"]) << kernels[i];
        EXPECT_EQ(j[i]["efficiency"], run["bound"]["efficiency"]) << kernels[i];
    }
    Result csv = run_cli("compare relu --shape 1,16,8,8 --csv -");
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("kernel,dtype,cycles,", 0), 0u) << csv.out;
    Result both = run_cli("compare relu --json - --csv -");
    EXPECT_EQ(both.status, 2);
    EXPECT_EQ(both.err, "--json - and --csv -: only one of them can write to stdout\n");
}

TEST(Cli, TheCApiRunsAKernelAsTheCliDoes)
{
    // npusim/sim.h (the C engine, in this process) against `npusim run` on
    // the SystemC engine: the same report but for the host timing.
    const std::string edge = std::string(NPUSIM_SOURCE_ROOT) + "/configs/edge.yaml";
    char err[256] = "";
    npu_sim_config *cfg = npu_sim_config_load(edge.c_str(), err, sizeof err);
    ASSERT_NE(cfg, nullptr) << err;
    ASSERT_EQ(npu_sim_config_set(cfg, "system.cores", "2", err, sizeof err), NPU_OK) << err;
    ASSERT_EQ(npu_sim_config_set(cfg, "units.sfu.latency", "30", err, sizeof err), NPU_OK) << err;
    npu_sim_run_options opts;
    npu_sim_run_options_default(&opts);
    opts.dtype = "fp32";
    const uint64_t shape[4] = {1, 32, 9, 7};
    std::copy(shape, shape + 4, opts.shape);
    opts.seed = 5;
    const npu_sim_param beta{"beta", 1.5};
    opts.params = &beta;
    opts.num_params = 1;
    npu_sim_result *r = npu_sim_run(cfg, "swish", &opts, err, sizeof err);
    ASSERT_NE(r, nullptr) << err;
    nlohmann::json got = nlohmann::json::parse(npu_sim_result_json(r));
    nlohmann::json want = run_json("swish --dtype fp32 --shape 1,32,9,7 --seed 5 --param beta=1.5 --config " + edge +
                                   " --set system.cores=2 --set units.sfu.latency=30" + kSystemcEngine);
    EXPECT_EQ(got["cycles"], npu_sim_result_cycles(r));
    got.erase("sim");
    want.erase("sim");
    EXPECT_EQ(got, want);
    npu_sim_result_free(r);
    npu_sim_config_free(cfg);
}

TEST(Cli, CommittedReferenceDocsAreUpToDate)
{
    // docs/config-reference.md is `npusim config docs`; docs/isa-table.md is
    // generated from `npusim isa --json`. Regenerate them when this fails.
    Result docs = run_cli("config docs");
    ASSERT_EQ(docs.status, 0);
    EXPECT_TRUE(docs.out == slurp(std::string(NPUSIM_SOURCE_ROOT) + "/docs/config-reference.md"))
        << "stale: run build/npusim config docs > docs/config-reference.md";
    std::string table = tmpdir() + "/isa-table.md";
    ASSERT_EQ(sh("/usr/bin/python3 " + std::string(NPUSIM_SOURCE_ROOT) + "/tools/gen_isa_table.py " + NPUSIM_EXE +
                 " > " + table),
              0);
    EXPECT_TRUE(slurp(table) == slurp(std::string(NPUSIM_SOURCE_ROOT) + "/docs/isa-table.md"))
        << "stale: run tools/gen_isa_table.py build/npusim > docs/isa-table.md";
}

// README's "What a run tells you" is this run's report, with the slot and
// unit pressure left out and the stalling instructions cut after three (its
// source lines went stale once: eltwise.s:222 for :288). Regenerate it from
// the run when this fails.
TEST(Cli, TheReadmesRunReportIsARealRun)
{
    const std::string root = std::string(NPUSIM_SOURCE_ROOT) + "/";
    const std::string cmd = "run relu --dtype fp16 --shape 1,64,56,56";
    Result r = run_cli(cmd);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string excerpt = "$ build/npusim " + cmd + "\n";
    std::istringstream lines(r.out);
    std::string line;
    bool skip = false;
    int stalling = -1;  // lines of the stalling instructions' table kept so far
    while (std::getline(lines, line)) {
        for (size_t at; (at = line.find(root)) != std::string::npos;)
            line.erase(at, root.size());
        if (line == "Slot pressure:" || line == "Unit pressure:")
            skip = true;
        if (line.rfind("Stalling instructions", 0) == 0)
            stalling = 0;
        if (skip || stalling > 4) {
            skip = skip && !line.empty();
            stalling = stalling > 4 && !line.empty() ? stalling : -1;
            continue;
        }
        excerpt += line + "\n";
        if (stalling >= 0 && ++stalling == 5)
            excerpt += "  ...\n";
    }
    const std::string readme = slurp(root + "README.md");
    const size_t at = readme.find("$ build/npusim " + cmd + "\n");
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(readme.substr(at, readme.find("```", at) - at), excerpt);
}

TEST(Cli, ConfigBaseInheritsAndOverrides)
{
    std::string base = tmpdir() + "/base.yaml", child = tmpdir() + "/child.yaml";
    write(base, "core:\n  vlen: 512\nunits:\n  sfu: {latency: 20}\n");
    write(child, "base: base.yaml\nunits:\n  sfu: {interval: 4}\n");
    Result r = run_cli("config show " + child);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("vlen: 512"), std::string::npos);
    EXPECT_NE(r.out.find("latency: 20\n    interval: 4"), std::string::npos) << r.out;
    write(base, "base: child.yaml\n");
    r = run_cli("config show " + child);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, child + ": base chain loops back to this file\n");
}

TEST(Cli, CompareOutputMatchesTheGoldenFile)
{
    // Regenerate after an intended change to the kernels or the timing model:
    //   build/npusim compare relu leaky_relu gelu_tanh --shape 1,16,8,8 > tests/golden/compare_small.txt
    Result r = run_cli("compare relu leaky_relu gelu_tanh --shape 1,16,8,8");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, slurp(std::string(NPUSIM_SOURCE_ROOT) + "/tests/golden/compare_small.txt"));
}

TEST(Cli, CompareInThreadsIsTheTableOfOneAfterAnother)
{
    // Three kernels at once (a fourth waits for a thread) against one at a
    // time: the same table, in the kernels' order; with a bad kernel, the
    // first bad one's error, as one after another would stop at it.
    const std::string kernels = "gelu_tanh relu mish silu --shape 1,16,8,8 --set units.sfu.latency=17";
    Result one = run_cli("compare " + kernels + " -j 1");
    Result three = run_cli("compare " + kernels + " -j 3");
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_EQ(three.status, 0) << three.err;
    EXPECT_EQ(three.out, one.out);
    Result bad = run_cli("compare relu nosuch mish also_missing --shape 1,16,8,8 -j 4");
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.out, "");
    EXPECT_EQ(bad.err.rfind("unknown kernel 'nosuch' ", 0), 0u) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

TEST(Cli, PreluTakesAPerChannelAlphaNpyOfShapeC)
{
    npusim::NpyArray x, alpha;
    x.dtype = alpha.dtype = NPU_F32;
    x.shape = {1, 3, 1, 2};
    alpha.shape = {3};
    std::vector<float> xs = {-2, 3, -2, 3, -2, 3}, as = {0.5f, -1.0f, 2.0f};
    x.data.assign(reinterpret_cast<uint8_t *>(xs.data()), reinterpret_cast<uint8_t *>(xs.data()) + 24);
    alpha.data.assign(reinterpret_cast<uint8_t *>(as.data()), reinterpret_cast<uint8_t *>(as.data()) + 12);
    std::string xp = tmpdir() + "/prelu_x.npy", ap = tmpdir() + "/prelu_alpha.npy", yp = tmpdir() + "/prelu_y.npy";
    npusim::write_npy(xp, x);
    npusim::write_npy(ap, alpha);
    Result r = run_cli("run prelu --input x=" + xp + " --input alpha=" + ap + " --output y=" + yp + " -q");
    ASSERT_EQ(r.status, 0) << r.err;
    npusim::NpyArray y = npusim::read_npy(yp);
    const float *yv = reinterpret_cast<const float *>(y.data.data());
    const float want[] = {-1, 3, 2, 3, -4, 3};
    for (size_t i = 0; i < 6; i++)
        EXPECT_EQ(yv[i], want[i]) << i;
    // An alpha of the wrong length is one line naming the file and the shape expected.
    r = run_cli("run prelu --shape 1,4,2,2 --input alpha=" + ap);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind(ap + ": shape (3) does not match", 0), 0u) << r.err;
}

TEST(Cli, ManifestSplitIsListedAndAnUnknownOneIsAOneLineError)
{
    Result k = run_cli("kernels");
    ASSERT_EQ(k.status, 0) << k.err;
    std::istringstream lines(k.out);
    std::string line;
    int listed = 0;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string name, dtypes, split;
        words >> name >> dtypes >> split;
        EXPECT_EQ(split, name.rfind("matmul", 0) == 0 || name.rfind("conv2d", 0) == 0 ? "tiles" : "blocks") << line;
        if (name == "prelu") {
            EXPECT_NE(line.find("alpha[C]"), std::string::npos) << line;
        }
        listed++;
    }
    EXPECT_GE(listed, 24);
    std::string path = tmpdir() + "/badsplit.s";
    write(path, "; @kernel badsplit\n; @input x\n; @output y\n; @dtypes fp32\n; @split rows\n"
                "; @reference relu\n; @tolerance fp32 ulp=0\n    halt\n");
    Result r = run_cli("run " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind(path + ":5:10: unknown split 'rows'", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(Cli, TheWorstElementIsNamedWithItsInputs)
{
    // swiglu fp32 on inputs of the test's own: the JSON's accuracy.worst is
    // the element whose ULP error (against the binary64 reference) is the
    // largest, the last of equals, with both inputs by name; the text says
    // the same. A run whose every element is exact has none (null).
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> da(-10.f, 10.f), db(-4.f, 4.f);
    std::vector<float> a(3 * 5 * 7), b(a.size());
    for (size_t i = 0; i < a.size(); i++)
        a[i] = da(gen), b[i] = db(gen);
    auto npy = [](const std::vector<float> &v) {
        npusim::NpyArray x;
        x.dtype = NPU_F32;
        x.shape = {1, 3, 5, 7};
        x.data.assign(reinterpret_cast<const uint8_t *>(v.data()), reinterpret_cast<const uint8_t *>(v.data()) + 4 * v.size());
        return x;
    };
    const std::string ap = tmpdir() + "/wa.npy", bp = tmpdir() + "/wb.npy", yp = tmpdir() + "/wy.npy";
    npusim::write_npy(ap, npy(a));
    npusim::write_npy(bp, npy(b));
    Result r = run_cli("run swiglu --dtype fp32 --input a=" + ap + " --input b=" + bp + " --output y=" + yp + " --json -");
    ASSERT_EQ(r.status, 0) << r.err;
    const npusim::NpyArray out = npusim::read_npy(yp);
    const float *y = reinterpret_cast<const float *>(out.data.data());
    const npu_reference *ref = npu_reference_find("swiglu");
    ASSERT_NE(ref, nullptr);
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < a.size(); i++) {
        const double x[2] = {a[i], b[i]};
        const double e = npu_ulp_error(y[i], ref->fn(x, nullptr), NPU_F32);
        if (e >= worst)
            worst = e, at = i;
    }
    ASSERT_GT(worst, 0.0);
    const auto w = nlohmann::json::parse(r.out)["accuracy"]["worst"];
    EXPECT_EQ(w["index"].get<size_t>(), at);
    EXPECT_EQ(w["inputs"]["a"].get<double>(), a[at]);
    EXPECT_EQ(w["inputs"]["b"].get<double>(), b[at]);
    EXPECT_EQ(w["got"].get<double>(), y[at]);
    EXPECT_EQ(w["ulp"].get<double>(), worst);
    Result text = run_cli("run swiglu --dtype fp32 --input a=" + ap + " --input b=" + bp);
    char line[200];
    std::snprintf(line, sizeof line, "  Worst element:             #%zu: a=%.9g, b=%.9g got %.9g, reference %.9g\n", at,
                  double(a[at]), double(b[at]), double(y[at]), w["reference"].get<double>());
    EXPECT_NE(text.out.find(line), std::string::npos) << line << text.out;

    Result exact = run_cli("run relu --dtype fp16 --shape 1,2,4,4 --json -");
    ASSERT_EQ(exact.status, 0) << exact.err;
    EXPECT_TRUE(nlohmann::json::parse(exact.out)["accuracy"]["worst"].is_null());
}

TEST(Cli, AgainstMeasuresTheOutputsAgainstASecondReference)
{
    // gelu_tanh's inherent error against exact GELU, on inputs where the two
    // formulas differ by about 1e-4: the report's figure is the largest
    // |y - gelu_erf(x)| over the kernel's own outputs.
    npusim::NpyArray in;
    in.dtype = NPU_F32;
    in.shape = {1, 1, 2, 4};
    std::vector<float> vals = {-3, -2, -1, -0.5f, 0.5f, 1, 2, 3};
    in.data.assign(reinterpret_cast<uint8_t *>(vals.data()), reinterpret_cast<uint8_t *>(vals.data()) + 32);
    std::string ip = tmpdir() + "/gx.npy", op = tmpdir() + "/gy.npy", jp = tmpdir() + "/g.json";
    npusim::write_npy(ip, in);
    Result r = run_cli("run gelu_tanh --dtype fp32 --input x=" + ip + " --output y=" + op + " --against gelu_erf --json " +
                       jp);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("Against 'gelu_erf'"), std::string::npos) << r.out;
    npusim::NpyArray out = npusim::read_npy(op);
    const float *y = reinterpret_cast<const float *>(out.data.data());
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < vals.size(); i++) {
        double e = std::fabs(double(y[i]) - 0.5 * vals[i] * (1 + std::erf(vals[i] / std::sqrt(2.0))));
        if (e > worst)
            worst = e, worst_x = vals[i];
    }
    EXPECT_GT(worst, 1e-5);  // the approximation's own error dominates the kernel's rounding
    auto j = nlohmann::json::parse(slurp(jp));
    EXPECT_EQ(j["against"]["reference"], "gelu_erf");
    EXPECT_NEAR(j["against"]["max_abs_err"].get<double>(), worst, worst * 1e-9);
    EXPECT_EQ(j["against"]["worst_abs_x"].get<double>(), worst_x);
    EXPECT_TRUE(j["passed"].get<bool>());  // pass/fail is still against gelu_tanh's own formula

    Result bad = run_cli("run gelu_tanh --against nosuch");
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.err, "reference nosuch: no such reference (`npusim kernels` lists them)\n");
    bad = run_cli("run swiglu --against gelu_erf");
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.err, "reference gelu_erf: reads 1 input; kernel 'swiglu' has 2\n");

    Result cmp = run_cli("compare gelu_tanh gelu_sigmoid --shape 1,16,8,8 --against gelu_erf");
    ASSERT_EQ(cmp.status, 0) << cmp.err;
    EXPECT_NE(cmp.out.find("vs gelu_erf max abs err"), std::string::npos) << cmp.out;
}

// The PID of a process that has ended (a child, reaped), or -1.
static pid_t dead_pid()
{
    const pid_t child = fork();
    if (child == 0)
        _exit(0);
    int st = 0;
    return child > 0 && waitpid(child, &st, 0) == child ? child : -1;
}

TEST(AtomicFile, RenameRemovesTheTempsOfDeadProcessesOnly)
{
    // A run killed before its rename leaves temp_path(FILE); the next write of
    // FILE removes it when PID no longer runs (pid 1 always does).
    const pid_t child = dead_pid();
    ASSERT_GT(child, 0);
    const std::string out = tmpdir() + "/atomic_out.json", dead = npusim::temp_path(out, child);
    const std::string other = npusim::temp_path(tmpdir() + "/atomic_other.json", child);
    // Another host's (or PID namespace's) temp: its PID means nothing here
    // (shards sharing a sweep folder removed each other's live temps).
    const std::string elsewhere = out + ".tmp.00000000-" + std::to_string(child);
    ASSERT_NE(dead, elsewhere);
    write(dead, "{\"trunc");
    write(npusim::temp_path(out, 1), "a live process's");
    write(other, "another file's");
    write(elsewhere, "another host's");
    npusim::write_file_atomic(out, "{}\n");
    EXPECT_EQ(slurp(out), "{}\n");
    EXPECT_NE(access(dead.c_str(), F_OK), 0) << "a dead process's temp stayed";
    EXPECT_EQ(access(npusim::temp_path(out, 1).c_str(), F_OK), 0);
    EXPECT_EQ(access(other.c_str(), F_OK), 0);
    EXPECT_EQ(access(elsewhere.c_str(), F_OK), 0);
    // An output named without a folder (the temps were looked for as ".NAME...").
    write(dead, "{\"trunc");
    ASSERT_EQ(sh("cd " + tmpdir() + " && " + NPUSIM_EXE + " run relu --shape 1,1,4,4 -q --json atomic_out.json"), 0);
    EXPECT_NE(access(dead.c_str(), F_OK), 0) << "a dead process's temp stayed beside a bare name";
}

#if NPUSIM_HAVE_SYSTEMC
// SystemC writes the VCD as temp_path(FILE) + ".vcd" and it is renamed; a
// killed run's (NAME.tmp.PID.vcd, as it was) stayed for good: a later run
// of the same VCD now removes a dead process's, as the other writers do.
TEST(AtomicFile, AVcdRunRemovesTheVcdTempsOfDeadProcessesOnly)
{
    const pid_t child = dead_pid();
    ASSERT_GT(child, 0);
    const std::string out = tmpdir() + "/stale.vcd", dead = npusim::temp_path(out, child) + ".vcd",
                      live = npusim::temp_path(out, 1) + ".vcd";
    write(dead, "$date cut short");
    write(live, "a live process's");
    ASSERT_EQ(sh(std::string(NPUSIM_EXE) + " run relu --shape 1,1,4,4 -q --vcd " + out), 0);
    EXPECT_NE(slurp(out).find("$enddefinitions"), std::string::npos);
    EXPECT_NE(access(dead.c_str(), F_OK), 0) << "a dead process's VCD temp stayed";
    EXPECT_EQ(access(live.c_str(), F_OK), 0);
}
#endif

// A .npy header's shape is a Python tuple: (1024) is the number 1024, which
// numpy refuses; one dimension is (1024,).
TEST(Npy, AOneDimensionalShapeIsATuple)
{
    auto file = [](const std::string &shape) { return npy_file("<f2", shape, std::string(4, '\0')); };
    EXPECT_EQ(npusim::parse_npy(file("(2,)"), "ok.npy").shape, std::vector<uint64_t>{2});
    EXPECT_EQ(npusim::parse_npy(file("(1, 2)"), "ok.npy").shape, (std::vector<uint64_t>{1, 2}));
    try {
        npusim::parse_npy(file("(2)"), "bad.npy");
        ADD_FAILURE() << "(2) taken as a shape";
    } catch (const npusim::Error &e) {
        EXPECT_EQ(std::string(e.what()), "bad.npy: bad .npy header: shape (2) is a number, not a tuple (one dimension is (2,))");
    }
}

// An output that is not a plain file is written, never replaced: a device
// (as root, renaming a temp over /dev/null made it a plain file), a FIFO,
// and a link's target (the link stays a link); /dev/full says it is full.
TEST(AtomicFile, DevicesFifosAndLinksAreWrittenNotReplaced)
{
    // (A machine whose /dev/null an older npusim replaced checks nothing there.)
    struct stat st;
    const bool null_is_device = stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode);
    npusim::write_file_atomic("/dev/null", "{}\n");
    ASSERT_EQ(stat("/dev/null", &st), 0);
    EXPECT_EQ(S_ISCHR(st.st_mode), null_is_device);
    try {
        npusim::write_file_atomic("/dev/full", std::string(1 << 16, 'x'));
        ADD_FAILURE() << "/dev/full took the bytes";
    } catch (const npusim::Error &e) {
        EXPECT_EQ(std::string(e.what()), "/dev/full: write failed: No space left on device");
    }
    ASSERT_EQ(stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));

    const std::string fifo = tmpdir() + "/atomic_fifo";
    unlink(fifo.c_str());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::string got;
    std::thread reader([&] { got = slurp(fifo); });
    npusim::write_file_atomic(fifo, "through the fifo\n");
    reader.join();
    EXPECT_EQ(got, "through the fifo\n");
    ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));

    const std::string target = tmpdir() + "/atomic_target.json", link = tmpdir() + "/atomic_link.json";
    write(target, "old");
    unlink(link.c_str());
    ASSERT_EQ(symlink("atomic_target.json", link.c_str()), 0);  // relative to the link's folder
    npusim::write_file_atomic(link, "new");
    EXPECT_EQ(slurp(target), "new");
    ASSERT_EQ(lstat(link.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    Result r = run_cli("run relu --shape 1,16,8,8 -q --json /dev/null");
    EXPECT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(stat("/dev/null", &st), 0);
    EXPECT_EQ(S_ISCHR(st.st_mode), null_is_device);
}

// Traces are written as the run goes and the VCD by SystemC under a name of
// its own: they go where a whole output goes. A FIFO stays a FIFO (it was
// renamed over: a plain file took its place, and the reader got nothing), a
// link stays a link, and /dev/stdout of a `>>` file appends (the JSON and
// traces were renamed over the file, losing what it held and the report).
TEST(AtomicFile, StreamedOutputsGoWhereAWholeOneGoes)
{
    // A VCD's header holds the time of day it was written.
    auto undated = [](std::string t) {
        const size_t at = t.find("$date"), end = t.find("$end", at);
        return at == std::string::npos || end == std::string::npos ? t : t.erase(at, end - at);
    };
    struct stat st;
    const struct {
        const char *flag, *starts;
    } outputs[] = {{"--trace", "{"}, {"--konata", "Kanata"}, {"--vcd", "$date"}, {"--mem-trace", "0 "}};
    for (const auto &o : outputs) {
        SCOPED_TRACE(o.flag);
        const std::string fifo = tmpdir() + "/stream_fifo";
        unlink(fifo.c_str());
        ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
        std::string got;
        std::thread reader([&] { got = slurp(fifo); });
        Result r = run_cli(std::string("run relu --shape 1,16,8,8 -q ") + o.flag + " " + fifo);
        reader.join();
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(got.rfind(o.starts, 0), 0u) << got.substr(0, 80);
        ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
        EXPECT_TRUE(S_ISFIFO(st.st_mode));

        const std::string target = tmpdir() + "/stream_target", link = tmpdir() + "/stream_link";
        write(target, "old");
        unlink(link.c_str());
        ASSERT_EQ(symlink("stream_target", link.c_str()), 0);
        r = run_cli(std::string("run relu --shape 1,16,8,8 -q ") + o.flag + " " + link);
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(undated(slurp(target)), undated(got));  // the same run, the same bytes
        ASSERT_EQ(lstat(link.c_str(), &st), 0);
        EXPECT_TRUE(S_ISLNK(st.st_mode));

        const std::string log = tmpdir() + "/stream_log.txt";
        write(log, "before\n");
        r = run_cli(std::string("run relu --shape 1,16,8,8 ") + o.flag + " /dev/stdout >> " + log);
        EXPECT_EQ(r.status, 0) << r.err;
        const std::string text = slurp(log);
        EXPECT_EQ(undated(text).rfind("before\n" + undated(got), 0), 0u) << text.substr(0, 80);
        EXPECT_NE(text.find("Result: PASS"), std::string::npos);
    }
    const std::string log = tmpdir() + "/stream_log.txt";
    write(log, "before\n");
    Result r = run_cli("run relu --shape 1,16,8,8 --json /dev/stdout >> " + log);
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string text = slurp(log);
    EXPECT_EQ(text.rfind("before\n{", 0), 0u) << text.substr(0, 80);
    EXPECT_NE(text.find("Result: PASS"), std::string::npos);
    // A descriptor open for reading only is refused before the run.
    r = run_cli("run relu --shape 1,16,8,8 --json /dev/fd/3 3< " + log);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "/dev/fd/3: cannot write: Bad file descriptor\n");
}

// `npusim asm -o` and npu_program_write_binary renamed NAME.tmp over their
// path: `-o FIFO` left a plain file and, as root, README's `-o /dev/null`
// replaced the device. The library writes devices and FIFOs in place, the
// CLI goes where every output goes.
TEST(AtomicFile, AnAssembledProgramGoesWhereEveryOutputGoes)
{
    const std::string src = std::string(NPUSIM_SOURCE_ROOT) + "/kernels/relu.s -I " + NPUSIM_SOURCE_ROOT +
                            "/kernels -D DT=f16 -D DT_BYTES=2";
    const std::string file = tmpdir() + "/asm_plain.bin";
    ASSERT_EQ(run_cli("asm " + src + " -o " + file).status, 0);
    const std::string want = slurp(file);
    ASSERT_GT(want.size(), 16u);
    struct stat st;
    const std::string fifo = tmpdir() + "/asm_fifo";
    unlink(fifo.c_str());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::string got;
    std::thread reader([&] { got = slurp(fifo); });
    Result r = run_cli("asm " + src + " -o " + fifo);
    reader.join();
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(got, want);
    ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    const std::string log = tmpdir() + "/asm_log.bin";
    write(log, "before");
    r = run_cli("asm " + src + " -o /dev/stdout >> " + log);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(slurp(log).substr(0, 6 + want.size()), "before" + want);

    // The library alone, through a FIFO.
    npu_program p;
    npu_program_init(&p);
    npu_diag d{};
    ASSERT_EQ(npu_program_load_binary_file(&p, file.c_str(), &d), NPU_OK) << d.message;
    got.clear();
    std::thread reader2([&] { got = slurp(fifo); });
    EXPECT_EQ(npu_program_write_binary(&p, fifo.c_str(), &d), NPU_OK) << d.message;
    reader2.join();
    npu_program_free(&p);
    EXPECT_EQ(got, want);
    ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// An error is one line, whatever it quotes: a newline in a path is an escape.
TEST(Cli, AnErrorQuotingALineBreakIsStillOneLine)
{
    Result r = run_cli("run relu --json '/nonexistent-dir/a\nb.json'");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "/nonexistent-dir/a\\nb.json: cannot write: No such file or directory\n");
}

// NPUSIM_KERNELS names a folder or is an error: a missing folder listed no
// kernels with exit status 0, an empty value looked kernels up in "/".
TEST(Cli, NpusimKernelsIsAFolderOrAnError)
{
    auto with = [](const std::string &env, const std::string &args) {
        const std::string err = tmpdir() + "/env_err.txt";
        const int rc = sh(env + " " + NPUSIM_EXE + " " + args + " > " + tmpdir() + "/env_out.txt 2> " + err);
        return std::make_pair(rc, slurp(err));
    };
    EXPECT_EQ(with("NPUSIM_KERNELS=/nonexistent-dir", "kernels"),
              std::make_pair(2, std::string("NPUSIM_KERNELS=/nonexistent-dir: No such file or directory\n")));
    EXPECT_EQ(with("NPUSIM_KERNELS=", "run relu"),
              std::make_pair(2, std::string("NPUSIM_KERNELS is empty: name a folder of kernels, or unset it for the "
                                            "shipped ones\n")));
    const std::string file = tmpdir() + "/not_a_folder";
    write(file, "");
    EXPECT_EQ(with("NPUSIM_KERNELS=" + file, "run relu"),
              std::make_pair(2, "NPUSIM_KERNELS=" + file + ": not a folder\n"));
    EXPECT_EQ(with("NPUSIM_KERNELS=" + std::string(NPUSIM_SOURCE_ROOT) + "/kernels", "run relu --shape 1,1,4,4 -q"),
              std::make_pair(0, std::string()));
}

// What a command prints must reach stdout: a closed stdout or a full disk
// lost the report (or cut the JSON) with exit status 0. A closed stdout is
// held so that no file opened later takes its descriptor.
TEST(Cli, AReportThatCannotReachStdoutIsAnError)
{
    Result r = run_cli("run relu --shape 1,16,8,8 --json - -q >&-");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "npusim: standard output: write failed: Bad file descriptor\n");
    r = run_cli("run relu --shape 1,16,8,8 >&-");
    EXPECT_EQ(r.status, 2);
    r = run_cli("run relu --shape 1,16,8,8 --json - -q > /dev/full");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "npusim: standard output: write failed\n");
    // Nothing printed, nothing lost.
    r = run_cli("run relu --shape 1,16,8,8 -q --json " + tmpdir() + "/closed.json >&-");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(slurp(tmpdir() + "/closed.json"))["passed"], true);
}

// JSON is UTF-8: a path that is not (a config named c\xff.yaml) is written
// with U+FFFD for its stray byte, where the run ended in "internal error".
TEST(Cli, APathThatIsNotUtf8IsWrittenWithAReplacementCharacter)
{
    const std::string config = tmpdir() + "/c\xff.yaml";
    write(config, "core:\n  vlen: 256\n");
    Result r = run_cli("run relu --shape 1,16,8,8 -q --json - --config '" + config + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["config"]["source"], tmpdir() + "/c\xef\xbf\xbd.yaml");
}

// Every way out of a run, an error after its cores and memory system exist
// included, frees what the run built: a leak there (valgrind found one
// core's 256 KiB UB lost on a --warm-l2 error) turns the exit status of the
// sanitizer build (LeakSanitizer) from 2 into a failure.
TEST(Cli, RunErrorPathsExitWithTheirOneLine)
{
    const struct {
        const char *args, *err;
    } cases[] = {
        {"relu --warm-l2 nope", "warm L2 tensor nope: kernel 'relu' has no tensor of that name\n"},
        {"relu --warm-l2 x --set memory.model=ideal",
         "warming the L2 needs memory.model: l2 and sim.mode: timed\n"},
        {"relu --set sim.mode=functional --mem-trace /dev/null",
         "a memory trace needs memory.model: l2 and sim.mode: timed\n"},
        {"relu --set system.cores=2 --mem-trace /nonexistent-dir/t.din",
         "/nonexistent-dir/t.din: cannot write: No such file or directory\n"},
        {"relu --param alpha=1", "parameter alpha: kernel 'relu' has no such parameter\n"},
        {"relu --input nope=x.npy", "input nope: kernel 'relu' has no input of that name\n"},
        {"relu --input x=/nonexistent-dir/x.npy", "/nonexistent-dir/x.npy: cannot open: No such file or directory\n"},
        // The library's words, as Python's run(dtype=...) and run(tiling=...) give them.
        {"relu --dtype fp64", "dtype: unknown dtype 'fp64' (fp16, fp32)\n"},
        {"relu --dtype ''", "dtype: unknown dtype '' (fp16, fp32)\n"},
        {"compare relu --dtype fp64", "dtype: unknown dtype 'fp64' (fp16, fp32)\n"},
        {"relu --tiling guess", "tiling: 'guess' is not rule or measure\n"},
        {"relu --shape ''", "shape: expected 1 to 4 dimensions N,C,H,W, got ''\n"},
    };
    for (const auto &c : cases) {
        const std::string args = c.args;
        Result r = run_cli(args.rfind("compare ", 0) == 0 ? args : "run " + args);
        EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
        EXPECT_EQ(r.err, c.err) << c.args;
        EXPECT_EQ(r.out, "") << c.args;
    }
    // A guest fault is a report, not an error: exit 1, the trap named.
    Result trap = run_cli("run relu --set system.cores=2 --max-instructions 10");
    EXPECT_EQ(trap.status, 1) << trap.err;
    EXPECT_NE(trap.out.find("trap: core 0: max_instructions"), std::string::npos) << trap.out;
    EXPECT_EQ(trap.err, "");
}

// The text report, byte for byte, on deterministic runs (it prints no host
// timing). Paths are printed as resolved, so the source root is taken out.
// Regenerate after an intended change to the kernels, the timing model or
// the report (docs/metrics.md says what each line means):
//   build/npusim run relu --shape 1,16,8,8 | sed "s|$PWD/||g" > tests/golden/run_relu.txt
//   build/npusim run gelu_tanh --dtype fp16 --shape 1,16,8,8 --set system.cores=2 |
//     sed "s|$PWD/||g" > tests/golden/run_gelu_tanh_fp16_2cores.txt
TEST(Cli, RunReportMatchesTheGoldenFile)
{
    const std::string root = std::string(NPUSIM_SOURCE_ROOT) + "/";
    const struct {
        const char *args, *golden;
    } runs[] = {
        {"relu --shape 1,16,8,8", "run_relu.txt"},
        {"gelu_tanh --dtype fp16 --shape 1,16,8,8 --set system.cores=2", "run_gelu_tanh_fp16_2cores.txt"},
    };
    for (const auto &g : runs) {
        Result r = run_cli(std::string("run ") + g.args);
        ASSERT_EQ(r.status, 0) << g.args << "\n" << r.err;
        std::string out = r.out;
        for (size_t at; (at = out.find(root)) != std::string::npos;)
            out.erase(at, root.size());
        EXPECT_TRUE(out == slurp(root + "tests/golden/" + g.golden))
            << "stale tests/golden/" << g.golden << " (see the comment above to regenerate); got:\n" << out;
    }
}

// Schedules kept across runs (NPUSIM_SCHEDULE_CACHE; npu_asm_cache_set_file):
// a second run takes every block's schedule from the file (which therefore
// does not grow) and reports the same bits; a file of garbage, of another
// build's lines, of a line cut short or of a (K, II) that does not schedule
// changes nothing either; "off" keeps no file.
TEST(Cli, KeptSchedulesChangeNothingButTheTime)
{
    const std::string file = tmpdir() + "/schedules";
    const std::string args = "gelu_tanh --dtype fp16 --shape 1,16,8,8 --set units.sfu.latency=30";
    auto same = [](nlohmann::json a, nlohmann::json b) {
        for (nlohmann::json *j : {&a, &b})
            for (const char *k : {"host_seconds", "sim_cycles_per_second", "sim_instructions_per_second"})
                j->at("sim").erase(k);
        return a == b;
    };
    const char *was = std::getenv("NPUSIM_SCHEDULE_CACHE");
    const std::string before = was ? was : "";
    std::remove(file.c_str());
    setenv("NPUSIM_SCHEDULE_CACHE", "off", 1);
    const nlohmann::json fresh = run_json(args);
    EXPECT_EQ(slurp(file), "") << "off keeps no file";

    setenv("NPUSIM_SCHEDULE_CACHE", file.c_str(), 1);
    EXPECT_TRUE(same(run_json(args), fresh));
    const std::string kept = slurp(file);
    ASSERT_EQ(kept.rfind("npusim-schedule ", 0), 0u) << kept;
    EXPECT_EQ(kept.back(), '\n');
    EXPECT_TRUE(same(run_json(args), fresh));
    EXPECT_EQ(slurp(file), kept) << "the second run searched again";

    // A file of more blocks than the process keeps (1,024), the run's own
    // first: every line can be found, so nothing is searched or appended.
    {
        const std::string prefix = kept.substr(0, kept.find(' ', kept.find(' ') + 1) + 1);
        std::string many = kept;
        for (int i = 0; i < 1100; i++) {
            char key[17];
            std::snprintf(key, sizeof key, "%016x", i);
            many += prefix + "1 9 0 - " + key + "\n";
        }
        write(file, many);
        EXPECT_TRUE(same(run_json(args), fresh));
        EXPECT_EQ(slurp(file), many) << "a block of the file's start was searched again";
        // The run's own lines last, after 1.4 MB of lines (the file is read
        // 256 KiB at a time, so lines straddle the slices) and a line longer
        // than any of this build (skipped unread): found all the same.
        std::string after;
        for (int i = 0; i < 4000; i++) {
            char key[17];
            std::snprintf(key, sizeof key, "%016x", i);
            after += prefix + "1 9 0 - " + std::string(300, 'a') + key + "\n";
        }
        after += prefix + "1 9 0 - " + std::string(300000, 'b') + "\n" + kept;
        write(file, after);
        EXPECT_TRUE(same(run_json(args), fresh));
        EXPECT_EQ(slurp(file), after) << "a block kept at the file's end was searched again";
        write(file, kept);
    }

    // The kept line with II 1, which schedules nothing: the block is searched.
    std::string first = kept.substr(0, kept.find('\n'));
    std::istringstream in(first);
    std::string word, version, K, II, way, cycles, key;
    in >> word >> version >> K >> II >> way >> cycles >> key;
    write(file, "garbage\n\nnpusim-schedule 0123-le64 1 9 0 - " + key + "\n" + word + " " + version + " 1 1 0 - " +
                    key + "\n" + word + " " + version + " 1 9 0 - " + key.substr(0, key.size() / 2));
    EXPECT_TRUE(same(run_json(args), fresh));
    if (was)
        setenv("NPUSIM_SCHEDULE_CACHE", before.c_str(), 1);
    else
        unsetenv("NPUSIM_SCHEDULE_CACHE");
}

TEST(Cli, GraphRunsEachVariantAndWritesItsJson)
{
    const std::string spec = tmpdir() + "/graph.yaml";
    std::ofstream(spec) << "name: tiny\ntensors:\n  x: {shape: [20, 33]}\n  w: {shape: [33, 18]}\n  b: {shape: [18]}\n"
                           "variants:\n  unfused:\n"
                           "    - {kernel: matmul, inputs: {a: x, b: w}, output: h}\n"
                           "    - {kernel: bias_add, inputs: {x: h, bias: b}, output: y}\n"
                           "  fused:\n"
                           "    - {kernel: matmul_add, inputs: {a: x, b: w, bias: b}, output: y}\n";
    Result r = run_cli("graph " + spec + " --json - --set core.freq_mhz=500");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["variants"].size(), 2u);
    EXPECT_EQ(j["variants"][0]["name"], "unfused");
    EXPECT_EQ(j["freq_mhz"], 500);
    for (const auto &v : j["variants"]) {
        EXPECT_TRUE(v["passed"].get<bool>()) << v.dump();
        EXPECT_DOUBLE_EQ(v["samples_per_second"].get<double>(), 500e6 / v["cycles"].get<double>());
    }
    EXPECT_GT(j["variants"][0]["dram_bytes"].get<uint64_t>(), j["variants"][1]["dram_bytes"].get<uint64_t>());
    Result text = run_cli("graph " + spec + " --variant fused");
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("matmul_add(a=x, b=w, bias=b) -> y"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("unfused"), std::string::npos) << text.out;
    // A bad spec: one line, exit 2.
    std::ofstream(spec) << "tensors: {}\nvariants:\n  v:\n    - {kernel: nosuch, inputs: {}, output: y}\n";
    Result bad = run_cli("graph " + spec);
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    EXPECT_NE(bad.err.find(spec + ":4:16: variants.v[0].kernel: unknown kernel 'nosuch'"), std::string::npos) << bad.err;
}

// The accuracy section says which side of its tolerance a figure is on and
// what decided a failed element: 1.000035 ULP over a tolerance of 1 printed
// as "1" beside a FAIL, prelu's lines showed x alone, and a zero of the
// wrong sign read "(0 ULP)".
TEST(Cli, AFailedElementIsShownWithWhatDecidedIt)
{
    EXPECT_EQ(npusim::ulp_text(1.000035, 1.0), "1.00004");
    EXPECT_EQ(npusim::ulp_text(0.99999, 1.0), "0.99999");
    EXPECT_EQ(npusim::ulp_text(1.0000000000000002, 1.0), "1.0000000000000002");
    EXPECT_EQ(npusim::ulp_text(8.58e4, 4.0), "8.58e+04");
    EXPECT_EQ(npusim::ulp_text(1.0, 1.0), "1");
    Result r = run_cli("run swiglu --shape 1,16,8,8 --set sim.mode=functional --set sfu.mode=approx --set sfu.bits=8");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.out.find("    element #0: a=-0.00542219123, b=2.73827457 got -0.00739472499, reference "
                         "-0.00740359781 ("),
              std::string::npos)
        << r.out;
}
