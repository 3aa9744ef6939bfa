// Kanata 0004 logs for Konata. The format only moves forward in time, while
// an instruction's later stages (Ex, retirement) lie in the future when it
// issues: those wait in a queue ordered by cycle and are written once no
// later issue can precede them. The queue holds instructions in flight only.
#include "trace.h"

#include <charconv>

#include "error.h"

namespace npusim {
namespace {

void put(std::string &b, uint64_t v)
{
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    b.append(tmp, r.ptr);
}

constexpr uint8_t kNoStall = 0xff;
constexpr char kHeader[] = "Kanata\t0004\n";

}  // namespace

uint64_t KonataTrace::min_bytes()
{
    return sizeof kHeader - 1;
}

KonataTrace::KonataTrace(const std::string &path, const TraceWindow &window, uint64_t max_bytes, unsigned core)
    : file_(path, checked_max_bytes(max_bytes, min_bytes(), "a Konata log needs (its header)")), window_(window),
      core_(core)
{
    out(kHeader);
}

void KonataTrace::out(const std::string &s)
{
    if (stopped_)
        return;
    if (!file_.write(s)) {
        stopped_ = true;
        note_ = file_.path() + ": Konata log stopped early: it reached --trace-max-bytes (" +
                std::to_string(file_.max_bytes()) + " bytes); the file holds the cycles before that";
        pending_ = {};
    }
}

void KonataTrace::goto_cycle(uint64_t cycle)
{
    line_.clear();
    if (!started_) {
        started_ = true;
        line_ = "C=\t";
        put(line_, cycle);
        line_ += '\n';
    } else if (cycle > cycle_) {
        line_ = "C\t";
        put(line_, cycle - cycle_);
        line_ += '\n';
    }
    cycle_ = cycle;
    if (!line_.empty())
        out(line_);
}

void KonataTrace::schedule(uint64_t cycle, Kind kind, uint64_t id, uint64_t seq, uint8_t stall)
{
    pending_.push(Pending{cycle, order_++, id, seq, kind, stall});
    max_pending_ = std::max(max_pending_, pending_.size());
}

void KonataTrace::write_pending(const Pending &p)
{
    goto_cycle(p.cycle);
    line_.clear();
    auto cmd = [&](const char *c, uint64_t a, const char *mid, const char *tail) {
        line_ += c;
        put(line_, a);
        line_ += mid;
        line_ += tail;
        line_ += '\n';
    };
    switch (p.kind) {
    case kWait:
        cmd("S\t", p.id, "\t0\t", "Ds");
        break;
    case kStallStart:
        cmd("S\t", p.id, "\t1\t", npu_stall_name(npu_stall(p.stall)));
        break;
    case kIssue:
        if (p.stall != kNoStall)
            cmd("E\t", p.id, "\t1\t", npu_stall_name(npu_stall(p.stall)));
        cmd("S\t", p.id, "\t0\t", "Is");
        break;
    case kExec:
        cmd("S\t", p.id, "\t0\t", "Ex");
        break;
    case kRetire:
    case kFlush:
        if (p.kind == kFlush && p.stall != kNoStall)
            cmd("E\t", p.id, "\t1\t", npu_stall_name(npu_stall(p.stall)));
        line_ += "R\t";
        put(line_, p.id);
        line_ += '\t';
        put(line_, p.seq);
        line_ += p.kind == kFlush ? "\t1\n" : "\t0\n";
        break;
    }
    out(line_);
}

// Every command at or before `cycle` is final: later issues come no earlier.
void KonataTrace::flush_until(uint64_t cycle)
{
    while (!stopped_ && !pending_.empty() && pending_.top().cycle <= cycle) {
        Pending p = pending_.top();
        pending_.pop();
        write_pending(p);
    }
}

// A row is clipped to the window (the cycles the VCD shows): its waiting and
// stall start no earlier than the window, and what lies past its end is cut
// there. The first instruction issuing at or after the end gets a row when
// it was waiting or stalled before the end, flushed (R type 1) at the end.
void KonataTrace::issue(unsigned core, const npu_issue_event &ev)
{
    if (core == core_) {
        issued_ = true;
        last_issue_ = ev.issue;
        last_seq_ = ev.seq;
    }
    if (core != core_ || stopped_ || ended_ || ev.issue < window_.start)
        return;
    const uint64_t end = window_.end;
    const uint64_t ready = std::max(ev.ready, window_.start);
    const uint64_t stall_from = std::max(ev.issue - ev.stall_cycles, window_.start);
    const uint64_t row_start = std::min(ready, stall_from);
    const bool inside = ev.issue < end;
    if (!inside) {
        ended_ = true;
        if (row_start >= end)
            return;
    }
    flush_until(row_start);
    const uint64_t id = next_id_++;
    goto_cycle(row_start);
    line_ = "I\t";
    put(line_, id);
    line_ += '\t';
    put(line_, ev.seq);
    line_ += "\t0\nL\t";
    put(line_, id);
    line_ += "\t0\t";
    put(line_, ev.pc);
    line_ += ": " + disasm_.text(ev) + "\nL\t";
    put(line_, id);
    line_ += "\t1\tslot ";
    put(line_, ev.slot);
    line_ += std::string(", ") + npu_unit_name(ev.unit) + ", issue ";
    put(line_, ev.issue);
    line_ += ", complete ";
    put(line_, ev.complete);
    if (ev.stall_cycles) {
        line_ += std::string(", ") + npu_stall_name(ev.stall) + " stall ";
        put(line_, ev.stall_cycles);
    }
    if (!inside)
        line_ += ", after the trace window";
    line_ += '\n';
    out(line_);
    const uint64_t issue = std::min(ev.issue, end);
    if (ready < issue)
        schedule(ready, kWait, id, ev.seq, kNoStall);
    const uint8_t stall = stall_from < issue ? uint8_t(ev.stall) : kNoStall;
    if (stall != kNoStall)
        schedule(stall_from, kStallStart, id, ev.seq, stall);
    if (!inside) {
        schedule(end, kFlush, id, ev.seq, stall);
        return;
    }
    schedule(ev.issue, kIssue, id, ev.seq, stall);
    const uint64_t retire = std::min(std::max(ev.complete, ev.issue + 1), end);
    if (retire > ev.issue + 1)
        schedule(ev.issue + 1, kExec, id, ev.seq, kNoStall);
    schedule(retire, kRetire, id, ev.seq, kNoStall);
}

// The cycles after the core's last issue are its drain (docs/timing.md
// T10, T11): no instruction waits in them, so they are a row of their own,
// its lane-1 stage "drain" clipped to the window and flushed (R type 1: no
// instruction retires) at its end.
void KonataTrace::finish(unsigned core, uint64_t end_cycle)
{
    if (core != core_ || stopped_ || !issued_)
        return;
    issued_ = false;
    const uint64_t from = std::max(last_issue_ + 1, window_.start), to = std::min(end_cycle, window_.end);
    if (from >= to)
        return;
    flush_until(from);
    const uint64_t id = next_id_++;
    goto_cycle(from);
    line_ = "I\t";
    put(line_, id);
    line_ += '\t';
    put(line_, last_seq_);
    line_ += "\t0\nL\t";
    put(line_, id);
    line_ += "\t0\tdrain\nL\t";
    put(line_, id);
    line_ += "\t1\tthe core's last results and transfers complete: its end at cycle ";
    put(line_, end_cycle);
    line_ += '\n';
    out(line_);
    schedule(from, kStallStart, id, last_seq_, uint8_t(NPU_STALL_DRAIN));
    schedule(to, kFlush, id, last_seq_, uint8_t(NPU_STALL_DRAIN));
}

void KonataTrace::close()
{
    flush_until(UINT64_MAX);
    file_.commit();
}

}  // namespace npusim
