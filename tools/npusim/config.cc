// The config schema and its YAML loader.
#include "config.h"

#include <yaml-cpp/yaml.h>

#include <sstream>

#include "error.h"

namespace npusim {
namespace {

const std::vector<ConfigKey> kSchema = {
    {"core.vlen", KeyType::Int, "256", NPU_VLEN_MIN, NPU_VLEN_MAX, nullptr, "bits",
     "vector register width; a power of two (256 = one C0 block: 16 fp16 or 8 fp32 lanes)"},
    {"core.ub_bytes", KeyType::Int, "262144", 1024, int64_t(1) << 30, nullptr, "bytes",
     "unified buffer (UB) capacity per core"},
    {"sfu.mode", KeyType::Enum, "exact", 0, 0, "exact|approx", nullptr,
     "exact: exp/ln/rcp/rsqrt/sqrt correctly rounded; approx: results carry sfu.bits significant bits"},
    {"sfu.bits", KeyType::Int, "12", 8, 24, nullptr, "bits",
     "significant bits of an approximate SFU result (sfu.mode: approx)"},
    {"system.cores", KeyType::Int, "1", 1, 64, nullptr, "cores", "vector cores running the kernel"},
};

const ConfigKey *find_key(const std::string &path)
{
    for (const ConfigKey &k : kSchema)
        if (path == k.path)
            return &k;
    return nullptr;
}

std::string allowed(const ConfigKey &k)
{
    if (k.type == KeyType::Enum)
        return std::string("one of ") + k.choices;
    return std::to_string(k.min) + " .. " + std::to_string(k.max);
}

// Parses and range-checks a value, then stores it. `where` prefixes errors.
void set_key(Config &cfg, const ConfigKey &k, const std::string &value, const std::string &where)
{
    std::string path = k.path;
    if (k.type == KeyType::Enum) {
        std::string choices = std::string("|") + k.choices + "|";
        if (value.empty() || choices.find("|" + value + "|") == std::string::npos)
            throw Error(where + path + ": '" + value + "' is not " + allowed(k));
        if (path == "sfu.mode")
            cfg.core.sfu_mode = value == "exact" ? NPU_SFU_EXACT : NPU_SFU_APPROX;
        return;
    }
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(value, &used, 0);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used == 0 || used != value.size())
        throw Error(where + path + ": expected an integer, got '" + value + "'");
    if (v < k.min || v > k.max)
        throw Error(where + path + ": " + value + " is out of range (" + allowed(k) +
                    (k.unit ? std::string(" ") + k.unit : "") + ")");
    if (path == "core.vlen") {
        if (v & (v - 1))
            throw Error(where + path + ": " + value + " is not a power of two (" + allowed(k) + ")");
        cfg.core.vlen_bits = unsigned(v);
    } else if (path == "core.ub_bytes") {
        cfg.core.ub_bytes = size_t(v);
    } else if (path == "sfu.bits") {
        cfg.core.sfu_bits = unsigned(v);
    } else if (path == "system.cores") {
        cfg.cores = unsigned(v);
    }
}

std::string mark_prefix(const std::string &file, const YAML::Mark &m)
{
    return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

void load_node(Config &cfg, const YAML::Node &node, const std::string &prefix, const std::string &file)
{
    if (!node.IsMap())
        throw Error(mark_prefix(file, node.Mark()) + (prefix.empty() ? "config" : prefix) +
                    ": expected a mapping");
    for (const auto &kv : node) {
        std::string key = kv.first.as<std::string>();
        std::string path = prefix.empty() ? key : prefix + "." + key;
        if (kv.second.IsMap()) {
            bool is_section = false;
            for (const ConfigKey &k : kSchema)
                is_section |= std::string(k.path).rfind(path + ".", 0) == 0;
            if (!is_section)
                throw Error(mark_prefix(file, kv.first.Mark()) + path + ": unknown key");
            load_node(cfg, kv.second, path, file);
            continue;
        }
        const ConfigKey *k = find_key(path);
        if (!k)
            throw Error(mark_prefix(file, kv.first.Mark()) + path + ": unknown key");
        if (!kv.second.IsScalar())
            throw Error(mark_prefix(file, kv.second.Mark()) + path + ": expected a scalar value");
        set_key(cfg, *k, kv.second.Scalar(), mark_prefix(file, kv.second.Mark()));
    }
}

}  // namespace

const std::vector<ConfigKey> &config_schema() { return kSchema; }

Config default_config()
{
    Config cfg;
    for (const ConfigKey &k : kSchema)
        set_key(cfg, k, k.default_text, "<default> ");
    cfg.core.num_cores = cfg.cores;
    return cfg;
}

Config load_config(const std::string &path)
{
    Config cfg = default_config();
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::BadFile &) {
        throw Error(path + ": cannot open config file");
    } catch (const YAML::Exception &e) {
        throw Error(mark_prefix(path, e.mark) + e.msg);
    }
    if (!root.IsNull())
        load_node(cfg, root, "", path);
    cfg.source = path;
    return cfg;
}

void apply_override(Config &cfg, const std::string &assignment)
{
    size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw Error("--set " + assignment + ": expected KEY=VALUE");
    std::string key = assignment.substr(0, eq);
    const ConfigKey *k = find_key(key);
    if (!k)
        throw Error("--set " + key + ": unknown key (see `npusim config docs`)");
    set_key(cfg, *k, assignment.substr(eq + 1), "--set ");
}

std::string config_to_yaml(const Config &cfg)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "core" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "vlen" << YAML::Value << cfg.core.vlen_bits;
    out << YAML::Key << "ub_bytes" << YAML::Value << cfg.core.ub_bytes;
    out << YAML::EndMap;
    out << YAML::Key << "sfu" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "mode" << YAML::Value << (cfg.core.sfu_mode == NPU_SFU_EXACT ? "exact" : "approx");
    out << YAML::Key << "bits" << YAML::Value << cfg.core.sfu_bits;
    out << YAML::EndMap;
    out << YAML::Key << "system" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "cores" << YAML::Value << cfg.cores;
    out << YAML::EndMap;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string config_docs()
{
    std::ostringstream os;
    os << "| key | type | default | allowed | unit | description |\n|---|---|---|---|---|---|\n";
    for (const ConfigKey &k : kSchema)
        os << "| `" << k.path << "` | " << (k.type == KeyType::Int ? "int" : "enum") << " | "
           << k.default_text << " | " << allowed(k) << " | " << (k.unit ? k.unit : "") << " | "
           << k.description << " |\n";
    return os.str();
}

}  // namespace npusim
