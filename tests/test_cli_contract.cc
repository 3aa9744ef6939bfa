// The command line's contract on bad input, end to end: one line on stderr
// (`file:line:col: what`, a key path, or the flag and value), exit 2, and
// nothing written, checked before any kernel runs; or the input taken
// exactly as written. Each case is the one a user met.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

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

// Every parse error is one line, and a word that names no subcommand is
// named (CLI11 said "A subcommand is required", then "Run with --help for
// more information.").
TEST(CliContract, ArgumentErrorsAreOneLineNamingWhatIsWrong)
{
    expect_refused("frob", "unknown subcommand 'frob' (run, cache, asm, dis, isa, kernels, config, sweep, merge, "
                           "compare, graph)\n");
    expect_refused("config frob", "config: unknown subcommand 'frob' (show, docs)\n");
    expect_refused("", "A subcommand is required\n");
    expect_refused("run relu --bogus", "The following argument was not expected: --bogus\n");
    expect_refused("run relu --dtype fp64", "dtype: unknown dtype 'fp64' (fp16, fp32)\n");
    expect_refused("run relu --seed -1", "--seed: '-1' is not a whole number (0 .. 18446744073709551615)\n");
    expect_refused("dis " + tmpdir(), tmpdir() + ": cannot open: Is a directory\n");
    expect_refused("cache " + tmpdir(), tmpdir() + ": cannot open: Is a directory\n");
    Result help = run_cli("config --help");
    EXPECT_EQ(help.status, 0);
    EXPECT_NE(help.out.find("show"), std::string::npos) << help.out;
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
