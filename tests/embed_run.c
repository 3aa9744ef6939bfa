/* Running kernels from C through the public API alone (npusim/sim.h): a
 * config with an override, a kernel on generated inputs, a kernel on the
 * caller's array, errors as one line, and many runs in one process. What a
 * `pkg-config --cflags --libs npusim` user writes. Exit status 0: all held. */
#include <npusim/npusim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                 \
            fputc('\n', stderr);                          \
            failures++;                                   \
        }                                                 \
    } while (0)

int main(void)
{
    char err[256];
    npu_sim_config *cfg = npu_sim_config_default();
    CHECK(cfg != NULL, "no default config");
    if (!cfg)
        return 1;

    /* A bad override is one line naming the key, and leaves the config alone. */
    CHECK(npu_sim_config_set(cfg, "units.sfu.latency", "0", err, sizeof err) == NPU_EINVAL, "latency 0 taken");
    CHECK(strcmp(err, "units.sfu.latency: 0 is out of range (1 .. 10000 cycles)") == 0, "message: %s", err);
    CHECK(npu_sim_config_set(cfg, "units.sfu.latenc", "3", err, sizeof err) == NPU_EINVAL, "unknown key taken");
    CHECK(strcmp(err, "units.sfu.latenc: unknown key") == 0, "message: %s", err);
    CHECK(npu_sim_config_set(cfg, "units.sfu.latency", "30", err, sizeof err) == NPU_OK, "%s", err);
    char *yaml = npu_sim_config_yaml(cfg);
    CHECK(yaml && strstr(yaml, "latency: 30"), "the override is not in the YAML");
    free(yaml);

    /* An empty dtype is refused, as the CLI and Python refuse it (it ran as fp32). */
    npu_sim_run_options opts;
    npu_sim_run_options_default(&opts);
    opts.dtype = "";
    CHECK(npu_sim_run(cfg, "relu", &opts, err, sizeof err) == NULL, "an empty dtype ran");
    CHECK(strcmp(err, "dtype: unknown dtype '' (fp16, fp32)") == 0, "message: %s", err);

    /* gelu_tanh on generated fp16 inputs. */
    npu_sim_run_options_default(&opts);
    opts.dtype = "fp16";
    opts.shape[0] = 1, opts.shape[1] = 16, opts.shape[2] = 8, opts.shape[3] = 8;
    npu_sim_result *r = npu_sim_run(cfg, "gelu_tanh", &opts, err, sizeof err);
    CHECK(r != NULL, "gelu_tanh: %s", err);
    uint64_t cycles = 0;
    if (r) {
        cycles = npu_sim_result_cycles(r);
        CHECK(npu_sim_result_passed(r), "gelu_tanh failed its check");
        CHECK(cycles > 0, "no cycles");
        char want[64];
        snprintf(want, sizeof want, "\"cycles\":%llu,", (unsigned long long)cycles);
        CHECK(strstr(npu_sim_result_json(r), want) != NULL, "the JSON has not %s", want);
        CHECK(npu_sim_result_efficiency(r) > 0 && npu_sim_result_efficiency(r) <= 1, "efficiency");
        npu_dtype dt;
        unsigned rank;
        uint64_t shape[4];
        CHECK(npu_sim_result_tensor(r, "y", &dt, &rank, shape) != NULL, "no output y");
        CHECK(dt == NPU_F16 && rank == 4 && shape[1] == 16 && shape[3] == 8, "output y's dtype or shape");
        CHECK(npu_sim_result_tensor(r, "z", NULL, NULL, NULL) == NULL, "a tensor z");
        npu_sim_result_free(r);
    }

    /* relu on the caller's fp32 array, dtype and shape from it. */
    float x[2 * 3 * 4];
    for (unsigned i = 0; i < 24; i++)
        x[i] = (float)i - 11.5f;
    npu_sim_tensor in = {"x", NPU_F32, 3, {2, 3, 4, 0}, x};
    npu_sim_run_options_default(&opts);
    opts.inputs = &in;
    opts.num_inputs = 1;
    r = npu_sim_run(cfg, "relu", &opts, err, sizeof err);
    CHECK(r != NULL, "relu: %s", err);
    if (r) {
        unsigned rank;
        uint64_t shape[4];
        const float *y = npu_sim_result_tensor(r, "y", NULL, &rank, shape);
        CHECK(y && rank == 4 && shape[0] == 1 && shape[1] == 2 && shape[2] == 3 && shape[3] == 4, "y's shape");
        for (unsigned i = 0; y && i < 24; i++)
            CHECK(y[i] == (x[i] > 0 ? x[i] : 0.0f), "y[%u] = %g", i, (double)y[i]);
        npu_sim_result_free(r);
    }
    /* A shape given with the array must be the array's (it used to be dropped). */
    opts.shape[0] = 1, opts.shape[1] = 2, opts.shape[2] = 3, opts.shape[3] = 5;
    CHECK(npu_sim_run(cfg, "relu", &opts, err, sizeof err) == NULL, "a shape against the input ran");
    CHECK(strcmp(err, "input 'x': shape (1,2,3,4) does not match the run's NCHW shape (1,2,3,5)") == 0, "message: %s",
          err);
    opts.shape[3] = 4;
    r = npu_sim_run(cfg, "relu", &opts, err, sizeof err);
    CHECK(r != NULL, "relu with its input's shape: %s", err);
    npu_sim_result_free(r);

    /* matmul: 2-D fp16 a (M x K) and b (K x N) in, c (M x N) out, rank 2; shape 1, M, K, N. */
    uint16_t a[2 * 3], b[3 * 4];
    for (unsigned i = 0; i < 6; i++)
        a[i] = 0x3c00; /* 1.0 */
    for (unsigned i = 0; i < 12; i++)
        b[i] = 0x4000; /* 2.0 */
    npu_sim_tensor ab[2] = {{"a", NPU_F16, 2, {2, 3, 0, 0}, a}, {"b", NPU_F16, 2, {3, 4, 0, 0}, b}};
    npu_sim_run_options_default(&opts);
    opts.inputs = ab;
    opts.num_inputs = 2;
    opts.shape[0] = 1, opts.shape[1] = 2, opts.shape[2] = 3, opts.shape[3] = 4;
    r = npu_sim_run(cfg, "matmul", &opts, err, sizeof err);
    CHECK(r != NULL, "matmul: %s", err);
    if (r) {
        unsigned rank;
        uint64_t shape[4];
        const float *c = npu_sim_result_tensor(r, "c", NULL, &rank, shape);
        CHECK(c && rank == 2 && shape[0] == 2 && shape[1] == 4 && shape[2] == 0, "c's shape");
        for (unsigned i = 0; c && i < 8; i++)
            CHECK(c[i] == 6.0f, "c[%u] = %g", i, (double)c[i]);
        CHECK(npu_sim_result_tensor(r, "a", NULL, &rank, shape) && rank == 2 && shape[1] == 3, "a's shape");
        npu_sim_result_free(r);
    }
    opts.shape[1] = 4;
    CHECK(npu_sim_run(cfg, "matmul", &opts, err, sizeof err) == NULL, "a shape against the matrices ran");
    CHECK(strcmp(err, "input 'a': shape (2,3) does not match the run's M,K,N (4,3,4): a is M x K") == 0,
          "message: %s", err);

    /* The tiles given: the JSON says so; a cap not a multiple of 256 bytes is one line. */
    npu_sim_run_options_default(&opts);
    opts.tile_max = 32768;
    r = npu_sim_run(cfg, "relu", &opts, err, sizeof err);
    CHECK(r && strstr(npu_sim_result_json(r), "\"tile_max_bytes\":32768") != NULL, "tile_max: %s", r ? "not in the JSON" : err);
    npu_sim_result_free(r);
    opts.tile_max = 0;
    opts.measure_tiles = 1;
    r = npu_sim_run(cfg, "relu", &opts, err, sizeof err);
    CHECK(r && strstr(npu_sim_result_json(r), "\"reason\":\"measured\"") != NULL, "measure_tiles: %s",
          r ? "not in the JSON" : err);
    npu_sim_result_free(r);
    opts.measure_tiles = 0;
    opts.tile_max = 1000;
    CHECK(npu_sim_run(cfg, "relu", &opts, err, sizeof err) == NULL, "tile_max 1000 ran");
    CHECK(strncmp(err, "tile_max 1000: give a multiple of 256 bytes", 43) == 0, "message: %s", err);

    /* Bad input: NULL and one line. */
    CHECK(npu_sim_run(cfg, "no_such_kernel", NULL, err, sizeof err) == NULL, "an unknown kernel ran");
    CHECK(strncmp(err, "unknown kernel 'no_such_kernel'", 31) == 0, "message: %s", err);
    npu_sim_config *bad = npu_sim_config_parse("units:\n  sfu: {latency: x}\n", "mine.yaml", err, sizeof err);
    CHECK(bad == NULL, "a bad config parsed");
    CHECK(strncmp(err, "mine.yaml:2:18: units.sfu.latency: expected an integer", 54) == 0, "message: %s", err);
    CHECK(npu_sim_config_load("/nonexistent/c.yaml", err, sizeof err) == NULL, "a missing file loaded");
    CHECK(npu_sim_result_cycles(NULL) == 0 && !npu_sim_result_passed(NULL) && !npu_sim_result_json(NULL) &&
              !npu_sim_result_tensor(NULL, "y", NULL, NULL, NULL) && !npu_sim_config_yaml(NULL),
          "a getter of NULL");
    npu_sim_result_free(NULL);
    npu_sim_config_free(NULL);
    char tiny[8];
    CHECK(npu_sim_run(cfg, "no_such_kernel", NULL, tiny, sizeof tiny) == NULL && strlen(tiny) == 7, "cut");

    /* The same run again and again: the same cycles. */
    npu_sim_run_options_default(&opts);
    opts.dtype = "fp16";
    opts.shape[0] = 1, opts.shape[1] = 16, opts.shape[2] = 8, opts.shape[3] = 8;
    for (int i = 0; i < 200; i++) {
        r = npu_sim_run(cfg, "gelu_tanh", &opts, err, sizeof err);
        CHECK(r && npu_sim_result_cycles(r) == cycles, "run %d: %s", i, r ? "other cycles" : err);
        npu_sim_result_free(r);
    }
    npu_sim_config_free(cfg);
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
