// Work over indices in threads, for commands that run many simulations at
// once (compare, graph). A run touches only its own objects, so runs in
// threads equal runs alone (tests/embed_threads.c).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>
#if defined(__linux__)
#include <sched.h>
#endif

namespace npusim {

// The cores this process may run on: those of its CPU affinity (taskset, a
// Slurm job's cpuset), which std::thread::hardware_concurrency does not see.
inline unsigned usable_cores()
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return unsigned(CPU_COUNT(&set));
#endif
    return std::max(1u, std::thread::hardware_concurrency());
}

// Whether this thread is one of a parallel_for's: work inside it (a run's
// check inside compare's runs in threads) takes no more threads.
inline thread_local bool in_parallel_for = false;

// Calls work(i) for every i in [0, n), `jobs` at once (0: one per usable
// core; one inside another parallel_for; the calling thread is one of
// them), each thread taking the next index not yet taken. The first
// exception, in index order, is rethrown after all finish.
template <class Work>
void parallel_for(size_t n, unsigned jobs, Work work)
{
    std::vector<std::exception_ptr> errors(n);
    std::atomic<size_t> next{0};
    auto loop = [&] {
        const bool outer = in_parallel_for;
        in_parallel_for = true;
        for (size_t i; (i = next++) < n;) {
            try {
                work(i);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
        in_parallel_for = outer;
    };
    const unsigned want = in_parallel_for ? 1u : jobs ? jobs : usable_cores();
    const size_t threads = std::min<size_t>(want, n);
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; t++)
        pool.emplace_back(loop);
    loop();
    for (std::thread &t : pool)
        t.join();
    for (const std::exception_ptr &e : errors)
        if (e)
            std::rethrow_exception(e);
}

}  // namespace npusim
