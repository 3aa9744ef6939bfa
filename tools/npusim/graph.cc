// npusim graph (graph.h, docs/fusion.md): a chain of kernel runs per variant.
#include "graph.h"

#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "atomic_file.h"
#include "c_locale.h"
#include "error.h"
#include "manifest.h"
#include "parallel.h"
#include "report.h"
#include "run_limits.h"
#include "runner.h"
#include "trace.h"
#include "yaml_document.h"

namespace npusim {

namespace {

// ---- the spec -------------------------------------------------------------

// A generated tensor is made in host memory before any run: 2^28 elements
// (512 MiB of fp16) bounds it, far past what a run simulates in minutes.
constexpr uint64_t kMaxGraphTensorElements = uint64_t(1) << 28;

// A name as a message shows it: control characters and bytes past ASCII as \xNN.
std::string shown(const std::string &name)
{
    std::string s;
    for (unsigned char c : name) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", c);
        s += c >= 0x20 && c < 0x7f ? std::string(1, char(c)) : std::string(hex);
    }
    return s;
}

struct SpecReader {
    const std::string &path;
    std::string where(const YAML::Node &n, const std::string &key) const { return yaml_where(path, n.Mark()) + key + ": "; }

    std::string scalar(const YAML::Node &n, const std::string &key) const
    {
        if (!n.IsScalar())
            throw Error(where(n, key) + "expected a single value");
        return n.Scalar();
    }
    // A number's text: a quoted "16" is a string, refused where a number is
    // meant rather than read as the number.
    std::string number_text(const YAML::Node &n, const std::string &key) const
    {
        const std::string t = scalar(n, key);
        if (yaml_quoted(n))
            throw Error(where(n, key) + "'" + shown(t) + "' is quoted: a number is written without quotes");
        return t;
    }
    uint64_t count(const YAML::Node &n, const std::string &key, uint64_t lo, uint64_t hi) const
    {
        const std::string t = number_text(n, key);
        // Decimal digits only: strtoull alone would skip a space and take a sign ('+4', ' 4').
        const bool digits = !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
        char *end = nullptr;
        errno = 0;
        const unsigned long long v = digits ? std::strtoull(t.c_str(), &end, 10) : 0;
        if (!digits || errno == ERANGE || v < lo || v > hi)
            throw Error(where(n, key) + "'" + t + "' is not a whole number in " + std::to_string(lo) + " .. " +
                        std::to_string(hi));
        // As configs refuse it: YAML 1.1 (PyYAML) reads 016 as octal 14.
        if (t.size() > 1 && t[0] == '0')
            throw Error(where(n, key) + "'" + t + "' has a leading 0 (YAML 1.1 would read it as octal): write " +
                        std::to_string(v));
        return v;
    }
    double number(const YAML::Node &n, const std::string &key) const
    {
        const std::string t = number_text(n, key);
        char *end = nullptr;
        const double v = std::strtod(t.c_str(), &end);
        if (t.empty() || *end || !std::isfinite(v))
            throw Error(where(n, key) + "'" + t + "' is not a finite number");
        return v;
    }
    // Keys of a mapping, each once and each one of `known`.
    void keys(const YAML::Node &n, const std::string &key, const std::set<std::string> &known,
              const std::string &list) const
    {
        if (!n.IsMap())
            throw Error(where(n, key) + "expected a mapping (" + list + ")");
        std::set<std::string> seen;
        for (const auto &kv : n) {
            const std::string k = kv.first.Scalar();
            const std::string full = key.empty() ? k : key + "." + k;
            if (!known.empty() && !known.count(k))
                throw Error(where(kv.first, full) + "unknown key (" + list + ")");
            if (!seen.insert(k).second)
                throw Error(where(kv.first, full) + "given twice");
        }
    }
};

std::string decimal(unsigned __int128 v)
{
    std::string s;
    do {
        s.insert(s.begin(), char('0' + unsigned(v % 10)));
        v /= 10;
    } while (v);
    return s;
}

// Whether `name` can name a variant's trace files (graph.h, kMaxVariantName).
bool plain_file_name(const std::string &name)
{
    if (name.empty() || name.size() > kMaxVariantName || name[0] == '.' || name[0] == '-')
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
               c == '-';
    });
}

// A tensor's name is a row of the tables and a key of the JSON: the same
// characters as a variant's name (an empty name, one with spaces or a line
// break split the table).
void check_tensor_name(const SpecReader &rd, const std::string &name, const YAML::Node &at, const std::string &key)
{
    if (!plain_file_name(name))
        throw Error(rd.where(at, key) + "'" + shown(name) + "' is not a tensor name: 1 to " +
                    std::to_string(kMaxVariantName) +
                    " letters, digits, '_', '.' and '-', not starting with '.' or '-'");
}

GraphTensor read_tensor(const SpecReader &rd, const std::string &name, const YAML::Node &n)
{
    const std::string key = "tensors." + name;
    rd.keys(n, key, {"shape", "range"}, "shape, range");
    GraphTensor t;
    t.name = name;
    const YAML::Node shape = n["shape"];
    if (!shape)
        throw Error(rd.where(n, key) + "needs shape: [M, N] (an fp16 matrix), [N] (an fp32 vector) or [N, C, H, W] "
                                       "(an fp16 tensor)");
    if (!shape.IsSequence() || shape.size() < 1 || shape.size() == 3 || shape.size() > 4)
        throw Error(rd.where(shape, key + ".shape") +
                    "expected [M, N] (an fp16 matrix), [N] (an fp32 vector) or [N, C, H, W] (an fp16 tensor)");
    // Up to four dimensions of up to 2^20: at most 2^80 elements, which
    // 64 bits would wrap (2^64 + 4 would pass as 4).
    unsigned __int128 elements = 1;
    for (size_t i = 0; i < shape.size(); i++) {
        t.shape.push_back(rd.count(shape[i], key + ".shape[" + std::to_string(i) + "]", 1, 1u << 20));
        elements *= t.shape.back();
    }
    if (elements > kMaxGraphTensorElements)
        throw Error(rd.where(shape, key + ".shape") + decimal(elements) + " elements; a graph tensor has at most " +
                    std::to_string(kMaxGraphTensorElements));
    if (const YAML::Node range = n["range"]) {
        if (!range.IsSequence() || range.size() != 2)
            throw Error(rd.where(range, key + ".range") + "expected [lo, hi]");
        t.lo = rd.number(range[0], key + ".range[0]");
        t.hi = rd.number(range[1], key + ".range[1]");
        if (!(t.lo < t.hi))
            throw Error(rd.where(range, key + ".range") + "lo must be below hi");
        // generated in the tensor's dtype (generate): an end past its largest
        // finite value would give infinities, not the range written
        const bool vector = t.shape.size() == 1;
        const double largest = vector ? 3.4028234663852886e38 : 65504.0;
        for (size_t i = 0; i < 2; i++) {
            const double v = i ? t.hi : t.lo;
            if (std::fabs(v) > largest)
                throw Error(rd.where(range[i], key + ".range[" + std::to_string(i) + "]") + "'" + range[i].Scalar() +
                            "' is beyond " + (vector ? "fp32" : "fp16") + "'s largest finite value (" +
                            (vector ? "3.4028235e38" : "65504") + "); this tensor is " +
                            (vector ? "fp32 (1-D)" : "fp16"));
        }
    }
    return t;
}

// A variant's steps, each checked against its kernel's manifest and the
// tensors defined so far (each tensor is written once).

GraphVariant read_variant(const SpecReader &rd, const std::string &name, const YAML::Node &name_node, const YAML::Node &n,
                          const std::map<std::string, const GraphTensor *> &inputs)
{
    const std::string key = "variants." + shown(name);
    if (!plain_file_name(name))
        throw Error(rd.where(name_node, key) + "'" + shown(name) + "' cannot name its trace files: a variant's name is 1 to " +
                    std::to_string(kMaxVariantName) +
                    " letters, digits, '_', '.' and '-', not starting with '.' or '-'");
    if (!n.IsSequence() || n.size() == 0)
        throw Error(rd.where(n, key) + "expected a list of steps ({kernel, inputs, output})");
    GraphVariant v;
    v.name = name;
    v.where = yaml_where(rd.path, name_node.Mark()) + key;
    std::set<std::string> defined;
    for (const auto &kv : inputs)
        defined.insert(kv.first);
    for (size_t i = 0; i < n.size(); i++) {
        const YAML::Node s = n[i];
        const std::string sk = key + "[" + std::to_string(i) + "]";
        rd.keys(s, sk, {"kernel", "inputs", "output", "params"}, "kernel, inputs, output, params");
        GraphStep st;
        st.where = yaml_where(rd.path, s.Mark()) + sk;
        if (!s["kernel"] || !s["inputs"] || !s["output"])
            throw Error(rd.where(s, sk) + "a step needs kernel, inputs and output");
        st.kernel = rd.scalar(s["kernel"], sk + ".kernel");
        if (names_kernel_file(st.kernel))
            st.kernel = beside_spec(st.kernel, rd.path);
        Manifest m;
        try {
            m = load_manifest(resolve_kernel(st.kernel));
        } catch (const Error &e) {
            throw Error(rd.where(s["kernel"], sk + ".kernel") + e.what());
        }
        st.kernel_name = m.name;
        if (m.tensors.size() != m.num_inputs() + 1)
            throw Error(rd.where(s["kernel"], sk + ".kernel") + "kernel '" + m.name + "' has " +
                        std::to_string(m.tensors.size() - m.num_inputs()) + " outputs; a step takes one");
        if (!m.params.empty() && m.op != Op::conv2d)
            throw Error(rd.where(s["kernel"], sk + ".kernel") + "kernel '" + m.name +
                        "' has parameters; a graph step runs kernels without them (convolutions aside)");
        if (const YAML::Node ps = s["params"]) {
            std::string pnames;
            for (const ParamDecl &p : m.params)
                pnames += (pnames.empty() ? "" : ", ") + p.name;
            if (m.params.empty())
                throw Error(rd.where(ps, sk + ".params") + "kernel '" + m.name + "' has no parameters");
            rd.keys(ps, sk + ".params", {}, "the kernel's parameters: " + pnames);
            for (const auto &e : ps) {
                const std::string pname = e.first.Scalar();
                if (std::none_of(m.params.begin(), m.params.end(), [&](const ParamDecl &d) { return d.name == pname; }))
                    throw Error(rd.where(e.first, sk + ".params." + pname) + "kernel '" + m.name +
                                "' has no parameter '" + pname + "' (its parameters: " + pnames + ")");
                st.params.emplace_back(pname, rd.number(e.second, sk + ".params." + pname));
            }
        }
        const YAML::Node in = s["inputs"];
        std::string names;
        for (size_t t = 0; t < m.num_inputs(); t++)
            names += (names.empty() ? "" : ", ") + m.tensors[t].name;
        rd.keys(in, sk + ".inputs", {}, "the kernel's inputs: " + names);
        for (const auto &e : in) {
            const std::string iname = e.first.Scalar();
            const bool known = std::any_of(m.tensors.begin(), m.tensors.begin() + long(m.num_inputs()),
                                           [&](const TensorDecl &d) { return d.name == iname; });
            if (!known)
                throw Error(rd.where(e.first, sk + ".inputs." + iname) + "kernel '" + m.name + "' has no input '" +
                            iname + "' (its inputs: " + names + ")");
            const std::string tensor = rd.scalar(e.second, sk + ".inputs." + iname);
            if (!defined.count(tensor))
                throw Error(rd.where(e.second, sk + ".inputs." + iname) + "no tensor '" + tensor +
                            "' (a graph input under tensors, or an earlier step's output)");
            st.inputs.emplace_back(iname, tensor);
        }
        for (size_t t = 0; t < m.num_inputs(); t++)
            if (!in[m.tensors[t].name])
                throw Error(rd.where(in, sk + ".inputs") + "kernel '" + m.name + "' needs input '" + m.tensors[t].name +
                            "' (its inputs: " + names + ")");
        st.output = rd.scalar(s["output"], sk + ".output");
        check_tensor_name(rd, st.output, s["output"], sk + ".output");
        if (!defined.insert(st.output).second)
            throw Error(rd.where(s["output"], sk + ".output") + "tensor '" + st.output +
                        "' is already defined (each tensor is written once)");
        v.steps.push_back(st);
    }
    return v;
}

}  // namespace

GraphSpec load_graph(const std::string &path)
{
    const CLocaleScope c_locale;  // numbers in the C locale (c_locale.h)
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error(path + ": cannot open graph spec");
    return load_graph_text(read_file(path), path);
}

GraphSpec load_graph_text(const std::string &text, const std::string &path)
{
    const CLocaleScope c_locale;  // numbers in the C locale (c_locale.h)
    const YAML::Node root = load_one_yaml_document(text, path, "a graph spec");
    const SpecReader rd{path};
    const std::string top = "name, description, dtype, samples, seed, config, tensors, variants";
    if (!root.IsMap())
        throw Error(path + ": a graph spec is a mapping (" + top + ")");
    rd.keys(root, "", {"name", "description", "dtype", "samples", "seed", "config", "tensors", "variants"}, top);
    GraphSpec g;
    g.path = path;
    if (root["name"]) {
        g.name = rd.scalar(root["name"], "name");
        if (g.name.empty())
            throw Error(rd.where(root["name"], "name") + "empty (leave name out for the file's name)");
    }
    if (root["description"])
        g.description = rd.scalar(root["description"], "description");
    if (root["dtype"]) {
        g.dtype = rd.scalar(root["dtype"], "dtype");
        if (g.dtype != "fp16" && g.dtype != "fp32")
            throw Error(rd.where(root["dtype"], "dtype") + "'" + g.dtype + "' is not fp16 or fp32");
    }
    if (root["samples"])
        g.samples = rd.count(root["samples"], "samples", 1, 1u << 30);
    if (root["seed"])
        g.seed = rd.count(root["seed"], "seed", 0, UINT64_MAX);
    if (root["config"]) {
        g.config = beside_spec(rd.scalar(root["config"], "config"), path);
        struct stat cs;
        if (stat(g.config.c_str(), &cs) != 0)
            throw Error(rd.where(root["config"], "config") + "no such config file '" + g.config + "'");
    }
    if (g.name.empty())
        g.name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    const YAML::Node tensors = root["tensors"];
    if (!tensors)
        throw Error(path + ": tensors: the chain's inputs are needed");
    rd.keys(tensors, "tensors", {}, "tensor names");
    for (const auto &kv : tensors) {
        check_tensor_name(rd, kv.first.Scalar(), kv.first, "tensors." + shown(kv.first.Scalar()));
        g.tensors.push_back(read_tensor(rd, kv.first.Scalar(), kv.second));
    }
    std::map<std::string, const GraphTensor *> inputs;
    for (const GraphTensor &t : g.tensors)
        inputs[t.name] = &t;
    const YAML::Node variants = root["variants"];
    if (!variants)
        throw Error(path + ": variants: at least one variant is needed");
    rd.keys(variants, "variants", {}, "variant names");
    for (const auto &kv : variants)
        g.variants.push_back(read_variant(rd, kv.first.Scalar(), kv.first, kv.second, inputs));
    if (g.variants.empty())
        throw Error(rd.where(variants, "variants") + "at least one variant is needed");
    return g;
}

// ---- running it ------------------------------------------------------------

namespace {

// A graph input: 2-D or 4-D fp16 (a cube operand, a feature map), 1-D fp32
// (a bias).
NpyArray generate(const GraphTensor &t, uint64_t seed, unsigned index)
{
    NpyArray a;
    a.dtype = t.shape.size() == 1 ? NPU_F32 : NPU_F16;
    a.shape = t.shape;
    uint64_t n = 1;
    for (uint64_t d : t.shape)
        n *= d;
    a.data.resize(n * npu_dtype_bytes(a.dtype));
    Rng rng{seed * 0x100000001b3ull + index};  // as the runner seeds a generated input
    for (uint64_t i = 0; i < n; i++)
        npu_store_lane(a.data.data(), i, a.dtype, rng.uniform(t.lo, t.hi));
    return a;
}

// The elements of a, in dtype dt (each rounded once when narrowing).
NpyArray converted(const NpyArray &a, npu_dtype dt)
{
    if (a.dtype == dt)
        return a;
    NpyArray b;
    b.dtype = dt;
    b.shape = a.shape;
    const uint64_t n = a.data.size() / npu_dtype_bytes(a.dtype);
    b.data.resize(n * npu_dtype_bytes(dt));
    for (uint64_t i = 0; i < n; i++)
        npu_store_lane(b.data.data(), i, dt, npu_load_lane(a.data.data(), i, a.dtype));
    return b;
}

// M x N row-major <-> NCHW (1, N, M, 1): element (i, j) is channel j of row i.
NpyArray transposed(const NpyArray &a, uint64_t rows, uint64_t cols, std::vector<uint64_t> shape)
{
    NpyArray b;
    b.dtype = a.dtype;
    b.shape = std::move(shape);
    const unsigned es = npu_dtype_bytes(a.dtype);
    b.data.resize(a.data.size());
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t j = 0; j < cols; j++)
            std::memcpy(b.data.data() + (j * rows + i) * es, a.data.data() + (i * cols + j) * es, es);
    return b;
}

std::string failure_of(const RunResult &r)
{
    if (!r.traps.empty())
        return trap_text(r.traps.front());
    if (r.accuracy.failures)
        return std::to_string(r.accuracy.failures) + " elements beyond the tolerance";
    if (r.padding_nonzero)
        return std::to_string(r.padding_nonzero) + " padding elements not zero";
    return "not checked";
}

// "kernel(input=tensor, ...) -> output"
std::string step_text(const GraphStepResult &s)
{
    std::string ins;
    for (const auto &in : s.inputs)
        ins += (ins.empty() ? "" : ", ") + in.first + "=" + in.second;
    return s.kernel + "(" + ins + ") -> " + s.output;
}

// Hands one step's events to the variant's chain trace, which outlives the step.
class ToChain : public TraceWriter {
public:
    explicit ToChain(PerfettoTrace &chain) : chain_(chain) {}
    void issue(unsigned core, const npu_issue_event &ev) override { chain_.issue(core, ev); }
    void memory(const npu_memsys_event &ev) override { chain_.memory(ev); }
    void finish(unsigned core, uint64_t end_cycle) override { chain_.finish(core, end_cycle); }
    void close() override {}
    std::string note() const override { return ""; }

private:
    PerfettoTrace &chain_;
};

// Runs one step. With a trace path, its own trace goes there; with a chain
// trace, its events go there too.
GraphStepResult run_step(const GraphSpec &spec, const GraphStep &st, const Config &cfg,
                         const std::map<std::string, NpyArray> &inputs, std::map<std::string, NpyArray> &written,
                         const std::set<std::string> &just_written, const std::string &trace, PerfettoTrace *chain)
{
    const Manifest m = load_manifest(resolve_kernel(st.kernel));
    const bool cube = is_cube_op(m.op);
    bool nchw = false;  // an activation of a 4-D tensor: given as it is
    const npu_dtype dt = spec.dtype == "fp16" ? NPU_F16 : NPU_F32;
    RunOptions o;
    o.kernel = st.kernel;
    o.dtype = spec.dtype;
    o.config = cfg;
    o.seed = spec.seed;
    for (const auto &p : st.params)
        o.params[p.first] = p.second;
    uint64_t rows = 0, cols = 0;  // an activation's matrix
    // With `full` false, only shapes and dtypes: enough for admit_run.
    auto give_inputs = [&](bool full) {
        for (const auto &in : st.inputs) {
            auto w = written.find(in.second);
            const NpyArray &v = w != written.end() ? w->second : inputs.at(in.second);
            const TensorDecl &d = *std::find_if(m.tensors.begin(), m.tensors.end(),
                                                [&](const TensorDecl &t) { return t.name == in.first; });
            const std::string what = st.where + ": input '" + in.first + "' (tensor '" + in.second + "')";
            NpyArray &a = o.input_arrays[in.first];
            if (cube) {
                a = full ? v : NpyArray{v.dtype, v.shape, {}};  // run_kernel checks dtypes and shapes
            } else if (d.per_channel) {  // a bias: one value per column, in the run's dtype
                if (v.shape.size() != 1)
                    throw Error(what + ": a per-channel input is a 1-D tensor");
                a = full ? converted(v, dt) : NpyArray{dt, v.shape, {}};
            } else if (v.shape.size() == 4) {
                if (v.dtype != dt)
                    throw Error(what + ": is " + npu_dtype_name(v.dtype) + ", the graph's dtype is " + spec.dtype);
                nchw = true;
                a = full ? v : NpyArray{v.dtype, v.shape, {}};
            } else {
                if (v.shape.size() != 2)
                    throw Error(what + ": an activation reads a matrix (2-D) or an NCHW tensor (4-D)");
                if (v.dtype != dt)
                    throw Error(what + ": is " + npu_dtype_name(v.dtype) + ", the graph's dtype is " + spec.dtype);
                rows = v.shape[0];
                cols = v.shape[1];
                a = full ? transposed(v, rows, cols, {1, cols, rows, 1}) : NpyArray{v.dtype, {1, cols, rows, 1}, {}};
            }
        }
    };
    // The run's own checks, host memory included, before its inputs are
    // copied: a step too large for the host is refused as `npusim run`
    // refuses it, not by an allocation failing, and one that fits alone
    // waits for the steps of other variants (-j) to leave room for it
    // (admit_run). The graph's inputs and the variant's outputs so far stay
    // held through the run, and count.
    for (const std::map<std::string, NpyArray> *tensors : {&inputs, &std::as_const(written)})
        for (const auto &t : *tensors)
            o.host_bytes_held += t.second.data.size();
    give_inputs(false);
    MemoryGrant grant;
    try {
        grant = admit_run(o);
    } catch (const Error &e) {
        throw Error(st.where + ": " + e.what());
    }
    give_inputs(true);
    for (const auto &in : st.inputs)
        if (just_written.count(in.second) && cfg.memory_l2 && cfg.timed)
            o.warm_l2.push_back(in.first);
    TraceSet traces;
    if (!trace.empty())
        traces.add(std::make_unique<PerfettoTrace>(trace, TraceWindow{}, kDefaultTraceMaxBytes));
    if (chain)
        traces.add(std::make_unique<ToChain>(*chain));
    if (!traces.empty())
        o.attach = [&traces](unsigned core, npu_timed_core *tc) { traces.attach(core, tc); };
    RunResult r;
    try {
        r = run_kernel(o);
    } catch (const Error &e) {
        throw Error(st.where + ": " + e.what());
    }
    for (unsigned k = 0; k < r.core_stats.size(); k++)
        traces.finish(k, r.core_stats[k].cycles);
    traces.close();
    const std::string out = m.tensors.back().name;
    const NpyArray &y = r.tensors.at(out);
    written[st.output] = cube || nchw ? y : transposed(y, cols, rows, {rows, cols});
    GraphStepResult s;
    s.kernel = st.kernel;
    s.output = st.output;
    s.inputs = st.inputs;
    s.cycles = r.stats.cycles;
    s.dram_bytes = r.dram_traffic.kernel_read + r.dram_traffic.kernel_written + r.dram_traffic.end_of_run_bytes;
    s.l2_accesses = r.has_l2 ? r.l2.accesses : 0;
    s.l2_hits = r.has_l2 ? r.l2.hits : 0;
    const npu_timing_config &tc = cfg.timing;
    for (const npu_core_stats &c : r.core_stats) {
        s.cube_busy = std::max<uint64_t>(s.cube_busy, c.pipe_busy[NPU_PIPE_CUBE]);
        for (unsigned u : {unsigned(NPU_UNIT_VALU), unsigned(NPU_UNIT_SFU)})
            s.vector_busy = std::max(s.vector_busy, double(c.unit_busy[u]) / tc.unit[u].count);
        s.dma_busy = std::max(s.dma_busy, double(c.dma_bytes_in + c.dma_bytes_out) / tc.dma_bytes_per_cycle);
    }
    s.passed = r.passed();
    if (!s.passed)
        s.failure = failure_of(r);
    s.trace = trace;
    return s;
}

// A variant's trace file names in the trace folder: its steps end to end,
// and step k's own.
std::string chain_trace_name(const GraphVariant &v) { return v.name + ".json"; }
std::string step_trace_name(const GraphVariant &v, size_t k)
{
    return v.name + "." + std::to_string(k) + "." + v.steps[k].kernel_name + ".json";
}

// The variants named in `only`, or all.
std::vector<const GraphVariant *> selected(const GraphSpec &spec, const std::vector<std::string> &only)
{
    std::vector<const GraphVariant *> todo;
    for (const std::string &name : only)
        if (std::none_of(spec.variants.begin(), spec.variants.end(),
                         [&](const GraphVariant &v) { return v.name == name; }))
            throw Error("variant " + name + ": " + spec.path + " has no such variant");
    for (const GraphVariant &v : spec.variants)
        if (only.empty() || std::find(only.begin(), only.end(), v.name) != only.end())
            todo.push_back(&v);
    return todo;
}

// The variants' trace files in `dir`. Variant `a` and variant `a.0.relu`
// would both write a.0.relu.json (one trace lost, or a failed rename when
// they run at once): refused before any run.
std::vector<std::string> trace_files(const std::vector<const GraphVariant *> &todo, const std::string &dir)
{
    std::vector<std::string> files;
    std::map<std::string, std::string> owner;  // file name -> "variant a's step 0"
    for (const GraphVariant *v : todo)
        for (size_t k = 0; k <= v->steps.size(); k++) {
            const bool chain = k == v->steps.size();
            const std::string file = chain ? chain_trace_name(*v) : step_trace_name(*v, k);
            const std::string part = chain ? "steps end to end" : "step " + std::to_string(k);
            auto [it, fresh] = owner.emplace(file, "variant " + v->name + "'s " + part);
            if (!fresh)
                throw Error(v->where + ": the trace file of its " + part + ", " + file + ", is also that of " +
                            it->second + " (each trace needs a file of its own; rename one of the variants)");
            files.push_back(dir + "/" + file);
        }
    return files;
}

}  // namespace

std::vector<std::string> graph_trace_files(const GraphSpec &spec, const std::vector<std::string> &only,
                                           const std::string &trace_dir)
{
    return trace_files(selected(spec, only), trace_dir);
}

bool GraphResult::passed() const
{
    return std::all_of(variants.begin(), variants.end(), [](const GraphVariantResult &v) { return v.passed; });
}

GraphResult run_graph(const GraphSpec &spec, const Config &config, const std::vector<std::string> &only,
                      unsigned jobs, const std::string &trace_dir)
{
    if (!trace_dir.empty()) {
        struct stat st;
        if (stat(trace_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            throw Error("trace folder " + trace_dir + ": not a folder");
        if (!config.timed)
            throw Error("traces need timing (sim.mode: timed)");
    }
    GraphResult g;
    g.spec = spec;
    g.config = config;
    const std::vector<const GraphVariant *> todo = selected(spec, only);
    if (!trace_dir.empty())
        trace_files(todo, trace_dir);
    // The inputs are made before any step and held to the end; each step's
    // run is checked as it starts (run_step).
    uint64_t held = 0;
    for (const GraphTensor &t : spec.tensors) {
        uint64_t bytes = t.shape.size() == 1 ? 4 : 2;
        for (uint64_t d : t.shape)
            bytes *= d;  // at most 2^28 elements (read_tensor)
        held += bytes;
    }
    if (held > available_memory_bytes())
        throw Error(spec.path + ": tensors: the graph's " + std::to_string(spec.tensors.size()) +
                    " input tensors need about " + human_bytes(held) + " of memory but only " +
                    human_bytes(available_memory_bytes()) + " are available");
    std::map<std::string, NpyArray> inputs;
    for (size_t i = 0; i < spec.tensors.size(); i++)
        inputs[spec.tensors[i].name] = generate(spec.tensors[i], spec.seed, unsigned(i));
    g.variants.resize(todo.size());
    parallel_for(todo.size(), jobs, [&](size_t i) {
        GraphVariantResult &vr = g.variants[i];
        vr.name = todo[i]->name;
        std::map<std::string, NpyArray> written;  // the variant's steps' outputs; the inputs are shared
        std::set<std::string> just_written;
        std::unique_ptr<PerfettoTrace> chain;  // the variant's steps end to end
        if (!trace_dir.empty()) {
            vr.trace = trace_dir + "/" + chain_trace_name(*todo[i]);
            chain = std::make_unique<PerfettoTrace>(vr.trace, TraceWindow{}, kDefaultTraceMaxBytes);
        }
        for (size_t k = 0; k < todo[i]->steps.size(); k++) {
            const GraphStep &st = todo[i]->steps[k];
            const std::string trace = trace_dir.empty() ? "" : trace_dir + "/" + step_trace_name(*todo[i], k);
            if (chain)
                chain->begin_step(vr.cycles);
            GraphStepResult s = run_step(spec, st, config, inputs, written, just_written, trace, chain.get());
            if (chain)
                chain->end_step(step_text(s), s.cycles);
            just_written = {st.output};
            vr.cycles += s.cycles;
            vr.dram_bytes += s.dram_bytes;
            vr.l2_accesses += s.l2_accesses;
            vr.l2_hits += s.l2_hits;
            vr.cube_busy += s.cube_busy;
            vr.vector_busy += s.vector_busy;
            vr.dma_busy += s.dma_busy;
            vr.overlap_min += std::max(0.0, double(s.cube_busy) + s.vector_busy + s.dma_busy - double(s.cycles));
            vr.passed = vr.passed && s.passed;
            vr.steps.push_back(std::move(s));
        }
        vr.samples_per_second =
            vr.cycles ? double(spec.samples) * double(config.freq_mhz) * 1e6 / double(vr.cycles) : 0.0;
        if (chain)
            chain->close();
    });
    return g;
}

// ---- reports ---------------------------------------------------------------

namespace {

// The L2's hit rate: null with no accesses (memory.model: ideal has no L2),
// never a 0 the model did not compute; "-" in the table.
nlohmann::json hit_rate_json(uint64_t hits, uint64_t accesses)
{
    return accesses ? nlohmann::json(double(hits) / double(accesses)) : nlohmann::json(nullptr);
}
std::string hit_rate_text(uint64_t hits, uint64_t accesses)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", double(hits) / double(accesses ? accesses : 1));
    return accesses ? buf : "-";
}

}  // namespace

nlohmann::json graph_json(const GraphResult &g)
{
    using nlohmann::json;
    // A functional run (sim.mode: functional) counts no cycles, bytes or
    // busy time: those figures are null, never a 0 the model did not compute.
    const bool timed = g.config.timed;
    auto timing = [timed](const json &v) { return timed ? v : json(nullptr); };
    // The figures a step and a variant both report, by the same names.
    auto figures = [&timing](const auto &x, json &j) {
        j["cycles"] = timing(x.cycles);
        j["dram_bytes"] = timing(x.dram_bytes);
        j["l2_accesses"] = timing(x.l2_accesses);
        j["l2_hits"] = timing(x.l2_hits);
        j["l2_hit_rate"] = hit_rate_json(x.l2_hits, x.l2_accesses);
        j["cube_busy_cycles"] = timing(x.cube_busy);
        j["vector_busy_cycles"] = timing(x.vector_busy);
        j["dma_busy_cycles"] = timing(x.dma_busy);
        j["passed"] = x.passed;
    };
    json variants = json::array();
    for (const GraphVariantResult &v : g.variants) {
        json steps = json::array();
        for (const GraphStepResult &s : v.steps) {
            json in = json::object();
            for (const auto &i : s.inputs)
                in[i.first] = i.second;
            json j = {{"kernel", s.kernel}, {"inputs", in}, {"output", s.output}};
            figures(s, j);
            if (!s.passed)
                j["failure"] = s.failure;
            if (!s.trace.empty())
                j["trace"] = s.trace;
            steps.push_back(j);
        }
        json j = {{"name", v.name},
                  {"overlap_cycles_at_least", timing(v.overlap_min)},
                  {"samples_per_second", timing(v.samples_per_second)},
                  {"steps", steps}};
        figures(v, j);
        variants.push_back(j);
        if (!v.trace.empty())
            variants.back()["trace"] = v.trace;
    }
    // every key's value, overrides (--set) included, and where they came
    // from: the object `npusim run --json` gives
    json config = json::object();
    for (const auto &kv : config_values(g.config))
        config[kv.first] = kv.second;
    config["source"] = g.config.source;
    return {{"graph", g.spec.name},
            {"spec", g.spec.path},
            {"description", g.spec.description},
            {"config", config},
            {"cores", g.config.cores},
            {"freq_mhz", g.config.freq_mhz},
            {"dtype", g.spec.dtype},
            {"samples", g.spec.samples},
            {"timing", timed ? "timed" : "functional"},
            {"variants", variants},
            {"passed", g.passed()}};
}

std::string graph_text(const GraphResult &g)
{
    std::ostringstream os;
    char buf[512];
    os << "Graph:       " << g.spec.name << " (" << g.spec.path << ")\n";
    {  // each line of the description under the name (a block scalar has several)
        std::istringstream lines(g.spec.description);
        for (std::string line; std::getline(lines, line);)
            os << "             " << line << "\n";
    }
    std::snprintf(buf, sizeof buf, "Config:      %s, %u core%s at %u MHz; %s; %" PRIu64 " sample%s per pass%s\n",
                  g.config.source.c_str(), g.config.cores, g.config.cores == 1 ? "" : "s", g.config.freq_mhz,
                  g.spec.dtype.c_str(), g.spec.samples, g.spec.samples == 1 ? "" : "s",
                  g.config.timed ? "" : "; functional run: no timing (sim.mode=functional)");
    os << buf << "\n";
    // The timing columns as text: "-" for a functional run (graph_json's null).
    const bool timed = g.config.timed;
    auto count = [timed](uint64_t v) { return timed ? std::to_string(v) : std::string("-"); };
    auto real = [timed](double v, int decimals) {
        char b[64];
        std::snprintf(b, sizeof b, "%.*f", decimals, v);
        return timed ? std::string(b) : std::string("-");
    };
    int w = 12;
    for (const GraphVariantResult &v : g.variants)
        w = std::max(w, int(v.name.size()));
    std::snprintf(buf, sizeof buf, "%-*s %12s %12s %14s %11s %12s %12s %12s %12s  %s\n", w, "variant", "cycles",
                  "samples/s", "DRAM bytes", "L2 hit rate", "cube busy", "vector busy", "DMA busy", "overlap >=",
                  "result");
    os << buf;
    for (const GraphVariantResult &v : g.variants) {
        std::snprintf(buf, sizeof buf, "%-*s %12s %12s %14s %11s %12s %12s %12s %12s  %s\n", w, v.name.c_str(),
                      count(v.cycles).c_str(), real(v.samples_per_second, 1).c_str(), count(v.dram_bytes).c_str(),
                      hit_rate_text(v.l2_hits, v.l2_accesses).c_str(), count(v.cube_busy).c_str(),
                      real(v.vector_busy, 0).c_str(), real(v.dma_busy, 0).c_str(), real(v.overlap_min, 0).c_str(),
                      v.passed ? "PASS" : "FAIL");
        os << buf;
    }
    for (const GraphVariantResult &v : g.variants) {
        os << "\n" << v.name << ":\n";
        for (const GraphStepResult &s : v.steps) {
            std::snprintf(buf, sizeof buf, "  %-44s %12s cycles %14s DRAM bytes  L2 hit rate %s  %s\n",
                          step_text(s).c_str(), count(s.cycles).c_str(), count(s.dram_bytes).c_str(),
                          hit_rate_text(s.l2_hits, s.l2_accesses).c_str(),
                          s.passed ? "PASS" : ("FAIL: " + s.failure).c_str());
            os << buf;
        }
    }
    return os.str();
}

}  // namespace npusim
