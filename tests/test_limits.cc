// Up-front limits (tools/npusim/run_limits.h): memory and disk estimates, and
// the messages that refuse a run or a sweep before it starts.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <sys/resource.h>

#include "error.h"
#include "run_limits.h"
#include "npusim/errors.h"

using namespace npusim;

namespace {

npu_layout layout(uint64_t n, uint64_t c, uint64_t h, uint64_t w, unsigned esize)
{
    npu_layout l{};
    EXPECT_EQ(npu_layout_init(&l, n, c, h, w, esize), NPU_OK);
    return l;
}

}  // namespace

TEST(Limits, RunBytesCountTheProcessTensorsCopiesCoresAndL2)
{
    // fp32 1x8x2x2: C0 = 8, one C1 block: 128 GM bytes, and 32 logical
    // elements of 4 bytes in the NCHW copy.
    npu_layout l = layout(1, 8, 2, 2, 4);
    EXPECT_EQ(run_bytes_needed(l, RunFootprint{1, 0, 0, 0}), kProcessBytes + 128u + 32u * 4u);
    EXPECT_EQ(run_bytes_needed(l, RunFootprint{2, 3, 32768, 1000}),
              kProcessBytes + 2u * (128u + 128u) + 3u * (32768u + kCoreStateBytes) + 1000u * kL2BytesPerLine);
}

TEST(Limits, RunBytesTouchedAreTheRunsOwnAndItsTables)
{
    npu_layout l = layout(1, 8, 2, 2, 4);
    const RunFootprint run{2, 3, 32768, 1000};
    EXPECT_EQ(run_bytes_touched(l, run), run_bytes_needed(l, run) - kProcessBytes + kRunTableBytes);
    RunFootprint held = run;
    held.held = 5000;
    EXPECT_EQ(run_bytes_touched(l, held), run_bytes_needed(l, run) - kProcessBytes + kRunTableBytes);
    held.held = UINT64_MAX;  // more than the run: its tables alone
    EXPECT_EQ(run_bytes_touched(l, held), kRunTableBytes);
}

// prefault_heap maps a run's bytes before the run takes them from malloc:
// blocks allocated and written after it take a page fault for few of their
// pages (without it, every 4 KiB page of these 256 KiB blocks faults, each
// block a mapping of its own). The only test in this binary that calls it
// (it changes how malloc keeps memory).
TEST(Limits, PrefaultHeapMapsTheRunsBytesBeforeTheRunWritesThem)
{
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "glibc's malloc only (a sanitizer brings its own)";
#else
    {
        void *probe = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(probe, MAP_FAILED);
        const int rc = madvise(probe, 4096, MADV_POPULATE_WRITE);
        const int err = errno;
        munmap(probe, 4096);
        if (rc != 0 && err == EINVAL)
            GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
    }
    constexpr size_t kBlock = 256 << 10, kBlocks = 48;  // 12 MiB, 3,072 pages
    prefault_heap(16u << 20);
    struct rusage before{}, after{};
    ASSERT_EQ(getrusage(RUSAGE_SELF, &before), 0);
    std::vector<char *> blocks;
    for (size_t i = 0; i < kBlocks; i++) {
        blocks.push_back(static_cast<char *>(std::malloc(kBlock)));
        ASSERT_NE(blocks.back(), nullptr);
        std::memset(blocks.back(), int(i), kBlock);
    }
    ASSERT_EQ(getrusage(RUSAGE_SELF, &after), 0);
    const long faults = after.ru_minflt - before.ru_minflt;
    EXPECT_LT(faults, long(kBlock * kBlocks / 4096 / 16)) << faults << " page faults writing 3,072 pages";
    for (char *b : blocks)
        std::free(b);
#endif
}

TEST(Limits, RunBytesSaturateInsteadOfWrapping)
{
    npu_layout l{};
    l.n = l.c = l.h = l.w = 1ull << 20;
    l.c1 = 1ull << 16;
    l.c0 = 16;
    l.esize = 2;
    EXPECT_EQ(run_bytes_needed(l, RunFootprint{3, 1, 0, 0}), UINT64_MAX);
    EXPECT_EQ(run_bytes_needed(layout(1, 1, 1, 1, 2), RunFootprint{1, 1, 0, UINT64_MAX / 2}), UINT64_MAX);
}

TEST(Limits, HugeShapeIsRefusedWithAnEstimate)
{
    npu_layout l = layout(100000, 100000, 100, 100, 2);
    try {
        check_run_fits(l, RunFootprint{2, 1, 262144, 16384}, 16ull << 30);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        std::string m = e.what();
        EXPECT_NE(m.find("shape 100000,100000,100,100: the run needs about"), std::string::npos) << m;
        EXPECT_NE(m.find(" of memory (2 tensors of "), std::string::npos) << m;
        EXPECT_NE(m.find(" each with its NCHW copy, 1 core of 279 kB, the L2's tags 1.31 MB)"), std::string::npos) << m;
        EXPECT_NE(m.find("but only 17.2 GB are available"), std::string::npos) << m;
    }
}

// A graph step ran checked without the tensors the graph holds through it,
// so a step just under the limit could still end in std::bad_alloc.
TEST(Limits, WhatTheProcessHoldsAlreadyCountsInTheNeed)
{
    npu_layout l = layout(1, 8, 2, 2, 4);
    EXPECT_EQ(run_bytes_needed(l, RunFootprint{1, 0, 0, 0, 5000}), kProcessBytes + 128u + 32u * 4u + 5000u);
    // 1,512,512,512 fp16: 268 MB a tensor, 1.09 GB for the run alone.
    const npu_layout big = layout(1, 512, 512, 512, 2);
    const RunFootprint alone{2, 1, 262144, 16384};
    EXPECT_NO_THROW(check_run_fits(big, alone, 1500000ull << 10));
    RunFootprint held = alone;
    held.held = 536870912;  // two more such tensors
    try {
        check_run_fits(big, held, 1500000ull << 10);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "shape 1,512,512,512: the run needs about 1.62 GB of memory (2 tensors of 537 MB each with its NCHW "
                  "copy, 1 core of 279 kB, the L2's tags 1.31 MB, 537 MB held already) but only 1.54 GB are available");
    }
}

// Runs in threads share the host's memory (admit_run): `npusim compare relu
// relu6 --dtype fp32 --shape 4,64,224,224 -j 2` under `ulimit -v 450000`
// passed both checks at once and ran out of memory, where -j 1 ran both.
// Here the host has 1 GB (a fake availability, so the test does not depend
// on the machine's load), and each run needs 600 MB.
uint64_t one_gigabyte(uint64_t held)
{
    return 1000000000 + held;
}

// While this thread holds `first`, `admit` runs in another; 200 ms later
// `first` is released. The order in which the release (0) and the end of
// `admit` (1) came.
std::pair<int, int> release_beside(MemoryGrant first, const std::function<void()> &admit)
{
    std::atomic<int> order{0};
    int released = -1, admitted = -1;
    std::thread other([&] {
        admit();
        admitted = order++;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    released = order++;
    first = MemoryGrant();
    other.join();
    return {released, admitted};
}

TEST(Limits, ARunBesideOthersWaitsForRoomAndIsRefusedOnlyAlone)
{
    const npu_layout l = layout(1, 8, 2, 2, 4);
    RunFootprint big{};
    big.matrix_bytes = 600000000 - kProcessBytes;
    {
        MemoryGrant first = admit_run(l, big, one_gigabyte);
        EXPECT_TRUE(memory_granted_here());
        // A thread holding a grant is covered: its inner runs do not wait.
        { const MemoryGrant inner = admit_run(l, big, one_gigabyte); }
        const auto [released, admitted] = release_beside(std::move(first), [&] {
            EXPECT_FALSE(memory_granted_here());
            const MemoryGrant second = admit_run(l, big, one_gigabyte);  // 1.2 GB together: waits
        });
        EXPECT_EQ(released, 0);
        EXPECT_EQ(admitted, 1);
    }
    EXPECT_FALSE(memory_granted_here());

    // A run that does not fit even alone waits for the others too, then is
    // refused with the message it gets alone: whether it fits does not
    // depend on what ran beside it.
    RunFootprint small{};
    small.matrix_bytes = 100000000 - kProcessBytes;
    RunFootprint huge{};
    huge.matrix_bytes = 2000000000 - kProcessBytes;
    std::string refused;
    const auto [released, admitted] = release_beside(admit_run(l, small, one_gigabyte), [&] {
        try {
            const MemoryGrant g = admit_run(l, huge, one_gigabyte);
        } catch (const Error &e) {
            refused = e.what();
        }
    });
    EXPECT_EQ(released, 0);
    EXPECT_EQ(admitted, 1);
    EXPECT_EQ(refused, "shape 1,8,2,2: the run needs about 2.00 GB of memory (the matrices 1.99 GB with their copies "
                       "for the check, 0 cores of 16.4 kB, the L2's tags 0 bytes) but only 1.00 GB are available");
    // Two that fit together both run at once.
    RunFootprint half{};
    half.matrix_bytes = 400000000 - kProcessBytes;
    const MemoryGrant a = admit_run(l, half, one_gigabyte);
    std::thread other([&] { const MemoryGrant b = admit_run(l, half, one_gigabyte); });
    other.join();
}

// The room runs side by side share (npusim sweep's point processes keep one
// of their own): what was available when the first started, less what the
// runs reserved, capped by what is available now plus what they reserved.
TEST(Limits, TheRoomIsTheBaseLessWhatRunsReserved)
{
    MemoryRoom room;
    EXPECT_TRUE(room.empty());
    EXPECT_TRUE(room.fits(1000, 1000));  // alone: what is available
    EXPECT_FALSE(room.fits(1001, 1000));
    room.take(600, 1000);                // the base is 1000
    EXPECT_FALSE(room.empty());
    EXPECT_TRUE(room.fits(400, 1000));   // nothing allocated yet: 1000 - 600
    EXPECT_FALSE(room.fits(401, 1000));
    EXPECT_TRUE(room.fits(400, 400));    // all 600 allocated: the same room
    EXPECT_TRUE(room.fits(200, 200));    // and 200 taken from outside: 200 left
    EXPECT_FALSE(room.fits(201, 200));
    EXPECT_FALSE(room.fits(1, 0));       // 400 taken from outside
    room.take(400, 0);                   // the base stays while runs hold it
    EXPECT_FALSE(room.fits(1, 1000));
    room.give(600);
    EXPECT_TRUE(room.fits(600, 1000));
    room.give(400);
    EXPECT_TRUE(room.empty());
    EXPECT_TRUE(room.fits(5000, 5000));  // a new base with the next run
}

TEST(Limits, SmallShapeFitsTheRealMachine)
{
    EXPECT_NO_THROW(check_run_fits(layout(1, 64, 56, 56, 2), RunFootprint{2, 2, 262144, 16384}));
    EXPECT_GT(available_memory_bytes(), 1u << 20);
}

TEST(Limits, HumanBytesUseThreeDigits)
{
    EXPECT_EQ(human_bytes(999), "999 bytes");
    EXPECT_EQ(human_bytes(1000), "1.00 kB");
    EXPECT_EQ(human_bytes(12345678), "12.3 MB");
    EXPECT_EQ(human_bytes(17179869184ull), "17.2 GB");
    EXPECT_EQ(human_bytes(UINT64_MAX), "18.4 EB");
}

TEST(Limits, SweepThatDoesNotFitOnDiskIsRefused)
{
    EXPECT_NO_THROW(check_sweep_fits("out", 10, 1000, 10000));
    try {
        check_sweep_fits("out", 1000, 50000, 1000000);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_STREQ(e.what(), "out: the sweep needs about 50.0 MB of disk (1000 points of about 50.0 kB) but only "
                               "1.00 MB are free");
    }
    EXPECT_GT(available_disk_bytes(::testing::TempDir() + "/no/such/dir"), 0u);
}
