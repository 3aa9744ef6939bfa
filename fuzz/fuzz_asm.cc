// libFuzzer target: the assembler on arbitrary source, with .include served
// from memory. The input is a main file, optionally followed by more files,
// each starting at a line `;;@file NAME`; kernels/lib/*.s are preloaded so
// the seed kernels' includes resolve.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "npusim/asm.h"

namespace {

std::map<std::string, std::string> g_lib;   // "lib/x4.s" -> text, loaded once
std::map<std::string, std::string> g_files; // this input's extra files

void load_lib()
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
}

int reader(void *, const char *path, char **text, size_t *len)
{
    std::string p = path;
    while (p.compare(0, 2, "./") == 0)
        p.erase(0, 2);
    const std::string *src = nullptr;
    auto f = g_files.find(p);
    if (f != g_files.end())
        src = &f->second;
    else if (auto l = g_lib.find(p); l != g_lib.end())
        src = &l->second;
    if (!src)
        return NPU_EIO;
    *text = static_cast<char *>(malloc(src->size() + 1));
    if (!*text)
        return NPU_ENOMEM;
    memcpy(*text, src->data(), src->size());
    (*text)[src->size()] = '\0';
    *len = src->size();
    return 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    load_lib();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string in(reinterpret_cast<const char *>(data), size);
    g_files.clear();
    const std::string mark = "\n;;@file ";
    size_t cut = in.find(mark);
    std::string main_text = in.substr(0, cut);
    while (cut != std::string::npos) {
        size_t name_start = cut + mark.size();
        size_t eol = in.find('\n', name_start);
        std::string name = in.substr(name_start, eol == std::string::npos ? std::string::npos : eol - name_start);
        size_t next = eol == std::string::npos ? std::string::npos : in.find(mark, eol);
        std::string body = eol == std::string::npos ? "" : in.substr(eol + 1, next == std::string::npos ? std::string::npos : next - eol - 1);
        g_files[name] = body;
        cut = next;
    }
    static const npu_asm_define defines[] = {{"DT", "f32"}};
    npu_asm_options opts{};
    static const char *const dirs[] = {"."};  // lib/ includes from inside lib/
    opts.include_dirs = dirs;
    opts.num_include_dirs = 1;
    opts.reader = reader;
    opts.defines = defines;
    opts.num_defines = size % 2;  // half the inputs see DT, half do not
    npu_program prog;
    npu_diag diag;
    npu_program_init(&prog);
    // An exact-size copy: npu_assemble takes (text, len), not a C string, so
    // a read one past the end must hit ASan's redzone, not std::string's NUL.
    std::unique_ptr<char[]> exact(new char[main_text.size() ? main_text.size() : 1]);
    memcpy(exact.get(), main_text.data(), main_text.size());
    if (npu_assemble("main.s", exact.get(), main_text.size(), &opts, &prog, &diag) == 0) {
        char buf[128];
        for (size_t i = 0; i < prog.count; i++)
            npu_disasm(&prog.insns[i], i, buf, sizeof buf);
    }
    npu_program_free(&prog);
    return 0;
}
