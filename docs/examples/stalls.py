#!/usr/bin/python3
"""ReLU vs GELU (tanh) vs Mish from Python: where each kernel's cycles go,
on the default core and with a slow special-function unit (SFU latency 30,
vector ALU latency 6), as one figure of stacked bars.

  PYTHONPATH=build/python /usr/bin/python3 docs/examples/stalls.py -o stalls.png

Every run is in this process (npusim.compare); nothing is parsed from a
command's output."""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import npusim  # noqa: E402

KERNELS = ["relu", "gelu_tanh", "mish"]
CONFIGS = {"default": {}, "SFU latency 30": {"units.sfu.latency": 30, "units.valu.latency": 6}}
REASONS = ["raw", "waw", "unit_busy", "slot", "ub_bank", "dma_wait", "sync", "branch", "drain"]
COLORS = ["#dd8452", "#e6a57e", "#c44e52", "#8172b3", "#937860", "#55a868", "#da8bc3", "#8c8c8c", "#ccb974"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default="stalls.png")
    ap.add_argument("--dtype", default="fp16")
    ap.add_argument("--shape", default="1,64,56,56")
    args = ap.parse_args(argv)
    shape = tuple(int(d) for d in args.shape.split(","))

    fig, axes = plt.subplots(1, len(CONFIGS), figsize=(10, 4.5), sharey=True)
    print(f"{'config':16} {'kernel':10} {'cycles':>9} {'efficiency':>10}  binds")
    for ax, (title, overrides) in zip(axes, CONFIGS.items()):
        rows = npusim.compare(KERNELS, dtype=args.dtype, shape=shape, set=overrides)
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        results = [row["result"] for row in rows]
        for r in results:
            print(f"{title:16} {r.json['kernel']:10} {r.cycles:9d} {r.bound['efficiency']:10.3f}  "
                  f"{r.bound['binding_resource']}")
        issue = [r.cycles - sum(r.stalls.values()) for r in results]
        ax.bar(KERNELS, issue, label="issuing", color="#4c72b0")
        bottom = issue
        for reason, color in zip(REASONS, COLORS):
            vals = [r.stalls.get(reason, 0) for r in results]
            if any(vals):
                ax.bar(KERNELS, vals, bottom=bottom, label=reason, color=color)
                bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_title(f"{title} ({args.dtype}, {args.shape})", fontsize=10)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("cycles")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
