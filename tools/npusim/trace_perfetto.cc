// Chrome/Perfetto trace-event JSON, streamed: {"traceEvents":[ event, ... ]}.
// Timestamps are in microseconds by the format's definition; npusim writes
// one cycle per microsecond.
#include "trace.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iterator>

#include "error.h"

namespace npusim {
namespace {

// The document around the events; the smallest trace is the two together.
constexpr char kHead[] =
    "{\"otherData\":{\"generator\":\"npusim\",\"time_unit\":\"1 us = 1 cycle\"},\n\"traceEvents\":[";
constexpr char kTail[] = "\n]}\n";
constexpr size_t kTailReserve = 16;  // room kept for kTail when the byte limit nears

void put(std::string &b, uint64_t v)
{
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    b.append(tmp, r.ptr);
}

}  // namespace

uint64_t PerfettoTrace::min_bytes()
{
    return sizeof kHead - 1 + sizeof kTail - 1;
}

PerfettoTrace::PerfettoTrace(const std::string &path, const TraceWindow &window, uint64_t max_bytes)
    : file_(path, checked_max_bytes(max_bytes, min_bytes(), "a Perfetto trace needs (its header and tail)")),
      window_(window)
{
    file_.write(kHead, sizeof kHead - 1, sizeof kTail - 1);  // fits: max_bytes >= min_bytes()
}

void PerfettoTrace::stop(const std::string &why)
{
    if (stopped_)
        return;
    stopped_ = true;
    note_ = file_.path() + ": trace stopped early: " + why + "; the file holds the events before that";
}

void PerfettoTrace::emit(const std::string &json)
{
    if (stopped_)
        return;
    buf_.assign(first_ ? "\n" : ",\n");
    buf_ += json;
    if (!file_.write(buf_, kTailReserve)) {
        stop("it reached --trace-max-bytes (" + std::to_string(file_.max_bytes()) + " bytes)");
        return;
    }
    first_ = false;
}

void PerfettoTrace::metadata(unsigned k, unsigned tid, const char *what, const std::string &name, int sort)
{
    named(core_pid(k), global_tid(k, tid), what, "\"name\":\"" + name + "\"");
    if (sort >= 0)
        named(core_pid(k), global_tid(k, tid), "thread_sort_index", "\"sort_index\":" + std::to_string(sort));
}

PerfettoTrace::Core &PerfettoTrace::core(unsigned k)
{
    if (k >= cores_.size())
        cores_.resize(k + 1);
    Core &c = cores_[k];
    if (!c.named) {
        c.named = true;
        metadata(k, 0, "process_name", "core " + std::to_string(k), -1);
        metadata(k, kStallTid, "thread_name", "stalls", int(kStallTid));
    }
    return c;
}

// Instructions of one unit overlap in time (pipelined, several instances,
// DMA queue), and Perfetto wants slices on one track to nest: each in-flight
// instruction takes the first lane (sub-track) free at its issue.
unsigned PerfettoTrace::lane_for(Core &c, unsigned k, unsigned unit, uint64_t issue, uint64_t complete)
{
    std::vector<uint64_t> &lanes = c.lane_free[unit];
    unsigned best = 0;
    for (unsigned l = 0; l < lanes.size(); l++) {
        if (lanes[l] <= issue) {
            lanes[l] = complete;
            return l;
        }
        if (lanes[l] < lanes[best])
            best = l;
    }
    if (lanes.size() < (unit < NPU_NUM_UNITS ? kMaxLanes : kMaxPipeLanes)) {
        lanes.push_back(complete);
        unsigned l = unsigned(lanes.size() - 1);
        const std::string track = unit < NPU_NUM_UNITS ? npu_unit_name(npu_unit(unit))
                                                       : std::string("pipe ") + npu_pipe_name(npu_pipe(unit - NPU_NUM_UNITS));
        metadata(k, unit_tid(unit, l), "thread_name", track + " #" + std::to_string(l), int(unit_tid(unit, l)));
        return l;
    }
    lanes[best] = complete;  // more in flight than lanes: share the one free soonest
    return best;
}

void PerfettoTrace::counter(unsigned k, uint64_t cycle, uint64_t depth)
{
    if (!window_.contains(cycle))
        return;
    std::string j = "{\"ph\":\"C\",\"pid\":";
    put(j, core_pid(k));
    j += ",\"name\":\"dma_inflight\",\"ts\":";
    put(j, ts(cycle));
    j += ",\"args\":{\"transfers\":";
    put(j, depth);
    j += "}}";
    emit(j);
}

// The queue depth drops when transfers complete, between issue events.
void PerfettoTrace::dma_completions_until(Core &c, unsigned k, uint64_t cycle)
{
    while (!c.dma_done.empty() && c.dma_done.top() <= cycle) {
        uint64_t t = c.dma_done.top();
        c.dma_done.pop();
        c.dma_depth--;
        if (c.dma_done.empty() || c.dma_done.top() != t)  // one value per timestamp
            counter(k, t, c.dma_depth);
    }
}

std::string PerfettoTrace::insn_args(const npu_issue_event &ev)
{
    std::string args = "\"pc\":";
    put(args, ev.pc);
    args += ",\"seq\":";
    put(args, ev.seq);
    args += ",\"insn\":\"" + disasm_.text(ev) + "\"";
    return args;
}

// Every slice is clipped to the window, as the VCD shows those cycles: the
// stall before an issue shows for its cycles inside the window, whichever
// side of it the issue falls (the run of empty cycles that straddles the
// end belongs to the first instruction issuing after it); an instruction
// issuing inside shows, its unit and pipe slices up to the window's end.
void PerfettoTrace::issue(unsigned k, const npu_issue_event &ev)
{
    if (stopped_)
        return;
    Core &c = core(k);
    c.issued = true;
    c.last = ev;
    c.last.insn = nullptr;
    disasm_.text(ev);  // cached by pc for finish's args, when the program may be gone
    dma_completions_until(c, k, ev.issue);
    const bool dma = ev.dma_start != 0 && !ev.pipe;  // the DMA engine's transfers, not the cube's pipes
    if (dma) {
        c.dma_done.push(ev.complete);
        c.dma_depth++;
    }
    const uint64_t stall_from = std::max(ev.issue - ev.stall_cycles, window_.start);
    const uint64_t stall_to = std::min(ev.issue, window_.end);
    if (!window_.contains(ev.issue)) {
        if (stall_from < stall_to)
            span(core_pid(k), global_tid(k, kStallTid), ts(stall_from), stall_to - stall_from, "stall",
                 npu_stall_name(ev.stall), insn_args(ev));
        return;
    }
    if (dma)
        counter(k, ev.issue, c.dma_depth);

    const unsigned unit = unsigned(ev.unit) < NPU_NUM_UNITS ? unsigned(ev.unit) : 0;
    if (!((c.slots_named >> ev.slot) & 1)) {
        c.slots_named |= 1u << ev.slot;
        metadata(k, slot_tid(ev.slot), "thread_name", "slot " + std::to_string(ev.slot), int(slot_tid(ev.slot)));
    }
    // A cube operation holds the DMA issue port for its issue cycle; its
    // pipe's track shows it from its start to its tag's completion.
    const uint64_t complete = ev.pipe ? ev.issue + 1 : std::max(ev.complete, ev.issue + 1);
    const uint64_t dur = std::min(complete, window_.end) - ev.issue;
    const unsigned lane = lane_for(c, k, unit, ev.issue, ev.issue + dur);
    const std::string &name = disasm_.mnemonic(ev);
    const std::string args = insn_args(ev);

    auto slice = [&](unsigned tid, uint64_t t, uint64_t d, const char *cat, const std::string &nm) {
        span(core_pid(k), global_tid(k, tid), ts(t), d, cat, nm, args);
    };
    slice(slot_tid(ev.slot), ev.issue, 1, "slot", name);
    slice(unit_tid(unit, lane), ev.issue, dur, "unit", name);
    if (ev.pipe && ev.dma_start < window_.end) {
        const unsigned track = pipe_track(ev.pipe - 1);
        const uint64_t held = std::min(std::max(ev.complete, ev.dma_start + 1), window_.end) - ev.dma_start;
        slice(unit_tid(track, lane_for(c, k, track, ev.dma_start, ev.dma_start + held)), ev.dma_start, held, "pipe",
              name);
    }
    if (stall_from < stall_to)
        slice(kStallTid, stall_from, stall_to - stall_from, "stall", npu_stall_name(ev.stall));
}

// The cycles after the core's last issue are its drain (docs/timing.md T10,
// T11): a stall slice up to its end, clipped to the window as every slice
// is, so the stalls track holds every stall cycle the VCD shows.
void PerfettoTrace::finish(unsigned k, uint64_t end_cycle)
{
    if (stopped_ || k >= cores_.size() || !cores_[k].issued)
        return;
    Core &c = cores_[k];
    c.issued = false;
    const uint64_t from = std::max(c.last.issue + 1, window_.start), to = std::min(end_cycle, window_.end);
    if (from < to)
        span(core_pid(k), global_tid(k, kStallTid), ts(from), to - from, "stall", npu_stall_name(NPU_STALL_DRAIN),
             insn_args(c.last));
}

// ---- the memory process: L2 and DRAM counters -------------------------------

PerfettoTrace::MemBucket &PerfettoTrace::bucket(uint64_t cycle)
{
    if (mem_buckets_.size() >= kMaxPendingBuckets)
        write_buckets_before(std::next(mem_buckets_.begin(), kMaxPendingBuckets / 2)->first);
    uint64_t index = cycle / kMemoryBucket;
    if (index < mem_written_until_) {
        // Later than kMaxPendingBuckets allowed for: counted in the first bucket still pending.
        mem_late_++;
        index = mem_written_until_;
    }
    return mem_buckets_[index];
}

// Adds the cycles of [from, to) inside the window to the buckets they cover.
void PerfettoTrace::spread(uint64_t MemBucket::*field, uint64_t from, uint64_t to)
{
    from = std::max(from, window_.start);
    to = std::min(to, window_.end);
    while (from < to) {
        const uint64_t edge = (from / kMemoryBucket + 1) * kMemoryBucket;
        const uint64_t until = std::min(to, edge);
        bucket(from).*field += until - from;
        from = until;
    }
}

void PerfettoTrace::memory(const npu_memsys_event &ev)
{
    if (stopped_)
        return;
    if (!mem_named_) {
        mem_named_ = true;
        named(kMemoryPid, 0, "process_name", "\"name\":\"memory (L2, DRAM)\"");
        named(kMemoryPid, 0, "process_sort_index", "\"sort_index\":" + std::to_string(kMemoryPid));
    }
    if (ev.kind == NPU_MEMSYS_L2_ACCESS) {
        if (window_.contains(ev.now)) {
            MemBucket &b = bucket(ev.now);
            if (ev.l2->outcome == NPU_L2_HIT)
                b.hits++;
            else
                b.misses++;
        }
        if (ev.l2->fetched)
            spread(&MemBucket::mshr_cycles, ev.l2->fill_request, ev.l2->line_ready);
        return;
    }
    if (window_.contains(ev.now)) {
        MemBucket &b = bucket(ev.now);
        (ev.is_write ? b.written : b.read) += ev.bytes;
    }
    spread(&MemBucket::dram_cycles, ev.now, ev.done);
    if (ev.end_of_run) {
        drain_lines_++;
        drain_bytes_ += ev.bytes;
        drain_start_ = std::min(drain_start_, ev.now);
        drain_end_ = std::max(drain_end_, ev.done);
    }
}

void PerfettoTrace::memory_counter(uint64_t cycle, const char *name, const std::string &args)
{
    std::string j = "{\"ph\":\"C\",\"pid\":";
    put(j, kMemoryPid);
    j += ",\"name\":\"";
    j += name;
    j += "\",\"ts\":";
    put(j, ts(cycle));
    j += ",\"args\":{" + args + "}}";
    emit(j);
}

void PerfettoTrace::write_bucket(uint64_t index, const MemBucket &b)
{
    auto mean = [](uint64_t cycles) {
        char tmp[32];
        std::snprintf(tmp, sizeof tmp, "%.4g", double(cycles) / double(kMemoryBucket));
        return std::string(tmp);
    };
    auto count = [](const char *name, uint64_t v) {
        std::string a = std::string("\"") + name + "\":";
        put(a, v);
        return a;
    };
    memory_counter(index * kMemoryBucket, "l2_accesses", count("hits", b.hits) + "," + count("misses", b.misses));
    memory_counter(index * kMemoryBucket, "l2_mshrs_busy", "\"mean\":" + mean(b.mshr_cycles));
    memory_counter(index * kMemoryBucket, "dram_bytes", count("read", b.read) + "," + count("written", b.written));
    memory_counter(index * kMemoryBucket, "dram_requests", "\"mean\":" + mean(b.dram_cycles));
}

// Writes the pending buckets below `index`, in time order, each idle gap
// opened by a zero sample (a counter holds its value until the next one).
void PerfettoTrace::write_buckets_before(uint64_t index)
{
    while (!mem_buckets_.empty() && mem_buckets_.begin()->first < index) {
        const auto it = mem_buckets_.begin();
        if (mem_zero_due_ && it->first > mem_written_until_)
            write_bucket(mem_written_until_, MemBucket{});
        write_bucket(it->first, it->second);
        mem_written_until_ = it->first + 1;
        mem_zero_due_ = true;
        mem_buckets_.erase(it);
    }
}

// Writes what a run (or a step of a chain) left pending: the DMA queue's
// last completions, the memory counters and the write-back slice.
void PerfettoTrace::flush_step()
{
    if (stopped_)
        return;
    for (unsigned k = 0; k < cores_.size(); k++)
        dma_completions_until(cores_[k], k, UINT64_MAX);
    if (!mem_named_)
        return;
    write_buckets_before(UINT64_MAX);
    if (mem_zero_due_)
        write_bucket(mem_written_until_, MemBucket{});
    if (drain_lines_ && window_.contains(drain_start_)) {
        const unsigned tid = kMemoryPid * 1000 + kDramTid;
        if (!dram_named_) {
            dram_named_ = true;
            named(kMemoryPid, tid, "thread_name", "\"name\":\"dram\"");
        }
        std::string args = "\"lines\":";
        put(args, drain_lines_);
        args += ",\"bytes\":";
        put(args, drain_bytes_);
        span(kMemoryPid, tid, ts(drain_start_), std::max<uint64_t>(1, drain_end_ - drain_start_), "memory",
             "end-of-run write-back", args);
    }
}

void PerfettoTrace::named(unsigned pid, unsigned tid, const char *what, const std::string &args)
{
    std::string j = "{\"ph\":\"M\",\"pid\":";
    put(j, pid);
    if (tid) {
        j += ",\"tid\":";
        put(j, tid);
    }
    j += ",\"name\":\"";
    j += what;
    j += "\",\"args\":{" + args + "}}";
    emit(j);
}

void PerfettoTrace::span(unsigned pid, unsigned tid, uint64_t start, uint64_t dur, const char *cat,
                         const std::string &name, const std::string &args)
{
    std::string j = "{\"ph\":\"X\",\"pid\":";
    put(j, pid);
    j += ",\"tid\":";
    put(j, tid);
    j += ",\"ts\":";
    put(j, start);
    j += ",\"dur\":";
    put(j, dur);
    j += ",\"cat\":\"";
    j += cat;
    j += "\",\"name\":\"" + name + "\",\"args\":{" + args + "}}";
    emit(j);
}

void PerfettoTrace::end_step(const std::string &name, uint64_t cycles)
{
    flush_step();
    if (stopped_)
        return;
    const unsigned tid = kGraphPid * 1000 + 1;
    if (!graph_named_) {
        graph_named_ = true;
        named(kGraphPid, 0, "process_name", "\"name\":\"graph\"");
        named(kGraphPid, 0, "process_sort_index", "\"sort_index\":0");
        named(kGraphPid, tid, "thread_name", "\"name\":\"steps\"");
    }
    std::string args = "\"cycles\":";
    put(args, cycles);
    span(kGraphPid, tid, offset_, std::max<uint64_t>(1, cycles), "step", json_escape(name.c_str()), args);
    // The next step starts at cycle 0 of its own run: nothing of this one is pending.
    for (Core &c : cores_) {
        for (std::vector<uint64_t> &lanes : c.lane_free)
            std::fill(lanes.begin(), lanes.end(), 0);
        c.issued = false;
    }
    mem_written_until_ = 0;
    mem_zero_due_ = false;
    drain_lines_ = drain_bytes_ = drain_end_ = 0;
    drain_start_ = UINT64_MAX;
    disasm_ = DisasmCache();  // another program
}

void PerfettoTrace::close()
{
    flush_step();
    if (!stopped_ && mem_late_ && note_.empty())
        note_ = file_.path() + ": " + std::to_string(mem_late_) +
                " memory events arrived after their counter sample was written; they count in a later one";
    // The reserve kept for it guarantees the tail fits.
    file_.write(kTail, sizeof kTail - 1);
    file_.commit();
}

}  // namespace npusim
