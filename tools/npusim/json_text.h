// JSON text for every writer: one rule for strings that are not UTF-8.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace npusim {

// j as JSON text (indent as nlohmann's dump; -1 one line). A string that is
// not UTF-8 (a path's bytes, `k\xff/relu.s`) has each byte that is not
// part of a UTF-8 character replaced by U+FFFD, where dump() throws and the
// command ended in "internal error" after its run.
inline std::string json_text(const nlohmann::json &j, int indent = -1)
{
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace npusim
