// The front end's one exception type: its message is the single line the
// user sees (`file:line:col: what is wrong`, or `key.path: what is wrong`).
#pragma once

#include <stdexcept>
#include <string>

namespace npusim {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string &message) : std::runtime_error(message) {}
};

}  // namespace npusim
