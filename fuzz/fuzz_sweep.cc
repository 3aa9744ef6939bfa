// libFuzzer target: the sweep-spec loader and its expansion into points.
// A relative `base` resolves against configs/sweeps/ of the source tree.
#include <cstdint>
#include <string>

#include "error.h"
#include "sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string text(reinterpret_cast<const char *>(data), size);
    try {
        npusim::SweepSpec spec =
            npusim::load_sweep_text(text, std::string(NPUSIM_SOURCE_ROOT) + "/configs/sweeps/fuzz.yaml");
        // Bound the expansion: a grid is a product, and the fuzzer finds big ones.
        size_t points = spec.kernels.size() * spec.dtypes.size() * spec.shapes.size();
        for (const auto &a : spec.grid)
            points *= a.values.size() ? a.values.size() : 1;
        if (points <= 4096)
            (void)npusim::expand_sweep(spec);
    } catch (const npusim::Error &) {
    }
    return 0;
}
