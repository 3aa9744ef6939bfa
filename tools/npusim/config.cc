// The config schema and its YAML loader.
#include "config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "error.h"
#include "manifest.h"  // resolve_config
#include "yaml_document.h"

namespace npusim {
namespace {

#define INT_KEY(path, def, lo, hi, unit, desc, field)                                          \
    ConfigKey{path, KeyType::Int, (def) ? (def) : "", lo, hi, "", unit, desc,                   \
              [](Config &c, int64_t v) { c.field = decltype(c.field)(v); },                    \
              [](const Config &c) { return int64_t(c.field); }, false, ""}

#define NPU_UNIT_KEYS(name, u, what)                                                               \
    INT_KEY("units." name ".count", nullptr, 1, NPU_MAX_UNIT_COUNT, "", "instances of the " what, \
            timing.unit[u].count),                                                             \
    INT_KEY("units." name ".latency", nullptr, 1, 10000, "cycles", "issue to result of the " what, \
            timing.unit[u].latency),                                                           \
    INT_KEY("units." name ".interval", nullptr, 1, 10000, "cycles",                            \
            "initiation interval of the " what " (1 = fully pipelined)", timing.unit[u].interval)

// Alignment rules, wrapped round a key's row.
ConfigKey power_of_two(ConfigKey k)
{
    k.power_of_two = true;
    return k;
}

ConfigKey multiple_of(const char *keys, ConfigKey k)
{
    k.multiple_of = keys;
    return k;
}

std::vector<ConfigKey> build_schema()
{
    std::vector<ConfigKey> k = {
        power_of_two(INT_KEY("core.vlen", nullptr, NPU_VLEN_MIN, NPU_VLEN_MAX, "bits",
                             "vector register width (256 = one C0 block: 16 fp16 or 8 fp32 lanes)", core.vlen_bits)),
        // Each UB bank is one SRAM of ub.bank_bytes-wide words, all of one
        // depth, so the UB is a whole number of bank rows (a partial last row
        // would leave the banks unequal).
        multiple_of("ub.banks x ub.bank_bytes",
                    INT_KEY("core.ub_bytes", nullptr, 32768, int64_t(1) << 30, "bytes",
                            "unified buffer (UB) capacity per core: whole rows of the UB banks (each bank one SRAM "
                            "of equal depth)",
                            core.ub_bytes)),
        INT_KEY("core.freq_mhz", "1000", 1, 100000, "MHz",
                "clock of the cores: converts cycles to time (npusim graph's samples/s); changes no cycle count",
                freq_mhz),
        INT_KEY("issue.width", nullptr, 1, NPU_MAX_ISSUE_WIDTH, "slots",
                "issue slots W: instructions issued per cycle at most; must equal the number of issue.slots "
                "(a config file that gives one must leave the two equal; --set overrides are checked after "
                "the last one, so change both: --set issue.width=2 --set issue.slots=any,any)",
                timing.issue_width),
        ConfigKey{"issue.slots", KeyType::SlotList, "", 0, 0, "", "",
                  "classes each slot accepts, slot 0 first: a list of issue.width class sets like scalar+branch+sync "
                  "(classes: scalar, branch, vector, mem, dma, sync, each named once; any = all of them, given alone); --set separates "
                  "them by commas, none empty: --set issue.slots=any,vector",
                  nullptr, nullptr, false, ""},
        INT_KEY("issue.branch_penalty", nullptr, 0, 1000, "cycles", "cycles lost after a mispredicted branch (static prediction: backward conditional branches and direct jumps taken, forward ones not)",
                timing.branch_penalty),
        NPU_UNIT_KEYS("scalar", NPU_UNIT_SCALAR, "scalar ALU"),
        NPU_UNIT_KEYS("branch", NPU_UNIT_BRANCH, "branch unit"),
        NPU_UNIT_KEYS("valu", NPU_UNIT_VALU, "vector ALUs (add, mul, fma, compare, select, convert)"),
        NPU_UNIT_KEYS("sfu", NPU_UNIT_SFU, "special-function unit (exp, ln, rcp, rsqrt, sqrt)"),
        NPU_UNIT_KEYS("lsu", NPU_UNIT_LSU, "UB load/store unit"),
        NPU_UNIT_KEYS("dma", NPU_UNIT_DMA, "DMA issue port"),
        NPU_UNIT_KEYS("sync", NPU_UNIT_SYNC, "sync unit (dmawait, barrier, halt)"),
        INT_KEY("ub.banks", nullptr, 1, 64, "banks", "UB banks shared by every LSU; an access takes as many cycles as bank words it needs in one bank",
                timing.ub_banks),
        power_of_two(INT_KEY("ub.bank_bytes", nullptr, 2, 4096, "bytes",
                             "width of one UB bank (a bank word's bytes are the low address bits)", timing.ub_bank_bytes)),
        ConfigKey{"sfu.mode", KeyType::Enum, "exact", 0, 0, "exact|approx", "",
                  "exact: exp/ln/rcp/rsqrt/sqrt correctly rounded; approx: results carry sfu.bits significant bits",
                  [](Config &c, int64_t v) { c.core.sfu_mode = v == 0 ? NPU_SFU_EXACT : NPU_SFU_APPROX; },
                  [](const Config &c) { return int64_t(c.core.sfu_mode == NPU_SFU_EXACT ? 0 : 1); }, false, ""},
        INT_KEY("sfu.bits", "12", 8, 24, "bits", "significant bits of an approximate SFU result (sfu.mode: approx)",
                core.sfu_bits),
        INT_KEY("dma.bytes_per_cycle", nullptr, 1, 4096, "bytes/cycle", "bandwidth of each core's DMA engine",
                timing.dma_bytes_per_cycle),
        INT_KEY("dma.queue_depth", nullptr, 1, 64, "transfers", "DMA transfers in flight per core; one more waits",
                timing.dma_queue_depth),
        INT_KEY("dma.outstanding", nullptr, 1, 1024, "lines",
                "memory.model l2: L2 line requests in flight per core's DMA engine (it issues them at dma.bytes_per_cycle)",
                timing.dma_outstanding),
        // The cube unit (docs/cube.md): its fractal MACs, buffers and pipes.
        // The L0 buffers' limits (16 x Ascend 910's) also bound the host work
        // of one mmad: at most 131,072 fractal products (0.5 G MACs).
        INT_KEY("cube.count", nullptr, 1, NPU_MAX_UNIT_COUNT, "",
                "16x16x16 fp16 fractal products the cube starts per interval (1 = 4,096 MACs per cycle)", timing.cube.count),
        INT_KEY("cube.latency", nullptr, 1, 10000, "cycles", "cycles from an mmad's last fractal product to its tag completing",
                timing.cube.latency),
        INT_KEY("cube.interval", nullptr, 1, 10000, "cycles", "cycles between fractal products of one cube instance",
                timing.cube.interval),
        multiple_of("512", INT_KEY("cube.l1_bytes", nullptr, 0, int64_t(1) << 26, "bytes",
                                   "L1 buffer (dmaldl1 fills it from GM; mvla and mvlb read it): whole 512-byte fractals",
                                   core.l1_bytes)),
        multiple_of("512", INT_KEY("cube.l0a_bytes", nullptr, 0, int64_t(1) << 20, "bytes",
                                   "L0A buffer (the cube's left operands, fp16): whole 512-byte fractals", core.l0a_bytes)),
        multiple_of("512", INT_KEY("cube.l0b_bytes", nullptr, 0, int64_t(1) << 20, "bytes",
                                   "L0B buffer (the cube's right operands, fp16): whole 512-byte fractals", core.l0b_bytes)),
        multiple_of("512", INT_KEY("cube.l0c_bytes", nullptr, 0, int64_t(1) << 22, "bytes",
                                   "L0C buffer (the cube's fp32 accumulators; mvub reads it out to the UB): whole 512-byte "
                                   "fractals",
                                   core.l0c_bytes)),
        INT_KEY("cube.mte1_bytes_per_cycle", nullptr, 1, 1 << 16, "bytes/cycle", "bandwidth of the L1 -> L0A/L0B moves (mvla, mvlb)",
                timing.mte1_bytes_per_cycle),
        INT_KEY("cube.mte1_latency", nullptr, 0, 10000, "cycles", "cycles from an L1 -> L0 move's last byte to its tag completing",
                timing.mte1_latency),
        INT_KEY("cube.fix_bytes_per_cycle", nullptr, 1, 1 << 16, "bytes/cycle", "bandwidth of the L0C -> UB moves (mvub)",
                timing.fix_bytes_per_cycle),
        INT_KEY("cube.fix_latency", nullptr, 0, 10000, "cycles", "cycles from an L0C -> UB move's last byte to its tag completing",
                timing.fix_latency),
        INT_KEY("cube.queue_depth", nullptr, 1, 64, "operations",
                "operations in flight in each cube pipe (MTE1, cube, FIX); one more waits", timing.cube_queue_depth),
        ConfigKey{"memory.model", KeyType::Enum, "l2", 0, 0, "ideal|l2", "",
                  "l2: DMA through the shared L2 and the DRAM; ideal: an L2 that always hits with no bank, MSHR or DRAM limit "
                  "(a transfer completes l2.hit_latency cycles after its last byte left the DMA engine: an upper bound on l2)",
                  [](Config &c, int64_t v) { c.memory_l2 = v == 1; },
                  [](const Config &c) { return int64_t(c.memory_l2 ? 1 : 0); }, false, ""},
        ConfigKey{"memory.warm_inputs", KeyType::Enum, "no", 0, 0, "no|yes", "",
                  "yes: every input tensor starts resident in the L2, as when the previous layer just wrote it "
                  "(the config form of run --warm-l2; needs memory.model: l2 and sim.mode: timed, as it does)",
                  [](Config &c, int64_t v) { c.warm_inputs = v == 1; },
                  [](const Config &c) { return int64_t(c.warm_inputs ? 1 : 0); }, false, ""},
        // Sets, ways and lines are indexed by address bits, hence the powers of two.
        power_of_two(INT_KEY("l2.size_bytes", nullptr, 1024, int64_t(1) << 34, "bytes",
                             "L2 capacity, at least l2.ways x l2.line_bytes and at most 67108864 (2^26) lines of "
                             "l2.line_bytes (so at most 8 GiB with 128-byte lines)",
                             l2.size_bytes)),
        power_of_two(INT_KEY("l2.ways", nullptr, 1, NPU_L2_MAX_WAYS, "ways", "L2 associativity", l2.ways)),
        power_of_two(INT_KEY("l2.line_bytes", nullptr, 32, 4096, "bytes", "L2 line size (at least 32: one C0 block)",
                             l2.line_bytes)),
        ConfigKey{"l2.replacement", KeyType::Enum, "lru", 0, 0, "lru|plru|random", "",
                  "victim choice: true LRU, tree pseudo-LRU, or random (seeded by l2.seed)",
                  [](Config &c, int64_t v) { c.l2.replacement = npu_l2_replacement(v); },
                  [](const Config &c) { return int64_t(c.l2.replacement); }, false, ""},
        INT_KEY("l2.seed", nullptr, 0, INT64_MAX, "", "seed of random replacement", l2.seed),
        ConfigKey{"l2.index", KeyType::Enum, "modulo", 0, 0, "modulo|xor", "",
                  "a line's set: its line number modulo the sets, or every set-index-wide piece of the line number "
                  "XOR-ed together (hashed, as real L2s index: power-of-two strides spread over the sets)",
                  [](Config &c, int64_t v) { c.l2.index_xor = int(v); },
                  [](const Config &c) { return int64_t(c.l2.index_xor); }, false, ""},
        ConfigKey{"l2.write_policy", KeyType::Enum, "write_back", 0, 0, "write_back|write_through", "",
                  "write_back: stores dirty lines, victims are written back; write_through: every store goes to DRAM",
                  [](Config &c, int64_t v) { c.l2.write_policy = npu_l2_write_policy(v); },
                  [](const Config &c) { return int64_t(c.l2.write_policy); }, false, ""},
        ConfigKey{"l2.write_allocate", KeyType::Enum, "yes", 0, 0, "yes|no", "",
                  "yes: a store miss fills the line; no: it goes around the cache",
                  [](Config &c, int64_t v) { c.l2.write_allocate = v == 0; },
                  [](const Config &c) { return int64_t(c.l2.write_allocate ? 0 : 1); }, false, ""},
        ConfigKey{"l2.full_line_write", KeyType::Enum, "allocate", 0, 0, "allocate|fetch", "",
                  "a store miss covering a whole line (a DMA writing full lines): allocate it without a read, or fetch it first",
                  [](Config &c, int64_t v) { c.l2.skip_fetch_on_full_write = v == 0; },
                  [](const Config &c) { return int64_t(c.l2.skip_fetch_on_full_write ? 0 : 1); }, false, ""},
        // The ideal memory answers like an L2 hit, so it stays an upper bound on l2.
        ConfigKey{"l2.hit_latency", KeyType::Int, "", 1, 10000, "", "cycles",
                  "L2 hit latency (also the ideal memory's latency)",
                  [](Config &c, int64_t v) { c.l2.hit_latency = c.timing.dma_latency = unsigned(v); },
                  [](const Config &c) { return int64_t(c.l2.hit_latency); }, false, ""},
        INT_KEY("l2.mshrs", nullptr, 1, NPU_L2_MAX_MSHRS, "", "L2 misses in flight at once (misses to one line merge)",
                l2.mshrs),
        INT_KEY("l2.banks", nullptr, 1, NPU_L2_MAX_BANKS, "banks", "L2 banks, interleaved by line", l2.banks),
        INT_KEY("l2.bank_interval", nullptr, 1, 1000, "cycles", "cycles an L2 bank is busy per access", l2.bank_interval),
        INT_KEY("dram.latency", nullptr, 0, 100000, "cycles", "DRAM latency after a request leaves its channel",
                dram.latency),
        INT_KEY("dram.bytes_per_cycle", nullptr, 1, 4096, "bytes/cycle", "peak bandwidth of one DRAM channel",
                dram.bytes_per_cycle),
        INT_KEY("dram.channels", nullptr, 1, NPU_DRAM_MAX_CHANNELS, "channels", "DRAM channels", dram.channels),
        power_of_two(INT_KEY("dram.interleave_bytes", nullptr, 32, 1 << 20, "bytes",
                             "consecutive bytes on one DRAM channel before the next (their offset is the low address bits)",
                             dram.interleave_bytes)),
        INT_KEY("system.cores", "1", 1, 64, "cores", "vector cores running the kernel", cores),
        INT_KEY("sim.quantum", nullptr, 1, int64_t(1) << 40, "cycles",
                "temporal decoupling, a speed knob only: per turn a core runs until its clock passes the earliest "
                "core's + this (DMA transfers are booked in start order whatever it is, so no result changes)",
                timing.sim_quantum),
        ConfigKey{"sim.mode", KeyType::Enum, "timed", 0, 0, "timed|functional", "",
                  "timed: cycle-exact timing; functional: results and instruction counts only (faster)",
                  [](Config &c, int64_t v) { c.timed = v == 0; },
                  [](const Config &c) { return int64_t(c.timed ? 0 : 1); }, false, ""},
        ConfigKey{"sim.race_check", KeyType::Enum, "yes", 0, 0, "yes|no", "",
                  "yes: an access to UB, L1 or L0 bytes that a DMA or cube operation still in flight (its tag not yet "
                  "waited for) writes, or reads while the access writes them, traps naming both, as does a transfer over GM "
                  "bytes another core's transfer touches with no dmawait and barrier between them (docs/timing.md, "
                  "Races); no: unchecked, every operation takes effect at its issue",
                  [](Config &c, int64_t v) { c.core.race_check = v == 0; },
                  [](const Config &c) { return int64_t(c.core.race_check ? 0 : 1); }, false, ""},
    };
    // Defaults come from the C models' own defaults, so there is one source.
    Config d;
    npu_core_config_default(&d.core);
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

#undef NPU_UNIT_KEYS
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

// An echoed value, cut and kept on one line: a 100,000-digit number or a
// multi-line string still gives a one-line message.
std::string shown(const std::string &value)
{
    const size_t limit = 40;
    std::string out;
    for (size_t i = 0; i < value.size() && i < limit; i++)
        out += value[i] == '\n' ? std::string("\\n") : std::string(1, value[i] < ' ' ? '?' : value[i]);
    return value.size() > limit ? out + "..." : out;
}

std::string range_text(const ConfigKey &k)
{
    return std::to_string(k.min) + " .. " + std::to_string(k.max);
}

std::string allowed(const ConfigKey &k)
{
    if (k.type == KeyType::Enum)
        return "one of " + k.choices;
    if (k.type == KeyType::SlotList)
        return "1 .. " + std::to_string(NPU_MAX_ISSUE_WIDTH) + " class sets";
    if (k.power_of_two)
        return range_text(k) + ", power of two";
    if (!k.multiple_of.empty())
        return range_text(k) + ", multiple of " + k.multiple_of;
    return range_text(k);
}

unsigned slot_count(const Config &cfg)
{
    unsigned n = 0;
    while (n < NPU_MAX_ISSUE_WIDTH && cfg.timing.slot_classes[n])
        n++;
    return n;
}

std::string slots_text(const Config &cfg)
{
    std::string s;
    for (unsigned i = 0; i < slot_count(cfg); i++)
        s += (i ? "," : "") + class_set_text(cfg.timing.slot_classes[i]);
    return s;
}

// The one message for issue.width != the number of slots, whichever key was
// given last and wherever (a file or --set).
std::string width_mismatch(const Config &cfg)
{
    const unsigned n = slot_count(cfg);
    std::string slots;  // at most 8 sets, so not cut; `any` as written
    for (unsigned i = 0; i < n; i++) {
        const uint32_t set = cfg.timing.slot_classes[i];
        slots += (i ? "," : "") + (set == (1u << NPU_NUM_CLASSES) - 1 ? std::string("any") : class_set_text(set));
    }
    return "issue.width: " + std::to_string(cfg.timing.issue_width) + " does not match issue.slots: " +
           std::to_string(n) + (n == 1 ? " slot [" : " slots [") + slots + "] (issue.width must equal the number of slots)";
}

// Sets the slot classes only: issue.width is its own key, and a mismatch
// is an error (width_mismatch), never a silent resize.
void set_slots(Config &cfg, const std::vector<std::string> &sets, const std::string &where)
{
    if (sets.empty() || sets.size() > NPU_MAX_ISSUE_WIDTH)
        throw Error(where + "issue.slots: expected 1 .. " + std::to_string(NPU_MAX_ISSUE_WIDTH) + " class sets, got " +
                    std::to_string(sets.size()));
    for (size_t i = 0; i < NPU_MAX_ISSUE_WIDTH; i++)
        cfg.timing.slot_classes[i] = i < sets.size() ? parse_class_set(sets[i], where + "issue.slots[" + std::to_string(i) + "]") : 0;
}

// A decimal or 0x integer. A leading 0 is refused: C would read 010 as
// octal 8, YAML 1.2 as 10.
bool parse_int(const std::string &text, long long &v, bool &overflow)
{
    overflow = false;
    size_t digits = text.find_first_not_of("+-");
    if (text.empty() || digits > 1 || digits == std::string::npos)
        return false;
    bool hex = text.compare(digits, 2, "0x") == 0 || text.compare(digits, 2, "0X") == 0;
    if (!hex && text[digits] == '0' && text.size() > digits + 1)
        return false;
    const std::string body = text.substr(hex ? digits + 2 : digits);
    if (body.empty() || body.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
        return false;
    try {
        v = std::stoll(text, nullptr, hex ? 16 : 10);
    } catch (const std::out_of_range &) {
        overflow = true;
    }
    return true;
}

// Parses and checks a value against its schema row (range, power of two),
// then stores it. `where` prefixes errors. multiple_of waits for every key:
// see multiple_error.
void set_key(Config &cfg, const ConfigKey &k, const std::string &value, const std::string &where)
{
    if (k.type == KeyType::SlotList) {
        // Every comma separates two sets, a last one too: "any," is two
        // sets, the second empty (getline would drop it); "" is none.
        std::vector<std::string> sets;
        for (size_t at = 0; !value.empty();) {
            const size_t comma = value.find(',', at);
            sets.push_back(value.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
            if (comma == std::string::npos)
                break;
            at = comma + 1;
        }
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
        throw Error(where + k.path + ": '" + shown(value) + "' is not " + allowed(k));
    }
    long long v = 0;
    bool overflow = false;
    if (!parse_int(value, v, overflow))
        throw Error(where + k.path + ": expected an integer (decimal without a leading 0, or 0x hex), got '" + shown(value) + "'");
    if (overflow || v < k.min || v > k.max)
        throw Error(where + k.path + ": " + shown(value) + " is out of range (" + range_text(k) +
                    (k.unit.empty() ? "" : " " + k.unit) + ")");
    if (k.power_of_two && (v & (v - 1)))
        throw Error(where + k.path + ": " + shown(value) + " is not a power of two (" + range_text(k) + ")");
    k.set(cfg, v);
}

// Records that `path` got its value at `where` (Config::given).
void mark_given(Config &cfg, const std::string &path, const std::string &where)
{
    auto &g = cfg.given;
    g.erase(std::remove_if(g.begin(), g.end(), [&](const auto &e) { return e.first == path; }), g.end());
    g.emplace_back(path, where);
}

// Where a check across `keys` points (the first the key its message names):
// at the one of them given last, as Config::given holds it; a --set of
// another key than the named one says which ("set l2.ways: "); "" when
// every one is at its default.
std::string given_where(const Config &cfg, std::initializer_list<const char *> keys)
{
    for (auto it = cfg.given.rbegin(); it != cfg.given.rend(); ++it)
        for (const char *k : keys)
            if (it->first == k)
                return it->second == "set " && it->first != *keys.begin() ? "set " + it->first + ": " : it->second;
    return "";
}

// The keys named in a multiple_of, "ub.banks x ub.bank_bytes" (or a number, "512").
std::vector<std::string> factor_keys(const ConfigKey &k)
{
    std::vector<std::string> keys;
    for (size_t at = 0; at < k.multiple_of.size();) {
        size_t x = k.multiple_of.find(" x ", at);
        keys.push_back(k.multiple_of.substr(at, x == std::string::npos ? std::string::npos : x - at));
        at = x == std::string::npos ? x : x + 3;
    }
    return keys;
}

// "" when key k's value is a multiple of the product of its multiple_of
// keys, else the message naming every value.
std::string multiple_error(const Config &cfg, const ConfigKey &k)
{
    int64_t product = 1;
    std::string factors;
    bool literal = true;  // a number, not keys: "512"
    for (const std::string &name : factor_keys(k)) {
        const bool number = name.find_first_not_of("0123456789") == std::string::npos;
        const int64_t v = number ? std::stoll(name) : find_key(name)->get(cfg);
        literal = literal && number;
        product *= v;
        factors += (factors.empty() ? "" : " x ") + std::to_string(v);
    }
    const int64_t v = k.get(cfg);
    if (v % product == 0)
        return "";
    if (literal)
        return k.path + ": " + std::to_string(v) + " is not a multiple of " + k.multiple_of +
               (k.unit.empty() ? "" : " " + k.unit);
    return k.path + ": " + std::to_string(v) + " is not a multiple of " + k.multiple_of + " (" + factors + " = " +
           std::to_string(product) + (k.unit.empty() ? "" : " " + k.unit) + ")";
}

// What one file gave, for the rules that look at more than one key.
struct FileKeys {
    std::string file;
    std::map<std::string, YAML::Mark> key_at;  // key path -> where its name is
    std::map<std::string, YAML::Mark> map_at;  // key path -> where its mapping starts
};

std::string duplicate(const std::string &file, const YAML::Mark &again, const std::string &path, const YAML::Mark &first)
{
    return yaml_where(file, again) + shown(path) + ": duplicate key (first at line " + std::to_string(first.line + 1) +
           ", column " + std::to_string(first.column + 1) + ")";
}

// yaml-cpp keeps both entries of a repeated key; the second would silently win.
void check_unique_keys(const YAML::Node &map, const std::string &prefix, const std::string &file)
{
    std::map<std::string, YAML::Mark> seen;
    for (const auto &kv : map) {
        if (!kv.first.IsScalar())
            throw Error(yaml_where(file, kv.first.Mark()) + (prefix.empty() ? "config" : prefix) +
                        ": a key must be a plain name, not a list or a mapping");
        const std::string &key = kv.first.Scalar();
        auto ins = seen.emplace(key, kv.first.Mark());
        if (!ins.second)
            throw Error(duplicate(file, kv.first.Mark(), prefix.empty() ? key : prefix + "." + key, ins.first->second));
    }
}

void load_node(Config &cfg, const YAML::Node &node, const std::string &prefix, FileKeys &given)
{
    const std::string &file = given.file;
    if (!node.IsMap())
        throw Error(yaml_where(file, node.Mark()) + (prefix.empty() ? "config" : shown(prefix)) + ": expected a mapping");
    check_unique_keys(node, prefix, file);
    for (const auto &kv : node) {
        std::string key = kv.first.Scalar();
        std::string path = prefix.empty() ? key : prefix + "." + key;
        const ConfigKey *k = find_key(path);
        if (!k) {
            bool is_section = false;
            for (const ConfigKey &s : schema())
                is_section |= s.path.rfind(path + ".", 0) == 0;
            if (!is_section)
                throw Error(yaml_where(file, kv.first.Mark()) + shown(path) + ": unknown key");
            if (!kv.second.IsMap()) {  // `units: 5`: a section, not a key that is not there
                const bool none = kv.second.IsNull() || kv.second.Mark().line < 0;  // `units:` points past itself
                const YAML::Mark at = none ? kv.first.Mark() : kv.second.Mark();
                throw Error(yaml_where(file, at) + shown(path) + ": expected a mapping");
            }
            load_node(cfg, kv.second, path, given);
            continue;
        }
        // `core.vlen: 1` beside `core: {vlen: 2}` is the same key twice.
        auto ins = given.key_at.emplace(path, kv.first.Mark());
        if (!ins.second)
            throw Error(duplicate(file, kv.first.Mark(), path, ins.first->second));
        given.map_at.emplace(path, node.Mark());
        const std::string where = yaml_where(file, kv.second.Mark());
        if (k->type == KeyType::SlotList) {
            if (!kv.second.IsSequence())
                throw Error(where + path + ": expected a list of class sets, e.g. [scalar+branch+sync, vector]");
            std::vector<std::string> sets;
            for (const auto &item : kv.second) {
                if (!item.IsScalar())
                    throw Error(yaml_where(file, item.Mark()) + path + ": expected a class set like vector or mem+dma");
                sets.push_back(item.Scalar());
            }
            set_slots(cfg, sets, where);
            mark_given(cfg, path, yaml_where(file, kv.first.Mark()));
            continue;
        }
        if (!kv.second.IsScalar())
            throw Error(where + path + ": expected a scalar value");
        set_key(cfg, *k, kv.second.Scalar(), where);
        mark_given(cfg, path, yaml_where(file, kv.first.Mark()));
    }
}

// A file that gives issue.width or issue.slots must leave them equal. The
// error points at their common mapping when it gives both, so either key
// order gives the same line.
void check_issue_width(const Config &cfg, const FileKeys &given)
{
    auto width = given.key_at.find("issue.width"), slots = given.key_at.find("issue.slots");
    if ((width == given.key_at.end() && slots == given.key_at.end()) || slot_count(cfg) == cfg.timing.issue_width)
        return;
    YAML::Mark at;
    if (width == given.key_at.end())
        at = slots->second;
    else if (slots == given.key_at.end())
        at = width->second;
    else
        at = given.map_at.at("issue.width").pos == given.map_at.at("issue.slots").pos
                 ? given.map_at.at("issue.width")
                 : (width->second.pos < slots->second.pos ? width->second : slots->second);
    throw Error(yaml_where(given.file, at) + width_mismatch(cfg));
}

// A file that gives a key with a multiple_of, or one of its factors, must
// leave them fitting; the error points at the key itself when given.
void check_multiples(const Config &cfg, const FileKeys &given)
{
    for (const ConfigKey &k : schema()) {
        if (k.multiple_of.empty())
            continue;
        std::vector<std::string> involved = factor_keys(k);
        involved.insert(involved.begin(), k.path);
        for (const std::string &name : involved) {
            auto at = given.key_at.find(name);
            if (at == given.key_at.end())
                continue;
            std::string msg = multiple_error(cfg, k);
            if (!msg.empty())
                throw Error(yaml_where(given.file, at->second) + msg);
            break;
        }
    }
}

// Applies one file's keys over `cfg` and checks the rules between them.
void load_document(Config &cfg, const YAML::Node &root, const std::string &file)
{
    FileKeys given{file, {}, {}};
    if (!root.IsNull())
        load_node(cfg, root, "", given);
    check_issue_width(cfg, given);
    check_multiples(cfg, given);
}

}  // namespace

uint32_t parse_class_set(const std::string &text, const std::string &where)
{
    uint32_t mask = 0;
    if (text == "any")
        return (1u << NPU_NUM_CLASSES) - 1;
    if (text.empty())
        throw Error(where + ": empty class set");
    // each name between '+' (a leading, trailing or doubled '+' leaves an
    // empty one), each class once: the set is taken as written or refused
    for (size_t from = 0;;) {
        const size_t plus = text.find('+', from);
        const std::string name = text.substr(from, plus == std::string::npos ? std::string::npos : plus - from);
        if (name == "any")
            throw Error(where + ": '" + shown(text) + "': any is already every class; give any alone or the classes");
        if (name.empty())
            throw Error(where + ": '" + shown(text) + "': an empty class name (classes are joined by single '+')");
        bool found = false;
        for (unsigned c = 0; c < NPU_NUM_CLASSES; c++)
            if (name == npu_class_name(npu_class(c))) {
                if (mask & (1u << c))
                    throw Error(where + ": '" + shown(text) + "': class '" + name + "' is named twice");
                mask |= 1u << c;
                found = true;
            }
        if (!found)
            throw Error(where + ": unknown instruction class '" + shown(name) +
                        "' (scalar, branch, vector, mem, dma, sync)");
        if (plus == std::string::npos)
            break;
        from = plus + 1;
    }
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
const ConfigKey *find_config_key(const std::string &path) { return find_key(path); }

Config default_config()
{
    Config cfg;
    for (const ConfigKey &k : schema())
        set_key(cfg, k, k.default_text, "<default> ");
    return cfg;
}

void validate_config(const Config &cfg)
{
    if (slot_count(cfg) != cfg.timing.issue_width)
        throw Error(width_mismatch(cfg));
    for (const ConfigKey &k : schema())
        if (!k.multiple_of.empty() && !multiple_error(cfg, k).empty())
            throw Error(multiple_error(cfg, k));
    // The checks that span keys, by key path (the models' own checks below
    // stay as the backstop for configs built in code).
    for (unsigned c = 0; c < NPU_NUM_CLASSES; c++) {
        uint32_t taken = 0;
        for (unsigned s = 0; s < cfg.timing.issue_width; s++)
            taken |= cfg.timing.slot_classes[s];
        if (!(taken >> c & 1))
            throw Error(given_where(cfg, {"issue.slots", "issue.width"}) + "issue.slots: no slot accepts class '" +
                        npu_class_name(npu_class(c)) + "' (every class needs one)");
    }
    const uint64_t way_set = uint64_t(cfg.l2.ways) * cfg.l2.line_bytes;
    if (cfg.l2.size_bytes < way_set)
        throw Error(given_where(cfg, {"l2.size_bytes", "l2.ways", "l2.line_bytes"}) + "l2.size_bytes: " +
                    std::to_string(cfg.l2.size_bytes) + " is less than one line in every way, l2.ways x l2.line_bytes (" +
                    std::to_string(way_set) + ")");
    if (cfg.l2.size_bytes / cfg.l2.line_bytes > (uint64_t(1) << 26))
        throw Error(given_where(cfg, {"l2.size_bytes", "l2.line_bytes"}) + "l2.size_bytes: " +
                    std::to_string(cfg.l2.size_bytes) + " is more than 67108864 lines of " +
                    std::to_string(cfg.l2.line_bytes) + " bytes (l2.line_bytes)");
    // Warm inputs are lines of the L2 model, which only a timed run has (as
    // run --warm-l2 is refused without it).
    if (cfg.warm_inputs && !(cfg.memory_l2 && cfg.timed))
        throw Error(given_where(cfg, {"memory.warm_inputs", "memory.model", "sim.mode"}) +
                    "memory.warm_inputs: yes needs memory.model: l2 and sim.mode: timed");
    // The models' own checks: a backstop (the schema and the checks above
    // catch what a file or --set can give), naming the config they came from.
    const bool from_file = std::any_of(cfg.given.begin(), cfg.given.end(),
                                       [](const auto &g) { return !g.second.empty() && g.second != "set "; });
    const std::string whole = from_file ? cfg.source + ": " : "";
    char msg[160];
    if (npu_timing_config_check(&cfg.timing, msg, sizeof msg) != NPU_OK)
        throw Error(whole + msg);
    if (npu_l2_config_check(&cfg.l2, msg, sizeof msg) != NPU_OK)
        throw Error(whole + "l2: " + msg);
    if (npu_dram_config_check(&cfg.dram, msg, sizeof msg) != NPU_OK)
        throw Error(whole + "dram: " + msg);
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
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw Error(path + ": cannot open config file: Is a directory");
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    if (!in)
        throw Error(path + ": cannot open config file");
    if (in.peek() != std::ifstream::traits_type::eof() && !(text << in.rdbuf()))
        throw Error(path + ": cannot read config file");  // an empty file is the defaults, as one of comments is
    YAML::Node root = load_one_yaml_document(text.str(), path, "a config file");
    Config cfg = default_config();
    if (root.IsMap())
        check_unique_keys(root, "", path);  // before root["base"] picks one of two
    if (root.IsMap() && root["base"]) {
        const YAML::Node b = root["base"];
        if (!b.IsScalar())
            throw Error(yaml_where(path, b.Mark()) + "base: expected a config file name");
        cfg = load_with_bases(beside_spec(b.Scalar(), path), chain);
        root.remove("base");
    }
    load_document(cfg, root, path);
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
    load_document(cfg, load_one_yaml_document(text, name, "a config file"), name);
    cfg.source = name;
    return cfg;
}

Config build_config(const std::string &file, const std::vector<std::string> &sets)
{
    Config cfg = file.empty() ? default_config() : load_config(resolve_config(file));
    for (const std::string &s : sets)
        apply_override(cfg, s);
    validate_config(cfg);
    return cfg;
}

void set_config_key(Config &cfg, const std::string &key, const std::string &value)
{
    const ConfigKey *k = find_key(key);
    if (!k)
        throw Error(shown(key) + ": unknown key");
    set_key(cfg, *k, value, "");
    mark_given(cfg, key, "");
}

void apply_override(Config &cfg, const std::string &assignment)
{
    size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw Error("set " + shown(assignment) + ": expected KEY=VALUE");
    std::string key = assignment.substr(0, eq);
    const ConfigKey *k = find_key(key);
    if (!k)
        throw Error("set " + shown(key) + ": unknown key");
    set_key(cfg, *k, assignment.substr(eq + 1), "set ");
    mark_given(cfg, key, "set ");
}

std::vector<std::pair<std::string, std::string>> config_values(const Config &cfg)
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const ConfigKey &k : schema()) {
        std::string v;
        if (k.type == KeyType::SlotList) {
            v = slots_text(cfg);
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

npu_asm_machine asm_machine(const Config &cfg)
{
    npu_asm_machine m{};
    m.issue_width = cfg.timing.issue_width;
    for (unsigned s = 0; s < cfg.timing.issue_width && s < 8; s++)
        m.slot_classes[s] = cfg.timing.slot_classes[s];
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
        m.unit[u] = {cfg.timing.unit[u].count, cfg.timing.unit[u].latency, cfg.timing.unit[u].interval};
    m.vlen_bytes = cfg.core.vlen_bits / 8;
    m.ub_bytes = unsigned(cfg.core.ub_bytes);
    return m;
}

}  // namespace npusim
