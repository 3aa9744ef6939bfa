// Hardware configuration: every key is declared once in a schema table with
// its type, default, range, unit, description and accessors. The same table
// loads YAML, applies `--set key=value`, validates, prints the resolved
// config and `npusim config docs`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "npusim/asm.h"
#include "npusim/core.h"
#include "npusim/dram.h"
#include "npusim/l2.h"
#include "npusim/timing.h"

namespace npusim {

struct Config {
    npu_core_config core{};      // vlen, ub, sfu; core_id/num_cores are set per core
    npu_timing_config timing{};  // slots, units, UB banks, DMA
    npu_l2_config l2{};          // the shared L2 (memory.model: l2)
    npu_dram_config dram{};      // the DRAM behind it
    bool memory_l2 = true;       // memory.model: l2 (else the ideal memory: always an L2 hit)
    bool warm_inputs = false;    // memory.warm_inputs: inputs start resident in the L2
    unsigned cores = 1;
    unsigned freq_mhz = 1000;    // core.freq_mhz: cycles to seconds (npusim graph's samples/s)
    bool timed = true;           // false: functional only (sim.mode: functional)
    std::string source = "default";  // where it came from, for reports
    // Where each key not left at its default got its value, in the order
    // given (a key given again moves to the end): "set " for an override,
    // "file:line:col: " (its name in the file) for a config file's key. The
    // checks across keys (validate_config) name the one given last.
    std::vector<std::pair<std::string, std::string>> given;
};

enum class KeyType { Int, Enum, SlotList };

struct ConfigKey {
    std::string path;         // dotted YAML path, e.g. "core.vlen"
    KeyType type;
    std::string default_text;
    int64_t min, max;         // inclusive range for Int
    std::string choices;      // "a|b" for Enum
    std::string unit;
    std::string description;
    void (*set)(Config &, int64_t);        // Int and Enum (enum: index into choices)
    int64_t (*get)(const Config &);
    // Alignment an Int needs beyond its range (the loader checks it, `config
    // docs` prints it in the allowed column).
    bool power_of_two = false;
    // "" or other Int keys (or numbers) whose product the value must be a
    // multiple of, e.g. "ub.banks x ub.bank_bytes" or "512" (checked once
    // every key is set).
    std::string multiple_of;
};

const std::vector<ConfigKey> &config_schema();
// The schema's key at a dotted path (`core.vlen`), or nullptr.
const ConfigKey *find_config_key(const std::string &path);

// The machine `.pipeline` loops are scheduled for: the config's slots, units
// and vector length.
npu_asm_machine asm_machine(const Config &cfg);

Config default_config();
// Loads a YAML file (one document, no key given twice, issue.width and
// issue.slots agreeing) over the defaults. Throws npusim::Error with
// `file:line:col: key.path: message`.
Config load_config(const std::string &path);
// The same from YAML text in memory, `name` standing for the file in messages.
Config load_config_text(const std::string &text, const std::string &name);
// Applies one `key=value` override. Rules between keys wait for
// validate_config, so `issue.width=2` then `issue.slots=any,any` is fine.
void apply_override(Config &cfg, const std::string &assignment);
// `--config FILE --set K=V ...`: the file (or a shipped config by name,
// resolve_config; the defaults for ""), the overrides in order, then
// validate_config.
Config build_config(const std::string &file, const std::vector<std::string> &sets);
// The same for one key and its value, from a library call: messages name the
// key, not a flag (`units.sfu.latency: 0 is out of range ...`).
void set_config_key(Config &cfg, const std::string &key, const std::string &value);
// Checks cross-key rules (issue.width = the number of issue.slots, every class
// has a slot, ...) once every override is applied. Throws npusim::Error.
void validate_config(const Config &cfg);
// Resolved config as YAML text (for reports and `config show`).
std::string config_to_yaml(const Config &cfg);
// Every key's value as dotted name -> text, in schema order (for JSON reports).
std::vector<std::pair<std::string, std::string>> config_values(const Config &cfg);
// Markdown reference table of every key.
std::string config_docs();

// "scalar+branch+sync" <-> class bit mask.
uint32_t parse_class_set(const std::string &text, const std::string &where);
std::string class_set_text(uint32_t mask);

}  // namespace npusim
