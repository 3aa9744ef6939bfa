// The modulo scheduler of `.pipeline` loops (isa/asm_pipe.c,
// docs/scheduling.md): hand-checked loops reach their MII; on random loops
// and random machines the emitted code keeps every dependence, unit and
// slot limit (checked by the timing model itself: every steady-state kernel
// pass takes exactly II cycles, so nothing ever waited) and computes the
// same bits as the loop in written order; bad blocks get one clear message.
#include <gtest/gtest.h>

#include <memory>

#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sched_simd.h"
#include "npusim/npusim.h"
#include "sched_checker.h"

namespace {

using sched_test::check_kernels;
using sched_test::machine_of;

npu_timing_config default_timing()
{
    npu_timing_config c;
    npu_timing_config_default(&c);
    return c;
}

struct Assembled {
    npu_program p{};
    npu_diag d{};
    int rc = 0;
    Assembled(const std::string &src, const npu_asm_machine *m, bool schedule)
    {
        npu_program_init(&p);
        npu_asm_options o{};
        o.machine = m;
        o.schedule = schedule;
        rc = npu_assemble("t.s", src.c_str(), src.size(), &o, &p, &d);
    }
    ~Assembled() { npu_program_free(&p); }
    Assembled(const Assembled &) = delete;
    Assembled &operator=(const Assembled &) = delete;
};

// One issued instruction: pc and cycle.
struct Event {
    uint64_t pc, cycle;
};

void record(void *ctx, const npu_issue_event *ev)
{
    static_cast<std::vector<Event> *>(ctx)->push_back({ev->pc, ev->issue});
}

struct Outcome {
    std::vector<uint8_t> ub;
    std::vector<uint64_t> s;  // the scalar registers at the end
    std::vector<Event> events;
    uint64_t cycles = 0;
};

// Runs a program on one core (timed or not) with `in` bytes at UB 0; returns
// the UB afterwards and, timed, every issue.
Outcome run(const npu_program &p, const npu_timing_config *timing, const std::vector<uint8_t> &in)
{
    Outcome r;
    std::vector<uint8_t> gm_bytes(4096);
    npu_gm gm{gm_bytes.data(), gm_bytes.size(), nullptr};
    npu_core core;
    npu_core_config cc;
    npu_core_config_default(&cc);
    cc.ub_bytes = 65536;
    EXPECT_EQ(npu_core_init(&core, &cc, &p, &gm), NPU_OK);
    std::memcpy(core.ub, in.data(), in.size());
    npu_run_limits lim{50000000, 0};
    if (timing) {
        npu_timed_core *tc = npu_timed_core_new(&core, timing);
        npu_timed_core_set_hook(tc, record, &r.events);
        npu_run_timed(&tc, 1, &lim);
        r.cycles = npu_timed_stats(tc)->cycles;
        npu_timed_core_free(tc);
    } else {
        npu_core *c = &core;
        npu_run_functional(&c, 1, &lim);
    }
    EXPECT_EQ(core.state, NPU_CORE_HALTED) << core.trap.message;
    r.ub.assign(core.ub, core.ub + 65536);
    r.s.assign(core.s, core.s + NPU_NUM_SREGS);
    npu_core_fini(&core);
    return r;
}

// The dynamic check: run by the timing model itself, the kernel keeps its
// rate: pass k of a run of passes starts no later than k II after the first
// steady one, give or take one pass. In-order issue never falls behind a
// schedule that keeps every rule (an instruction's operands, unit and slot
// are ready by its scheduled cycle when everything before it was on time);
// it may run ahead through a schedule's empty cycles, so the pass used as
// the origin may itself be early by up to a pass. A rule the schedule broke
// would cost a stall every pass and fall behind without limit. Returns the
// number of passes checked.
size_t check_passes(const npu_program &p, const std::vector<Event> &ev)
{
    size_t checked = 0;
    for (size_t l = 0; l < p.nloops; l++) {
        const npu_sched_loop &lp = p.loops[l];
        if (!lp.scheduled)
            continue;
        EXPECT_LE(lp.vregs, lp.regs_v);
        EXPECT_LE(lp.pregs, lp.regs_p);
        // passes entered by the back edge, after a pass that was too (the
        // first pass after the prologue shares its first cycle with the
        // branch that skips an empty kernel)
        uint64_t first = 0, passes = 0;
        bool last_looped = false;
        for (size_t i = 0; i < ev.size(); i++) {
            if (ev[i].pc != lp.kernel_begin)
                continue;
            const bool looped = i > 0 && ev[i - 1].pc == lp.kernel_end - 1;
            if (looped && last_looped) {
                passes++;
                EXPECT_LE(ev[i].cycle - first, (passes + 1) * lp.ii)
                    << "kernel pass " << passes << " of the run from cycle " << first << " started after its schedule";
                checked++;
            } else if (looped) {
                first = ev[i].cycle;  // the second pass: every later one is due a multiple of II after it
                passes = 0;
            }
            last_looped = looped;
        }
    }
    return checked;
}

std::vector<uint8_t> random_bytes(std::mt19937 &rng, size_t n)
{
    std::vector<uint8_t> v(n);
    // finite fp32 values in a modest range, so every op is exercised
    std::uniform_real_distribution<float> d(-4.0f, 4.0f);
    for (size_t i = 0; i + 4 <= n; i += 4) {
        float f = d(rng);
        std::memcpy(&v[i], &f, 4);
    }
    return v;
}

// A loop over `n` vectors: x from UB 0, y to UB 32768.
std::string loop(const std::string &body, unsigned n)
{
    return "    li s10, 0\n    li s11, 32768\n    li s9, " + std::to_string(n) + "\n.pipeline s9, s8\n" + body +
           "    addvl s10, s10, 1\n    addvl s11, s11, 1\n.endpipeline\n    halt\n";
}

// The same loop under its own .pipeline line (`.pipeline s9, s8, 64, 64`).
std::string loop_dir(const std::string &body, unsigned n, const std::string &dir)
{
    return "    li s10, 0\n    li s11, 32768\n    li s9, " + std::to_string(n) + "\n" + dir + "\n" + body +
           "    addvl s10, s10, 1\n    addvl s11, s11, 1\n.endpipeline\n    halt\n";
}

// The same loop ending in a .pass block: `.pass s12` and `pass`; s20 and
// s21 start at 0.
std::string pass_loop(const std::string &body, const std::string &pass, unsigned n, const std::string &dir = ".pass s12")
{
    return "    li s10, 0\n    li s11, 32768\n    li s20, 0\n    li s21, 0\n    li s9, " + std::to_string(n) +
           "\n.pipeline s9, s8\n" + body + "    addvl s10, s10, 1\n    addvl s11, s11, 1\n" + dir + "\n" + pass +
           ".endpipeline\n    halt\n";
}

const npu_sched_loop &main_loop(const Assembled &a)
{
    EXPECT_EQ(a.rc, NPU_OK) << a.d.line << ":" << a.d.col << ": " << a.d.message;
    EXPECT_GE(a.p.nloops, 1u);
    return a.p.loops[0];
}

// The issue's long-latency core: SFU latency 30, VALU 6.
npu_timing_config long_latency_timing()
{
    npu_timing_config t = default_timing();
    t.unit[NPU_UNIT_SFU].latency = 30;
    t.unit[NPU_UNIT_VALU].latency = 6;
    return t;
}

// The colouring's register choice (isa/sched_simd.h): a register fits a value
// [start, end] when its last value ended before the start and its wall is
// after the end, both strictly; the AVX2 pass gives the plain pass's bits,
// on the sentinels of a free register (LONG_MIN, LONG_MAX) and on random
// values near each other, where the ties are.
TEST(Sched, TheRegisterChoiceIsTheSameFourAtATime)
{
    long le[32], wa[32];
    for (int r = 0; r < 32; r++) {
        le[r] = r % 2 ? LONG_MIN : 10 + r;
        wa[r] = r % 3 ? LONG_MAX : 20 + r;
    }
    uint32_t want = 0; // start 20: registers with le < 20 (odd, or r < 10); end 40: wa > 40 (r % 3, or r > 20)
    for (int r = 0; r < 32; r++)
        if ((r % 2 || 10 + r < 20) && (r % 3 || 20 + r > 40))
            want |= 1u << r;
    EXPECT_EQ(fit_regs_plain(le, wa, 20, 40), want);
    EXPECT_EQ(fit_regs(le, wa, 20, 40), want);
#ifdef NPUSIM_SCHED_AVX2
    if (!__builtin_cpu_supports("avx2"))
        GTEST_SKIP() << "this host has no AVX2: only the plain pass runs here";
    std::mt19937_64 rng(7);
    for (int round = 0; round < 20000; round++) {
        const long spread = round % 2 ? 8 : 1L << 40;
        auto pick = [&](long sentinel) {
            const uint64_t x = rng();
            return x % 16 == 0 ? sentinel : static_cast<long>(x % static_cast<uint64_t>(spread)) - spread / 2;
        };
        for (int r = 0; r < 32; r++) {
            le[r] = pick(LONG_MIN);
            wa[r] = pick(LONG_MAX);
        }
        const long start = pick(0), end = start + static_cast<long>(rng() % 8);
        ASSERT_EQ(fit_regs_avx2(le, wa, start, end), fit_regs_plain(le, wa, start, end)) << "round " << round;
    }
#else
    GTEST_SKIP() << "not an x86-64 build: only the plain pass exists";
#endif
}

// Register relief's rows (isa/sched_simd.h): adding to a range of rows and
// summing how far the rows are above the pool give, four or eight at a
// time, what one row at a time gives: ranges at every offset within a
// block of 8, empty ones, the padding rows past the circle never counted.
TEST(Sched, TheReliefRowsAreTheSameEightAtATime)
{
    std::vector<int32_t> plain(24, 0);
    for (int x = 19; x < 24; x++)
        plain[x] = SCHED_ROW_NONE; // a circle of 19 rows
    rows_add_plain(plain.data(), 3, 12, 2);
    rows_add_plain(plain.data(), 10, 19, -1);
    // rows 0-2: 0; 3-9: 2; 10-11: 1; 12-18: -1; plus 1: 3 x 1 + 7 x 3 + 2 x 2 = 28
    EXPECT_EQ(rows_over_plain(plain.data(), 24, 1), 28);
    EXPECT_EQ(rows_over(plain.data(), 24, 1), 28);
    EXPECT_EQ(rows_over(plain.data(), 24, -3), 0);
#ifdef NPUSIM_SCHED_AVX2
    if (!__builtin_cpu_supports("avx2"))
        GTEST_SKIP() << "this host has no AVX2: only the plain passes run here";
    std::mt19937_64 rng(11);
    for (int round = 0; round < 2000; round++) {
        const unsigned circle = 1 + static_cast<unsigned>(rng() % 300);
        const unsigned rows = (circle + SCHED_ROW_LANES - 1) / SCHED_ROW_LANES * SCHED_ROW_LANES;
        std::vector<int32_t> a(rows, 0);
        for (unsigned x = circle; x < rows; x++)
            a[x] = SCHED_ROW_NONE;
        std::vector<int32_t> b = a;
        for (int k = 0; k < 20; k++) {
            long from = static_cast<long>(rng() % (circle + 1)), to = static_cast<long>(rng() % (circle + 1));
            if (from > to)
                std::swap(from, to);
            const int32_t d = rng() % 2 ? 1 : -1;
            rows_add_plain(a.data(), from, to, d);
            rows_add_avx2(b.data(), from, to, d);
        }
        ASSERT_EQ(a, b) << "round " << round;
        const int32_t above = static_cast<int32_t>(rng() % 9) - 4;
        ASSERT_EQ(rows_over_avx2(b.data(), rows, above), rows_over_plain(a.data(), rows, above)) << "round " << round;
    }
#endif
}

TEST(Sched, HandCheckedLoopsReachTheirMii)
{
    // Per iteration, on the default core (slots: scalar+branch+sync, vector,
    // vector, mem+dma; valu x2 lat 4; sfu x1 lat 12 interval 2; lsu x1):
    struct Case {
        const char *what, *body;
        double per_iteration;  // the resource MII of one iteration, by hand
    } cases[] = {
        {"copy: a load and a store on the one mem slot", "    vld.f32 %x, [s10]\n    vst.f32 %x, [s11]\n", 2.0},
        {"relu: the mem slot, the vmax beside it",
         "    vld.f32 %x, [s10]\n    vmaxi.f32 %y, %x, 0.0\n    vst.f32 %y, [s11]\n", 2.0},
        {"two SFU ops at interval 2 on one SFU",
         "    vld.f32 %x, [s10]\n    vexp.f32 %e, %x\n    vrcp.f32 %r, %e\n    vst.f32 %r, [s11]\n", 4.0},
        {"eight VALU ops on two VALUs and two vector slots",
         "    vld.f32 %x, [s10]\n    vadd.f32 %a, %x, %x\n    vmul.f32 %b, %a, %x\n    vadd.f32 %c, %b, %a\n"
         "    vmul.f32 %d, %c, %b\n    vadd.f32 %e, %d, %c\n    vmul.f32 %f, %e, %d\n    vadd.f32 %g, %f, %e\n"
         "    vmul.f32 %h, %g, %f\n    vst.f32 %h, [s11]\n",
         4.0},
    };
    npu_timing_config t = default_timing();
    npu_asm_machine m = machine_of(t);
    for (const Case &c : cases) {
        Assembled a(loop(c.body, 256), &m, true);
        const npu_sched_loop &l = main_loop(a);
        SCOPED_TRACE(c.what);
        EXPECT_TRUE(l.scheduled);
        EXPECT_EQ(l.mii_res, unsigned(c.per_iteration * l.unroll));
        EXPECT_EQ(l.ii, l.mii) << "the schedule should reach its MII";
        EXPECT_DOUBLE_EQ(double(l.ii) / l.unroll, c.per_iteration);
        std::mt19937 rng(1);
        EXPECT_GT(check_kernels(a.p, t), 0u);
        Outcome r = run(a.p, &t, random_bytes(rng, 32768));
        EXPECT_GT(check_passes(a.p, r.events), 0u);
    }
}

// A loop on the long-latency core whose register floor is worked out by
// hand: 30 registers free (two hold constants), its least lifetime sum, and
// no schedule beating the floor; `more` checks the rest.
template <class More>
void check_register_floor(const std::string &body, unsigned long sum, More more)
{
    const npu_timing_config t = long_latency_timing();
    npu_asm_machine m = machine_of(t);
    Assembled a(loop(body, 256), &m, true);
    const npu_sched_loop &l = main_loop(a);
    EXPECT_EQ(l.regs_v, 30u);
    EXPECT_EQ(l.lifetime_sum_v, sum);
    EXPECT_GE(double(l.ii) / l.unroll, double(sum) / 30.0) << "no schedule beats the register floor";
    more(a, l, t);
}

TEST(Sched, RegistersRaiseTheIntervalAndTheReportSaysWhy)
{
    // gelu_tanh's fp32 chain with SFU latency 30: about 180 cycles of value
    // lifetimes per vector against 30 free registers force 6 cycles per
    // iteration where the SFU allows 4 (the issue's worked example). Sum of
    // least lifetimes: x 6+6+6+6+30+6+30 = 90, sq 6, p 6, z 6, e 30, d 6, r 30,
    // y 6 (its latency).
    check_register_floor("    vld.f32 %x, [s10]\n    vmul.f32 %sq, %x, %x\n    vfma.f32 %p, %sq, v29, v28\n"
                         "    vmul.f32 %z, %p, %x\n    vexp.f32 %e, %z\n    vaddi.f32 %d, %e, 1.0\n"
                         "    vrcp.f32 %r, %d\n    vmul.f32 %y, %r, %x\n    vst.f32 %y, [s11]\n",
                         180, [](const Assembled &, const npu_sched_loop &l, const npu_timing_config &) {
                             EXPECT_EQ(l.mii_res, 4 * l.unroll);
                             EXPECT_LE(l.vregs, 30u);
                         });
}

TEST(Sched, TheRegisterFloorCountsValuesThatCannotBothBeShort)
{
    // gelu_sigmoid's fp32 chain (lib/lin_sigmoid.s, LIN_SWISH_SPLIT) with
    // SFU latency 30, VALU 6, LSU 6. Each value's own least lifetime (the
    // longest latency path from its producer to its last reader): x 6, b 24
    // (p, h, c: 18, then l reads it), p 6, h 6, c 6, l 6, E 36 (d, then s),
    // d 6, s 6, r 30, xl 6, y 6: 144. But b lives until l issues and l until
    // s issues, and s is at least 12 + 6 + 30 + 6 = 54 after b (through h,
    // E and d), so b and l together live at least 54, not 24 + 6: 168 is
    // the least sum any timing of the iteration allows.
    check_register_floor("    vld.f32 %x, [s10]\n    vmini.f32 %b, %x, 51.0\n    vmul.f32 %p, %b, v29\n"
                         "    vmini.f32 %h, %p, 88.0\n    vfms.f32 %c, %b, v29, %h\n    vfma.f32 %l, %b, v26, %c\n"
                         "    vexp.f32 %E, %h\n    vaddi.f32 %d, %E, 1.0\n    vfma.f32 %s, %E, %l, %d\n"
                         "    vrcp.f32 %r, %s\n    vld.f32 %xl, [s10]\n    vmul.f32 %y, %r, %xl\n"
                         "    vst.f32 %y, [s11]\n",
                         168, [](const Assembled &a, const npu_sched_loop &, const npu_timing_config &t) {
                             EXPECT_GT(check_kernels(a.p, t), 0u);
                         });
}

TEST(Sched, AnInstructionMayWriteTheRegisterItLastReads)
{
    // v1..v31 hold constants, so the loop's values have v0 alone: x, then
    // 16 VALU results, each read only by the next. An instruction reads its
    // sources before it writes, so each may write the register it last
    // reads, and the next iteration's load waits for the store's read of
    // the last value. By hand, on the default core (lsu latency 6, valu 4,
    // one mem slot): load 6 + 16 x 4 = 70 cycles from the load to the
    // store, and the next load in the cycle after the store: 71 cycles per
    // iteration, in one register.
    std::string body = "    vld.f32 %x, [s10]\n    vadd.f32 %a0, %x, v1\n";
    for (int i = 1; i < 16; i++)
        body += "    vfma.f32 %a" + std::to_string(i) + ", %a" + std::to_string(i - 1) + ", v" +
                std::to_string(2 * i) + ", v" + std::to_string(2 * i + 1) + "\n";
    body += "    vst.f32 %a15, [s11]\n";
    npu_timing_config t = default_timing();
    npu_asm_machine m = machine_of(t);
    const std::string src = loop(body, 64);
    Assembled on(src, &m, true), off(src, &m, false);
    const npu_sched_loop &l = main_loop(on);
    ASSERT_EQ(off.rc, NPU_OK) << off.d.message;
    EXPECT_TRUE(l.scheduled);
    EXPECT_EQ(l.regs_v, 1u);
    EXPECT_EQ(l.vregs, 1u);
    EXPECT_DOUBLE_EQ(double(l.ii) / l.unroll, 71.0);
    std::mt19937 rng(3);
    std::vector<uint8_t> in = random_bytes(rng, 32768);
    Outcome a = run(on.p, &t, in), b = run(off.p, nullptr, in);
    EXPECT_TRUE(a.ub == b.ub) << "scheduled and written order differ";
    EXPECT_GT(check_kernels(on.p, t), 0u);
    EXPECT_GT(check_passes(on.p, a.events), 0u);
}

TEST(Sched, WhenNoScheduleFitsTheLoopRunsInWrittenOrderAndSaysWhy)
{
    // v8..v31 hold constants, leaving eight registers. Twelve results that
    // nothing reads each hold a register until their write completes (4
    // cycles, two VALUs), beside the chain's values: no II fits, not even
    // one iteration at a time. Written order fits (an instruction may take
    // a register as soon as its last reader has issued; the timing model's
    // WAW rule orders the writes), so that is what runs, and the loop's
    // record names the longest-lived values.
    std::string body = "    vld.f32 %x, [s10]\n    vld.f32 %x2, [s10 + 0]\n    vcgti.f32 %p0, %x, 0.5\n"
                       "    vsel.f32 %v0, %x, %x, %p0\n    vfma.f32 %v1, %x2, %v0, %x\n"
                       "    vfma.f32 %v2, %x2, %v1, %v0\n    vst.f32 %v2, [s11]\n";
    for (int r = 8; r < 32; r += 2)
        body += "    vadd.f32 %k" + std::to_string(r) + ", v" + std::to_string(r) + ", v" + std::to_string(r + 1) + "\n";
    npu_timing_config t = default_timing();
    npu_asm_machine m = machine_of(t);
    const std::string src = loop(body, 132);
    Assembled on(src, &m, true), off(src, &m, false);
    const npu_sched_loop &l = main_loop(on);
    ASSERT_EQ(off.rc, NPU_OK) << off.d.message;
    EXPECT_FALSE(l.scheduled);
    EXPECT_EQ(l.regs_v, 8u);
    ASSERT_NE(l.binding, nullptr);
    const std::string why = l.binding;
    EXPECT_EQ(why.rfind("no schedule fits: vector registers run out", 0), 0u) << why;
    EXPECT_NE(why.find("longest lifetimes: %x "), std::string::npos) << why;
    std::mt19937 rng(5);
    std::vector<uint8_t> in = random_bytes(rng, 32768);
    Outcome a = run(on.p, &t, in), b = run(off.p, nullptr, in);
    EXPECT_TRUE(a.ub == b.ub);
}

TEST(Sched, TooFewRegistersNamesTheLongLivedValues)
{
    // 31 constants leave one register for the loop's values.
    std::string consts;
    for (int r = 1; r < 32; r++)
        consts += "    vadd.f32 %k" + std::to_string(r) + ", %x, v" + std::to_string(r) + "\n";
    std::string body = "    vld.f32 %x, [s10]\n" + consts + "    vst.f32 %k1, [s11]\n";
    npu_asm_machine m = machine_of(default_timing());
    Assembled a(loop(body, 256), &m, true);
    EXPECT_NE(a.rc, NPU_OK);
    EXPECT_NE(std::string(a.d.message).find("registers"), std::string::npos) << a.d.message;
}

// Random loops on random machines: same bits as written order, and every
// steady-state pass exactly II cycles.
TEST(Sched, RandomLoopsKeepEveryLimitAndComputeTheSameBits)
{
    std::mt19937 rng(20261202);
    const char *unary[] = {"vexp.f32", "vrcp.f32", "vabs.f32", "vneg.f32"};
    const char *binary[] = {"vadd.f32", "vmul.f32", "vsub.f32", "vmax.f32", "vmin.f32"};
    size_t passes = 0, kernel_insns = 0;
    for (int trial = 0; trial < 40; trial++) {
        SCOPED_TRACE("trial " + std::to_string(trial));
        // a random machine: 1..6 slots, each class somewhere
        npu_timing_config t = default_timing();
        t.issue_width = 1 + rng() % 6;
        for (unsigned s = 0; s < t.issue_width; s++)
            t.slot_classes[s] = 1u << (rng() % NPU_NUM_CLASSES) | (rng() % 2 ? 1u << (rng() % NPU_NUM_CLASSES) : 0);
        for (unsigned c = 0; c < NPU_NUM_CLASSES; c++)
            t.slot_classes[rng() % t.issue_width] |= 1u << c;
        for (unsigned u : {NPU_UNIT_VALU, NPU_UNIT_SFU}) {
            t.unit[u].count = 1 + rng() % 3;
            t.unit[u].latency = 1 + rng() % 30;
            t.unit[u].interval = 1 + rng() % 3;
        }
        t.unit[NPU_UNIT_LSU].latency = 1 + rng() % 8;
        char msg[128];
        ASSERT_EQ(npu_timing_config_check(&t, msg, sizeof msg), NPU_OK) << msg;
        npu_asm_machine m = machine_of(t);
        // a random body: values from a load, each op reading earlier ones
        std::vector<std::string> vals = {"%x"};
        std::string body = "    vld.f32 %x, [s10]\n";
        if (rng() % 2) {
            body += "    vld.f32 %x2, [s10 + 0]\n";
            vals.push_back("%x2");
        }
        unsigned nops = 2 + rng() % 14;
        std::vector<std::string> ops;  // each op's text after its destination, for repeats
        for (unsigned i = 0; i < nops; i++) {
            std::string v = "%v" + std::to_string(i);
            if (!ops.empty() && rng() % 4 == 0) {  // a repeat of an earlier op: the search may merge it
                const std::string &o = ops[rng() % ops.size()];
                body += "    " + o.substr(0, o.find(' ')) + " " + v + o.substr(o.find(' ')) + "\n";
                vals.push_back(v);
                continue;
            }
            const std::string &a = vals[rng() % vals.size()], &b = vals[rng() % vals.size()];
            switch (rng() % 4) {
            case 0: {
                std::string op = unary[rng() % 4];
                body += "    " + op + " " + v + ", " + a + "\n";
                ops.push_back(op + " , " + a);
                break;
            }
            case 1: body += "    vfma.f32 " + v + ", " + a + ", " + b + ", " + vals[rng() % vals.size()] + "\n"; break;
            case 2: {
                std::string pr = "%p" + std::to_string(i);
                body += "    vcgti.f32 " + pr + ", " + a + ", 0.5\n    vsel.f32 " + v + ", " + a + ", " + b + ", " +
                        pr + "\n";
                break;
            }
            default: body += "    " + std::string(binary[rng() % 5]) + " " + v + ", " + a + ", " + b + "\n"; break;
            }
            vals.push_back(v);
        }
        body += "    vst.f32 " + vals.back() + ", [s11]\n";
        if (rng() % 2)
            body += "    vst.f32 " + vals[rng() % vals.size()] + ", [s11 + 512 vl]\n";
        if (trial % 4 == 1) {
            // register pressure: constants in all but a few more registers
            // than the body has values, so that overlapping iterations must
            // share registers (within a cycle too), or no II fits and the
            // loop runs in written order
            const unsigned free_regs = unsigned(vals.size()) + 2 + rng() % 6;
            for (unsigned r = free_regs; r + 1 < 32; r += 2)
                body += "    vadd.f32 %k" + std::to_string(r) + ", v" + std::to_string(r) + ", v" +
                        std::to_string(r + 1) + "\n";
            if ((32 - free_regs) % 2)
                body += "    vneg.f32 %k31, v31\n";
        }
        const unsigned n = 100 + rng() % 300;
        const std::string src = loop(body, n);
        Assembled on(src, &m, true), off(src, &m, false);
        ASSERT_EQ(on.rc, NPU_OK) << on.d.line << ": " << on.d.message << "\n" << src;
        ASSERT_EQ(off.rc, NPU_OK) << off.d.message;
        std::vector<uint8_t> in = random_bytes(rng, 32768);
        Outcome a = run(on.p, &t, in), b = run(off.p, nullptr, in);
        EXPECT_TRUE(a.ub == b.ub) << "scheduled and written order differ\n" << src;
        passes += check_passes(on.p, a.events);
        kernel_insns += check_kernels(on.p, t);
        // No schedule beats the register floor (the least lifetime sum over
        // the registers free, per file): its values need that many
        // register-cycles per iteration, and U copies share U x II cycles.
        const npu_sched_loop &l = on.p.loops[0];
        if (l.scheduled) {
            if (l.regs_v) {
                EXPECT_GE(double(l.ii) / l.unroll, double(l.lifetime_sum_v) / l.regs_v) << src;
            }
            if (l.regs_p) {
                EXPECT_GE(double(l.ii) / l.unroll, double(l.lifetime_sum_p) / l.regs_p) << src;
            }
        }
    }
    EXPECT_GT(passes, 700u);
    EXPECT_GT(kernel_insns, 3000u);
}

// Units of long interval, where the reservation table finds a unit's free
// start rows from the runs of its full rows (asm_pipe.c occupy): from 16
// cycles to 1,000, and past the II (four SFUs of interval 60 for two SFU
// instructions an iteration, so a node holds some rows twice). Every kernel
// keeps every limit and computes the written order's bits.
TEST(Sched, LongUnitIntervalsKeepEveryLimitAndComputeTheSameBits)
{
    const std::string body = "    vld.f32 %x, [s10]\n    vmul.f32 %sq, %x, %x\n    vexp.f32 %e, %sq\n"
                             "    vaddi.f32 %d, %e, 1.0\n    vrcp.f32 %r, %d\n    vmul.f32 %y, %r, %x\n"
                             "    vst.f32 %y, [s11]\n";
    const struct {
        npu_unit unit;
        unsigned count, interval;
    } cases[] = {{NPU_UNIT_VALU, 2, 16},  {NPU_UNIT_VALU, 1, 40}, {NPU_UNIT_VALU, 3, 257}, {NPU_UNIT_SFU, 1, 100},
                 {NPU_UNIT_SFU, 4, 60},   {NPU_UNIT_LSU, 2, 33},  {NPU_UNIT_LSU, 1, 1000}};
    std::mt19937 rng(16);
    const std::vector<uint8_t> in = random_bytes(rng, 32768);
    size_t passes = 0, kernel_insns = 0;
    for (const auto &c : cases) {
        SCOPED_TRACE("unit " + std::to_string(c.unit) + " x" + std::to_string(c.count) + " interval " +
                     std::to_string(c.interval));
        npu_timing_config t = default_timing();
        t.unit[c.unit].count = c.count;
        t.unit[c.unit].interval = c.interval;
        npu_asm_machine m = machine_of(t);
        const std::string src = loop(body, 256);
        Assembled on(src, &m, true), off(src, &m, false);
        ASSERT_EQ(on.rc, NPU_OK) << on.d.line << ": " << on.d.message;
        ASSERT_EQ(off.rc, NPU_OK) << off.d.message;
        EXPECT_TRUE(main_loop(on).scheduled);
        Outcome a = run(on.p, &t, in), b = run(off.p, nullptr, in);
        EXPECT_TRUE(a.ub == b.ub) << "scheduled and written order differ";
        passes += check_passes(on.p, a.events);
        kernel_insns += check_kernels(on.p, t);
    }
    EXPECT_GT(passes, 0u);
    EXPECT_GT(kernel_insns, 0u);
}

// A repeated load (a kernel reading x again for a late use, LIN_X_AGAIN) is
// merged into the first where holding x schedules as fast (fewer
// instructions), and kept where registers bind: the faster block wins.
TEST(Sched, RepeatedLoadIsMergedOnlyWhereThatIsNotSlower)
{
    const std::string chain =
        "    vld.f32 %x, [s10]\n    vmul.f32 %sq, %x, %x\n    vfma.f32 %p, %sq, v29, v28\n"
        "    vmul.f32 %z, %p, %x\n    vexp.f32 %e, %z\n    vaddi.f32 %d, %e, 1.0\n    vrcp.f32 %r, %d\n";
    const std::string again = chain + "    vld.f32 %xl, [s10]\n    vmul.f32 %y, %r, %xl\n    vst.f32 %y, [s11]\n";
    const std::string held = chain + "    vmul.f32 %y, %r, %x\n    vst.f32 %y, [s11]\n";
    std::mt19937 rng(7);
    const std::vector<uint8_t> in = random_bytes(rng, 32768);
    struct Case {
        const char *what;
        unsigned sfu, valu;
        bool merged;
    } cases[] = {
        {"default latencies: the SFU binds either way, so x is held", 12, 4, true},
        {"SFU latency 30: registers bind, so x is read again", 30, 6, false},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        npu_timing_config t = default_timing();
        t.unit[NPU_UNIT_SFU].latency = c.sfu;
        t.unit[NPU_UNIT_VALU].latency = c.valu;
        npu_asm_machine m = machine_of(t);
        Assembled a(loop(again, 256), &m, true), h(loop(held, 256), &m, true), off(loop(again, 256), &m, false);
        const npu_sched_loop &la = main_loop(a), &lh = main_loop(h);
        EXPECT_EQ(la.ops, 12u);  // as written, with both bumps
        EXPECT_EQ(la.merged, c.merged ? 1u : 0u);
        EXPECT_EQ(lh.merged, 0u);
        const double per_a = double(la.ii) / la.unroll, per_h = double(lh.ii) / lh.unroll;
        if (c.merged)
            EXPECT_EQ(per_a, per_h) << "merged: the same schedule as x held";
        else
            EXPECT_LT(per_a, per_h) << "kept: faster than holding x";
        // the bound's register floor is the lower of the two blocks'
        EXPECT_LE(la.lifetime_sum_v, lh.lifetime_sum_v);
        Outcome r = run(a.p, &t, in), w = run(off.p, nullptr, in);
        EXPECT_TRUE(r.ub == w.ub) << "scheduled and written order differ";
        EXPECT_GT(check_kernels(a.p, t), 0u);
    }
    // A store between the two loads: memory may have changed, never merged.
    npu_asm_machine m = machine_of(default_timing());
    Assembled s(loop("    vld.f32 %x, [s10]\n    vst.f32 %x, [s11]\n    vld.f32 %x2, [s10]\n"
                     "    vadd.f32 %y, %x2, %x\n    vst.f32 %y, [s11]\n",
                     256),
                &m, true);
    EXPECT_EQ(main_loop(s).merged, 0u);
}

const char *const kCopy = "    vld.f32 %x, [s10]\n    vst.f32 %x, [s11]\n";

TEST(Sched, BadBlocksGetOneClearLine)
{
    npu_asm_machine m = machine_of(default_timing());
    struct Case {
        std::string src, message;
    } cases[] = {
        {"    vadd.f32 %x, v1, v2\n", "only inside a .pipeline block"},
        {loop("    vld.f32 %x, [s10]\n    vadd.f32 %x, %x, %x\n    vst.f32 %x, [s11]\n", 4), "written twice"},
        {loop("    vadd.f32 %y, %x, %x\n    vld.f32 %x, [s10]\n    vst.f32 %y, [s11]\n", 4), "read before it is written"},
        {loop("    vld.f32 v3, [s10]\n    vst.f32 v3, [s11]\n", 4), "physical register v3"},
        {loop("    vld.f32 %x, [s10]\n    add s12, s12, s13\n    vst.f32 %x, [s11]\n", 4), "pointer bump"},
        {loop("    vld.f32 %x, [s10]\n    add s12, s10, s0\n    vst.f32 %x, [s11]\n", 4), "pointer bump"},
        {loop("    vld.f32 %x, [s10 + 64]\n    vst.f32 %x, [s11]\n", 4), "must count vector lengths"},
        {loop("top:\n    vld.f32 %x, [s10]\n    vst.f32 %x, [s11]\n", 4), "labels are not allowed"},
        {loop("    vld.f32 %x, [s10]\n    vadd.f32 %x2, %x, %x, p1\n    vst.f32 %x2, [s11]\n", 4),
         "masked write to a virtual register"},
        {loop("    vld.f32 %x, [s10]\n    beqz s0, @0\n    vst.f32 %x, [s11]\n", 4), "not allowed inside a .pipeline"},
        {loop("    vld.f32 %x, [s10]\n    vst.f32 %x, [s11]\n    vadd.f32 %y, %x, s9\n", 4), "vector register"},
        {".pipeline s9, s8\n    vld.f32 %x, [s10]\n", ".pipeline without .endpipeline"},
        {".endpipeline\n", ".endpipeline without .pipeline"},
        {".pipeline s9, s9\n.endpipeline\n", "must differ"},
        {loop_dir(kCopy, 4, ".pipeline s9, s8, 64, 0"), "room must be a whole number of iterations, 1..1e9"},
        {loop_dir(kCopy, 4, ".pipeline s9, s8, 64, 2.5"), "room must be a whole number of iterations, 1..1e9"},
        {loop("    vld.f32 %x, [s10]\n    vst.f32 %x, [s9]\n", 4), "which the .pipeline loop itself uses"},
        {loop("    vld.f32 %x, [s10]\n    vcgti.f32 %x, %x, 0.0\n", 4), "is a vector register, used here as a predicate"},
        {".pass s12\n", ".pass belongs inside a .pipeline block"},
        {pass_loop(kCopy, ".pass s13\n", 4), "a .pipeline block has one .pass"},
        {pass_loop(kCopy, "", 4, ".pass s9"), "a register the .pipeline loop itself does not use"},
        {pass_loop(kCopy, "", 4, ".pass s12, 0"), "scale must be a whole number 1..65536"},
        {pass_loop(kCopy, "    vadd.f32 v1, v2, v3\n", 4), "vadd is not allowed in a .pass block"},
        {pass_loop(kCopy, "    beqz s20, @0\n", 4), "beqz is not allowed in a .pass block"},
        {pass_loop(kCopy, "    dmawait 0\n", 4), "dmawait is not allowed in a .pass block"},
        {pass_loop(kCopy, "    vadd.f32 %z, v2, v3\n", 4), "physical registers, not virtual"},
        {pass_loop(kCopy, "    add s20, s20, s10\n", 4), "add uses s10, which the .pipeline loop uses"},
        {pass_loop(kCopy, "    addi s12, s12, 1\n", 4), "addi writes s12, which .pass sets"},
    };
    for (const Case &c : cases) {
        Assembled a(c.src, &m, true);
        EXPECT_NE(a.rc, NPU_OK) << c.src;
        EXPECT_NE(std::string(a.d.message).find(c.message), std::string::npos)
            << "got: " << a.d.message << "\nwanted: " << c.message << "\n" << c.src;
        EXPECT_GT(a.d.line, 0);
    }
}

// An instruction a block refuses is named at its mnemonic's column, as
// every other error is (they said `t.s:5: j is not allowed ...`).
TEST(Sched, AnInstructionABlockRefusesIsNamedAtItsColumn)
{
    npu_asm_machine m = machine_of(default_timing());
    struct Case {
        std::string src, message;
        int line, col;
    } cases[] = {
        {loop("    vld.f32 %x, [s10]\n      j @0\n", 4),
         "j is not allowed inside a .pipeline block (straight-line vector, memory and scalar instructions only)", 6, 7},
        {loop("  dmawait 0\n", 4),
         "dmawait is not allowed inside a .pipeline block (straight-line vector, memory and scalar instructions only)", 5,
         3},
        {pass_loop(kCopy, "   vadd.f32 v1, v2, v3\n", 4),
         "vadd is not allowed in a .pass block (straight-line scalar and DMA instructions only)", 12, 4},
    };
    for (const Case &c : cases) {
        Assembled a(c.src, &m, true);
        EXPECT_EQ(a.rc, NPU_ESYNTAX) << c.src;
        EXPECT_EQ(std::string(a.d.message), c.message) << c.src;
        EXPECT_EQ(a.d.line, c.line) << c.src;
        EXPECT_EQ(a.d.col, c.col) << c.src;
    }
}

// `.pipeline sC, sT, trips, room`: where the room is a multiple of a
// kernel pass (K U iterations), a count whose leftovers past whole passes
// would cost more in written order than one more pass (at least
// pad_leftovers of them) is rounded up to whole passes, so they run in the
// kernel. The run is then the written order's of the rounded count (the
// room promised those iterations' memory; none past it is touched), and
// faster than the leftovers in written order. A count of whole passes runs
// exactly as without a room; a room that is not a multiple of the pass
// changes nothing.
TEST(Sched, ARoomLetsTheLeftoverIterationsRunAsAWholePass)
{
    const npu_timing_config t = long_latency_timing();
    npu_asm_machine m = machine_of(t);
    const std::string body = "    vld.f32 %x, [s10]\n    vexp.f32 %e, %x\n    vaddi.f32 %d, %e, 1.0\n"
                             "    vrcp.f32 %r, %d\n    vmul.f32 %y, %r, %x\n    vst.f32 %y, [s11]\n";
    const std::string room = ".pipeline s9, s8, 256, 256", none = ".pipeline s9, s8, 256",
                      odd = ".pipeline s9, s8, 256, 255";
    Assembled probe(loop_dir(body, 200, room), &m, true);
    const npu_sched_loop &l = main_loop(probe);
    ASSERT_TRUE(l.scheduled);
    const unsigned KU = l.unroll;
    ASSERT_GT(KU, 1u) << "the test needs a pass of several iterations";
    ASSERT_LE(9 * KU, 256u) << "every count below stays in the room";
    ASSERT_LE(l.prologue_iterations, 8 * KU) << "8 passes reach the kernel";
    EXPECT_EQ(l.room, 256u);
    EXPECT_GT(l.pad_leftovers, 0u) << "the count rounds up (padded)";
    EXPECT_GE(l.pad_leftovers, 1u);
    EXPECT_LT(l.pad_leftovers, KU);
    std::mt19937 rng(7);
    const std::vector<uint8_t> in = random_bytes(rng, 32768);
    std::vector<unsigned> counts = {9 * KU - 1, 8 * KU + 1, 8 * KU, 1u};
    if (l.pad_from > 1 && l.pad_from < 8 * KU)
        counts.insert(counts.end(), {l.pad_from - 1, l.pad_from});
    for (unsigned n : counts) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", pass of " + std::to_string(KU));
        const unsigned whole = (n + KU - 1) / KU * KU;
        Assembled with(loop_dir(body, n, room), &m, true), without(loop_dir(body, n, none), &m, true),
            not_whole(loop_dir(body, n, odd), &m, true), as_written(loop_dir(body, n, none), &m, false),
            as_written_whole(loop_dir(body, whole, none), &m, false);
        ASSERT_EQ(as_written.rc, NPU_OK);
        EXPECT_GT(main_loop(with).pad_leftovers, 0u);
        EXPECT_EQ(main_loop(without).pad_leftovers, 0u);
        EXPECT_EQ(main_loop(not_whole).pad_leftovers, 0u);
        EXPECT_EQ(main_loop(not_whole).room, 255u);
        const Outcome w = run(with.p, &t, in), wo = run(without.p, &t, in), nw = run(not_whole.p, &t, in);
        const Outcome ref = run(as_written.p, nullptr, in), ref_whole = run(as_written_whole.p, nullptr, in);
        EXPECT_TRUE(wo.ub == ref.ub);
        EXPECT_TRUE(nw.ub == ref.ub);
        EXPECT_EQ(nw.cycles, wo.cycles);
        if (n < l.prologue_iterations) {
            // too few for the prologue: as given, in written order, or
            // (from pad_from on) rounded up to the prologue's passes: the
            // written order's of that count
            unsigned ran = 0;
            while (ran < 256 && std::any_of(w.ub.begin() + 32768 + ran * 32, w.ub.begin() + 32768 + (ran + 1) * 32,
                                            [](uint8_t v) { return v != 0; }))
                ran++;
            if (l.pad_from == 0 || n < l.pad_from) {
                EXPECT_EQ(ran, n) << "a count below pad_from runs as given";
            } else {
                EXPECT_EQ(ran, l.prologue_iterations) << "rounded up to the prologue's passes";
            }
            Assembled as_written_ran(loop_dir(body, ran, none), &m, false);
            EXPECT_TRUE(w.ub == run(as_written_ran.p, nullptr, in).ub);
        } else if (n % KU == 0) {
            EXPECT_TRUE(w.ub == ref.ub);
            EXPECT_EQ(w.cycles, wo.cycles) << "whole passes run as without a room";
        } else if (n % KU >= l.pad_leftovers) {
            EXPECT_TRUE(w.ub == ref_whole.ub) << "the count rounds up to whole passes";
            EXPECT_GT(check_passes(with.p, w.events), 0u);
            EXPECT_LT(w.cycles, wo.cycles) << "the leftovers in the kernel beat written order";
        } else {
            EXPECT_TRUE(w.ub == ref.ub) << "too few leftovers to pay for a pass";
        }
    }
}

// The loop record counts one iteration's vector loads and stores, each
// address once (the host's tiling takes its DMA traffic from them): a
// vector read again is one load, also after its pointer's bump.
TEST(Sched, AVectorReadAgainCountsAsOneLoad)
{
    npu_asm_machine m = machine_of(default_timing());
    struct Case {
        std::string src;
        unsigned loads, stores;
    } cases[] = {
        {loop("    vld.f32 %x, [s10]\n    vld.f32 %x2, [s10]\n    vmul.f32 %y, %x, %x2\n    vst.f32 %y, [s11]\n", 64), 1, 1},
        {loop("    vld.f32 %x, [s10]\n    vld.f32 %x2, [s10 + 1 vl]\n    vmul.f32 %y, %x, %x2\n"
              "    vst.f32 %y, [s11]\n",
              64),
         2, 1},
        {"    li s10, 0\n    li s11, 32768\n    li s9, 64\n.pipeline s9, s8\n    vld.f32 %x, [s10]\n"
         "    addvl s10, s10, 1\n    vld.f32 %x2, [s10 - 1 vl]\n    vmul.f32 %y, %x, %x2\n    vst.f32 %y, [s11]\n"
         "    vst.f32 %x2, [s11 + 1 vl]\n    addvl s11, s11, 2\n.endpipeline\n    halt\n",
         1, 2},
    };
    for (const Case &c : cases)
        for (bool schedule : {true, false}) {
            Assembled a(c.src, &m, schedule);
            const npu_sched_loop &l = main_loop(a);
            EXPECT_EQ(l.vector_loads, c.loads) << c.src;
            EXPECT_EQ(l.vector_stores, c.stores) << c.src;
        }
}

TEST(Sched, WithoutAMachineOrWithScheduleOffTheLoopRunsInWrittenOrder)
{
    const std::string src = loop("    vld.f32 %x, [s10]\n    vmaxi.f32 %y, %x, 0.0\n    vst.f32 %y, [s11]\n", 37);
    npu_asm_machine m = machine_of(default_timing());
    Assembled none(src, nullptr, true), off(src, &m, false), on(src, &m, true);
    ASSERT_EQ(none.rc, NPU_OK);
    ASSERT_EQ(none.p.nloops, 1u);
    EXPECT_FALSE(none.p.loops[0].scheduled);
    EXPECT_FALSE(off.p.loops[0].scheduled);
    EXPECT_TRUE(on.p.loops[0].scheduled);
    // written order: beqz, the three instructions and two bumps, loop
    EXPECT_EQ(off.p.loops[0].end - off.p.loops[0].begin, 7u);
    std::mt19937 rng(3);
    std::vector<uint8_t> in = random_bytes(rng, 32768);
    EXPECT_TRUE(run(on.p, nullptr, in).ub == run(off.p, nullptr, in).ub);
    // every trip count, the remainders and the too-short ones included
    for (unsigned n : {0u, 1u, 2u, 3u, 5u, 8u, 17u, 63u, 64u, 65u, 129u}) {
        const std::string s = loop("    vld.f32 %x, [s10]\n    vexp.f32 %y, %x\n    vst.f32 %y, [s11]\n", n);
        Assembled a(s, &m, true), b(s, &m, false);
        EXPECT_TRUE(run(a.p, nullptr, in).ub == run(b.p, nullptr, in).ub) << "n = " << n;
    }
}

// A .pass block (docs/scheduling.md) runs once a kernel pass, K iterations,
// with `.pass s12, scale` giving s12 = K x scale; never in the prologue,
// epilogue or written order (s12 = 0 there). Its instructions take cycles
// the body leaves free: the kernel keeps every rule (check_kernels) and its
// rate (check_passes), and the body computes what it does in written order.
TEST(Sched, APassBlockRunsOnceAKernelPassInCyclesTheBodyLeavesFree)
{
    const npu_timing_config t = default_timing();
    npu_asm_machine m = machine_of(t);
    std::mt19937 rng(5);
    std::vector<uint8_t> in = random_bytes(rng, 32768);
    const std::string body = "    vld.f32 %x, [s10]\n    vexp.f32 %y, %x\n    vst.f32 %y, [s11]\n";
    for (unsigned n : {0u, 1u, 5u, 37u, 64u, 129u, 1000u}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const std::string src = pass_loop(body, "    add s20, s20, s12\n    addi s21, s21, 1\n", n, ".pass s12, 3");
        Assembled on(src, &m, true), off(src, &m, false);
        ASSERT_EQ(on.rc, NPU_OK) << on.d.message;
        const Outcome a = run(on.p, &t, in), b = run(off.p, nullptr, in);
        EXPECT_TRUE(a.ub == b.ub);
        EXPECT_EQ(b.s[12], 0u);
        EXPECT_EQ(b.s[21], 0u);
        const npu_sched_loop &l = main_loop(on);
        ASSERT_TRUE(l.scheduled);
        const uint64_t K = a.s[12] / 3, passes = a.s[21];
        EXPECT_EQ(a.s[12] % 3, 0u);
        EXPECT_EQ(l.unroll % K, 0u); // K U
        EXPECT_EQ(a.s[20], passes * 3 * K);
        // every iteration but the prologue's, epilogue's and the remainder's
        // ran in a kernel pass
        EXPECT_LE(passes * K, n);
        if (n >= 1000) {
            EXPECT_GT(passes, 0u);
            EXPECT_GT(passes * K + uint64_t(l.stages) * l.unroll + l.unroll, n);
        }
        check_kernels(on.p, t);
        check_passes(on.p, run(on.p, &t, in).events);
    }
    // the pass block's instructions sit in the kernel, and the schedule table shows them
    Assembled a(pass_loop(body, "    add s20, s20, s12\n    addi s21, s21, 1\n", 100), &m, true);
    const npu_sched_loop &l = main_loop(a);
    size_t adds = 0;
    for (size_t pc = l.kernel_begin; pc < l.kernel_end; pc++)
        adds += a.p.insns[pc].op == NPU_OP_ADD && a.p.insns[pc].rd == 20;
    EXPECT_GE(adds, 1u);
    EXPECT_NE(std::string(l.table).find("add (.pass)"), std::string::npos) << l.table;
    for (size_t pc = 0; pc < l.kernel_begin; pc++)
        EXPECT_FALSE(a.p.insns[pc].op == NPU_OP_ADD && a.p.insns[pc].rd == 20) << "pc " << pc;
}

// The process's schedule cache (npu_asm_cache_*, isa/asm_pipe.c) only saves
// the search: a block scheduled before for the same machine assembles to the
// same bits, and another machine is a separate entry.

std::vector<uint64_t> words(const Assembled &a) { return std::vector<uint64_t>(a.p.words, a.p.words + a.p.count); }

// npu_assemble_file keeps what it assembled from disk (isa/asm.c): a later
// call with the same options gets a copy, field for field the program a new
// assembly gives, as long as every file it read reads the same and every
// include resolves the same; an edited include, an include now found
// elsewhere first, and other defines each assemble anew.
void expect_same_program(const npu_program &a, const npu_program &b, const std::string &what)
{
    SCOPED_TRACE(what);
    ASSERT_EQ(a.count, b.count);
    EXPECT_EQ(std::vector<uint64_t>(a.words, a.words + a.count), std::vector<uint64_t>(b.words, b.words + b.count));
    for (size_t i = 0; i < a.count; i++) {
        EXPECT_EQ(a.insns[i].op, b.insns[i].op);
        EXPECT_EQ(a.insns[i].imm, b.insns[i].imm);
        EXPECT_EQ(a.locs[i].file, b.locs[i].file);
        EXPECT_EQ(a.locs[i].line, b.locs[i].line);
    }
    ASSERT_EQ(a.nfiles, b.nfiles);
    for (size_t i = 0; i < a.nfiles; i++)
        EXPECT_STREQ(a.files[i], b.files[i]);
    ASSERT_EQ(a.nloops, b.nloops);
    for (size_t i = 0; i < a.nloops; i++) {
        const npu_sched_loop &x = a.loops[i], &y = b.loops[i];
        EXPECT_EQ(x.loc.line, y.loc.line);
        EXPECT_EQ(x.begin, y.begin);
        EXPECT_EQ(x.end, y.end);
        EXPECT_EQ(x.kernel_begin, y.kernel_begin);
        EXPECT_EQ(x.kernel_end, y.kernel_end);
        EXPECT_EQ(x.scheduled, y.scheduled);
        EXPECT_EQ(x.ops, y.ops);
        EXPECT_EQ(x.trips, y.trips);
        EXPECT_EQ(x.unroll, y.unroll);
        EXPECT_EQ(x.ii, y.ii);
        EXPECT_EQ(x.mii, y.mii);
        EXPECT_EQ(x.stages, y.stages);
        EXPECT_EQ(x.vregs, y.vregs);
        EXPECT_EQ(x.max_live, y.max_live);
        EXPECT_EQ(x.lifetime_sum_v, y.lifetime_sum_v);
        EXPECT_EQ(x.regs_v, y.regs_v);
        EXPECT_EQ(x.prologue_iterations, y.prologue_iterations);
        EXPECT_EQ(x.vector_loads, y.vector_loads);
        EXPECT_EQ(x.vector_stores, y.vector_stores);
        EXPECT_STREQ(x.binding, y.binding);
        EXPECT_STREQ(x.table, y.table);
        ASSERT_EQ(x.n_iter_pcs, y.n_iter_pcs);
        EXPECT_EQ(std::vector<size_t>(x.iter_pcs, x.iter_pcs + x.n_iter_pcs),
                  std::vector<size_t>(y.iter_pcs, y.iter_pcs + y.n_iter_pcs));
        ASSERT_EQ(x.kernel_cycles != nullptr, y.kernel_cycles != nullptr);
        if (x.kernel_cycles) {
            EXPECT_EQ(std::vector<uint32_t>(x.kernel_cycles, x.kernel_cycles + (x.kernel_end - x.kernel_begin)),
                      std::vector<uint32_t>(y.kernel_cycles, y.kernel_cycles + (y.kernel_end - y.kernel_begin)));
        }
    }
}

struct FromDisk {
    npu_program p{};
    npu_diag d{};
    unsigned long hits = 0, misses = 0;  // the schedule cache's, after it: unchanged when the program was kept
    FromDisk(const std::string &path, const std::string &lib, const npu_asm_machine &m, const char *unroll = "1")
    {
        const char *dirs[] = {lib.c_str()};
        const npu_asm_define defs[] = {{"UNROLLS", unroll}};
        npu_asm_options o{};
        o.include_dirs = dirs;
        o.num_include_dirs = 1;
        o.defines = defs;
        o.num_defines = 1;
        o.machine = &m;
        o.schedule = 1;
        npu_program_init(&p);
        EXPECT_EQ(npu_assemble_file(path.c_str(), &o, &p, &d), NPU_OK) << d.message;
        npu_asm_cache_stats(&hits, &misses);
    }
    ~FromDisk() { npu_program_free(&p); }
};

TEST(Sched, AProgramAssembledFromDiskAgainIsKeptWhileItsFilesReadTheSame)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("npusim_kept_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "lib");
    fs::create_directories(dir / "k");
    auto write = [](const fs::path &f, const std::string &text) { std::ofstream(f) << text; };
    const std::string body = ".macro BODY\n    vld.f32 %x, [s10]\n    vmul.f32 %sq, %x, %x\n    vexp.f32 %e, %sq\n"
                             "    vaddi.f32 %d, %e, 1.0\n    vrcp.f32 %r, %d\n    vmul.f32 %y, %r, %x\n"
                             "    vst.f32 %y, [s11]\n.endm\n";
    write(dir / "lib" / "body.s", body);
    const std::string main = (dir / "k" / "main.s").string(), lib = (dir / "lib").string();
    write(main, ".include \"body.s\"\n.if UNROLLS > 1\n    nop\n.endif\n" + loop("    BODY\n", 256));
    const npu_asm_machine m = machine_of(default_timing());
    auto fresh = [&](const char *unroll = "1") {
        npu_asm_cache_clear();  // the schedules and the kept programs
        return std::make_unique<FromDisk>(main, lib, m, unroll);
    };

    auto first = fresh();
    FromDisk again(main, lib, m);
    expect_same_program(first->p, again.p, "kept");
    EXPECT_EQ(again.hits + again.misses, first->hits + first->misses) << "assembled anew, not kept";
    ASSERT_GE(first->p.nloops, 1u);
    EXPECT_TRUE(first->p.loops[0].scheduled);

    // Another define: its own program.
    FromDisk two(main, lib, m, "2");
    EXPECT_EQ(two.p.count, first->p.count + 1);
    EXPECT_GT(two.hits + two.misses, again.hits + again.misses) << "kept for other defines";

    // The include edited (the same size, another instruction): assembled anew.
    std::string edited = body;
    edited.replace(edited.find("vmul.f32 %y"), 8, "vadd.f32");
    write(dir / "lib" / "body.s", edited);
    FromDisk after_edit(main, lib, m);
    EXPECT_NE(std::vector<uint64_t>(after_edit.p.words, after_edit.p.words + after_edit.p.count),
              std::vector<uint64_t>(first->p.words, first->p.words + first->p.count));
    expect_same_program(fresh()->p, after_edit.p, "after the edit");

    // A body.s next to main.s, which is searched before the include folder.
    write(dir / "k" / "body.s", body);
    FromDisk shadowed(main, lib, m);
    expect_same_program(fresh()->p, shadowed.p, "the include found next to main.s");
    EXPECT_EQ(std::vector<uint64_t>(shadowed.p.words, shadowed.p.words + shadowed.p.count),
              std::vector<uint64_t>(first->p.words, first->p.words + first->p.count));
    std::vector<std::string> files(shadowed.p.files, shadowed.p.files + shadowed.p.nfiles);
    EXPECT_NE(std::find(files.begin(), files.end(), (dir / "k" / "body.s").string()), files.end());
    fs::remove_all(dir);
}

TEST(Sched, ACachedScheduleIsTheSameAsASearchedOne)
{
    const std::string src = loop("    vld.f32 %x, [s10]\n    vmul.f32 %sq, %x, %x\n    vexp.f32 %e, %sq\n"
                                 "    vaddi.f32 %d, %e, 1.0\n    vrcp.f32 %r, %d\n    vmul.f32 %y, %r, %x\n"
                                 "    vst.f32 %y, [s11]\n",
                                 256);
    npu_timing_config fast = default_timing(), slow = default_timing();
    slow.unit[NPU_UNIT_SFU].latency = 30;
    const npu_asm_machine mf = machine_of(fast), ms = machine_of(slow);
    unsigned long hits = 0, misses = 0;
    npu_asm_cache_clear();
    Assembled searched_fast(src, &mf, true);
    npu_asm_cache_clear();
    Assembled searched_slow(src, &ms, true);
    Assembled cached_slow(src, &ms, true), other_fast(src, &mf, true), cached_fast(src, &mf, true);
    npu_asm_cache_stats(&hits, &misses);
    EXPECT_EQ(misses, 2u);  // searched_slow, other_fast
    EXPECT_EQ(hits, 2u);    // cached_slow, cached_fast
    EXPECT_NE(words(searched_fast), words(searched_slow)) << "the two machines should schedule differently";
    EXPECT_EQ(words(cached_slow), words(searched_slow));
    EXPECT_EQ(words(other_fast), words(searched_fast));
    EXPECT_EQ(words(cached_fast), words(searched_fast));
    for (const Assembled *a : {&cached_slow, &cached_fast}) {
        const npu_sched_loop &l = main_loop(*a), &r = main_loop(a == &cached_slow ? searched_slow : searched_fast);
        EXPECT_EQ(l.ii, r.ii);
        EXPECT_EQ(l.unroll, r.unroll);
        EXPECT_EQ(l.mii, r.mii);
        EXPECT_EQ(l.stages, r.stages);
        EXPECT_EQ(l.vregs, r.vregs);
        EXPECT_STREQ(l.binding, r.binding);
        EXPECT_STREQ(l.table, r.table);
    }
}

// A loop body on both fp32 halves of an fp16 vector: x loaded and widened,
// half(x, n) for each half (x its register, n "lo" or "hi"; it writes %y<n>),
// the two narrowed and stored.
std::string fp16_halves(const std::function<std::string(const std::string &, const std::string &)> &half)
{
    std::string body = "    vld.f16 %x, [s10]\n    vcvtl.f32 %lo, %x\n    vcvth.f32 %hi, %x\n";
    for (const char *h : {"lo", "hi"})
        body += half(std::string("%") + h, h);
    return body + "    vcvtn.f16 %y, %ylo, %yhi\n    vst.f16 %y, [s11]\n";
}

// A schedule keeps every limit and computes the written order's bits.
void expect_runs_as_written(const Assembled &searched, const Assembled &off, const npu_timing_config &t,
                            unsigned seed)
{
    EXPECT_GT(check_kernels(searched.p, t), 0u);
    std::mt19937 rng(seed);
    std::vector<uint8_t> in = random_bytes(rng, 32768);
    Outcome a = run(searched.p, &t, in), b = run(off.p, nullptr, in);
    EXPECT_TRUE(a.ub == b.ub) << "scheduled and written order differ";
    EXPECT_GT(check_passes(searched.p, a.events), 0u);
}

// A block on the long-latency core: searched (the in-process cache
// cleared first), then found again from the cache, and in written order.
struct LongLatencyBlock {
    const npu_timing_config t = long_latency_timing();
    const npu_asm_machine m = machine_of(t);
    Assembled searched, cached, off;
    explicit LongLatencyBlock(const std::string &src)
        : searched((npu_asm_cache_clear(), src), &m, true), cached(src, &m, true), off(src, &m, false)
    {
    }
};

TEST(Sched, MoreKernelCopiesFitWhereTheLeastRunOutOfRegisters)
{
    // tanh_fast on both fp32 halves of an fp16 vector (e^2x waits beside its
    // reciprocal) on the long-latency core, 1,024 trips expected. With the
    // kernel expanded only as far as its lifetimes need, every placement
    // below 78 cycles per 8 iterations (9.75 each) runs out of the 32
    // registers, at 77 the swing placement with at most 31 values live at
    // once: circular-arc colouring can need more registers than the most
    // live. Its kernel expanded twice as often (a circle twice as long)
    // colours them: 154 cycles per 16 iterations (9.625). Below that, the
    // relieved placement at 76 per 8 has at most 32 values live, which the
    // colouring fits only from a cut beyond the 8 where fewest are live; a
    // relieved placement may try 64: 76 per 8 (9.5). Below that, at 74 per
    // 8, the relieved swing placement has no more values live than
    // registers and still does not colour; relieved once more for 31
    // registers (its peaks lower, docs/scheduling.md), it colours with the
    // kernel copied four times: 296 cycles per 32 iterations (9.25). The
    // schedule keeps every limit, computes the written order's bits, and is
    // found again from the cache.
    const std::string body = fp16_halves([](const std::string &x, const std::string &n) {
        return "    vmini.f32 %m" + n + ", " + x + ", 20.0\n    vadd.f32 %s" + n + ", %m" + n + ", %m" + n + "\n" +
               "    vexp.f32 %e" + n + ", %s" + n + "\n    vaddi.f32 %d" + n + ", %e" + n + ", 1.0\n" +
               "    vrcp.f32 %r" + n + ", %d" + n + "\n    vfms.f32 %y" + n + ", %e" + n + ", %r" + n + ", %r" + n + "\n";
    });
    LongLatencyBlock k("    li s10, 0\n    li s11, 32768\n    li s9, 1024\n.pipeline s9, s8, 1024\n" + body +
                       "    addvl s10, s10, 1\n    addvl s11, s11, 1\n.endpipeline\n    halt\n");
    const npu_sched_loop &l = main_loop(k.searched);
    ASSERT_TRUE(l.scheduled);
    EXPECT_EQ(l.ii * 8, 74u * l.unroll) << l.ii << " cycles per " << l.unroll << " iterations";
    EXPECT_EQ(l.regs_v, 32u);
    EXPECT_EQ(words(k.cached), words(k.searched));
    expect_runs_as_written(k.searched, k.off, k.t, 11);
}

TEST(Sched, RegisterReliefFitsWhereEveryPlacementRunsOutOfRegisters)
{
    // softplus on both fp32 halves of an fp16 vector (exp, then ln and rcp
    // of 1 + e^x, six SFU instructions per vector) on the long-latency
    // core: the SFU allows 12 cycles per iteration, but the values in flight
    // do not fit 31 registers there. The five placements alone fit at 152
    // cycles per 8 iterations (19.00 each); the register relief (a local
    // search moving and exchanging instructions for fewer registers above
    // the pool, docs/scheduling.md) fits 146 (18.25). Its schedule keeps
    // every limit, computes the written order's bits, and is the same when
    // found again from the cache (its search is seeded by the attempt).
    const std::string body = fp16_halves([](const std::string &x, const std::string &n) {
        return "    vexp.f32 %t" + n + ", " + x + "\n    vaddi.f32 %u" + n + ", %t" + n + ", 1.0\n" +
               "    vsubi.f32 %m" + n + ", %u" + n + ", 1.0\n    vsub.f32 %c" + n + ", %t" + n + ", %m" + n + "\n" +
               "    vrcp.f32 %r" + n + ", %u" + n + "\n    vln.f32 %l" + n + ", %u" + n + "\n" +
               "    vfma.f32 %s" + n + ", %c" + n + ", %r" + n + ", %l" + n + "\n" +
               "    vcle.f32 %k" + n + ", " + x + ", v31\n    vsel.f32 %y" + n + ", %s" + n + ", " + x + ", %k" + n +
               "\n";
    });
    const std::string src = loop(body, 256);
    const npu_timing_config t = long_latency_timing();
    const npu_asm_machine m = machine_of(t);
    npu_asm_cache_clear();
    Assembled searched(src, &m, true), cached(src, &m, true), off(src, &m, false);
    const npu_sched_loop &l = main_loop(searched);
    ASSERT_TRUE(l.scheduled);
    EXPECT_EQ(l.mii_res, 12 * l.unroll);
    EXPECT_LT(double(l.ii) / l.unroll, 19.0) << "the placements alone reach 19 cycles per iteration";
    EXPECT_EQ(words(cached), words(searched));
    EXPECT_EQ(main_loop(cached).ii, l.ii);
    expect_runs_as_written(searched, off, t, 7);

    // Kept in a file, the relieved schedule carries every node's cycle and
    // a later process places it again (no search, so the file does not
    // grow): the same bits. A line
    // whose cycles are not this block's (a file edited by hand) sends the
    // block to the search, which finds the same schedule.
    char dir[] = "/tmp/npusim-relief-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string file = std::string(dir) + "/schedules";
    npu_asm_cache_clear();
    ASSERT_EQ(npu_asm_cache_set_file(file.c_str()), NPU_OK);
    { Assembled kept(src, &m, true); }
    std::string line;
    {
        std::ifstream f(file);
        std::getline(f, line);
    }
    std::istringstream fields(line);
    std::string word, version, K, II, way, cycles;
    fields >> word >> version >> K >> II >> way >> cycles;
    EXPECT_GE(std::stoi(way), 5) << line;
    // a cycle per node: 23 instructions of each iteration the search
    // placed (a power of two of them, the pass's copies aside) and the 2
    // pointer bumps
    const size_t nodes = size_t(std::count(cycles.begin(), cycles.end(), ',')) + 1, placed = (nodes - 2) / 23;
    EXPECT_EQ(nodes, 23 * placed + 2);
    EXPECT_TRUE(placed > 0 && l.unroll % placed == 0) << nodes << " cycles, " << l.unroll << " iterations per pass";
    std::string zeros = "0", late;
    for (size_t i = 1; i < nodes; i++)
        zeros += ",0";
    {
        // every instruction 1,000 IIs later, the bumps (last) where they
        // were: every row, dependence and lifetime kept, 1,000 empty stages
        std::istringstream list(cycles);
        std::string c;
        for (size_t i = 0; std::getline(list, c, ','); i++)
            late += (i ? "," : "") + std::to_string(std::stoul(c) + (i + 2 < nodes ? 1000ul * std::stoul(II) : 0));
    }
    // as kept; every node at cycle 0 (dependences broken); all late; too
    // few; not numbers
    for (const std::string &edit : {cycles, zeros, late, std::string("0,0"), std::string("x")}) {
        SCOPED_TRACE("cycles " + edit.substr(0, 40));
        std::string bad = line;
        bad.replace(bad.find(cycles), cycles.size(), edit);
        std::ofstream(file) << bad << "\n";
        npu_asm_cache_clear();
        ASSERT_EQ(npu_asm_cache_set_file(file.c_str()), NPU_OK);
        Assembled again(src, &m, true);
        EXPECT_EQ(words(again), words(searched));
        std::stringstream after;
        after << std::ifstream(file).rdbuf();
        // a search appends its line; a replay leaves the file as it was
        EXPECT_EQ(after.str() == bad + "\n", edit == cycles);
    }
    npu_asm_cache_set_file(nullptr);
    std::remove(file.c_str());
    rmdir(dir);
}

TEST(Sched, RegisterReliefStartsFromTheSwingPlacementToo)
{
    // gelu_erf's fp32 chain (lib/lin_erf.s, LIN_GELU_ERF_ACC: 34 vector
    // instructions, x read twice, three constants in v29..v31) on the
    // long-latency core, 3,136 trips expected (a tile of 100,352 bytes; the
    // run takes 1,000).
    // The slots allow 136 cycles per 8 iterations, the least lifetimes 141
    // over 29 registers; the placements fit at 167. Relieved from variants
    // 0 and 3, 164 to 166 stay more than two registers a row above the
    // pool (not searched); the swing placement is closest (two to six
    // registers above the pool, summed over the rows, at those IIs), and
    // relieved from it 164 fits. The schedule keeps every limit, computes
    // the written order's bits, and is found again from the cache.
    const std::string body =
        "    vld.f32 %x, [s10]\n    vabs.f32 %ab, %x\n    vmini.f32 %a, %ab, 14.5\n    vmuli.f32 %n, %a, -0.5\n"
        "    vcgti.f32 %ser, %n, -0.4375\n    vmul.f32 %h, %a, %n\n    vfms.f32 %l, %a, %n, %h\n"
        "    vexp.f32 %E, %h\n    vrsubi.f32 %d, %n, 1.0\n    vrcp.f32 %t, %d\n    vrsubi.f32 %omt, %t, 1.0\n"
        "    vfma.f32 %rr, %t, %n, %omt\n    vfmai.f32 %k, %t, v31, 0.5852155089378357\n"
        "    vfma.f32 %m, %k, %rr, %l\n    vfmai.f32 %H0, %t, v30, -1.1807849407196045\n"
        "    vfmai.f32 %H1, %H0, %t, 1.669677734375\n    vfmai.f32 %H2, %H1, %t, -0.8716920614242554\n"
        "    vfmai.f32 %H3, %H2, %t, 0.01359582506120205\n    vfmai.f32 %H4, %H3, %t, -0.24544663727283478\n"
        "    vfmai.f32 %H5, %H4, %t, -0.0943082794547081\n    vfmai.f32 %H6, %H5, %t, -0.0003564812650438398\n"
        "    vfmai.f32 %H, %H6, %t, 0.3989522159099579\n    vmul.f32 %Hm, %H, %m\n    vld.f32 %xl, [s10]\n"
        "    vmini.f32 %mn, %xl, 0.0\n    vsub.f32 %mx, %xl, %mn\n    vfnma.f32 %T1, %E, %Hm, %mx\n"
        "    vfnma.f32 %T, %E, %H, %T1\n    vmul.f32 %w, %xl, %xl\n"
        "    vfmai.f32 %R0, %w, v29, -0.0011674345005303621\n    vfmai.f32 %R1, %R0, %w, 0.009966415353119373\n"
        "    vfmai.f32 %R2, %R1, %w, -0.06648948043584824\n    vfmai.f32 %R, %R2, %w, 0.3989422619342804\n"
        "    vfmai.f32 %B, %xl, %R, 0.5\n    vmul.f32 %s, %xl, %B\n    vsel.f32 %y, %s, %T, %ser\n"
        "    vst.f32 %y, [s11]\n";
    LongLatencyBlock k("    li s10, 0\n    li s11, 32768\n    li s9, 1000\n.pipeline s9, s8, 3136\n" + body +
                       "    addvl s10, s10, 1\n    addvl s11, s11, 1\n.endpipeline\n    halt\n");
    const npu_sched_loop &l = main_loop(k.searched);
    ASSERT_TRUE(l.scheduled);
    EXPECT_EQ(l.regs_v, 29u);
    EXPECT_EQ(l.mii_res * 8, 136u * l.unroll);
    EXPECT_EQ(l.ii * 8, 164u * l.unroll) << l.ii << " cycles per " << l.unroll << " iterations";
    EXPECT_EQ(words(k.cached), words(k.searched));
    expect_runs_as_written(k.searched, k.off, k.t, 13);
}

}  // namespace

// The schedule file (npu_asm_cache_set_file) is read by every process that
// names one, whatever another process or a person wrote into it: any bytes
// there give the program a search gives, bit for bit, and never a fault.
// The file here is the block's own line, mutated 300 ways (bytes flipped,
// line ends added or dropped, cut short, junk around it, lines far longer
// than any of this build), some of them with the line whole, which must be
// found (a hit, nothing appended).
TEST(Sched, AScheduleFileOfAnyBytesGivesTheSearchedProgram)
{
    const std::string src = loop("    vld.f32 %x, [s10]\n    vexp.f32 %e, %x\n    vmul.f32 %y, %e, %x\n"
                                 "    vst.f32 %y, [s11]\n",
                                 64);
    const npu_asm_machine m = machine_of(default_timing());
    char dir[] = "/tmp/npusim_schedfile_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string file = std::string(dir) + "/schedules";
    auto slurp = [&] {
        std::ifstream in(file, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    auto assemble = [&](const std::string &content) {
        std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
        npu_asm_cache_clear();
        npu_asm_cache_set_file(file.c_str());
        Assembled a(src, &m, true);
        EXPECT_EQ(a.rc, NPU_OK) << a.d.message;
        return words(a);
    };
    npu_asm_cache_set_file(nullptr);
    npu_asm_cache_clear();
    const std::vector<uint64_t> searched = [&] {
        Assembled a(src, &m, true);
        return words(a);
    }();
    ASSERT_FALSE(searched.empty());
    EXPECT_EQ(assemble(""), searched);
    const std::string line = slurp();  // the search's own line
    ASSERT_EQ(line.rfind("npusim-schedule ", 0), 0u) << line;
    ASSERT_EQ(std::count(line.begin(), line.end(), '\n'), 1);

    std::mt19937 rng(2026);
    auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n ? n - 1 : 0)(rng); };
    unsigned hits = 0;
    for (int i = 0; i < 300; i++) {
        std::string f = line;
        const bool whole = i % 4 == 0;  // the line kept as it is, somewhere in the file
        if (!whole)
            for (int e = 0, n = 1 + int(pick(4)); e < n; e++) {
                switch (pick(6)) {
                case 0: f[pick(f.size())] = char(rng()); break;             // a byte flipped
                case 1: f.insert(pick(f.size() + 1), 1, '\n'); break;       // a line end added
                case 2: f.erase(pick(f.size()), 1); break;                  // a byte dropped
                case 3: f.resize(pick(f.size() + 1)); break;                // cut short
                case 4: f.insert(pick(f.size() + 1), std::string(pick(64), char('0' + pick(10)))); break;
                default: f += f; break;                                     // twice
                }
                if (f.empty())
                    f = "\n";
            }
        std::string junk;
        for (size_t j = 0, n = pick(3); j < n; j++)
            junk += pick(8) == 0 ? std::string(300000 + pick(1000), 'f') + "\n"   // past any line of this build
                                 : line.substr(0, pick(line.size())) + "\n";
        const std::string content = pick(2) ? junk + f : f + junk;
        ASSERT_EQ(assemble(content), searched) << "case " << i;
        unsigned long h1 = 0, m1 = 0;
        npu_asm_cache_stats(&h1, &m1);  // this assembly's: assemble clears the counts
        // A file that does not start as a schedule file's lines do is not
        // one: never taken from, never appended to.
        const bool ours = content.rfind("npusim-schedule ", 0) == 0;
        if (whole && ours) {
            EXPECT_EQ(h1, 1u) << "case " << i << ": the whole line was not found";
            EXPECT_EQ(slurp(), content) << "case " << i << ": searched again";
        }
        if (!ours) {
            EXPECT_EQ(h1, 0u) << "case " << i;
            EXPECT_EQ(slurp(), content) << "case " << i << ": a file not of schedules was written";
        }
        hits += unsigned(h1);
    }
    EXPECT_GE(hits, 40u);

    // A line edited where it still parses, its (K, II) or way another that
    // schedules into another program, fails its sum and is searched again.
    const size_t fields = line.find(' ', std::string("npusim-schedule ").size()) + 1;  // K II way ...
    for (int field = 0; field < 3; field++) {
        std::string f = line;
        size_t at = fields;
        for (int k = 0; k < field; k++)
            at = f.find(' ', at) + 1;
        f[at] = f[at] == '1' ? '2' : '1';
        ASSERT_EQ(assemble(f), searched) << "field " << field << ": " << f.substr(0, 80);
        unsigned long h1 = 0, m1 = 0;
        npu_asm_cache_stats(&h1, &m1);
        EXPECT_EQ(h1, 0u) << "field " << field;
    }
    // A file past the 16 MiB at which a schedule file starts again is left
    // whole when it is not one (a mistyped NPUSIM_SCHEDULE_CACHE), and
    // emptied when it is.
    const std::string big(17 << 20, 'x');
    ASSERT_EQ(assemble(big), searched);
    EXPECT_EQ(slurp().size(), big.size());
    ASSERT_EQ(assemble(line + std::string(17 << 20, '#') + "\n"), searched);
    EXPECT_EQ(slurp(), line);  // emptied, then the search's line
    // A FIFO is not opened to wait on, for reading or appending.
    std::remove(file.c_str());
    ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
    npu_asm_cache_clear();
    npu_asm_cache_set_file(file.c_str());
    {
        Assembled a(src, &m, true);
        EXPECT_EQ(words(a), searched);
    }
    npu_asm_cache_set_file(nullptr);
    npu_asm_cache_clear();
    std::remove(file.c_str());
    rmdir(dir);
}
