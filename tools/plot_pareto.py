#!/usr/bin/python3
"""Accuracy against cost from a merged sweep (configs/sweeps/accuracy_cost.yaml):
one point per kernel and SFU setting, max ULP (log, against the kernel's own
binary64 reference) against cycles per element, and per function family
(gelu, sigmoid, tanh, mish) its Pareto front: the points no other point of
the family beats on both.

  build/npusim sweep configs/sweeps/accuracy_cost.yaml -o out/acc
  build/npusim merge out/acc -o out/acc.csv
  tools/plot_pareto.py out/acc.csv -o docs/figures/pareto_accuracy_cost.png

Prints the front as a Markdown table. Runs with Debian's matplotlib
(/usr/bin/python3, package python3-matplotlib)."""
import argparse
import csv
import math
import sys


def label(row: dict) -> str:
    mode = row.get("param.sfu.mode", "")
    if mode == "approx":
        return f"{row['kernel']} (SFU {row.get('param.sfu.bits', '?')} bits)"
    return f"{row['kernel']} (exact SFU)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("cycles_per_element") and r.get("accuracy.max_ulp")]
    if not rows:
        print(f"{args.csv}: no rows with cycles_per_element and accuracy.max_ulp", file=sys.stderr)
        return 2
    pts = []
    for r in rows:
        ulp = float(r["accuracy.max_ulp"]) if r["accuracy.max_ulp"] not in ("", "inf") else math.inf
        pts.append((float(r["cycles_per_element"]), max(ulp, 0.25), r))
    def family(kernel: str) -> str:
        return kernel.split("_")[0]

    fronts = {}
    for c, u, r in sorted(pts, key=lambda p: (p[0], p[1])):
        f = fronts.setdefault(family(r["kernel"]), [])
        if not f or u < f[-1][1]:
            f.append((c, u, r))
    fig, ax = plt.subplots(figsize=(8, 5))
    kernels = sorted({r["kernel"] for _, _, r in pts})
    cmap = plt.get_cmap("tab20")
    for i, k in enumerate(kernels):
        xs = [c for c, u, r in pts if r["kernel"] == k and math.isfinite(u)]
        ys = [u for c, u, r in pts if r["kernel"] == k and math.isfinite(u)]
        exact = [(c, u) for c, u, r in pts if r["kernel"] == k and r.get("param.sfu.mode") != "approx"]
        ax.scatter(xs, ys, s=18, color=cmap(i % 20), label=k)
        if exact:
            ax.scatter([exact[0][0]], [exact[0][1]], s=70, facecolors="none", edgecolors=cmap(i % 20))
    for fam, front in sorted(fronts.items()):
        ax.plot([c for c, _, _ in front], [u for _, u, _ in front], "-", lw=1, alpha=0.5, color="k")
    ax.set_yscale("log")
    ax.set_xlabel("cycles per element (fp32, default core)")
    ax.set_ylabel("max ULP against binary64 (0 drawn at 0.25)")
    ax.set_title("Accuracy against cost (lines: each family's Pareto front; circled: exact SFU)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print("| family | point on its front | cycles per element | max ULP |")
    print("|---|---|---|---|")
    for fam, front in sorted(fronts.items()):
        for c, u, r in front:
            print(f"| {fam} | {label(r)} | {c:.4f} | {float(r['accuracy.max_ulp']):.3g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
