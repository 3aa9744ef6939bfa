// The SystemC run engine: one sc_module per timed core under one top, run
// by sc_start(). Same cores, limits, barriers and traps as npu_run_timed(),
// and the same stats to the bit; optionally a VCD of each core's issue,
// stall reason and busy units.
//
// SystemC can elaborate one scenario per process: the engine runs once per
// process and refuses a second run (std::logic_error).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "npusim/run.h"
#include "npusim/timing.h"

namespace npusim {

// VCD stall signal codes: 0 = the core issued this cycle, 1 + npu_stall for a
// cycle charged to that stall reason, kVcdIdle when the core is not running
// (finished, or outside the trace window).
enum : unsigned { kVcdIssuing = 0, kVcdIdle = 1 + NPU_NUM_STALLS };

struct ScRunInfo {
    uint64_t end_cycle = 0;     // SystemC time (cycles) when the run ended: the slowest core's last cycle
    uint64_t rounds = 0;        // scheduling turns handed to the cores
    uint64_t vcd_changes = 0;   // value changes replayed into the VCD signals
    uint64_t vcd_late = 0;      // changes that arrived after their time had passed (must stay 0)
    uint64_t vcd_max_queued = 0;  // most changes waiting for replay at once (memory bound)
};

struct ScOptions {
    std::string vcd_path;               // empty: no VCD
    std::string vcd_temp;               // the file the VCD is written to before its rename over
                                        // vcd_path, less the ".vcd" SystemC adds (empty: vcd_path.tmp.PID)
    uint64_t trace_start = 0;           // VCD window [trace_start, trace_end), in cycles
    uint64_t trace_end = UINT64_MAX;
    // A timed core has one issue hook. With a VCD the engine installs its own
    // (after RunOptions::attach ran) and passes every event on to `forward`,
    // so the front end's trace writers keep receiving them.
    std::function<void(unsigned core, const npu_issue_event &)> forward;
    ScRunInfo *info = nullptr;          // filled in after the run when set (by systemc_engine; a
                                        // platform's own NpuTop gives run_info())
    // memory.model l2: leave the L2's next-level socket (NpuTop::memory_socket)
    // for the platform to bind to its own memory target, instead of npusim's
    // DRAM model (docs/systemc.md).
    bool external_memory = false;
};

// The same type as npusim::Engine (tools/npusim/runner.h), spelled out so the
// SystemC layer does not depend on the front end.
using ScEngineFn = std::function<void(npu_timed_core *const *cores, unsigned n, const npu_run_limits &lim)>;

// The VCD could not be written whole (`path: why`, one line for the user);
// nothing is left under its name.
struct VcdFileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// An engine for RunOptions::engine. Throws VcdFileError when the VCD cannot
// be written, std::logic_error on a second run in one process.
ScEngineFn systemc_engine(const ScOptions &opts);

// sc_core::sc_start() for a platform's own sc_main (docs/systemc.md): the
// same, and in an AddressSanitizer build it then tells ASan the main
// thread's stack again (SystemC 2.3.4 loses it: LeakSanitizer would not scan
// it at exit, a C++ throw could not unpoison it). Call it instead of
// sc_start; throws what sc_start throws.
void sc_start_checked();

// Keeps SystemC quiet: SystemC's reports go to stderr (never stdout, where
// JSON reports go) and its infos are dropped. Call first in sc_main; the
// engine calls it too. (The copyright banner is turned off before main(),
// by a constructor in engine.cc: libsystemc prints it before sc_main.)
void systemc_quiet();

}  // namespace npusim
