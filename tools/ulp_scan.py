#!/usr/bin/python3
"""Worst ULP error of an activation kernel over an input range, measured by
running the kernel (functional mode) on large --input arrays and reading
each run's max_ulp_beyond_abs (the worst error the manifest's abs tolerance
does not cover): the figure a kernel's @tolerance and @note should hold.

  tools/ulp_scan.py build/npusim mish_fast                  # the manifest's range
  tools/ulp_scan.py build/npusim silu_fast --range=-100,100 --window 40000
  tools/ulp_scan.py build/npusim leaky_relu --dtype fp16 --param alpha=0.7

fp32 runs three scans, each in arrays of 2^20 elements (1,16,256,256):
  strided  --samples inputs evenly spaced in value over the range and as
           many evenly spaced in the order of the floats (so the binades
           near 0 get their share);
  crossing every input where the output crosses a power of two (found from
           the strided outputs, then narrowed to one float by sampling
           each bracket again), and --window consecutive floats on each
           side of it: there the result's ULP doubles from one float to the
           next, so an error just below the power of two counts twice;
  tops     --top strided inputs whose output lies within 2^-5 below a power
           of two, each widened to 2 --top-window consecutive floats: a
           relative error counts up to twice as many ULPs at the top of a
           binade as at its bottom, so the worst cases lie there;
and prints the worst of the three with its input's bits.
fp16 runs every finite half in the range. Arguments after the options
(--set KEY=VALUE, --config FILE) go to `npusim run` unchanged. Exit status 1
if any input fails the kernel's check. docs/kernels.md ("How a bound is
derived") says why the worst cases lie next to powers of two."""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

CHUNK = 1 << 20  # elements per run: shape 1,16,256,256


def float_key(x):
    """float32 -> int64 that orders like the values (-0 and +0 adjacent)."""
    b = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFFFFFF) - 1, b)


def key_float(k):
    k = np.asarray(k, np.int64)
    b = np.where(k < 0, (-(k + 1)) | 0x80000000, k).astype(np.uint32)
    return b.view(np.float32)


class Runner:
    def __init__(self, args, run_args, tmp):
        self.args, self.run_args, self.tmp = args, run_args, tmp
        self.env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
        self.count = 0

    def run(self, x, name):
        """Runs the kernel on x (1-D float array); returns (y, the worst ULP error
        the abs tolerance does not cover, failures, its input or None)."""
        dt = np.float16 if self.args.dtype == "fp16" else np.float32
        n = len(x)
        pad = (-n) % (16 * 256)
        xs = np.concatenate([x.astype(dt), np.zeros(pad, dt)]).reshape(1, 16, 256, -1)
        xin, yout, jout = (os.path.join(self.tmp, f"{name}.{s}") for s in ("x.npy", "y.npy", "json"))
        np.save(xin, xs)
        cmd = [self.args.npusim, "run", self.args.kernel, "--dtype", self.args.dtype, "--input", f"x={xin}",
               "--output", f"y={yout}", "--json", jout, "--set", "sim.mode=functional"]
        for p in self.args.param:
            cmd += ["--param", p]
        r = subprocess.run(cmd + self.run_args, capture_output=True, text=True, env=self.env)
        if r.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)}: {r.stderr.strip()}")
        acc = json.load(open(jout))["accuracy"]
        worst = acc["worst"]["inputs"]["x"] if acc["worst"] else None
        y = np.load(yout).ravel()[:n].astype(np.float64)
        for f in (xin, yout, jout):
            os.remove(f)
        self.count += n
        # The figure is the worst error the abs tolerance does not cover (the
        # tolerance's claim); the report names the worst element of all, so
        # where that one is covered, run again on the outputs well above the
        # abs tolerance (whose errors it cannot cover) to name the input.
        ulp = acc["max_ulp_beyond_abs"]
        if ulp is not None and ulp != acc["max_ulp"] and acc["tolerance_abs"] and not self.args.dtype == "fp16":
            big = np.abs(y) > acc["tolerance_abs"] * 2.0 ** 26
            if big.any():
                _, again, _, worst = self.run(x[big], name + "b")
                self.count -= int(big.sum())
                worst = worst if again == ulp else None
            else:
                worst = None
        return y, ulp if ulp is not None else float("inf"), acc["failures"], worst


def run_all(runner, pool, x, tag):
    """x in chunks of CHUNK, side by side; returns (y, max_ulp, failures, worst x)."""
    parts = [x[i:i + CHUNK] for i in range(0, len(x), CHUNK)]
    res = list(pool.map(lambda a: runner.run(a[1], f"{tag}{a[0]}"), enumerate(parts)))
    y = np.concatenate([r[0] for r in res]) if res else np.zeros(0)
    best = max(res, key=lambda r: r[1], default=(None, 0.0, 0, None))
    return y, best[1], sum(r[2] for r in res), best[3]


def binade(y):
    """floor(log2 |y|) and the sign, as one code; 0, inf and NaN get codes of their own."""
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(np.abs(y)))
    e = np.where(np.isfinite(e), e, np.where(y == 0, 1000, 2000))
    return np.where(np.isnan(y), 3000, e * np.where(np.signbit(y), -1, 1) + np.where(np.signbit(y), -0.5, 0))


def scan_fp32(args, runner, pool):
    lo, hi = args.range
    klo, khi = int(float_key(np.float32(lo))), int(float_key(np.float32(hi)))
    by_value = np.linspace(lo, hi, args.samples).astype(np.float32)
    by_order = key_float(np.linspace(klo, khi, args.samples).round().astype(np.int64))
    x = np.unique(np.concatenate([by_value, by_order]))
    keys = float_key(x)
    order = np.argsort(keys)
    x, keys = x[order], keys[order]
    y, s_ulp, s_fail, s_worst = run_all(runner, pool, x, "strided")
    print(f"strided: {len(x):,} inputs in [{lo}, {hi}]: max {s_ulp:.4g} ULP at x = {fmt(s_worst)}, "
          f"{s_fail} over the tolerance", flush=True)
    # brackets: adjacent strided samples whose outputs lie in different binades
    code = binade(y)
    at = np.nonzero(code[1:] != code[:-1])[0]
    br_keys = np.concatenate([[keys[i], keys[i + 1]] for i in at]) if len(at) else np.zeros(0, np.int64)
    cross = narrow(runner, pool, br_keys)
    w = args.window
    dense = np.unique(np.concatenate([np.arange(c - w, c + w) for c in cross])) if len(cross) else np.zeros(0, np.int64)
    dense = dense[(dense >= klo) & (dense <= khi)]
    _, c_ulp, c_fail, c_worst = run_all(runner, pool, key_float(dense), "cross")
    print(f"crossing: {len(cross)} powers of two crossed, {len(dense):,} inputs ({w:,} floats each side): "
          f"max {c_ulp:.4g} ULP at x = {fmt(c_worst)}, {c_fail} over the tolerance", flush=True)
    # the top of each binade, where a relative error counts nearly twice what it
    # counts at the bottom: consecutive floats around strided inputs whose output
    # lies within 2^-5 below a power of two
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.abs(y) / np.exp2(np.ceil(np.log2(np.abs(y))))
    top = keys[np.isfinite(frac) & (frac > 1 - 2.0 ** -5)]
    if len(top) > args.top:
        top = np.random.default_rng(1).choice(top, args.top, replace=False)
    k = args.top_window
    near = np.unique((top[:, None] + np.arange(-k, k)[None, :]).ravel()) if len(top) else np.zeros(0, np.int64)
    near = near[(near >= klo) & (near <= khi)]
    _, t_ulp, t_fail, t_worst = run_all(runner, pool, key_float(near), "top")
    print(f"binade tops: {len(top):,} strided inputs within 2^-5 below a power of two, {len(near):,} inputs "
          f"({k} floats each side): max {t_ulp:.4g} ULP at x = {fmt(t_worst)}, {t_fail} over the tolerance",
          flush=True)
    worst = max((s_ulp, s_worst), (c_ulp, c_worst), (t_ulp, t_worst), key=lambda t: t[0])
    return worst, s_fail + c_fail + t_fail


def narrow(runner, pool, br_keys):
    """br_keys: pairs (lo, hi) of keys whose outputs are in different binades.
    Returns the key of the first float of each new binade, to one float."""
    pairs = br_keys.reshape(-1, 2) if len(br_keys) else np.zeros((0, 2), np.int64)
    found = []
    while len(pairs):
        wide = pairs[:, 1] - pairs[:, 0] > 1
        found += pairs[~wide, 1].tolist()
        pairs = pairs[wide]
        if not len(pairs):
            break
        per = max(3, min(1024, CHUNK // len(pairs)))
        grids = [np.unique(np.linspace(a, b, min(per, b - a + 1)).round().astype(np.int64)) for a, b in pairs]
        yf, _, _, _ = run_all(runner, pool, key_float(np.concatenate(grids)), "narrow")
        nxt, pos = [], 0
        for g in grids:
            code = binade(yf[pos:pos + len(g)])
            pos += len(g)
            for i in np.nonzero(code[1:] != code[:-1])[0]:
                nxt.append((g[i], g[i + 1]))
        pairs = np.array(nxt, np.int64).reshape(-1, 2)
    return np.unique(np.array(found, np.int64))


def scan_fp16(args, runner, pool):
    lo, hi = args.range
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    x = h[np.isfinite(h) & (h >= lo) & (h <= hi)].astype(np.float32)
    _, ulp, fail, worst = run_all(runner, pool, x, "all")
    print(f"every half: {len(x):,} inputs in [{lo}, {hi}]: max {ulp:.4g} ULP at x = {fmt(worst, 16)}, "
          f"{fail} over the tolerance", flush=True)
    return (ulp, worst), fail


def fmt(x, bits=32):
    if x is None:
        return "?"
    if bits == 16:
        return f"{x:.9g} (0x{int(np.float16(x).view(np.uint16)):04x})"
    return f"{x:.9g} (0x{int(np.float32(x).view(np.uint32)):08x})"


def manifest_range(kernel):
    """The first @input's range=LO,HI in kernels/KERNEL.s (the range seeded inputs are drawn from)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels", kernel + ".s")
    for line in open(path):
        m = re.match(r";\s*@input\s+\S+.*\brange=([^,\s]+),(\S+)", line)
        if m:
            return float(m.group(1)), float(m.group(2))
    sys.exit(f"{path}: no @input with a range: give --range LO,HI")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("npusim", help="the npusim executable, e.g. build/npusim")
    ap.add_argument("kernel")
    ap.add_argument("--dtype", default="fp32", choices=("fp16", "fp32"))
    ap.add_argument("--range", help="LO,HI (default: the manifest's input range)")
    ap.add_argument("--param", action="append", default=[], help="NAME=VALUE, passed to npusim run")
    ap.add_argument("--samples", type=int, default=1 << 21, help="strided inputs of each spacing (fp32)")
    ap.add_argument("--window", type=int, default=1 << 14, help="floats on each side of a crossing (fp32)")
    ap.add_argument("--top", type=int, default=1 << 16, help="strided inputs near a binade's top to widen (fp32)")
    ap.add_argument("--top-window", type=int, default=32, help="floats on each side of each of those (fp32)")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="runs side by side")
    args, run_args = ap.parse_known_args(argv)
    args.range = tuple(float(v) for v in args.range.split(",")) if args.range else manifest_range(args.kernel)
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        runner = Runner(args, run_args, tmp)
        (ulp, worst), fail = (scan_fp16 if args.dtype == "fp16" else scan_fp32)(args, runner, pool)
    print(f"{args.kernel} {args.dtype}: max {ulp:.4g} ULP at x = {fmt(worst, 16 if args.dtype == 'fp16' else 32)}, "
          f"{fail} over the tolerance, {runner.count:,} elements run")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
