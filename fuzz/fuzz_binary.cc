// libFuzzer target: the binary program loader and the disassembler of every
// word it accepts (including NPU_OP_INVALID ones), plus a decode of each word.
#include <cstdint>
#include <cstring>

#include "npusim/isa.h"
#include "npusim/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npu_program prog;
    npu_diag diag;
    if (npu_program_read_binary(&prog, data, size, "fuzz.bin", &diag) == 0) {
        char buf[128];
        for (size_t i = 0; i < prog.count; i++)
            npu_disasm(&prog.insns[i], i, buf, sizeof buf);
        npu_program_free(&prog);
    }
    // Raw words too, so the decoder sees inputs without a valid header.
    for (size_t off = 0; off + 8 <= size; off += 8) {
        uint64_t w;
        memcpy(&w, data + off, 8);
        npu_insn insn;
        if (npu_decode(w, &insn) == 0) {
            char buf[128];
            npu_disasm(&insn, off / 8, buf, sizeof buf);
        }
    }
    return 0;
}
