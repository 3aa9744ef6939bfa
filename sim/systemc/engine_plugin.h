// The SystemC engine as a module opened at run time (engine_plugin.cc).
//
// Loading libsystemc costs every process that links it about 14 ms on the
// development machine (its static initialisers zero a 3 MiB heap: 768 page
// faults), a quarter of a whole `npusim run`, though only a run that asks
// for the SystemC engine (`--engine systemc`, `--vcd`) uses it. So the CLI
// does not link it: such a run opens this module (dlopen), which links
// libsystemc and the engine, and takes the engine from the one function it
// exports. The module and the CLI are built together from one tree; the
// version and the size of ScOptions catch a module from another build.
#pragma once

#include <cstddef>

#include "npusim/systemc/engine.h"

// The module's file name, found through the CLI's run path (build:
// build/sim/systemc; installed: <libdir>/npusim).
#define NPUSIM_SYSTEMC_ENGINE_MODULE "npusim-systemc-engine.so"
#define NPUSIM_SYSTEMC_ENGINE_ENTRY "npusim_systemc_engine_v1"

// Sets *out to systemc_engine(*opts) and returns 0, or returns -1 when
// options_size is not sizeof(npusim::ScOptions) (a module of another build).
extern "C" int npusim_systemc_engine_v1(size_t options_size, const npusim::ScOptions *opts,
                                        npusim::ScEngineFn *out);
using NpusimSystemcEngineEntry = decltype(&npusim_systemc_engine_v1);
