// libFuzzer target: the .npy parser, and a round trip of what it accepts.
#include <cstdint>
#include <string>

#include "error.h"
#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string bytes(reinterpret_cast<const char *>(data), size);
    try {
        npusim::NpyArray a = npusim::parse_npy(bytes, "fuzz.npy");
        npusim::NpyArray b = npusim::parse_npy(npusim::format_npy(a), "again.npy");
        if (a.data != b.data || a.shape != b.shape || a.dtype != b.dtype)
            __builtin_trap();  // what we write must read back the same
    } catch (const npusim::Error &) {
    }
    return 0;
}
