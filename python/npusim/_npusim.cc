// The Python module's native half: one kernel run in this process, on the C
// engine (npu_run_timed), which gives the same results as the SystemC engine
// `npusim run` uses (tests/python checks that on the JSON). The Python half
// (__init__.py) turns arrays and dicts into what these functions take, and
// their results back into NumPy arrays and Result objects.
//
// Everything crosses as plain values: arrays as (dtype name, shape, bytes),
// reports as JSON text. A bad input raises npusim.Error, a ValueError whose
// message is the CLI's one line.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "compare.h"
#include "json_text.h"
#include "atomic_file.h"
#include "config.h"
#include "din_replay.h"
#include "error.h"
#include "graph.h"
#include "manifest.h"
#include "report.h"
#include "runner.h"
#include "sweep.h"

namespace py = pybind11;

namespace {

// An array as it crosses: its NumPy dtype name ("float16", "float32"), the
// shape, the bytes (C order).
using Array = std::tuple<std::string, std::vector<uint64_t>, py::bytes>;

npusim::NpyArray to_npy(const std::string &name, const Array &a)
{
    npusim::NpyArray out;
    const std::string &dt = std::get<0>(a);
    if (dt == "float16")
        out.dtype = NPU_F16;
    else if (dt == "float32")
        out.dtype = NPU_F32;
    else
        throw npusim::Error("input '" + name + "': dtype " + dt + " is not one a kernel runs on (float16, float32)");
    out.shape = std::get<1>(a);
    const std::string bytes = std::get<2>(a);
    uint64_t count = 1;
    for (uint64_t d : out.shape)
        count *= d;
    if (bytes.size() != count * npu_dtype_bytes(out.dtype))
        throw npusim::Error("input '" + name + "': " + std::to_string(bytes.size()) + " bytes for " +
                            std::to_string(count) + " elements");
    out.data.assign(bytes.begin(), bytes.end());
    return out;
}

Array from_npy(const npusim::NpyArray &a)
{
    return Array(a.dtype == NPU_F16 ? "float16" : "float32", a.shape,
                 py::bytes(reinterpret_cast<const char *>(a.data.data()), a.data.size()));
}

// The config of a run: a YAML file, or YAML text (a Python dict as JSON), or
// the defaults; then the overrides in order, as `--config F --set K=V ...`.
npusim::Config make_config(const std::string &path, const std::string &text, const std::string &text_name,
                           const std::vector<std::string> &sets)
{
    if (text.empty())
        return npusim::build_config(path, sets);
    npusim::Config cfg = npusim::load_config_text(text, text_name);
    for (const std::string &s : sets)
        npusim::apply_override(cfg, s);
    npusim::validate_config(cfg);
    return cfg;
}

// One run. dtype and shape: the CLI's text, or None (from the inputs, else
// the defaults). Returns (the JSON report as text, {tensor name: array} for
// every output, in NCHW).
std::tuple<std::string, std::map<std::string, Array>>
run(const std::string &kernel, const std::optional<std::string> &dtype, const std::optional<std::string> &shape,
    const std::string &config_path, const std::string &config_text, const std::vector<std::string> &sets,
    const std::map<std::string, Array> &inputs, const std::map<std::string, double> &params, uint64_t seed,
    bool schedule, uint64_t max_cycles, std::optional<uint64_t> max_instructions, uint64_t tile_max,
    const std::string &tiling)
{
    npusim::RunOptions opts;
    opts.kernel = kernel;
    if (dtype) {
        npusim::parse_dtype(*dtype);  // "" too: an empty dtype is not the default
        opts.dtype = *dtype;
    }
    if (shape)
        opts.shape = npusim::parse_shape(*shape);
    opts.measure_tiles = npusim::parse_tiling(tiling);
    opts.config = make_config(config_path, config_text, "config", sets);
    for (const auto &kv : inputs)
        opts.input_arrays.emplace(kv.first, to_npy(kv.first, kv.second));
    opts.params = params;
    opts.seed = seed;
    opts.schedule = schedule;
    opts.max_cycles = max_cycles;
    opts.tile_max = tile_max;
    if (max_instructions)
        opts.max_instructions = *max_instructions;
    npusim::RunResult r;
    {
        // The run touches no Python object: other Python threads (and their
        // runs, each on its own objects) go on meanwhile.
        py::gil_scoped_release free_python;
        r = npusim::run_kernel(opts);
    }
    std::map<std::string, Array> outputs;
    for (const npusim::TensorDecl &t : r.manifest.tensors)
        if (!t.is_input)
            outputs.emplace(t.name, from_npy(r.tensors.at(t.name)));
    return {npusim::json_text(npusim::report_json(r)), std::move(outputs)};
}

std::vector<std::string> kernel_names()
{
    std::vector<std::string> names;
    for (const std::string &path : npusim::list_kernels())
        names.push_back(npusim::load_manifest(path).name);
    return names;
}

// A sweep spec's points: [(index, id, kernel, dtype, shape, [(key, value)], config as YAML)].
using Point = std::tuple<size_t, std::string, std::string, std::string, std::string,
                         std::vector<std::pair<std::string, std::string>>, std::string>;

std::tuple<std::vector<Point>, py::object, py::object, bool> sweep_points(const std::string &path, const std::string &text,
                                                                    const std::string &name)
{
    const npusim::SweepSpec spec = !path.empty() ? npusim::load_sweep(path) : npusim::load_sweep_text(text, name);
    std::vector<Point> out;
    for (const npusim::SweepPoint &p : npusim::expand_sweep(spec))
        out.emplace_back(p.index, p.id, p.kernel_file, p.dtype, p.shape, p.overrides, npusim::config_to_yaml(p.config));
    auto limit = [](const std::optional<uint64_t> &v) { return v ? py::object(py::int_(*v)) : py::object(py::none()); };
    return {std::move(out), limit(spec.limits.max_cycles), limit(spec.limits.max_instructions), spec.measure_tiles};
}

// `npusim compare --json`'s rows for these reports (JSON texts).
std::string compare_rows(const std::vector<std::string> &reports)
{
    std::vector<nlohmann::json> js;
    for (const std::string &r : reports)
        js.push_back(nlohmann::json::parse(r));
    return npusim::json_text(npusim::compare_json(js));
}

// `npusim cache --json`'s document for a din trace file, as JSON text.
std::string replay(const std::string &trace, const std::string &config_path, const std::string &config_text,
                   const std::vector<std::string> &sets)
{
    const npusim::Config cfg = make_config(config_path, config_text, "config", sets);
    const std::string text = npusim::read_file(trace);
    py::gil_scoped_release free_python;
    return npusim::json_text(npusim::din_replay_json(npusim::replay_din(cfg, trace, text)));
}

// `npusim graph --json`'s document for a spec (a path, or YAML text named
// `name`). The config: config_path / config_text when given, else the spec's.
std::string graph(const std::string &path, const std::string &text, const std::string &name,
                  const std::string &config_path, const std::string &config_text, const std::vector<std::string> &sets,
                  const std::vector<std::string> &variants, unsigned jobs)
{
    const npusim::GraphSpec spec = !path.empty() ? npusim::load_graph(path) : npusim::load_graph_text(text, name);
    const npusim::Config cfg = make_config(config_path.empty() && config_text.empty() ? spec.config : config_path,
                                           config_text, "config", sets);
    py::gil_scoped_release free_python;
    return npusim::json_text(npusim::graph_json(npusim::run_graph(spec, cfg, variants, jobs)));
}

}  // namespace

PYBIND11_MODULE(_npusim, m)
{
    m.doc() = "npusim's native half: see help(npusim)";
    py::register_exception<npusim::Error>(m, "Error", PyExc_ValueError);
    m.def("run", &run, py::arg("kernel"), py::arg("dtype"), py::arg("shape"), py::arg("config_path"),
          py::arg("config_text"), py::arg("sets"), py::arg("inputs"), py::arg("params"), py::arg("seed"),
          py::arg("schedule"), py::arg("max_cycles"), py::arg("max_instructions"), py::arg("tile_max"), py::arg("tiling"));
    // A seed, limit or cap's text as the CLI reads it, or npusim.Error with the CLI's words.
    m.def("parse_whole", &npusim::parse_whole, py::arg("what"), py::arg("text"));
    m.def("kernels", &kernel_names);
    m.def("replay", &replay, py::arg("trace"), py::arg("config_path"), py::arg("config_text"), py::arg("sets"));
    m.def("sweep_points", &sweep_points, py::arg("path"), py::arg("text"), py::arg("name"));
    m.def("compare_rows", &compare_rows);
    m.def("graph", &graph, py::arg("path"), py::arg("text"), py::arg("name"), py::arg("config_path"),
          py::arg("config_text"), py::arg("sets"), py::arg("variants"), py::arg("jobs"));
    m.def("config_docs", &npusim::config_docs);
    m.def("default_config_yaml", [] { return npusim::config_to_yaml(npusim::default_config()); });
}
