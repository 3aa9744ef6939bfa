// The C API of include/npusim/sim.h over run_kernel(): configs, runs and
// results as opaque handles; every npusim::Error becomes the err line.
#include "npusim/sim.h"
#include "npusim/timing.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "c_locale.h"
#include "config.h"
#include "error.h"
#include "json_text.h"
#include "report.h"
#include "runner.h"

struct npu_sim_config {
    npusim::Config cfg;
};

struct npu_sim_result {
    npusim::RunResult r;
    std::string json;
};

namespace {

void set_err(char *err, size_t size, const std::string &msg)
{
    if (err && size)
        std::snprintf(err, size, "%s", msg.c_str());
}

// Runs f() in the C locale (c_locale.h); an exception becomes the err line
// and `fail`.
template <typename F, typename R>
R guarded(char *err, size_t size, R fail, F f)
{
    const npusim::CLocaleScope c_locale;
    try {
        return f();
    } catch (const std::bad_alloc &) {
        set_err(err, size, "out of memory");
    } catch (const std::exception &e) {
        set_err(err, size, e.what());
    }
    return fail;
}

}  // namespace

extern "C" {

npu_sim_config *npu_sim_config_default(void)
{
    return guarded(nullptr, 0, (npu_sim_config *)nullptr, [] { return new npu_sim_config{npusim::default_config()}; });
}

npu_sim_config *npu_sim_config_load(const char *path, char *err, size_t err_size)
{
    return guarded(err, err_size, (npu_sim_config *)nullptr, [&] {
        if (!path)
            throw npusim::Error("no config path given");
        return new npu_sim_config{npusim::load_config(path)};
    });
}

npu_sim_config *npu_sim_config_parse(const char *yaml, const char *name, char *err, size_t err_size)
{
    return guarded(err, err_size, (npu_sim_config *)nullptr, [&] {
        return new npu_sim_config{npusim::load_config_text(yaml ? yaml : "", name ? name : "config")};
    });
}

int npu_sim_config_set(npu_sim_config *cfg, const char *key, const char *value, char *err, size_t err_size)
{
    return guarded(err, err_size, int(NPU_EINVAL), [&] {
        if (!cfg || !key || !value)
            throw npusim::Error("npu_sim_config_set: a config, a key and a value are needed");
        npusim::Config next = cfg->cfg;  // a refused value leaves the config as it was
        npusim::set_config_key(next, key, value);
        cfg->cfg = next;
        return int(NPU_OK);
    });
}

char *npu_sim_config_yaml(const npu_sim_config *cfg)
{
    return guarded(nullptr, 0, (char *)nullptr,
                   [&] { return cfg ? strdup(npusim::config_to_yaml(cfg->cfg).c_str()) : nullptr; });
}

void npu_sim_config_free(npu_sim_config *cfg) { delete cfg; }

void npu_sim_run_options_default(npu_sim_run_options *opts)
{
    std::memset(opts, 0, sizeof *opts);
    opts->seed = 1;
    opts->schedule = 1;
    opts->max_instructions = UINT64_MAX;
}

npu_sim_result *npu_sim_run(const npu_sim_config *cfg, const char *kernel, const npu_sim_run_options *opts,
                            char *err, size_t err_size)
{
    return guarded(err, err_size, (npu_sim_result *)nullptr, [&] {
        if (!cfg || !kernel)
            throw npusim::Error("npu_sim_run: a config and a kernel are needed");
        npu_sim_run_options o;
        npu_sim_run_options_default(&o);
        if (opts)
            o = *opts;
        npusim::RunOptions ro;
        ro.kernel = kernel;
        if (o.dtype) {
            npusim::parse_dtype(o.dtype);  // "" too, as the CLI and Python refuse it: NULL is the default
            ro.dtype = o.dtype;
        }
        if (o.shape[0] || o.shape[1] || o.shape[2] || o.shape[3])
            ro.shape.assign(o.shape, o.shape + 4);
        ro.config = cfg->cfg;
        npusim::validate_config(ro.config);
        ro.seed = o.seed;
        ro.schedule = o.schedule != 0;
        ro.tile_max = o.tile_max;
        ro.measure_tiles = o.measure_tiles != 0;
        ro.max_cycles = o.max_cycles;
        ro.max_instructions = o.max_instructions;
        for (unsigned i = 0; i < o.num_inputs; i++) {
            const npu_sim_tensor &t = o.inputs[i];
            const std::string name = t.name ? t.name : "";
            if (t.rank < 1 || t.rank > 4)
                throw npusim::Error("input '" + name + "': rank " + std::to_string(t.rank) + " (1 to 4)");
            if (t.dtype != NPU_F16 && t.dtype != NPU_F32)
                throw npusim::Error("input '" + name + "': dtype " + npu_dtype_name(t.dtype) +
                                    " is not one a kernel runs on (f16, f32)");
            npusim::NpyArray a;
            a.dtype = t.dtype;
            a.shape.assign(t.shape, t.shape + t.rank);
            uint64_t count = 1;
            for (uint64_t d : a.shape)
                count *= d;
            const auto *bytes = static_cast<const uint8_t *>(t.data);
            if (count && !bytes)
                throw npusim::Error("input '" + name + "': no data");
            a.data.assign(bytes, bytes + count * npu_dtype_bytes(t.dtype));
            if (!ro.input_arrays.emplace(name, std::move(a)).second)
                throw npusim::Error("input '" + name + "' is given twice");
        }
        for (unsigned i = 0; i < o.num_params; i++)
            ro.params[o.params[i].name ? o.params[i].name : ""] = o.params[i].value;
        if (o.engine)
            ro.engine = [&o](npu_timed_core *const *cores, unsigned n, const npu_run_limits &lim) {
                o.engine(o.engine_ctx, cores, n, &lim);
                for (unsigned k = 0; k < n; k++) {
                    const npu_core_state st = npu_timed_core_core(cores[k])->state;
                    if (st != NPU_CORE_HALTED && st != NPU_CORE_TRAPPED)
                        throw npusim::Error("npu_sim_run: the engine returned before core " + std::to_string(k) +
                                            " halted or trapped");
                }
            };
        auto *res = new npu_sim_result;
        try {
            res->r = npusim::run_kernel(ro);
            res->json = npusim::json_text(npusim::report_json(res->r));
        } catch (...) {
            delete res;
            throw;
        }
        return res;
    });
}

uint64_t npu_sim_result_cycles(const npu_sim_result *r) { return r ? r->r.stats.cycles : 0; }

int npu_sim_result_passed(const npu_sim_result *r) { return r && r->r.passed() ? 1 : 0; }

double npu_sim_result_efficiency(const npu_sim_result *r) { return r ? r->r.bound_analysis.efficiency : 0.0; }

const char *npu_sim_result_json(const npu_sim_result *r) { return r ? r->json.c_str() : nullptr; }

const void *npu_sim_result_tensor(const npu_sim_result *r, const char *name, npu_dtype *dtype, unsigned *rank,
                                  uint64_t shape[4])
{
    if (!r || !name)
        return nullptr;
    auto it = r->r.tensors.find(name);
    if (it == r->r.tensors.end())
        return nullptr;
    const npusim::NpyArray &a = it->second;
    if (dtype)
        *dtype = a.dtype;
    if (rank)
        *rank = unsigned(a.shape.size());
    if (shape)
        for (unsigned i = 0; i < 4; i++)
            shape[i] = i < a.shape.size() ? a.shape[i] : 0;
    return a.data.data();
}

void npu_sim_result_free(npu_sim_result *r) { delete r; }

}  // extern "C"
