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

}  // namespace npusim::sc
