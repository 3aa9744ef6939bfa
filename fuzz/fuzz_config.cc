// libFuzzer target: the YAML hardware-config loader and its validation.
#include <cstdint>
#include <string>

#include "config.h"
#include "error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string text(reinterpret_cast<const char *>(data), size);
    try {
        npusim::Config cfg = npusim::load_config_text(text, "fuzz.yaml");
        npusim::validate_config(cfg);
        (void)npusim::config_to_yaml(cfg);
    } catch (const npusim::Error &) {
    }
    return 0;
}
