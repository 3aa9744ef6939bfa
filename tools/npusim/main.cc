// The npusim command line: run, asm, dis, isa, kernels, config, cache.
// Exit status: 0 success, 1 the simulated kernel failed (trap or accuracy),
// 2 bad input (the one-line error says what and where).
// A timed `run` goes through the C engine, unless it asks for the SystemC
// engine (--engine systemc, or --vcd, which only it writes): the two give
// the same results to the bit. The binary does not link libsystemc, whose
// start-up would cost every process a quarter of a run; it opens the engine
// module that does (sim/systemc/engine_plugin.h) for the runs that ask.
// Built without SystemC (Meson's -Dsystemc=disabled), there is no such
// module: --engine systemc and --vcd are refused.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <unistd.h>

#include "atomic_file.h"
#include "commands.h"
#include "config.h"
#include "din_replay.h"
#include "error.h"
#include "json_text.h"
#include "manifest.h"
#include "npusim/npusim.h"
#if NPUSIM_HAVE_SYSTEMC
#include <dlfcn.h>

#include "engine_plugin.h"
#endif
#include "report.h"
#include "run_limits.h"
#include "runner.h"
#include "tiling.h"
#include "trace.h"

using namespace npusim;

namespace {

// Schedules kept across runs (npu_asm_cache_set_file), as ccache keeps
// compilations: NPUSIM_SCHEDULE_CACHE names the file ("off" in any case, or
// empty: none), else $XDG_CACHE_HOME/npusim/schedules or
// ~/.cache/npusim/schedules (absolute XDG_CACHE_HOME and HOME only, as the
// XDG spec says). Its folder is made when the first schedule is kept, not
// by `--help`. Only assembly time depends on it (docs/scheduling.md).
void keep_schedules()
{
    namespace fs = std::filesystem;
    fs::path file;
    if (const char *env = std::getenv("NPUSIM_SCHEDULE_CACHE")) {
        std::string off = env;
        std::transform(off.begin(), off.end(), off.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (off.empty() || off == "off")
            return;
        file = env;
    } else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') {
        file = fs::path(xdg) / "npusim" / "schedules";
    } else if (const char *home = std::getenv("HOME"); home && *home == '/') {
        file = fs::path(home) / ".cache" / "npusim" / "schedules";
    } else {
        return;
    }
    npu_asm_cache_set_file(file.c_str());
}

std::pair<std::string, std::string> split_assignment(const std::string &flag, const std::string &s)
{
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
        throw Error(flag + " " + s + ": expected NAME=VALUE");
    return {s.substr(0, eq), s.substr(eq + 1)};
}

// Trace outputs of `run`: Perfetto JSON, Konata log, VCD, and their window.
struct TraceFlags {
    std::string perfetto, konata, vcd;
    TraceWindow window;
    uint64_t max_bytes = kDefaultTraceMaxBytes;
    bool start_given = false, end_given = false, max_bytes_given = false;
    bool any() const { return !perfetto.empty() || !konata.empty() || !vcd.empty(); }
};

// The window and the cap bound traces the run writes: given without one, or
// holding no cycle, they are an error naming what the user gave.
void check_trace_flags(const TraceFlags &tf)
{
    const std::string start = std::to_string(tf.window.start), end = std::to_string(tf.window.end);
    if (tf.start_given && !tf.any())
        throw Error("--trace-start " + start + ": there is no trace to start (give --trace, --konata or --vcd)");
    if (tf.end_given && !tf.any())
        throw Error("--trace-end " + end + ": there is no trace to end (give --trace, --konata or --vcd)");
    if (tf.max_bytes_given && tf.perfetto.empty() && tf.konata.empty())
        throw Error("--trace-max-bytes " + std::to_string(tf.max_bytes) +
                    ": it caps --trace and --konata files, and neither is given (a VCD has no cap)");
    if (tf.window.end > tf.window.start)
        return;
    if (!tf.end_given)  // only --trace-start, at the largest cycle: no cycle comes after it
        throw Error("--trace-start " + start + ": the window would hold no cycle (--trace-start is at most " +
                    std::to_string(UINT64_MAX - 1) + ")");
    throw Error("--trace-end " + end + " must be after --trace-start " + start +
                (tf.start_given ? "" : " (the default: no --trace-start)"));
}

// A folder of this process's own under $TMPDIR (else /tmp), removed (with
// what it holds) when the object goes: where an output that is not renamed
// into place is made before it is copied there.
struct PrivateFolder {
    std::string path;
    explicit PrivateFolder(const char *what)
    {
        const char *tmpdir = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/" + what + "-XXXXXX";
        if (!mkdtemp(&tmpl[0]))
            throw Error(tmpl + ": cannot make a temporary folder: " + std::strerror(errno));
        path = tmpl;
    }
    ~PrivateFolder()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    PrivateFolder(const PrivateFolder &) = delete;
    PrivateFolder &operator=(const PrivateFolder &) = delete;
};

#if NPUSIM_HAVE_SYSTEMC
// SystemC writes the VCD under a name of its own and renames it over the
// path it is given (sim/systemc/engine.cc): a plain file's path (a link's
// target, so the link stays). An output that is not renamed into place (a
// device, a FIFO, /dev/stdout: atomic_file.h's output_place) gets the VCD
// from a private folder once the run is complete. The renamed one is written
// as temp_path(path) + ".vcd", so a later run removes a killed one's.
struct VcdPlace {
    std::string given, engine_path, engine_temp;
    std::unique_ptr<PrivateFolder> dir;
    explicit VcdPlace(const std::string &path) : given(path)
    {
        if (given.empty())
            return;
        const OutputPlace place = output_place(given);
        if (place.how == OutputPlace::How::rename) {
            engine_path = place.path;
            engine_temp = temp_path(place.path);
            return;
        }
        dir = std::make_unique<PrivateFolder>("npusim-vcd");
        engine_path = dir->path + "/run.vcd";
    }
    void deliver() const
    {
        if (dir)
            copy_to_output(engine_path, given);
        else if (!engine_path.empty())
            remove_stale_temps(engine_path, ".vcd");
    }
};
#endif

#if NPUSIM_HAVE_SYSTEMC
// The SystemC engine from npusim-systemc-engine.so, opened (through this
// binary's run path) the first time a run asks for it. `flag` names what
// asked, for the one line a missing or foreign module gets.
ScEngineFn systemc_engine_from_module(const ScOptions &sc, const std::string &flag)
{
    static NpusimSystemcEngineEntry entry = nullptr;
    if (!entry) {
        prefault_heap(kSystemcLoadBytes);  // for libsystemc's sc_temp_heap (run_limits.h)
        void *module = dlopen(NPUSIM_SYSTEMC_ENGINE_MODULE, RTLD_NOW | RTLD_LOCAL);
        if (!module)
            throw Error(flag + ": the SystemC engine cannot be loaded: " + dlerror());
        entry = reinterpret_cast<NpusimSystemcEngineEntry>(dlsym(module, NPUSIM_SYSTEMC_ENGINE_ENTRY));
        if (!entry)
            throw Error(flag + ": the SystemC engine cannot be loaded: " + dlerror());
    }
    ScEngineFn engine;
    if (entry(sizeof(ScOptions), &sc, &engine) != 0)
        throw Error(flag + ": the SystemC engine cannot be loaded: " NPUSIM_SYSTEMC_ENGINE_MODULE
                           " is from another build of npusim");
    return engine;
}
#endif

// shape: --shape's text, or nullptr without one (the first input's, else the default).
// engine: --engine's value, or "" without one (the C engine, the SystemC one for a VCD).
int cmd_run(const RunOptions &base, const std::string &config_file, const std::vector<std::string> &sets,
            const std::string *shape, const std::vector<std::string> &inputs, const std::vector<std::string> &outputs,
            const std::vector<std::string> &params, const std::string &json_path, bool quiet, const TraceFlags &tf,
            const std::string &engine)
{
    RunOptions opts = base;
    opts.config = build_config(config_file, sets);
    if (shape)
        opts.shape = parse_shape(*shape);
    for (const std::string &s : inputs) {
        auto kv = split_assignment("--input", s);
        if (!opts.inputs.insert(kv).second)
            throw Error("--input " + s + ": input '" + kv.first + "' is named twice");
    }
    if (base.measure_tiles && base.tile_max)
        throw Error("--tile-max " + std::to_string(base.tile_max) +
                    " and --tiling measure: give one (--tile-max fixes the tiles, measure picks them)");
    std::vector<std::pair<std::string, std::string>> files = {
        {"--json", json_path}, {"--trace", tf.perfetto}, {"--konata", tf.konata}, {"--vcd", tf.vcd},
        {"--mem-trace", base.mem_trace}};
    for (const std::string &s : outputs) {
        auto kv = split_assignment("--output", s);
        if (!opts.outputs.insert(kv).second)
            throw Error("--output " + s + ": output '" + kv.first + "' is named twice");
        files.emplace_back("--output " + kv.first, kv.second);
    }
    // what the run reads: an output may not replace it
    std::vector<std::pair<std::string, std::string>> read = {{"the config", config_file}};
    if (std::filesystem::is_regular_file(opts.kernel))
        read.emplace_back("the kernel", opts.kernel);
    for (const auto &[name, path] : opts.inputs)
        read.emplace_back("--input " + name, path);
    check_output_paths(files, read);
    for (const std::string &s : params) {
        auto kv = split_assignment("--param", s);
        // strtod would skip leading white space (split_assignment refuses "")
        char *end = nullptr;
        double v = std::strtod(kv.second.c_str(), &end);
        if (std::isspace(static_cast<unsigned char>(kv.second[0])) || *end != '\0')
            throw Error("--param " + s + ": '" + kv.second + "' is not a number");
        const std::string problem = parameter_problem(v);  // 1e400, 1e39, nan, 1e-50
        if (!problem.empty())
            throw Error("--param " + s + ": '" + kv.second + "'" + problem);
        // Rounded once, to the binary32 the kernel takes (strtof), not
        // through binary64 first.
        if (!opts.params.emplace(kv.first, double(std::strtof(kv.second.c_str(), nullptr))).second)
            throw Error("--param " + s + ": parameter '" + kv.first + "' is given twice");
    }
    check_trace_flags(tf);
    if (tf.any() && !opts.config.timed)
        throw Error("--trace, --konata and --vcd need timing (sim.mode: timed)");
    if (!engine.empty() && !opts.config.timed)
        throw Error("--engine " + engine + ": a functional run (sim.mode: functional) has no timing engine to choose");
    if (engine == "c" && !tf.vcd.empty())
        throw Error("--vcd " + tf.vcd + ": the VCD is the SystemC engine's, and --engine c was given");
#if !NPUSIM_HAVE_SYSTEMC
    if (engine == "systemc")
        throw Error("--engine systemc: this npusim was built without SystemC (meson -Dsystemc=disabled)");
#endif
    TraceSet traces;
    if (!tf.perfetto.empty())
        traces.add(std::make_unique<PerfettoTrace>(tf.perfetto, tf.window, tf.max_bytes));
    if (!tf.konata.empty())
        traces.add(std::make_unique<KonataTrace>(tf.konata, tf.window, tf.max_bytes));
    if (!traces.empty())
        opts.attach = [&traces](unsigned core, npu_timed_core *tc) { traces.attach(core, tc); };
#if NPUSIM_HAVE_SYSTEMC
    VcdPlace vcd(tf.vcd);
    if (engine == "systemc" || !tf.vcd.empty()) {
        ScOptions sc;
        sc.vcd_path = vcd.engine_path;
        sc.vcd_temp = vcd.engine_temp;
        sc.trace_start = tf.window.start;
        sc.trace_end = tf.window.end;
        if (!traces.empty())
            sc.forward = [&traces](unsigned core, const npu_issue_event &ev) { traces.issue(core, ev); };
        opts.engine = systemc_engine_from_module(sc, engine == "systemc" ? "--engine systemc" : "--vcd " + tf.vcd);
    }
#else
    if (!tf.vcd.empty())
        throw Error("--vcd " + tf.vcd + ": this npusim was built without SystemC (meson -Dsystemc=disabled)");
#endif
    // One run, then the process exits: its heap is prefaulted for the run (run_limits.h).
    opts.admitted = prefault_heap;
    RunResult r = run_kernel(opts);
#if NPUSIM_HAVE_SYSTEMC
    vcd.deliver();
#endif
    for (unsigned k = 0; k < r.core_stats.size(); k++)
        traces.finish(k, r.core_stats[k].cycles);
    for (const std::string &note : traces.close())
        std::cerr << "npusim: " << note << "\n";
    for (const auto &kv : opts.outputs)
        write_npy(kv.second, r.tensors.at(kv.first));
    if (!json_path.empty())
        write_output(json_path, json_text(report_json(r), 2) + "\n");
    if (!quiet && json_path != "-")
        std::cout << report_text(r);
    else
        for (const TrapReport &t : r.traps)
            std::cerr << trap_text(t) << "\n";
    return r.passed() ? 0 : 1;
}

// Replays a Dinero din trace through the config's L2 and DRAM (din_replay.h).
int cmd_cache(const std::string &trace, const std::string &config_file, const std::vector<std::string> &sets,
              const std::string &json_path)
{
    const Config cfg = build_config(config_file, sets);
    check_output_paths({{"--json", json_path}}, {{"the trace", trace}, {"the config", config_file}});
    const DinReplay r = replay_din(cfg, trace, read_file(trace));
    if (!json_path.empty())
        write_output(json_path, json_text(din_replay_json(r), 2) + "\n");
    if (json_path != "-")
        std::cout << din_replay_text(r);
    return 0;
}

struct AsmFlags {
    std::string in, out, config_file, schedule = "on";
    std::vector<std::string> incdirs, defs, sets;
    bool table = false;
};

int cmd_asm(const AsmFlags &f)
{
    std::vector<std::pair<std::string, std::string>> kv;
    for (const std::string &d : f.defs)
        kv.push_back(split_assignment("-D", d));
    std::vector<npu_asm_define> defines;
    for (const auto &p : kv)
        defines.push_back({p.first.c_str(), p.second.c_str()});
    // `.pipeline` loops are scheduled for the config, as `npusim run` does.
    const npu_asm_machine machine = asm_machine(build_config(f.config_file, f.sets));
    check_output_paths({{"-o", f.out}}, {{"the input", f.in}});
    npu_program p;
    npu_program_init(&p);
    npu_diag d{};
    try {
        assemble_program(f.in, defines, f.incdirs, machine, f.schedule == "on", p);
        // The files it included are known now, still before anything is written.
        std::vector<std::pair<std::string, std::string>> sources;
        for (size_t i = 0; i < p.nfiles; i++)
            sources.emplace_back(i ? "an included file" : "the input", p.files[i]);
        check_output_paths({{"-o", f.out}}, sources);
    } catch (...) {
        npu_program_free(&p);
        throw;
    }
    if (f.table)
        std::cout << format_schedules(scheduled_loops(p, {}), true);
    int rc = NPU_OK;
    if (!f.out.empty()) {
        // Written where every output goes (atomic_file.h's output_place: a
        // device or FIFO in place, /dev/stdout through its descriptor, a
        // link's target): the library writes a plain file, copied there.
        const OutputPlace place = output_place(f.out);
        if (place.how == OutputPlace::How::rename) {
            rc = npu_program_write_binary(&p, place.path.c_str(), &d);
        } else {
            const PrivateFolder tmp("npusim-asm");
            const std::string file = tmp.path + "/program.bin";
            rc = npu_program_write_binary(&p, file.c_str(), &d);
            if (rc == NPU_OK)
                copy_to_output(file, f.out);
            std::remove(file.c_str());
        }
    }
    size_t count = p.count;
    npu_program_free(&p);
    if (rc != NPU_OK) {
        char line[600];
        npu_diag_format(&d, line, sizeof line);
        throw Error(line);
    }
    if (!f.out.empty())
        std::cerr << f.out << ": " << count << " instructions\n";
    return 0;
}

// Does the instruction's row take a label (a pc-relative target)?
bool has_branch_target(const npu_insn &in)
{
    const npu_format_desc &f = npu_format_table[npu_insn_table[in.op].format];
    return std::find(f.operands, f.operands + f.num_operands, NPU_OPK_REL) != f.operands + f.num_operands;
}

int cmd_dis(const std::string &in)
{
    std::string bytes = read_file(in);
    npu_program p;
    npu_program_init(&p);
    npu_diag d{};
    if (npu_program_read_binary(&p, bytes.data(), bytes.size(), in.c_str(), &d) != NPU_OK) {
        char line[600];
        npu_diag_format(&d, line, sizeof line);
        throw Error(line);
    }
    // Every line assembles back to the same bytes: a word that does not
    // decode, and a branch whose target is outside the program (which the
    // assembler refuses), print as the .word they are.
    for (size_t i = 0; i < p.count; i++) {
        char buf[320];
        const npu_insn &in = p.insns[i];
        const int64_t target = (int64_t)i + in.imm;
        if (in.op == NPU_OP_INVALID) {
            std::snprintf(buf, sizeof buf, ".word 0x%016" PRIx64 " ; does not decode", p.words[i]);
        } else if (has_branch_target(in) && (target < 0 || (uint64_t)target >= p.count)) {
            char insn[160];
            npu_disasm(&in, i, insn, sizeof insn);
            std::snprintf(buf, sizeof buf, ".word 0x%016" PRIx64 " ; %s: outside the program (0..%zu)", p.words[i],
                          insn, p.count - 1);
        } else {
            npu_disasm(&in, i, buf, sizeof buf);
        }
        std::printf("%6zu:  %016" PRIx64 "  %s\n", i, p.words[i], buf);
    }
    npu_program_free(&p);
    return 0;
}

std::string operand_syntax(unsigned fmt)
{
    const npu_format_desc &f = npu_format_table[fmt];
    std::string s;
    for (unsigned i = 0; i < f.num_operands; i++)
        s += (i ? ", " : "") + std::string(npu_operand_syntax(npu_operand_kind(f.operands[i])));
    return s;
}

// The operands a row reads or writes (`access` bit NPU_ACC_R or NPU_ACC_W),
// by their syntax, from operands.def; a masked merge adds the destination.
nlohmann::json operands_with(const npu_insn_desc &d, unsigned access)
{
    const npu_format_desc &f = npu_format_table[d.format];
    nlohmann::json out = nlohmann::json::array();
    for (unsigned i = 0; i < f.num_operands; i++) {
        const npu_operand_desc &o = npu_operand_table[f.operands[i]];
        if (o.access & access)
            out.push_back(o.file == NPU_RF_TAG ? std::string("dma tag") : std::string(o.syntax));
    }
    return out;
}

const char *control_flow_name(unsigned cf)
{
    static const char *const names[] = {"none", "branch", "jump", "indirect", "end"};
    return cf < sizeof names / sizeof *names ? names[cf] : "?";
}

std::string dtypes_text(unsigned dts)
{
    std::string s;
    for (unsigned d = 0; d < 4; d++)
        if (dts & (1u << d))
            s += (s.empty() ? "" : ",") + std::string(npu_dtype_name(npu_dtype(d)));
    return s;
}

int cmd_isa(bool json)
{
    nlohmann::json arr = nlohmann::json::array();
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        std::string ops = operand_syntax(d.format);
        if (d.flags & NPU_F_MASK)
            ops += ops.empty() ? "[pmask]" : " [, pmask]";
        if (json) {
            arr.push_back({{"mnemonic", d.mnemonic},
                           {"opcode", d.opcode},
                           {"operands", ops},
                           {"dtypes", dtypes_text(d.dtypes)},
                           {"maskable", bool(d.flags & NPU_F_MASK)},
                           {"mask_zeroes", bool(d.flags & NPU_F_MASK_ZERO)},
                           {"reads", operands_with(d, NPU_ACC_R)},
                           {"writes", operands_with(d, NPU_ACC_W)},
                           {"control_flow", control_flow_name(d.cf)},
                           {"class", npu_class_name(npu_class(d.cls))},
                           {"unit", npu_unit_name(npu_unit(d.unit))},
                           {"category", npu_category_name(npu_category(d.category))},
                           {"description", d.description}});
        } else {
            std::string mn = d.mnemonic;
            if (d.dtypes)
                mn += ".{" + dtypes_text(d.dtypes) + "}";
            std::printf("%-28s %-34s %-7s %-7s %s\n", mn.c_str(), ops.c_str(), npu_class_name(npu_class(d.cls)), npu_unit_name(npu_unit(d.unit)),
                        d.description);
        }
    }
    if (json) {
        nlohmann::json sprs = nlohmann::json::array();
        for (unsigned i = 0; i < NPU_NUM_SPRS; i++)
            sprs.push_back({{"name", npu_spr_table[i].name}, {"description", npu_spr_table[i].description}});
        std::cout << json_text(nlohmann::json({{"instructions", arr}, {"special_registers", sprs}}), 2) << "\n";
    }
    return 0;
}

int cmd_kernels(bool json)
{
    nlohmann::json arr = nlohmann::json::array();
    for (const std::string &path : list_kernels()) {
        Manifest m = load_manifest(path);
        nlohmann::json params = nlohmann::json::array();
        nlohmann::json per_channel = nlohmann::json::array();
        std::string ptxt;
        for (const TensorDecl &t : m.tensors)  // per-channel parameter tensors: NAME[C]
            if (t.per_channel) {
                per_channel.push_back({{"name", t.name}, {"range", {t.range_lo, t.range_hi}}});
                ptxt += (ptxt.empty() ? "" : " ") + t.name + "[C]";
            }
        for (const ParamDecl &p : m.params) {
            params.push_back({{"name", p.name},
                              {"default", p.default_value},
                              {"divisor", p.divisor},
                              {"description", p.description}});
            char b[64];
            std::snprintf(b, sizeof b, "%s%s=%g", ptxt.empty() ? "" : " ", p.name.c_str(), p.default_value);
            ptxt += b;
        }
        nlohmann::json tolerances = nlohmann::json::object();  // the manifest's @tolerance lines
        std::string btxt;
        for (const auto &kv : m.tolerances) {
            const npu_tolerance &t = kv.second.tol;
            const std::string scale = m.abs_scale(kv.first);
            tolerances[kv.first] = {{"ulp", t.max_ulp},
                                    {"abs", t.max_abs},
                                    {"abs_scale", scale.empty() ? nlohmann::json(nullptr) : nlohmann::json(scale)},
                                    {"zero_sign", t.any_zero_sign ? "any" : "exact"}};
            char b[96];
            std::snprintf(b, sizeof b, "%s%s<=%gulp", btxt.empty() ? "" : " ", kv.first.c_str(), t.max_ulp);
            btxt += b;
        }
        std::string dts;
        for (const std::string &d : m.dtypes)
            dts += (dts.empty() ? "" : ",") + d;
        if (json)
            arr.push_back({{"name", m.name}, {"summary", m.summary}, {"path", m.path}, {"dtypes", m.dtypes},
                           {"op", op_name(m.op)}, {"split", split_name(m.split)}, {"params", params},
                           {"per_channel", per_channel},
                           {"reference", m.reference}, {"tolerances", tolerances}});
        else
            std::printf("%-14s %-10s %-7s %-22s %-26s %s\n", m.name.c_str(), dts.c_str(), split_name(m.split),
                        ptxt.empty() ? "-" : ptxt.c_str(), btxt.c_str(), m.summary.c_str());
    }
    if (json)
        std::cout << json_text(arr, 2) << "\n";
    return 0;
}

// CLI11 says only "A subcommand is required" of a word that names no
// subcommand, of an unknown option before one and of nothing at all: say
// which it was, with the choices. Walks argv down the subcommands named, up
// to the first one that takes no subcommand or an option of the one reached.
void check_subcommand_names(CLI::App &app, int argc, char **argv)
{
    CLI::App *at = &app;
    std::string path;                // "config: " inside `npusim config`
    std::string command = "npusim";  // "npusim config"
    for (int i = 1;; i++) {
        if (at->get_require_subcommand_min() == 0)
            return;
        std::string names;
        CLI::App *next = nullptr;
        for (CLI::App *sub : at->get_subcommands([](CLI::App *) { return true; })) {
            if (i < argc && sub->get_name() == argv[i])
                next = sub;
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        if (i == argc)
            throw Error(path + "a subcommand is required (" + names + ")");
        const std::string word = argv[i];
        if (word[0] == '-') {
            const std::string name = word.substr(0, word.find('='));  // --opt=value
            std::string options;
            for (const CLI::Option *o : at->get_options()) {
                if (o->check_name(name))
                    return;  // --help, --version: CLI11's
                options += (options.empty() ? "" : " or ") + o->get_name();
            }
            throw Error(path + "unknown option '" + word + "' (" + command + " takes " + options +
                        ", then a subcommand and its options; see " + command + " --help)");
        }
        if (!next)
            throw Error(path + "unknown subcommand '" + word + "' (" + names + ")");
        at = next;
        path += at->get_name() + ": ";
        command += " " + at->get_name();
    }
}

// An option given an empty value (`--json ""`) is an error, never the same
// as not giving it: a path, a name or a number left empty by a script's
// unset variable would otherwise be dropped without a word. A dtype and a
// shape keep their own messages (the dtypes; the dimensions expected).
void check_no_empty_values(const CLI::App &app, const std::string &path)
{
    for (const CLI::Option *o : app.get_options()) {
        if (o->count() == 0 || o->get_name() == "--dtype" || o->get_name() == "--shape")
            continue;
        for (const std::string &v : o->results())
            if (v.empty())
                throw Error(path + o->get_name() + ": empty value (give one, or leave the option out)");
    }
    for (const CLI::App *sub : app.get_subcommands())
        check_no_empty_values(*sub, path);
}

}  // namespace

const CLI::Validator npusim::kUint64([](std::string &text) { return whole_number_problem(text); }, "UINT64");

namespace {

int cli(int argc, char **argv);

// An error is one line: a line break or other control character in what it
// quotes (a path named with a newline) is written as an escape.
std::string one_line(const std::string &message)
{
    std::string out;
    for (const char ch : message) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else if ((c < 0x20 && c != '\t') || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else
            out += ch;
    }
    return out;
}

bool stdout_closed = false;

// A standard descriptor closed at start (`>&-`) would be taken by the next
// file opened, and the report written into it: each is held by /dev/null
// opened the other way round, so that using it fails (EBADF).
void hold_closed_standard_descriptors()
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            const int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (got >= 0 && got != fd) {
                dup2(got, fd);
                close(got);
            }
            stdout_closed |= fd == STDOUT_FILENO;
        }
}

// What the command printed must have reached stdout: a closed stdout (`>&-`)
// or a full disk behind `> file` lost the report or cut the JSON while the
// exit status said it was written.
int stdout_checked(int status)
{
    std::cout.flush();
    errno = 0;
    if (!std::cout.bad() && std::fflush(stdout) == 0 && !std::ferror(stdout))
        return status;
    // The write that failed may be long past, its errno gone.
    const int e = stdout_closed ? EBADF : errno;
    std::cerr << "npusim: standard output: write failed" << (e ? std::string(": ") + std::strerror(e) : "") << "\n";
    return status == 0 || status == 1 ? 2 : status;
}

}  // namespace

int main(int argc, char **argv)
{
    hold_closed_standard_descriptors();
    return stdout_checked(cli(argc, argv));
}

namespace {

int cli(int argc, char **argv)
{
    keep_schedules();
    CLI::App app{"npusim: a cycle-level NPU vector-core simulator with an activation ISA"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "npusim 0.1.0");
    app.footer("Environment: NPUSIM_KERNELS=DIR finds kernels by name in DIR; NPUSIM_SCHEDULE_CACHE=FILE keeps the\n"
               "schedules of .pipeline loops across runs in FILE (default $XDG_CACHE_HOME/npusim/schedules, else\n"
               "~/.cache/npusim/schedules; off: none; they change no result, only assembly time); NPUSIM_TOOLS=DIR\n"
               "finds plot_stalls.py for compare --plot; TMPDIR holds outputs made before they are copied to a\n"
               "device, FIFO or /dev/stdout.");

    RunOptions ropts;
    std::string config_file, shape, json_path;
    std::vector<std::string> sets, inputs, outputs, params;
    bool quiet = false;
    auto *run = app.add_subcommand("run", "Run a kernel on a tensor and check it against its reference");
    run->add_option("kernel", ropts.kernel, "Kernel name from kernels/ or a path to a .s file")->required();
    // --dtype's, --shape's and --tiling's text goes to the library, whose messages Python's callers read too.
    auto *dtype_opt = run->add_option("--dtype", ropts.dtype,
                                      "Element type: fp16 or fp32 (default: the first --input .npy file's, else fp32)");
    auto *shape_opt = run->add_option(
        "--shape", shape,
        "Logical NCHW shape, decimal digits between commas, e.g. 1,64,56,56, or fewer dimensions with leading 1s "
        "(default: the first --input .npy file's, else 1,16,8,8; every --input must have it); matmul: M,K,N");
    run->add_option("--config", config_file, "Hardware config: a shipped config by name (default, edge, tiny, datacenter) or a YAML file (named with its .yaml or a '/'); without it, configs/default.yaml's values");
    run->add_option("--set", sets, "Override a config key, KEY=VALUE (repeatable)");
    run->add_option("--seed", ropts.seed, "Seed of the random inputs")->check(kUint64);
    run->add_option("--input", inputs,
                    "Read input NAME from a .npy file, NAME=FILE.npy (repeatable; a per_channel input is shape [C])");
    run->add_option("--output", outputs, "Write tensor NAME to a .npy file, NAME=FILE.npy (repeatable)");
    run->add_option("--param", params, "Set a kernel parameter, NAME=VALUE (repeatable)");
    run->add_option("--json", json_path, "Write the JSON report to FILE, or - for stdout");
    run->add_option("--max-cycles", ropts.max_cycles, "Stop each core at its first instruction at or past cycle N (0: no limit)")->check(kUint64);
    run->add_option("--max-instructions", ropts.max_instructions,
                    "Stop a run after N instructions per core (0: no limit; default: 1000 x (vectors of all tensors + 64))")
        ->check(kUint64);
    std::string schedule = "on";
    run->add_option("--schedule", schedule,
                    "on: modulo-schedule the kernel's .pipeline loops for the config; off: run them in written order")
        ->check(CLI::IsMember({"on", "off"}));
    run->add_option("--tile-max", ropts.tile_max,
                    "Cap the kernel's tiles at BYTES (a multiple of 256, at least two vectors for a kernel with a "
                    "per-channel input, one otherwise; default 0: chosen for the config and shape, "
                    "see the report's Tiles; not with --tiling measure)")
        ->check(kUint64);
    std::string tiling = "rule";
    run->add_option("--tiling", tiling,
                    "rule: pick the tiles from the schedule and the config, checked by simulation where the rule is "
                    "least sure (several cores: against 16, 8, 4 and 2 KiB; one core, where it takes the L2 MSHRs' "
                    "reach: against the tiles without it); measure: simulate the rule's pick and 16, 8, 4 and 2 KiB, "
                    "keep the fastest (several runs)");
    run->add_flag("-q,--quiet", quiet, "Print no text report");
    TraceFlags trace_flags;
    run->add_option("--trace", trace_flags.perfetto,
                    "Write a Chrome/Perfetto trace (JSON; ui.perfetto.dev): a track per slot and unit, 1 cycle = 1 us");
    run->add_option("--konata", trace_flags.konata, "Write a Konata pipeline log (Kanata 0004) of core 0");
    run->add_option("--vcd", trace_flags.vcd, "Write a VCD (GTKWave) of issue count, stall reason and busy units per core");
    auto *trace_start_opt =
        run->add_option("--trace-start", trace_flags.window.start,
                        "First cycle traced (--trace, --konata, --vcd, which cut what crosses the window's edges; "
                        "an error without one of them)")
            ->check(kUint64);
    auto *trace_end_opt =
        run->add_option("--trace-end", trace_flags.window.end,
                        "Cycle the traces stop at (exclusive; default: the end; an error without a trace)")
            ->check(kUint64);
    auto *trace_max_bytes_opt =
        run->add_option("--trace-max-bytes", trace_flags.max_bytes,
                        "Stop a --trace or --konata file cleanly at this size, still a complete file (default 1 GiB; "
                        "at least the smallest complete file: 85 bytes for --trace, 12 for --konata; the VCD has no "
                        "cap, so an error without --trace or --konata)")
            ->check(kUint64);
    run->add_option("--warm-l2", ropts.warm_l2,
                    "Place tensor NAME in the L2 before the run (memory.model: l2; repeatable)");
    run->add_flag("--inplace", ropts.inplace,
                  "The output aliases the input's GM buffer (one-input, one-output kernels)");
    run->add_option("--against", ropts.against,
                    "Also measure the outputs against reference NAME, e.g. gelu_erf for an approximate GELU "
                    "(reported; the kernel's own reference decides PASS)");
    std::string engine;
    run->add_option("--engine", engine,
                    "Timing engine: c or systemc, the same results to the bit (default: c; systemc with --vcd, "
                    "which only it writes); systemc loads SystemC, which costs start-up time")
        ->check(CLI::IsMember({"c", "systemc"}));
    run->add_option("--mem-trace", ropts.mem_trace,
                    "Write every L2 access as a Dinero din line (`0 addr size` read, `1 addr size` write; memory.model: l2)");

    std::string cache_trace, cache_config, cache_json;
    std::vector<std::string> cache_sets;
    auto *cache = app.add_subcommand("cache", "Replay a Dinero din trace through the L2 and DRAM models");
    cache->add_option("trace", cache_trace, "din trace: `label hex-address [size]` per line")->required();
    cache->add_option("--config", cache_config,
                      "Hardware config, a shipped config by name (default, edge, tiny, datacenter) or a YAML file (named with its .yaml or a '/'): its l2 and dram sections (the others are checked, not used; "
                      "memory.model: ideal is refused)");
    cache->add_option("--set", cache_sets,
                      "Override an l2.* or dram.* key, KEY=VALUE (repeatable; a replay uses no other key, and "
                      "another is refused)");
    cache->add_option("--json", cache_json, "Write the counters as JSON to FILE, or - for stdout");

    AsmFlags asm_flags;
    auto *as = app.add_subcommand("asm", "Assemble a .s file into a binary program");
    as->add_option("file", asm_flags.in, "Assembly source")->required();
    as->add_option("-o,--output", asm_flags.out, "Output binary (optional with --schedule-table)");
    as->add_option("-I,--include", asm_flags.incdirs, "Include folder (repeatable)");
    as->add_option("-D,--define", asm_flags.defs, "Define NAME=VALUE (a number, or a dtype for suffix aliases)");
    as->add_option("--config", asm_flags.config_file, "Schedule .pipeline loops for this hardware config, a shipped config by name (default, edge, tiny, datacenter) or a YAML file (named with its .yaml or a '/') (default: the built-in one)");
    as->add_option("--set", asm_flags.sets, "Override a config key, KEY=VALUE (repeatable)");
    as->add_option("--schedule", asm_flags.schedule, "on: modulo-schedule .pipeline loops; off: written order")
        ->check(CLI::IsMember({"on", "off"}));
    as->add_flag("--schedule-table", asm_flags.table,
                 "Print each .pipeline loop's MII, II, stages, registers and its schedule (cycles x slots)");

    std::string dis_in;
    auto *dis = app.add_subcommand("dis", "Disassemble a binary program");
    dis->add_option("file", dis_in, "Binary program from `npusim asm`")->required();

    bool isa_json = false;
    auto *isa = app.add_subcommand("isa", "List every instruction: operands, class, unit, description");
    isa->add_flag("--json", isa_json, "Print JSON");

    bool kernels_json = false;
    auto *kern = app.add_subcommand("kernels", "List the kernels: dtypes, @split, parameters, accuracy tolerances, summary");
    kern->add_flag("--json", kernels_json, "Print JSON");

    std::string show_file;
    std::vector<std::string> show_sets;
    auto *config = app.add_subcommand("config", "Show a resolved config or the reference of every key");
    config->require_subcommand(1);
    auto *show = config->add_subcommand("show", "Print the resolved config");
    show->add_option("file", show_file, "Config: a shipped config by name (default, edge, tiny, datacenter) or a YAML file (named with its .yaml or a '/') (defaults when omitted)");
    show->add_option("--set", show_sets, "Override a key, KEY=VALUE (repeatable)");
    auto *docs = config->add_subcommand("docs", "Print the config reference table (Markdown)");

    std::vector<Command> study = add_study_commands(app);

    // Every error is one line (CLI11 would add "Run with --help for more information.").
    app.failure_message([](const CLI::App *, const CLI::Error &e) { return one_line(e.what()) + "\n"; });
    try {
        check_subcommand_names(app, argc, argv);
        app.parse(argc, argv);
        check_no_empty_values(app, "");
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;
    } catch (const Error &e) {
        std::cerr << one_line(e.what()) << "\n";
        return 2;
    }
    try {
        if (*run) {
            ropts.schedule = schedule == "on";
            ropts.measure_tiles = parse_tiling(tiling);
            if (dtype_opt->count())
                parse_dtype(ropts.dtype);  // `--dtype ''` too: an empty dtype is not the default
            trace_flags.start_given = trace_start_opt->count() > 0;
            trace_flags.end_given = trace_end_opt->count() > 0;
            trace_flags.max_bytes_given = trace_max_bytes_opt->count() > 0;
            return cmd_run(ropts, config_file, sets, shape_opt->count() ? &shape : nullptr, inputs, outputs, params,
                           json_path, quiet, trace_flags, engine);
        }
        if (*cache)
            return cmd_cache(cache_trace, cache_config, cache_sets, cache_json);
        if (*as)
        {
            if (asm_flags.out.empty() && !asm_flags.table)
                throw Error("asm: give -o FILE, --schedule-table, or both");
            return cmd_asm(asm_flags);
        }
        if (*dis)
            return cmd_dis(dis_in);
        if (*isa)
            return cmd_isa(isa_json);
        if (*kern)
            return cmd_kernels(kernels_json);
        if (*show) {
            std::cout << config_to_yaml(build_config(show_file, show_sets));
            return 0;
        }
        if (*docs) {
            std::cout << config_docs();
            return 0;
        }
        for (const Command &c : study)
            if (*c.sub)
                return c.run();
    } catch (const Error &e) {
        std::cerr << one_line(e.what()) << "\n";
        return 2;
#if NPUSIM_HAVE_SYSTEMC
    } catch (const VcdFileError &e) {
        std::cerr << one_line(e.what()) << "\n";
        return 2;
#endif
    } catch (const std::bad_alloc &) {
        // Past what the run's own estimate of its memory foresaw (a
        // `ulimit -v`, another process taking memory meanwhile).
        std::cerr << "npusim: out of memory: the host refused an allocation (its free memory or ulimit -v)\n";
        return 2;
    } catch (const std::exception &e) {
        std::cerr << "npusim: internal error: " << e.what() << "\n";
        return 3;
    }
    return 0;
}

}  // namespace
