// The config schema and its YAML loader.
#include "config.h"

#include <yaml-cpp/yaml.h>

#include <sstream>

#include "error.h"

namespace npusim {
namespace {

#define INT_KEY(path, def, lo, hi, unit, desc, field)                                          \
    ConfigKey{path, KeyType::Int, (def) ? (def) : "", lo, hi, "", unit, desc,                   \
              [](Config &c, int64_t v) { c.field = decltype(c.field)(v); },                    \
              [](const Config &c) { return int64_t(c.field); }}

#define UNIT_KEYS(name, u, what)                                                               \
    INT_KEY("units." name ".count", nullptr, 1, NPU_MAX_UNIT_COUNT, "", "instances of the " what, \
            timing.unit[u].count),                                                             \
    INT_KEY("units." name ".latency", nullptr, 1, 10000, "cycles", "issue to result of the " what, \
            timing.unit[u].latency),                                                           \
    INT_KEY("units." name ".interval", nullptr, 1, 10000, "cycles",                            \
            "initiation interval of the " what " (1 = fully pipelined)", timing.unit[u].interval)

std::vector<ConfigKey> build_schema()
{
    std::vector<ConfigKey> k = {
        INT_KEY("core.vlen", nullptr, NPU_VLEN_MIN, NPU_VLEN_MAX, "bits",
                "vector register width, a power of two (256 = one C0 block: 16 fp16 or 8 fp32 lanes)", core.vlen_bits),
        INT_KEY("core.ub_bytes", nullptr, 32768, int64_t(1) << 30, "bytes", "unified buffer (UB) capacity per core",
                core.ub_bytes),
        INT_KEY("issue.width", nullptr, 1, NPU_MAX_ISSUE_WIDTH, "slots", "issue slots W: instructions issued per cycle at most",
                timing.issue_width),
        ConfigKey{"issue.slots", KeyType::SlotList, "", 0, 0, "", "",
                  "classes each slot accepts, slot 0 first: a list of class sets like scalar+branch+sync "
                  "(classes: scalar, branch, vector, mem, dma, sync; any = all of them)", nullptr, nullptr},
        INT_KEY("issue.branch_penalty", nullptr, 0, 1000, "cycles", "cycles lost after a mispredicted branch (static prediction: backward conditional branches and direct jumps taken, forward ones not)",
                timing.branch_penalty),
        UNIT_KEYS("scalar", UNIT_SCALAR, "scalar ALU"),
        UNIT_KEYS("branch", UNIT_BRANCH, "branch unit"),
        UNIT_KEYS("valu", UNIT_VALU, "vector ALUs (add, mul, fma, compare, select, convert)"),
        UNIT_KEYS("sfu", UNIT_SFU, "special-function unit (exp, ln, rcp, rsqrt, sqrt)"),
        UNIT_KEYS("lsu", UNIT_LSU, "UB load/store unit"),
        UNIT_KEYS("dma", UNIT_DMA, "DMA issue port"),
        UNIT_KEYS("sync", UNIT_SYNC, "sync unit (dmawait, barrier, halt)"),
        INT_KEY("ub.banks", nullptr, 1, 64, "banks", "UB banks shared by every LSU; an access takes as many cycles as bank words it needs in one bank",
                timing.ub_banks),
        INT_KEY("ub.bank_bytes", nullptr, 2, 4096, "bytes", "width of one UB bank", timing.ub_bank_bytes),
        ConfigKey{"sfu.mode", KeyType::Enum, "exact", 0, 0, "exact|approx", "",
                  "exact: exp/ln/rcp/rsqrt/sqrt correctly rounded; approx: results carry sfu.bits significant bits",
                  [](Config &c, int64_t v) { c.core.sfu_mode = v == 0 ? NPU_SFU_EXACT : NPU_SFU_APPROX; },
                  [](const Config &c) { return int64_t(c.core.sfu_mode == NPU_SFU_EXACT ? 0 : 1); }},
        INT_KEY("sfu.bits", "12", 8, 24, "bits", "significant bits of an approximate SFU result (sfu.mode: approx)",
                core.sfu_bits),
        INT_KEY("dma.bytes_per_cycle", nullptr, 1, 4096, "bytes/cycle", "bandwidth of each core's DMA engine",
                timing.dma_bytes_per_cycle),
        INT_KEY("dma.queue_depth", nullptr, 1, 64, "transfers", "DMA transfers in flight per core; one more waits",
                timing.dma_queue_depth),
        INT_KEY("dma.outstanding", nullptr, 1, 1024, "lines",
                "memory.model l2: L2 line requests in flight per core's DMA engine (it issues them at dma.bytes_per_cycle)",
                timing.dma_outstanding),
        ConfigKey{"memory.model", KeyType::Enum, "l2", 0, 0, "ideal|l2", "",
                  "l2: DMA through the shared L2 and the DRAM; ideal: an L2 that always hits with no bank, MSHR or DRAM limit "
                  "(a transfer completes l2.hit_latency cycles after its last byte left the DMA engine: an upper bound on l2)",
                  [](Config &c, int64_t v) { c.memory_l2 = v == 1; },
                  [](const Config &c) { return int64_t(c.memory_l2 ? 1 : 0); }},
        ConfigKey{"memory.warm_inputs", KeyType::Enum, "no", 0, 0, "no|yes", "",
                  "yes: every input tensor starts resident in the L2, as when the previous layer just wrote it "
                  "(the config form of run --warm-l2; memory.model: l2)",
                  [](Config &c, int64_t v) { c.warm_inputs = v == 1; },
                  [](const Config &c) { return int64_t(c.warm_inputs ? 1 : 0); }},
        INT_KEY("l2.size_bytes", nullptr, 1024, int64_t(1) << 34, "bytes", "L2 capacity (power of two)", l2.size_bytes),
        INT_KEY("l2.ways", nullptr, 1, NPU_L2_MAX_WAYS, "ways", "L2 associativity (power of two)", l2.ways),
        INT_KEY("l2.line_bytes", nullptr, 32, 4096, "bytes", "L2 line size (power of two, at least 32: one C0 block)",
                l2.line_bytes),
        ConfigKey{"l2.replacement", KeyType::Enum, "lru", 0, 0, "lru|plru|random", "",
                  "victim choice: true LRU, tree pseudo-LRU, or random (seeded by l2.seed)",
                  [](Config &c, int64_t v) { c.l2.replacement = npu_l2_replacement(v); },
                  [](const Config &c) { return int64_t(c.l2.replacement); }},
        INT_KEY("l2.seed", nullptr, 0, INT64_MAX, "", "seed of random replacement", l2.seed),
        ConfigKey{"l2.write_policy", KeyType::Enum, "write_back", 0, 0, "write_back|write_through", "",
                  "write_back: stores dirty lines, victims are written back; write_through: every store goes to DRAM",
                  [](Config &c, int64_t v) { c.l2.write_policy = npu_l2_write_policy(v); },
                  [](const Config &c) { return int64_t(c.l2.write_policy); }},
        ConfigKey{"l2.write_allocate", KeyType::Enum, "yes", 0, 0, "yes|no", "",
                  "yes: a store miss fills the line; no: it goes around the cache",
                  [](Config &c, int64_t v) { c.l2.write_allocate = v == 0; },
                  [](const Config &c) { return int64_t(c.l2.write_allocate ? 0 : 1); }},
        ConfigKey{"l2.full_line_write", KeyType::Enum, "allocate", 0, 0, "allocate|fetch", "",
                  "a store miss covering a whole line (a DMA writing full lines): allocate it without a read, or fetch it first",
                  [](Config &c, int64_t v) { c.l2.skip_fetch_on_full_write = v == 0; },
                  [](const Config &c) { return int64_t(c.l2.skip_fetch_on_full_write ? 0 : 1); }},
        // The ideal memory answers like an L2 hit, so it stays an upper bound on l2.
        ConfigKey{"l2.hit_latency", KeyType::Int, "", 1, 10000, "", "cycles",
                  "L2 hit latency (also the ideal memory's latency)",
                  [](Config &c, int64_t v) { c.l2.hit_latency = c.timing.dma_latency = unsigned(v); },
                  [](const Config &c) { return int64_t(c.l2.hit_latency); }},
        INT_KEY("l2.mshrs", nullptr, 1, NPU_L2_MAX_MSHRS, "", "L2 misses in flight at once (misses to one line merge)",
                l2.mshrs),
        INT_KEY("l2.banks", nullptr, 1, NPU_L2_MAX_BANKS, "banks", "L2 banks, interleaved by line", l2.banks),
        INT_KEY("l2.bank_interval", nullptr, 1, 1000, "cycles", "cycles an L2 bank is busy per access", l2.bank_interval),
        INT_KEY("dram.latency", nullptr, 0, 100000, "cycles", "DRAM latency after a request leaves its channel",
                dram.latency),
        INT_KEY("dram.bytes_per_cycle", nullptr, 1, 4096, "bytes/cycle", "peak bandwidth of one DRAM channel",
                dram.bytes_per_cycle),
        INT_KEY("dram.channels", nullptr, 1, NPU_DRAM_MAX_CHANNELS, "channels", "DRAM channels", dram.channels),
        INT_KEY("dram.interleave_bytes", nullptr, 32, 1 << 20, "bytes",
                "consecutive bytes on one DRAM channel before the next (power of two)", dram.interleave_bytes),
        INT_KEY("system.cores", "1", 1, 64, "cores", "vector cores running the kernel", cores),
        INT_KEY("sim.quantum", nullptr, 1, int64_t(1) << 40, "cycles",
                "temporal decoupling, a speed knob only: per turn a core runs until its clock passes the earliest "
                "core's + this (DMA transfers are booked in start order whatever it is, so no result changes)",
                timing.sim_quantum),
        ConfigKey{"sim.mode", KeyType::Enum, "timed", 0, 0, "timed|functional", "",
                  "timed: cycle-exact timing; functional: results and instruction counts only (faster)",
                  [](Config &c, int64_t v) { c.timed = v == 0; },
                  [](const Config &c) { return int64_t(c.timed ? 0 : 1); }},
    };
    // Defaults come from the C models' own defaults, so there is one source.
    Config d;
    d.core.vlen_bits = 256;
    d.core.ub_bytes = 256 * 1024;
    d.core.sfu_bits = 12;
    npu_timing_config_default(&d.timing);
    npu_l2_config_default(&d.l2);
    npu_dram_config_default(&d.dram);
    for (ConfigKey &key : k)
        if (key.default_text.empty() && key.get)
            key.default_text = std::to_string(key.get(d));
    for (ConfigKey &key : k)
        if (key.type == KeyType::SlotList) {
            std::string s;
            for (unsigned i = 0; i < d.timing.issue_width; i++)
                s += (i ? "," : "") + class_set_text(d.timing.slot_classes[i]);
            key.default_text = s;
        }
    return k;
}

#undef UNIT_KEYS
#undef INT_KEY

const std::vector<ConfigKey> &schema()
{
    static const std::vector<ConfigKey> s = build_schema();
    return s;
}

const ConfigKey *find_key(const std::string &path)
{
    for (const ConfigKey &k : schema())
        if (path == k.path)
            return &k;
    return nullptr;
}

std::string allowed(const ConfigKey &k)
{
    if (k.type == KeyType::Enum)
        return "one of " + k.choices;
    if (k.type == KeyType::SlotList)
        return "1 .. " + std::to_string(NPU_MAX_ISSUE_WIDTH) + " class sets";
    return std::to_string(k.min) + " .. " + std::to_string(k.max);
}


void set_slots(Config &cfg, const std::vector<std::string> &sets, const std::string &where)
{
    if (sets.empty() || sets.size() > NPU_MAX_ISSUE_WIDTH)
        throw Error(where + "issue.slots: expected 1 .. " + std::to_string(NPU_MAX_ISSUE_WIDTH) + " class sets, got " +
                    std::to_string(sets.size()));
    for (size_t i = 0; i < NPU_MAX_ISSUE_WIDTH; i++)
        cfg.timing.slot_classes[i] = i < sets.size() ? parse_class_set(sets[i], where + "issue.slots[" + std::to_string(i) + "]") : 0;
    cfg.timing.issue_width = unsigned(sets.size());
}

// Parses and range-checks a value, then stores it. `where` prefixes errors.
void set_key(Config &cfg, const ConfigKey &k, const std::string &value, const std::string &where)
{
    if (k.type == KeyType::SlotList) {
        std::vector<std::string> sets;
        std::stringstream ss(value);
        std::string part;
        while (std::getline(ss, part, ','))
            sets.push_back(part);
        set_slots(cfg, sets, where);
        return;
    }
    if (k.type == KeyType::Enum) {
        std::stringstream ss(k.choices);
        std::string c;
        for (int64_t i = 0; std::getline(ss, c, '|'); i++)
            if (c == value) {
                k.set(cfg, i);
                return;
            }
        throw Error(where + k.path + ": '" + value + "' is not " + allowed(k));
    }
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(value, &used, 0);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used == 0 || used != value.size())
        throw Error(where + k.path + ": expected an integer, got '" + value + "'");
    if (v < k.min || v > k.max)
        throw Error(where + k.path + ": " + value + " is out of range (" + allowed(k) +
                    (k.unit.empty() ? "" : " " + k.unit) + ")");
    if (k.path == "core.vlen" && (v & (v - 1)))
        throw Error(where + k.path + ": " + value + " is not a power of two (" + allowed(k) + ")");
    k.set(cfg, v);
}

std::string mark_prefix(const std::string &file, const YAML::Mark &m)
{
    return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

void load_node(Config &cfg, const YAML::Node &node, const std::string &prefix, const std::string &file)
{
    if (!node.IsMap())
        throw Error(mark_prefix(file, node.Mark()) + (prefix.empty() ? "config" : prefix) + ": expected a mapping");
    for (const auto &kv : node) {
        // A key must be a plain scalar: `{[1]: 2}` has a sequence as its key.
        if (!kv.first.IsScalar())
            throw Error(mark_prefix(file, kv.first.Mark()) + (prefix.empty() ? "config" : prefix) +
                        ": a key must be a plain name, not a list or a mapping");
        std::string key = kv.first.Scalar();
        std::string path = prefix.empty() ? key : prefix + "." + key;
        const ConfigKey *k = find_key(path);
        if (!k && kv.second.IsMap()) {
            bool is_section = false;
            for (const ConfigKey &s : schema())
                is_section |= s.path.rfind(path + ".", 0) == 0;
            if (!is_section)
                throw Error(mark_prefix(file, kv.first.Mark()) + path + ": unknown key");
            load_node(cfg, kv.second, path, file);
            continue;
        }
        if (!k)
            throw Error(mark_prefix(file, kv.first.Mark()) + path + ": unknown key");
        const std::string where = mark_prefix(file, kv.second.Mark());
        if (k->type == KeyType::SlotList) {
            if (!kv.second.IsSequence())
                throw Error(where + path + ": expected a list of class sets, e.g. [scalar+branch+sync, vector]");
            std::vector<std::string> sets;
            for (const auto &item : kv.second) {
                if (!item.IsScalar())
                    throw Error(mark_prefix(file, item.Mark()) + path + ": expected a class set like vector or mem+dma");
                sets.push_back(item.Scalar());
            }
            set_slots(cfg, sets, where);
            continue;
        }
        if (!kv.second.IsScalar())
            throw Error(where + path + ": expected a scalar value");
        set_key(cfg, *k, kv.second.Scalar(), where);
    }
}

}  // namespace

uint32_t parse_class_set(const std::string &text, const std::string &where)
{
    uint32_t mask = 0;
    if (text == "any")
        return (1u << NPU_NUM_CLASSES) - 1;
    std::stringstream ss(text);
    std::string name;
    while (std::getline(ss, name, '+')) {
        bool found = false;
        for (unsigned c = 0; c < NPU_NUM_CLASSES; c++)
            if (name == npu_class_name(npu_class(c))) {
                mask |= 1u << c;
                found = true;
            }
        if (!found)
            throw Error(where + ": unknown instruction class '" + name +
                        "' (scalar, branch, vector, mem, dma, sync)");
    }
    if (!mask)
        throw Error(where + ": empty class set");
    return mask;
}

std::string class_set_text(uint32_t mask)
{
    std::string s;
    for (unsigned c = 0; c < NPU_NUM_CLASSES; c++)
        if (mask & (1u << c))
            s += (s.empty() ? "" : "+") + std::string(npu_class_name(npu_class(c)));
    return s;
}

const std::vector<ConfigKey> &config_schema() { return schema(); }

Config default_config()
{
    Config cfg;
    for (const ConfigKey &k : schema())
        set_key(cfg, k, k.default_text, "<default> ");
    return cfg;
}

void validate_config(const Config &cfg)
{
    unsigned listed = 0;
    while (listed < NPU_MAX_ISSUE_WIDTH && cfg.timing.slot_classes[listed])
        listed++;
    if (listed != cfg.timing.issue_width)
        throw Error("issue.width: " + std::to_string(cfg.timing.issue_width) + " does not match the " +
                    std::to_string(listed) + " slots of issue.slots (set both, e.g. issue.slots=any,any for width 2)");
    char msg[160];
    if (npu_timing_config_check(&cfg.timing, msg, sizeof msg) != NPU_OK)
        throw Error(cfg.source + ": " + msg);
    if (npu_l2_config_check(&cfg.l2, msg, sizeof msg) != NPU_OK)
        throw Error(cfg.source + ": l2: " + msg);
    if (npu_dram_config_check(&cfg.dram, msg, sizeof msg) != NPU_OK)
        throw Error(cfg.source + ": dram: " + msg);
}

namespace {

// `base: other.yaml` at the top of a config file: load that first (relative
// to this file), then apply this file's keys over it. Chains are followed up
// to a depth limit; a cycle is an error.
Config load_with_bases(const std::string &path, std::vector<std::string> &chain)
{
    for (const std::string &p : chain)
        if (p == path)
            throw Error(path + ": base chain loops back to this file");
    if (chain.size() >= 16)
        throw Error(path + ": base chain deeper than 16 files");
    chain.push_back(path);
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::BadFile &) {
        throw Error(path + ": cannot open config file");
    } catch (const YAML::Exception &e) {
        throw Error(mark_prefix(path, e.mark) + e.msg);
    }
    Config cfg = default_config();
    if (root.IsMap() && root["base"]) {
        const YAML::Node b = root["base"];
        if (!b.IsScalar())
            throw Error(mark_prefix(path, b.Mark()) + "base: expected a config file name");
        std::string base = b.Scalar();
        if (!base.empty() && base[0] != '/') {
            size_t slash = path.rfind('/');
            base = (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + base;
        }
        cfg = load_with_bases(base, chain);
        root.remove("base");
    }
    if (!root.IsNull())
        load_node(cfg, root, "", path);
    cfg.source = path;
    return cfg;
}

}  // namespace

Config load_config(const std::string &path)
{
    std::vector<std::string> chain;
    return load_with_bases(path, chain);
}

Config load_config_text(const std::string &text, const std::string &name)
{
    Config cfg = default_config();
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception &e) {
        throw Error(mark_prefix(name, e.mark) + e.msg);
    }
    if (!root.IsNull())
        load_node(cfg, root, "", name);
    cfg.source = name;
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

std::vector<std::pair<std::string, std::string>> config_values(const Config &cfg)
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const ConfigKey &k : schema()) {
        std::string v;
        if (k.type == KeyType::SlotList) {
            for (unsigned i = 0; i < NPU_MAX_ISSUE_WIDTH && cfg.timing.slot_classes[i]; i++)
                v += (i ? "," : "") + class_set_text(cfg.timing.slot_classes[i]);
        } else if (k.type == KeyType::Enum) {
            std::stringstream ss(k.choices);
            std::string c;
            for (int64_t i = 0; std::getline(ss, c, '|'); i++)
                if (i == k.get(cfg))
                    v = c;
        } else {
            v = std::to_string(k.get(cfg));
        }
        out.emplace_back(k.path, v);
    }
    return out;
}

std::string config_to_yaml(const Config &cfg)
{
    YAML::Node root;
    for (const auto &kv : config_values(cfg)) {
        std::vector<std::string> parts;
        std::stringstream ss(kv.first);
        std::string p;
        while (std::getline(ss, p, '.'))
            parts.push_back(p);
        YAML::Node leaf;
        if (kv.first == "issue.slots") {
            std::stringstream vs(kv.second);
            std::string set;
            while (std::getline(vs, set, ','))
                leaf.push_back(set);
            leaf.SetStyle(YAML::EmitterStyle::Flow);
        } else {
            leaf = kv.second;
        }
        if (parts.size() == 2)
            root[parts[0]][parts[1]] = leaf;
        else
            root[parts[0]][parts[1]][parts[2]] = leaf;
    }
    YAML::Emitter out;
    out << root;
    return std::string(out.c_str()) + "\n";
}

std::string config_docs()
{
    std::ostringstream os;
    os << "| key | type | default | allowed | unit | description |\n|---|---|---|---|---|---|\n";
    for (const ConfigKey &k : schema())
        os << "| `" << k.path << "` | "
           << (k.type == KeyType::Int ? "int" : k.type == KeyType::Enum ? "enum" : "list") << " | "
           << k.default_text << " | " << allowed(k) << " | " << k.unit << " | " << k.description << " |\n";
    return os.str();
}

}  // namespace npusim
