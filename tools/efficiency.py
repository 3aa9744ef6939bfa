#!/usr/bin/python3
"""Efficiency (bound.efficiency = bound / cycles) of every kernel in fp16 and
fp32 on one config: the row of docs/kernels.md's table "Efficiency on every
config" (median, how many at least 0.85 and 0.9, the lowest) and the runs
below a threshold.

  tools/efficiency.py build/npusim
  tools/efficiency.py build/npusim --config configs/edge.yaml
  tools/efficiency.py build/npusim --set units.sfu.latency=30 --set units.valu.latency=6

Arguments after the executable other than --shape, --below and -j go to
`npusim run` unchanged."""
import argparse
import concurrent.futures
import json
import os
import signal
import statistics
import subprocess
import sys


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("npusim", help="the npusim executable, e.g. build/npusim")
    ap.add_argument("--shape", default="1,64,56,56")
    ap.add_argument("--below", type=float, default=0.9, help="list the runs below this efficiency")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="runs side by side")
    args, run_args = ap.parse_known_args(argv)
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    listing = subprocess.run([args.npusim, "kernels", "--json"], capture_output=True, text=True, env=env, check=True)
    # The activations (issue 13's runs); the cube's kernels (op matmul, conv2d) take their own shapes.
    kernels = [k["name"] for k in json.loads(listing.stdout) if k["op"] == "eltwise"]

    def run(kd):
        kernel, dtype = kd
        r = subprocess.run([args.npusim, "run", kernel, "--dtype", dtype, "--shape", args.shape, "--json", "-"] +
                           run_args, capture_output=True, text=True, env=env)
        if r.returncode not in (0, 1):  # 1: an accuracy check failed, the run still has its figures
            sys.exit(f"{kernel} {dtype}: {r.stderr.strip()}")
        j = json.loads(r.stdout)
        return kernel, dtype, j["bound"]["efficiency"], j["cycles"], j["passed"]

    with concurrent.futures.ThreadPoolExecutor(args.j) as ex:
        runs = list(ex.map(run, [(k, d) for k in kernels for d in ("fp16", "fp32")]))
    effs = [r[2] for r in runs]
    low = min(runs, key=lambda r: r[2])
    print(f"median {statistics.median(effs):.3f}, at least 0.85: {sum(e >= 0.85 for e in effs)} of {len(effs)}, "
          f"at least 0.9: {sum(e >= 0.9 for e in effs)}, lowest {low[0]} {low[1]} {low[2]:.3f}")
    for kernel, dtype, eff, cycles, passed in sorted(runs, key=lambda r: r[2]):
        if eff < args.below:
            print(f"  {kernel} {dtype}: {eff:.3f} ({cycles} cycles){'' if passed else ', accuracy FAILED'}")


if __name__ == "__main__":
    main(sys.argv[1:])
