// Simulated cycles <-> SystemC time: one core cycle is one nanosecond.
#pragma once

#include <cstdint>
#include <systemc>

namespace npusim::sc {

inline sc_core::sc_time::value_type ticks_per_cycle()
{
    static const sc_core::sc_time::value_type ticks = sc_core::sc_time(1, sc_core::SC_NS).value();
    return ticks;
}

inline sc_core::sc_time cycle_time(uint64_t cycle) { return sc_core::sc_time::from_value(cycle * ticks_per_cycle()); }

inline uint64_t now_cycle() { return sc_core::sc_time_stamp().value() / ticks_per_cycle(); }

// Suspends the calling thread until `cycle` (no-op when it is not in the future).
inline void wait_until_cycle(uint64_t cycle)
{
    uint64_t now = now_cycle();
    if (cycle > now)
        sc_core::wait(cycle_time(cycle - now));
}

// Ends the calling SC_THREAD's work: it waits for its own termination, which
// never comes, instead of returning. SystemC 2.3.4 tells AddressSanitizer
// about every coroutine switch except the last one of a thread that returns
// (sc_cor_pkg_qt::abort), so after such a return into sc_start's caller ASan
// kept the dead thread's stack, unmapped by then, as the main thread's, and
// LeakSanitizer's exit scan of it crashed ("Tracer caught signal 11") in
// about half of all sanitized runs. A thread that only blocks makes every
// switch a noted one. sc_start() still returns: nothing is left to run.
[[noreturn]] inline void end_thread()
{
    for (;;)
        sc_core::wait(sc_core::sc_get_current_process_handle().terminated_event());
}

}  // namespace npusim::sc
