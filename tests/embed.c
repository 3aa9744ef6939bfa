/* Embedding npusim from C through the public API alone: assemble a kernel,
 * run it functionally and with timing on one core, check the result. This
 * is what `pkg-config --cflags --libs npusim` users write. */
#include <npusim/npusim.h>

#include <stdio.h>
#include <string.h>

static const char kernel[] =
    "    vbcasti.f32 v31, 0.0\n"
    "    li s3, 64\n"
    "    dmald s0, s1, s3, 0\n"   /* 64 bytes of x into UB 0 */
    "    dmawait 0\n"
    "    vld.f32 v0, [s0]\n"
    "    vld.f32 v1, [s0 + 1 vl]\n"
    "    vmax.f32 v0, v0, v31\n"
    "    vmax.f32 v1, v1, v31\n"
    "    vst.f32 v0, [s0]\n"
    "    vst.f32 v1, [s0 + 1 vl]\n"
    "    dmast s0, s2, s3, 1\n"
    "    dmawait 1\n"
    "    halt\n";

int main(void)
{
    npu_program prog;
    npu_diag diag;
    npu_program_init(&prog);
    if (npu_assemble("embed.s", kernel, sizeof kernel - 1, NULL, &prog, &diag) != NPU_OK) {
        char line[512];
        npu_diag_format(&diag, line, sizeof line);
        fprintf(stderr, "%s\n", line);
        return 1;
    }
    float gm_data[32];
    for (int i = 0; i < 16; i++)
        gm_data[i] = (float)(i - 8);
    npu_gm gm = { (uint8_t *)gm_data, sizeof gm_data, NULL };
    npu_core_config cfg;
    npu_core_config_default(&cfg);
    cfg.ub_bytes = 32768;
    npu_core core;
    if (npu_core_init(&core, &cfg, &prog, &gm) != NPU_OK)
        return 1;
    core.s[1] = 0;  /* x at GM 0 */
    core.s[2] = 64; /* y at GM 64 */

    npu_timing_config tcfg;
    npu_timing_config_default(&tcfg);
    npu_timed_core *tc = npu_timed_core_new(&core, &tcfg);
    npu_run_limits lim = { 1000, 0 };
    unsigned trapped = npu_run_timed(&tc, 1, &lim);
    const npu_core_stats *st = npu_timed_stats(tc);
    int ok = trapped == 0;
    for (int i = 0; i < 16; i++)
        ok &= gm_data[16 + i] == (i - 8 > 0 ? (float)(i - 8) : 0.0f);
    printf("embed: %s, %llu instructions, %llu cycles\n", ok ? "ok" : "WRONG",
           (unsigned long long)st->instructions, (unsigned long long)st->cycles);
    npu_timed_core_free(tc);
    npu_core_fini(&core);
    npu_program_free(&prog);
    return ok ? 0 : 1;
}
