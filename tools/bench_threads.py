#!/usr/bin/python3
"""Runs in threads, measured (docs/python.md, README "Compare kernels"):
the time of 8 runs (gelu_tanh, mish, silu, gelu_erf, twice; fp16
1x64x56x56) in one Python thread and in two, and npusim.compare of relu,
gelu_tanh, mish and silu with jobs=1 and jobs=2. The schedules are kept
first (a warm-up run of each), every figure is the best of 3, both sides
taken in turn, and each pair's results are checked equal. Run with
PYTHONPATH=build/python /usr/bin/python3 tools/bench_threads.py; the
ratios mean something only on a machine with at least two free cores."""
import time
from concurrent.futures import ThreadPoolExecutor

import npusim

SHAPE = (1, 64, 56, 56)


def best_of(n, fn):
    best, out = float("inf"), None
    for _ in range(n):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    runs = ["gelu_tanh", "mish", "silu", "gelu_erf"] * 2
    run = lambda k: npusim.run(k, dtype="fp16", shape=SHAPE).cycles
    for k in set(runs):
        run(k)

    def pool(jobs):
        with ThreadPoolExecutor(jobs) as p:
            return list(p.map(run, runs))

    one, two = float("inf"), float("inf")
    for _ in range(3):  # in turn, so both see the same machine
        t1, a = best_of(1, lambda: pool(1))
        t2, b = best_of(1, lambda: pool(2))
        assert a == b, "runs in threads differ from runs in one thread"
        one, two = min(one, t1), min(two, t2)
    print(f"8 runs, one thread:  {one:.3f} s")
    print(f"8 runs, two threads: {two:.3f} s  ({one / two:.2f}x)")

    kernels = ["relu", "gelu_tanh", "mish", "silu"]
    npusim.compare(kernels, shape=SHAPE, jobs=1)
    c1, c2 = float("inf"), float("inf")
    for _ in range(3):
        t1, a = best_of(1, lambda: npusim.compare(kernels, shape=SHAPE, jobs=1))
        t2, b = best_of(1, lambda: npusim.compare(kernels, shape=SHAPE, jobs=2))
        cyc = lambda rows: list(rows["cycles"]) if hasattr(rows, "columns") else [r["cycles"] for r in rows]
        assert cyc(a) == cyc(b), "compare in threads differs from compare in one thread"
        c1, c2 = min(c1, t1), min(c2, t2)
    print(f"compare {' '.join(kernels)}: jobs=1 {c1:.3f} s, jobs=2 {c2:.3f} s  ({c1 / c2:.2f}x)")


if __name__ == "__main__":
    main()
