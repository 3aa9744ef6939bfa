// Strict configs (issue 14): input that would silently change meaning is one
// error line naming file:line:col (or the --set key) and exit status 2, and
// every alignment rule lives in the schema that also writes the docs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cli_helpers.h"
#include "config.h"

#ifndef NPUSIM_EXE
#error "NPUSIM_EXE must name the npusim binary"
#endif

using namespace cli_test;

namespace {

// `npusim config show` of `yaml` written to the file `path`.
Result show_file(const std::string &path, const std::string &yaml)
{
    write(path, yaml);
    return run_cli("config show " + path);
}

void expect_error(const Result &r, const std::string &line)
{
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err, line + "\n");
    EXPECT_EQ(r.out, "");
}

const std::string kDefaultSlots = "scalar+branch+sync,vector,vector,mem+dma";
const std::string kAny = "scalar+branch+vector+mem+dma+sync";

}  // namespace

// ---- 1: issue.width and issue.slots -------------------------------------------------------

TEST(ConfigStrict, WidthAndSlotsThatDisagreeAreAnErrorInEitherKeyOrder)
{
    // Width first used to run with width 1 (slots overwrote it); slots first was an error.
    const std::string want = ": issue.width: 2 does not match issue.slots: 1 slot [any] "
                             "(issue.width must equal the number of slots)";
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "issue: {width: 2, slots: [any]}\n"), p + ":1:8" + want);
    expect_error(show_file(p, "issue: {slots: [any], width: 2}\n"), p + ":1:8" + want);
    expect_error(show_file(p, "issue:\n  width: 2\n  slots: [any]\n"), p + ":2:3" + want);
    expect_error(show_file(p, "issue:\n  slots: [any]\n  width: 2\n"), p + ":2:3" + want);
}

TEST(ConfigStrict, OneOfWidthAndSlotsAloneMustMatchTheOther)
{
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "issue: {width: 2}\n"),
                 p + ":1:9: issue.width: 2 does not match issue.slots: 4 slots [" + kDefaultSlots +
                     "] (issue.width must equal the number of slots)");
    expect_error(show_file(p, "issue:\n  slots: [any, any]\n"),
                 p + ":2:3: issue.width: 4 does not match issue.slots: 2 slots [any,any] "
                     "(issue.width must equal the number of slots)");
    expect_error(run_cli("config show --set issue.width=2"),
                 "issue.width: 2 does not match issue.slots: 4 slots [" + kDefaultSlots +
                     "] (issue.width must equal the number of slots)");
}

TEST(ConfigStrict, SetOverridesOfWidthAndSlotsAreCheckedAfterTheLastInEitherOrder)
{
    for (const char *args : {"--set issue.width=2 --set issue.slots=any,any", "--set issue.slots=any,any --set issue.width=2"}) {
        Result r = run_cli(std::string("config show ") + args);
        ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
        EXPECT_NE(r.out.find("  width: 2\n  slots: [" + kAny + ", " + kAny + "]\n"), std::string::npos) << r.out;
    }
    const std::string want = "issue.width: 3 does not match issue.slots: 2 slots [any,any] "
                             "(issue.width must equal the number of slots)";
    expect_error(run_cli("config show --set issue.width=3 --set issue.slots=any,any"), want);
    expect_error(run_cli("config show --set issue.slots=any,any --set issue.width=3"), want);
}

// ---- 2: duplicate keys -------------------------------------------------------------------

TEST(ConfigStrict, DuplicateKeyNamesItsSecondOccurrence)
{
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "core:\n  vlen: 256\n  vlen: 512\n"),
                 p + ":3:3: core.vlen: duplicate key (first at line 2, column 3)");
    expect_error(show_file(p, "core: {vlen: 256}\nissue: {branch_penalty: 2}\ncore: {ub_bytes: 65536}\n"),
                 p + ":3:1: core: duplicate key (first at line 1, column 1)");
    expect_error(show_file(p, "units:\n  valu: {count: 1, count: 2}\n"),
                 p + ":2:20: units.valu.count: duplicate key (first at line 2, column 10)");
    // The dotted spelling is the same key.
    expect_error(show_file(p, "core.vlen: 128\ncore: {vlen: 256}\n"),
                 p + ":2:8: core.vlen: duplicate key (first at line 1, column 1)");
    // Two bases: root["base"] would have picked one.
    expect_error(show_file(p, "base: default.yaml\nbase: tiny.yaml\n"),
                 p + ":2:1: base: duplicate key (first at line 1, column 1)");
}

// A control character (a NUL) is one line at its place: yaml-cpp read a NUL
// as an escape and printed the byte, over two lines.
TEST(ConfigStrict, AControlCharacterIsOneLineAtItsPlace)
{
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, std::string("core:\n  vlen: 512\0\n", 19)),
                 p + ":2:12: control character 0x00 (YAML allows tab, line feed and carriage return only)");
    expect_error(show_file(p, "core:\n  vlen: 5\x04" "12\n"),
                 p + ":2:10: control character 0x04 (YAML allows tab, line feed and carriage return only)");
    EXPECT_EQ(show_file(p, "core:\r\n\tvlen: 512\r\n").status, 2);  // a tab indents nothing in YAML: its own error
}

// yaml-cpp's recursion guard said only "bad file".
TEST(ConfigStrict, YamlNestedPastTheParsersLimitSaysSo)
{
    const std::string p = tmpdir() + "/config.yaml";
    const std::string why = ": nested too deeply: yaml-cpp parses at most 499 levels of [ ], { } and indentation";
    expect_error(show_file(p, "core:\n  vlen: " + std::string(3000, '[') + std::string(3000, ']') + "\n"),
                 p + ":2:6009" + why);
    std::string nested = "a:\n";
    for (int i = 1; i < 600; i++)
        nested += std::string(size_t(i), ' ') + "b:\n";
    expect_error(show_file(p, nested), p + ":499:501" + why);
}

TEST(ConfigStrict, ASectionThatIsNotAMappingSaysSo)
{
    // These said "units: unknown key", of a section every config has.
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "units: 5\n"), p + ":1:8: units: expected a mapping");
    expect_error(show_file(p, "units: [1, 2]\n"), p + ":1:8: units: expected a mapping");
    expect_error(show_file(p, "units:\n  sfu: 7\n"), p + ":2:8: units.sfu: expected a mapping");
    expect_error(show_file(p, "units: {sfu: 7}\n"), p + ":1:14: units.sfu: expected a mapping");
    expect_error(show_file(p, "core:\n"), p + ":1:1: core: expected a mapping");
    expect_error(show_file(p, "unit: 5\n"), p + ":1:1: unit: unknown key");
}

// ---- 3: a second document ----------------------------------------------------------------

TEST(ConfigStrict, SecondYamlDocumentIsAnError)
{
    const std::string want = ": a second YAML document (after '---'): a config file is one document";
    const std::string p = tmpdir() + "/config.yaml";
    // The position is the second document's `---`.
    expect_error(show_file(p, "core: {vlen: 256}\n---\ncore: {vlen: 512}\n"), p + ":2:1" + want);
    expect_error(show_file(p, "core: {vlen: 256}\n---\n"), p + ":2:1" + want);
    // One document with an explicit start is fine.
    Result r = show_file(p, "---\ncore: {vlen: 512}\n");
    EXPECT_EQ(r.status, 0) << r.err;
}

TEST(ConfigStrict, StrayCommaIsOneLineNotAHang)
{
    // fuzz_config found it: yaml-cpp 0.7's LoadAll never gets past a `,` at
    // the top level (it looped, growing, until the fuzzer's 2 GB limit).
    const std::string p = tmpdir() + "/config.yaml";
    const std::string want =
        ": cannot parse this: it is not the start of a YAML value (a stray ',' or ']' outside a [ ] or { } list?)";
    expect_error(show_file(p, ", x"), p + ":1:1" + want);
    expect_error(show_file(p, "# a comment\n, the smallest UB that\ncore: {vlen: 128}\n"), p + ":2:1" + want);
}

TEST(ConfigStrict, AFolderIsNotAConfigFile)
{
    // A folder as the config, as its base, or as a sweep spec: one line, exit
    // 2 (each was an "internal error", exit 3).
    const std::string d = tmpdir();
    expect_error(run_cli("config show " + d), d + ": cannot open config file: Is a directory");
    expect_error(run_cli("run relu --config " + d), d + ": cannot open config file: Is a directory");
    const std::string p = d + "/based.yaml";
    expect_error(show_file(p, "base: /\n"), "/: cannot open config file: Is a directory");
    expect_error(run_cli("sweep " + d + " -o " + d + "/out"), d + ": cannot open sweep spec");
}

TEST(ConfigStrict, ChecksAcrossKeysNameTheKey)
{
    // They named the config only ("default: no issue slot accepts class
    // 'scalar'", "l2s.yaml: l2: L2 size_bytes 1024 must be ...").
    expect_error(run_cli("config show --set issue.width=1 --set issue.slots=vector"),
                 "set issue.slots: no slot accepts class 'scalar' (every class needs one)");
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "l2:\n  size_bytes: 1024\n"),
                 p + ":2:3: l2.size_bytes: 1024 is less than one line in every way, l2.ways x l2.line_bytes (2048)");
    expect_error(run_cli("config show --set l2.size_bytes=17179869184"),
                 "set l2.size_bytes: 17179869184 is more than 67108864 lines of 128 bytes (l2.line_bytes)");
    EXPECT_EQ(run_cli("config show --set l2.size_bytes=17179869184 --set l2.line_bytes=256").status, 0);
}

// A check across keys names where the value it refuses came from: the key
// of those it reads given last, a --set or a file's line:col, and the key
// alone at the defaults. It said "default: ..." ("default" is no file) of
// --set values, and blamed configs/tiny.yaml for a --set over it.
TEST(ConfigStrict, AChecksErrorNamesWhereItsValueCameFrom)
{
    const std::string less = "l2.size_bytes: 1024 is less than one line in every way, l2.ways x l2.line_bytes (2048)";
    expect_error(run_cli("config show --set l2.size_bytes=1024"), "set " + less);
    expect_error(run_cli("config show " + std::string(NPUSIM_SOURCE_ROOT) + "/configs/tiny.yaml --set l2.size_bytes=1024"),
                 "set " + less);
    expect_error(run_cli("config show --set issue.width=1 --set issue.slots=scalar"),
                 "set issue.slots: no slot accepts class 'branch' (every class needs one)");
    // The key given last, whichever of the check's keys it is.
    const std::string p = tmpdir() + "/config.yaml";
    write(p, "l2:\n  ways: 2\n  size_bytes: 4096\n");
    expect_error(run_cli("config show " + p + " --set l2.ways=64"),
                 "set l2.ways: l2.size_bytes: 4096 is less than one line in every way, l2.ways x l2.line_bytes (8192)");
    expect_error(run_cli("config show " + p + " --set l2.line_bytes=4096"),
                 "set l2.line_bytes: l2.size_bytes: 4096 is less than one line in every way, l2.ways x l2.line_bytes "
                 "(8192)");
    expect_error(show_file(p, "l2:\n  size_bytes: 4096\n  ways: 64\n"),
                 p + ":3:3: l2.size_bytes: 4096 is less than one line in every way, l2.ways x l2.line_bytes (8192)");
    // A base file's key points into the base.
    const std::string b = tmpdir() + "/based_on.yaml";
    write(p, "l2:\n  size_bytes: 1024\n");
    write(b, "base: config.yaml\ncore: {vlen: 512}\n");
    expect_error(run_cli("config show " + b), p + ":2:3: " + less);
    // Values no file or --set gave (a library caller's Config): the key alone.
    npusim::Config c = npusim::default_config();
    c.l2.size_bytes = 1024;
    try {
        npusim::validate_config(c);
        ADD_FAILURE() << "accepted";
    } catch (const std::exception &e) {
        EXPECT_EQ(std::string(e.what()), less);
    }
}

TEST(ConfigStrict, AnEmptyConfigFileIsTheDefaultsAsOneOfCommentsIs)
{
    // It said "cannot open config file" of a file it had opened.
    const std::string p = tmpdir() + "/config.yaml";
    Result defaults = run_cli("config show");
    ASSERT_EQ(defaults.status, 0) << defaults.err;
    Result empty = show_file(p, "");
    EXPECT_EQ(empty.status, 0) << empty.err;
    Result comments = show_file(p, "# nothing here\n");
    EXPECT_EQ(comments.status, 0) << comments.err;
    EXPECT_EQ(empty.out, comments.out);
    EXPECT_EQ(run_cli("run relu --shape 1,16,8,8 --config " + p + " --json -").status, 0);
    expect_error(run_cli("config show " + tmpdir() + "/none.yaml"), tmpdir() + "/none.yaml: cannot open config file");
}

TEST(ConfigStrict, AQuotedValueIsTheTextSetTakes)
{
    // A config value is the text --set takes, quoted or not: "512" is 512
    // (docs/sweeps.md), where a graph spec's numbers refuse quotes.
    const std::string p = tmpdir() + "/config.yaml";
    Result quoted = show_file(p, "core: {vlen: \"512\"}\nl2: {replacement: 'plru'}\n");
    ASSERT_EQ(quoted.status, 0) << quoted.err;
    Result set = run_cli("config show --set core.vlen=512 --set l2.replacement=plru");
    ASSERT_EQ(set.status, 0) << set.err;
    EXPECT_EQ(quoted.out, set.out);
    EXPECT_NE(quoted.out.find("vlen: 512\n"), std::string::npos) << quoted.out;
    expect_error(show_file(p, "core: {vlen: \"0x\"}\n"),
                 p + ":1:14: core.vlen: expected an integer (decimal without a leading 0, or 0x hex), got '0x'");
}

// ---- 4: ranges and alignment from the schema ---------------------------------------------

TEST(ConfigStrict, AlignmentRulesComeFromTheSchema)
{
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "ub:\n  bank_bytes: 3\n"),
                 p + ":2:15: ub.bank_bytes: 3 is not a power of two (2 .. 4096)");
    // core.ub_bytes is whole rows of UB banks, whichever side changes.
    expect_error(show_file(p, "core:\n  ub_bytes: 100000\n"),
                 p + ":2:3: core.ub_bytes: 100000 is not a multiple of ub.banks x ub.bank_bytes (16 x 32 = 512 bytes)");
    expect_error(show_file(p, "ub: {banks: 12}\n"),
                 p + ":1:6: core.ub_bytes: 262144 is not a multiple of ub.banks x ub.bank_bytes (12 x 32 = 384 bytes)");
    expect_error(run_cli("config show --set ub.banks=12"),
                 "core.ub_bytes: 262144 is not a multiple of ub.banks x ub.bank_bytes (12 x 32 = 384 bytes)");
    expect_error(run_cli("config show --set l2.size_bytes=3000000"),
                 "set l2.size_bytes: 3000000 is not a power of two (1024 .. 17179869184)");
    expect_error(run_cli("config show --set l2.ways=12"), "set l2.ways: 12 is not a power of two (1 .. 64)");
    expect_error(run_cli("config show --set dram.interleave_bytes=384"),
                 "set dram.interleave_bytes: 384 is not a power of two (32 .. 1048576)");
    // C would read 0400 as octal 256, YAML 1.2 as 400.
    expect_error(run_cli("config show --set core.vlen=0400"),
                 "set core.vlen: expected an integer (decimal without a leading 0, or 0x hex), got '0400'");
    Result r = run_cli("config show --set core.vlen=0x200 --set core.ub_bytes=100352");
    EXPECT_EQ(r.status, 0) << r.err;
}

TEST(ConfigStrict, DocsPrintEveryAlignmentRule)
{
    Result r = run_cli("config docs");
    ASSERT_EQ(r.status, 0);
    for (const char *row : {"| `core.vlen` | int | 256 | 128 .. 2048, power of two | bits |",
                            "| `core.ub_bytes` | int | 262144 | 32768 .. 1073741824, multiple of ub.banks x ub.bank_bytes | bytes |",
                            "| `ub.bank_bytes` | int | 32 | 2 .. 4096, power of two | bytes |",
                            "| `l2.size_bytes` | int | 2097152 | 1024 .. 17179869184, power of two | bytes |",
                            "| `l2.ways` | int | 16 | 1 .. 64, power of two | ways |",
                            "| `l2.line_bytes` | int | 128 | 32 .. 4096, power of two | bytes |",
                            "| `dram.interleave_bytes` | int | 256 | 32 .. 1048576, power of two | bytes |"})
        EXPECT_NE(r.out.find(row), std::string::npos) << row;
}

TEST(ConfigStrict, EveryAlignedKeysBoundsAndDefaultObeyItsRule)
{
    auto pow2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
    for (const npusim::ConfigKey &k : npusim::config_schema()) {
        if (k.type != npusim::KeyType::Int)
            continue;
        EXPECT_LE(k.min, k.max) << k.path;
        for (int64_t v : {k.min, k.max, int64_t(std::stoll(k.default_text))})
            EXPECT_TRUE(!k.power_of_two || pow2(v)) << k.path << " " << v;
        // A multiple_of names Int keys of the schema ("a x b") or a number.
        std::string rest = k.multiple_of;
        while (!rest.empty()) {
            const size_t x = rest.find(" x ");
            const std::string name = rest.substr(0, x);
            rest = x == std::string::npos ? "" : rest.substr(x + 3);
            bool found = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos &&
                         std::stoll(name) > 0 && int64_t(std::stoll(k.default_text)) % std::stoll(name) == 0;
            for (const npusim::ConfigKey &f : npusim::config_schema())
                found |= f.path == name && f.type == npusim::KeyType::Int;
            EXPECT_TRUE(found) << k.path << ": multiple_of names '" << name << "'";
        }
    }
    EXPECT_NO_THROW(npusim::validate_config(npusim::default_config()));
}

// ---- 5: long values ----------------------------------------------------------------------

TEST(ConfigStrict, EchoedValuesAreCutTo40Characters)
{
    const std::string forty(40, '1');
    const std::string p = tmpdir() + "/config.yaml";
    // A 100,000-digit integer used to give a 100 KB error line.
    expect_error(show_file(p, "core:\n  vlen: " + std::string(100000, '1') + "\n"),
                 p + ":2:9: core.vlen: " + forty + "... is out of range (128 .. 2048 bits)");
    // (YAML allows 1024 characters in a plain key.)
    expect_error(show_file(p, std::string(1000, 'k') + ": 1\n"), p + ":1:1: " + std::string(40, 'k') + "...: unknown key");
    expect_error(run_cli("config show --set sfu.mode=" + std::string(1000, 'x')),
                 "set sfu.mode: '" + std::string(40, 'x') + "...' is not one of exact|approx");
    expect_error(run_cli("config show --set issue.slots=any," + std::string(1000, 'v')),
                 "set issue.slots[1]: unknown instruction class '" + std::string(40, 'v') +
                     "...' (scalar, branch, vector, mem, dma, sync)");
    expect_error(run_cli("config show --set core.ub_bytes=" + std::string(1000, '9')),
                 "set core.ub_bytes: " + std::string(40, '9') + "... is out of range (32768 .. 1073741824 bytes)");
}

// ---- 6: issue.slots spellings ------------------------------------------------------------

// Every comma separates two class sets: a trailing one was dropped (4
// slots) where a leading or doubled one was an empty set; `any` with
// classes said "unknown instruction class 'any'" of a documented keyword.
TEST(ConfigStrict, EverySlotIsAClassSetAndAnyStandsAlone)
{
    expect_error(run_cli("config show --set issue.slots=any,any,any,any,"), "set issue.slots[4]: empty class set");
    expect_error(run_cli("config show --set issue.slots=,any,any,any"), "set issue.slots[0]: empty class set");
    expect_error(run_cli("config show --set issue.slots=any,any,any,,"), "set issue.slots[3]: empty class set");
    expect_error(run_cli("config show --set issue.slots="), "set issue.slots: expected 1 .. 8 class sets, got 0");
    for (const char *set : {"any+scalar", "scalar+any", "any+any"})
        expect_error(run_cli(std::string("config show --set issue.width=1 --set issue.slots=") + set),
                     std::string("set issue.slots[0]: '") + set +
                         "': any is already every class; give any alone or the classes");
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "issue:\n  width: 2\n  slots: [vector, any+mem]\n"),
                 p + ":3:10: issue.slots[1]: 'any+mem': any is already every class; give any alone or the classes");
    Result r = run_cli("config show --set issue.slots=any,any,any,any");
    EXPECT_EQ(r.status, 0) << r.err;
}

// A class named twice in one slot was kept once ('vector+vector' taken as
// 'vector'), and a trailing '+' was dropped: both are refused, as a
// doubled or leading '+' was.
TEST(ConfigStrict, AClassSetNamesEachClassOnceBetweenSinglePluses)
{
    const std::string w = "config show --set issue.width=2 --set issue.slots=";
    expect_error(run_cli(w + "vector+vector,any"), "set issue.slots[0]: 'vector+vector': class 'vector' is named twice");
    expect_error(run_cli(w + "any,mem+vector+mem"), "set issue.slots[1]: 'mem+vector+mem': class 'mem' is named twice");
    for (const char *set : {"vector+", "+vector", "vector++mem"})
        expect_error(run_cli(w + "any," + set), std::string("set issue.slots[1]: '") + set +
                                                    "': an empty class name (classes are joined by single '+')");
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "issue:\n  width: 2\n  slots: [vector, dma+dma]\n"),
                 p + ":3:10: issue.slots[1]: 'dma+dma': class 'dma' is named twice");
    Result r = run_cli(w + "mem+vector,any");
    EXPECT_EQ(r.status, 0) << r.err;
}

// ---- 7: memory.warm_inputs needs the L2 model --------------------------------------------

// It was ignored without a word under memory.model ideal or sim.mode
// functional, where run --warm-l2 is refused ('warming the L2 needs
// memory.model: l2 and sim.mode: timed').
TEST(ConfigStrict, WarmInputsNeedTheTimedL2)
{
    const std::string want = "memory.warm_inputs: yes needs memory.model: l2 and sim.mode: timed";
    expect_error(run_cli("config show --set memory.model=ideal --set memory.warm_inputs=yes"), "set " + want);
    expect_error(run_cli("config show --set memory.warm_inputs=yes --set memory.model=ideal"), "set memory.model: " + want);
    expect_error(run_cli("run relu --shape 1,16,8,8 --set memory.warm_inputs=yes --set sim.mode=functional"),
                 "set sim.mode: " + want);
    expect_error(run_cli("run relu --shape 1,16,8,8 --set memory.warm_inputs=yes --config " + std::string(NPUSIM_SOURCE_ROOT) +
                         "/configs/tiny.yaml"),
                 "set " + want);
    const std::string p = tmpdir() + "/config.yaml";
    expect_error(show_file(p, "memory:\n  model: ideal\n  warm_inputs: yes\n"), p + ":3:3: " + want);
    EXPECT_EQ(run_cli("run relu --shape 1,16,8,8 -q --set memory.warm_inputs=yes").status, 0);
}

// ---- 8: configs/default.yaml spells out every key ----------------------------------------

// Its header and docs/sweeps.md call it the built-in defaults spelled out;
// 16 keys were missing (core.freq_mhz, the cube's 13, memory.warm_inputs,
// l2.index, sim.race_check). Every key of the schema is given there, at its
// default: a new key cannot be left out.
TEST(ConfigStrict, DefaultYamlGivesEveryKeyAtItsDefault)
{
    const npusim::Config file = npusim::load_config(std::string(NPUSIM_SOURCE_ROOT) + "/configs/default.yaml");
    const npusim::Config builtin = npusim::default_config();
    for (const npusim::ConfigKey &k : npusim::config_schema())
        EXPECT_TRUE(std::any_of(file.given.begin(), file.given.end(), [&](const auto &g) { return g.first == k.path; }))
            << k.path << " is not in configs/default.yaml";
    EXPECT_EQ(file.given.size(), npusim::config_schema().size());
    EXPECT_EQ(npusim::config_values(file), npusim::config_values(builtin));
}

// ---- the shipped configs still load ------------------------------------------------------

TEST(ConfigStrict, ShippedConfigsLoad)
{
    for (const char *name : {"default", "tiny", "edge", "datacenter"}) {
        Result r = run_cli(std::string("config show ") + NPUSIM_SOURCE_ROOT + "/configs/" + name + ".yaml");
        EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    }
}
