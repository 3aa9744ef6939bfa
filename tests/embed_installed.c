/* What a user of the installed library writes: compiled by
 * tests/install_embed.py against a `meson install` tree through
 * `pkg-config --cflags --libs npusim`, never against the build tree.
 *
 *   embed_installed CONFIG.yaml KERNEL DTYPE N,C,H,W
 *
 * loads the config file, runs the kernel on generated inputs and prints one
 * line "cycles=N passed=0|1"; an error is one line on stderr, exit 1. */
#include <npusim/npusim.h>

#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s CONFIG.yaml KERNEL DTYPE N,C,H,W\n", argv[0]);
        return 2;
    }
    char err[512];
    npu_sim_config *cfg = npu_sim_config_load(argv[1], err, sizeof err);
    if (!cfg) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    npu_sim_run_options opts;
    npu_sim_run_options_default(&opts);
    opts.dtype = argv[3];
    if (sscanf(argv[4], "%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64, &opts.shape[0], &opts.shape[1],
               &opts.shape[2], &opts.shape[3]) != 4) {
        fprintf(stderr, "%s: the shape is N,C,H,W\n", argv[4]);
        npu_sim_config_free(cfg);
        return 2;
    }
    npu_sim_result *r = npu_sim_run(cfg, argv[2], &opts, err, sizeof err);
    npu_sim_config_free(cfg);
    if (!r) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("cycles=%" PRIu64 " passed=%d\n", npu_sim_result_cycles(r), npu_sim_result_passed(r) ? 1 : 0);
    npu_sim_result_free(r);
    return 0;
}
