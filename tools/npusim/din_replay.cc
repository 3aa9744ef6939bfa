#include "din_replay.h"

#include <cinttypes>
#include <cstdio>

#include "error.h"
#include "report.h"

namespace npusim {

DinReplay replay_din(const Config &cfg, const std::string &name, const std::string &text)
{
    npu_l2_config l2cfg = cfg.l2;
    l2cfg.classify_misses = 1;  // as in a run (runner.cc): not a config key
    npu_l2 l2;
    if (npu_l2_init(&l2, &l2cfg) != NPU_OK)
        throw Error("cannot allocate the L2 tags");
    npu_dram dram;
    npu_dram_init(&dram, &cfg.dram);
    npu_mem_port port = npu_dram_port(&dram);
    npu_l2_set_next_level(&l2, &port);
    DinReplay r;
    r.trace = name;
    npu_diag diag{};
    const int rc = npu_l2_replay_din(&l2, name.c_str(), text.data(), text.size(), nullptr, &r.replay, &diag);
    r.l2 = *npu_l2_get_stats(&l2);
    npu_l2_fini(&l2);
    if (rc != NPU_OK) {
        char line[600];
        npu_diag_format(&diag, line, sizeof line);
        throw Error(line);
    }
    r.dram = *npu_dram_get_stats(&dram);
    r.dram_config = cfg.dram;
    r.dram_busy_cycles = npu_dram_busy_cycles(&dram);
    return r;
}

nlohmann::json din_replay_json(const DinReplay &r)
{
    const npu_dram_stats &d = r.dram;
    nlohmann::json j = {{"trace", r.trace}, {"records", r.replay.records}, {"cycles", r.replay.end_cycle},
                        {"l2", l2_json(r.l2, {}, 1)},
                        {"dram", dram_json(d, r.dram_config, r.dram_busy_cycles,
                                           achieved_bytes_per_cycle(d.bytes_read + d.bytes_written,
                                                                    r.replay.end_cycle, d.busy_end))}};
    j["l2"].erase("per_core");
    j["l2"].erase("per_tensor");
    return j;
}

std::string din_replay_text(const DinReplay &r)
{
    const npu_l2_stats &st = r.l2;
    const npu_dram_stats &d = r.dram;
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "Trace:         %s (%" PRIu64 " records, %" PRIu64 " L2 accesses)\n"
                  "L2:            %" PRIu64 " hits, %" PRIu64 " misses, hit rate %.4f\n"
                  "Misses:        compulsory %" PRIu64 ", capacity %" PRIu64 ", conflict %" PRIu64 "\n"
                  "Writebacks:    %" PRIu64 " (%" PRIu64 " evictions)\n"
                  "DRAM bytes:    %" PRIu64 " read, %" PRIu64 " written\n",
                  r.trace.c_str(), r.replay.records, st.accesses, st.hits, st.misses,
                  st.accesses ? double(st.hits) / double(st.accesses) : 0.0, st.compulsory, st.capacity, st.conflict,
                  st.writebacks, st.evictions, d.bytes_read, d.bytes_written);
    return buf;
}

}  // namespace npusim
