// Strict manifests through the npusim CLI: each bad manifest is one error
// line `file:line:col: what is wrong` and exit status 2, before anything runs.
#include <gtest/gtest.h>

#include <string>

#include "cli_helpers.h"

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

using namespace cli_test;

namespace {

// A valid manifest (relu on x -> y) whose line `at` (1-based) is replaced by
// `bad`, or, with `insert`, preceded by it.
//   1 @kernel  2 @input  3 @output  4 @param  5 @dtypes  6 @reference
//   7 @tolerance fp16  8 @tolerance fp32
std::string manifest_with(int at, const std::string &bad, bool insert = false)
{
    const char *lines[] = {
        "; @kernel     strict",          "; @input      x range=-8,8", "; @output     y",
        "; @param      alpha 0.5 slope", "; @dtypes     fp16 fp32",    "; @reference  relu",
        "; @tolerance  fp16 ulp=0",      "; @tolerance  fp32 ulp=0",
    };
    std::string s;
    int n = 1;
    for (const char *l : lines) {
        if (n == at)
            s += bad + "\n";
        if (n != at || insert)
            s += std::string(l) + "\n";
        n++;
    }
    if (at == n)
        s += bad + "\n";
    return s + "    halt\n";
}

// Writes `text` as NAME.s in the scratch folder, runs it, and expects exactly
// `path:LOCATION: MESSAGE` on stderr, nothing on stdout, and exit status 2.
void expect_error(const std::string &name, const std::string &text, const std::string &location,
                  const std::string &message)
{
    std::string path = tmpdir() + "/" + name + ".s";
    write(path, text);
    Result r = run_cli("run " + path);
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(r.err, path + ":" + location + ": " + message + "\n");
    EXPECT_EQ(r.out, "");
}

}  // namespace

TEST(Manifest, TheBaseManifestIsAccepted)
{
    // The kernel only halts, so its output fails the check (exit 1, not 2):
    // the manifest itself was accepted and the run reached the report.
    std::string path = tmpdir() + "/good.s";
    write(path, manifest_with(0, ""));
    Result r = run_cli("run " + path + " --shape 1,1,1,16");
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_EQ(r.out.rfind("Kernel:      strict (", 0), 0u) << r.out;
}

TEST(Manifest, InfiniteRangeIsAnError)
{
    expect_error("range_inf", manifest_with(2, "; @input      x range=-inf,inf"), "2:17",
                 "range=-inf,inf is not finite (LO and HI must be finite numbers)");
    expect_error("range_nan", manifest_with(2, "; @input      x range=nan,1"), "2:17",
                 "range=nan,1 is not finite (LO and HI must be finite numbers)");
    expect_error("range_hi_inf", manifest_with(2, "; @input      x range=0,1e400"), "2:17",
                 "range=0,1e400 is not finite (LO and HI must be finite numbers)");
}

TEST(Manifest, UnorderedRangeIsAnError)
{
    expect_error("range_desc", manifest_with(2, "; @input      x range=8,-8"), "2:17",
                 "range=8,-8 is empty (LO must be below HI)");
    expect_error("range_empty", manifest_with(2, "; @input      x range=1,1"), "2:17",
                 "range=1,1 is empty (LO must be below HI)");
}

TEST(Manifest, ToleranceMustBeFiniteAndNonNegative)
{
    expect_error("bound_nan", manifest_with(7, "; @tolerance  fp16 ulp=nan"), "7:20",
                 "ulp=nan must be finite and non-negative");
    expect_error("bound_neg", manifest_with(7, "; @tolerance  fp16 ulp=-1"), "7:20",
                 "ulp=-1 must be finite and non-negative");
    expect_error("bound_inf", manifest_with(8, "; @tolerance  fp32 ulp=0 abs=inf"), "8:26",
                 "abs=inf must be finite and non-negative");
}

// abs=X*NAME and abs=X/NAME scale the absolute tolerance with a @param's
// magnitude: NAME must be one the manifest declares (before or after).
TEST(Manifest, AnAbsToleranceScalesWithADeclaredParam)
{
    expect_error("abs_scale_unknown", manifest_with(8, "; @tolerance  fp32 ulp=0 abs=0x1p-24*gamma"), "8:38",
                 "abs scales with 'gamma', which no @param declares");
    expect_error("abs_scale_empty", manifest_with(8, "; @tolerance  fp32 ulp=0 abs=0x1p-24/"), "8:38",
                 "abs=X/ needs a @param name after '/'");
    expect_error("abs_scale_nan", manifest_with(8, "; @tolerance  fp32 ulp=0 abs=nan*alpha"), "8:26",
                 "abs=nan*alpha must be finite and non-negative");
    for (const char *abs : {"abs=0x1p-24*alpha", "abs=0x1p-24/alpha"}) {
        std::string path = tmpdir() + "/abs_scale_ok.s";
        write(path, manifest_with(8, std::string("; @tolerance  fp32 ulp=0 ") + abs));
        Result r = run_cli("run " + path + " --dtype fp32 --shape 1,1,4,4");
        EXPECT_NE(r.status, 2) << abs << ": " << r.err;
    }
}

// @needs KEY=MIN: an integer config key and a whole number; a config below
// it is refused in one line naming the manifest line, before anything runs.
TEST(Manifest, NeedsNamesANumericConfigKeyAndAWholeNumber)
{
    expect_error("needs_empty", manifest_with(6, "; @needs", true), "6:3",
                 "@needs takes KEY=MIN: a config key and the least value the kernel needs");
    expect_error("needs_no_eq", manifest_with(6, "; @needs      cube.l1_bytes", true), "6:15",
                 "@needs takes KEY=MIN, found 'cube.l1_bytes'");
    expect_error("needs_unknown", manifest_with(6, "; @needs      cube.l2_bytes=1", true), "6:15",
                 "@needs: unknown config key 'cube.l2_bytes' (npusim config docs lists them)");
    expect_error("needs_enum", manifest_with(6, "; @needs      memory.model=1", true), "6:15",
                 "@needs memory.model: not a numeric config key");
    expect_error("needs_value", manifest_with(6, "; @needs      core.vlen=256 core.ub_bytes=64k", true), "6:43",
                 "@needs core.ub_bytes: expected a whole number, found '64k'");
    expect_error("needs_negative", manifest_with(6, "; @needs      core.vlen=-1", true), "6:25",
                 "@needs core.vlen: expected a whole number, found '-1'");
    expect_error("needs_more", manifest_with(6, "; @needs      core.vlen=128 core.ub_bytes=1073741824", true), "6",
                 "strict needs core.ub_bytes of at least 1073741824 bytes; the config gives 262144");
}

TEST(Manifest, SecondKernelLineIsAnError)
{
    expect_error("two_kernels", manifest_with(6, "; @kernel     renamed", true), "6:3",
                 "second @kernel 'renamed'; line 1 already names the kernel 'strict' (a manifest has one)");
}

TEST(Manifest, DuplicateParamIsAnError)
{
    expect_error("two_params", manifest_with(5, "; @param      alpha 2 again", true), "5:15",
                 "duplicate name 'alpha', first declared at line 4 (@input, @output and @param names are unique)");
}

TEST(Manifest, ParamNamedAsATensorIsAnError)
{
    expect_error("param_is_tensor", manifest_with(4, "; @param      x 0.5 slope"), "4:15",
                 "duplicate name 'x', first declared at line 2 (@input, @output and @param names are unique)");
    // A tensor after a parameter of its name: the first line is the parameter's.
    expect_error("tensor_is_param", manifest_with(3, "; @param      y 1", true), "4:15",
                 "duplicate name 'y', first declared at line 3 (@input, @output and @param names are unique)");
}

TEST(Manifest, DuplicateTensorNamesTheFirstLine)
{
    expect_error("two_tensors", manifest_with(3, "; @output     x"), "3:15",
                 "duplicate name 'x', first declared at line 2 (@input, @output and @param names are unique)");
}

TEST(Manifest, UnknownToleranceDtypeIsNamed)
{
    expect_error("bound_fp8", manifest_with(7, "; @tolerance  fp8 ulp=0"), "7:15", "unknown dtype 'fp8' (fp16, fp32)");
    // Even beside the tolerances the dtypes need: it is a typo, not a spare.
    expect_error("bound_fp8_extra", manifest_with(9, "; @tolerance  fp8 ulp=0"), "9:15",
                 "unknown dtype 'fp8' (fp16, fp32)");
}

TEST(Manifest, ADtypeHasOneToleranceAndOnlyListedDtypesHaveOne)
{
    expect_error("two_bounds", manifest_with(8, "; @tolerance  fp16 ulp=2", true), "8:15",
                 "second @tolerance for fp16 (a dtype has one)");
    expect_error("unlisted_bound", manifest_with(5, "; @dtypes     fp16"), "8:15",
                 "@tolerance for fp32, which @dtypes does not list");
    expect_error("dtype_twice", manifest_with(5, "; @dtypes     fp16 fp32 fp16"), "5:25",
                 "dtype fp16 listed twice in @dtypes");
}

// An option given twice on a line is an error at the second (the second
// silently won: range=-8,8 range=1,2 generated 1 .. 2).
TEST(Manifest, AnOptionGivenTwiceOnALineIsAnError)
{
    expect_error("range_twice", manifest_with(2, "; @input      x range=-8,8 range=1,2"), "2:28",
                 "'range' given twice on one line (first at column 17)");
    expect_error("ulp_twice", manifest_with(7, "; @tolerance  fp16 ulp=0 ulp=2"), "7:26",
                 "'ulp' given twice on one line (first at column 20)");
}

TEST(Manifest, TheOldBoundKeyNamesItsNewName)
{
    // "bound" is the cycle bound's word alone; a manifest written before the
    // accuracy tolerance got its own key is told which key it means.
    expect_error("old_bound_key", manifest_with(7, "; @bound      fp16 ulp=0"), "7:3",
                 "unknown manifest key '@bound' (an accuracy tolerance is @tolerance)");
}

TEST(Manifest, ParamDefaultMustBeFinite)
{
    expect_error("param_nan", manifest_with(4, "; @param      alpha nan slope"), "4:21",
                 "@param alpha default nan is not finite");
    expect_error("param_inf", manifest_with(4, "; @param      alpha -inf slope"), "4:21",
                 "@param alpha default -inf is not finite");
}

TEST(Manifest, ADivisorsDefaultHasAReciprocal)
{
    expect_error("divisor_zero", manifest_with(4, "; @param      alpha 0 divisor slope"), "4:21",
                 "@param alpha default 0 is a divisor: 0 has no reciprocal");
    expect_error("divisor_tiny", manifest_with(4, "; @param      alpha 1e-39 divisor slope"), "4:21",
                 "@param alpha default 1e-39 is a divisor: its reciprocal overflows binary32 (the magnitude must "
                 "be above 2^-128, 2.93873588e-39)");
    // A valid default loads (the kernel only halts, so the check fails: exit
    // 1), and a run's value is refused naming the @param line.
    const std::string path = tmpdir() + "/divisor.s";
    write(path, manifest_with(4, "; @param      alpha -0.5 divisor the slope"));
    Result r = run_cli("run " + path + " --shape 1,1,1,16");
    EXPECT_EQ(r.status, 1) << r.err;
    r = run_cli("run " + path + " --shape 1,1,1,16 --param alpha=0");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err, "parameter alpha: 0: strict divides by alpha (" + path + ":4), and 0 has no reciprocal\n");
}

TEST(Manifest, ZeroSignIsExactOrAny)
{
    expect_error("zero_sign_bad", manifest_with(7, "; @tolerance  fp16 ulp=0 zero_sign=maybe"), "7:36",
                 "zero_sign takes exact or any, not 'maybe'");
    // The base kernel only halts: its +0 outputs against relu's reference
    // pass or fail on value alone either way, so both spellings load.
    for (const char *z : {"exact", "any"}) {
        std::string path = tmpdir() + "/zero_sign_" + z + ".s";
        write(path, manifest_with(7, std::string("; @tolerance  fp16 ulp=0 zero_sign=") + z));
        Result r = run_cli("run " + path + " --dtype fp16 --shape 1,1,4,4");
        EXPECT_NE(r.status, 2) << r.err;
    }
}

TEST(Manifest, EveryShippedKernelLoads)
{
    Result r = run_cli("kernels");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    int listed = 0;
    for (size_t p = 0; (p = r.out.find(" blocks", p)) != std::string::npos; p++)
        listed++;
    EXPECT_GE(listed, 24) << r.out;
}
