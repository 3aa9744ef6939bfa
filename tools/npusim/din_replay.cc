#include "din_replay.h"

#include <cinttypes>
#include <cstdio>

#include "error.h"
#include "report.h"

namespace npusim {

namespace {

// The DRAM bytes of the write-back after the trace's last access.
uint64_t end_of_run_bytes(const DinReplay &r)
{
    return r.dram.bytes_written - r.dram_trace.stats.bytes_written;
}

}  // namespace

void check_replay_config(const Config &cfg)
{
    for (const auto &[key, where] : cfg.given) {
        const bool used = key.rfind("l2.", 0) == 0 || key.rfind("dram.", 0) == 0;
        if (where == "set " && !used)
            throw Error("set " + key + ": not used by a din replay, which reads the l2.* and dram.* keys only");
    }
    if (!cfg.memory_l2) {
        std::string where;
        for (const auto &[key, at] : cfg.given)
            if (key == "memory.model")
                where = at;
        throw Error(where + "memory.model: ideal: a din replay goes through the L2 model (memory.model: l2)");
    }
}

DinReplay replay_din(const Config &cfg, const std::string &name, const std::string &text)
{
    check_replay_config(cfg);
    npu_l2_config l2cfg = cfg.l2;
    l2cfg.classify_misses = 1;  // as in a run (runner.cc): not a config key
    npu_l2 l2;
    if (npu_l2_init(&l2, &l2cfg) != NPU_OK)
        throw Error("cannot allocate the L2 tags");
    npu_dram dram;
    if (npu_dram_init(&dram, &cfg.dram) != NPU_OK) {
        npu_l2_fini(&l2);
        throw Error("cannot allocate the DRAM's calendars");
    }
    struct DramGuard {
        npu_dram *d;
        ~DramGuard() { npu_dram_fini(d); }
    } const dram_guard{&dram};
    npu_mem_port port = npu_dram_port(&dram);
    npu_l2_set_next_level(&l2, &port);
    DinReplay r;
    r.trace = name;
    npu_diag diag{};
    const int rc = npu_l2_replay_din(&l2, name.c_str(), text.data(), text.size(), nullptr, &r.replay, &diag);
    if (rc != NPU_OK) {
        npu_l2_fini(&l2);
        char line[600];
        npu_diag_format(&diag, line, sizeof line);
        throw Error(line);
    }
    // The end of the trace is the end of a run: the dirty lines go back to
    // the DRAM, as npu_memsys_drain writes them back after a run's last
    // core, so the DRAM's bytes count everything the trace wrote.
    npu_dram_checkpoint_take(&dram, r.replay.end_cycle, &r.dram_trace);
    npu_l2_clean(&l2, r.replay.end_cycle);
    r.l2 = *npu_l2_get_stats(&l2);
    npu_l2_fini(&l2);
    r.dram = *npu_dram_get_stats(&dram);
    r.dram_config = cfg.dram;
    r.dram_busy_cycles = npu_dram_busy_cycles(&dram);
    return r;
}

nlohmann::json din_replay_json(const DinReplay &r)
{
    const npu_dram_stats &d = r.dram, &k = r.dram_trace.stats;
    nlohmann::json j = {{"trace", r.trace}, {"records", r.replay.records}, {"cycles", r.replay.end_cycle},
                        {"l2", l2_json(r.l2, {}, 1)},
                        {"dram", dram_json(d, r.dram_config, r.dram_busy_cycles,
                                           achieved_bytes_per_cycle(k.bytes_read + k.bytes_written,
                                                                    r.replay.end_cycle, k.busy_end))}};
    j["l2"].erase("per_core");
    j["l2"].erase("per_tensor");
    // As a run's report (docs/metrics.md): the write-back after the trace's
    // last access, not in "cycles".
    j["dram"]["end_of_run"] = {{"bytes_written", end_of_run_bytes(r)}, {"drain_cycles", r.l2.clean_cycles}};
    return j;
}

std::string din_replay_text(const DinReplay &r)
{
    const npu_l2_stats &st = r.l2;
    const npu_dram_stats &d = r.dram;
    char buf[1200];
    std::snprintf(buf, sizeof buf,
                  "Trace:         %s (%" PRIu64 " records, %" PRIu64 " L2 accesses)\n"
                  "L2:            %" PRIu64 " hits, %" PRIu64 " misses, hit rate %.4f\n"
                  "Misses:        compulsory %" PRIu64 ", capacity %" PRIu64 ", conflict %" PRIu64 "\n"
                  "Writebacks:    %" PRIu64 " (%" PRIu64 " evictions)\n"
                  "At the end:    %" PRIu64 " dirty lines written back (%" PRIu64 " bytes), drained in %" PRIu64
                  " cycles after the last access\n"
                  "DRAM bytes:    %" PRIu64 " read, %" PRIu64 " written\n",
                  r.trace.c_str(), r.replay.records, st.accesses, st.hits, st.misses,
                  st.accesses ? double(st.hits) / double(st.accesses) : 0.0, st.compulsory, st.capacity, st.conflict,
                  st.writebacks, st.evictions, st.clean_writebacks, end_of_run_bytes(r),
                  st.clean_cycles, d.bytes_read, d.bytes_written);
    return buf;
}

}  // namespace npusim
