// libFuzzer target: the Dinero din reader, record by record, and a replay of
// the same buffer through a small L2 backed by the DRAM model.
#include <cstdint>

#include "npusim/din.h"
#include "npusim/dram.h"
#include "npusim/l2.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = reinterpret_cast<const char *>(data);
    npu_din_reader rd;
    npu_din_reader_init(&rd, "fuzz.din", buf, size);
    npu_din_record rec;
    npu_diag diag;
    int rc, guard = 0;
    while ((rc = npu_din_next(&rd, &rec, &diag)) != 0 && guard++ < 100000)
        ;  // after an error the reader stands at the next line: keep going

    npu_l2_config cfg;
    npu_l2_config_default(&cfg);
    cfg.size_bytes = 4096;
    cfg.ways = 4;
    cfg.line_bytes = 64;
    npu_l2 l2;
    if (npu_l2_init(&l2, &cfg) != 0)
        return 0;
    npu_dram_config dc;
    npu_dram_config_default(&dc);
    npu_dram dram;
    if (npu_dram_init(&dram, &dc) == 0) {
        npu_mem_port port = npu_dram_port(&dram);
        npu_l2_set_next_level(&l2, &port);
        npu_din_replay_config rc_cfg{0, static_cast<unsigned>(size % 3), 0, 0, 0};
        npu_din_replay_result res;
        npu_l2_replay_din(&l2, "fuzz.din", buf, size, &rc_cfg, &res, &diag);
        npu_dram_fini(&dram);
    }
    npu_l2_fini(&l2);
    return 0;
}
