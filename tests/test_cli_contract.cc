// The command line's contract on bad input, end to end: one line on stderr
// (`file:line:col: what`, a key path, or the flag and value), exit 2, and
// nothing written, checked before any kernel runs; or the input taken
// exactly as written. Each case is the one a user met.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "npy.h"

#include "cli_helpers.h"

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

using namespace cli_test;
namespace fs = std::filesystem;

namespace {

// A fresh folder of its own under the test's scratch folder.
std::string fresh_dir(const std::string &name)
{
    const std::string d = tmpdir() + "/" + name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// Runs in `dir` for the scope's life, so that relative paths are tested as
// users type them.
class InDir {
public:
    explicit InDir(const std::string &dir) : back_(fs::current_path()) { fs::current_path(dir); }
    ~InDir() { fs::current_path(back_); }

private:
    fs::path back_;
};

bool exists(const std::string &path)
{
    return ::access(path.c_str(), F_OK) == 0;
}

// The files in `dir`, for "nothing written".
size_t files_in(const std::string &dir)
{
    size_t n = 0;
    for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir))
        n++;
    return n;
}

// An error exit: status 2, exactly `err` (one line) on stderr, nothing on stdout.
void expect_refused(const std::string &args, const std::string &err)
{
    Result r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err, err) << args;
    EXPECT_EQ(r.out, "") << args;
}

}  // namespace

// x.json, ./x.json, $PWD/x.json, sub/../x.json and a path through a linked
// folder all name one file, existing or not: the second is refused before
// the run, whichever command and flags name them.
TEST(CliContract, TwoOutputsNamingOneFileAreRefusedHoweverSpelled)
{
    const std::string d = fresh_dir("same_file");
    fs::create_directory(d + "/sub");
    fs::create_directory_symlink(d, d + "/link");
    InDir in(d);
    const std::string run = "run relu --shape 1,1,4,4 -q ";
    const std::string twice = ": named by both ";
    expect_refused(run + "--json x.json --trace ./x.json",
                   "./x.json" + twice + "--json and --trace (each output needs a file of its own)\n");
    expect_refused(run + "--json x.json --output y=./x.json",
                   "./x.json" + twice + "--json and --output y (each output needs a file of its own)\n");
    expect_refused(run + "--json " + d + "/x.json --output y=x.json",
                   "x.json" + twice + "--json and --output y (each output needs a file of its own)\n");
    expect_refused(run + "--mem-trace z.npy --output y=./z.npy",
                   "./z.npy" + twice + "--mem-trace and --output y (each output needs a file of its own)\n");
    expect_refused(run + "--json x.json --konata sub/../x.json",
                   "sub/../x.json" + twice + "--json and --konata (each output needs a file of its own)\n");
    expect_refused(run + "--json link/x.json --trace " + d + "/x.json",
                   d + "/x.json" + twice + "--json and --trace (each output needs a file of its own)\n");
    expect_refused("compare relu --shape 1,1,4,4 --json c.json --csv ./c.json",
                   "./c.json" + twice + "--json and --csv (each output needs a file of its own)\n");
    expect_refused("merge nowhere -o m.csv --jsonl ./m.csv",
                   "./m.csv" + twice + "-o and --jsonl (each output needs a file of its own)\n");
    // An existing file, named through the linked folder.
    write(d + "/old.json", "{}\n");
    expect_refused(run + "--json old.json --trace link/old.json",
                   "link/old.json" + twice + "--json and --trace (each output needs a file of its own)\n");
    EXPECT_EQ(slurp(d + "/old.json"), "{}\n");
    EXPECT_EQ(files_in(d), 3u);  // sub, link, old.json: nothing written
    // Distinct files are fine.
    Result ok = run_cli(run + "--json x.json --trace sub/x.json");
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_TRUE(exists(d + "/x.json") && exists(d + "/sub/x.json"));
}

// `asm n.s -o n.s` wrote the binary over the source and exited 0. An output
// naming the input or a file it includes is refused, however spelled, and
// the source is left as it was.
TEST(CliContract, AsmRefusesAnOutputThatIsOneOfItsSources)
{
    const std::string d = fresh_dir("asm_source");
    fs::create_directory(d + "/lib");
    fs::create_directory_symlink(d, d + "/link");
    InDir in(d);
    const std::string src = ".include \"lib/k.s\"\n    halt\n", lib = "    nop\n";
    write(d + "/n.s", src);
    write(d + "/lib/k.s", lib);
    fs::create_symlink("n.s", d + "/sym.s");
    fs::create_hard_link(d + "/n.s", d + "/hard.s");
    const std::string why = " (an output cannot replace a file it is made from)\n";
    expect_refused("asm n.s -o n.s", "n.s: named by both the input and -o" + why);
    expect_refused("asm n.s -o ./n.s", "./n.s: named by both the input and -o" + why);
    expect_refused("asm n.s -o " + d + "/n.s", d + "/n.s: named by both the input and -o" + why);
    expect_refused("asm " + d + "/n.s -o link/n.s", "link/n.s: named by both the input and -o" + why);
    expect_refused("asm n.s -o sym.s", "sym.s: named by both the input and -o" + why);
    expect_refused("asm n.s -o hard.s", "hard.s: named by both the input and -o" + why);
    expect_refused("asm n.s -o lib/../lib/k.s", "lib/../lib/k.s: named by both an included file and -o" + why);
    EXPECT_EQ(slurp(d + "/n.s"), src);
    EXPECT_EQ(slurp(d + "/lib/k.s"), lib);
    EXPECT_EQ(files_in(d), 5u);  // lib, link, n.s, sym.s, hard.s: nothing written
    Result ok = run_cli("asm n.s -o n.bin");
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_TRUE(exists(d + "/n.bin"));
}

// cache, compare and graph wrote their outputs over their own inputs (the
// trace, the config, a kernel's source, a step's kernel) and exited 0, as
// run and asm refuse to.
TEST(CliContract, OutputsNeverReplaceTheFilesACommandReads)
{
    const std::string d = fresh_dir("inputs_kept");
    InDir in(d);
    const std::string root = NPUSIM_SOURCE_ROOT;
    const std::string din = "0 1000 4\n1 1040 4\n", cfg = "core: {vlen: 256}\n";
    write(d + "/t.din", din);
    write(d + "/c.yaml", cfg);
    write(d + "/k.s", slurp(root + "/kernels/relu.s"));
    const std::string why = " (an output cannot replace a file it is made from)\n";
    expect_refused("cache t.din --json t.din", "t.din: named by both the trace and --json" + why);
    expect_refused("cache t.din --config c.yaml --json ./c.yaml", "./c.yaml: named by both the config and --json" + why);
    expect_refused("compare relu --shape 1,1,4,4 --config c.yaml --csv c.yaml",
                   "c.yaml: named by both the config and --csv" + why);
    expect_refused("compare ./k.s --shape 1,1,4,4 --json k.s",
                   "k.s: named by both the kernel and --json" + why);
    EXPECT_EQ(slurp(d + "/t.din"), din);
    EXPECT_EQ(slurp(d + "/c.yaml"), cfg);
}

// A manifest's input range past the dtype's finite values made every
// generated element past it infinite (range=-1e10,8 in fp16: all -inf, and
// the run passed); given inputs are the caller's.
TEST(CliContract, AnInputRangePastTheDtypeIsRefused)
{
    const std::string d = fresh_dir("input_range");
    std::string src = slurp(std::string(NPUSIM_SOURCE_ROOT) + "/kernels/relu.s");
    const std::string from = "x range=-8,8";
    ASSERT_NE(src.find(from), std::string::npos);
    src.replace(src.find(from), from.size(), "x range=-1e10,8");
    write(d + "/wide.s", src);
    expect_refused("run " + d + "/wide.s --dtype fp16 --shape 1,1,4,4",
                   "input x: its range -1e+10 .. 8 is past fp16's finite values (-65504 .. 65504); give inputs, or a "
                   "manifest range within them\n");
    Result fp32 = run_cli("run " + d + "/wide.s --dtype fp32 --shape 1,1,4,4 -q");
    EXPECT_EQ(fp32.status, 0) << fp32.err;
}

// An output that cannot be written is found before any work: merge used to
// leave its CSV when the JSONL's folder was missing, compare to simulate
// every kernel and print the table first.
TEST(CliContract, AnOutputThatCannotBeWrittenStopsTheCommandBeforeItWrites)
{
    const std::string d = fresh_dir("unwritable");
    const std::string missing = "/nonexistent-dir";
    const std::string enoent = ": cannot write: No such file or directory\n";
    expect_refused("merge " + d + " -o " + d + "/v.csv --jsonl " + missing + "/v.jsonl", missing + "/v.jsonl" + enoent);
    expect_refused("compare relu gelu_tanh --json " + missing + "/x.json", missing + "/x.json" + enoent);
    expect_refused("compare relu --csv " + d + "/c.csv --json " + missing + "/x.json", missing + "/x.json" + enoent);
    expect_refused("run relu --shape 1,1,4,4 --json " + d + "/r.json --output y=" + missing + "/y.npy",
                   missing + "/y.npy" + enoent);
    expect_refused("cache " + std::string(NPUSIM_SOURCE_ROOT) + "/traces/stream_read_write.din --json " + missing +
                       "/c.json",
                   missing + "/c.json" + enoent);
    expect_refused("asm " + std::string(NPUSIM_SOURCE_ROOT) + "/kernels/relu.s -I " + NPUSIM_SOURCE_ROOT +
                       "/kernels -D DT=f32 -D DT_BYTES=4 -D TILE_MAX=16384 -o " + missing + "/k.bin",
                   missing + "/k.bin" + enoent);
    // A folder is not a file to write.
    expect_refused("run relu --shape 1,1,4,4 --json " + d, d + ": cannot write: Is a directory\n");
    EXPECT_EQ(files_in(d), 0u);
}

// Perfetto's own max_file_size_bytes leaves a trace that opens; so does
// ours, so a cap smaller than the smallest complete file is refused.
TEST(CliContract, ATraceCapHoldsAtLeastOneCompleteFile)
{
    const std::string d = fresh_dir("trace_cap");
    for (const char *n : {"0", "10", "84"})
        expect_refused("run relu --shape 1,1,4,4 -q --trace " + d + "/t.json --trace-max-bytes " + n,
                       std::string("--trace-max-bytes ") + n +
                           ": below the 85 bytes a Perfetto trace needs (its header and tail)\n");
    expect_refused("run relu --shape 1,1,4,4 -q --konata " + d + "/t.kanata --trace-max-bytes 11",
                   "--trace-max-bytes 11: below the 12 bytes a Konata log needs (its header)\n");
    expect_refused("run relu --shape 1,1,4,4 -q --trace-max-bytes -1",
                   "--trace-max-bytes: '-1' is not a whole number (0 .. 18446744073709551615)\n");
    EXPECT_EQ(files_in(d), 0u);

    // At the minimum: the document without an event, and the note.
    Result r = run_cli("run relu --shape 1,1,4,4 -q --trace " + d + "/t.json --konata " + d +
                       "/t.kanata --trace-max-bytes 85");
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string json = slurp(d + "/t.json");
    EXPECT_EQ(json.size(), 85u);
    nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << json;
    EXPECT_EQ(j["traceEvents"], nlohmann::json::array());
    EXPECT_EQ(r.err, "npusim: " + d +
                         "/t.json: trace stopped early: it reached --trace-max-bytes (85 bytes); the file holds the "
                         "events before that\nnpusim: " +
                         d +
                         "/t.kanata: Konata log stopped early: it reached --trace-max-bytes (85 bytes); the file "
                         "holds the cycles before that\n");
    EXPECT_LE(slurp(d + "/t.kanata").size(), 85u);
    Result k = run_cli("run relu --shape 1,1,4,4 -q --konata " + d + "/min.kanata --trace-max-bytes 12");
    EXPECT_EQ(k.status, 0) << k.err;
    EXPECT_EQ(slurp(d + "/min.kanata"), "Kanata\t0004\n");
}

// The window and the cap bound the traces a run writes: without a trace they
// do nothing and are refused, and a window that holds no cycle is named by
// what the user gave. Before, `--trace-start 10` and `--trace-max-bytes 1`
// beside only --vcd exited 0, and `--trace-start 18446744073709551615` alone
// was told of a --trace-end 18446744073709551615 it never gave.
TEST(CliContract, TraceBoundsNeedATraceAndAWindowNamesWhatWasGiven)
{
    const std::string d = fresh_dir("trace_bounds");
    const std::string run = "run relu --shape 1,1,4,4 -q ";
    expect_refused(run + "--vcd " + d + "/v.vcd --trace-start 18446744073709551615",
                   "--trace-start 18446744073709551615: the window would hold no cycle (--trace-start is at most "
                   "18446744073709551614)\n");
    expect_refused(run + "--trace " + d + "/t.json --trace-start 900 --trace-end 300",
                   "--trace-end 300 must be after --trace-start 900\n");
    expect_refused(run + "--konata " + d + "/t.kanata --trace-end 0",
                   "--trace-end 0 must be after --trace-start 0 (the default: no --trace-start)\n");
    expect_refused(run + "--trace-start 10",
                   "--trace-start 10: there is no trace to start (give --trace, --konata or --vcd)\n");
    expect_refused(run + "--trace-end 10",
                   "--trace-end 10: there is no trace to end (give --trace, --konata or --vcd)\n");
    expect_refused(run + "--vcd " + d + "/v.vcd --trace-max-bytes 1",
                   "--trace-max-bytes 1: it caps --trace and --konata files, and neither is given (a VCD has no "
                   "cap)\n");
    expect_refused(run + "--trace-max-bytes 100000",
                   "--trace-max-bytes 100000: it caps --trace and --konata files, and neither is given (a VCD has "
                   "no cap)\n");
    EXPECT_EQ(files_in(d), 0u);
    // The largest start that leaves a cycle is taken as written.
    Result r = run_cli(run + "--trace " + d + "/late.json --trace-start 18446744073709551614");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(exists(d + "/late.json"));
}

// Kernels take parameters as binary32: NaN, infinity and values that round
// to it are refused, as a manifest's @param default that is not finite is.
TEST(CliContract, KernelParametersAreFiniteInBinary32)
{
    const std::string why = "' is not finite in binary32 (kernels take parameters as binary32, up to 3.4028235e38)\n";
    for (const char *v : {"nan", "-nan", "inf", "-inf", "1e400", "1e39", "-3.5e38"})
        expect_refused(std::string("run leaky_relu --shape 1,1,4,4 --param alpha=") + v,
                       std::string("--param alpha=") + v + ": '" + v + why);
    // The largest binary32 is taken as written.
    nlohmann::json j = run_json("leaky_relu --shape 1,1,4,4 --dtype fp32 --param alpha=3.4028234e38");
    EXPECT_EQ(j["params"]["alpha"].get<double>(), double(3.4028234e38f)) << j["params"];
    // A non-zero value that rounds to zero is refused (it ran with alpha 0),
    // the least subnormal is taken, and a value is rounded once to binary32:
    // this one, just above the midpoint of 1 and 1 + 2^-23, rounded to the
    // midpoint in binary64 and then to 1.
    for (const char *v : {"1e-50", "-7e-46"})
        expect_refused(std::string("run leaky_relu --shape 1,1,4,4 --param alpha=") + v,
                       std::string("--param alpha=") + v + ": '" + v +
                           "' underflows binary32 (kernels take parameters as binary32; the smallest non-zero is "
                           "1.4e-45)\n");
    j = run_json("leaky_relu --shape 1,1,4,4 --dtype fp32 --param alpha=1e-45");
    EXPECT_EQ(j["params"]["alpha"].get<double>(), double(0x1p-149f)) << j["params"];
    j = run_json("leaky_relu --shape 1,1,4,4 --dtype fp32 --param alpha=1.000000059604644775390625000001");
    EXPECT_EQ(j["params"]["alpha"].get<double>(), double(0x1.000002p0f)) << j["params"];
    // Given twice is an error, as a repeated --input is (the last one won).
    expect_refused("run leaky_relu --shape 1,1,4,4 --param alpha=1 --param alpha=2",
                   "--param alpha=2: parameter 'alpha' is given twice\n");
}

// celu divides by alpha (@param ... divisor): 0, and a magnitude whose
// binary32 reciprocal overflows, are refused naming the manifest line (0 ran
// and gave NaN, 2^-128 gave infinities); the next binary32 above 2^-128 runs.
TEST(CliContract, AParameterTheKernelDividesByIsRefusedWhereItHasNoReciprocal)
{
    const std::string where = "celu divides by alpha (" + std::string(NPUSIM_SOURCE_ROOT) + "/kernels/celu.s:5), and";
    for (const char *v : {"0", "-0"})
        expect_refused(std::string("run celu --shape 1,1,4,4 --param alpha=") + v,
                       std::string("parameter alpha: ") + v + ": " + where + " 0 has no reciprocal\n");
    for (const char *v : {"2.9387359e-39", "-1e-40"})
        expect_refused(std::string("run celu --shape 1,1,4,4 --param alpha=") + v,
                       "parameter alpha: " + std::string(v[0] == '-' ? "-9.9999461e-41" : "2.93873588e-39") +
                           ": " + where +
                           " its reciprocal overflows binary32 (the magnitude must be above 2^-128, "
                           "2.93873588e-39)\n");
    for (const char *dtype : {"fp16", "fp32"}) {
        nlohmann::json j =
            run_json(std::string("celu --shape 1,1,4,4 --dtype ") + dtype + " --param alpha=2.9387373e-39");
        EXPECT_EQ(j["params"]["alpha"].get<double>(), double(0x1.000008p-128f)) << j["params"];
        EXPECT_TRUE(j["passed"].get<bool>()) << dtype;
    }
    nlohmann::json k = nlohmann::json::parse(run_cli("kernels --json").out);
    bool seen = false;
    for (const auto &e : k) {
        if (e["name"] == "celu") {
            EXPECT_TRUE(e["params"][0]["divisor"].get<bool>());
            seen = true;
        }
    }
    EXPECT_TRUE(seen);
}

// A parameter is a number as written: strtod alone would skip the space of
// " 0.5".
TEST(CliContract, AKernelParameterIsANumberAsWritten)
{
    expect_refused("run leaky_relu --shape 1,1,4,4 --param alpha=", "--param alpha=: expected NAME=VALUE\n");
    for (const char *v : {" 0.5", "\t1", "0.5 ", "0.5x"})
        expect_refused(std::string("run leaky_relu --shape 1,1,4,4 --param 'alpha=") + v + "'",
                       std::string("--param alpha=") + v + ": '" + v + "' is not a number\n");
    nlohmann::json j = run_json("leaky_relu --shape 1,1,4,4 --dtype fp32 --param alpha=0x1p-3");
    EXPECT_EQ(j["params"]["alpha"].get<double>(), 0.125) << j["params"];
}

TEST(CliContract, AnInputNamedTwiceIsRefused)
{
    const std::string d = fresh_dir("input_twice");
    npusim::NpyArray x;
    x.dtype = NPU_F32;
    x.shape = {1, 1, 2, 2};
    x.data.assign(16, 0);
    npusim::write_npy(d + "/p.npy", x);
    npusim::write_npy(d + "/q.npy", x);
    expect_refused("run relu --input x=" + d + "/p.npy --input x=" + d + "/q.npy --output y=" + d + "/y.npy",
                   "--input x=" + d + "/q.npy: input 'x' is named twice\n");
    EXPECT_FALSE(exists(d + "/y.npy"));
}

// --tile-max fixes the tiles and --tiling measure picks them: asking for
// both used to drop the measurement without a word.
TEST(CliContract, TileMaxAndMeasuredTilingAreOneOrTheOther)
{
    expect_refused("run relu --tile-max 1024 --tiling measure",
                   "--tile-max 1024 and --tiling measure: give one (--tile-max fixes the tiles, measure picks them)\n");
    Result r = run_cli("run relu --tile-max 1024 --tiling rule -q");
    EXPECT_EQ(r.status, 0) << r.err;
}

// The audit's commands: a valid config made the per-channel kernels fail
// inside lib/perchan.s ('expected trip count must be 1..1e9, not 0', exit
// 2): their tiles hold two vectors, 512 bytes at VLEN 2048 (Tiling.NoTileIsSmallerThanTheKernelRuns).
TEST(CliContract, ATileTheKernelCannotRunIsNeverPickedAndRefusedWhenGiven)
{
    for (const char *kernel : {"bias_add", "prelu"}) {
        Result r = run_cli(std::string("run ") + kernel + " --shape 1,16,8,8 --set core.vlen=2048 --set system.cores=32 -q");
        EXPECT_EQ(r.status, 0) << kernel << ": " << r.err;
        expect_refused(std::string("run ") + kernel + " --shape 1,16,8,8 --tile-max 256 --set core.vlen=2048",
                       std::string("tile_max 256: ") + kernel +
                           "'s tiles hold at least 2 vectors, 512 bytes at core.vlen 2048; give 512 .. 262144 (0: "
                           "chosen for the config)\n");
    }
}

// --plot: the format from the extension, checked first; the drawing
// script's failure is its one line; the file is 0666 less the umask, as
// every other output.
TEST(CliContract, ComparePlotIsCheckedFirstAndWrittenLikeEveryOutput)
{
    const std::string d = fresh_dir("plot");
    const std::string cmp = "compare relu --shape 1,1,4,4 --plot ";
    for (const char *name : {"x.txt", "x.jpg", "noext", "x.png/"})
        expect_refused(cmp + d + "/" + name,
                       "--plot " + d + "/" + name + ": give a .png or .svg file (the extension names the format)\n");
    expect_refused(cmp + "/nonexistent-dir/x.png", "/nonexistent-dir/x.png: cannot write: No such file or directory\n");
    EXPECT_EQ(files_in(d), 0u);

    const mode_t old = umask(022);
    Result r = run_cli(cmp + d + "/stalls.svg --json " + d + "/stalls.json");
    umask(old);
    ASSERT_EQ(r.status, 0) << r.err;
    struct stat plot, json;
    ASSERT_EQ(stat((d + "/stalls.svg").c_str(), &plot), 0);
    ASSERT_EQ(stat((d + "/stalls.json").c_str(), &json), 0);
    EXPECT_EQ(plot.st_mode & 0777, 0644u);
    EXPECT_EQ(plot.st_mode & 0777, json.st_mode & 0777);
    EXPECT_EQ(slurp(d + "/stalls.svg").rfind("<?xml", 0), 0u);

    // A script that fails with a traceback: its last line alone, exit 2, and
    // no table or JSON written before it.
    const std::string tools = fresh_dir("plot_tools");
    write(tools + "/plot_stalls.py", "import sys\nsys.stdin.read()\n"
                                     "print('Traceback (most recent call last):', file=sys.stderr)\n"
                                     "print('  File \"x\", line 1', file=sys.stderr)\n"
                                     "print(sys.argv[-1] + ': cannot draw the stall chart: disk on fire', "
                                     "file=sys.stderr)\nsys.exit(1)\n");
    setenv("NPUSIM_TOOLS", tools.c_str(), 1);
    expect_refused(cmp + d + "/f.png --json " + d + "/f.json", d + "/f.png: cannot draw the stall chart: disk on fire\n");
    unsetenv("NPUSIM_TOOLS");
    EXPECT_FALSE(exists(d + "/f.json"));
}

// Every parse error is one line, and a word that names no subcommand, an
// option before the subcommand and a missing subcommand are each named
// (CLI11 said "A subcommand is required" of all three, then "Run with
// --help for more information.").
TEST(CliContract, ArgumentErrorsAreOneLineNamingWhatIsWrong)
{
    const std::string subcommands = "(run, cache, asm, dis, isa, kernels, config, sweep, merge, compare, graph)\n";
    expect_refused("frob", "unknown subcommand 'frob' " + subcommands);
    expect_refused("config frob", "config: unknown subcommand 'frob' (show, docs)\n");
    expect_refused("", "a subcommand is required " + subcommands);
    expect_refused("config", "config: a subcommand is required (show, docs)\n");
    const std::string top = " (npusim takes --help or --version, then a subcommand and its options; see npusim --help)\n";
    expect_refused("--bogus", "unknown option '--bogus'" + top);
    expect_refused("--bogus=1 run relu", "unknown option '--bogus=1'" + top);
    expect_refused("--set units.sfu.latency=3 run relu", "unknown option '--set'" + top);
    expect_refused("config --bogus", "config: unknown option '--bogus' (npusim config takes --help, then a "
                                     "subcommand and its options; see npusim config --help)\n");
    expect_refused("run relu --bogus", "The following argument was not expected: --bogus\n");
    expect_refused("run relu --dtype fp64", "dtype: unknown dtype 'fp64' (fp16, fp32)\n");
    expect_refused("run relu --seed -1", "--seed: '-1' is not a whole number (0 .. 18446744073709551615)\n");
    // An empty value is refused, never taken as the option left out (--json
    // "" wrote nothing and exited 0).
    const std::pair<const char *, const char *> empty[] = {
        {"run relu --json ''", "--json"},   {"run relu --trace ''", "--trace"},   {"run relu --config ''", "--config"},
        {"compare relu --csv ''", "--csv"}, {"graph ''", "spec"},            {"merge x -o ''", "--output"},
        {"cache x.din --json ''", "--json"}};
    for (const auto &[args, name] : empty)
        expect_refused(args, std::string(name) + ": empty value (give one, or leave the option out)\n");
    // compare's seed too: CLI11 wrapped -1 and saturated 2^64 and more.
    expect_refused("compare relu --shape 1,16,8,8 --seed -1",
                   "--seed: '-1' is not a whole number (0 .. 18446744073709551615)\n");
    expect_refused("compare relu --shape 1,16,8,8 --seed 18446744073709551616",
                   "--seed: '18446744073709551616' is out of range (0 .. 18446744073709551615)\n");
    expect_refused("dis " + tmpdir(), tmpdir() + ": cannot open: Is a directory\n");
    expect_refused("cache " + tmpdir(), tmpdir() + ": cannot open: Is a directory\n");
    Result help = run_cli("config --help");
    EXPECT_EQ(help.status, 0);
    EXPECT_NE(help.out.find("show"), std::string::npos) << help.out;
    for (const char *first : {"--help", "-h", "--version"}) {  // npusim's own options are still taken
        Result r = run_cli(first);
        EXPECT_EQ(r.status, 0) << first << r.err;
        EXPECT_NE(r.out, "") << first;
    }
}

// docs/sweeps.md: a spec is checked before anything runs. Unknown kernels,
// kernels without a listed dtype and bad shapes used to be listed and then
// fail as points.
TEST(CliContract, ASweepSpecsKernelsDtypesAndShapesAreCheckedFirst)
{
    const std::string d = fresh_dir("sweep_spec");
    // Every shipped kernel has both dtypes; a kernel of one's own may not.
    write(d + "/only32.s", "; @kernel     only32\n; @input      x range=-8,8\n; @output     y\n"
                           "; @dtypes     fp32\n; @reference  relu\n; @tolerance  fp32 ulp=0\n    halt\n");
    const struct {
        std::string text, err;
    } cases[] = {
        {"kernels: [relu, nosuch]\n", ":1:17: kernels: unknown kernel 'nosuch' (see `npusim kernels`; looked in "},
        {"kernels: [relu, " + d + "/only32.s]\ndtypes: [fp32, fp16]\n",
         ":1:17: kernels: kernel 'only32' does not support dtype fp16 (dtypes lists it)\n"},
        {"kernels: " + d + "/only32.s\n",
         ":1:10: kernels: kernel 'only32' does not support dtype fp16 (the default dtypes; give dtypes)\n"},
        {"kernels: [relu]\nshapes: ['1,16,8,8', '1,0,8,8']\n",
         ":2:22: shapes: '1,0,8,8': '0' is not a positive integer (expected N,C,H,W)\n"},
        {"kernels: [relu]\nshapes: ['1,2,3,4,5']\n",
         ":2:10: shapes: '1,2,3,4,5': expected 1 to 4 dimensions N,C,H,W, got '1,2,3,4,5'\n"},
        // A shape one of the kernels cannot run failed its points one by one.
        {"kernels: [relu, matmul]\nshapes: ['64,64,64', '2,16,8,8']\n",
         ":2:22: shapes: '2,16,8,8': kernel 'matmul': a matmul takes M,K,N\n"},
        {"kernels: [conv2d]\nshapes: ['1,1,70000,1']\n",
         ":2:10: shapes: '1,1,70000,1': kernel 'conv2d': a convolution takes a feature map of at most 65,535 rows "
         "and columns\n"},
    };
    for (const auto &c : cases) {
        const std::string spec = d + "/s.yaml";
        write(spec, c.text);
        for (const std::string &flags : {std::string(" --list"), " -o " + d + "/out"}) {
            Result r = run_cli("sweep " + spec + flags);
            EXPECT_EQ(r.status, 2) << c.text << r.err;
            EXPECT_EQ(r.err.rfind(spec + c.err, 0), 0u) << r.err;
            EXPECT_EQ(count_lines(r.err), 1) << r.err;
            EXPECT_EQ(r.out, "");
        }
        EXPECT_FALSE(exists(d + "/out"));
    }
}

// A shape is decimal digits between commas: `--shape "1, 4,4,4"` and
// `+1,4,4,4` ran (strtoull skips a space and takes a sign) and `1,4,4,`
// ran as 1,1,4,4 (the empty last field was dropped). The sweep spec's
// shapes read the same text; a graph spec's shape elements are YAML
// numbers, held to the same digits.
TEST(CliContract, AShapeIsDecimalDigitsBetweenCommas)
{
    const std::string why = "' is not a positive integer (expected N,C,H,W)\n";
    expect_refused("run relu --shape '1, 4,4,4'", "shape: ' 4" + why);
    expect_refused("run relu --shape '+1,4,4,4'", "shape: '+1" + why);
    expect_refused("run relu --shape '1,4,4,4 '", "shape: '4 " + why);
    expect_refused("run relu --shape ' -1,4,4,4'", "shape: ' -1" + why);
    expect_refused("run relu --shape 1,4,4,", "shape: '" + why);
    expect_refused("run relu --shape 1,,4", "shape: '" + why);
    expect_refused("run relu --shape 0x10", "shape: '0x10" + why);
    expect_refused("run relu --shape 1,00,4", "shape: '00" + why);
    expect_refused("compare relu --shape 1,4,4,", "shape: '" + why);
    expect_refused("run relu --shape 18446744073709551616,1",
                   "shape: '18446744073709551616' is out of range (expected N,C,H,W)\n");
    // Leading zeros are still the number written.
    EXPECT_EQ(run_json("relu --shape 0001,04,4,4")["shape"], nlohmann::json::array({1, 4, 4, 4}));

    const std::string d = fresh_dir("shape_text");
    write(d + "/s.yaml", "kernels: [relu]\nshapes: ['1,16,8,8', '1, 4,4,4']\n");
    expect_refused("sweep " + d + "/s.yaml --list", d + "/s.yaml:2:22: shapes: '1, 4,4,4': ' 4" + why);
    const std::string graph = "name: g\ntensors:\n  x: {shape: [X, 33]}\n  w: {shape: [33, 18]}\n"
                              "variants:\n  plain: [{kernel: matmul, inputs: {a: x, b: w}, output: y}]\n";
    for (const std::string dim : {"+20", "' 20'"}) {
        std::string text = graph;
        text.replace(text.find('X'), 1, dim);
        write(d + "/g.yaml", text);
        // A quoted dimension is a string, whatever it holds.
        expect_refused("graph " + d + "/g.yaml",
                       d + "/g.yaml:3:15: tensors.x.shape[0]: " +
                           (dim == "+20" ? "'+20' is not a whole number in 1 .. 1048576\n"
                                         : "' 20' is quoted: a number is written without quotes\n"));
    }
}

// A functional run counts instructions and checks accuracy, and nothing of
// time: compare printed its rows with "cycles": 0.0, "IPC": 0.0, "L2 hit
// rate": 0.0, "efficiency": 0.0 and every stall 0.0 (the table said -),
// and a run without an L2 (memory.model: ideal) an L2 hit rate of 0.0.
TEST(CliContract, CompareShowsNoFigureTheRunDidNotCompute)
{
    const std::string cmp = "compare relu gelu_tanh --shape 1,4,4,4 --set sim.mode=functional";
    Result r = run_cli(cmp + " --json -");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json rows = nlohmann::json::parse(r.out);
    ASSERT_EQ(rows.size(), 2u);
    for (const nlohmann::json &row : rows) {
        for (const char *none : {"cycles", "cycles/element", "IPC", "stall raw", "stall dma_wait", "slots lost to slot",
                                 "util valu", "L2 hit rate", "DRAM bytes", "efficiency", "binding", "stalls",
                                 "cycles_total"})
            EXPECT_TRUE(row.at(none).is_null()) << none << ": " << row.at(none);
        EXPECT_FALSE(row.contains("issue 0/cycle")) << row;  // no issue slots, not a histogram of 0 of them
        EXPECT_EQ(row["max ULP"], 0.0);
    }
    EXPECT_EQ(rows[0]["instructions/vector"], 1.0);
    EXPECT_EQ(rows[1]["instructions/vector"], 17.0);

    Result table = run_cli(cmp);
    ASSERT_EQ(table.status, 0) << table.err;
    for (const char *line : {"\ncycles                               -               -\n",
                             "\ninstructions/vector               1.00           17.00\n",
                             "\nmax ULP                              0               0\n",
                             "\nbinding                              -               -\n"})
        EXPECT_NE(table.out.find(line), std::string::npos) << line << table.out;
    Result csv = run_cli(cmp + " --csv -");
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_EQ(csv.out.substr(csv.out.find('\n') + 1), "relu,fp16,,,1,,,,,,,,,,,,,,,,,,,,0\n"
                                                      "gelu_tanh,fp16,,,17,,,,,,,,,,,,,,,,,,,,0\n");
    expect_refused(cmp + " --plot " + tmpdir() + "/f.png", "--plot needs timing (sim.mode: timed)\n");

    const nlohmann::json ideal = nlohmann::json::parse(
        run_cli("compare relu --shape 1,4,4,4 --set memory.model=ideal --json -").out);
    EXPECT_TRUE(ideal[0]["L2 hit rate"].is_null()) << ideal[0];
    EXPECT_EQ(ideal[0]["DRAM bytes"], 1024.0);
    EXPECT_GT(ideal[0]["cycles"].get<double>(), 0.0);
}

// `-D VLENB=7` built code for a VLEN the config does not have; `.equ VLENB`
// was already refused.
TEST(CliContract, AsmRefusesToRedefineTheMachinesConstants)
{
    const std::string d = fresh_dir("asm_defines");
    write(d + "/pre.s", "li s1, VLENB\nli s2, UB_BYTES\nhalt\n");
    expect_refused("asm " + d + "/pre.s -o " + d + "/p.bin -D VLENB=7",
                   "<defines>: definition VLENB=7: predefined from the machine's config (core.vlen / 8); change the "
                   "config instead\n");
    expect_refused("asm " + d + "/pre.s -o " + d + "/p.bin -D UB_BYTES=5",
                   "<defines>: definition UB_BYTES=5: predefined from the machine's config (core.ub_bytes); change "
                   "the config instead\n");
    EXPECT_FALSE(exists(d + "/p.bin"));
    // The machine's own values: the default config, or the one given.
    Result r = run_cli("asm " + d + "/pre.s -o " + d + "/p.bin --set core.vlen=512 --set core.ub_bytes=131072");
    ASSERT_EQ(r.status, 0) << r.err;
    Result dis = run_cli("dis " + d + "/p.bin");
    EXPECT_NE(dis.out.find("li s1, 64\n"), std::string::npos) << dis.out;
    EXPECT_NE(dis.out.find("li s2, 131072\n"), std::string::npos) << dis.out;
    r = run_cli("asm " + d + "/pre.s -o " + d + "/p.bin");
    ASSERT_EQ(r.status, 0) << r.err;
    dis = run_cli("dis " + d + "/p.bin");
    EXPECT_NE(dis.out.find("li s1, 32\n"), std::string::npos) << dis.out;
    EXPECT_NE(dis.out.find("li s2, 262144\n"), std::string::npos) << dis.out;  // docs/isa.md
}

TEST(CliContract, ACacheRecordPastTheTopOfTheAddressSpaceIsAnError)
{
    const std::string d = fresh_dir("din_top");
    write(d + "/t.din", "0 0 256\n0 ffffffffffffff80 256\n");
    expect_refused("cache " + d + "/t.din",
                   d + "/t.din:2: 256 bytes at 0xffffffffffffff80 run past the top of the 64-bit address space\n");
    // Up to the last byte is fine: one line of 128 bytes.
    write(d + "/top.din", "0 ffffffffffffff80 128\n");
    Result r = run_cli("cache " + d + "/top.din --json -");
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["records"], 1);
    EXPECT_EQ(j["l2"]["accesses"], 1);
}

// `graph base.yaml --json base.yaml` replaced the spec; `--trace-dir td
// --json td/a.json` replaced a trace; a sweep's or a merge's output could
// replace the spec, its base or the folder's points.json. Refused, nothing written.
TEST(CliContract, AnOutputMayNotReplaceAnInputOrATrace)
{
    const std::string d = fresh_dir("replace_input");
    fs::create_directory(d + "/td");
    InDir in(d);
    const std::string spec = "name: m\ntensors:\n  x: {shape: [1, 16, 8, 8]}\nvariants:\n"
                             "  a:\n    - {kernel: relu, inputs: {x: x}, output: y}\n";
    write("base.yaml", spec);
    expect_refused("graph base.yaml --json ./base.yaml",
                   "./base.yaml: named by both the spec and --json (an output cannot replace a file it is made from)\n");
    expect_refused("graph base.yaml --trace-dir td --json td/a.json",
                   "td/a.json: named by both --json and --trace-dir (each output needs a file of its own)\n");
    expect_refused("graph base.yaml --trace-dir td --json td/a.0.relu.json",
                   "td/a.0.relu.json: named by both --json and --trace-dir (each output needs a file of its own)\n");
    EXPECT_EQ(slurp("base.yaml"), spec);
    EXPECT_EQ(files_in(d + "/td"), 0u);
    fs::create_directory("sw");
    write("sw/spec.json", "kernels: [relu]\nshapes: [\"1,1,4,4\"]\n");
    expect_refused("sweep sw/spec.json -o sw",
                   "sw/spec.json: named by both the spec and -o (an output cannot replace a file it is made from)\n");
    Result ok = run_cli("sweep sw/spec.json -o out");
    ASSERT_EQ(ok.status, 0) << ok.err;
    const std::string points = slurp("out/points.json");
    expect_refused("merge out -o out/points.json",
                   "out/points.json: named by both the sweep folder's points.json and -o (an output cannot replace "
                   "a file it is made from)\n");
    EXPECT_EQ(slurp("out/points.json"), points);
    // run: its inputs, its kernel's source and its config
    npusim::NpyArray x;
    x.dtype = NPU_F32;
    x.shape = {1, 1, 2, 2};
    x.data.assign(4 * sizeof(float), 0);
    npusim::write_npy("x.npy", x);
    const std::string x_bytes = slurp("x.npy");
    expect_refused("run relu --input x=x.npy --output y=./x.npy",
                   "./x.npy: named by both --input x and --output y (an output cannot replace a file it is made from)\n");
    expect_refused("run relu --input x=x.npy --json x.npy",
                   "x.npy: named by both --input x and --json (an output cannot replace a file it is made from)\n");
    EXPECT_EQ(slurp("x.npy"), x_bytes);
    write("k.s", slurp(std::string(NPUSIM_SOURCE_ROOT) + "/kernels/relu.s"));
    expect_refused("run k.s --json k.s",
                   "k.s: named by both the kernel and --json (an output cannot replace a file it is made from)\n");
    write("c.yaml", "core: {vlen: 256}\n");
    expect_refused("run relu --config c.yaml --trace c.yaml",
                   "c.yaml: named by both the config and --trace (an output cannot replace a file it is made from)\n");
}

// Under a memory limit a graph step too large for it said
// "npusim: internal error: std::bad_alloc" (exit 3); `npusim run` estimates.
TEST(CliContract, AGraphStepThatDoesNotFitInMemoryIsRefusedAsARunIs)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "ASan reserves terabytes of shadow address space: it cannot start under ulimit -v";
#endif
    const std::string d = fresh_dir("graph_memory");
    write(d + "/big.yaml", "name: big\ntensors:\n  x: {shape: [1, 16, 8, 8]}\n  z: {shape: [1, 1024, 512, 512]}\n"
                           "variants:\n  a:\n    - {kernel: relu, inputs: {x: x}, output: y}\n"
                           "  b:\n    - {kernel: relu, inputs: {x: z}, output: y}\n");
    const std::string cmd = "sh -c \"ulimit -v 1500000; SC_COPYRIGHT_MESSAGE=DISABLE " + std::string(NPUSIM_EXE) +
                            " graph " + d + "/big.yaml -j 2\" >" + d + "/out 2>" + d + "/err";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
    const std::string err = slurp(d + "/err");
    const std::string head = d + "/big.yaml:9:7: variants.b[0]: shape 1,1024,512,512: the run needs about 2.69 GB of "
                                 "memory (2 tensors of 1.07 GB each with its NCHW copy, 1 core of 279 kB, the L2's "
                                 "tags 1.31 MB, 537 MB held already) but only ";
    EXPECT_EQ(err.substr(0, head.size()), head) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

// A step whose run alone fits (1.09 GB under 1.54) but not beside the
// tensors the graph holds through it (537 MB: x, and w, which no step
// reads) was let run and ended in std::bad_alloc (exit 3).
TEST(CliContract, AGraphStepCountsTheTensorsTheGraphHoldsAlready)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "ASan reserves terabytes of shadow address space: it cannot start under ulimit -v";
#endif
    const std::string d = fresh_dir("graph_held");
    write(d + "/held.yaml", "name: held\ntensors:\n  x: {shape: [1, 512, 512, 512]}\n  w: {shape: [1, 512, 512, 512]}\n"
                            "variants:\n  a:\n    - {kernel: relu, inputs: {x: x}, output: y}\n");
    const std::string cmd = "sh -c \"ulimit -v 1500000; SC_COPYRIGHT_MESSAGE=DISABLE " + std::string(NPUSIM_EXE) +
                            " graph " + d + "/held.yaml\" >" + d + "/out 2>" + d + "/err";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
    const std::string err = slurp(d + "/err");
    const std::string head = d + "/held.yaml:7:7: variants.a[0]: shape 1,512,512,512: the run needs about 1.62 GB of "
                                 "memory (2 tensors of 537 MB each with its NCHW copy, 1 core of 279 kB, the L2's "
                                 "tags 1.31 MB, 537 MB held already) but only ";
    EXPECT_EQ(err.substr(0, head.size()), head) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(slurp(d + "/out"), "");
}

// An empty sweep spec said "cannot open sweep spec" of a file it had opened.
TEST(CliContract, AnEmptySweepSpecIsRefusedAsOneOfCommentsIs)
{
    const std::string d = fresh_dir("empty_sweep");
    write(d + "/empty.yaml", "");
    write(d + "/comments.yaml", "# nothing\n");
    const std::string what = ": a sweep spec is a mapping (base, kernels, dtypes, shapes, set, grid, zip, limits, tiling)\n";
    expect_refused("sweep " + d + "/empty.yaml --list", d + "/empty.yaml" + what);
    expect_refused("sweep " + d + "/comments.yaml --list", d + "/comments.yaml" + what);
}
