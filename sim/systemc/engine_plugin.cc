// The one entry point of npusim-systemc-engine.so (engine_plugin.h): the
// SystemC engine for a CLI that does not link libsystemc.
#include "engine_plugin.h"

extern "C" __attribute__((visibility("default"))) int npusim_systemc_engine_v1(size_t options_size,
                                                                            const npusim::ScOptions *opts,
                                                                            npusim::ScEngineFn *out)
{
    if (options_size != sizeof(npusim::ScOptions))
        return -1;
    *out = npusim::systemc_engine(*opts);
    return 0;
}

// libsystemc's own main() calls sc_main, so the library cannot be loaded
// without one. This one is never called: the process's main is the CLI's.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char **)
{
    return 1;
}
