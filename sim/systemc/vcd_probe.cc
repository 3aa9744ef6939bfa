// Issue events -> time-ordered value changes -> sc_signals -> VCD.
#include "npusim/systemc/vcd_probe.h"

#include <algorithm>
#include <string>

#include "npusim/systemc/clock.h"

namespace npusim::sc {

// ---- recording --------------------------------------------------------------

void VcdRecorder::push(uint64_t cycle, unsigned signal, uint64_t value)
{
    queue_.push_back({cycle, signal, value});
    max_queued_ = std::max(max_queued_, queue_.size());
}

// Every change goes through here, in time order.
void VcdRecorder::set(uint64_t cycle, unsigned signal, uint64_t value)
{
    if (window_ == Window::closed)
        return;
    if (cycle >= end_) {
        // Leaving the window: open it first if it never saw a change (the
        // values held all through it), then show the core idle from `end`.
        if (window_ == Window::before && start_ < end_) {
            window_ = Window::open;
            for (unsigned s = 0; s < kNumVcdSignals; s++)
                push(start_, s, value_[s]);
        }
        if (window_ == Window::open) {
            push(end_, kSigIssued, 0);
            push(end_, kSigStall, kVcdIdle);
            for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
                push(end_, kSigBusy0 + u, 0);
        }
        window_ = Window::closed;
        return;
    }
    if (cycle < start_) {
        value_[signal] = value;
        return;
    }
    if (window_ == Window::before) {
        window_ = Window::open;
        for (unsigned s = 0; s < kNumVcdSignals; s++)
            push(start_, s, value_[s]);
    }
    if (value_[signal] == value)
        return;
    value_[signal] = value;
    push(cycle, signal, value);
}

// The cycle of the latest issue is complete: its count is known.
void VcdRecorder::close_cycle()
{
    if (cycle_ >= start_ && cycle_ < end_)
        total_ += count_;
    set(cycle_, kSigIssued, count_);
    set(cycle_, kSigIssuedTotal, total_);
}

// Busy intervals that end by `cycle` end for good: a later issue cannot start
// before the latest one, so it cannot extend them.
void VcdRecorder::busy_falls_until(uint64_t cycle)
{
    unsigned order[NPU_NUM_UNITS], n = 0;
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++) {
        if (!busy_[u] || busy_until_[u] > cycle)
            continue;
        unsigned i = n++;  // insertion by end cycle: a handful of units
        for (; i > 0 && busy_until_[order[i - 1]] > busy_until_[u]; i--)
            order[i] = order[i - 1];
        order[i] = u;
    }
    for (unsigned i = 0; i < n; i++) {
        set(busy_until_[order[i]], kSigBusy0 + order[i], 0);
        busy_[order[i]] = false;
    }
}

void VcdRecorder::issue(const npu_issue_event &ev)
{
    const uint64_t t = ev.issue;
    if (!in_cycle_ || t != cycle_) {
        uint64_t from = 0;
        if (in_cycle_) {
            close_cycle();
            from = cycle_ + 1;
        }
        if (t > from) {  // the empty cycles before this issue, charged to one reason
            set(from, kSigIssued, 0);
            set(from, kSigStall, 1 + unsigned(ev.stall));
        }
        busy_falls_until(t);
        in_cycle_ = true;
        cycle_ = t;
        count_ = 0;
        set(t, kSigStall, kVcdIssuing);
    }
    count_++;
    const unsigned u = unsigned(ev.unit) < NPU_NUM_UNITS ? unsigned(ev.unit) : 0;
    if (!busy_[u]) {
        busy_[u] = true;
        busy_until_[u] = ev.complete;
        set(t, kSigBusy0 + u, 1);
    } else {
        busy_until_[u] = std::max(busy_until_[u], ev.complete);
    }
}

void VcdRecorder::finish(uint64_t end_cycle)
{
    if (in_cycle_) {
        close_cycle();
        if (end_cycle > cycle_ + 1) {  // drain: results and DMA still to complete
            set(cycle_ + 1, kSigIssued, 0);
            set(cycle_ + 1, kSigStall, 1 + unsigned(NPU_STALL_DRAIN));
        }
    }
    busy_falls_until(UINT64_MAX);
    set(end_cycle, kSigIssued, 0);
    set(end_cycle, kSigStall, kVcdIdle);
    in_cycle_ = false;
}

// ---- replay -----------------------------------------------------------------

VcdProbe::VcdProbe(const sc_core::sc_module_name &name, unsigned core, sc_core::sc_trace_file *tf, uint64_t start,
                   uint64_t end, const sc_core::sc_event &fed, const bool &over)
    : sc_core::sc_module(name),
      recorder(start, end),
      issued_("issued", 0),
      stall_("stall", kVcdIdle),
      issued_total_("issued_total", 0),
      busy_("busy", NPU_NUM_UNITS),
      fed_(fed),
      over_(over)
{
    const std::string scope = "core" + std::to_string(core) + ".";
    sc_core::sc_trace(tf, issued_, scope + "issued");
    sc_core::sc_trace(tf, stall_, scope + "stall");
    sc_core::sc_trace(tf, issued_total_, scope + "issued_total");
    for (unsigned u = 0; u < NPU_NUM_UNITS; u++)
        sc_core::sc_trace(tf, busy_[u], scope + "busy." + npu_unit_name(npu_unit(u)));
    SC_HAS_PROCESS(VcdProbe);
    SC_THREAD(replay);
}

void VcdProbe::replay()
{
    std::deque<VcdChange> &q = recorder.queue();
    for (;;) {
        while (q.empty()) {
            if (over_)
                end_thread();
            wait(fed_);
        }
        wait_until_cycle(q.front().cycle);
        const uint64_t now = now_cycle();
        while (!q.empty() && q.front().cycle <= now) {
            const VcdChange ch = q.front();
            q.pop_front();
            late += ch.cycle < now;
            replayed++;
            switch (ch.signal) {
            case kSigIssued: issued_.write(ch.value); break;
            case kSigStall: stall_.write(ch.value); break;
            case kSigIssuedTotal: issued_total_.write(ch.value); break;
            default: busy_[ch.signal - kSigBusy0].write(ch.value != 0); break;
            }
        }
    }
}

// ---- the memory scope -------------------------------------------------------

MemoryVcdProbe::MemoryVcdProbe(const sc_core::sc_module_name &name, npu_memsys *ms, sc_core::sc_trace_file *tf,
                               uint64_t start, uint64_t end, const sc_core::sc_event &fed, const bool &over)
    : sc_core::sc_module(name),
      ms_(ms),
      start_(start),
      end_(end),
      signal_("signal", kNumSignals),
      fed_(fed),
      over_(over)
{
    static const char *const names[kNumSignals] = {"l2_hits",       "l2_misses",       "l2_mshrs_busy",
                                                    "dram_requests", "dram_bytes_read", "dram_bytes_written",
                                                    "end_of_run_writeback"};
    for (unsigned s = 0; s < kNumSignals; s++)
        sc_core::sc_trace(tf, signal_[s], std::string("memory.") + names[s]);
    // The window's edges wake the replay (the levels show from its start and
    // drop to zero at its end, as the cores show idle outside it); they are
    // no changes of their own, so a window past the run does not hold the
    // file open until it.
    if (start_ < end_) {
        add(start_, kWindowStart, 0);
        if (end_ != UINT64_MAX)
            add(end_, kWindowEnd, 0);
    }
    npu_memsys_add_observer(ms_, &MemoryVcdProbe::observe, this);
    SC_HAS_PROCESS(MemoryVcdProbe);
    SC_THREAD(replay);
}

MemoryVcdProbe::~MemoryVcdProbe() { npu_memsys_remove_observer(ms_, &MemoryVcdProbe::observe, this); }

void MemoryVcdProbe::add(uint64_t cycle, uint32_t signal, int64_t delta)
{
    queue_.push({cycle, order_++, signal, delta});
    max_queued = std::max(max_queued, queue_.size());
    if (signal < kNumSignals)
        latest_ = std::max(latest_, cycle);
}

void MemoryVcdProbe::count(uint64_t cycle, uint32_t signal, int64_t delta)
{
    if (cycle >= start_ && cycle < end_)
        add(cycle, signal, delta);
}

void MemoryVcdProbe::observe(void *ctx, const npu_memsys_event *ev)
{
    auto *p = static_cast<MemoryVcdProbe *>(ctx);
    if (ev->kind == NPU_MEMSYS_L2_ACCESS) {
        p->count(ev->now, ev->l2->outcome == NPU_L2_HIT ? kL2Hits : kL2Misses, 1);
        if (ev->l2->fetched) {
            p->add(ev->l2->fill_request, kL2MshrsBusy, 1);
            p->add(ev->l2->line_ready, kL2MshrsBusy, -1);
        }
        return;
    }
    p->count(ev->now, ev->is_write ? kDramBytesWritten : kDramBytesRead, ev->bytes);
    p->add(ev->now, kDramRequests, 1);
    p->add(ev->done, kDramRequests, -1);
    if (ev->end_of_run) {
        p->add(ev->now, kEndOfRunWriteback, 1);
        p->add(ev->done, kEndOfRunWriteback, -1);
    }
}

void MemoryVcdProbe::replay()
{
    static constexpr unsigned kLevels[] = {kL2MshrsBusy, kDramRequests, kEndOfRunWriteback};
    for (;;) {
        while (queue_.empty()) {
            if (over_)
                end_thread();
            wait(fed_);
        }
        const uint64_t now = now_cycle(), next = queue_.top().cycle;
        if (next > now) {
            if (over_)  // every change is replayed: what is left is a window edge after the file's end
                end_thread();
            wait(cycle_time(next - now), fed_);  // a round may queue an earlier change
            continue;
        }
        while (!queue_.empty() && queue_.top().cycle <= now) {
            const Change ch = queue_.top();
            queue_.pop();
            late += ch.cycle < now;
            replayed++;
            if (ch.signal < kNumSignals)
                value_[ch.signal] += uint64_t(ch.delta);
        }
        if (now >= start_ && now < end_) {
            for (unsigned s = 0; s < kNumSignals; s++)
                signal_[s].write(value_[s]);
        } else if (now >= end_) {
            // After the window the levels are zero, as a core is idle; the
            // counters keep what the window counted.
            for (unsigned s : kLevels)
                signal_[s].write(0);
        }
    }
}

}  // namespace npusim::sc
