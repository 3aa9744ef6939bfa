// libFuzzer target: the graph-spec loader (npusim graph, docs/fusion.md):
// parsing and every check against the kernels' manifests, no runs. A
// relative `config` resolves against configs/graphs/ of the source tree.
#include <cstdint>
#include <string>

#include "error.h"
#include "graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string text(reinterpret_cast<const char *>(data), size);
    try {
        (void)npusim::load_graph_text(text, std::string(NPUSIM_SOURCE_ROOT) + "/configs/graphs/fuzz.yaml");
    } catch (const npusim::Error &) {
    }
    return 0;
}
