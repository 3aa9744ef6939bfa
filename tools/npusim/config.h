// Hardware configuration: every key is declared once in a schema table with
// its type, default, range, unit and description. The same table loads YAML,
// applies `--set key=value`, validates, and prints `npusim config docs`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npusim/core.h"

namespace npusim {

struct Config {
    npu_core_config core{};  // vlen, ub, sfu; core_id/num_cores set per core
    unsigned cores = 1;
    std::string source = "<defaults>";  // where it came from, for reports
};

enum class KeyType { Int, Enum };

struct ConfigKey {
    const char *path;         // dotted YAML path, e.g. "core.vlen"
    KeyType type;
    const char *default_text;
    int64_t min, max;         // inclusive range for Int
    const char *choices;      // "a|b" for Enum
    const char *unit;
    const char *description;
};

const std::vector<ConfigKey> &config_schema();

Config default_config();
// Loads a YAML file over the defaults. Throws npusim::Error with
// `file:line:col: message` or `key.path: message`.
Config load_config(const std::string &path);
// Applies one `key=value` override.
void apply_override(Config &cfg, const std::string &assignment);
// Resolved config as YAML text (for reports and `config show`).
std::string config_to_yaml(const Config &cfg);
// Markdown reference table of every key.
std::string config_docs();

}  // namespace npusim
