/* Run a kernel on a config, as `npusim run` does, from C: open a config (the
 * defaults, a YAML file or YAML text, then key = value overrides), run a
 * kernel by name or path on generated or given inputs, and read the result:
 * cycles, pass/fail, efficiency, every tensor, and the whole report as the
 * JSON `npusim run --json` prints. In the style of DRAMsim3's C entry points;
 * tests/embed_run.c is a complete example.
 *
 * Runs happen in the calling process, on the C engine (the figures of the
 * CLI's SystemC engine), one after another as often as the caller likes.
 * A call that fails returns NULL (or non-zero) and writes one line saying
 * what is wrong (`file:line:col: ...`, or the key path) into err, cut to
 * err_size bytes; err may be NULL. A kernel that runs and fails (a trap, a
 * limit, an accuracy failure) is a result with passed = 0, not an error.
 * The getters take NULL and give 0 (or NULL); the _free calls take NULL.
 * Runs may proceed in threads at once, each thread on its own objects (a
 * config, options, results): an object is not shared between threads while
 * in use. tests/embed_threads.c checks that runs in threads equal runs
 * alone. */
#ifndef NPUSIM_SIM_H
#define NPUSIM_SIM_H

#include "npusim/export.h"

#include <stddef.h>
#include <stdint.h>

#include "npusim/isa.h"
#include "npusim/run.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_sim_config npu_sim_config;
typedef struct npu_sim_result npu_sim_result;

/* The default config (configs/default.yaml). */
NPU_API npu_sim_config *npu_sim_config_default(void);
/* A YAML config file (`npusim config docs` lists the keys). */
NPU_API npu_sim_config *npu_sim_config_load(const char *path, char *err, size_t err_size);
/* YAML text; `name` stands for the file in messages. */
NPU_API npu_sim_config *npu_sim_config_parse(const char *yaml, const char *name, char *err, size_t err_size);
/* Sets one key (`units.sfu.latency`, "30"). Rules between keys (issue.width
 * and issue.slots) are checked when the config is run. 0, or NPU_EINVAL. */
NPU_API int npu_sim_config_set(npu_sim_config *cfg, const char *key, const char *value, char *err, size_t err_size);
/* The resolved config as YAML, malloc'ed: free() it. */
NPU_API char *npu_sim_config_yaml(const npu_sim_config *cfg);
NPU_API void npu_sim_config_free(npu_sim_config *cfg);

/* An input given by the caller: NCHW, `rank` 1 to 4 dimensions (fewer are
 * read with leading 1s), lanes of `dtype` (NPU_F16 as IEEE binary16 bits,
 * NPU_F32), C order. A per-channel input is 1-D, C long. The cube's kernels
 * (docs/cube.md) take matrices: matmul's a (M x K) and b (K x N) rank 2,
 * NPU_F16, a bias 1-D, N long, NPU_F32; conv2d's x (N, C, H, W) and w (cout,
 * cin, k, k) rank 4, NPU_F16. */
typedef struct npu_sim_tensor {
    const char *name;
    npu_dtype dtype;
    unsigned rank;
    uint64_t shape[4];
    const void *data;
} npu_sim_tensor;

typedef struct npu_sim_param {
    const char *name;
    double value;
} npu_sim_param;

typedef struct npu_sim_run_options {
    const char *dtype;        /* "fp16" or "fp32" ("" is refused); NULL: the first given input's, else fp32 */
    /* N, C, H, W (matmul: 1, M, K, N; conv2d: x's N, C, H, W); all 0: the
     * given inputs', else 1,16,8,8. Given with inputs, each input must have
     * it (err names the input, its shape and this one). */
    uint64_t shape[4];
    uint64_t seed;            /* of the generated inputs */
    int schedule;             /* non-zero: .pipeline loops modulo-scheduled for the config */
    uint64_t max_cycles;      /* per core; 0: no limit */
    uint64_t max_instructions;/* per core; 0: no limit; UINT64_MAX: derived from the work */
    const npu_sim_tensor *inputs;
    unsigned num_inputs;
    const npu_sim_param *params;
    unsigned num_params;
    /* Runs the timed cores in place of the library's C engine (npu_run_timed):
     * a SystemC platform's elaboration and sc_start (include/npusim/systemc/,
     * docs/systemc.md). It returns once every core has halted or trapped; the
     * run then goes on as usual (outputs, accuracy, report). NULL: the C
     * engine. Not called when the config is functional (sim.mode). */
    void (*engine)(void *engine_ctx, struct npu_timed_core *const *cores, unsigned num_cores,
                   const npu_run_limits *lim);
    void *engine_ctx;
    /* The kernels' tiles at most this many bytes (a multiple of 256, up to the
     * UB's bytes); 0: picked for the config and shape, as `npusim run` does
     * (docs/kernels.md, "Tiles"; the JSON's "tiling" says what was used). */
    uint64_t tile_max;
    /* Non-zero: measure the tiles (simulate the rule's pick and 16, 8, 4
     * and 2 KiB, keep the fastest), as `npusim run --tiling measure`; 0: the
     * rule. With a non-zero tile_max, an error (one fixes the tiles, the
     * other picks them). */
    int measure_tiles;
} npu_sim_run_options;

/* The defaults of `npusim run`: dtype and shape from the inputs, seed 1,
 * scheduled, no cycle limit, the derived instruction limit, no inputs. */
NPU_API void npu_sim_run_options_default(npu_sim_run_options *opts);

/* Runs `kernel` (a name from the kernels folder, or a path to a .s file) on
 * `cfg`. The kernels folder: $NPUSIM_KERNELS when set; an installed library
 * takes the installed copy (PREFIX/share/npusim/kernels), a library in its
 * build folder the source tree's. `opts` NULL: the defaults. NULL on bad
 * input (err says why). */
NPU_API npu_sim_result *npu_sim_run(const npu_sim_config *cfg, const char *kernel, const npu_sim_run_options *opts,
                                    char *err, size_t err_size);

NPU_API uint64_t npu_sim_result_cycles(const npu_sim_result *r);        /* the slowest core's */
NPU_API int npu_sim_result_passed(const npu_sim_result *r);             /* no trap, every element within its tolerance */
NPU_API double npu_sim_result_efficiency(const npu_sim_result *r);      /* bound / cycles */
/* The report of `npusim run --json`, NUL-terminated, owned by the result. */
NPU_API const char *npu_sim_result_json(const npu_sim_result *r);
/* A tensor after the run (inputs and outputs), C order, owned by the
 * result: NCHW (rank 4), or C (rank 1) for a per-channel input; for matmul
 * a matrix (rank 2: a M x K, b K x N, c M x N) or the bias (rank 1, N);
 * for conv2d x and y NCHW and w (cout, cin, k, k), rank 4. NULL if the
 * kernel has no tensor of that name. dtype, rank and shape may be NULL
 * (shape's dimensions past rank are 0). */
NPU_API const void *npu_sim_result_tensor(const npu_sim_result *r, const char *name, npu_dtype *dtype,
                                          unsigned *rank, uint64_t shape[4]);
NPU_API void npu_sim_result_free(npu_sim_result *r);

#ifdef __cplusplus
}
#endif

#endif
