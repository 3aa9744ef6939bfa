// Pipeline traces of a timed run, streamed to their files as the cores
// issue: Chrome/Perfetto trace-event JSON (chrome://tracing, ui.perfetto.dev)
// and Kanata logs (Konata). Writers attach through the timing model's issue
// hook (RunOptions::attach) and keep only bounded state: what is in flight
// in the machine, never a list of the run's instructions.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "npusim/memsys.h"
#include "npusim/timing.h"

namespace npusim {

// Instructions issuing in cycles [start, end) are traced.
struct TraceWindow {
    uint64_t start = 0;
    uint64_t end = UINT64_MAX;
    bool contains(uint64_t cycle) const { return cycle >= start && cycle < end; }
};

constexpr uint64_t kDefaultTraceMaxBytes = 1ull << 30;  // 1 GiB per trace file

// A trace's byte limit must hold its smallest complete file (`min_bytes`, the
// format's header and tail), so that a trace cut short still opens: returns
// max_bytes, or throws Error ("--trace-max-bytes 10: below the 85 bytes a
// Perfetto trace needs (its header and tail)") before any file is created.
uint64_t checked_max_bytes(uint64_t max_bytes, uint64_t min_bytes, const char *what);

// A file written as events arrive, under temp_path(path), renamed into place by
// commit() (tools/npusim/atomic_file.h's convention, streamed: through a link
// its target is renamed over; a device or FIFO is written in place and
// /dev/stdout through the descriptor, with nothing to rename). Destroyed
// without commit(), it removes the temporary file.
class StreamFile {
public:
    StreamFile(const std::string &path, uint64_t max_bytes);  // throws Error when it cannot be created
    ~StreamFile();
    StreamFile(const StreamFile &) = delete;
    StreamFile &operator=(const StreamFile &) = delete;

    // Appends n bytes unless the file would then leave less than `reserve`
    // bytes under its limit; false (nothing written) when it would, or after
    // a write error.
    bool write(const char *data, size_t n, size_t reserve = 0);
    bool write(const std::string &s, size_t reserve = 0) { return write(s.data(), s.size(), reserve); }
    void commit();  // throws Error (write error, rename)

    const std::string &path() const { return path_; }
    uint64_t bytes() const { return bytes_; }
    uint64_t max_bytes() const { return max_; }

private:
    std::string path_, tmp_, target_;  // tmp_ and target_: renamed outputs only
    FILE *f_ = nullptr;
    uint64_t max_, bytes_ = 0;
    bool failed_ = false;
};

class TraceWriter {
public:
    virtual ~TraceWriter() = default;
    virtual void issue(unsigned core, const npu_issue_event &ev) = 0;
    // memory.model: l2: an L2 access or DRAM request (npu_memsys_event).
    virtual void memory(const npu_memsys_event &) {}
    // Core `core` ended at `end_cycle`, its `cycles` (docs/timing.md T10):
    // the cycles after its last issue are its `drain` stall, which no issue
    // event carries. Called once per core after its last issue.
    virtual void finish(unsigned /*core*/, uint64_t /*end_cycle*/) {}
    // Writes the tail and renames the file into place. Throws Error.
    virtual void close() = 0;
    // What the user should know about this trace (it stopped early), or "".
    virtual std::string note() const = 0;
};

// s as the inside of a JSON string (quotes, backslashes and control characters escaped).
std::string json_escape(const char *s);

// Disassembly of the instructions seen so far, by pc: bounded by the
// program's size, shared by the writers of one trace.
class DisasmCache {
public:
    const std::string &text(const npu_issue_event &ev);      // "vadd.f16 v1, v2, v3", JSON-escaped
    const std::string &mnemonic(const npu_issue_event &ev);  // "vadd.f16"

private:
    struct Entry {
        bool valid = false;
        std::string text, mnemonic;
    };
    Entry &at(const npu_issue_event &ev);
    std::vector<Entry> by_pc_;
};

// Chrome trace-event JSON: per core (pid core + 1) one track (tid) per issue slot,
// one per unit instance in use, and one for stalls; an "X" event per
// instruction on its slot (dur 1) and its unit (dur max(1, complete-issue));
// "C" counter events for the DMA queue depth. One cycle = 1 us of trace time.
// The stalls track ends with the core's `drain` (finish): from its last
// issue to its end, as the VCD shows it, args naming the last instruction.
// Slices are clipped to the trace window (the cycles the VCD shows): an
// instruction issuing inside shows up to the window's end, the empty cycles
// before an issue show for their part inside, whichever side the issue is.
//
// memory.model: l2 adds a process "memory (L2, DRAM)" (pid kMemoryPid) of
// counters, one sample per kMemoryBucket cycles that saw activity (and a zero
// after it), timestamped at the bucket's start:
//   l2_accesses    {hits, misses}: L2 accesses arriving in the bucket
//   l2_mshrs_busy  {mean}: MSHRs holding a fill, averaged over the bucket
//   dram_bytes     {read, written}: bytes of DRAM requests arriving in it
//   dram_requests  {mean}: DRAM requests in flight (arrival to completion), averaged
// and an "X" slice "end-of-run write-back" on its track "dram" from the last
// core's end to the DRAM's acceptance of the last dirty line, with its lines
// and bytes. Buckets follow the trace window (an event counts when its cycle
// is inside it; levels are clipped to it); the sums of l2_accesses and
// dram_bytes over a whole-run trace equal the report's l2 hits/misses and
// dram bytes_read/bytes_written. Memory: one entry per active bucket not yet
// written (events arrive out of time order by up to a transfer and a
// quantum); the oldest are written once kMaxPendingBuckets are held.
class PerfettoTrace : public TraceWriter {
public:
    // Throws Error when max_bytes < min_bytes() (checked_max_bytes).
    PerfettoTrace(const std::string &path, const TraceWindow &window, uint64_t max_bytes);
    // The smallest complete document: its header and tail, no event.
    static uint64_t min_bytes();
    void issue(unsigned core, const npu_issue_event &ev) override;
    void finish(unsigned core, uint64_t end_cycle) override;
    void close() override;
    std::string note() const override { return note_; }

    // Core k is process k + 1 (Perfetto treats pid 0 as the kernel's idle
    // task), and its tracks are threads 1000 * pid + a track number below:
    // Perfetto, like Linux, expects a tid to belong to one process.
    static unsigned core_pid(unsigned core) { return 1 + core; }
    static unsigned global_tid(unsigned core, unsigned track) { return 1000 * core_pid(core) + track; }
    // Track numbers of a core's tracks (their sort order too).
    static unsigned slot_tid(unsigned slot) { return 1 + slot; }
    static constexpr unsigned kStallTid = 20;
    // Units 100 + 100 unit + lane (up to 764); the cube's pipes (docs/cube.md),
    // numbered after the units by pipe_track, at 800 + 50 pipe + lane: every
    // track of a core below 1000.
    static unsigned unit_tid(unsigned unit, unsigned lane)
    {
        return unit < NPU_NUM_UNITS ? 100 + 100 * unit + lane : 800 + 50 * (unit - NPU_NUM_UNITS) + lane;
    }
    static unsigned pipe_track(unsigned pipe) { return NPU_NUM_UNITS + pipe; }
    static constexpr unsigned kMaxPipeLanes = 8;  // a pipe's operations overlap only by its latency
    static constexpr unsigned kMaxLanes = 64;  // instances of one unit shown in flight at once
    static constexpr unsigned kMemoryPid = 1000;   // above every core's pid (NPU_MEMSYS_MAX_CORES)
    static constexpr unsigned kDramTid = 1;
    static constexpr uint64_t kMemoryBucket = 256;  // cycles per memory counter sample
    static constexpr size_t kMaxPendingBuckets = 1 << 16;

    void memory(const npu_memsys_event &ev) override;

    // A chain of runs in one trace (npusim graph): the events of step k are
    // shifted by `start`, the cycles of the steps before it. end_step writes
    // what the step left pending (DMA completions, memory counters, its
    // write-back slice), a slice `name` of `cycles` on the process "graph"
    // (kGraphPid, shown first), and forgets the step's program.
    static constexpr unsigned kGraphPid = 1001;
    void begin_step(uint64_t start) { offset_ = start; }
    void end_step(const std::string &name, uint64_t cycles);

private:
    void flush_step();
    // A metadata event (tid 0: the process's) and an "X" slice; args are
    // the inside of the args object, and name is already JSON-escaped.
    void named(unsigned pid, unsigned tid, const char *what, const std::string &args);
    void span(unsigned pid, unsigned tid, uint64_t start, uint64_t dur, const char *cat, const std::string &name,
              const std::string &args);
    uint64_t ts(uint64_t cycle) const { return cycle + offset_; }
    std::string insn_args(const npu_issue_event &ev);  // pc, seq and disassembly
    uint64_t offset_ = 0;
    bool graph_named_ = false, dram_named_ = false;

    struct MemBucket {
        uint64_t hits = 0, misses = 0, read = 0, written = 0;
        uint64_t mshr_cycles = 0, dram_cycles = 0;  // busy cycles summed over MSHRs / requests in flight
    };
    MemBucket &bucket(uint64_t cycle);
    void spread(uint64_t MemBucket::*field, uint64_t from, uint64_t to);
    void write_bucket(uint64_t index, const MemBucket &b);
    void write_buckets_before(uint64_t index);
    void memory_counter(uint64_t cycle, const char *name, const std::string &args);

    std::map<uint64_t, MemBucket> mem_buckets_;  // by bucket index (cycle / kMemoryBucket)
    bool mem_named_ = false;
    uint64_t mem_written_until_ = 0;  // buckets below this index are written
    bool mem_zero_due_ = false;       // the last written bucket was active: a zero sample follows it
    uint64_t mem_late_ = 0;           // events into buckets already written (counted into the oldest pending)
    uint64_t drain_lines_ = 0, drain_bytes_ = 0, drain_start_ = UINT64_MAX, drain_end_ = 0;

    struct Core {
        bool named = false;
        uint32_t slots_named = 0;
        std::vector<uint64_t> lane_free[NPU_NUM_UNITS + NPU_NUM_PIPES];  // per lane: cycle it is free again
        std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> dma_done;
        uint64_t dma_depth = 0;
        bool issued = false;  // since the run (or step) began: last is its last issue
        npu_issue_event last{};  // its insn not kept: the program may be gone at finish
    };
    Core &core(unsigned k);
    unsigned lane_for(Core &c, unsigned k, unsigned unit, uint64_t issue, uint64_t complete);
    void dma_completions_until(Core &c, unsigned k, uint64_t cycle);
    void counter(unsigned k, uint64_t cycle, uint64_t depth);
    void metadata(unsigned core, unsigned tid, const char *what, const std::string &name, int sort);
    void emit(const std::string &json);
    void stop(const std::string &why);

    StreamFile file_;
    TraceWindow window_;
    std::vector<Core> cores_;
    DisasmCache disasm_;
    std::string buf_;
    bool first_ = true, stopped_ = false;
    std::string note_;
};

// Kanata 0004 log of one core: a row per instruction with stages Ds (waiting
// to issue: from becoming the oldest waiting instruction), Is (the issue
// cycle), Ex (issue + 1 to completion) and retirement at completion; the
// empty cycles charged just before an issue show on lane 1 as a stage named
// after the stall reason; the core's `drain` (finish: its last issue to its
// end) is a row of its own, a lane-1 stage "drain", flushed at the end.
// Commands are written in cycle order as they become
// final; only instructions still in flight wait in a queue. Rows are clipped
// to the trace window: stages start no earlier than its start, a row still in
// flight at its end retires there, and the instruction that waits across the
// end (issuing after it) has a row of its waiting, flushed at the end.
class KonataTrace : public TraceWriter {
public:
    // Throws Error when max_bytes < min_bytes() (checked_max_bytes).
    KonataTrace(const std::string &path, const TraceWindow &window, uint64_t max_bytes, unsigned core = 0);
    // The smallest complete log: its header line.
    static uint64_t min_bytes();
    void issue(unsigned core, const npu_issue_event &ev) override;
    void finish(unsigned core, uint64_t end_cycle) override;
    void close() override;
    std::string note() const override { return note_; }

    size_t max_pending() const { return max_pending_; }  // most commands waiting at once

private:
    enum Kind : uint8_t { kWait, kStallStart, kIssue, kExec, kRetire, kFlush };
    struct Pending {
        uint64_t cycle, order, id, seq;
        Kind kind;
        uint8_t stall;  // npu_stall, for kStallStart / kIssue; 0xff = none
        bool operator>(const Pending &o) const { return cycle != o.cycle ? cycle > o.cycle : order > o.order; }
    };
    void schedule(uint64_t cycle, Kind kind, uint64_t id, uint64_t seq, uint8_t stall);
    void flush_until(uint64_t cycle);
    void write_pending(const Pending &p);
    void goto_cycle(uint64_t cycle);
    void out(const std::string &s);

    StreamFile file_;
    TraceWindow window_;
    unsigned core_;
    std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;
    uint64_t order_ = 0, next_id_ = 0, cycle_ = 0;
    bool started_ = false, stopped_ = false, ended_ = false;  // ended_: the row across the window's end is written
    bool issued_ = false;                    // the core issued: last_ is its last issue, window or not
    uint64_t last_issue_ = 0, last_seq_ = 0;
    size_t max_pending_ = 0;
    DisasmCache disasm_;
    std::string line_;
    std::string note_;
};

// Every writer of a run behind the one issue hook each core has.
class TraceSet {
public:
    void add(std::unique_ptr<TraceWriter> w) { writers_.push_back(std::move(w)); }
    bool empty() const { return writers_.empty(); }
    // As RunOptions::attach; core 0's also observes the cores' memory system, if any.
    void attach(unsigned core, npu_timed_core *tc);
    void issue(unsigned core, const npu_issue_event &ev);  // to every writer
    // Core `core` ended at `end_cycle` (RunResult::core_stats[core].cycles),
    // to every writer: call it for each core after the run, before close().
    void finish(unsigned core, uint64_t end_cycle);
    // Closes every writer (files renamed into place); returns their notes.
    std::vector<std::string> close();

private:
    static void hook(void *ctx, const npu_issue_event *ev);
    static void observe(void *ctx, const npu_memsys_event *ev);
    std::vector<std::unique_ptr<TraceWriter>> writers_;
    std::deque<std::pair<TraceSet *, unsigned>> ctx_;  // deque: stable addresses for the hook
};

}  // namespace npusim
