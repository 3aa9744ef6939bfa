// sweep, merge and compare on the command line.
#include "commands.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "atomic_file.h"
#include "compare.h"
#include "config.h"
#include "error.h"
#include "json_text.h"
#include "graph.h"
#include "runner.h"
#include "sweep.h"

#ifndef NPUSIM_TOOLS_DIR
#define NPUSIM_TOOLS_DIR "tools"
#endif

namespace npusim {
namespace {

struct SweepArgs {
    std::string spec, out;
    unsigned jobs = 0;
    std::string shard = "0/1";
    bool list = false;
    std::string max_cycles, max_instructions;  // empty: the spec's limits (else the run's defaults)
};

// --max-cycles N, --max-instructions N of a sweep.
std::optional<uint64_t> sweep_limit(const std::string &flag, const std::string &text)
{
    if (text.empty())
        return std::nullopt;
    std::optional<uint64_t> n = parse_count(text);
    if (!n)
        throw Error("sweep: " + flag + ": expected a whole number (0 .. 2^64 - 1; 0: no limit), got '" + text + "'");
    return n;
}

int cmd_sweep(const SweepArgs &a)
{
    SweepSpec spec = load_sweep(a.spec);
    std::vector<SweepPoint> points = expand_sweep(spec);
    auto [shard, shards] = parse_shard(a.shard);
    SweepLimits limits{sweep_limit("--max-cycles", a.max_cycles),
                       sweep_limit("--max-instructions", a.max_instructions)};
    if (a.list) {
        for (const SweepPoint &p : points) {
            if (p.index % shards != shard)
                continue;
            std::printf("%4zu  %s  %-12s %s %s", p.index, p.id.c_str(), p.kernel.c_str(), p.dtype.c_str(),
                        p.shape.c_str());
            for (const auto &kv : p.overrides)
                std::printf("  %s=%s", kv.first.c_str(), kv.second.c_str());
            std::printf("\n");
        }
        return 0;
    }
    if (a.out.empty())
        throw Error("sweep: -o DIR is required (or --list)");
    if (a.out == "-")  // as for any output that is not --json or --csv (check_output_paths)
        throw Error("-o -: a sweep writes a folder of points, not standard output (./- names a folder called -)");
    check_inputs_kept({{"-o", a.out + "/spec.json"}, {"-o", a.out + "/points.json"}},
                      {{"the spec", a.spec}, {"its base", spec.base}});
    SweepRunOptions o;
    o.out_dir = a.out;
    o.jobs = a.jobs;
    o.shard = shard;
    o.shards = shards;
    o.npusim_exe = self_exe();
    o.progress_tty = isatty(2);
    o.limits = limits;
    SweepResult r = run_sweep(spec, points, o);
    if (r.stopped_by)
        return 128 + r.stopped_by;
    return r.failed ? 1 : 0;
}

int cmd_merge(const std::string &dir, const std::string &csv, const std::string &jsonl)
{
    check_output_paths({{"-o", csv}, {"--jsonl", jsonl}}, sweep_folder_files(dir));
    MergeSummary s = merge_sweep(dir, csv, jsonl);
    std::fprintf(stderr, "merge: %zu points: %zu done, %zu failed, %zu missing -> %s\n", s.points, s.done, s.failed,
                 s.missing, csv.c_str());
    return s.failed || s.missing ? 1 : 0;
}

struct CompareArgs {
    std::vector<std::string> kernels;
    std::string dtype = "fp16", shape = "1,64,56,56", config;
    std::vector<std::string> sets;
    uint64_t seed = 1;
    unsigned jobs = 0;
    std::string json, csv, plot, against;
};

struct GraphArgs {
    std::string spec, config, json, trace_dir;
    std::vector<std::string> sets, variants;
    unsigned jobs = 0;
};

// npusim graph SPEC: every variant's chain of runs (graph.h, docs/fusion.md).
// The config: --config, else the spec's, else the default; --set on top.
int cmd_graph(const GraphArgs &a)
{
    const GraphSpec spec = load_graph(a.spec);
    const std::string config_file = a.config.empty() ? spec.config : a.config;
    const Config cfg = build_config(config_file, a.sets);
    std::vector<std::pair<std::string, std::string>> outputs = {{"--json", a.json}};
    struct stat st;
    if (!a.trace_dir.empty() && stat(a.trace_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))  // else run_graph says so
        for (const std::string &f : graph_trace_files(spec, a.variants, a.trace_dir))
            outputs.emplace_back("--trace-dir", f);
    std::vector<std::pair<std::string, std::string>> read = {{"the spec", a.spec}, {"the config", config_file}};
    for (const GraphVariant &v : spec.variants)
        for (const GraphStep &st : v.steps)
            if (std::filesystem::is_regular_file(st.kernel))
                read.emplace_back("a step's kernel", st.kernel);
    check_output_paths(outputs, read);
    const GraphResult g = run_graph(spec, cfg, a.variants, a.jobs, a.trace_dir);
    if (!a.json.empty())
        write_output(a.json, json_text(graph_json(g), 2) + "\n");
    if (a.json != "-")
        std::cout << graph_text(g);
    return g.passed() ? 0 : 1;
}

// The chart's file names its format, as matplotlib reads it: .png or .svg.
void check_plot_name(const std::string &plot)
{
    const size_t dot = plot.rfind('.');
    std::string ext = dot == std::string::npos || plot.find('/', dot) != std::string::npos ? "" : plot.substr(dot);
    for (char &c : ext)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    if (ext != ".png" && ext != ".svg")
        throw Error("--plot " + plot + ": give a .png or .svg file (the extension names the format)");
}

// What a helper program did: posix_spawn's error (0: it ran), its wait
// status, and what it wrote on stderr.
struct ChildRun {
    int spawn_error = 0, status = 0;
    std::string err;
};

// Runs args[0] with `input` on its stdin and its stderr collected; stdout
// is ours. Never dies of SIGPIPE when the child stops reading early.
ChildRun run_child(std::vector<std::string> args, const std::string &input)
{
    int in[2], err[2];
    if (pipe(in) != 0)
        return {errno, 0, ""};
    if (pipe(err) != 0) {
        const int e = errno;
        close(in[0]);
        close(in[1]);
        return {e, 0, ""};
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    for (int fd : {in[0], in[1], err[0], err[1]})
        posix_spawn_file_actions_addclose(&fa, fd);
    std::vector<char *> argv;
    for (std::string &arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    ChildRun r;
    pid_t pid = -1;
    r.spawn_error = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(err[1]);
    if (r.spawn_error == 0) {
        struct sigaction ignore = {}, old = {};
        ignore.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ignore, &old);
        for (size_t at = 0; at < input.size();) {
            const ssize_t n = write(in[1], input.data() + at, input.size() - at);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;  // it stopped reading: its stderr and status say why
            at += size_t(n);
        }
        sigaction(SIGPIPE, &old, nullptr);
    }
    close(in[1]);
    char buf[4096];
    for (ssize_t n; (n = read(err[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0)
            r.err.append(buf, size_t(n));
    }
    close(err[0]);
    if (r.spawn_error == 0)
        while (waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
        }
    return r;
}

// Draws `data` (compare_json) with tools/plot_stalls.py, which reads it on
// stdin and writes `plot` whole or not at all; its one-line error (the last
// line of whatever it wrote) becomes ours.
void draw_stalls(const nlohmann::json &data, const std::string &plot)
{
    const std::string python = "/usr/bin/python3", script = tools_dir() + "/plot_stalls.py";
    ChildRun r = run_child({python, script, "-", "-o", plot}, json_text(data) + "\n");
    if (r.spawn_error)
        throw Error("--plot " + plot + ": cannot run " + python + ": " + std::strerror(r.spawn_error) +
                    " (the chart needs /usr/bin/python3 with python3-matplotlib)");
    if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
        return;
    std::string line = r.err;
    while (!line.empty() && line.back() == '\n')
        line.pop_back();
    line.erase(0, line.rfind('\n') == std::string::npos ? 0 : line.rfind('\n') + 1);
    if (line.empty())
        line = "--plot " + plot + ": " + script + " failed (" +
               (WIFEXITED(r.status) ? "exit status " + std::to_string(WEXITSTATUS(r.status))
                                    : "signal " + std::to_string(WTERMSIG(r.status))) + ")";
    throw Error(line);
}

int cmd_compare(const CompareArgs &a)
{
    if (a.json == "-" && a.csv == "-")
        throw Error("--json - and --csv -: only one of them can write to stdout");
    if (!a.plot.empty())
        check_plot_name(a.plot);
    CompareOptions o;
    o.kernels = a.kernels;
    parse_dtype(a.dtype);  // the library's message, as `run` gives it
    o.run.dtype = a.dtype;
    o.run.shape = parse_shape(a.shape);
    o.run.seed = a.seed;
    o.run.against = a.against;
    o.run.config = build_config(a.config, a.sets);
    if (!a.plot.empty() && !o.run.config.timed)  // the chart is of cycles, which a functional run has not
        throw Error("--plot needs timing (sim.mode: timed)");
    o.jobs = a.jobs;
    std::vector<std::pair<std::string, std::string>> read = {{"the config", a.config}};
    for (const std::string &k : a.kernels)
        if (std::filesystem::is_regular_file(k))
            read.emplace_back("the kernel", k);
    check_output_paths({{"--json", a.json}, {"--csv", a.csv}, {"--plot", a.plot}}, read);
    std::vector<nlohmann::json> reports = run_compare(o);
    nlohmann::json data = compare_json(reports);
    if (!a.plot.empty())  // first: the one output that needs another program
        draw_stalls(data, a.plot);
    if (a.json != "-" && a.csv != "-")
        std::cout << compare_table(reports);
    if (!a.json.empty())
        write_output(a.json, json_text(data, 2) + "\n");
    if (!a.csv.empty())
        write_output(a.csv, compare_csv(reports));
    bool all_passed = true;
    for (const auto &r : reports)
        all_passed &= r.value("passed", false);
    return all_passed ? 0 : 1;
}

}  // namespace

std::string self_exe()
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        throw Error("cannot find the npusim binary (/proc/self/exe)");
    buf[n] = '\0';
    return buf;
}

std::string tools_dir()
{
    if (const char *env = std::getenv("NPUSIM_TOOLS"))
        return env;
    return NPUSIM_TOOLS_DIR;
}

std::vector<Command> add_study_commands(CLI::App &app)
{
    std::vector<Command> cmds;
    auto sw = std::make_shared<SweepArgs>();
    auto *s = app.add_subcommand("sweep", "Run every point of a sweep spec (resumable, shardable)");
    s->add_option("spec", sw->spec, "Sweep spec YAML (see configs/sweeps/)")->required();
    s->add_option("-o,--output", sw->out, "Output folder: one subfolder per point");
    s->add_option("-j,--jobs", sw->jobs, "Points run in parallel (default 0: one per core)");
    s->add_option("--shard", sw->shard, "Run only shard i of n (points with index % n == i), as i/n");
    s->add_flag("--list", sw->list, "List the points (index, id, kernel, dtype, shape, overrides) and exit");
    s->add_option("--max-cycles", sw->max_cycles,
                  "Stop each point after N cycles, failing it (0: no limit; overrides the spec's limits.max_cycles; "
                  "default: no limit)")
        ->type_name("N");
    s->add_option("--max-instructions", sw->max_instructions,
                  "Stop each point after N instructions per core, failing it (0: no limit; overrides the spec's "
                  "limits.max_instructions; default: 1000 x (vectors of all tensors + 64))")
        ->type_name("N");
    cmds.push_back({s, [sw] { return cmd_sweep(*sw); }});

    auto dir = std::make_shared<std::string>();
    auto csv = std::make_shared<std::string>();
    auto jsonl = std::make_shared<std::string>();
    auto *m = app.add_subcommand("merge", "Merge a sweep folder into one CSV row per point");
    m->add_option("dir", *dir, "Sweep output folder")->required();
    m->add_option("-o,--output", *csv, "CSV file (flattened dotted keys, e.g. l2.hit_rate)")->required();
    m->add_option("--jsonl", *jsonl, "Also write one JSON object per point");
    cmds.push_back({m, [dir, csv, jsonl] { return cmd_merge(*dir, *csv, *jsonl); }});

    auto ca = std::make_shared<CompareArgs>();
    auto *c = app.add_subcommand("compare", "Run kernels on the same input and config, side by side");
    c->add_option("kernels", ca->kernels, "Kernels to compare")->required();
    c->add_option("--dtype", ca->dtype, "fp16 or fp32 (default fp16)");
    c->add_option("--shape", ca->shape, "NCHW shape (default 1,64,56,56)");
    c->add_option("--config", ca->config, "Hardware config: a shipped config by name (default, edge, tiny, datacenter) or a YAML file (named with its .yaml or a '/')");
    c->add_option("--set", ca->sets, "Override a config key, KEY=VALUE (repeatable)");
    c->add_option("--seed", ca->seed, "Seed of the random inputs (the same for every kernel)")->check(kUint64);
    c->add_option("-j,--jobs", ca->jobs, "Kernels run at once, in threads (default: the number of cores; the table is the same)");
    c->add_option("--json", ca->json, "Write the table as JSON (- for stdout, instead of the table)");
    c->add_option("--csv", ca->csv, "Write the table as CSV (- for stdout, instead of the table)");
    c->add_option("--against", ca->against, "Also measure every kernel's outputs against reference NAME (e.g. gelu_erf)");
    c->add_option("--plot", ca->plot, "Draw the stall breakdown, one stacked bar per kernel (.png or .svg)");
    cmds.push_back({c, [ca] { return cmd_compare(*ca); }});

    auto ga = std::make_shared<GraphArgs>();
    auto *g = app.add_subcommand("graph", "Run chains of operators from a YAML spec, each variant side by side "
                                          "(fused and unfused; docs/fusion.md)");
    g->add_option("spec", ga->spec, "Graph spec (YAML), e.g. configs/graphs/bert_ffn.yaml")->required();
    g->add_option("--config", ga->config, "Hardware config, a shipped config by name (default, edge, tiny, datacenter) or a YAML file (named with its .yaml or a '/') (default: the spec's config, else the default)");
    g->add_option("--set", ga->sets, "Override a config key, KEY=VALUE (repeatable)");
    g->add_option("--variant", ga->variants, "Run only this variant (repeatable)");
    g->add_option("-j,--jobs", ga->jobs, "Variants run at once, in threads (default 0: one per core; the figures are the same)");
    g->add_option("--json", ga->json, "Write the result as JSON (- for stdout, instead of the table)");
    g->add_option("--trace-dir", ga->trace_dir,
                  "Write Perfetto traces into this folder, which must exist: each variant's steps end to end as VARIANT.json (a "
                  "\"graph\" track of the steps above the cores' and the memory's), and each step's own as "
                  "VARIANT.I.KERNEL.json (cube pipes and vector units on tracks side by side)");
    cmds.push_back({g, [ga] { return cmd_graph(*ga); }});
    return cmds;
}

}  // namespace npusim
