#!/usr/bin/python3
"""Draws `npusim compare --json` output as a stacked bar per kernel: where
every cycle went (issuing, or stalled by reason). Debian's matplotlib.

  tools/plot_stalls.py compare.json -o stalls.png"""
import argparse
import json
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REASONS = ["raw", "waw", "unit_busy", "slot", "ub_bank", "dma_wait", "sync", "branch", "drain"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    names = [f"{d['kernel']} {d['dtype']}" for d in data]
    issue = [d["cycles_total"] - sum(d["stalls"].get(r, 0) for r in REASONS) for d in data]
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(data) + 2), 4.8))
    bottom = [0.0] * len(data)
    ax.bar(names, issue, bottom=bottom, label="issue", color="#4c72b0")
    bottom = [b + i for b, i in zip(bottom, issue)]
    colors = ["#dd8452", "#e6a57e", "#c44e52", "#8172b3", "#937860", "#55a868", "#da8bc3", "#8c8c8c", "#ccb974"]
    for reason, color in zip(REASONS, colors):
        vals = [d["stalls"].get(reason, 0) for d in data]
        if any(vals):
            ax.bar(names, vals, bottom=bottom, label=reason, color=color)
            bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylabel("cycles")
    ax.set_title("Where the cycles go: issue cycles and stalls by reason")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    ext = os.path.splitext(args.output)[1] or ".png"
    fd, tmp = tempfile.mkstemp(suffix=ext, dir=os.path.dirname(os.path.abspath(args.output)))
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120)
        os.replace(tmp, args.output)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
