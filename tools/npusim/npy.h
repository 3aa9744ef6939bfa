// NumPy .npy files (format 1.0-3.0) for tensors: little-endian float16,
// float32, int16 and int32, C order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npusim/isa.h"

namespace npusim {

struct NpyArray {
    npu_dtype dtype = NPU_F32;
    std::vector<uint64_t> shape;
    std::vector<uint8_t> data;  // shape product * element size bytes
};

// Parses .npy bytes; `name` is used in error messages. Throws npusim::Error.
NpyArray parse_npy(const std::string &bytes, const std::string &name);
NpyArray read_npy(const std::string &path);
std::string format_npy(const NpyArray &a);
void write_npy(const std::string &path, const NpyArray &a);

}  // namespace npusim
