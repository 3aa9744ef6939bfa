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
    npusim.sweep("configs/sweeps/sfu.yaml")
    npusim.cache("trace.din", set={"l2.size_bytes": 65536})  # a din trace through the L2

A run is the same as `npusim run` with the same arguments: `Result.json` is
its `--json` report (the C engine runs it here; the CLI's SystemC engine
gives the same figures). compare() and sweep() return rows: a pandas
DataFrame where pandas is installed, else a list of dicts. Bad input raises
npusim.Error (a ValueError) with the CLI's one-line message; an argument of
the wrong type (a list for a dict, a str for a number) raises TypeError.
"""
import json as _json
import numbers as _numbers
import operator as _operator
import os as _os
from collections.abc import Mapping as _Mapping

import numpy as _np

from . import _npusim
from ._npusim import Error

__all__ = ["Error", "Result", "cache", "compare", "config_docs", "default_config", "graph", "kernels", "run", "sweep"]

class Result:
    """One run. Attributes: cycles, passed, stalls (reason -> cycles), l2
    (None without an L2), bound, accuracy, schedule (the .pipeline loops),
    outputs (tensor name -> NumPy array, NCHW) and json (the whole report,
    as `npusim run --json -` prints it). A functional run (sim.mode:
    functional) counts no cycles: its cycles and bound are None."""

    def __init__(self, report, outputs):
        self.json = report
        self.outputs = outputs

    cycles = property(lambda self: self.json.get("cycles"))
    passed = property(lambda self: self.json["passed"])
    stalls = property(lambda self: self.json.get("stalls", {}))
    l2 = property(lambda self: self.json.get("l2"))
    bound = property(lambda self: self.json.get("bound"))
    accuracy = property(lambda self: self.json["accuracy"])
    schedule = property(lambda self: self.json.get("schedule", []))

    def __repr__(self):
        j = self.json
        shape = "x".join(map(str, j.get("shape", [])))
        efficiency = (self.bound or {}).get("efficiency")
        if self.cycles is None:
            timing = "functional, no cycles"
        elif efficiency is None:
            timing = f"{self.cycles} cycles"
        else:
            timing = f"{self.cycles} cycles, efficiency {efficiency:.3f}"
        return (f"<npusim.Result {j.get('kernel')} {j.get('dtype')} {shape}: {timing}, "
                f"{'passed' if j.get('passed') else 'FAILED'}>")


def _text(what, value):
    """A name or path for the native half: a str without NUL characters (a C
    string would end at the first, silently)."""
    if isinstance(value, _os.PathLike):
        value = _os.fspath(value)
    if isinstance(value, bytes):
        value = _os.fsdecode(value)
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a str, got {type(value).__name__}")
    if "\0" in value:
        raise Error(f"{what}: {value!r} contains a NUL character")
    return value


def _names(what, value):
    """A list of names, where one str is a list of one (not of its characters)."""
    if isinstance(value, (str, bytes, _os.PathLike)):
        return [_text(what, value)]
    return [_text(what, v) for v in value]


def _whole(what, value):
    """A seed, limit or cap as the CLI reads its text: a whole number in 0 ..
    2^64 - 1 (10.9 and -1 are refused, as `--seed 10.9` and `--seed -1` are)."""
    if isinstance(value, (bool, _np.bool_)) or not isinstance(value, _numbers.Number):
        raise TypeError(f"{what}: expected an int, got {type(value).__name__}")
    try:
        text = str(_operator.index(value))
    except TypeError:
        text = str(value)  # 10.9, 10.0: not a whole number's text
    return _npusim.parse_whole(what, text)


def _mapping(what, value, form):
    if value is None:
        return {}
    if not isinstance(value, _Mapping):
        raise TypeError(f"{what}: expected a dict {form}, got {type(value).__name__}")
    return value


def _setting(value):
    """A --set value as the CLI reads it: booleans as yes and no, lists joined
    by commas, everything else as str() writes it."""
    if isinstance(value, (bool, _np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ",".join(_setting(v) for v in value)
    return _text("set", str(value))


def _yaml_value(value):
    """A config dict's value as the YAML loader reads what `set` takes:
    booleans as yes and no, NumPy scalars as Python's, lists and dicts
    element by element, numbers and str as they are, anything else as str()
    writes it."""
    if isinstance(value, _np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, _Mapping):
        return {str(k): _yaml_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_yaml_value(v) for v in value]
    if value is None or isinstance(value, (int, float, str)):
        return value
    return str(value)


def _spec_json(spec):
    """A sweep or graph spec dict as the JSON (YAML) text the loader reads.
    NumPy scalars and arrays are the Python ints, floats and bools they
    hold (np.int64(4) is 4, np.float32(2.5) is 2.5: json has no NumPy
    types), so each is taken or refused as that Python value is."""
    def plain(value):
        if isinstance(value, (_np.generic, _np.ndarray)):
            return value.tolist()
        if isinstance(value, _Mapping):
            return {k.item() if isinstance(k, _np.generic) else k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value
    return _json.dumps(plain(spec), indent=1)


def _config(config, set):
    """(path, YAML text, ["key=value", ...]) for a config given as a path, a
    dict (the YAML file's structure) or None, and the `set` overrides."""
    path, text = "", ""
    if isinstance(config, _Mapping):
        text = _json.dumps(_yaml_value(config), indent=1)  # JSON is YAML: the loader reads it as a config file
    elif isinstance(config, (str, bytes, _os.PathLike)):
        path = _text("config", config)
    elif config is not None:
        raise TypeError(f"config: expected a YAML path or a dict, got {type(config).__name__}")
    sets = []
    for key, value in _mapping("set", set, "{key: value}").items():
        sets.append(f"{_text('set', str(key))}={_setting(value)}")
    return path, text, sets


def _shape(shape):
    """The CLI's text of a shape (None: none given). Each dimension an int;
    anything else goes as str() writes it, for the library to refuse as
    `--shape 1,2.7` is refused."""
    if shape is None:
        return None
    if isinstance(shape, str):
        return _text("shape", shape)
    dims = []
    for d in shape:
        try:
            dims.append(str(_operator.index(d)) if not isinstance(d, (bool, _np.bool_)) else str(d))
        except TypeError:
            dims.append(str(d))
    return _text("shape", ",".join(dims))


def _input(array):
    a = _np.asarray(array)  # 0-D stays 0-D, for the library to refuse; the native half refuses other dtypes
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))  # the same values in this machine's byte order
    return (str(a.dtype), list(a.shape), a.tobytes(order="C"))


def _params(params):
    out = {}
    for name, value in _mapping("params", params, "{name: number}").items():
        name = _text("params", name)
        try:
            out[name] = float(value)
        except (TypeError, ValueError):
            raise Error(f"parameter {name}: '{value}' is not a number") from None
    return out


def run(kernel, dtype=None, shape=None, config=None, set=None, inputs=None, params=None, seed=1,
        schedule=True, max_cycles=0, max_instructions=None, tile_max=0, tiling="rule"):
    """Runs `kernel` (a name from kernels(), or a path to a .s file) and returns
    a Result.

    dtype: "fp16" or "fp32" (default: the first input array's, else fp32).
    shape: (N, C, H, W) of ints, or fewer dimensions read with leading 1s, or
    the CLI's text "N,C,H,W" (default: the first input array's, else
    1,16,8,8; given with inputs, every input must have it); (M, K, N) for
    matmul; x's (N, C, H, W) for conv2d, whose geometry (cout, kernel,
    stride, pad) is in params. config: a shipped config's name ("edge"), a
    YAML path (with its .yaml or a '/'), a dict in the YAML
    file's structure (its values as set takes them), or None for the
    defaults. set: {key: value} overrides, applied after config (`npusim
    config docs` lists the keys; True and False are yes and no). inputs:
    {name: array} (float16 or float32, 1-D to 4-D, NCHW); inputs not given
    are generated from seed. params: {name: number}, the kernel's
    parameters. seed, max_cycles, max_instructions and tile_max are whole
    numbers (an int or a NumPy integer). schedule: False runs .pipeline
    blocks in written order. max_cycles and max_instructions: per core
    limits (0: none; None: derived from the work).
    tile_max: cap the kernel's tiles at this many bytes (a multiple of 256, at
    least two vectors for a kernel with a per-channel input, one otherwise); 0 lets
    npusim choose for the config and shape (Result.json["tiling"] says how):
    tiling="rule" from the schedule and the config, checked by simulation
    where the rule is least sure (several cores: against 16, 8, 4 and 2 KiB;
    one core, where it takes the L2 MSHRs' reach: against the tiles without
    it), "measure" by simulating
    the rule's pick and 16, 8, 4 and 2 KiB and keeping the fastest (with
    tile_max 0 only: a cap and measuring together raise npusim.Error).
    """
    kernel = _text("kernel", kernel)
    dtype = None if dtype is None else _text("dtype", dtype)
    tiling = _text("tiling", tiling)
    if not isinstance(schedule, (bool, _np.bool_)):
        raise TypeError(f"schedule: expected True or False, got {type(schedule).__name__}")
    path, text, sets = _config(config, set)
    arrays = {_text("inputs", name): _input(a)
              for name, a in _mapping("inputs", inputs, "{name: array}").items()}
    return _run(kernel, dtype, _shape(shape), path, text, sets, arrays, _params(params), _whole("seed", seed),
                bool(schedule), _whole("max_cycles", max_cycles),
                None if max_instructions is None else _whole("max_instructions", max_instructions),
                _whole("tile_max", tile_max), tiling)


def _run(kernel, dtype, shape, path, text, sets, arrays, params, seed, schedule, max_cycles, max_instructions,
         tile_max=0, tiling="rule"):
    report, outputs = _npusim.run(kernel, dtype, shape, path, text, sets, arrays, params, seed, schedule,
                                  max_cycles, max_instructions, tile_max, tiling)
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
    """fn over items, `jobs` at once in threads (None: one per core this
    process may run on, its CPU affinity's, as the library counts them),
    results in order; the first exception, in order, is raised. Runs release
    the GIL, so they proceed at once."""
    items = list(items)
    jobs = None if jobs is None else _whole("jobs", jobs)
    cores = len(_os.sched_getaffinity(0)) if hasattr(_os, "sched_getaffinity") else _os.cpu_count()
    jobs = min(jobs or cores or 1, max(len(items), 1))
    if jobs <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(fn, items))


def compare(kernels, dtype=None, shape=None, jobs=None, **kwargs):
    """Runs each kernel (a list of names or paths; one str is one kernel) on
    the same inputs and config (the other arguments are run()'s; without
    inputs, dtype and shape default as `npusim compare`'s do, to fp16 and
    1x64x56x56; with inputs, as run()'s, to the arrays') and returns one
    row per kernel: the figures of `npusim compare --json` (cycles, stall
    cycles by reason as stalls.REASON, L2 hit rate, efficiency, what binds),
    "passed", and the run's Result as "result". A figure the run did not
    compute is None (NaN in a DataFrame): every timing figure of a
    functional run (sim.mode: functional), as its Result.cycles is None, and
    the L2 hit rate without an L2. jobs: kernels run at once, in threads
    (None: one per core; the rows are the same)."""
    kernels = _names("kernels", kernels)
    if not kwargs.get("inputs"):
        dtype = "fp16" if dtype is None else dtype
        shape = (1, 64, 56, 56) if shape is None else shape
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
    structure: see docs/sweeps.md; NumPy numbers in it are the Python
    numbers they hold) in this process and returns one row per
    point with the columns of `npusim merge`'s CSV: point.index, point.id,
    point.status ("ok", or "failed: why"), param.KEY for each swept key, and
    the run's report flattened (cycles, stalls.raw, l2.hit_rate, ...).
    jobs: points run at once, in threads (None: one per core; the rows are
    the same, in the points' order)."""
    if isinstance(spec, _Mapping):
        points, max_cycles, max_instructions, measure = _npusim.sweep_points("", _spec_json(spec), "sweep")
    else:
        points, max_cycles, max_instructions, measure = _npusim.sweep_points(_text("spec", spec), "", "")
    return _rows(_in_threads(lambda p: _sweep_row(p, max_cycles, max_instructions, measure), points, jobs))


def graph(spec, config=None, set=None, variants=None, jobs=None):
    """Runs a graph spec's variants (a YAML path, or a dict in its structure:
    see docs/fusion.md; NumPy numbers in it are the Python numbers they
    hold) in this process, as `npusim graph` does, and returns
    one row per variant: name, cycles, dram_bytes, samples_per_second,
    l2_hit_rate, cube_busy_cycles, vector_busy_cycles, dma_busy_cycles,
    overlap_cycles_at_least, passed, and steps (a list of dicts, one per
    kernel run). config: a shipped config's name, a YAML path or a dict (default: the spec's config);
    set: {key: value} overrides. variants: names to run (default: all; one
    str is one variant). jobs: variants run at once, in threads (None: one
    per core; the rows are the same)."""
    path, text, sets = _config(config, set)
    variants = [] if variants is None else _names("variants", variants)
    jobs = 0 if jobs is None else _whole("jobs", jobs)
    if isinstance(spec, _Mapping):
        doc = _npusim.graph("", _spec_json(spec), "graph", path, text, sets, variants, jobs)
    else:
        doc = _npusim.graph(_text("spec", spec), "", "", path, text, sets, variants, jobs)
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
                 0, "measure" if measure else "rule")
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
    and the report's `l2` and `dram` objects. config and set as for run(),
    but a replay reads the l2.* and dram.* keys only: set of another key,
    and memory.model: ideal, raise npusim.Error."""
    path, text, sets = _config(config, set)
    return _json.loads(_npusim.replay(_text("trace", trace), path, text, sets))
