"""npusim from Python: run activation kernels on a simulated NPU core, in
this process, and get cycles, stalls, L2 figures, the bound and accuracy
back as Python values and NumPy arrays.

    import npusim
    r = npusim.run("gelu_tanh", dtype="fp16", shape=(1, 64, 56, 56))
    r.cycles, r.stalls["raw"], r.bound["efficiency"], r.accuracy["max_ulp"]
    r.outputs["y"]                      # NumPy array, NCHW

    npusim.run("relu", inputs={"x": x})  # dtype and shape from the array
    npusim.run("mish", config="configs/edge.yaml", set={"units.sfu.latency": 30})
    npusim.run("mish", config={"units": {"sfu": {"latency": 30}}})

    npusim.compare(["relu", "gelu_tanh", "mish"], dtype="fp16", shape=(1, 64, 56, 56))
    npusim.sweep("configs/sweeps/sfu_latency.yaml")
    npusim.cache("trace.din", set={"l2.size_bytes": 65536})  # a din trace through the L2

A run is the same as `npusim run` with the same arguments: `Result.json` is
its `--json` report (the C engine runs it here; the CLI's SystemC engine
gives the same figures). compare() and sweep() return rows: a pandas
DataFrame where pandas is installed, else a list of dicts. Bad input raises
npusim.Error (a ValueError) with the CLI's one-line message.
"""
import json as _json
import os as _os

import numpy as _np

from . import _npusim
from ._npusim import Error

__all__ = ["Error", "Result", "cache", "compare", "config_docs", "default_config", "graph", "kernels", "run", "sweep"]

class Result:
    """One run. Attributes: cycles, passed, stalls (reason -> cycles), l2
    (None without an L2), bound, accuracy, schedule (the .pipeline loops),
    outputs (tensor name -> NumPy array, NCHW) and json (the whole report,
    as `npusim run --json -` prints it)."""

    def __init__(self, report, outputs):
        self.json = report
        self.outputs = outputs

    cycles = property(lambda self: self.json["cycles"])
    passed = property(lambda self: self.json["passed"])
    stalls = property(lambda self: self.json.get("stalls", {}))
    l2 = property(lambda self: self.json.get("l2"))
    bound = property(lambda self: self.json["bound"])
    accuracy = property(lambda self: self.json["accuracy"])
    schedule = property(lambda self: self.json.get("schedule", []))

    def __repr__(self):
        j = self.json
        return (f"<npusim.Result {j['kernel']} {j['dtype']} {'x'.join(map(str, j['shape']))}: "
                f"{j['cycles']} cycles, efficiency {j['bound']['efficiency']:.3f}, "
                f"{'passed' if j['passed'] else 'FAILED'}>")


def _setting(value):
    """A --set value as the CLI reads it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ",".join(_setting(v) for v in value)
    return str(value)


def _config(config, set):
    """(path, YAML text, ["key=value", ...]) for a config given as a path, a
    dict (the YAML file's structure) or None, and the `set` overrides."""
    path, text = "", ""
    if isinstance(config, dict):
        text = _json.dumps(config, indent=1)  # JSON is YAML: the loader reads it as a config file
    elif config is not None:
        path = _os.fspath(config)
    sets = []
    for key, value in (set or {}).items():
        sets.append(f"{key}={_setting(value)}")
    return path, text, sets


def _shape(shape):
    if shape is None:
        return ""
    if isinstance(shape, str):
        return shape
    return ",".join(str(int(d)) for d in shape)


def _input(name, array):
    a = _np.ascontiguousarray(array)  # the native half refuses a dtype a kernel does not run on
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))  # the same values in this machine's byte order
    return (str(a.dtype), list(a.shape), a.tobytes())


def run(kernel, dtype=None, shape=None, config=None, set=None, inputs=None, params=None, seed=1,
        schedule=True, max_cycles=0, max_instructions=None, tile_max=0, tiling="rule"):
    """Runs `kernel` (a name from kernels(), or a path to a .s file) and returns
    a Result.

    dtype: "fp16" or "fp32" (default: the first input array's, else fp32).
    shape: (N, C, H, W), or fewer dimensions read with leading 1s (default:
    the first input array's, else 1,16,8,8); (M, K, N) for matmul; x's (N, C, H, W) for conv2d,
    whose geometry (cout, kernel, stride, pad) is in params. config: a YAML path, a dict
    in the YAML file's structure, or None for the defaults. set: {key: value}
    overrides, applied after config (`npusim config docs` lists the keys).
    inputs: {name: array} (float16 or float32, NCHW); inputs not given are
    generated from seed. params: {name: number}, the kernel's parameters.
    schedule: False runs .pipeline blocks in written order. max_cycles and
    max_instructions: per core limits (0: none; None: derived from the work).
    tile_max: cap the kernel's tiles at this many bytes (a multiple of 256); 0 lets
    npusim choose for the config and shape (Result.json["tiling"] says how):
    tiling="rule" from the schedule and the config, "measure" by simulating
    the rule's pick and 16, 8, 4 and 2 KiB and keeping the fastest.
    """
    if tiling not in ("rule", "measure"):
        raise Error("tiling: %r is not rule or measure" % (tiling,))
    path, text, sets = _config(config, set)
    arrays = {name: _input(name, a) for name, a in (inputs or {}).items()}
    return _run(kernel, dtype or "", _shape(shape), path, text, sets, arrays,
                {k: float(v) for k, v in (params or {}).items()}, int(seed), bool(schedule), int(max_cycles),
                max_instructions, int(tile_max), tiling == "measure")


def _run(kernel, dtype, shape, path, text, sets, arrays, params, seed, schedule, max_cycles, max_instructions,
         tile_max=0, measure_tiles=False):
    report, outputs = _npusim.run(kernel, dtype, shape, path, text, sets, arrays, params, seed, schedule,
                                  max_cycles, max_instructions, tile_max, measure_tiles)
    out = {}
    for name, (code, dims, data) in outputs.items():
        out[name] = _np.frombuffer(data, dtype=code).reshape(dims).copy()
    return Result(_json.loads(report), out)


def _flatten(value, prefix, row):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else k, row)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}", row)
    else:
        row[prefix] = value


def _rows(rows):
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def _in_threads(fn, items, jobs):
    """fn over items, `jobs` at once in threads (None: one per core), results
    in order; the first exception, in order, is raised. Runs release the GIL,
    so they proceed at once."""
    items = list(items)
    jobs = min(jobs or _os.cpu_count() or 1, max(len(items), 1))
    if jobs <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(fn, items))


def compare(kernels, dtype="fp16", shape=(1, 64, 56, 56), jobs=None, **kwargs):
    """Runs each kernel on the same inputs and config (the other arguments are
    run()'s; dtype and shape default as `npusim compare`'s do) and returns one
    row per kernel: the figures of `npusim compare --json` (cycles, stall
    cycles by reason as stalls.REASON, L2 hit rate, efficiency, what binds),
    "passed", and the run's Result as "result". jobs: kernels run at once, in
    threads (None: one per core; the rows are the same)."""
    results = _in_threads(lambda k: run(k, dtype=dtype, shape=shape, **kwargs), kernels, jobs)
    rows = []
    for result, row in zip(results, _json.loads(_npusim.compare_rows([_json.dumps(r.json) for r in results]))):
        flat = {}
        _flatten(row, "", flat)
        flat["passed"] = result.passed
        flat["result"] = result
        rows.append(flat)
    return _rows(rows)


def sweep(spec, jobs=None):
    """Runs every point of a sweep spec (a YAML path, or a dict in its
    structure: see docs/sweeps.md) in this process and returns one row per
    point with the columns of `npusim merge`'s CSV: point.index, point.id,
    point.status ("ok", or "failed: why"), param.KEY for each swept key, and
    the run's report flattened (cycles, stalls.raw, l2.hit_rate, ...).
    jobs: points run at once, in threads (None: one per core; the rows are
    the same, in the points' order)."""
    if isinstance(spec, dict):
        points, max_cycles, max_instructions, measure = _npusim.sweep_points("", _json.dumps(spec, indent=1),
                                                                             "sweep")
    else:
        points, max_cycles, max_instructions, measure = _npusim.sweep_points(_os.fspath(spec), "", "")
    return _rows(_in_threads(lambda p: _sweep_row(p, max_cycles, max_instructions, measure), points, jobs))


def graph(spec, config=None, set=None, variants=None, jobs=None):
    """Runs a graph spec's variants (a YAML path, or a dict in its structure:
    see docs/fusion.md) in this process, as `npusim graph` does, and returns
    one row per variant: name, cycles, dram_bytes, samples_per_second,
    l2_hit_rate, cube_busy_cycles, vector_busy_cycles, dma_busy_cycles,
    overlap_cycles_at_least, passed, and steps (a list of dicts, one per
    kernel run). config: a YAML path or a dict (default: the spec's config);
    set: {key: value} overrides. variants: names to run (default: all).
    jobs: variants run at once, in threads (None: one per core; the rows are
    the same)."""
    path, text, sets = _config(config, set)
    if isinstance(spec, dict):
        doc = _npusim.graph("", _json.dumps(spec, indent=1), "graph", path, text, sets, list(variants or []),
                            jobs or 0)
    else:
        doc = _npusim.graph(_os.fspath(spec), "", "", path, text, sets, list(variants or []), jobs or 0)
    return _rows(_json.loads(doc)["variants"])


def _sweep_row(point, max_cycles, max_instructions, measure=False):
    """One point's row (sweep)."""
    index, pid, kernel, dtype, shape, overrides, config_yaml = point
    row = {"point.index": index, "point.id": pid}
    for key, value in overrides:
        row["param." + key] = value
    try:
        # The point's resolved config, as `npusim sweep` writes it to the point's config.yaml.
        r = _run(kernel, dtype, shape, "", config_yaml, [], {}, {}, 1, True, max_cycles or 0, max_instructions,
                 0, measure)
    except Error as e:
        row["point.status"] = f"failed: {e}"
        row["kernel"], row["dtype"] = kernel, dtype
        return row
    row["point.status"] = "ok" if r.passed else "failed: " + _why(r)
    report = dict(r.json)
    report.pop("sim", None)  # host timing: not part of the result
    report.pop("stall_pcs", None)
    report.pop("opcodes", None)
    if isinstance(report.get("config"), dict):
        report["config"].pop("source", None)
    _flatten(report, "", row)
    return row


def _why(result):
    j = result.json
    if j.get("traps"):
        return j["traps"][0].get("message", "trap")
    acc = j["accuracy"]
    return f"accuracy: {acc['failures']} elements outside the tolerance"


def kernels():
    """The names of the kernels `run` finds (as `npusim kernels` lists them)."""
    return _npusim.kernels()


def config_docs():
    """Every config key, its default, range and meaning (`npusim config docs`)."""
    return _npusim.config_docs()


def default_config():
    """The default config as YAML text (`npusim config show`)."""
    return _npusim.default_config_yaml()


def cache(trace, config=None, set=None):
    """Replays a Dinero IV din trace (a path: `label hex-address [size]` per
    line) through the config's L2 and DRAM, one access at a time, as `npusim
    cache` does, and returns its --json document as a dict: records, cycles,
    and the report's `l2` and `dram` objects. config and set as for run()."""
    path, text, sets = _config(config, set)
    return _json.loads(_npusim.replay(_os.fspath(trace), path, text, sets))
