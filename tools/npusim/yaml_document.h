// One YAML document from a text, for config files and sweep specs.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace npusim {

// "file:line:col: " for a position yaml-cpp reports (0-based line and column).
std::string yaml_where(const std::string &file, const YAML::Mark &m);

// A file a YAML file names (a config's base:, a sweep spec's base: and
// kernel paths, a graph spec's config: and kernel paths) is taken from that
// file's folder unless absolute ("" stays "").
std::string beside_spec(const std::string &file, const std::string &spec_path);

// Whether `n` is a quoted (or block) scalar: a string in YAML, "16" not 16.
// yaml-cpp tags a plain scalar "?" and any other "!" (unless tagged explicitly).
bool yaml_quoted(const YAML::Node &n);

// Parses `text` (named `file` in messages) as exactly one YAML document.
// Throws npusim::Error `file:line:col: ...` on a syntax error, on a second
// document (after `---`; it would be dropped unread) and on text the parser
// cannot get past (yaml-cpp 0.7's LoadAll loops forever on a stray `,` at
// the top level, and Load reads it as an empty document). `what` names the
// file's kind in the message: "a config file", "a sweep spec".
YAML::Node load_one_yaml_document(const std::string &text, const std::string &file, const std::string &what);

}  // namespace npusim
