// The timed-core harness of the timing tests (test_timing.cc,
// test_timing_spec.cc): assembles a program, runs it on N timed cores (with
// an optional memory system behind every core's DMA) and keeps the stats.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npusim/npusim.h"

namespace timing_test {

struct TimedRun {
    npu_program prog{};
    std::vector<uint8_t> gm_bytes = std::vector<uint8_t>(1 << 20);
    npu_gm gm{};
    std::vector<npu_core> cores;
    std::vector<npu_timed_core *> tcs;
    unsigned width;

    TimedRun(const std::string &src, const npu_timing_config &tcfg, unsigned ncores = 1, npu_memsys *ms = nullptr)
        : width(tcfg.issue_width)
    {
        npu_program_init(&prog);
        npu_diag d{};
        if (npu_assemble("t.s", src.c_str(), src.size(), nullptr, &prog, &d) != NPU_OK)
            ADD_FAILURE() << d.line << ":" << d.col << ": " << d.message;
        gm = npu_gm{gm_bytes.data(), gm_bytes.size(), nullptr};
        cores.resize(ncores);
        for (unsigned k = 0; k < ncores; k++) {
            npu_core_config cc;
            npu_core_config_default(&cc);  // VLEN 256, the default cube's buffers
            cc.ub_bytes = 65536;
            cc.core_id = k;
            cc.num_cores = ncores;
            EXPECT_EQ(npu_core_init(&cores[k], &cc, &prog, &gm), NPU_OK);
            tcs.push_back(npu_timed_core_new(&cores[k], &tcfg));
            if (ms)
                npu_timed_core_set_dma_backend(tcs.back(), &npu_memsys_dma, ms);
        }
        npu_run_limits lim{1000000, 0};
        npu_run_timed(tcs.data(), ncores, &lim);
        for (auto &c : cores)
            EXPECT_EQ(c.state, NPU_CORE_HALTED) << c.trap.message;
    }
    ~TimedRun()
    {
        for (auto *t : tcs)
            npu_timed_core_free(t);
        for (auto &c : cores)
            npu_core_fini(&c);
        npu_program_free(&prog);
    }
    TimedRun(const TimedRun &) = delete;
    TimedRun &operator=(const TimedRun &) = delete;
    const npu_core_stats &stats(unsigned k = 0) const { return *npu_timed_stats(tcs[k]); }
};

inline npu_timing_config default_timing()
{
    npu_timing_config c;
    npu_timing_config_default(&c);
    return c;
}

}  // namespace timing_test
