// The SystemC engine against the C engine (npu_run_timed): same stats to the
// bit, same traps, same limits. Every SystemC run happens in a child (the
// npusim CLI, or this binary re-executed with --scenario: sc_scenario.h); the
// C engine runs in process. sc_main runs the tests (libsystemc owns main).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <systemc>  // declares sc_main extern "C"
#include <thread>
#include <unistd.h>

#include "npusim/systemc/engine.h"
#include "report.h"
#include "runner.h"
#include "sc_scenario.h"

using namespace npusim;
using namespace sc_test;
using nlohmann::json;

// ---- the SystemC engine equals the C engine ------------------------------------

TEST(SystemCEngine, CliJsonEqualsTheCEngineAcrossKernelsShapesAndCores)
{
    for (const char *kernel : {"relu", "leaky_relu", "gelu_tanh"})
        for (const char *dtype : {"fp16", "fp32"})
            for (const char *shape : {"1,5,9,11", "1,32,16,16"})
                for (unsigned cores : {1u, 2u, 3u}) {
                    Scenario s;
                    s.kernel = kernel;
                    s.dtype = dtype;
                    s.shape = shape;
                    s.sets = {"system.cores=" + std::to_string(cores)};
                    std::string what = std::string(kernel) + " " + dtype + " " + shape + " cores=" +
                                       std::to_string(cores);
                    RunResult rc = run_kernel(s.options());
                    json want = report_json(rc);
                    Result r = run_cmd(std::string(NPUSIM_EXE) + " run " + kernel + " --dtype " + dtype + " --shape " +
                                       shape + " --set system.cores=" + std::to_string(cores) +
                                       " --engine systemc --json -");
                    ASSERT_EQ(r.status, 0) << what << "\n" << r.err;
                    EXPECT_EQ(r.err, "") << what;
                    json got = json::parse(r.out);
                    for (const char *key : {"cycles", "instructions", "ipc", "stalls", "issue", "units", "bound",
                                            "accuracy", "elements", "cycles_per_element"})
                        EXPECT_EQ(got.at(key), want.at(key)) << what << ": " << key;
                    got.erase("sim");
                    want.erase("sim");
                    EXPECT_EQ(got, want) << what;
                }
}

TEST(SystemCEngine, CliJsonEqualsTheCEngineThroughTheL2AndDram)
{
    // memory.model=l2: the SystemC engine sends every DMA line through the
    // core -> L2 -> DRAM TLM sockets; the C engine calls the models directly.
    auto check = [](const char *kernel, const char *shape, unsigned cores, const std::vector<std::string> &memory) {
        Scenario s;
        s.kernel = kernel;
        s.dtype = "fp16";
        s.shape = shape;
        s.sets = {"system.cores=" + std::to_string(cores), "memory.model=l2"};
        s.sets.insert(s.sets.end(), memory.begin(), memory.end());
        std::string what = std::string(kernel) + " " + shape + " cores=" + std::to_string(cores) + " " + memory.back();
        RunResult rc = run_kernel(s.options());
        json want = report_json(rc);
        ASSERT_TRUE(want.contains("l2")) << what;
        EXPECT_GT(want.at("l2").at("accesses").get<uint64_t>(), 0u) << what;
        std::string cmd = std::string(NPUSIM_EXE) + " run " + kernel + " --dtype fp16 --shape " + shape +
                          " --engine systemc --json -";
        for (const std::string &set : s.sets)
            cmd += " --set " + set;
        Result r = run_cmd(cmd);
        ASSERT_EQ(r.status, 0) << what << "\n" << r.err;
        EXPECT_EQ(r.err, "") << what;
        json got = json::parse(r.out);
        for (const char *key : {"cycles", "stalls", "l2", "dram", "bound"})
            EXPECT_EQ(got.at(key), want.at(key)) << what << ": " << key;
        got.erase("sim");
        want.erase("sim");
        EXPECT_EQ(got, want) << what;
    };
    for (const char *kernel : {"relu", "gelu_tanh"}) {
        for (const char *shape : {"1,5,9,11", "1,32,32,32"})
            for (unsigned cores : {1u, 2u})
                check(kernel, shape, cores, {"l2.size_bytes=65536"});
        // Posted write-backs still queued past the kernel's end (one slow
        // channel), and four cores whose misses wait for one MSHR.
        check(kernel, "1,32,32,32", 4,
              {"l2.size_bytes=16384", "dram.channels=1", "dram.bytes_per_cycle=4", "l2.mshrs=1"});
    }
}

TEST(SystemCEngine, PerCoreStatsEqualTheCEngine)
{
    Scenario s;
    s.kernel = "gelu_tanh";
    s.dtype = "fp16";
    s.shape = "1,40,17,13";
    s.sets = {"system.cores=3"};
    ScRun sc = run_sc(s);
    EXPECT_EQ(sc.summary, run_c(s));
    EXPECT_EQ(sc.err, "");
}

TEST(SystemCEngine, EndsAtTheSlowestCoresLastCycle)
{
    Scenario s;
    s.kernel = "leaky_relu";
    s.shape = "1,64,32,32";
    s.sets = {"system.cores=2"};
    ScRun sc = run_sc(s);
    RunResult rc = run_kernel(s.options());
    EXPECT_EQ(sc.info.at("end_cycle").get<uint64_t>(), rc.stats.cycles);
    EXPECT_EQ(sc.info.at("sc_time_cycles").get<uint64_t>(), rc.stats.cycles);
    EXPECT_GT(sc.info.at("rounds").get<uint64_t>(), 1u);
}

TEST(SystemCEngine, InstructionLimitStopsTheSameCoresAtTheSameInstruction)
{
    Scenario s;
    s.kernel = "gelu_tanh";
    s.dtype = "fp16";
    s.shape = "1,64,56,56";
    s.sets = {"system.cores=3"};
    s.max_instructions = 9000;  // past two quanta: the other cores stop at the round's end
    ScRun sc = run_sc(s);
    json c = run_c(s);
    EXPECT_EQ(sc.summary, c);
    ASSERT_FALSE(c.at("traps").empty());
    EXPECT_EQ(c.at("traps")[0].at("kind"), "max_instructions");
    EXPECT_EQ(c.at("traps")[0].at("message"), "stopped after 9000 instructions, the run's instruction limit");
}

TEST(SystemCEngine, CycleLimitTrapsWithTheSameMessage)
{
    Scenario s;
    s.kernel = "relu";
    s.shape = "1,64,16,16";
    s.sets = {"system.cores=2"};
    s.max_cycles = 2000;
    ScRun sc = run_sc(s);
    json c = run_c(s);
    EXPECT_EQ(sc.summary, c);
    ASSERT_FALSE(c.at("traps").empty());
    EXPECT_EQ(c.at("traps")[0].at("kind"), "max_cycles");
}

// Cores reach the barriers at different cycles; all leave at the last
// arrival + 1, the early ones charged to sync.
TEST(SystemCEngine, BarriersReleaseEveryCoreAtTheLastArrivalPlusOne)
{
    Scenario s;
    s.kernel = kernel_file("uneven", R"(
    srd   s5, coreid
    addi  s6, s5, 1
    slli  s6, s6, 5
work1:
    vadd.f32 v1, v1, v2
    addi  s6, s6, -1
    bnez  s6, work1
    barrier
    li    s6, 100
    srd   s5, coreid
    slli  s5, s5, 4
    sub   s6, s6, s5
work2:
    vexp.f32 v3, v3
    addi  s6, s6, -1
    bnez  s6, work2
    barrier
    halt
)");
    s.sets = {"system.cores=3"};
    ScRun sc = run_sc(s);
    json c = run_c(s);
    EXPECT_EQ(sc.summary, c);
    EXPECT_TRUE(c.at("traps").empty()) << c.dump();
    const unsigned sync = NPU_STALL_SYNC;
    EXPECT_GT(c.at("cores")[0].at("stall")[sync].get<uint64_t>(), 0u);
}

TEST(SystemCEngine, BarrierThatCanNeverCompleteTrapsTheWaiters)
{
    Scenario s;
    s.kernel = kernel_file("halfbarrier", R"(
    srd   s5, coreid
    beqz  s5, out
    barrier
out:
    halt
)");
    s.sets = {"system.cores=3"};
    ScRun sc = run_sc(s);
    json c = run_c(s);
    EXPECT_EQ(sc.summary, c);
    ASSERT_EQ(c.at("traps").size(), 2u) << c.dump();
    EXPECT_EQ(c.at("traps")[0].at("kind"), "barrier");
    EXPECT_EQ(c.at("traps")[0].at("message"), "barrier never completes: 1 of 3 cores halted or trapped without reaching it");
}

TEST(SystemCEngine, GuestFaultOnOneCoreStopsThatCoreOnlyAsTheCEngineDoes)
{
    Scenario s;
    // Core 1 faults after ~9000 instructions; as in npu_run_timed a trap
    // stops its own core only, so the other cores run on to their own end
    // (18000 instructions and the halt), whatever the quantum.
    s.kernel = kernel_file("fault", R"(
    srd   s5, coreid
    li    s6, 6000
    li    s7, 1
    bne   s5, s7, spin
    li    s6, 3000
spin:
    vadd.f32 v1, v1, v2
    addi  s6, s6, -1
    bnez  s6, spin
    li    s7, 1
    bne   s5, s7, done
    li    s8, 0x7ffffff0
    vld.f32 v1, [s8]
done:
    halt
)");
    s.sets = {"system.cores=3"};
    ScRun sc = run_sc(s);
    json c = run_c(s);
    EXPECT_EQ(sc.summary, c);
    ASSERT_EQ(c.at("traps").size(), 1u) << c.dump();
    EXPECT_EQ(c.at("traps")[0].at("kind"), "ub_out_of_bounds");
    for (unsigned k : {0u, 2u})
        EXPECT_EQ(c.at("retired")[k].get<uint64_t>(), 4u + 3u * 6000u + 3u) << k;  // prologue, loop, li + bne + halt
}

TEST(SystemCEngine, RunsOncePerProcess)
{
    Scenario s;
    s.twice = true;
    std::string cmd = self_exe + " --scenario";
    for (const std::string &a : s.args())
        cmd += " '" + a + "'";
    Result r = run_cmd(cmd);
    ASSERT_EQ(r.status, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_NE(j.at("second_run").get<std::string>().find("once per process"), std::string::npos) << j.dump();
    EXPECT_EQ(j.at("late_top").get<std::string>(),
              "npusim::sc::NpuTop: SystemC elaborates modules only before sc_start, so a process runs one NpuTop "
              "(npusim's C engine runs any number)");
}

// The engine's own VCD (a platform's systemc_engine with a vcd_path): a FIFO
// is written, not renamed over (as root, /dev/null would have been).
TEST(SystemCEngine, AVcdIntoAFifoLeavesTheFifo)
{
    const std::string fifo = tmpdir() + "/engine_vcd_fifo";
    unlink(fifo.c_str());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    Scenario s;
    s.vcd = fifo;
    std::string cmd = self_exe + " --scenario";
    for (const std::string &a : s.args())
        cmd += " '" + a + "'";
    std::string got;
    std::thread reader([&] {
        std::ifstream in(fifo, std::ios::binary);
        got.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    });
    Result r = run_cmd(cmd);
    reader.join();
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(got.rfind("$date", 0), 0u) << got.substr(0, 60);
    struct stat st;
    ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(SystemCEngine, CliPrintsNoSystemCBanner)
{
    Result r = run_cmd("env -u SC_COPYRIGHT_MESSAGE " + std::string(NPUSIM_EXE) +
                       " run relu --shape 1,8,4,4 --engine systemc");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.find("SystemC"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("Copyright"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("Info:"), std::string::npos) << r.out;
}

int sc_main(int argc, char **argv)
{
    systemc_quiet();
    self_exe = argv[0];
    if (argc > 1 && std::strcmp(argv[1], "--scenario") == 0)
        return scenario_main(argc, argv);
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0)
        self_exe.assign(buf, size_t(n));
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
