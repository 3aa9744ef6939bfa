// VCD of one core: the issue hook records per-cycle value changes as the core
// runs ahead, and an SC_THREAD replays them into sc_signals at their own
// SystemC time, which sc_trace writes to the VCD file.
//
// Signals, under scope core<k>:
//   issued        instructions issued this cycle (0 .. issue width)
//   stall         0 = issuing; 1 + npu_stall = a cycle charged to that reason:
//                 1 sync, 2 dma_wait, 3 raw, 4 ub_bank, 5 unit_busy, 6 branch,
//                 7 slot, 8 drain; 9 = idle (finished, or outside the window)
//   issued_total  instructions issued so far inside the trace window
//   busy.<unit>   1 while an instruction of that unit is in flight (issue to
//                 completion; for dma: a transfer is in flight)
#pragma once

#include <cstdint>
#include <deque>
#include <systemc>

#include "engine.h"
#include "npusim/timing.h"

namespace npusim::sc {

struct VcdChange {
    uint64_t cycle;
    uint32_t signal;
    uint64_t value;
};

enum VcdSignal : uint32_t { kSigIssued, kSigStall, kSigIssuedTotal, kSigBusy0, kNumVcdSignals = kSigBusy0 + NPU_NUM_UNITS };

// Turns one core's issue events into value changes in time order. Issue
// events arrive in issue order, so every cycle before the latest issue is
// final: each change is queued once it is, and the queue only holds changes
// that SystemC time has not reached yet. Changes outside [start, end) are
// dropped; the values at `start` are queued when the window opens.
class VcdRecorder {
public:
    VcdRecorder(uint64_t start, uint64_t end) : start_(start), end_(end) {}

    void issue(const npu_issue_event &ev);
    void finish(uint64_t end_cycle);  // the core's last cycle (npu_core_stats.cycles)

    std::deque<VcdChange> &queue() { return queue_; }
    size_t max_queued() const { return max_queued_; }

private:
    void set(uint64_t cycle, unsigned signal, uint64_t value);
    void push(uint64_t cycle, unsigned signal, uint64_t value);
    void close_cycle();
    void busy_falls_until(uint64_t cycle);

    enum class Window { before, open, closed };
    uint64_t start_, end_;
    Window window_ = Window::before;
    uint64_t value_[kNumVcdSignals] = {0, kVcdIdle};
    bool in_cycle_ = false;   // cycle_ has issued instructions
    uint64_t cycle_ = 0, count_ = 0, total_ = 0;
    bool busy_[NPU_NUM_UNITS] = {};
    uint64_t busy_until_[NPU_NUM_UNITS] = {};
    std::deque<VcdChange> queue_;
    size_t max_queued_ = 0;
};

// The replaying side: sc_signals traced into the VCD file, and the thread
// that writes each queued change at its cycle.
class VcdProbe : public sc_core::sc_module {
public:
    // `fed` is notified after every scheduling round (new changes may be
    // queued); `over` turns true when no core will record again.
    VcdProbe(const sc_core::sc_module_name &name, unsigned core, sc_core::sc_trace_file *tf, uint64_t start,
             uint64_t end, const sc_core::sc_event &fed, const bool &over);

    VcdRecorder recorder;
    uint64_t replayed = 0, late = 0;

private:
    void replay();  // SC_THREAD

    sc_core::sc_signal<sc_dt::sc_uint<4>> issued_, stall_;
    sc_core::sc_signal<sc_dt::uint64> issued_total_;
    sc_core::sc_vector<sc_core::sc_signal<bool>> busy_;
    const sc_core::sc_event &fed_;
    const bool &over_;
};

}  // namespace npusim::sc
