#!/usr/bin/python3
"""Cycles of relu, gelu_tanh and mish against SFU latency, with the .pipeline
loops scheduled for each config and in written order (`--schedule off`):
writes docs/figures/sfu_latency_schedule.png and prints the Markdown table
docs/kernels.md shows.

Usage: tools/gen_sched_figure.py [build/npusim] [-o docs/figures/sfu_latency_schedule.png]
Runs with Debian's matplotlib (/usr/bin/python3, package python3-matplotlib)."""
import argparse
import json
import os
import subprocess
import sys

KERNELS = ["relu", "gelu_tanh", "mish"]
LATENCIES = [4, 8, 12, 16, 20, 24, 28, 32]
SHAPE = "1,64,56,56"


def run(exe: str, kernel: str, latency: int, schedule: str) -> dict:
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    out = subprocess.run([exe, "run", kernel, "--dtype", "fp16", "--shape", SHAPE, "--set",
                          f"units.sfu.latency={latency}", "--schedule", schedule, "--json", "-", "-q"],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exe", nargs="?", default="build/npusim")
    ap.add_argument("-o", "--output", default="docs/figures/sfu_latency_schedule.png")
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = {}
    for k in KERNELS:
        for lat in LATENCIES:
            for sch in ("on", "off"):
                j = run(args.exe, k, lat, sch)
                rows[(k, lat, sch)] = (j["cycles"], j["bound"]["bound_cycles"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, color in zip(KERNELS, ["tab:blue", "tab:orange", "tab:green"]):
        ax.plot(LATENCIES, [rows[(k, l, "on")][0] for l in LATENCIES], "-o", color=color, label=f"{k}, scheduled")
        ax.plot(LATENCIES, [rows[(k, l, "off")][0] for l in LATENCIES], "--x", color=color,
                label=f"{k}, written order")
        ax.plot(LATENCIES, [rows[(k, l, "on")][1] for l in LATENCIES], ":", color=color, alpha=0.6,
                label=f"{k}, bound")
    ax.set_xlabel("units.sfu.latency (cycles)")
    ax.set_ylabel("cycles, fp16 1x64x56x56")
    ax.set_yscale("log")
    ax.set_title("Scheduled for the config vs written order")
    ax.legend(fontsize=7, ncol=3)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print("| SFU latency | " + " | ".join(f"{k} scheduled | {k} written order | {k} bound" for k in KERNELS) + " |")
    print("|---" * (1 + 3 * len(KERNELS)) + "|")
    for lat in LATENCIES:
        cells = []
        for k in KERNELS:
            on, bound = rows[(k, lat, "on")]
            off, _ = rows[(k, lat, "off")]
            cells += [f"{on:,}", f"{off:,}", f"{bound:,.0f}"]
        print(f"| {lat} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
