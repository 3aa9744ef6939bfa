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
//
// With memory.model: l2, one more scope, memory (MemoryVcdProbe):
//   l2_hits, l2_misses     L2 accesses so far that arrived inside the window
//   l2_mshrs_busy          MSHRs holding a fill (fill request to arrival)
//   dram_requests          DRAM requests in flight (arrival to completion)
//   dram_bytes_read,       bytes of DRAM requests so far that arrived inside
//   dram_bytes_written     the window
//   end_of_run_writeback   end-of-run write-back requests in flight (the drain
//                          after the last core, npu_memsys_drain)
// The three levels are 0 outside the window (as a core shows idle there); the
// counters keep what the window counted.
#pragma once

#include <cstdint>
#include <deque>
#include <queue>
#include <systemc>
#include <vector>

#include "engine.h"
#include "npusim/memsys.h"
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

// The memory scope: observes the memory system (npu_memsys_add_observer) and
// replays its changes at their cycles. Memory events come out of time order
// (a transfer books all its lines at once, a fill completes later), but never
// before SystemC time (requests are never in the past: memory.cc), so
// changes wait in a min-heap and the thread wakes for the earliest, or when a
// round may have queued an earlier one.
class MemoryVcdProbe : public sc_core::sc_module {
public:
    enum Signal : uint32_t {
        kL2Hits,
        kL2Misses,
        kL2MshrsBusy,
        kDramRequests,
        kDramBytesRead,
        kDramBytesWritten,
        kEndOfRunWriteback,
        kNumSignals,
        kWindowStart = kNumSignals,  // writes every signal (the window opens)
        kWindowEnd                   // the levels drop to zero (the window closes)
    };

    MemoryVcdProbe(const sc_core::sc_module_name &name, npu_memsys *ms, sc_core::sc_trace_file *tf, uint64_t start,
                   uint64_t end, const sc_core::sc_event &fed, const bool &over);
    ~MemoryVcdProbe() override;

    uint64_t latest_cycle() const { return latest_; }  // of every change queued so far (not the window's edges)
    uint64_t replayed = 0, late = 0;
    size_t max_queued = 0;

private:
    struct Change {
        uint64_t cycle, order;
        uint32_t signal;
        int64_t delta;
        bool operator>(const Change &o) const { return cycle != o.cycle ? cycle > o.cycle : order > o.order; }
    };
    static void observe(void *ctx, const npu_memsys_event *ev);
    void add(uint64_t cycle, uint32_t signal, int64_t delta);
    void count(uint64_t cycle, uint32_t signal, int64_t delta);  // only inside the window
    void replay();  // SC_THREAD

    npu_memsys *ms_;
    uint64_t start_, end_, order_ = 0, latest_ = 0;
    std::priority_queue<Change, std::vector<Change>, std::greater<Change>> queue_;
    uint64_t value_[kNumSignals] = {};
    sc_core::sc_vector<sc_core::sc_signal<sc_dt::uint64>> signal_;
    const sc_core::sc_event &fed_;
    const bool &over_;
};

}  // namespace npusim::sc
