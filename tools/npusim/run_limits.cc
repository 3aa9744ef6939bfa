// Up-front limits: estimates of a run's host memory and a sweep's disk use,
// checked before any allocation so a huge --shape fails with one clear line
// instead of an out-of-memory kill half-way.
#include "run_limits.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sstream>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "error.h"

namespace npusim {

namespace {

uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

uint64_t meminfo_available()
{
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib;
    std::string unit;
    while (in >> key >> kib) {
        std::getline(in, unit);
        if (key == "MemAvailable:")
            return sat_mul(kib, 1024);
    }
    return 0;
}

}  // namespace

namespace {

// One tensor: its GM image and its NCHW copy.
uint64_t tensor_bytes(const npu_layout &layout)
{
    const uint64_t logical = sat_mul(sat_mul(sat_mul(layout.n, layout.c), layout.h), layout.w);
    const uint64_t gm = sat_mul(sat_mul(sat_mul(sat_mul(sat_mul(layout.n, layout.c1), layout.h), layout.w),
                                        layout.c0),
                                layout.esize);
    return sat_add(gm, sat_mul(logical, layout.esize));
}

}  // namespace

uint64_t cube_matrix_bytes(uint64_t gm_a, uint64_t gm_b, uint64_t gm_c, uint64_t m, uint64_t k, uint64_t n,
                           unsigned out_esize, uint64_t bias_bytes)
{
    const uint64_t inputs = sat_add(sat_mul(m, k), sat_mul(k, n));  // elements of A and B
    uint64_t bytes = sat_add(sat_add(gm_a, gm_b), gm_c);
    bytes = sat_add(bytes, sat_mul(inputs, 2 + 8));                  // row-major fp16, binary64
    bytes = sat_add(bytes, sat_mul(sat_mul(m, n), out_esize + 16));  // C's copy, two binary64
    return sat_add(bytes, sat_mul(bias_bytes, 2));
}

uint64_t conv_matrix_bytes(uint64_t gm_x, uint64_t map_elements, uint64_t gm_w, uint64_t images, uint64_t m,
                           uint64_t k, uint64_t n, uint64_t gm_y, unsigned out_esize)
{
    uint64_t bytes = sat_add(sat_add(gm_x, sat_mul(map_elements, 2)), sat_add(gm_w, sat_mul(sat_mul(k, n), 2 + 8)));
    bytes = sat_add(bytes, sat_mul(sat_mul(sat_mul(images, m), k), 8));  // the check's im2col
    const uint64_t outputs = sat_mul(sat_mul(images, m), n);
    return sat_add(bytes, sat_add(gm_y, sat_mul(outputs, out_esize + 16)));
}

uint64_t run_bytes_needed(const npu_layout &layout, const RunFootprint &run)
{
    const uint64_t tensors = run.matrix_bytes ? run.matrix_bytes : sat_mul(tensor_bytes(layout), run.tensors);
    uint64_t need = sat_add(kProcessBytes, tensors);
    need = sat_add(need, sat_mul(sat_add(run.ub_bytes, kCoreStateBytes), run.cores));
    need = sat_add(need, run.held);
    return sat_add(need, sat_mul(run.l2_lines, kL2BytesPerLine));
}

uint64_t run_bytes_touched(const npu_layout &layout, const RunFootprint &run)
{
    const uint64_t need = run_bytes_needed(layout, run), own = sat_add(kProcessBytes, run.held);
    return sat_add(need > own ? need - own : 0, kRunTableBytes);
}

void prefault_heap(uint64_t bytes)
{
#if defined(__GLIBC__)
    constexpr uint64_t kMost = 256u << 20, kPage = 4096, kHuge = 2u << 20;
    // Blocks up to kMost come from the heap (not a mapping of their own,
    // faulted in again each time), and what is freed stays there.
    mallopt(M_MMAP_THRESHOLD, int(kMost + kHuge));
    mallopt(M_TRIM_THRESHOLD, int(2 * kMost));
    bytes = std::min(bytes, kMost);
    if (bytes < kHuge)
        return;
    char *block = static_cast<char *>(std::malloc(bytes));
    if (!block)
        return;
    const uintptr_t at = reinterpret_cast<uintptr_t>(block), end = (at + bytes) & ~(kPage - 1);
    const uintptr_t huge_at = (at + kHuge - 1) & ~(kHuge - 1), huge_end = end & ~(kHuge - 1);
    if (huge_end > huge_at)
        madvise(reinterpret_cast<void *>(huge_at), huge_end - huge_at, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page_at = (at + kPage - 1) & ~(kPage - 1);
    madvise(reinterpret_cast<void *>(page_at), end - page_at, MADV_POPULATE_WRITE);
#endif
    std::free(block);  // to the top of the heap, where the run's blocks are cut from
#else
    (void)bytes;
#endif
}

uint64_t host_memory_available()
{
    uint64_t avail = meminfo_available();
    if (!avail) {
        struct sysinfo si;
        if (sysinfo(&si) == 0)
            avail = sat_mul(sat_add(si.freeram, si.bufferram), si.mem_unit);
        else
            avail = UINT64_MAX;
    }
    return avail;
}

uint64_t available_memory_bytes(uint64_t held)
{
    uint64_t avail = sat_add(host_memory_available(), held);
    // A limit on the process's address space or data counts what it maps
    // already (the libraries, the heap so far: /proc/self/statm's size and
    // data), which left a run just under `ulimit -v` ending in bad_alloc.
    uint64_t size_pages = 0, data_pages = 0;
    {
        std::ifstream statm("/proc/self/statm");
        uint64_t resident = 0, shared = 0, text = 0, lib = 0;
        statm >> size_pages >> resident >> shared >> text >> lib >> data_pages;
    }
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    for (int which : {RLIMIT_AS, RLIMIT_DATA}) {
        struct rlimit rl;
        if (getrlimit(which, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
            continue;
        const uint64_t used = sat_mul(which == RLIMIT_AS ? size_pages : data_pages, page);
        const uint64_t left = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
        avail = std::min(avail, sat_add(left, held));
    }
    return avail;
}

std::string human_bytes(uint64_t bytes)
{
    static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
    if (bytes < 1000)
        return std::to_string(bytes) + " bytes";
    double v = double(bytes);
    int u = 0;
    while (v >= 1000 && u < 6) {
        v /= 1000;
        u++;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, units[u]);
    return buf;
}

void check_run_fits(const npu_layout &layout, const RunFootprint &run, uint64_t available)
{
    const uint64_t need = run_bytes_needed(layout, run);
    if (need <= available)
        return;
    std::ostringstream os;
    os << "shape ";
    if (!run.shape_text.empty())
        os << run.shape_text;
    else
        os << layout.n << ',' << layout.c << ',' << layout.h << ',' << layout.w;
    os << ": the run needs about " << (need == UINT64_MAX ? std::string("more than 18 EB") : human_bytes(need))
       << " of memory (";
    if (run.matrix_bytes)
        os << "the matrices " << human_bytes(run.matrix_bytes) << " with their copies for the check, ";
    else
        os << run.tensors << " tensor" << (run.tensors == 1 ? "" : "s") << " of " << human_bytes(tensor_bytes(layout))
           << " each with its NCHW copy, ";
    os << run.cores << " core"
       << (run.cores == 1 ? "" : "s") << " of " << human_bytes(sat_add(run.ub_bytes, kCoreStateBytes))
       << ", the L2's tags " << human_bytes(sat_mul(run.l2_lines, kL2BytesPerLine))
       << (run.held ? ", " + human_bytes(run.held) + " held already" : std::string()) << ") but only "
       << human_bytes(available) << " are available";
    throw Error(os.str());
}

void check_run_fits(const npu_layout &layout, const RunFootprint &run)
{
    check_run_fits(layout, run, available_memory_bytes(run.held));
}

bool MemoryRoom::fits(uint64_t bytes, uint64_t available) const
{
    if (!runs_)
        return bytes <= available;
    const uint64_t room = std::min(base_, sat_add(available, reserved_));
    return room >= reserved_ && bytes <= room - reserved_;
}

void MemoryRoom::take(uint64_t bytes, uint64_t available)
{
    if (!runs_)
        base_ = available;
    reserved_ = sat_add(reserved_, bytes);
    runs_++;
}

void MemoryRoom::give(uint64_t bytes)
{
    reserved_ -= std::min(reserved_, bytes);
    runs_--;
}

namespace {

// The grants of the process's runs (admit_run).
struct Ledger {
    std::mutex m;
    std::condition_variable freed;
    MemoryRoom room;
};

Ledger &ledger()
{
    static Ledger l;
    return l;
}

thread_local unsigned grants_here = 0;

}  // namespace

MemoryGrant::MemoryGrant(uint64_t bytes) : bytes_(bytes), held_(true)
{
    grants_here++;
}

MemoryGrant::MemoryGrant(MemoryGrant &&other) noexcept : bytes_(other.bytes_), held_(other.held_)
{
    other.held_ = false;
}

MemoryGrant &MemoryGrant::operator=(MemoryGrant &&other) noexcept
{
    if (this != &other) {
        release();
        bytes_ = other.bytes_;
        held_ = other.held_;
        other.held_ = false;
    }
    return *this;
}

MemoryGrant::~MemoryGrant()
{
    release();
}

void MemoryGrant::release()
{
    if (!held_)
        return;
    held_ = false;
    grants_here--;
    Ledger &l = ledger();
    {
        const std::lock_guard<std::mutex> lock(l.m);
        l.room.give(bytes_);
    }
    l.freed.notify_all();
}

bool memory_granted_here()
{
    return grants_here > 0;
}

MemoryGrant admit_run(const npu_layout &layout, const RunFootprint &run, uint64_t (*available)(uint64_t held))
{
    if (grants_here)
        return MemoryGrant();
    const uint64_t need = run_bytes_needed(layout, run);
    const uint64_t fresh = need == UINT64_MAX ? need : need - std::min(need, run.held);
    Ledger &l = ledger();
    std::unique_lock<std::mutex> lock(l.m);
    for (;;) {
        if (l.room.empty()) {
            check_run_fits(layout, run, available(run.held));
            break;
        }
        if (l.room.fits(fresh, available(0)))
            break;
        l.freed.wait(lock);
    }
    l.room.take(fresh, available(0));
    return MemoryGrant(fresh);
}

uint64_t available_disk_bytes(const std::string &dir)
{
    std::string d = dir.empty() ? "." : dir;
    for (;;) {
        struct statvfs st;
        if (statvfs(d.c_str(), &st) == 0)
            return sat_mul(st.f_bavail, st.f_frsize);
        if (d == "/")
            return UINT64_MAX;
        size_t slash = d.find_last_of('/');
        if (slash == std::string::npos)
            d = d == "." ? "" : ".";
        else
            d = slash == 0 ? "/" : d.substr(0, slash);
        if (d.empty())
            return UINT64_MAX;
    }
}

void check_sweep_fits(const std::string &dir, uint64_t points, uint64_t bytes_per_point, uint64_t available)
{
    const uint64_t need = sat_mul(points, bytes_per_point);
    if (need <= available)
        return;
    throw Error(dir + ": the sweep needs about " + human_bytes(need) + " of disk (" + std::to_string(points) +
                " points of about " + human_bytes(bytes_per_point) + ") but only " + human_bytes(available) +
                " are free");
}

void check_sweep_fits(const std::string &dir, uint64_t points, uint64_t bytes_per_point)
{
    check_sweep_fits(dir, points, bytes_per_point, available_disk_bytes(dir));
}

}  // namespace npusim
