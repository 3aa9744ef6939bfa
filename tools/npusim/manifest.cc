// Manifest parsing and kernel lookup.
#include "manifest.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "atomic_file.h"
#include "c_locale.h"
#include "config.h"
#include "error.h"

#ifndef NPUSIM_KERNELS_DIR
#define NPUSIM_KERNELS_DIR "kernels"
#define NPUSIM_CONFIGS_DIR "configs"
#endif
#ifndef NPUSIM_INSTALLED_KERNELS_DIR  // no installed copies: shipped_dir takes the source tree's
#define NPUSIM_NO_INSTALLED_DIRS 1
#define NPUSIM_INSTALLED_KERNELS_DIR NPUSIM_KERNELS_DIR
#define NPUSIM_INSTALLED_CONFIGS_DIR NPUSIM_CONFIGS_DIR
#endif

namespace npusim {
namespace {

struct LineCtx {
    const std::string &file;
    int line;
    [[noreturn]] void fail(size_t col, const std::string &msg) const
    {
        throw Error(file + ":" + std::to_string(line) + ":" + std::to_string(col + 1) + ": " + msg);
    }
};

std::vector<std::pair<std::string, size_t>> words(const std::string &s, size_t from)
{
    std::vector<std::pair<std::string, size_t>> out;
    size_t i = from;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t')
            i++;
        if (i > start)
            out.emplace_back(s.substr(start, i - start), start);
    }
    return out;
}

double parse_number(const LineCtx &ctx, const std::string &w, size_t col)
{
    char *end = nullptr;
    double v = std::strtod(w.c_str(), &end);
    if (w.empty() || *end != '\0')
        ctx.fail(col, "expected a number, found '" + w + "'");
    return v;
}

// KEY=MIN of @needs: KEY an integer config key, MIN a whole number.
NeedDecl parse_need(const LineCtx &ctx, const std::string &w, size_t col)
{
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == w.size())
        ctx.fail(col, "@needs takes KEY=MIN, found '" + w + "'");
    NeedDecl n;
    n.key = w.substr(0, eq);
    n.line = ctx.line;
    const ConfigKey *found = find_config_key(n.key);
    if (!found || found->type != KeyType::Int)
        ctx.fail(col, found ? "@needs " + n.key + ": not a numeric config key"
                            : "@needs: unknown config key '" + n.key + "' (npusim config docs lists them)");
    const std::string v = w.substr(eq + 1);
    char *end = nullptr;
    errno = 0;
    const long long min = std::strtoll(v.c_str(), &end, 10);
    if (*end != '\0' || errno || min < 0)
        ctx.fail(col + eq + 1, "@needs " + n.key + ": expected a whole number, found '" + v + "'");
    n.min = min;
    return n;
}

void check_dtype(const LineCtx &ctx, const std::string &s, size_t col)
{
    if (s != "fp16" && s != "fp32")
        ctx.fail(col, "unknown dtype '" + s + "' (fp16, fp32)");
}

// Tensor and parameter names share one namespace: each names one register.
// Maps a name to the line that declared it first.
using Names = std::map<std::string, int>;

void declare_name(Names &names, const LineCtx &ctx, const std::string &name, size_t col)
{
    auto [it, fresh] = names.emplace(name, ctx.line);
    if (!fresh)
        ctx.fail(col, "duplicate name '" + name + "', first declared at line " + std::to_string(it->second) +
                          " (@input, @output and @param names are unique)");
}

// An option (`range=`, `ulp=`, ...: its text up to '=') given twice on one
// line is an error at the second, naming the first's column.
void once(const LineCtx &ctx, std::map<std::string, size_t> &seen, const std::string &opt, size_t col)
{
    const std::string key = opt.substr(0, opt.find('='));
    const auto [it, fresh] = seen.emplace(key, col);
    if (!fresh)
        ctx.fail(col, "'" + key + "' given twice on one line (first at column " + std::to_string(it->second + 1) + ")");
}

void parse_tensor(Manifest &m, Names &names, const LineCtx &ctx, bool input,
                  const std::vector<std::pair<std::string, size_t>> &w)
{
    if (w.size() < 2)
        ctx.fail(w[0].second, std::string("@") + (input ? "input" : "output") + " needs a tensor name");
    TensorDecl t;
    t.name = w[1].first;
    t.is_input = input;
    std::map<std::string, size_t> seen;  // option -> its column: the second would silently win
    for (size_t k = 2; k < w.size(); k++) {
        const std::string &opt = w[k].first;
        once(ctx, seen, opt, w[k].second);
        if (opt.rfind("range=", 0) == 0) {
            std::string r = opt.substr(6);
            size_t comma = r.find(',');
            if (comma == std::string::npos)
                ctx.fail(w[k].second, "range needs LO,HI, found '" + r + "'");
            t.range_lo = parse_number(ctx, r.substr(0, comma), w[k].second + 6);
            t.range_hi = parse_number(ctx, r.substr(comma + 1), w[k].second + 7 + comma);
            if (!std::isfinite(t.range_lo) || !std::isfinite(t.range_hi))
                ctx.fail(w[k].second, opt + " is not finite (LO and HI must be finite numbers)");
            if (!(t.range_lo < t.range_hi))
                ctx.fail(w[k].second, opt + " is empty (LO must be below HI)");
        } else if (opt == "per_channel") {
            if (!input)
                ctx.fail(w[k].second, "per_channel applies to inputs only (a parameter tensor)");
            t.per_channel = true;
        } else {
            ctx.fail(w[k].second, "unknown tensor option '" + opt + "' (range=LO,HI, per_channel)");
        }
    }
    if (input && !t.per_channel && !m.tensors.empty() && m.tensors.back().per_channel)
        ctx.fail(w[0].second, "per_channel inputs must follow the tensor inputs");
    declare_name(names, ctx, t.name, w[1].second);
    if (input && !m.tensors.empty() && !m.tensors.back().is_input)
        ctx.fail(w[0].second, "inputs must be declared before outputs");
    m.tensors.push_back(t);
}

void parse_tolerance(Manifest &m, const LineCtx &ctx, const std::vector<std::pair<std::string, size_t>> &w)
{
    if (w.size() < 3)
        ctx.fail(w[0].second, "@tolerance needs a dtype and ulp=N and/or abs=X");
    check_dtype(ctx, w[1].first, w[1].second);
    if (m.tolerances.count(w[1].first))
        ctx.fail(w[1].second, "second @tolerance for " + w[1].first + " (a dtype has one)");
    ToleranceDecl d;
    npu_tolerance &t = d.tol;
    std::map<std::string, size_t> seen;
    for (size_t k = 2; k < w.size(); k++) {
        const std::string &opt = w[k].first;
        once(ctx, seen, opt, w[k].second);
        if (opt.rfind("zero_sign=", 0) == 0) {
            // A kernel documented to return zeros of either sign.
            if (opt != "zero_sign=any" && opt != "zero_sign=exact")
                ctx.fail(w[k].second + 10, "zero_sign takes exact or any, not '" + opt.substr(10) + "'");
            t.any_zero_sign = opt == "zero_sign=any";
            continue;
        }
        double *field = opt.rfind("ulp=", 0) == 0   ? &t.max_ulp
                        : opt.rfind("abs=", 0) == 0 ? &t.max_abs
                                                    : nullptr;
        if (!field)
            ctx.fail(w[k].second, "unknown tolerance option '" + opt + "' (ulp=N, abs=X, zero_sign=any)");
        std::string number = opt.substr(4);
        const size_t op = field == &t.max_abs ? number.find_first_of("*/") : std::string::npos;
        if (op != std::string::npos) {  // abs=X*param or abs=X/param
            d.abs_param = number.substr(op + 1);
            d.abs_divides = number[op] == '/';
            d.abs_col = w[k].second + 5 + op;
            if (d.abs_param.empty())
                ctx.fail(d.abs_col, "abs=X" + number.substr(op, 1) + " needs a @param name after '" +
                                        number.substr(op, 1) + "'");
            number.resize(op);
        }
        *field = parse_number(ctx, number, w[k].second + 4);
        if (!std::isfinite(*field) || *field < 0)
            ctx.fail(w[k].second, opt + " must be finite and non-negative");
    }
    m.tolerances[w[1].first] = d;
}

void parse_split(Manifest &m, const LineCtx &ctx, const std::vector<std::pair<std::string, size_t>> &w)
{
    if (w.size() != 2)
        ctx.fail(w[0].second, "@split takes one convention (blocks)");
    if (m.split != Split::undeclared)
        ctx.fail(w[0].second, "duplicate @split");
    if (w[1].first == "blocks")
        m.split = Split::blocks;
    else if (w[1].first == "tiles")
        m.split = Split::tiles;
    else
        ctx.fail(w[1].second, "unknown split '" + w[1].first +
                                  "' (blocks: core k of n takes C0 blocks [k*ceil(B/n), min((k+1)*ceil(B/n), B)); "
                                  "tiles, for @op matmul: core k of n takes C's 8 x 8-fractal tiles k, k + n, ... in row-major order)");
}

}  // namespace

const char *op_name(Op op) { return op == Op::matmul ? "matmul" : op == Op::conv2d ? "conv2d" : "eltwise"; }

const char *split_name(Split s)
{
    switch (s) {
    case Split::blocks:
        return "blocks";
    case Split::tiles:
        return "tiles";
    case Split::undeclared:
        break;
    }
    return "-";
}

size_t Manifest::num_full_tensors() const
{
    return size_t(std::count_if(tensors.begin(), tensors.end(), [](const TensorDecl &t) { return !t.per_channel; }));
}

unsigned Manifest::tile_vectors() const
{
    return std::any_of(tensors.begin(), tensors.end(), [](const TensorDecl &t) { return t.per_channel; }) ? 2 : 1;
}

size_t Manifest::num_inputs() const
{
    return size_t(std::count_if(tensors.begin(), tensors.end(), [](const TensorDecl &t) { return t.is_input; }));
}

bool Manifest::supports(const std::string &dtype) const
{
    return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

npu_tolerance Manifest::tolerance(const std::string &dtype, const std::vector<double> &values) const
{
    const ToleranceDecl &d = tolerances.at(dtype);
    npu_tolerance t = d.tol;
    for (size_t i = 0; i < params.size() && i < values.size(); i++)
        if (params[i].name == d.abs_param)
            t.max_abs = d.abs_divides ? t.max_abs / std::fabs(values[i]) : t.max_abs * std::fabs(values[i]);
    if (!std::isfinite(t.max_abs))  // X / 0: no abs term rather than one that passes any finite error
        t.max_abs = 0.0;
    return t;
}

std::string param_divisor_problem(double v)
{
    if (v == 0.0)
        return " 0 has no reciprocal";
    // 1/v rounded to binary32 is finite exactly when |v| > 2^-128: the next
    // binary32 above 2^-128 (by 2^-149) has a reciprocal below 2^128 (1 - 2^-21).
    if (std::fabs(v) <= 0x1p-128)
        return " its reciprocal overflows binary32 (the magnitude must be above 2^-128, 2.93873588e-39)";
    return "";
}

std::string Manifest::abs_scale(const std::string &dtype) const
{
    const ToleranceDecl &d = tolerances.at(dtype);
    if (d.abs_param.empty())
        return "";
    return (d.abs_divides ? "1/|" : "|") + d.abs_param + "|";
}

Manifest parse_manifest(const std::string &path, const std::string &text)
{
    Manifest m;
    m.path = path;
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    int kernel_line = 0;  // the @kernel line, once seen
    int op_line = 0;      // the @op line, once seen
    std::map<std::string, std::pair<int, size_t>> tolerance_at;  // dtype -> its @tolerance's line, column
    Names names;
    while (std::getline(in, line)) {
        lineno++;
        size_t at = line.find("; @");
        if (at == std::string::npos || line.find_first_not_of(" \t") != at)
            continue;
        LineCtx ctx{path, lineno};
        auto w = words(line, at + 2);
        const std::string key = w[0].first.substr(1);
        auto rest = [&](size_t from) {
            std::string s;
            for (size_t k = from; k < w.size(); k++)
                s += (k > from ? " " : "") + w[k].first;
            return s;
        };
        if (key == "kernel") {
            if (w.size() != 2)
                ctx.fail(w[0].second, "@kernel takes one name");
            if (kernel_line)
                ctx.fail(w[0].second, "second @kernel '" + w[1].first + "'; line " + std::to_string(kernel_line) +
                                          " already names the kernel '" + m.name + "' (a manifest has one)");
            kernel_line = lineno;
            m.name = w[1].first;
        } else if (key == "summary") {
            m.summary = rest(1);
        } else if (key == "input" || key == "output") {
            parse_tensor(m, names, ctx, key == "input", w);
        } else if (key == "param") {
            if (w.size() < 3)
                ctx.fail(w[0].second, "@param needs a name and a default value");
            declare_name(names, ctx, w[1].first, w[1].second);
            const bool divisor = w.size() > 3 && w[3].first == "divisor";
            ParamDecl p{w[1].first, parse_number(ctx, w[2].first, w[2].second), rest(divisor ? 4 : 3), divisor,
                        lineno};
            if (!std::isfinite(p.default_value))
                ctx.fail(w[2].second, "@param " + p.name + " default " + w[2].first + " is not finite");
            const std::string problem = divisor ? param_divisor_problem(double(float(p.default_value))) : "";
            if (!problem.empty())
                ctx.fail(w[2].second, "@param " + p.name + " default " + w[2].first + " is a divisor:" + problem);
            m.params.push_back(p);
        } else if (key == "dtypes") {
            for (size_t k = 1; k < w.size(); k++) {
                check_dtype(ctx, w[k].first, w[k].second);
                if (m.supports(w[k].first))
                    ctx.fail(w[k].second, "dtype " + w[k].first + " listed twice in @dtypes");
                m.dtypes.push_back(w[k].first);
            }
        } else if (key == "reference") {
            if (w.size() != 2)
                ctx.fail(w[0].second, "@reference takes one function name");
            if (!npu_reference_find(w[1].first.c_str()))
                ctx.fail(w[1].second, "unknown reference function '" + w[1].first + "'");
            m.reference = w[1].first;
        } else if (key == "tolerance") {
            parse_tolerance(m, ctx, w);
            tolerance_at[w[1].first] = {lineno, w[1].second};
        } else if (key == "split") {
            parse_split(m, ctx, w);
        } else if (key == "op") {
            if (w.size() != 2 || (w[1].first != "eltwise" && w[1].first != "matmul" && w[1].first != "conv2d"))
                ctx.fail(w.size() > 1 ? w[1].second : w[0].second, "@op takes eltwise, matmul or conv2d");
            if (op_line)
                ctx.fail(w[0].second, "duplicate @op");
            op_line = lineno;
            m.op = w[1].first == "matmul" ? Op::matmul : w[1].first == "conv2d" ? Op::conv2d : Op::eltwise;
        } else if (key == "note") {
            m.notes.push_back(rest(1));
        } else if (key == "needs") {
            if (w.size() < 2)
                ctx.fail(w[0].second, "@needs takes KEY=MIN: a config key and the least value the kernel needs");
            for (size_t k = 1; k < w.size(); k++)
                m.needs.push_back(parse_need(ctx, w[k].first, w[k].second));
        } else {
            ctx.fail(w[0].second, "unknown manifest key '@" + key + "'" +
                                      (key == "bound" ? " (an accuracy tolerance is @tolerance)" : ""));
        }
    }
    auto need = [&](bool ok, const std::string &what) {
        if (!ok)
            throw Error(path + ": manifest has no " + what);
    };
    need(!m.name.empty(), "@kernel line");
    need(m.num_inputs() > 0, "@input");
    need(m.tensors.size() > m.num_inputs(), "@output");
    need(!m.tensors.front().per_channel, "tensor @input (per_channel inputs are parameters of one)");
    need(!m.dtypes.empty(), "@dtypes");
    need(!m.reference.empty(), "@reference");
    for (const std::string &dt : m.dtypes)
        need(m.tolerances.count(dt) > 0, "@tolerance for " + dt);
    for (const auto &t : tolerance_at)
        if (!m.supports(t.first))
            LineCtx{path, t.second.first}.fail(t.second.second, "@tolerance for " + t.first + ", which @dtypes does not list");
    for (const auto &t : tolerance_at) {
        const ToleranceDecl &d = m.tolerances.at(t.first);
        bool known = d.abs_param.empty();
        for (const ParamDecl &p : m.params)
            known |= p.name == d.abs_param;
        if (!known)
            LineCtx{path, t.second.first}.fail(d.abs_col, "abs scales with '" + d.abs_param +
                                                              "', which no @param declares");
    }
    const npu_reference *ref = npu_reference_find(m.reference.c_str());
    if (m.op == Op::matmul) {
        // Two matrix inputs, perhaps a bias, and one output; the reference
        // is the epilogue, a function of one value: the exact A B + bias.
        const size_t ins = m.num_inputs();
        bool plain = m.tensors.size() == ins + 1 && (ins == 2 || ins == 3);
        for (size_t i = 0; plain && i < ins; i++)
            plain = !m.tensors[i].per_channel;
        if (!plain)
            throw Error(path + ": @op matmul takes two @input matrices (a, b), perhaps a third @input (the bias, "
                               "one fp32 value per column of C), and one @output");
        if (m.split != Split::tiles)
            throw Error(path + ": @op matmul needs @split tiles");
        if (ref->num_inputs != 1)
            throw Error(path + ": reference '" + m.reference + "' takes " + std::to_string(ref->num_inputs) +
                        " inputs; a matmul's reference is its epilogue, a function of one value");
        return m;
    }
    if (m.op == Op::conv2d) {
        // The feature map and the weights, one output; the geometry as
        // parameters; the reference is the epilogue of the convolution.
        bool plain = m.num_inputs() == 2 && m.tensors.size() == 3;
        for (size_t i = 0; plain && i < 2; i++)
            plain = !m.tensors[i].per_channel;
        if (!plain)
            throw Error(path + ": @op conv2d takes two @input tensors (x, the feature map, and w, the weights) and "
                               "one @output");
        std::vector<std::string> names;
        for (const ParamDecl &p : m.params)
            names.push_back(p.name);
        if (names != std::vector<std::string>{"cout", "kernel", "stride", "pad"})
            throw Error(path + ": @op conv2d declares exactly @param cout, kernel, stride and pad, in that order");
        if (m.split != Split::tiles)
            throw Error(path + ": @op conv2d needs @split tiles");
        if (ref->num_inputs != 1)
            throw Error(path + ": reference '" + m.reference + "' takes " + std::to_string(ref->num_inputs) +
                        " inputs; a convolution's reference is its epilogue, a function of one value");
        return m;
    }
    if (m.split == Split::tiles)
        throw Error(path + ": @split tiles is for @op matmul and conv2d");
    if (ref->num_inputs != m.num_inputs())
        throw Error(path + ": reference '" + m.reference + "' takes " + std::to_string(ref->num_inputs) +
                    " inputs, the manifest declares " + std::to_string(m.num_inputs()));
    return m;
}

Manifest load_manifest(const std::string &path)
{
    const CLocaleScope c_locale;  // numbers in the C locale (c_locale.h)
    return parse_manifest(path, read_file(path));
}

namespace {

// Whether this code runs from its build folder (the executable or the
// library holding it lies there): then the source tree's kernels are the
// ones it was built with; an installed npusim or libnpusim takes the
// installed copy, not whatever the checkout holds now (or nothing once it
// is gone).
bool running_from_build()
{
#ifdef NPUSIM_BUILD_ROOT
    const std::string root = std::string(NPUSIM_BUILD_ROOT) + "/";
    auto under = [&](const char *path) {
        char *real = path ? realpath(path, nullptr) : nullptr;
        const bool in = real && std::strncmp(real, root.c_str(), root.size()) == 0;
        std::free(real);
        return in;
    };
    Dl_info info{};
    return under("/proc/self/exe") ||
           (dladdr(reinterpret_cast<void *>(&running_from_build), &info) && under(info.dli_fname));
#else
    return true;
#endif
}

}  // namespace

namespace {

// A shipped folder (kernels, configs): run from the build folder, the source
// tree's (the installed copy if it is gone); else the installed copy, or an
// error when it is gone (not the source tree's, which may since have
// changed: an installed npusim ran its kernels without a word).
std::string shipped_dir(const char *source, const char *installed, const char *what, const char *instead)
{
    struct stat st;
#ifndef NPUSIM_NO_INSTALLED_DIRS
    const bool have_installed = stat(installed, &st) == 0;
    if (!running_from_build()) {
        if (!have_installed)
            throw Error(std::string("the installed ") + what + " are missing (" + installed +
                        "): install npusim again, or " + instead);
        return installed;
    }
    if (have_installed && stat(source, &st) != 0)
        return installed;
#else
    (void)installed, (void)what, (void)instead, (void)st;
#endif
    return source;
}

bool ends_with(const std::string &s, const char *tail)
{
    const size_t n = std::strlen(tail);
    return s.size() > n && s.compare(s.size() - n, n, tail) == 0;
}

}  // namespace

// NPUSIM_KERNELS, else the shipped kernels (shipped_dir).
std::string kernels_dir()
{
    struct stat st;
    if (const char *env = std::getenv("NPUSIM_KERNELS")) {
        // Taken as written or refused: an empty or missing folder listed no
        // kernels (exit 0) and looked kernels up in "/".
        if (!*env)
            throw Error("NPUSIM_KERNELS is empty: name a folder of kernels, or unset it for the shipped ones");
        if (stat(env, &st) != 0)
            throw Error(std::string("NPUSIM_KERNELS=") + env + ": " + std::strerror(errno));
        if (!S_ISDIR(st.st_mode))
            throw Error(std::string("NPUSIM_KERNELS=") + env + ": not a folder");
        return env;
    }
    return shipped_dir(NPUSIM_KERNELS_DIR, NPUSIM_INSTALLED_KERNELS_DIR, "kernels",
                       "set NPUSIM_KERNELS to a folder of kernels");
}

std::string configs_dir()
{
    return shipped_dir(NPUSIM_CONFIGS_DIR, NPUSIM_INSTALLED_CONFIGS_DIR, "configs", "name a config file");
}

bool names_config_file(const std::string &name_or_path)
{
    return name_or_path.find('/') != std::string::npos || ends_with(name_or_path, ".yaml") ||
           ends_with(name_or_path, ".yml");
}

std::string resolve_config(const std::string &name_or_path)
{
    struct stat st;
    if (name_or_path.empty())
        return name_or_path;
    if (names_config_file(name_or_path)) {
        // `edge.yaml` where there is none: the shipped config may be meant
        if (name_or_path.find('/') == std::string::npos && stat(name_or_path.c_str(), &st) != 0) {
            const std::string stem = name_or_path.substr(0, name_or_path.rfind('.'));
            std::string shipped;
            try {
                shipped = configs_dir() + "/" + stem + ".yaml";
            } catch (const Error &) {  // no shipped configs: the file's own error
            }
            if (!shipped.empty() && stat(shipped.c_str(), &st) == 0)
                throw Error(name_or_path + ": cannot open config file (there is none here; the shipped config "
                            "of that name is '" + stem + "', named without the extension)");
        }
        return name_or_path;
    }
    const std::string dir = configs_dir();
    const std::string path = dir + "/" + name_or_path + ".yaml";
    if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        return path;
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
        while (const dirent *e = readdir(d)) {
            const std::string n = e->d_name;
            if (ends_with(n, ".yaml"))
                names.push_back(n.substr(0, n.size() - 5));
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    std::string list;
    for (const std::string &n : names)
        list += (list.empty() ? "" : ", ") + n;
    throw Error("unknown config '" + name_or_path + "' (shipped: " + (list.empty() ? "none" : list) + ", in " + dir +
                "; a file is named with its .yaml or a '/': ./" + name_or_path + ")");
}

bool names_kernel_file(const std::string &name_or_path)
{
    return name_or_path.find('/') != std::string::npos ||
           (name_or_path.size() > 2 && name_or_path.compare(name_or_path.size() - 2, 2, ".s") == 0);
}

std::string resolve_kernel(const std::string &name_or_path)
{
    struct stat st;
    if (names_kernel_file(name_or_path)) {
        if (stat(name_or_path.c_str(), &st) != 0)
            throw Error(name_or_path + ": no such kernel file");
        return name_or_path;
    }
    std::string p = kernels_dir() + "/" + name_or_path + ".s";
    if (stat(p.c_str(), &st) != 0)
        throw Error("unknown kernel '" + name_or_path + "' (see `npusim kernels`; looked in " +
                    kernels_dir() + ")");
    return p;
}

std::vector<std::string> list_kernels()
{
    std::vector<std::string> out;
    const std::string dir = kernels_dir();
    DIR *d = opendir(dir.c_str());
    if (!d)
        throw Error("kernels folder " + dir + ": cannot open: " + std::strerror(errno));
    while (dirent *e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 2 && n.compare(n.size() - 2, 2, ".s") == 0)
            out.push_back(dir + "/" + n);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace npusim
