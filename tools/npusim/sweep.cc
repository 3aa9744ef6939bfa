// Sweep specs, their expansion into points, running them as processes, and
// merging the results.
#include "sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "atomic_file.h"
#include "error.h"
#include "json_text.h"
#include "manifest.h"
#include "parallel.h"
#include "run_limits.h"
#include "runner.h"
#include "yaml_document.h"

namespace npusim {
namespace {

// A value as `--set KEY=VALUE` spells it. Only a list key (issue.slots: [a,
// b] -> "a,b") takes a list: [512] is not 512, as --set core.vlen=[512] is not.
std::string scalar_text(const YAML::Node &n, const std::string &file, const std::string &key, bool list_key = false)
{
    if (n.IsScalar())
        return n.Scalar();
    if (n.IsSequence() && !list_key)
        throw Error(yaml_where(file, n.Mark()) + key + ": expected a single value, not a list");
    if (n.IsSequence()) {
        std::string s;
        for (const auto &item : n) {
            if (!item.IsScalar())
                throw Error(yaml_where(file, item.Mark()) + key + ": expected a scalar");
            s += (s.empty() ? "" : ",") + item.Scalar();
        }
        return s;
    }
    throw Error(yaml_where(file, n.Mark()) + key + ": expected a scalar value");
}

// Where item i of a list (or the scalar standing for a one-item list) is.
YAML::Mark item_mark(const YAML::Node &list, size_t i)
{
    return list.IsSequence() && i < list.size() ? list[i].Mark() : list.Mark();
}

// True if the last value also appears earlier in the list.
bool repeats_last(const std::vector<std::string> &v)
{
    return std::find(v.begin(), v.end() - 1, v.back()) != v.end() - 1;
}

std::vector<std::string> string_list(const YAML::Node &n, const std::string &file, const std::string &key)
{
    std::vector<std::string> out;
    if (n.IsScalar()) {
        out.push_back(n.Scalar());
        return out;
    }
    if (!n.IsSequence() || n.size() == 0)
        throw Error(yaml_where(file, n.Mark()) + key + ": expected a non-empty list");
    for (const auto &item : n) {
        out.push_back(scalar_text(item, file, key));
        if (repeats_last(out))
            throw Error(yaml_where(file, item.Mark()) + key + ": '" + out.back() +
                        "' is listed twice (its points would share one id)");
    }
    return out;
}

// yaml-cpp keeps both entries of a repeated mapping key; a spec may not.
void check_unique_key(std::map<std::string, int> &seen, const YAML::Node &k, const std::string &file,
                      const std::string &name)
{
    auto [it, fresh] = seen.emplace(k.Scalar(), k.Mark().line + 1);
    if (!fresh)
        throw Error(yaml_where(file, k.Mark()) + name + ": repeated key (first at line " + std::to_string(it->second) +
                    ")");
}

void check_key(const std::string &key, const std::string &w)
{
    for (const ConfigKey &k : config_schema())
        if (k.path == key)
            return;
    throw Error(w + key + ": unknown config key (see `npusim config docs`)");
}

bool is_list_key(const std::string &key)
{
    const ConfigKey *k = find_config_key(key);
    return k && k->type == KeyType::SlotList;
}

// A key is set, crossed or zipped, one of them: set's value would be
// overridden by every point's (set: {core.vlen: 256} with grid: {core.vlen:
// [512, 1024]} never ran 256). Throws at the key's second place.
void check_one_section(const SweepSpec &s, const std::string &key, const std::string &section, const std::string &w)
{
    std::string other;
    if (std::any_of(s.set.begin(), s.set.end(), [&](const auto &kv) { return kv.first == key; }))
        other = "set";
    for (const auto &[name, axes] : {std::pair{"grid", &s.grid}, std::pair{"zip", &s.zip}})
        if (std::any_of(axes->begin(), axes->end(), [&](const SweepAxis &a) { return a.key == key; }))
            other = name;
    if (other.empty() || other == section)
        return;
    throw Error(w + section + "." + key + ": also in " + other +
                (section == "set" || other == "set"
                     ? " (a key is either set, crossed or zipped: set's value would never run)"
                     : " (a key is either crossed or zipped, not both)"));
}

// A value must be valid for its key on its own (cross-key rules are checked per point).
void check_value(const std::string &key, const std::string &value, const std::string &w)
{
    Config scratch = default_config();
    try {
        apply_override(scratch, key + "=" + value);
    } catch (const Error &e) {
        std::string m = e.what();
        const std::string prefix = "set ";
        if (m.rfind(prefix, 0) == 0)
            m = m.substr(prefix.size());
        throw Error(w + m);
    }
}

// `other` is the other section (grid for zip, zip for grid) as far as read:
// a key is either crossed or zipped, never both.
std::vector<SweepAxis> axes(const YAML::Node &n, const std::string &file, const std::string &section,
                            const SweepSpec &so_far)
{
    std::vector<SweepAxis> out;
    if (!n.IsMap())
        throw Error(yaml_where(file, n.Mark()) + section + ": expected a mapping of config keys to value lists");
    std::map<std::string, int> seen;
    for (const auto &kv : n) {
        std::string key = kv.first.Scalar();
        const std::string w = yaml_where(file, kv.first.Mark());
        check_key(key, w + section + ".");
        check_unique_key(seen, kv.first, file, section + "." + key);
        check_one_section(so_far, key, section, w);
        if (!kv.second.IsSequence() || kv.second.size() == 0)
            throw Error(yaml_where(file, kv.second.Mark()) + section + "." + key + ": expected a non-empty list of values");
        SweepAxis a{key, {}};
        for (const auto &v : kv.second) {
            a.values.push_back(scalar_text(v, file, section + "." + key, is_list_key(key)));
            check_value(key, a.values.back(), yaml_where(file, v.Mark()) + section + ".");
            // A zip value may repeat (other keys move with it); a grid value may not.
            if (section == "grid" && repeats_last(a.values))
                throw Error(yaml_where(file, v.Mark()) + section + "." + key + ": '" + a.values.back() +
                            "' is listed twice (its points would share one id)");
        }
        out.push_back(a);
    }
    return out;
}

// limits: {max_cycles: N, max_instructions: N}, each a whole number.
SweepLimits limits_from(const YAML::Node &n, const std::string &file)
{
    if (!n.IsMap())
        throw Error(yaml_where(file, n.Mark()) + "limits: expected a mapping (max_cycles, max_instructions)");
    SweepLimits l;
    std::map<std::string, int> seen;
    for (const auto &kv : n) {
        const std::string key = kv.first.Scalar(), name = "limits." + key;
        std::optional<uint64_t> *slot = key == "max_cycles"         ? &l.max_cycles
                                        : key == "max_instructions" ? &l.max_instructions
                                                                    : nullptr;
        if (!slot)
            throw Error(yaml_where(file, kv.first.Mark()) + name + ": unknown key (max_cycles, max_instructions)");
        check_unique_key(seen, kv.first, file, name);
        if (yaml_quoted(kv.second))
            throw Error(yaml_where(file, kv.second.Mark()) + name + ": '" + kv.second.Scalar() +
                        "' is quoted: a number is written without quotes");
        *slot = kv.second.IsScalar() ? parse_count(kv.second.Scalar()) : std::nullopt;
        if (!*slot)
            throw Error(yaml_where(file, kv.second.Mark()) + name + ": expected a whole number (0 .. 2^64 - 1; 0: no limit)" +
                        (kv.second.IsScalar() ? ", got '" + kv.second.Scalar() + "'" : ""));
    }
    return l;
}

uint64_t fnv1a(const std::string &s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

void make_dirs(const std::string &path)
{
    std::string cur;
    std::stringstream ss(path);
    std::string part;
    if (!path.empty() && path[0] == '/')
        cur = "/";
    while (std::getline(ss, part, '/')) {
        if (part.empty())
            continue;
        cur += part + "/";
        if (mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST)
            throw Error(cur + ": cannot create folder: " + std::strerror(errno));
    }
}

bool file_exists(const std::string &p)
{
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

std::string read_text(const std::string &p)
{
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

nlohmann::json point_json(const SweepPoint &p)
{
    nlohmann::json o = nlohmann::json::object();
    for (const auto &kv : p.overrides)
        o[kv.first] = kv.second;
    return {{"index", p.index}, {"id", p.id}, {"kernel", p.kernel}, {"dtype", p.dtype}, {"shape", p.shape},
            {"overrides", o}};
}

// The signals that stop a sweep. While a sweep runs they and SIGCHLD stay
// blocked except inside wait() (sigsuspend), so none can arrive between the
// check of stop_signal and the wait, and they reach no child.
const int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};
volatile sig_atomic_t stop_signal = 0;

extern "C" void on_stop_signal(int sig)
{
    stop_signal = sig;
}

extern "C" void on_child_exit(int) {}  // only wakes wait()

class SignalGate {
public:
    SignalGate()
    {
        stop_signal = 0;
        sigset_t block;
        sigemptyset(&block);
        sigaddset(&block, SIGCHLD);
        for (int sig : kStopSignals)
            sigaddset(&block, sig);
        sigprocmask(SIG_BLOCK, &block, &old_mask_);
        wait_mask_ = old_mask_;
        struct sigaction sa = {};
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < std::size(kStopSignals); i++) {
            sigdelset(&wait_mask_, kStopSignals[i]);
            sigaction(kStopSignals[i], nullptr, &old_action_[i]);
            sa.sa_handler = on_stop_signal;
            if (old_action_[i].sa_handler != SIG_IGN)  // under nohup SIGHUP stays ignored
                sigaction(kStopSignals[i], &sa, nullptr);
        }
        sigdelset(&wait_mask_, SIGCHLD);
        sa.sa_handler = on_child_exit;
        sigaction(SIGCHLD, &sa, &old_chld_);
    }
    ~SignalGate()
    {
        restore_actions();
        sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    }
    // Until a child ends or a stop signal arrives.
    void wait() const { sigsuspend(&wait_mask_); }
    // In a forked child before exec: the dispositions and mask the sweep had.
    void restore_in_child() const
    {
        restore_actions();
        sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    }

private:
    void restore_actions() const
    {
        for (size_t i = 0; i < std::size(kStopSignals); i++)
            sigaction(kStopSignals[i], &old_action_[i], nullptr);
        sigaction(SIGCHLD, &old_chld_, nullptr);
    }
    sigset_t old_mask_, wait_mask_;
    struct sigaction old_action_[std::size(kStopSignals)], old_chld_;
};

// The `npusim run` command line of one point.
std::vector<std::string> point_args(const SweepPoint &p, const std::string &dir, const std::string &exe,
                                    const SweepLimits &limits, bool measure_tiles)
{
    std::vector<std::string> args = {exe, "run", p.kernel_file, "--dtype", p.dtype, "--shape", p.shape,
                                     "--config", dir + "/config.yaml", "--json", dir + "/stats.json", "-q"};
    if (limits.max_cycles)
        args.insert(args.end(), {"--max-cycles", std::to_string(*limits.max_cycles)});
    if (limits.max_instructions)
        args.insert(args.end(), {"--max-instructions", std::to_string(*limits.max_instructions)});
    if (measure_tiles)
        args.insert(args.end(), {"--tiling", "measure"});
    return args;
}

// The host bytes a point's process needs (run_bytes_estimate); 0 where the
// point is bad input, which its process reports.
uint64_t point_bytes(const SweepPoint &p)
{
    RunOptions o;
    o.kernel = p.kernel_file;
    o.dtype = p.dtype;
    o.config = p.config;
    try {
        o.shape = parse_shape(p.shape);
        return run_bytes_estimate(o);
    } catch (const std::exception &) {
        return 0;
    }
}

// Starts one point as a child process writing DIR/log.txt; -1: fork failed.
pid_t start_point(const std::vector<std::string> &args, const std::string &dir, const SignalGate &gate)
{
    const std::string log = dir + "/log.txt";
    std::vector<char *> argv;
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t sweep = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    // The point dies with the sweep, even a SIGKILLed one; if the sweep died
    // before prctl, the parent is already another process.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != sweep)
        _exit(127);
    gate.restore_in_child();
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    execv(argv[0], argv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
}

std::string last_line(const std::string &text)
{
    std::string t = text;
    while (!t.empty() && t.back() == '\n')
        t.pop_back();
    size_t nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

std::string format_eta(double seconds)
{
    char buf[32];
    unsigned s = unsigned(seconds + 0.5);
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%uh%02um", s / 3600, s / 60 % 60);
    else
        std::snprintf(buf, sizeof buf, "%um%02us", s / 60, s % 60);
    return buf;
}

void flatten(const nlohmann::json &j, const std::string &prefix, std::map<std::string, std::string> &out)
{
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); i++)
            flatten(j[i], prefix + "." + std::to_string(i), out);
    } else if (j.is_string()) {
        out[prefix] = j.get<std::string>();
    } else if (j.is_null()) {
        out[prefix] = "";  // an infinite error: an empty CSV cell, NaN to a reader, never a small number
    } else {
        out[prefix] = json_text(j);
    }
}

std::string csv_field(const std::string &s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

// A point of DIR/points.json as the sweep writes it: an object whose id
// names a folder of DIR/points/ (no slash), with a whole index, the
// kernel and dtype, and its overrides as text. Anything else (a file edited
// by hand, or another tool's) is one line naming the point and the key.
static void check_manifest_point(const std::string &dir, size_t n, const nlohmann::json &p)
{
    const std::string where = dir + "/points.json: point " + std::to_string(n) + ": ";
    if (!p.is_object())
        throw Error(where + "expected an object");
    const auto &id = p.find("id");
    if (id == p.end() || !id->is_string() || id->get<std::string>().empty() || *id == "." || *id == ".." ||
        id->get<std::string>().find('/') != std::string::npos)
        throw Error(where + "'id' must name a folder of points/");
    if (!p.contains("index") || !p["index"].is_number_unsigned())
        throw Error(where + "'index' must be a whole number");
    for (const char *key : {"kernel", "dtype"})
        if (!p.contains(key) || !p[key].is_string())
            throw Error(where + "'" + key + "' must be a string");
    const auto &overrides = p.find("overrides");
    if (overrides == p.end() || !overrides->is_object())
        throw Error(where + "'overrides' must be an object");
    for (auto it = overrides->begin(); it != overrides->end(); ++it)
        if (!it->is_string())
            throw Error(where + "overrides." + it.key() + " must be a string");
}

// The ids listed in DIR/points.json, in order; empty if there is none.
std::vector<std::string> manifest_ids(const std::string &dir)
{
    std::vector<std::string> ids;
    const std::string text = read_text(dir + "/points.json");
    if (text.empty())
        return ids;
    nlohmann::json m = nlohmann::json::parse(text, nullptr, false);
    if (m.is_discarded() || !m.is_array())
        throw Error(dir + "/points.json: not valid JSON");
    for (size_t i = 0; i < m.size(); i++) {
        check_manifest_point(dir, i, m[i]);
        ids.push_back(m[i]["id"].get<std::string>());
    }
    return ids;
}

// What a spec runs, in a canonical form (DIR/spec.json): the base config's
// values (not its path or text), the lists and the overrides. Not the limits:
// rerunning the points a limit stopped with a higher one is the same sweep.
nlohmann::json spec_fingerprint(const SweepSpec &s)
{
    nlohmann::json base = nlohmann::json::object(), set = nlohmann::json::object();
    for (const auto &kv : config_values(s.base.empty() ? default_config() : load_config(s.base)))
        base[kv.first] = kv.second;
    for (const auto &kv : s.set)
        set[kv.first] = kv.second;
    auto axes_json = [](const std::vector<SweepAxis> &axes) {
        nlohmann::json a = nlohmann::json::array();
        for (const SweepAxis &x : axes)
            a.push_back({{x.key, x.values}});
        return a;
    };
    nlohmann::json f = {{"base", base}, {"kernels", s.kernels}, {"dtypes", s.dtypes}, {"shapes", s.shapes},
                        {"set", set},   {"grid", axes_json(s.grid)}, {"zip", axes_json(s.zip)}};
    if (s.measure_tiles)  // absent for the rule, so folders written before the key existed still match
        f["tiling"] = "measure";
    return f;
}

std::string value_text(const nlohmann::json &j)
{
    return j.is_null() ? "unset" : j.is_string() ? j.get<std::string>() : json_text(j);
}

// The first field two fingerprints differ in, down to the key in base and
// set: "base.core.vlen: 128 there, 256 in this spec"; "" if none.
std::string first_difference(const nlohmann::json &there, const nlohmann::json &here)
{
    for (const char *field : {"base", "kernels", "dtypes", "shapes", "set", "grid", "zip", "tiling"}) {
        nlohmann::json a = there.value(field, nlohmann::json()), b = here.value(field, nlohmann::json());
        if (a == b)
            continue;
        std::string name = field;
        if (a.is_object() && b.is_object()) {
            nlohmann::json keys = a;
            keys.update(b);
            for (auto it = keys.begin(); it != keys.end(); ++it) {
                nlohmann::json x = a.value(it.key(), nlohmann::json()), y = b.value(it.key(), nlohmann::json());
                if (x != y) {
                    name += "." + it.key();
                    a = x;
                    b = y;
                    break;
                }
            }
        }
        return name + ": " + value_text(a) + " there, " + value_text(b) + " in this spec";
    }
    return "";
}

// A folder belongs to one spec: its spec.json must record this spec's content
// and its points.json list exactly these points (the same spec again resumes;
// shards of one spec agree). A folder from before spec.json is judged by the
// points alone.
void check_folder_is_ours(const std::string &dir, const nlohmann::json &fingerprint,
                          const std::vector<SweepPoint> &points)
{
    const std::string recorded = read_text(dir + "/spec.json");
    if (!recorded.empty()) {
        nlohmann::json there = nlohmann::json::parse(recorded, nullptr, false);
        if (there.is_discarded() || !there.is_object())
            throw Error(dir + "/spec.json: not valid JSON");
        const std::string diff = first_difference(there, fingerprint);
        if (!diff.empty())
            throw Error(dir + ": holds the sweep of another spec (" + diff + "); use another output folder");
    }
    const std::vector<std::string> ids = manifest_ids(dir);
    if (ids.empty())
        return;
    size_t i = 0;
    while (i < ids.size() && i < points.size() && ids[i] == points[i].id)
        i++;
    if (i == ids.size() && i == points.size())
        return;
    throw Error(dir + ": holds another sweep's points (" + std::to_string(ids.size()) + " points, this spec has " +
                std::to_string(points.size()) + ", first difference at point " + std::to_string(i) +
                "); use another output folder");
}

// Results (a status or stats.json) in DIR/points/ for ids that points.json
// does not list came from another sweep: merging without them would drop
// them silently.
void check_no_foreign_results(const std::string &dir)
{
    const std::vector<std::string> listed = manifest_ids(dir);
    const std::set<std::string> ids(listed.begin(), listed.end());
    std::set<std::string> foreign;
    if (DIR *d = opendir((dir + "/points").c_str())) {
        while (const struct dirent *e = readdir(d)) {
            const std::string id = e->d_name;
            const std::string pdir = dir + "/points/" + id;
            if (id != "." && id != ".." && !ids.count(id) &&
                (file_exists(pdir + "/status") || file_exists(pdir + "/stats.json")))
                foreign.insert(id);
        }
        closedir(d);
    }
    if (!foreign.empty())
        throw Error(dir + "/points: " + std::to_string(foreign.size()) + " result(s) of points that points.json " +
                    "does not list (e.g. " + *foreign.begin() + "), from another sweep; move them to their own folder");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> sweep_folder_files(const std::string &dir)
{
    std::vector<std::pair<std::string, std::string>> files;
    for (const char *name : {"points.json", "spec.json"})
        files.emplace_back(std::string("the sweep folder's ") + name, dir + "/" + name);
    for (const std::string &id : manifest_ids(dir))
        for (const char *name : {"stats.json", "status", "config.yaml", "point.json", "log.txt"})
            files.emplace_back("point " + id + "'s " + name, dir + "/points/" + id + "/" + name);
    return files;
}

std::optional<uint64_t> parse_count(const std::string &text)
{
    if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    errno = 0;
    unsigned long long n = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE)
        return std::nullopt;
    return n;
}

std::pair<unsigned, unsigned> parse_shard(const std::string &text)
{
    // Digits only, at most 9 of them: sscanf's %u took "-1" and wrapped
    // 4294967298 to 2 without a word.
    auto number = [](const std::string &digits, unsigned &out) {
        if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
            return false;
        out = unsigned(std::stoul(digits));
        return true;
    };
    const size_t slash = text.find('/');
    unsigned i = 0, n = 0;
    if (slash == std::string::npos || !number(text.substr(0, slash), i) || !number(text.substr(slash + 1), n) ||
        n == 0 || i >= n)
        throw Error("shard " + text + ": expected i/n with 0 <= i < n");
    return {i, n};
}

static SweepSpec sweep_from_node(const YAML::Node &root, const std::string &path);

SweepSpec load_sweep(const std::string &path)
{
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error(path + ": cannot open sweep spec");
    // An empty file is a spec of nothing, as one of comments is (the stream
    // copy of an empty file fails, which said "cannot open").
    return load_sweep_text(read_file(path), path);
}

SweepSpec load_sweep_text(const std::string &text, const std::string &path)
{
    return sweep_from_node(load_one_yaml_document(text, path, "a sweep spec"), path);
}

static SweepSpec sweep_from_node(const YAML::Node &root, const std::string &path)
{
    SweepSpec s;
    s.path = path;
    if (!root.IsMap())
        throw Error(path + ": a sweep spec is a mapping (base, kernels, dtypes, shapes, set, grid, zip, limits, tiling)");
    std::map<std::string, int> seen;
    std::vector<Manifest> manifests;  // the kernels', in order
    for (const auto &kv : root) {
        const std::string key = kv.first.Scalar();
        const YAML::Node &v = kv.second;
        if (key == "base" || key == "kernels" || key == "dtypes" || key == "shapes" || key == "set" ||
            key == "grid" || key == "zip" || key == "limits" || key == "tiling")
            check_unique_key(seen, kv.first, path, key);
        if (key == "base") {
            const std::string b = beside_spec(scalar_text(v, path, key), path);
            if (!file_exists(b))
                throw Error(yaml_where(path, v.Mark()) + "base: no such config file '" + b + "'");
            s.base = b;
        } else if (key == "kernels") {
            s.kernels = string_list(v, path, key);
            for (size_t i = 0; i < s.kernels.size(); i++) {
                // A path is taken from the spec's folder, as base: is.
                const std::string &k = s.kernels[i];
                const std::string file = names_kernel_file(k) ? beside_spec(k, path) : k;
                s.kernel_files.push_back(file);
                try {
                    manifests.push_back(load_manifest(resolve_kernel(file)));
                } catch (const Error &e) {
                    throw Error(yaml_where(path, item_mark(v, i)) + "kernels: " + e.what());
                }
            }
        } else if (key == "dtypes") {
            s.dtypes = string_list(v, path, key);
            for (size_t i = 0; i < s.dtypes.size(); i++)
                if (s.dtypes[i] != "fp16" && s.dtypes[i] != "fp32")
                    throw Error(yaml_where(path, item_mark(v, i)) + "dtypes: unknown dtype '" + s.dtypes[i] +
                                "' (fp16, fp32)");
        } else if (key == "shapes") {
            s.shapes = string_list(v, path, key);
            // A point's shape is the one `npusim run --shape` reads, N,C,H,W
            // as it runs: "16,8,8" and "1,16,8,8" are one run, one id.
            for (size_t i = 0; i < s.shapes.size(); i++) {
                std::vector<uint64_t> dims;
                try {
                    dims = parse_shape(s.shapes[i]);
                } catch (const Error &e) {
                    std::string why = e.what();
                    if (why.rfind("shape: ", 0) == 0)
                        why.erase(0, 7);
                    throw Error(yaml_where(path, item_mark(v, i)) + "shapes: '" + s.shapes[i] + "': " + why);
                }
                std::string run;
                for (uint64_t d : dims)
                    run += (run.empty() ? "" : ",") + std::to_string(d);
                if (std::find(s.shapes.begin(), s.shapes.begin() + long(i), run) != s.shapes.begin() + long(i))
                    throw Error(yaml_where(path, item_mark(v, i)) + "shapes: '" + s.shapes[i] + "' is listed twice (as " +
                                run + "; its points would share one id)");
                s.shapes[i] = run;
            }
        } else if (key == "set") {
            if (!v.IsMap())
                throw Error(yaml_where(path, v.Mark()) + "set: expected a mapping of config keys to values");
            std::map<std::string, int> set_seen;
            for (const auto &e : v) {
                check_key(e.first.Scalar(), yaml_where(path, e.first.Mark()) + "set.");
                check_unique_key(set_seen, e.first, path, "set." + e.first.Scalar());
                check_one_section(s, e.first.Scalar(), "set", yaml_where(path, e.first.Mark()));
                s.set.emplace_back(e.first.Scalar(), scalar_text(e.second, path, "set." + e.first.Scalar(),
                                                                 is_list_key(e.first.Scalar())));
                check_value(s.set.back().first, s.set.back().second, yaml_where(path, e.second.Mark()) + "set.");
            }
        } else if (key == "grid") {
            s.grid = axes(v, path, "grid", s);
        } else if (key == "zip") {
            s.zip = axes(v, path, "zip", s);
            for (const SweepAxis &a : s.zip)
                if (a.values.size() != s.zip[0].values.size())
                    throw Error(yaml_where(path, v.Mark()) + "zip." + a.key + ": has " + std::to_string(a.values.size()) +
                                " values but zip." + s.zip[0].key + " has " + std::to_string(s.zip[0].values.size()) +
                                " (zip lists move in lock-step)");
        } else if (key == "limits") {
            s.limits = limits_from(v, path);
        } else if (key == "tiling") {
            const std::string t = scalar_text(v, path, key);
            if (t != "rule" && t != "measure")
                throw Error(yaml_where(path, v.Mark()) + "tiling: '" + t + "' is not rule or measure");
            s.measure_tiles = t == "measure";
        } else {
            throw Error(yaml_where(path, kv.first.Mark()) + key +
                        ": unknown key (base, kernels, dtypes, shapes, set, grid, zip, limits, tiling)");
        }
    }
    if (s.kernels.empty())
        throw Error(path + ": kernels: at least one kernel is needed");
    const bool dtypes_given = !s.dtypes.empty();
    if (!dtypes_given)
        s.dtypes = {"fp16"};
    // kernels x dtypes: a kernel without one of the dtypes would fail its points.
    for (size_t i = 0; i < manifests.size(); i++) {
        const Manifest &m = manifests[i];
        for (const std::string &d : s.dtypes)
            if (!m.supports(d))
                throw Error(yaml_where(path, item_mark(root["kernels"], i)) + "kernels: kernel '" + m.name +
                            "' does not support dtype " + d +
                            (dtypes_given ? " (dtypes lists it)" : " (the default dtypes; give dtypes)"));
    }
    if (s.shapes.empty())
        s.shapes = {"1,64,56,56"};
    // kernels x shapes: a matmul's shape is M,K,N (1,M,K,N as the run reads
    // it); a convolution's map, with its default parameters, takes any shape
    // within the runner's 65,535 rows and columns.
    for (size_t i = 0; i < manifests.size(); i++) {
        const Manifest &m = manifests[i];
        for (size_t j = 0; j < s.shapes.size(); j++) {
            const std::vector<uint64_t> dims = parse_shape(s.shapes[j]);
            std::string why;
            if (m.op == Op::matmul && dims[0] != 1)
                why = "a matmul takes M,K,N";
            if (m.op == Op::conv2d && (dims[2] > 65535 || dims[3] > 65535))
                why = "a convolution takes a feature map of at most 65,535 rows and columns";
            if (why.empty())
                continue;
            const YAML::Mark at = root["shapes"] ? item_mark(root["shapes"], j) : item_mark(root["kernels"], i);
            throw Error(yaml_where(path, at) + "shapes: '" + s.shapes[j] + "': kernel '" + m.name + "': " + why);
        }
    }
    return s;
}

std::string point_id(const Config &cfg, const std::string &kernel, const std::string &dtype, const std::string &shape,
                     bool measure_tiles)
{
    char buf[17];
    // Measured tiles are another run (the rule's points keep the ids they had).
    std::snprintf(buf, sizeof buf, "%016llx",
                  (unsigned long long)fnv1a(config_to_yaml(cfg) + "\nkernel=" + kernel + "\ndtype=" + dtype +
                                            "\nshape=" + shape + (measure_tiles ? "\ntiling=measure" : "")));
    return buf;
}

uint64_t sweep_point_count(const SweepSpec &spec)
{
    std::vector<uint64_t> factors = {spec.kernels.size(), spec.dtypes.size(), spec.shapes.size()};
    for (const SweepAxis &a : spec.grid)
        factors.push_back(a.values.size());
    if (!spec.zip.empty())
        factors.push_back(spec.zip[0].values.size());
    uint64_t n = 1;
    for (uint64_t f : factors)
        if (__builtin_mul_overflow(n, f, &n))
            return UINT64_MAX;
    return n;
}

std::vector<SweepPoint> expand_sweep(const SweepSpec &spec)
{
    const uint64_t count = sweep_point_count(spec);
    if (count > kMaxSweepPoints)
        throw Error(spec.path + ": " + (count == UINT64_MAX ? "more than " : "") + std::to_string(count) +
                    " points; a sweep may have at most " + std::to_string(kMaxSweepPoints) +
                    " (split it into several specs)");
    // Config combinations: grid crossed (last key fastest), times zip rows.
    std::vector<std::vector<std::pair<std::string, std::string>>> combos = {{}};
    for (const SweepAxis &a : spec.grid) {
        std::vector<std::vector<std::pair<std::string, std::string>>> next;
        for (const auto &c : combos)
            for (const std::string &v : a.values) {
                auto e = c;
                e.emplace_back(a.key, v);
                next.push_back(e);
            }
        combos = next;
    }
    if (!spec.zip.empty()) {
        std::vector<std::vector<std::pair<std::string, std::string>>> next;
        for (const auto &c : combos)
            for (size_t row = 0; row < spec.zip[0].values.size(); row++) {
                auto e = c;
                for (const SweepAxis &a : spec.zip)
                    e.emplace_back(a.key, a.values[row]);
                next.push_back(e);
            }
        combos = next;
    }
    const Config base = spec.base.empty() ? default_config() : load_config(spec.base);
    std::vector<SweepPoint> points;
    points.reserve(count);
    std::map<std::string, size_t> first_with_id;
    for (size_t k = 0; k < spec.kernels.size(); k++)
        for (const std::string &dtype : spec.dtypes)
            for (const std::string &shape : spec.shapes)
                for (const auto &combo : combos) {
                    SweepPoint p;
                    p.index = points.size();
                    p.kernel = spec.kernels[k];
                    p.kernel_file = k < spec.kernel_files.size() ? spec.kernel_files[k] : spec.kernels[k];
                    p.dtype = dtype;
                    p.shape = shape;
                    p.overrides = spec.set;
                    p.overrides.insert(p.overrides.end(), combo.begin(), combo.end());
                    p.config = base;
                    for (const auto &kv : p.overrides)
                        apply_override(p.config, kv.first + "=" + kv.second);
                    try {
                        validate_config(p.config);
                    } catch (const Error &e) {
                        throw Error(spec.path + ": point " + std::to_string(p.index) + ": " + e.what());
                    }
                    p.config.source = "sweep point";
                    p.id = point_id(p.config, p.kernel, dtype, shape, spec.measure_tiles);
                    auto [it, fresh] = first_with_id.emplace(p.id, p.index);
                    if (!fresh)
                        throw Error(spec.path + ": points " + std::to_string(it->second) + " and " +
                                    std::to_string(p.index) + " are the same point (id " + p.id +
                                    ": their overrides resolve to one config)");
                    points.push_back(p);
                }
    return points;
}

SweepResult run_sweep(const SweepSpec &spec, const std::vector<SweepPoint> &points, const SweepRunOptions &opts)
{
    const nlohmann::json fingerprint = spec_fingerprint(spec);
    check_folder_is_ours(opts.out_dir, fingerprint, points);
    make_dirs(opts.out_dir + "/points");
    check_sweep_fits(opts.out_dir, points.size(), 64 << 10);  // ~64 KiB per point (no traces)
    write_file_atomic(opts.out_dir + "/spec.json", json_text(fingerprint, 1) + "\n");
    nlohmann::json manifest = nlohmann::json::array();
    for (const SweepPoint &p : points)
        manifest.push_back(point_json(p));
    write_file_atomic(opts.out_dir + "/points.json", json_text(manifest, 1) + "\n");

    std::vector<const SweepPoint *> todo;
    size_t already = 0, mine = 0;
    for (const SweepPoint &p : points) {
        if (p.index % opts.shards != opts.shard)
            continue;
        mine++;
        std::string status = read_text(opts.out_dir + "/points/" + p.id + "/status");
        if (status.rfind("ok", 0) == 0)
            already++;
        else
            todo.push_back(&p);
    }
    SweepLimits limits = spec.limits;
    if (opts.limits.max_cycles)
        limits.max_cycles = opts.limits.max_cycles;
    if (opts.limits.max_instructions)
        limits.max_instructions = opts.limits.max_instructions;
    const unsigned jobs = opts.jobs ? opts.jobs : usable_cores();
    struct Running {
        const SweepPoint *point;
        uint64_t bytes;  // its share of the host's memory (room, below)
    };
    std::map<pid_t, Running> running;
    size_t next = 0, done = 0;
    unsigned failed = 0, stopped = 0;  // stopped: by a signal, left without a status
    auto t0 = std::chrono::steady_clock::now();
    auto last_beat = t0;
    auto report = [&](bool final) {
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double eta = done ? el / double(done) * double(todo.size() - done) : 0.0;
        char line[200];
        std::snprintf(line, sizeof line, "sweep: %zu/%zu points done (%zu skipped as already done, %u failed)%s%s",
                      done + already, mine, already, failed, final ? "" : ", ETA ", final ? "" : format_eta(eta).c_str());
        if (opts.progress_tty) {
            const size_t width = 30, filled = mine ? (done + already) * width / mine : width;
            std::fprintf(stderr, "\r[%s%s] %s", std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
                         line + 7);
            if (final)
                std::fputc('\n', stderr);
        } else {
            std::fprintf(stderr, "%s\n", line);
        }
        std::fflush(stderr);
    };
    // Points side by side share the host's memory: each checks its own
    // alone when it starts, so a point that fits alone but not beside the
    // points running waits for one of them to end (MemoryRoom, as runs in
    // threads are admitted), and -j decides when a point runs, never whether
    // it fits. An estimate that cannot be made is 0: the point says why.
    MemoryRoom room;
    std::optional<uint64_t> need;  // todo[next]'s
    const SignalGate gate;
    bool forwarded = false;
    while ((!stop_signal && next < todo.size()) || !running.empty()) {
        while (!stop_signal && next < todo.size() && running.size() < jobs) {
            if (!need)
                need = point_bytes(*todo[next]);
            const uint64_t available = host_memory_available();
            if (!room.empty() && !room.fits(*need, available))
                break;
            const SweepPoint &p = *todo[next++];
            std::string dir = opts.out_dir + "/points/" + p.id;
            make_dirs(dir);
            std::remove((dir + "/status").c_str());
            write_file_atomic(dir + "/config.yaml", config_to_yaml(p.config));
            write_file_atomic(dir + "/point.json", json_text(point_json(p), 1) + "\n");
            pid_t pid = start_point(point_args(p, dir, opts.npusim_exe, limits, spec.measure_tiles), dir, gate);
            if (pid < 0)
                throw Error(std::string("cannot start a point process: ") + std::strerror(errno));
            running[pid] = {&p, *need};
            room.take(*need, available);
            need.reset();
        }
        if (stop_signal && !forwarded) {
            for (const auto &r : running)
                kill(r.first, SIGTERM);
            forwarded = true;
        }
        int st = 0;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid == 0) {
            gate.wait();
            continue;
        }
        if (pid < 0)
            break;
        auto it = running.find(pid);
        if (it == running.end())
            continue;
        const SweepPoint &p = *it->second.point;
        room.give(it->second.bytes);
        running.erase(it);
        // Stopped with the sweep, or by a stop signal of its own (a
        // terminal's ^C reaches the points too, and one may be reaped before
        // the sweep sees its own): no status, so the next run runs it.
        if (WIFSIGNALED(st) &&
            (stop_signal || std::find(std::begin(kStopSignals), std::end(kStopSignals), WTERMSIG(st)) !=
                                std::end(kStopSignals))) {
            stopped++;
            continue;
        }
        std::string dir = opts.out_dir + "/points/" + p.id;
        std::string status;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            status = "ok\n";
        } else {
            failed++;
            std::string why = last_line(read_text(dir + "/log.txt"));
            if (why.empty())
                why = WIFEXITED(st) ? "exit status " + std::to_string(WEXITSTATUS(st))
                                    : std::string("killed by signal ") + std::to_string(WTERMSIG(st)) + " (" +
                                          strsignal(WTERMSIG(st)) + ")";
            status = "failed: " + why + "\n";
        }
        write_file_atomic(dir + "/status", status);
        done++;
        auto now = std::chrono::steady_clock::now();
        if (opts.progress_tty || std::chrono::duration<double>(now - last_beat).count() >= 10.0) {
            report(false);
            last_beat = now;
        }
    }
    report(true);
    if (stop_signal)
        std::fprintf(stderr,
                     "sweep: stopped by signal %d (%s); the points it stopped have no status and run on the next run\n",
                     int(stop_signal), strsignal(stop_signal));
    else if (stopped) {
        // Points stopped from outside: not done, so the sweep is not either.
        std::fprintf(stderr, "sweep: %u point%s stopped by a signal; %s no status and run%s on the next run\n", stopped,
                     stopped == 1 ? " was" : "s were", stopped == 1 ? "it has" : "they have", stopped == 1 ? "s" : "");
        failed += stopped;
    }
    return {failed, stop_signal};
}

MergeSummary merge_sweep(const std::string &dir, const std::string &csv_path, const std::string &jsonl_path)
{
    std::string manifest_text = read_text(dir + "/points.json");
    if (manifest_text.empty())
        throw Error(dir + ": not a sweep folder (no points.json)");
    nlohmann::json manifest = nlohmann::json::parse(manifest_text, nullptr, false);
    if (manifest.is_discarded() || !manifest.is_array())
        throw Error(dir + "/points.json: not valid JSON");
    check_no_foreign_results(dir);  // and every point's entry (manifest_ids)
    MergeSummary sum;
    std::vector<std::map<std::string, std::string>> rows;
    std::set<std::string> stat_cols, param_cols;
    std::string jsonl;
    for (const auto &p : manifest) {
        sum.points++;
        const std::string id = p["id"].get<std::string>();
        const std::string pdir = dir + "/points/" + id;
        std::string status = last_line(read_text(pdir + "/status"));
        std::string stats = read_text(pdir + "/stats.json");
        if (status.empty()) {
            sum.missing++;
            continue;
        }
        nlohmann::json j = nlohmann::json::parse(stats, nullptr, false);
        const bool has_stats = !j.is_discarded() && j.is_object();
        // A point that ended ok has its stats: without them (removed, cut
        // short, not JSON) it is failed, never a row of empty cells.
        if (status.rfind("ok", 0) == 0 && !has_stats)
            status = stats.empty() ? "ok, but its stats.json is missing" : "ok, but its stats.json is not a JSON object";
        if (status.rfind("ok", 0) != 0 || !has_stats)
            sum.failed++;
        else
            sum.done++;
        std::map<std::string, std::string> row;
        row["point.index"] = std::to_string(p["index"].get<uint64_t>());
        row["point.id"] = id;
        row["point.status"] = status.rfind("ok", 0) == 0 && has_stats ? "ok" : status;
        for (auto it = p["overrides"].begin(); it != p["overrides"].end(); ++it) {
            row["param." + it.key()] = it.value().get<std::string>();
            param_cols.insert("param." + it.key());
        }
        if (has_stats) {
            j.erase("sim");  // host timing: not part of the result, differs run to run
            if (j.contains("config") && j["config"].is_object())
                j["config"].erase("source");  // the point folder's path, not the point
            nlohmann::json wide = j;
            wide.erase("stall_pcs");  // per-PC detail stays in the JSONL, not in the table
            wide.erase("opcodes");
            std::map<std::string, std::string> flat;
            flatten(wide, "", flat);
            for (const auto &kv : flat) {
                row[kv.first] = kv.second;
                stat_cols.insert(kv.first);
            }
            nlohmann::json rec = j;
            rec["point"] = p;
            rec["point"]["status"] = row["point.status"];
            jsonl += json_text(rec) + "\n";
        }
        row["kernel"] = p["kernel"].get<std::string>();
        row["dtype"] = p["dtype"].get<std::string>();
        rows.push_back(row);
    }
    std::vector<std::string> cols = {"point.index", "point.id", "point.status"};
    cols.insert(cols.end(), param_cols.begin(), param_cols.end());
    for (const std::string &c : stat_cols)
        cols.push_back(c);
    std::string csv;
    for (size_t i = 0; i < cols.size(); i++)
        csv += (i ? "," : "") + csv_field(cols[i]);
    csv += "\n";
    for (const auto &row : rows) {
        for (size_t i = 0; i < cols.size(); i++) {
            auto it = row.find(cols[i]);
            csv += (i ? "," : "") + csv_field(it == row.end() ? "" : it->second);
        }
        csv += "\n";
    }
    write_file_atomic(csv_path, csv);
    if (!jsonl_path.empty())
        write_file_atomic(jsonl_path, jsonl);
    return sum;
}

}  // namespace npusim
