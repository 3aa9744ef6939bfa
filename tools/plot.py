#!/usr/bin/python3
"""Plots a merged sweep table (`npusim merge DIR -o results.csv`).

  tools/plot.py results.csv --x param.core.vlen --metric cycles_per_element -o vlen.png
  tools/plot.py results.csv --x param.core.vlen --y param.units.sfu.latency --metric bound.efficiency -o heat.svg

One swept parameter draws lines, one per kernel (and dtype when there are
several); two draw one heatmap per kernel. Runs with Debian's matplotlib
(/usr/bin/python3, package python3-matplotlib)."""
import argparse
import csv
import math
import os
import sys
import tempfile
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(text):
    try:
        return float(text)
    except ValueError:
        return text


def series_key(row, dtypes):
    return row.get("kernel", "?") + (" " + row.get("dtype", "") if len(dtypes) > 1 else "")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--x", required=True, help="column on the x axis (a swept parameter, e.g. param.core.vlen)")
    ap.add_argument("--y", help="second swept parameter: draw heatmaps instead of lines")
    ap.add_argument("--metric", required=True, help="column to plot, e.g. cycles_per_element or l2.hit_rate")
    ap.add_argument("--logx", action="store_true", help="log2 x axis")
    ap.add_argument("--title", default="")
    ap.add_argument("-o", "--output", required=True, help="output .png or .svg")
    args = ap.parse_args(argv)

    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("point.status", "ok") == "ok"]
    if not rows:
        sys.exit(f"{args.csv}: no finished points to plot")
    for col in [args.x, args.metric] + ([args.y] if args.y else []):
        if col not in rows[0]:
            sys.exit(f"{args.csv}: no column '{col}' (columns: {', '.join(sorted(rows[0])[:40])} ...)")
    dtypes = {r.get("dtype") for r in rows}

    if args.y is None:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        groups = defaultdict(list)
        for r in rows:
            groups[series_key(r, dtypes)].append((number(r[args.x]), number(r[args.metric])))
        for name, pts in sorted(groups.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        if args.logx:
            ax.set_xscale("log", base=2)
        ax.set_xlabel(args.x.replace("param.", ""))
        ax.set_ylabel(args.metric)
        ax.grid(True, alpha=0.3)
        ax.legend()
    else:
        kernels = sorted({series_key(r, dtypes) for r in rows})
        cols = min(3, len(kernels))
        nrows = math.ceil(len(kernels) / cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(4.5 * cols, 3.8 * nrows), squeeze=False)
        for i, k in enumerate(kernels):
            ax = axes[i // cols][i % cols]
            sub = [r for r in rows if series_key(r, dtypes) == k]
            xs = sorted({number(r[args.x]) for r in sub}, key=lambda v: (isinstance(v, str), v))
            ys = sorted({number(r[args.y]) for r in sub}, key=lambda v: (isinstance(v, str), v))
            grid = [[float("nan")] * len(xs) for _ in ys]
            for r in sub:
                grid[ys.index(number(r[args.y]))][xs.index(number(r[args.x]))] = float(r[args.metric])
            im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(xs)), [str(int(v)) if isinstance(v, float) and v.is_integer() else str(v) for v in xs])
            ax.set_yticks(range(len(ys)), [str(int(v)) if isinstance(v, float) and v.is_integer() else str(v) for v in ys])
            ax.set_xlabel(args.x.replace("param.", ""))
            ax.set_ylabel(args.y.replace("param.", ""))
            ax.set_title(k)
            fig.colorbar(im, ax=ax, label=args.metric)
        for j in range(len(kernels), nrows * cols):
            axes[j // cols][j % cols].axis("off")
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    # Atomic: draw to a temporary file beside the target, then rename.
    out_dir = os.path.dirname(os.path.abspath(args.output))
    ext = os.path.splitext(args.output)[1] or ".png"
    fd, tmp = tempfile.mkstemp(suffix=ext, dir=out_dir)
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
