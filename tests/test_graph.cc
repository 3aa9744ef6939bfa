// npusim graph (tools/npusim/graph.h, docs/fusion.md): specs, chains, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "graph.h"
#include "runner.h"
#include "trace.h"

using namespace npusim;

namespace {

// A small FFN with shapes that are not multiples of 16: the three forms.
const char *kSmallFfn = R"(name: small_ffn
dtype: fp16
samples: 2
tensors:
  x:  {shape: [40, 70], range: [-1, 1]}
  w1: {shape: [70, 50], range: [-0.2, 0.2]}
  b1: {shape: [50], range: [-0.1, 0.1]}
  w2: {shape: [50, 30], range: [-0.2, 0.2]}
  b2: {shape: [30]}
variants:
  unfused:
    - {kernel: matmul,    inputs: {a: x, b: w1},    output: h}
    - {kernel: bias_add,  inputs: {x: h, bias: b1}, output: hb}
    - {kernel: gelu_tanh, inputs: {x: hb},          output: g}
    - {kernel: matmul,    inputs: {a: g, b: w2},    output: o}
    - {kernel: bias_add,  inputs: {x: o, bias: b2}, output: y}
  partial:
    - {kernel: matmul_add, inputs: {a: x, b: w1, bias: b1}, output: hb}
    - {kernel: gelu_tanh,  inputs: {x: hb},                 output: g}
    - {kernel: matmul_add, inputs: {a: g, b: w2, bias: b2}, output: y}
  fused:
    - {kernel: matmul_add_gelu, inputs: {a: x, b: w1, bias: b1}, output: g}
    - {kernel: matmul_add,      inputs: {a: g, b: w2, bias: b2}, output: y}
)";

std::string error_of(const std::string &text)
{
    try {
        load_graph_text(text, "g.yaml");
    } catch (const Error &e) {
        return e.what();
    }
    return "(no error)";
}

// One relu step on a 1x16x8x8 input: for what a graph reports, not its chain.
const char kOneRelu[] =
    "tensors:\n  x: {shape: [1, 16, 8, 8]}\nvariants:\n  a:\n    - {kernel: relu, inputs: {x: x}, output: y}\n";

// kOneRelu run on the default config with these overrides.
GraphResult run_one_relu(std::initializer_list<const char *> overrides)
{
    Config cfg = default_config();
    for (const char *o : overrides)
        apply_override(cfg, o);
    return run_graph(load_graph_text(kOneRelu, "one.yaml"), cfg, {}, 1);
}

}  // namespace

TEST(Graph, EveryVariantOfAChainPassesAndItsFiguresAreTheSumsOfItsSteps)
{
    const GraphSpec spec = load_graph_text(kSmallFfn, "small.yaml");
    ASSERT_EQ(spec.variants.size(), 3u);
    const GraphResult g = run_graph(spec, default_config(), {}, 2);
    ASSERT_EQ(g.variants.size(), 3u);
    for (const GraphVariantResult &v : g.variants) {
        EXPECT_TRUE(v.passed) << v.name;
        uint64_t cycles = 0, dram = 0, accesses = 0;
        for (const GraphStepResult &s : v.steps) {
            EXPECT_TRUE(s.passed) << v.name << " " << s.kernel << ": " << s.failure;
            cycles += s.cycles;
            dram += s.dram_bytes;
            accesses += s.l2_accesses;
        }
        EXPECT_EQ(v.cycles, cycles) << v.name;
        EXPECT_EQ(v.dram_bytes, dram) << v.name;
        EXPECT_EQ(v.l2_accesses, accesses) << v.name;
        EXPECT_DOUBLE_EQ(v.samples_per_second, 2.0 * 1000e6 / double(v.cycles)) << v.name;
    }
    EXPECT_EQ(g.variants[0].steps.size(), 5u);
    EXPECT_EQ(g.variants[2].steps.size(), 2u);
    // Fusion keeps the intermediate tensors on chip: fewer DRAM bytes.
    EXPECT_GT(g.variants[0].dram_bytes, g.variants[1].dram_bytes);
    EXPECT_GT(g.variants[1].dram_bytes, g.variants[2].dram_bytes);
    // The JSON has what the acceptance reads.
    const nlohmann::json j = graph_json(g);
    ASSERT_EQ(j["variants"].size(), 3u);
    EXPECT_EQ(j["variants"][2]["name"], "fused");
    for (const char *k : {"cycles", "dram_bytes", "samples_per_second", "passed", "l2_hit_rate", "cube_busy_cycles",
                          "vector_busy_cycles", "dma_busy_cycles", "overlap_cycles_at_least", "steps"})
        EXPECT_TRUE(j["variants"][0].contains(k)) << k;
    // A variant run alone gives the same figures (threads and order change nothing).
    const GraphResult one = run_graph(spec, default_config(), {"partial"}, 1);
    ASSERT_EQ(one.variants.size(), 1u);
    EXPECT_EQ(one.variants[0].cycles, g.variants[1].cycles);
    EXPECT_EQ(one.variants[0].dram_bytes, g.variants[1].dram_bytes);
}

TEST(Graph, AStepReadsTheTensorTheStepBeforeWroteFromTheL2)
{
    // bias_add reads h right after matmul wrote it: warmed, its reads hit.
    const GraphSpec spec = load_graph_text(kSmallFfn, "small.yaml");
    const GraphResult g = run_graph(spec, default_config(), {"unfused"}, 1);
    const GraphStepResult &add = g.variants[0].steps[1];
    EXPECT_EQ(add.kernel, "bias_add");
    EXPECT_GT(add.l2_hits, 0u);
    const GraphStepResult &first = g.variants[0].steps[0];
    EXPECT_EQ(first.l2_hits, 0u);  // x and w1 come from the DRAM
}

TEST(Graph, BadSpecsAreOneLineErrorsWithTheirPlaceAndKeyPath)
{
    const std::string head = "tensors:\n  x: {shape: [4, 8]}\n  w: {shape: [8, 4]}\nvariants:\n  v:\n";
    EXPECT_EQ(error_of(head + "    - {kernel: matmul, inputs: {a: x, b: nope}, output: y}\n"),
              "g.yaml:6:42: variants.v[0].inputs.b: no tensor 'nope' (a graph input under tensors, or an earlier "
              "step's output)");
    EXPECT_EQ(error_of(head + "    - {kernel: matmul, inputs: {a: x}, output: y}\n"),
              "g.yaml:6:32: variants.v[0].inputs: kernel 'matmul' needs input 'b' (its inputs: a, b)");
    EXPECT_EQ(error_of(head + "    - {kernel: matmul, inputs: {a: x, b: w, c: x}, output: y}\n"),
              "g.yaml:6:45: variants.v[0].inputs.c: kernel 'matmul' has no input 'c' (its inputs: a, b)");
    EXPECT_EQ(error_of(head + "    - {kernel: matmul, inputs: {a: x, b: w}, output: x}\n"),
              "g.yaml:6:54: variants.v[0].output: tensor 'x' is already defined (each tensor is written once)");
    EXPECT_EQ(error_of(head + "    - {kernel: matmul, inputs: {a: x, b: w}, output: y, fused: yes}\n"),
              "g.yaml:6:57: variants.v[0].fused: unknown key (kernel, inputs, output, params)");
    EXPECT_EQ(error_of(head + "    - {kernel: leaky_relu, inputs: {x: x}, output: y}\n"),
              "g.yaml:6:16: variants.v[0].kernel: kernel 'leaky_relu' has parameters; a graph step runs kernels "
              "without them (convolutions aside)");
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [4, 8, 2]}\nvariants: {}\n"),
              "g.yaml:2:14: tensors.x.shape: expected [M, N] (an fp16 matrix), [N] (an fp32 vector) or [N, C, H, W] "
              "(an fp16 tensor)");
    const std::string conv = "tensors:\n  x: {shape: [1, 4, 6, 6]}\n  w: {shape: [8, 4, 3, 3]}\nvariants:\n  v:\n";
    EXPECT_EQ(error_of(conv + "    - {kernel: conv2d, inputs: {x: x, w: w}, params: {dilation: 2}, output: y}\n"),
              "g.yaml:6:55: variants.v[0].params.dilation: kernel 'conv2d' has no parameter 'dilation' (its "
              "parameters: cout, kernel, stride, pad)");
    EXPECT_EQ(error_of(conv + "    - {kernel: relu, inputs: {x: x}, params: {stride: 2}, output: y}\n"),
              "g.yaml:6:46: variants.v[0].params: kernel 'relu' has no parameters");
    EXPECT_EQ(error_of("dtype: bf16\n"), "g.yaml:1:8: dtype: 'bf16' is not fp16 or fp32");
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [1048576, 1048576]}\nvariants: {}\n"),
              "g.yaml:2:14: tensors.x.shape: 1099511627776 elements; a graph tensor has at most 268435456");
    EXPECT_EQ(error_of("tensors: {}\nvariant: {}\n"),
              "g.yaml:2:1: variant: unknown key (name, description, dtype, samples, seed, config, tensors, variants)");
    // Running: shapes that do not chain are the run's one-line error, with the step's place.
    const GraphSpec bad = load_graph_text(head + "    - {kernel: matmul, inputs: {a: x, b: x}, output: y}\n", "g.yaml");
    try {
        run_graph(bad, default_config(), {}, 1);
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "g.yaml:6:7: variants.v[0]: input 'b': shape (4,8): its rows must be the columns of a (K = 8)");
    }
    try {
        run_graph(bad, default_config(), {"w"}, 1);
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()), "variant w: g.yaml has no such variant");
    }
}

TEST(Graph, AConvolutionChainsWithAnActivationOfItsNchwOutput)
{
    // Conv + ReLU, separate and fused, on a map and channels that are not
    // multiples of 16, stride 2, two images: every step checked, fewer
    // DRAM bytes and fewer cycles fused.
    const GraphSpec spec = load_graph_text(R"(name: small_conv
dtype: fp16
tensors:
  x: {shape: [2, 20, 15, 13], range: [0, 1]}
  w: {shape: [24, 20, 3, 3], range: [-0.2, 0.2]}
variants:
  unfused:
    - {kernel: conv2d, inputs: {x: x, w: w}, params: {stride: 2, pad: 1}, output: c}
    - {kernel: relu,   inputs: {x: c}, output: y}
  fused:
    - {kernel: conv2d_relu, inputs: {x: x, w: w}, params: {stride: 2}, output: y}
)",
                                           "conv.yaml");
    const GraphResult g = run_graph(spec, default_config(), {}, 2);
    ASSERT_EQ(g.variants.size(), 2u);
    for (const GraphVariantResult &v : g.variants)
        for (const GraphStepResult &s : v.steps)
            EXPECT_TRUE(s.passed) << v.name << " " << s.kernel << ": " << s.failure;
    EXPECT_GT(g.variants[0].dram_bytes, g.variants[1].dram_bytes);
    EXPECT_GT(g.variants[0].cycles, g.variants[1].cycles);
    EXPECT_GT(g.variants[0].steps[1].l2_hits, 0u);  // ReLU reads c from the L2
}

TEST(Graph, TheShippedSpecsLoad)
{
    for (const char *name : {"bert_ffn.yaml", "bert_ffn_gelu_forms.yaml", "resnet18_conv_relu.yaml"}) {
        const GraphSpec g = load_graph(std::string(NPUSIM_SOURCE_ROOT) + "/configs/graphs/" + name);
        EXPECT_FALSE(g.variants.empty()) << name;
    }
}

TEST(Graph, EachStepsTraceShowsTheCubeAndTheVectorUnitSideBySideAndTheVariantsItsStepsEndToEnd)
{
    const std::string dir = ::testing::TempDir() + "/graph_traces";
    ::mkdir(dir.c_str(), 0755);
    const GraphSpec spec = load_graph_text(kSmallFfn, "small.yaml");
    const GraphResult g = run_graph(spec, default_config(), {"fused"}, 1, dir);
    ASSERT_EQ(g.variants[0].steps.size(), 2u);
    const std::string path = dir + "/fused.0.matmul_add_gelu.json";
    EXPECT_EQ(g.variants[0].steps[0].trace, path);
    std::ifstream f(path);
    ASSERT_TRUE(f.good()) << path;
    const nlohmann::json j = nlohmann::json::parse(f);
    const nlohmann::json &events = j.is_object() ? j["traceEvents"] : j;
    std::set<std::string> tracks;
    for (const auto &e : events)
        if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name")
            tracks.insert(e["args"]["name"].get<std::string>());
    EXPECT_TRUE(tracks.count("pipe cube #0")) << path;
    EXPECT_TRUE(tracks.count("valu #0")) << path;
    EXPECT_TRUE(tracks.count("sfu #0")) << path;
    // The variant's own trace holds the steps end to end: a "graph" track
    // with one slice per step, and each step's instructions, pipes and
    // stalls as its own trace has them, from the cycle the steps before it end.
    EXPECT_EQ(g.variants[0].trace, dir + "/fused.json");
    std::ifstream cf(g.variants[0].trace);
    ASSERT_TRUE(cf.good()) << g.variants[0].trace;
    const nlohmann::json chain = nlohmann::json::parse(cf)["traceEvents"];
    using Slice = std::tuple<uint64_t, uint64_t, std::string, std::string, unsigned>;
    std::vector<Slice> steps, core_slices;
    for (const auto &e : chain) {
        if (e.value("ph", "") != "X")
            continue;
        const Slice sl{e["ts"].get<uint64_t>(), e["dur"].get<uint64_t>(), e["name"].get<std::string>(),
                       e["cat"].get<std::string>(), e["pid"].get<unsigned>()};
        if (e["pid"] == PerfettoTrace::kGraphPid)
            steps.push_back(sl);
        else if (e["pid"] != PerfettoTrace::kMemoryPid)
            core_slices.push_back(sl);
    }
    const uint64_t c0 = g.variants[0].steps[0].cycles, c1 = g.variants[0].steps[1].cycles;
    EXPECT_EQ(steps, (std::vector<Slice>{{0, c0, "matmul_add_gelu(a=x, b=w1, bias=b1) -> g", "step", 1001},
                                         {c0, c1, "matmul_add(a=g, b=w2, bias=b2) -> y", "step", 1001}}));
    std::vector<Slice> expected;
    for (unsigned k = 0; k < 2; k++) {
        std::ifstream sf(g.variants[0].steps[k].trace);
        const nlohmann::json own = nlohmann::json::parse(sf);
        for (const auto &e : own["traceEvents"])
            if (e.value("ph", "") == "X" && e["pid"] != PerfettoTrace::kMemoryPid)
                expected.emplace_back(e["ts"].get<uint64_t>() + (k ? c0 : 0), e["dur"].get<uint64_t>(),
                                      e["name"].get<std::string>(), e["cat"].get<std::string>(),
                                      e["pid"].get<unsigned>());
    }
    std::sort(expected.begin(), expected.end());
    std::sort(core_slices.begin(), core_slices.end());
    EXPECT_EQ(core_slices.size(), expected.size());
    EXPECT_TRUE(core_slices == expected);
    try {
        run_graph(spec, default_config(), {"fused"}, 1, dir + "/nosuch");
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()), "trace folder " + dir + "/nosuch: not a folder");
    }
}

TEST(Graph, AVariantsNameIsAPlainFileNameForItsTraces)
{
    // '../escape' wrote td1/escape.json for --trace-dir td1/sub; "" wrote the hidden file .json.
    const std::string head = "tensors:\n  x: {shape: [1, 16, 8, 8]}\nvariants:\n";
    const std::string step = ":\n    - {kernel: relu, inputs: {x: x}, output: y}\n";
    const std::string rule = " cannot name its trace files: a variant's name is 1 to 128 letters, digits, '_', '.' "
                             "and '-', not starting with '.' or '-'";
    EXPECT_EQ(error_of(head + "  ../escape" + step), "g.yaml:4:3: variants.../escape: '../escape'" + rule);
    EXPECT_EQ(error_of(head + "  \"\"" + step), "g.yaml:4:3: variants.: ''" + rule);
    EXPECT_EQ(error_of(head + "  .." + step), "g.yaml:4:3: variants...: '..'" + rule);
    EXPECT_EQ(error_of(head + "  .hidden" + step), "g.yaml:4:3: variants..hidden: '.hidden'" + rule);
    EXPECT_EQ(error_of(head + "  -j" + step), "g.yaml:4:3: variants.-j: '-j'" + rule);
    EXPECT_EQ(error_of(head + "  \"a\\0b\"" + step), "g.yaml:4:3: variants.a\\x00b: 'a\\x00b'" + rule);
    EXPECT_EQ(error_of(head + "  " + std::string(129, 'v') + step),
              "g.yaml:4:3: variants." + std::string(129, 'v') + ": '" + std::string(129, 'v') + "'" + rule);
    EXPECT_EQ(load_graph_text(head + "  fused_v1.5-b" + step, "g.yaml").variants[0].name, "fused_v1.5-b");
}

// A tensor's name, a graph input's or a step's output, is a row of the
// tables: "" and " x" were taken, and "a\nb" split the table.
TEST(Graph, ATensorsNameIsAPlainName)
{
    const std::string rule = " is not a tensor name: 1 to 128 letters, digits, '_', '.' and '-', not starting with "
                             "'.' or '-'";
    const std::string step = "variants:\n  v:\n    - {kernel: relu, inputs: {x: x}, output: ";
    EXPECT_EQ(error_of("tensors:\n  \"\": {shape: [1, 16, 8, 8]}\n" + step + "y}\n"), "g.yaml:2:3: tensors.: ''" + rule);
    EXPECT_EQ(error_of("tensors:\n  \" x\": {shape: [1, 16, 8, 8]}\n" + step + "y}\n"),
              "g.yaml:2:3: tensors. x: ' x'" + rule);
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [1, 16, 8, 8]}\n" + step + "\"a\\nb\"}\n"),
              "g.yaml:5:46: variants.v[0].output: 'a\\x0ab'" + rule);
}

// A whole number with a leading 0 is refused, as configs refuse it: it read
// as 16 where YAML 1.1 reads octal 14.
TEST(Graph, AWholeNumberHasNoLeadingZero)
{
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [1, 016, 8, 8]}\nvariants:\n  v:\n    - {kernel: relu, inputs: {x: x}, "
                       "output: y}\n"),
              "g.yaml:2:18: tensors.x.shape[1]: '016' has a leading 0 (YAML 1.1 would read it as octal): write 16");
    EXPECT_EQ(load_graph_text("tensors:\n  x: {shape: [1, 16, 8, 8]}\nseed: 0\nvariants:\n  v:\n    - {kernel: relu, "
                              "inputs: {x: x}, output: y}\n",
                              "g.yaml")
                  .seed,
              0u);
}

TEST(Graph, TwoVariantsWhoseTracesShareAFileAreRefusedBeforeAnyRun)
{
    // -j 1 lost one trace without a word; -j 2 failed to rename and wrote nothing.
    const std::string dir = ::testing::TempDir() + "/graph_collide";
    ::mkdir(dir.c_str(), 0755);
    const GraphSpec spec = load_graph_text("tensors:\n  x: {shape: [1, 16, 8, 8]}\nvariants:\n"
                                           "  a:\n    - {kernel: relu, inputs: {x: x}, output: y}\n"
                                           "  a.0.relu:\n    - {kernel: gelu_tanh, inputs: {x: x}, output: y}\n",
                                           "c.yaml");
    for (unsigned jobs : {1u, 2u}) {
        try {
            run_graph(spec, default_config(), {}, jobs, dir);
            ADD_FAILURE() << "no error";
        } catch (const Error &e) {
            EXPECT_EQ(std::string(e.what()),
                      "c.yaml:6:3: variants.a.0.relu: the trace file of its steps end to end, a.0.relu.json, is also "
                      "that of variant a's step 0 (each trace needs a file of its own; rename one of the variants)");
        }
    }
    EXPECT_EQ(graph_trace_files(spec, {"a"}, dir), (std::vector<std::string>{dir + "/a.0.relu.json", dir + "/a.json"}));
    EXPECT_EQ(run_graph(spec, default_config(), {}, 1).variants.size(), 2u);  // without traces, no clash
}

TEST(Graph, AQuotedNumberIsAStringNotTheNumber)
{
    // shape: [1, "16", 8, 8] ran as [1, 16, 8, 8].
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [1, \"16\", 8, 8]}\nvariants: {}\n"),
              "g.yaml:2:18: tensors.x.shape[1]: '16' is quoted: a number is written without quotes");
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [4], range: ['-1', 1]}\nvariants: {}\n"),
              "g.yaml:2:27: tensors.x.range[0]: '-1' is quoted: a number is written without quotes");
    EXPECT_EQ(error_of("seed: \"7\"\n"), "g.yaml:1:7: seed: '7' is quoted: a number is written without quotes");
    EXPECT_EQ(error_of("samples: |\n  2\n"),
              "g.yaml:1:10: samples: '2\\x0a' is quoted: a number is written without quotes");
    const std::string conv = "tensors:\n  x: {shape: [1, 4, 6, 6]}\n  w: {shape: [8, 4, 3, 3]}\nvariants:\n  v:\n";
    EXPECT_EQ(error_of(conv + "    - {kernel: conv2d, inputs: {x: x, w: w}, params: {stride: '2'}, output: y}\n"),
              "g.yaml:6:63: variants.v[0].params.stride: '2' is quoted: a number is written without quotes");
    EXPECT_EQ(load_graph_text(std::string("seed: 7\nsamples: 2\n") + kOneRelu, "g.yaml").seed, 7u);
}

TEST(Graph, ATensorsSizeIsCheckedWithoutWrapping)
{
    // 2^80 and 2^64 + 4 elements wrapped to 0 and 4 and passed.
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [1048576, 1048576, 1048576, 1048576]}\nvariants: {}\n"),
              "g.yaml:2:14: tensors.x.shape: 1208925819614629174706176 elements; a graph tensor has at most 268435456");
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [769546, 494770, 8681, 5581]}\nvariants: {}\n"),
              "g.yaml:2:14: tensors.x.shape: 18446744073709551620 elements; a graph tensor has at most 268435456");
}

TEST(Graph, WithoutAnL2TheHitRateIsNullNotZero)
{
    // memory.model: ideal has no L2: 0 accesses gave "l2_hit_rate": 0.0 and "L2 hits 0.000".
    const GraphResult g = run_one_relu({"memory.model=ideal"});
    const nlohmann::json j = graph_json(g);
    EXPECT_TRUE(j["variants"][0]["l2_hit_rate"].is_null()) << j["variants"][0].dump();
    EXPECT_TRUE(j["variants"][0]["steps"][0]["l2_hit_rate"].is_null());
    const std::string text = graph_text(g);
    EXPECT_NE(text.find(" L2 hit rate "), std::string::npos) << text;
    EXPECT_NE(text.find("           -            0 "), std::string::npos) << text;
    EXPECT_NE(text.find("DRAM bytes  L2 hit rate -  PASS"), std::string::npos) << text;
    const GraphResult l2 = run_one_relu({});
    EXPECT_DOUBLE_EQ(graph_json(l2)["variants"][0]["l2_hit_rate"].get<double>(),
                     double(l2.variants[0].l2_hits) / double(l2.variants[0].l2_accesses));
}

TEST(Graph, AFunctionalRunShowsNoTimingFigure)
{
    // sim.mode: functional counts no cycles: every variant and step said 0
    // cycles, 0.0 samples/s, 0 DRAM bytes and 0 busy cycles.
    const GraphResult g = run_one_relu({"sim.mode=functional"});
    const nlohmann::json j = graph_json(g);
    EXPECT_EQ(j["timing"], "functional");
    const nlohmann::json &v = j["variants"][0];
    for (const char *k : {"cycles", "dram_bytes", "l2_accesses", "l2_hits", "l2_hit_rate", "cube_busy_cycles",
                          "vector_busy_cycles", "dma_busy_cycles", "overlap_cycles_at_least", "samples_per_second"})
        EXPECT_TRUE(v.at(k).is_null()) << k << ": " << v.dump();
    for (const char *k : {"cycles", "dram_bytes", "l2_accesses", "l2_hits", "l2_hit_rate", "cube_busy_cycles",
                          "vector_busy_cycles", "dma_busy_cycles"})
        EXPECT_TRUE(v["steps"][0].at(k).is_null()) << k;
    EXPECT_TRUE(v["passed"].get<bool>());
    const std::string text = graph_text(g);
    EXPECT_NE(text.find("; functional run: no timing (sim.mode=functional)\n"), std::string::npos) << text;
    EXPECT_NE(text.find("a                       -            -              -           -            -            "
                        "-            -            -  PASS\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("            - cycles              - DRAM bytes  L2 hit rate -  PASS\n"), std::string::npos)
        << text;
    EXPECT_EQ(graph_json(run_one_relu({}))["timing"], "timed");
}

TEST(Graph, TheJsonNamesEveryConfigValueOverridesIncluded)
{
    // "config" was only the source ("default"): an --set override left no trace.
    const nlohmann::json j = graph_json(run_one_relu({"l2.size_bytes=262144", "sim.mode=functional"}));
    EXPECT_EQ(j["config"]["l2.size_bytes"], "262144") << j["config"];
    EXPECT_EQ(j["config"]["source"], "default");
    EXPECT_EQ(j["config"].size(), config_values(default_config()).size() + 1);
}

TEST(Graph, ARangeIsOneItsTensorsDtypeHoldsAndANameIsNotEmpty)
{
    // [-1e30, 1e30] on an fp16 tensor generated infinities; name: "" became the file's name.
    const std::string variant = "variants:\n  a:\n    - {kernel: relu, inputs: {x: x}, output: y}\n";
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [1, 16, 8, 8], range: [-1e30, 1]}\n" + variant),
              "g.yaml:2:37: tensors.x.range[0]: '-1e30' is beyond fp16's largest finite value (65504); this tensor "
              "is fp16");
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [1, 16, 8, 8], range: [0, 65505]}\n" + variant),
              "g.yaml:2:40: tensors.x.range[1]: '65505' is beyond fp16's largest finite value (65504); this tensor "
              "is fp16");
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [16], range: [0, 1e39]}\n" + variant),
              "g.yaml:2:31: tensors.x.range[1]: '1e39' is beyond fp32's largest finite value (3.4028235e38); this "
              "tensor is fp32 (1-D)");
    EXPECT_EQ(error_of("tensors:\n  x: {shape: [1, 16, 8, 8], range: [-65504, 65504]}\n" + variant), "(no error)");
    EXPECT_EQ(error_of("name: \"\"\ntensors:\n  x: {shape: [1, 16, 8, 8]}\n" + variant),
              "g.yaml:1:7: name: empty (leave name out for the file's name)");
    // A description of several lines is printed a line at a time under the name.
    Config functional = default_config();
    apply_override(functional, "sim.mode=functional");
    const std::string text =
        graph_text(run_graph(load_graph_text(std::string("description: |\n  first\n  second\n") + kOneRelu, "d.yaml"),
                             functional, {}, 1));
    EXPECT_NE(text.find("\n             first\n             second\nConfig:"), std::string::npos) << text;
}

TEST(Graph, AKernelGivenAsAPathIsTakenFromTheSpecsFolder)
{
    // It was taken from the current folder, where config: was the spec's.
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("npusim_graph_kernel_" + std::to_string(getpid()));
    fs::create_directories(dir / "k");
    fs::copy_file(fs::path(NPUSIM_SOURCE_ROOT) / "kernels" / "relu.s", dir / "k" / "mine.s",
                  fs::copy_options::overwrite_existing);
    const std::string text =
        "tensors:\n  x: {shape: [1, 16, 8, 8]}\nvariants:\n  a:\n    - {kernel: k/mine.s, inputs: {x: x}, output: y}\n";
    const GraphSpec spec = load_graph_text(text, (dir / "g.yaml").string());
    EXPECT_EQ(spec.variants[0].steps[0].kernel, (dir / "k" / "mine.s").string());
    EXPECT_EQ(spec.variants[0].steps[0].kernel_name, "relu");
    try {
        load_graph_text(text, "elsewhere/g.yaml");
        ADD_FAILURE() << "k/mine.s beside elsewhere/g.yaml was found";
    } catch (const npusim::Error &e) {
        EXPECT_EQ(std::string(e.what()), "elsewhere/g.yaml:5:16: variants.a[0].kernel: elsewhere/k/mine.s: no such kernel file");
    }
    fs::remove_all(dir);
}
