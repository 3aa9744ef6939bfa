#!/usr/bin/python3
"""Draws `npusim compare --json` output as a stacked bar per kernel: where
every cycle went (issuing, or stalled by reason). Debian's matplotlib.

  tools/plot_stalls.py compare.json -o stalls.png    (- reads the JSON on stdin)

The output is .png or .svg, written whole or not at all, with the permissions
of npusim's other outputs (0666 less the umask). An error is one line on
stderr, `OUTPUT: what went wrong`, and exit status 1 (npusim compare --plot
passes it on)."""
import argparse
import json
import os
import sys
import tempfile

REASONS = ["raw", "waw", "unit_busy", "slot", "ub_bank", "dma_wait", "sync", "branch", "drain"]
FORMATS = (".png", ".svg")


def draw(data, output):
    try:
        import matplotlib
    except ImportError as e:
        raise RuntimeError(f"needs /usr/bin/python3 with python3-matplotlib ({e})") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    ext = os.path.splitext(output)[1].lower()
    fd, tmp = tempfile.mkstemp(suffix=ext, dir=os.path.dirname(os.path.abspath(output)))
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120)
        umask = os.umask(0)  # mkstemp made it 0600; npusim's outputs are 0666 less the umask
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    try:
        if os.path.splitext(args.output)[1].lower() not in FORMATS:
            raise ValueError("give a .png or .svg file (the extension names the format)")
        if args.json == "-":
            data = json.load(sys.stdin)
        else:
            with open(args.json) as f:
                data = json.load(f)
        draw(data, args.output)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:
        what = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        print(f"{args.output}: cannot draw the stall chart: {what}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
