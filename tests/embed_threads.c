/* Runs in threads at once (npusim/sim.h): each thread opens its own configs
 * and runs every job on them while the other threads do the same, with the
 * schedule cache emptied first, so the threads search and keep schedules in
 * the shared cache together. Every run's cycles, efficiency, pass, output
 * bytes and report equal those of the same run made alone beforehand. Exit
 * status 0: all held. A build with -Db_sanitize=thread finds any data race
 * of the library on this path (docs/reliability.md). */
#include <npusim/npusim.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 3, JOBS = 6 };

typedef struct job {
    const char *kernel, *dtype, *sfu_latency;
} job;

static const job jobs[JOBS] = {
    {"gelu_tanh", "fp16", "23"}, {"mish", "fp32", "23"}, {"relu", "fp16", "12"},
    {"silu", "fp16", "19"},      {"softplus", "fp32", "19"}, {"gelu_erf", "fp16", "23"},
};

typedef struct outcome {
    uint64_t cycles;
    double efficiency;
    int passed;
    char *json; /* the report without the host's timing ("sim": {...}) */
    unsigned char *y;
    size_t y_bytes;
} outcome;

static void outcome_free(outcome *o)
{
    free(o->json);
    free(o->y);
    memset(o, 0, sizeof *o);
}

/* One job on a config of its own; 0 on success, else prints why. */
static int run_job(const job *j, outcome *o)
{
    char err[256];
    memset(o, 0, sizeof *o);
    npu_sim_config *cfg = npu_sim_config_default();
    if (!cfg || npu_sim_config_set(cfg, "units.sfu.latency", j->sfu_latency, err, sizeof err) != NPU_OK) {
        fprintf(stderr, "config: %s\n", cfg ? err : "none");
        npu_sim_config_free(cfg);
        return 1;
    }
    npu_sim_run_options opts;
    npu_sim_run_options_default(&opts);
    opts.dtype = j->dtype;
    opts.shape[0] = 1, opts.shape[1] = 16, opts.shape[2] = 12, opts.shape[3] = 12;
    npu_sim_result *r = npu_sim_run(cfg, j->kernel, &opts, err, sizeof err);
    npu_sim_config_free(cfg);
    if (!r) {
        fprintf(stderr, "%s: %s\n", j->kernel, err);
        return 1;
    }
    o->cycles = npu_sim_result_cycles(r);
    o->efficiency = npu_sim_result_efficiency(r);
    o->passed = npu_sim_result_passed(r);
    o->json = strdup(npu_sim_result_json(r) ? npu_sim_result_json(r) : "");
    char *sim = o->json ? strstr(o->json, "\"sim\":{") : NULL, *end = sim ? strchr(sim, '}') : NULL;
    if (end) /* a flat object: seconds and rates of this host */
        memmove(sim, end + 1, strlen(end + 1) + 1);
    npu_dtype dt;
    unsigned rank;
    uint64_t shape[4];
    const void *y = npu_sim_result_tensor(r, "y", &dt, &rank, shape);
    o->y_bytes = y ? (size_t)(shape[0] * shape[1] * shape[2] * shape[3]) * (dt == NPU_F16 ? 2 : 4) : 0;
    o->y = malloc(o->y_bytes ? o->y_bytes : 1);
    if (y && o->y)
        memcpy(o->y, y, o->y_bytes);
    npu_sim_result_free(r);
    return !o->json || !o->y;
}

static outcome alone[JOBS];

typedef struct worker {
    unsigned first; /* each thread starts at another job */
    int failures;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (unsigned k = 0; k < JOBS; k++) {
        const unsigned i = (w->first + k) % JOBS;
        outcome o;
        if (run_job(&jobs[i], &o) != 0) {
            w->failures++;
            outcome_free(&o);
            continue;
        }
        const outcome *a = &alone[i];
        if (o.cycles != a->cycles || o.efficiency != a->efficiency || o.passed != a->passed ||
            o.y_bytes != a->y_bytes || memcmp(o.y, a->y, o.y_bytes) != 0 || strcmp(o.json, a->json) != 0) {
            fprintf(stderr, "%s %s (sfu latency %s) beside other threads: %llu cycles, alone %llu%s\n",
                    jobs[i].kernel, jobs[i].dtype, jobs[i].sfu_latency, (unsigned long long)o.cycles,
                    (unsigned long long)a->cycles, o.cycles == a->cycles ? " (the outputs or report differ)" : "");
            w->failures++;
        }
        outcome_free(&o);
    }
    return NULL;
}

int main(void)
{
    int failures = 0;
    /* The answers: each job alone. */
    for (unsigned i = 0; i < JOBS; i++)
        if (run_job(&jobs[i], &alone[i]) != 0 || !alone[i].passed) {
            fprintf(stderr, "%s %s alone did not pass\n", jobs[i].kernel, jobs[i].dtype);
            failures++;
        }
    /* Then every job in every thread at once, the schedules forgotten: the
     * threads search them again, together, and share what they find. */
    npu_asm_cache_clear();
    worker w[THREADS];
    pthread_t t[THREADS];
    for (unsigned k = 0; k < THREADS; k++) {
        w[k] = (worker){ .first = k * JOBS / THREADS, .failures = 0 };
        if (pthread_create(&t[k], NULL, work, &w[k]) != 0) {
            fprintf(stderr, "no thread\n");
            return 1;
        }
    }
    for (unsigned k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        failures += w[k].failures;
    }
    for (unsigned i = 0; i < JOBS; i++)
        outcome_free(&alone[i]);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
