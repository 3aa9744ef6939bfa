"""The Python module against the CLI: the same run gives the same report and
the same outputs, bad input the same one-line message, and a process runs
many kernels without growing. Run by `meson test` (suite python) with
/usr/bin/python3, PYTHONPATH=build/python, NPUSIM_EXE and NPUSIM_SOURCE_ROOT."""
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import npusim

EXE = os.environ["NPUSIM_EXE"]
ROOT = os.environ["NPUSIM_SOURCE_ROOT"]
ENV = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")


def cli(*args, check=True):
    r = subprocess.run([EXE, *args], capture_output=True, text=True, env=ENV)
    if check and r.returncode not in (0, 1):
        raise AssertionError(f"npusim {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r


def cli_json(*args):
    return json.loads(cli("run", *args, "--json", "-", "-q").stdout)


def comparable(report):
    """A report less what differs between two runs of one point: host timing."""
    j = dict(report)
    j.pop("sim")
    return j


class RunMatchesTheCli(unittest.TestCase):
    def check_same(self, cli_args, **kwargs):
        want = cli_json(*cli_args)
        got = npusim.run(**kwargs)
        self.assertEqual(comparable(got.json), comparable(want))
        self.assertEqual(got.cycles, want["cycles"])
        self.assertEqual(got.stalls, want["stalls"])
        self.assertEqual(got.bound, want["bound"])
        self.assertEqual(got.accuracy, want["accuracy"])
        self.assertEqual(got.l2, want.get("l2"))
        return got

    def test_default_config(self):
        r = self.check_same(["relu", "--dtype", "fp16", "--shape", "1,16,8,8"], kernel="relu", dtype="fp16",
                            shape=(1, 16, 8, 8))
        self.assertTrue(r.passed)
        self.assertEqual(r.outputs["y"].shape, (1, 16, 8, 8))
        self.assertEqual(r.outputs["y"].dtype, np.float16)

    def test_config_file_and_overrides_on_two_cores(self):
        edge = os.path.join(ROOT, "configs", "edge.yaml")
        self.check_same(["gelu_tanh", "--dtype", "fp32", "--shape", "1,32,9,7", "--config", edge, "--set",
                         "system.cores=2", "--set", "units.sfu.latency=30", "--seed", "5"],
                        kernel="gelu_tanh", dtype="fp32", shape=(1, 32, 9, 7), config=edge,
                        set={"system.cores": 2, "units.sfu.latency": 30}, seed=5)

    def test_a_shipped_config_by_name(self):
        edge = os.path.join(ROOT, "configs", "edge.yaml")
        by_name = npusim.run("relu", shape=(1, 16, 8, 8), config="edge").json
        by_path = npusim.run("relu", shape=(1, 16, 8, 8), config=edge).json
        by_name.pop("sim"), by_path.pop("sim")  # host time
        self.assertEqual(by_name, by_path)
        self.check_same(["relu", "--shape", "1,16,8,8", "--config", "edge"], kernel="relu", shape=(1, 16, 8, 8),
                        config="edge")
        with self.assertRaisesRegex(ValueError, r"^unknown config 'edgy' \(shipped: datacenter, default, edge, tiny"):
            npusim.run("relu", config="edgy")

    def test_parameters_and_schedule_off(self):
        self.check_same(["leaky_relu", "--shape", "1,16,4,4", "--param", "alpha=0.25", "--schedule", "off"],
                        kernel="leaky_relu", shape=(1, 16, 4, 4), params={"alpha": 0.25}, schedule=False)

    def test_the_tiles_picked_and_given(self):
        args = ["gelu_tanh", "--dtype", "fp16", "--shape", "1,64,56,56"]
        picked = self.check_same(args, kernel="gelu_tanh", dtype="fp16", shape=(1, 64, 56, 56))
        self.assertEqual(picked.json["tiling"]["reason"], "compute")
        self.assertEqual(picked.json["tiling"]["tile_max_bytes"], 401408 // 8)
        given = self.check_same(args + ["--tile-max", "16384"], kernel="gelu_tanh", dtype="fp16",
                                shape=(1, 64, 56, 56), tile_max=16384)
        self.assertEqual(given.json["tiling"]["reason"], "host")
        self.assertLess(picked.cycles, given.cycles)
        np.testing.assert_array_equal(picked.outputs["y"], given.outputs["y"])

    def test_measured_tiles(self):
        r = self.check_same(["relu", "--dtype", "fp16", "--shape", "1,64,56,56", "--set", "system.cores=4",
                             "--tiling", "measure"], kernel="relu", dtype="fp16", shape=(1, 64, 56, 56),
                            set={"system.cores": 4}, tiling="measure")
        t = r.json["tiling"]
        self.assertEqual(t["reason"], "measured")
        self.assertEqual(r.cycles, min(m["cycles"] for m in t["measured"]))
        with self.assertRaisesRegex(npusim.Error, r"^tiling: 'guess' is not rule or measure$"):
            npusim.run("relu", tiling="guess")

    def test_a_config_dict_is_the_yaml_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "c.yaml")
            with open(path, "w") as f:
                f.write("units:\n  sfu: {latency: 30}\nissue:\n  width: 2\n  slots: [any, any]\n")
            by_file = npusim.run("mish", config=path)
        by_dict = npusim.run("mish", config={"units": {"sfu": {"latency": 30}}, "issue": {"width": 2,
                                                                                      "slots": ["any", "any"]}})
        by_set = npusim.run("mish", set={"units.sfu.latency": 30, "issue.width": 2, "issue.slots": ["any", "any"]})
        def values(r):
            return {k: v for k, v in r.json["config"].items() if k != "source"}
        self.assertEqual(values(by_dict), values(by_file))
        self.assertEqual(values(by_set), values(by_file))
        self.assertEqual(by_dict.cycles, by_file.cycles)
        self.assertEqual(by_set.cycles, by_file.cycles)
        self.assertNotEqual(by_file.cycles, npusim.run("mish").cycles)


class Arrays(unittest.TestCase):
    def test_inputs_and_outputs_are_the_clis_npy_files(self):
        rng = np.random.default_rng(3)
        x = rng.uniform(-6, 6, size=(2, 20, 3, 5)).astype(np.float16)
        with tempfile.TemporaryDirectory() as d:
            xp, yp = os.path.join(d, "x.npy"), os.path.join(d, "y.npy")
            np.save(xp, x)
            want = cli_json("gelu_tanh", "--input", f"x={xp}", "--output", f"y={yp}")
            y_cli = np.load(yp)
        r = npusim.run("gelu_tanh", inputs={"x": x})
        self.assertEqual((r.json["dtype"], r.json["shape"]), ("fp16", [2, 20, 3, 5]))  # from the array
        self.assertEqual(r.cycles, want["cycles"])
        self.assertEqual(r.outputs["y"].tobytes(), y_cli.tobytes())
        self.assertTrue(r.passed)

    def test_a_lower_rank_array_has_leading_dimensions_of_one(self):
        x = np.array([[-1.0, 2.0], [3.0, -4.0]], dtype=np.float32)
        r = npusim.run("relu", inputs={"x": x})
        self.assertEqual(r.json["shape"], [1, 1, 2, 2])
        np.testing.assert_array_equal(r.outputs["y"].reshape(-1), np.maximum(x, 0).reshape(-1))

    def test_a_non_contiguous_array_is_read_in_its_logical_order(self):
        x = np.arange(-32, 32, dtype=np.float32).reshape(1, 16, 2, 2)[:, ::-1]
        r = npusim.run("relu", inputs={"x": x})
        np.testing.assert_array_equal(r.outputs["y"], np.maximum(x, 0))

    def test_two_input_kernel(self):
        x = np.linspace(-2, 2, 16 * 4, dtype=np.float32).reshape(1, 16, 2, 2)
        alpha = np.full(16, 0.5, dtype=np.float32)
        r = npusim.run("prelu", inputs={"x": x, "alpha": alpha})
        np.testing.assert_array_equal(r.outputs["y"], np.where(x > 0, x, 0.5 * x))

    def test_matmul_takes_two_matrices_and_gives_their_product(self):
        # Small integers: every product and sum is exact in fp32.
        a = (np.arange(12 * 20) % 5 - 2).astype(np.float16).reshape(12, 20)
        b = (np.arange(20 * 7) % 3 - 1).astype(np.float16).reshape(20, 7)
        r = npusim.run("matmul", inputs={"a": a, "b": b})
        self.assertTrue(r.json["passed"])
        np.testing.assert_array_equal(r.outputs["c"], a.astype(np.float32) @ b.astype(np.float32))
        g = npusim.run("matmul", dtype="fp16", shape=(40, 70, 20))
        self.assertEqual(g.outputs["c"].shape, (40, 20))
        self.assertEqual(g.cycles, cli_json("matmul", "--dtype", "fp16", "--shape", "40,70,20")["cycles"])

    def test_conv2d_relu_takes_a_map_and_weights_and_gives_the_relu_of_their_convolution(self):
        # Small integers, fp32 outputs: exact. 3 x 3, stride 2, pad 1, by
        # shifted slices of the padded map (NumPy has no convolution).
        x = (np.arange(2 * 5 * 9 * 8) % 7 - 3).astype(np.float16).reshape(2, 5, 9, 8)
        w = (np.arange(6 * 5 * 3 * 3) % 5 - 2).astype(np.float16).reshape(6, 5, 3, 3)
        r = npusim.run("conv2d_relu", dtype="fp32", inputs={"x": x, "w": w}, params={"stride": 2})
        self.assertTrue(r.json["passed"])
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        want = np.zeros((2, 6, 5, 4))
        for i in range(3):
            for j in range(3):
                patch = xp[:, :, i:i + 9:2, j:j + 8:2]
                want += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
        np.testing.assert_array_equal(r.outputs["y"], np.maximum(want, 0).astype(np.float32))
        self.assertEqual(r.json["conv2d"]["ho"], 5)
        self.assertEqual(r.cycles, npusim.run("conv2d_relu", dtype="fp32", inputs={"x": x, "w": w},
                                              params={"stride": 2}).cycles)


class BadInput(unittest.TestCase):
    """Every bad input raises npusim.Error (a ValueError) with the CLI's line."""

    def check(self, cli_args, **kwargs):
        r = cli("run", *cli_args, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        with self.assertRaises(ValueError) as e:
            npusim.run(**kwargs)
        self.assertIsInstance(e.exception, npusim.Error)
        self.assertEqual(str(e.exception) + "\n", r.stderr)

    def test_unknown_kernel(self):
        self.check(["no_such_kernel"], kernel="no_such_kernel")

    def test_a_tile_max_not_a_multiple_of_256(self):
        self.check(["relu", "--tile-max", "1000"], kernel="relu", tile_max=1000)

    def test_non_finite_parameters_and_a_measured_tile_max(self):
        # The library's words (the CLI refuses the text first, naming its flags).
        for v in (float("nan"), float("inf"), 1e39):
            with self.assertRaises(npusim.Error) as e:
                npusim.run("leaky_relu", dtype="fp32", shape=(1, 16, 8, 8), params={"alpha": v})
            self.assertRegex(str(e.exception), r"^parameter alpha: \S+ is not finite in binary32 ")
        with self.assertRaises(npusim.Error) as e:
            npusim.run("relu", dtype="fp16", shape=(1, 16, 8, 8), tile_max=1024, tiling="measure")
        self.assertEqual(str(e.exception),
                         "tile_max 1024 with measured tiling: give one (tile_max fixes the tiles, measuring picks them)")

    def test_unknown_key_and_value_out_of_range(self):
        self.check(["relu", "--set", "units.sfu.latenc=3"], kernel="relu", set={"units.sfu.latenc": 3})
        self.check(["relu", "--set", "units.sfu.latency=0"], kernel="relu", set={"units.sfu.latency": 0})

    def test_bad_shape_dtype_and_parameter(self):
        self.check(["relu", "--shape", "1,0,2"], kernel="relu", shape=(1, 0, 2))
        self.check(["relu", "--param", "beta=1"], kernel="relu", params={"beta": 1})
        self.check(["mish", "--dtype", "fp64"], kernel="mish", dtype="fp64")
        self.check(["mish", "--dtype", ""], kernel="mish", dtype="")
        self.check(["relu", "--tiling", "guess"], kernel="relu", tiling="guess")

    def test_a_shape_is_taken_as_written_or_refused_as_the_cli_refuses_its_text(self):
        # int(2.7) made 2; (), [] and "" ran the default 1,16,8,8.
        self.check(["relu", "--shape", "1,2.7,4,4"], kernel="relu", shape=(1, 2.7, 4, 4))
        self.check(["relu", "--shape", "1,2.0,4,4"], kernel="relu", shape=(1, 2.0, 4, 4))
        self.check(["relu", "--shape", "1,-2,4,4"], kernel="relu", shape=(1, -2, 4, 4))
        for empty in [(), [], ""]:
            self.check(["relu", "--shape", ""], kernel="relu", shape=empty)
        self.assertEqual(npusim.run("relu", shape=(np.int64(2), 3)).json["shape"], [1, 1, 2, 3])

    def test_a_shapes_text_is_decimal_digits_between_commas(self):
        # " 4" and "+1" ran as 4 and 1 (strtoull skips a space, takes a sign); "1,4,4," ran as 1,1,4,4.
        for text in ["1, 4,4,4", "+1,4,4,4", "1,4,4,", "1,,4"]:
            self.check(["relu", "--shape", text], kernel="relu", shape=text)
        self.check(["relu", "--shape", "1, 4,4,4"], kernel="relu", shape=(1, " 4", 4, 4))
        with self.assertRaises(npusim.Error) as e:
            npusim.run("relu", shape="+1,4,4,4")
        self.assertEqual(str(e.exception), "shape: '+1' is not a positive integer (expected N,C,H,W)")

    def test_seeds_limits_and_caps_are_whole_numbers(self):
        # Floats were cut (seed=1.9 ran seed 1); negatives gave a TypeError
        # with pybind's dump of every argument, the arrays' bytes among them.
        x = np.ones((1, 64, 56, 56), np.float16)
        for flag, arg in [("--seed", "seed"), ("--max-cycles", "max_cycles"), ("--tile-max", "tile_max"),
                          ("--max-instructions", "max_instructions")]:
            for value in [-1, 1.9, 256.0, 2 ** 64]:
                problem = (f"'{value}' is {'out of range' if value == 2 ** 64 else 'not a whole number'} "
                           "(0 .. 18446744073709551615)")
                r = cli("run", "relu", flag, str(value), check=False)
                self.assertEqual((r.returncode, r.stderr.splitlines()[0]), (2, f"{flag}: {problem}"))
                with self.assertRaises(npusim.Error) as e:
                    npusim.run("relu", inputs={"x": x}, **{arg: value})
                self.assertEqual(str(e.exception), f"{arg}: {problem}")
            with self.assertRaisesRegex(TypeError, f"^{arg}: expected an int, got str$"):
                npusim.run("relu", **{arg: "10"})
        self.assertEqual(npusim.run("relu", seed=np.uint64(5)).json["seed"], 5)
        self.assertEqual(npusim.run("relu", seed=2 ** 64 - 1).json["seed"], 2 ** 64 - 1)

    def test_arguments_of_the_wrong_type_are_a_short_type_error(self):
        x = np.ones((1, 64, 56, 56), np.float16)
        for kwargs, message in [({"set": [("units.sfu.latency", 3)]}, "set: expected a dict {key: value}, got list"),
                                ({"inputs": {1: x}}, "inputs: expected a str, got int"),
                                ({"inputs": [x]}, "inputs: expected a dict {name: array}, got list"),
                                ({"params": [0.5]}, "params: expected a dict {name: number}, got list"),
                                ({"config": 42}, "config: expected a YAML path or a dict, got int"),
                                ({"kernel": 5}, "kernel: expected a str, got int"),
                                ({"dtype": np.float16}, "dtype: expected a str, got type"),
                                ({"schedule": "off"}, "schedule: expected True or False, got str")]:
            kwargs = dict({"kernel": "relu"}, **kwargs)
            with self.assertRaises(TypeError) as e:
                npusim.run(**kwargs)
            self.assertEqual(str(e.exception), message)

    def test_a_parameter_that_is_not_a_number_is_named(self):
        with self.assertRaisesRegex(npusim.Error, r"^parameter alpha: 'x' is not a number$"):
            npusim.run("leaky_relu", params={"alpha": "x"})
        self.assertEqual(comparable(npusim.run("leaky_relu", params={"alpha": "0.25"}).json),
                         comparable(npusim.run("leaky_relu", params={"alpha": 0.25}).json))

    def test_a_nul_character_is_refused_not_cut(self):
        # A C string ends at the first NUL: edge.yaml\0junk loaded edge.yaml.
        edge = os.path.join(ROOT, "configs", "edge.yaml")
        for kwargs, what, text in [({"config": edge + "\0junk"}, "config", edge + "\0junk"),
                                   ({"kernel": "relu\0junk"}, "kernel", "relu\0junk"),
                                   ({"set": {"units.sfu.latency": "30\0junk"}}, "set", "30\0junk"),
                                   ({"inputs": {"x\0y": np.ones(4, np.float32)}}, "inputs", "x\0y")]:
            kwargs = dict({"kernel": "relu"}, **kwargs)
            with self.assertRaises(npusim.Error) as e:
                npusim.run(**kwargs)
            self.assertEqual(str(e.exception), f"{what}: {text!r} contains a NUL character")
        with self.assertRaises(npusim.Error) as e:
            npusim.cache("t.din\0")
        self.assertEqual(str(e.exception), "trace: 't.din\\x00' contains a NUL character")

    def test_config_file_errors_name_the_file_line_and_column(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.yaml")
            with open(path, "w") as f:
                f.write("units:\n  sfu: {latency: x}\n")
            self.check(["relu", "--config", path], kernel="relu", config=path)

    def test_a_config_dict_error_names_the_key_path(self):
        with self.assertRaisesRegex(npusim.Error, r"^config:\d+:\d+: units\.sfu\.latency: expected an integer"):
            npusim.run("relu", config={"units": {"sfu": {"latency": "x"}}})
        with self.assertRaisesRegex(npusim.Error, r"^config:\d+:\d+: units\.sfu\.latenc: unknown key"):
            npusim.run("relu", config={"units": {"sfu": {"latenc": 3}}})

    def test_arrays_of_the_wrong_kind(self):
        with self.assertRaisesRegex(npusim.Error, r"^input 'x': dtype float64 is not one a kernel runs on"):
            npusim.run("relu", inputs={"x": np.zeros((1, 16, 2, 2))})
        with self.assertRaisesRegex(npusim.Error, r"^input 'x': dtype f16 does not match the run's dtype fp32$"):
            npusim.run("relu", dtype="fp32", inputs={"x": np.zeros((1, 16, 2, 2), np.float16)})
        with self.assertRaisesRegex(npusim.Error, r"^input z: kernel 'relu' has no input of that name$"):
            npusim.run("relu", inputs={"z": np.zeros(4, np.float32)})
        with self.assertRaisesRegex(npusim.Error, r"^input 'x': expected a 1-D to 4-D array, got 5-D$"):
            npusim.run("relu", inputs={"x": np.zeros((1, 1, 1, 1, 4), np.float32)})
        # A 0-D array ran as 1x1x1x1 (np.ascontiguousarray made it 1-D); the CLI refuses a 0-D .npy.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x0.npy")
            np.save(path, np.float32(3))
            self.assertEqual(cli("run", "relu", "--input", f"x={path}", check=False).stderr,
                             f"{path}: expected a 1-D to 4-D array, got 0-D\n")
        for zero_d in [np.float32(3), np.array(3, np.float32)]:
            with self.assertRaisesRegex(npusim.Error, r"^input 'x': expected a 1-D to 4-D array, got 0-D$"):
                npusim.run("relu", inputs={"x": zero_d})


class ShapeWithInputs(unittest.TestCase):
    """A shape given beside arrays must be theirs: it used to be dropped."""

    def test_a_shape_against_the_arrays_names_the_input_and_both_shapes(self):
        x = np.ones((1, 4, 3, 5), np.float32)
        with self.assertRaises(npusim.Error) as e:
            npusim.run("relu", shape=(1, 4, 3, 6), inputs={"x": x})
        self.assertEqual(str(e.exception), "input 'x': shape (1,4,3,5) does not match the run's NCHW shape (1,4,3,6)")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.npy")
            np.save(path, x)
            r = cli("run", "relu", "--shape", "1,4,3,6", "--input", f"x={path}", check=False)
            self.assertEqual((r.returncode, r.stderr), (2, f"{path}: shape (1,4,3,5) does not match the run's NCHW "
                                                           "shape (1,4,3,6)\n"))
            want = cli_json("relu", "--shape", "4,3,5", "--input", f"x={path}")
        self.assertEqual(comparable(npusim.run("relu", shape=(4, 3, 5), inputs={"x": x}).json), comparable(want))

    def test_matmul_shape_against_its_matrices(self):
        a, b = np.ones((16, 32), np.float16), np.ones((32, 16), np.float16)
        with self.assertRaisesRegex(npusim.Error, r"^input 'a': shape \(16,32\) does not match the run's M,K,N "
                                                  r"\(64,64,64\): a is M x K$"):
            npusim.run("matmul", shape=(64, 64, 64), inputs={"a": a, "b": b})
        r = npusim.run("matmul", shape=(16, 32, 16), inputs={"a": a, "b": b})
        np.testing.assert_array_equal(r.outputs["c"], np.full((16, 16), 32, np.float32))

    def test_compare_takes_its_shape_and_dtype_from_the_arrays(self):
        x = np.linspace(-3, 3, 2 * 16 * 3, dtype=np.float32).reshape(2, 16, 3)
        rows = npusim.compare(["relu", "silu"], inputs={"x": x})
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        self.assertEqual([(r["result"].json["dtype"], r["result"].json["shape"]) for r in rows],
                         [("fp32", [1, 2, 16, 3])] * 2)


class FunctionalRuns(unittest.TestCase):
    def test_a_functional_run_has_no_cycles_and_still_prints(self):
        # cycles, bound and repr() raised KeyError; so did printing compare()'s rows.
        r = npusim.run("relu", shape=(1, 4, 4, 4), set={"sim.mode": "functional"})
        self.assertNotIn("cycles", r.json)
        self.assertIsNone(r.cycles)
        self.assertIsNone(r.bound)
        self.assertTrue(r.passed)
        self.assertEqual(repr(r), "<npusim.Result relu fp32 1x4x4x4: functional, no cycles, passed>")
        timed = npusim.run("relu", shape=(1, 4, 4, 4))
        self.assertEqual(repr(timed), f"<npusim.Result relu fp32 1x4x4x4: {timed.cycles} cycles, efficiency "
                                      f"{timed.bound['efficiency']:.3f}, passed>")
        rows = npusim.compare(["relu", "gelu_tanh"], shape=(1, 4, 4, 4), set={"sim.mode": "functional"})
        self.assertIn("<npusim.Result relu fp16 1x4x4x4: functional", str(rows))
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        self.assertEqual([row["result"].cycles for row in rows], [None, None])
        self.assertEqual(repr(rows[1]["result"]), "<npusim.Result gelu_tanh fp16 1x4x4x4: functional, no cycles, "
                                                  "passed>")

    def test_compare_and_sweep_rows_have_no_figure_a_functional_run_did_not_compute(self):
        # compare's rows had cycles, IPC, L2 hit rate, efficiency and every stall 0.0.
        def none(v):
            return v is None or (isinstance(v, float) and math.isnan(v))

        rows = npusim.compare(["relu", "gelu_tanh"], shape=(1, 4, 4, 4), set={"sim.mode": "functional"})
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        for row in rows:
            for key in ("cycles", "cycles/element", "IPC", "stall raw", "stall dma_wait", "util sfu", "L2 hit rate",
                        "DRAM bytes", "efficiency", "binding", "cycles_total"):
                self.assertTrue(none(row[key]), (key, row[key]))
        self.assertEqual([row["instructions/vector"] for row in rows], [1.0, 17.0])
        self.assertEqual([row["max ULP"] for row in rows], [0.0, 0.0])
        # A sweep row is the report flattened: a functional point has no timing columns.
        rows = npusim.sweep({"kernels": ["relu"], "dtypes": ["fp16"], "shapes": ["1,4,4,4"],
                             "grid": {"sim.mode": ["timed", "functional"]}})
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        timed, functional = rows
        self.assertEqual(functional["param.sim.mode"], "functional")
        for key in ("cycles", "ipc", "stalls.raw", "l2.hit_rate", "bound.efficiency"):
            self.assertFalse(none(timed[key]), key)
            self.assertTrue(none(functional.get(key)), (key, functional.get(key)))
        self.assertEqual(functional["instructions"], timed["instructions"])
        self.assertEqual(functional["accuracy.max_ulp"], 0.0)


class PythonValues(unittest.TestCase):
    def test_a_config_dict_takes_what_set_takes(self):
        # False was 'false' (not yes|no) in a dict and "no" in set; a NumPy int was not JSON.
        for config, sets in [({"sim": {"race_check": False}}, {"sim.race_check": False}),
                             ({"memory": {"warm_inputs": np.True_}}, {"memory.warm_inputs": True}),
                             ({"units": {"sfu": {"latency": np.int64(30)}}}, {"units.sfu.latency": np.int64(30)})]:
            by_dict, by_set = npusim.run("gelu_tanh", config=config), npusim.run("gelu_tanh", set=sets)
            self.assertEqual(by_dict.cycles, by_set.cycles, config)
            self.assertEqual({k: v for k, v in by_dict.json["config"].items() if k != "source"},
                             {k: v for k, v in by_set.json["config"].items() if k != "source"})
        self.assertNotEqual(npusim.run("gelu_tanh", config={"units": {"sfu": {"latency": 30}}}).cycles,
                            npusim.run("gelu_tanh").cycles)

    def test_a_section_that_is_not_a_mapping_says_so(self):
        with self.assertRaisesRegex(npusim.Error, r"^config:2:11: units: expected a mapping$"):
            npusim.run("relu", config={"units": 5})
        with self.assertRaisesRegex(npusim.Error, r"^config:3:10: units\.sfu: expected a mapping$"):
            npusim.run("relu", config={"units": {"sfu": 7}})

    def test_one_str_is_one_kernel_or_variant_not_its_characters(self):
        # compare("relu") ran 'r', 'e', 'l', 'u'; variants="fused" asked for variant 'f'.
        rows = npusim.compare("relu", shape=(1, 16, 2, 2))
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        self.assertEqual([row["kernel"] for row in rows], ["relu"])
        spec = {"name": "tiny", "tensors": {"x": {"shape": [20, 33]}, "w": {"shape": [33, 18]}},
                "variants": {"plain": [{"kernel": "matmul", "inputs": {"a": "x", "b": "w"}, "output": "y"}],
                             "other": [{"kernel": "matmul", "inputs": {"a": "x", "b": "w"}, "output": "y"}]}}
        rows = npusim.graph(spec, variants="other")
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        self.assertEqual([row["name"] for row in rows], ["other"])
        with self.assertRaises(npusim.Error) as e:  # it began `--variant nope:`, a flag Python has not
            npusim.graph(spec, variants=["nope"])
        self.assertEqual(str(e.exception), "variant nope: graph has no such variant")

    def test_spec_dicts_take_numpy_numbers_as_the_python_numbers_they_hold(self):
        # np.int64(2) as a core count or a shape element raised "Object of type int64 is not JSON serializable".
        def plain(rows):
            rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
            return [{k: v for k, v in row.items() if not (isinstance(v, float) and math.isnan(v))} for row in rows]

        def sweep(cores, latency=12, max_cycles=0):
            return npusim.sweep({"kernels": ["relu"], "dtypes": ["fp16"], "shapes": ["1,4,4,4"],
                                 "grid": {"system.cores": cores}, "set": {"units.sfu.latency": latency},
                                 "limits": {"max_cycles": max_cycles}})

        self.assertEqual(plain(sweep([np.int64(1), np.uint8(2)], np.int32(12), np.uint64(10 ** 6))),
                         plain(sweep([1, 2], 12, 10 ** 6)))
        for numpy_value, python_value in [(np.float64(2.5), 2.5), (np.float32(2.0), 2.0)]:
            with self.assertRaises(npusim.Error) as want:
                sweep([python_value])
            with self.assertRaises(npusim.Error) as got:
                sweep([numpy_value])
            self.assertEqual(str(got.exception), str(want.exception))
            self.assertRegex(str(got.exception), r"^sweep:\d+:\d+: grid\.system\.cores: expected an integer ")

        def graph(rows, samples, lo):
            return {"name": "tiny", "samples": samples,
                    "tensors": {"x": {"shape": [rows, 33]}, "w": {"shape": [33, 18], "range": [lo, 0.5]}},
                    "variants": {"plain": [{"kernel": "matmul", "inputs": {"a": "x", "b": "w"}, "output": "y"}]}}

        got = plain(npusim.graph(graph(np.int64(20), np.uint32(2), np.float32(-0.25))))
        self.assertEqual(got, plain(npusim.graph(graph(20, 2, -0.25))))
        self.assertEqual(plain(npusim.graph(graph(np.array(20), 2, np.float16(-0.25)))), got)
        with self.assertRaises(npusim.Error) as want:
            npusim.graph(graph(20.5, 2, -0.25))
        with self.assertRaises(npusim.Error) as e:
            npusim.graph(graph(np.float64(20.5), 2, -0.25))
        self.assertEqual(str(e.exception), str(want.exception))
        self.assertEqual(str(e.exception), "graph:7:5: tensors.x.shape[0]: '20.5' is not a whole number in 1 .. 1048576")

    def test_limits_in_a_report_name_no_cli_flag(self):
        r = npusim.run("relu", max_cycles=100)
        self.assertFalse(r.passed)
        self.assertRegex(r.json["traps"][0]["message"], r"^stopped at cycle \d+, its first step at or past the run's cycle limit of \d+$")
        r = npusim.run("relu", max_instructions=50)
        self.assertEqual(r.json["traps"][0]["message"], "stopped after 50 instructions, the run's instruction limit")


class ManyRunsPerProcess(unittest.TestCase):
    def test_a_thousand_runs_repeat_and_do_not_grow(self):
        configs = [{}, {"units.sfu.latency": 30}, {"system.cores": 2}, {"core.vlen": 512}]
        kernels = ["relu", "gelu_tanh", "mish", "sigmoid"]
        first = {}
        rss = []
        for i in range(1000):
            k, c = kernels[i % 4], configs[(i // 4) % 4]
            r = npusim.run(k, dtype="fp16", shape=(1, 16, 4, 4), set=c)
            key = (k, tuple(sorted(c.items())))
            self.assertTrue(r.passed, key)
            self.assertEqual(first.setdefault(key, r.cycles), r.cycles, key)
            if i in (199, 999):
                with open("/proc/self/statm") as f:
                    rss.append(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
        self.assertEqual(len(first), 16)
        self.assertLess(rss[1] - rss[0], 8 << 20, f"resident memory grew from {rss[0]} to {rss[1]} bytes")


class CacheReplay(unittest.TestCase):
    def test_a_din_trace_gives_the_clis_document_and_errors(self):
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "t.din")
            with open(trace, "w") as f:
                for i in range(3000):
                    f.write(f"{int(i % 3 == 0)} {(i * 4) % 6144:x} 4\n")  # writes and reads, 6 KiB around
            sets = {"l2.size_bytes": 4096, "l2.ways": 2}
            want = json.loads(cli("cache", trace, "--set", "l2.size_bytes=4096", "--set", "l2.ways=2",
                                  "--json", "-").stdout)
            self.assertEqual(npusim.cache(trace, set=sets), want)
            self.assertGreater(want["l2"]["hits"], 0)
            with open(trace, "a") as f:
                f.write("7 10 4\n")
            err = cli("cache", trace, check=False).stderr.strip()
            self.assertTrue(err.startswith(trace + ":3001:1: "), err)
            with self.assertRaisesRegex(npusim.Error, "^" + re.escape(err) + "$"):
                npusim.cache(trace)
            # A replay reads the l2.* and dram.* keys only.
            with self.assertRaisesRegex(npusim.Error, r"^set dma\.outstanding: not used by a din replay, which reads "
                                                      r"the l2\.\* and dram\.\* keys only$"):
                npusim.cache(trace, set={"dma.outstanding": 1})
            with self.assertRaisesRegex(npusim.Error, r"^config:\d+:\d+: memory\.model: ideal: a din replay goes "
                                                      r"through the L2 model \(memory\.model: l2\)$"):
                npusim.cache(trace, config={"memory": {"model": "ideal"}})


class RunsInThreads(unittest.TestCase):
    def test_runs_in_threads_at_once_equal_runs_alone(self):
        # A run releases the GIL: runs in threads proceed at once, each on
        # its own objects, and share the schedule cache.
        from concurrent.futures import ThreadPoolExecutor
        jobs = [("gelu_tanh", {"units.sfu.latency": 21}), ("mish", {"units.sfu.latency": 21}),
                ("relu", {}), ("silu", {"units.valu.latency": 5})] * 3

        def one(job):
            r = npusim.run(job[0], dtype="fp16", shape=(1, 16, 8, 8), set=job[1])
            return comparable(r.json), r.outputs["y"].tobytes()

        alone = [one(j) for j in jobs]
        with ThreadPoolExecutor(max_workers=3) as pool:
            together = list(pool.map(one, jobs))
        self.assertEqual(together, alone)


def flat(value, prefix="", out=None):
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flat(v, f"{prefix}.{k}" if prefix else k, out)
    else:
        out[prefix] = value
    return out


class CompareAndSweep(unittest.TestCase):
    def rows(self, rows):
        return rows.to_dict("records") if hasattr(rows, "to_dict") else rows

    def test_compare_is_the_clis_compare(self):
        kernels = ["relu", "gelu_tanh", "mish"]
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "c.json")
            cli("compare", *kernels, "--shape", "1,16,8,8", "--json", out)
            with open(out) as f:
                want = [flat(row) for row in json.load(f)]
        got = self.rows(npusim.compare(kernels, shape=(1, 16, 8, 8)))
        self.assertEqual([row["kernel"] for row in got], kernels)
        for g, w in zip(got, want):
            result = g.pop("result")
            self.assertTrue(g.pop("passed"))
            self.assertEqual(g, w)
            self.assertEqual(g["stalls.raw"], result.stalls["raw"])

    def test_graph_is_the_clis_graph(self):
        spec = {"name": "tiny", "tensors": {"x": {"shape": [20, 33]}, "w": {"shape": [33, 18]}, "b": {"shape": [18]}},
                "variants": {"unfused": [{"kernel": "matmul", "inputs": {"a": "x", "b": "w"}, "output": "h"},
                                         {"kernel": "bias_add", "inputs": {"x": "h", "bias": "b"}, "output": "y"}],
                             "fused": [{"kernel": "matmul_add", "inputs": {"a": "x", "b": "w", "bias": "b"},
                                        "output": "y"}]}}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.yaml")
            with open(path, "w") as f:
                json.dump(spec, f)
            out = os.path.join(d, "g.json")
            cli("graph", path, "--json", out, "--set", "core.freq_mhz=500")
            with open(out) as f:
                want = json.load(f)["variants"]
            got = self.rows(npusim.graph(path, set={"core.freq_mhz": 500}))
        self.assertEqual([row["name"] for row in got], ["unfused", "fused"])
        for g, w in zip(got, want):
            self.assertEqual(g["cycles"], w["cycles"])
            self.assertEqual(g["dram_bytes"], w["dram_bytes"])
            self.assertEqual(g["samples_per_second"], w["samples_per_second"])
            self.assertTrue(g["passed"])
        same = self.rows(npusim.graph(spec, variants=["fused"], set={"core.freq_mhz": 500}))
        self.assertEqual(same[0]["cycles"], want[1]["cycles"])
        with self.assertRaises(ValueError) as e:
            npusim.graph({"tensors": {}, "variants": {"v": [{"kernel": "nosuch", "inputs": {}, "output": "y"}]}})
        self.assertIn("variants.v[0].kernel: unknown kernel 'nosuch'", str(e.exception))

    def test_graph_without_an_l2_has_no_hit_rate(self):
        # memory.model: ideal gave l2_hit_rate 0.0 of 0 accesses.
        spec = {"tensors": {"x": {"shape": [1, 16, 8, 8]}},
                "variants": {"a": [{"kernel": "relu", "inputs": {"x": "x"}, "output": "y"}]}}
        row = self.rows(npusim.graph(spec, set={"memory.model": "ideal"}))[0]
        self.assertEqual(row["l2_accesses"], 0)
        self.assertTrue(row["l2_hit_rate"] is None or row["l2_hit_rate"] != row["l2_hit_rate"], row["l2_hit_rate"])
        self.assertIsNone(row["steps"][0]["l2_hit_rate"])

    def test_sweep_is_the_clis_sweep(self):
        spec = os.path.join(ROOT, "configs", "sweeps", "tiny.yaml")
        with tempfile.TemporaryDirectory() as d:
            cli("sweep", spec, "-o", os.path.join(d, "s"), "-j", "2")
            cli("merge", os.path.join(d, "s"), "-o", os.path.join(d, "s.csv"))
            with open(os.path.join(d, "s.csv")) as f:
                want = {row["point.id"]: row for row in csv.DictReader(f)}
        got = self.rows(npusim.sweep(spec))
        self.assertEqual(len(got), 12)
        self.assertEqual({row["point.id"] for row in got}, set(want))
        for row in got:
            w = want[row["point.id"]]
            self.assertEqual(row["point.status"], "ok")
            # Every column of the CLI's table, as the CSV writes it (JSON text for numbers and booleans,
            # empty for null); a column the point does not have is empty there and absent here.
            for col, text in w.items():
                if col in ("point.status",):
                    continue
                value = row.get(col)
                if value is None or (isinstance(value, float) and math.isnan(value)):  # a DataFrame's missing cell
                    self.assertEqual(text, "", col)
                elif isinstance(value, str):
                    self.assertEqual(value, text, col)
                else:
                    self.assertEqual(value, json.loads(text), col)
            self.assertIn("cycles", row)
            self.assertIn("stalls.raw", row)

    def test_a_sweep_that_measures_tiles(self):
        rows = self.rows(npusim.sweep({"kernels": ["relu"], "shapes": ["1,16,8,8"], "tiling": "measure"}))
        self.assertEqual([r["tiling.reason"] for r in rows], ["measured"])
        with self.assertRaisesRegex(npusim.Error, r"^sweep:5:12: tiling: 'maybe' is not rule or measure$"):
            npusim.sweep({"kernels": ["relu"], "tiling": "maybe"})

    def test_a_sweep_dict_and_a_failing_point(self):
        # A kernel whose manifest passes the spec's checks but whose code does
        # not assemble: its points fail as they run, the others go on.
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad_body.s")
            with open(bad, "w") as f:
                f.write("; @kernel     bad_body\n; @input      x range=-8,8\n; @output     y\n"
                        "; @dtypes     fp16\n; @reference  relu\n; @tolerance  fp16 ulp=0\n    frob v1\n")
            rows = self.rows(npusim.sweep({"kernels": ["relu", bad], "dtypes": ["fp16"],
                                           "shapes": ["1,16,2,2"], "grid": {"units.valu.latency": [2, 4]}}))
        self.assertEqual([r["point.status"] for r in rows][:2], ["ok", "ok"])
        self.assertEqual(rows[2]["point.status"], f"failed: {bad}:7:5: unknown mnemonic 'frob'")
        # An unknown kernel is the spec's error, before any point runs (docs/sweeps.md).
        with self.assertRaisesRegex(npusim.Error, r"^sweep:\d+:\d+: kernels: unknown kernel 'no_such_kernel' "
                                                  r"\(see `npusim kernels`; looked in "):
            npusim.sweep({"kernels": ["relu", "no_such_kernel"], "dtypes": ["fp16"]})


    def test_threads_give_the_rows_of_one_after_another(self):
        def plain(rows):
            out = []
            for row in self.rows(rows):
                row = dict(row)
                result = row.pop("result", None)
                if result is not None:
                    row["json"] = comparable(result.json)
                out.append({k: v for k, v in row.items() if not (isinstance(v, float) and math.isnan(v))})
            return out

        kernels = ["gelu_tanh", "relu", "mish", "silu"]
        sets = {"units.sfu.latency": 13}
        self.assertEqual(plain(npusim.compare(kernels, shape=(1, 16, 8, 8), set=sets, jobs=3)),
                         plain(npusim.compare(kernels, shape=(1, 16, 8, 8), set=sets, jobs=1)))
        spec = os.path.join(ROOT, "configs", "sweeps", "tiny.yaml")
        self.assertEqual(plain(npusim.sweep(spec, jobs=3)), plain(npusim.sweep(spec, jobs=1)))
        with self.assertRaisesRegex(npusim.Error, "^unknown kernel 'nosuch' "):
            npusim.compare(["relu", "nosuch", "mish", "also_missing"], shape=(1, 16, 2, 2), jobs=4)


class Example(unittest.TestCase):
    def test_the_stall_plot_example_runs(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "stalls.png")
            r = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "examples", "stalls.py"), "--shape",
                                "1,16,8,8", "-o", out], capture_output=True, text=True, env=ENV)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertGreater(os.path.getsize(out), 1000)
            self.assertIn("gelu_tanh", r.stdout)


class HostLocale(unittest.TestCase):
    """A host that sets a locale with a decimal comma (locale.setlocale, as
    Qt and many programs do) got 'malformed number' from every kernel: the
    library reads and prints its numbers in the C locale whatever the host's."""

    def test_a_decimal_comma_locale_changes_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            try:
                made = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", os.path.join(d, "de_DE.UTF-8")],
                                      capture_output=True)
            except FileNotFoundError:
                self.skipTest("no localedef")
            if made.returncode not in (0, 1) or not os.path.isdir(os.path.join(d, "de_DE.UTF-8")):
                self.skipTest("cannot build the de_DE.UTF-8 locale here")
            script = (
                "import json, locale, npusim\n"
                "locale.setlocale(locale.LC_ALL, 'de_DE.UTF-8')\n"
                "assert locale.localeconv()['decimal_point'] == ','\n"
                "out = [npusim.run('leaky_relu', dtype='fp32', shape=(1, 4, 8, 8), params={'alpha': 0.5}).json,\n"
                "       npusim.run('gelu_tanh', dtype='fp16', shape=(1, 4, 8, 8)).json]\n"
                "print(json.dumps(out))\n")
            r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                               env=dict(ENV, LOCPATH=d))
            self.assertEqual(r.returncode, 0, r.stderr)
            got = json.loads(r.stdout)
        want = [cli_json("leaky_relu", "--dtype", "fp32", "--shape", "1,4,8,8", "--param", "alpha=0.5"),
                cli_json("gelu_tanh", "--dtype", "fp16", "--shape", "1,4,8,8")]
        self.assertEqual([comparable(j) for j in got], [comparable(j) for j in want])


class TapResult(unittest.TextTestResult):
    """Each test as a TAP line on stdout (Meson's tap protocol: one JUnit case
    each, so tools/test_summary.py counts them); details go to stderr."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.number = 0

    def line(self, test, ok, note=""):
        self.number += 1
        print(f"{'ok' if ok else 'not ok'} {self.number} - {test.id().removeprefix('__main__.')}{note}", flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.line(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.line(test, False)

    def addError(self, test, err):
        super().addError(test, err)
        self.line(test, False)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.line(test, True, f" # SKIP {reason}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--tap"]:
        tests = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
        print(f"1..{tests.countTestCases()}", flush=True)
        runner = unittest.TextTestRunner(stream=sys.stderr, resultclass=TapResult, verbosity=0)
        sys.exit(0 if runner.run(tests).wasSuccessful() else 1)
    unittest.main(verbosity=2)
