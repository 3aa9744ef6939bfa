// .npy reading and writing. The header is a Python dict literal; we accept
// exactly the keys numpy writes ('descr', 'fortran_order', 'shape').
#include "npy.h"

#include <cstring>

#include "atomic_file.h"
#include "error.h"

namespace npusim {
namespace {

const char kMagic[] = "\x93NUMPY";

struct HeaderParser {
    const std::string &s;
    size_t i = 0;
    const std::string &name;

    [[noreturn]] void fail(const std::string &what) const
    {
        throw Error(name + ": bad .npy header: " + what);
    }
    void skip_ws()
    {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t'))
            i++;
    }
    void expect(char c)
    {
        skip_ws();
        if (i >= s.size() || s[i] != c)
            fail(std::string("expected '") + c + "'");
        i++;
    }
    bool accept(char c)
    {
        skip_ws();
        if (i < s.size() && s[i] == c) {
            i++;
            return true;
        }
        return false;
    }
    std::string string_lit()
    {
        skip_ws();
        if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
            fail("expected a string");
        char q = s[i++];
        size_t start = i;
        while (i < s.size() && s[i] != q)
            i++;
        if (i >= s.size())
            fail("unterminated string");
        return s.substr(start, i++ - start);
    }
    uint64_t integer()
    {
        skip_ws();
        if (i >= s.size() || s[i] < '0' || s[i] > '9')
            fail("expected a dimension");
        uint64_t v = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            if (v > (UINT64_MAX - 9) / 10)
                fail("dimension too large");
            v = v * 10 + uint64_t(s[i++] - '0');
        }
        accept('L');
        return v;
    }
};

npu_dtype dtype_from_descr(const std::string &d, const std::string &name)
{
    if (d == "<f2")
        return NPU_F16;
    if (d == "<f4")
        return NPU_F32;
    if (d == "<i2")
        return NPU_I16;
    if (d == "<i4")
        return NPU_I32;
    throw Error(name + ": unsupported .npy dtype '" + d +
                "' (supported: <f2 float16, <f4 float32, <i2 int16, <i4 int32)");
}

const char *descr_of(npu_dtype dt)
{
    switch (dt) {
    case NPU_F16: return "<f2";
    case NPU_F32: return "<f4";
    case NPU_I16: return "<i2";
    case NPU_I32: return "<i4";
    }
    return "<f4";
}

}  // namespace

NpyArray parse_npy(const std::string &bytes, const std::string &name)
{
    if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
        throw Error(name + ": not a .npy file (bad magic)");
    unsigned major = uint8_t(bytes[6]);
    size_t header_len, header_start;
    if (major == 1) {
        header_len = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12)
            throw Error(name + ": truncated .npy header");
        header_len = 0;
        for (int k = 0; k < 4; k++)
            header_len |= size_t(uint8_t(bytes[8 + k])) << (8 * k);
        header_start = 12;
    } else {
        throw Error(name + ": unsupported .npy version " + std::to_string(major));
    }
    if (header_len > bytes.size() - header_start)
        throw Error(name + ": truncated .npy header");
    std::string header = bytes.substr(header_start, header_len);
    HeaderParser p{header, 0, name};
    NpyArray a;
    bool have_descr = false, have_order = false, have_shape = false;
    p.expect('{');
    while (!p.accept('}')) {
        std::string key = p.string_lit();
        p.expect(':');
        if (key == "descr") {
            a.dtype = dtype_from_descr(p.string_lit(), name);
            have_descr = true;
        } else if (key == "fortran_order") {
            p.skip_ws();
            if (header.compare(p.i, 5, "False") == 0) {
                p.i += 5;
            } else if (header.compare(p.i, 4, "True") == 0) {
                throw Error(name + ": Fortran-order .npy arrays are not supported");
            } else {
                p.fail("bad fortran_order");
            }
            have_order = true;
        } else if (key == "shape") {
            p.expect('(');
            bool comma = false;  // after the last dimension: Python's (1024) is a number, (1024,) a tuple
            while (!p.accept(')')) {
                a.shape.push_back(p.integer());
                if (a.shape.size() > 8)
                    p.fail("more than 8 dimensions");
                comma = p.accept(',');
                if (!comma) {
                    p.expect(')');
                    break;
                }
            }
            if (a.shape.size() == 1 && !comma)
                p.fail("shape (" + std::to_string(a.shape[0]) + ") is a number, not a tuple (one dimension is (" +
                       std::to_string(a.shape[0]) + ",))");
            have_shape = true;
        } else {
            p.fail("unknown key '" + key + "'");
        }
        if (!p.accept(',')) {
            p.expect('}');
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape)
        p.fail("missing descr, fortran_order or shape");
    uint64_t count = 1;
    for (uint64_t d : a.shape)
        if (__builtin_mul_overflow(count, d, &count))
            throw Error(name + ": .npy shape too large");
    uint64_t esize = npu_dtype_bytes(a.dtype), nbytes;
    if (__builtin_mul_overflow(count, esize, &nbytes))
        throw Error(name + ": .npy shape too large");
    size_t data_start = header_start + header_len;
    if (bytes.size() - data_start != nbytes)
        throw Error(name + ": .npy data is " + std::to_string(bytes.size() - data_start) +
                    " bytes, shape needs " + std::to_string(nbytes));
    a.data.assign(bytes.begin() + long(data_start), bytes.end());
    return a;
}

NpyArray read_npy(const std::string &path)
{
    return parse_npy(read_file(path), path);
}

std::string format_npy(const NpyArray &a)
{
    std::string header = std::string("{'descr': '") + descr_of(a.dtype) +
                         "', 'fortran_order': False, 'shape': (";
    for (size_t k = 0; k < a.shape.size(); k++)
        header += std::to_string(a.shape[k]) + (a.shape.size() == 1 || k + 1 < a.shape.size() ? ", " : "");
    if (a.shape.size() == 1)
        header.pop_back();  // "(5,)" not "(5, )"
    header += "), }";
    // Pad so the data starts on a 64-byte boundary, header ending in '\n'.
    size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string out(kMagic, 6);
    out += char(1);
    out += char(0);
    out += char(header.size() & 0xff);
    out += char(header.size() >> 8);
    out += header;
    out.append(reinterpret_cast<const char *>(a.data.data()), a.data.size());
    return out;
}

void write_npy(const std::string &path, const NpyArray &a)
{
    write_file_atomic(path, format_npy(a));
}

}  // namespace npusim
