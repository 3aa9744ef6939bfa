// libFuzzer target: executes programs on one functional core, where UBSan
// finds what parsers never reach (shifts, overflow, lane conversions). The
// input is assembly (assembled with DT = f16 or f32) or, when it does not
// assemble, raw 64-bit words, each either an instruction or NPU_OP_INVALID.
#include <cstdint>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "npusim/asm.h"
#include "npusim/core.h"
#include "npusim/program.h"

namespace {

// kernels/lib/*.s, loaded once, so the seed kernels assemble and run whole.
std::map<std::string, std::string> g_lib;

int lib_reader(void *, const char *path, char **text, size_t *len)
{
    std::string p = path;
    while (p.compare(0, 2, "./") == 0)
        p.erase(0, 2);
    auto it = g_lib.find(p);
    if (it == g_lib.end())
        return NPU_EIO;
    *text = static_cast<char *>(malloc(it->second.size() + 1));
    if (!*text)
        return NPU_ENOMEM;
    memcpy(*text, it->second.data(), it->second.size());
    (*text)[it->second.size()] = '\0';
    *len = it->second.size();
    return 0;
}

bool load(const uint8_t *data, size_t size, npu_program *prog, bool f16)
{
    npu_asm_define defines[] = {{"DT", f16 ? "f16" : "f32"}, {"DT_BYTES", f16 ? "2" : "4"}};
    npu_asm_options opts{};
    static const char *const dirs[] = {"."};
    opts.include_dirs = dirs;
    opts.num_include_dirs = 1;
    opts.reader = lib_reader;
    opts.defines = defines;
    opts.num_defines = 2;
    if (npu_assemble("exec.s", reinterpret_cast<const char *>(data), size, &opts, prog, nullptr) == 0)
        return true;
    std::vector<uint8_t> bin(16 + size / 8 * 8);
    std::memcpy(bin.data(), "NPUSIMB1", 8);
    uint32_t count = uint32_t(size / 8);
    for (int i = 0; i < 4; i++)
        bin[8 + i] = uint8_t(count >> (8 * i));
    std::memcpy(bin.data() + 16, data, size / 8 * 8);
    return npu_program_read_binary(prog, bin.data(), bin.size(), "exec.bin", nullptr) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    std::string dir = std::string(NPUSIM_SOURCE_ROOT) + "/kernels/lib";
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() < 3 || n.compare(n.size() - 2, 2, ".s") != 0)
                continue;
            std::ifstream in(dir + "/" + n, std::ios::binary);
            std::ostringstream ss;
            ss << in.rdbuf();
            g_lib["lib/" + n] = ss.str();
        }
        closedir(d);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    const bool f16 = size % 2;
    npu_program prog;
    npu_program_init(&prog);
    if (!load(data, size, &prog, f16) || prog.count == 0) {
        npu_program_free(&prog);
        return 0;
    }
    static std::vector<uint8_t> gm_bytes(1 << 16);
    std::memset(gm_bytes.data(), 0x3c, gm_bytes.size());
    npu_gm gm{gm_bytes.data(), gm_bytes.size(), nullptr};
    npu_core_config cfg{};
    cfg.vlen_bits = 128u << (size % 5);  // 128 .. 2048
    cfg.ub_bytes = 32768;
    cfg.num_cores = 1;
    cfg.sfu_mode = size % 3 ? NPU_SFU_EXACT : NPU_SFU_APPROX;
    cfg.sfu_bits = 8 + unsigned(size % 17);
    cfg.race_check = size % 4 != 0;  // the race check (docs/timing.md T14) on three inputs in four
    auto core = std::make_unique<npu_core>();
    if (npu_core_init(core.get(), &cfg, &prog, &gm) != 0) {
        npu_program_free(&prog);
        return 0;
    }
    // As the runner sets them: tensor addresses, then the shape SPRs of an
    // 1x20x3x3 tensor (a partial C1 block, so tails and padding run).
    const uint64_t esize = f16 ? 2 : 4, c0 = 32 / esize, c1 = (20 + c0 - 1) / c0;
    core->s[1] = 0;
    core->s[2] = 16384;
    core->s[3] = 32768;
    core->spr[NPU_SPR_SHAPE_N] = 1;
    core->spr[NPU_SPR_SHAPE_C] = 20;
    core->spr[NPU_SPR_SHAPE_H] = 3;
    core->spr[NPU_SPR_SHAPE_W] = 3;
    core->spr[NPU_SPR_SHAPE_C1] = c1;
    core->spr[NPU_SPR_SHAPE_C0] = c0;
    core->spr[NPU_SPR_ELEMS] = c1 * 9 * c0;
    core->spr[NPU_SPR_ESIZE] = esize;
    npu_step_info info;
    for (int step = 0; step < 200000; step++) {
        npu_core_state st = npu_core_step(core.get(), &info);
        if (st == NPU_CORE_AT_BARRIER)
            core->state = NPU_CORE_RUNNING;  // one core: every barrier completes
        else if (st != NPU_CORE_RUNNING)
            break;
    }
    npu_core_fini(core.get());
    npu_program_free(&prog);
    return 0;
}
