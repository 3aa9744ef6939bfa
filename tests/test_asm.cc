// The assembler (labels, literals, .equ, expressions, macros, includes, the
// li pseudo), its error messages and positions, and the program binary.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "npusim/asm.h"
#include "npusim/fp16.h"
#include "npusim/program.h"
}

namespace {

struct Assembled {
    int rc = 0;
    npu_program prog{};
    npu_diag diag{};
    Assembled() = default;
    Assembled(const Assembled &) = delete;
    Assembled &operator=(const Assembled &) = delete;
    ~Assembled() { npu_program_free(&prog); }
    const npu_insn &operator[](size_t i) const { return prog.insns[i]; }
};

void Assemble(Assembled &a, const std::string &src, const npu_asm_options *opts = nullptr,
              const char *name = "test.s")
{
    a.rc = npu_assemble(name, src.data(), src.size(), opts, &a.prog, &a.diag);
}

#define ASSEMBLE_OK(a, src)                                                                \
    Assembled a;                                                                           \
    Assemble(a, src);                                                                      \
    ASSERT_EQ(a.rc, NPU_OK) << a.diag.line << ":" << a.diag.col << ": " << a.diag.message

// Checks the one error an input produces: message, line and column.
void ExpectError(const std::string &src, int line, int col, const std::string &message)
{
    Assembled a;
    Assemble(a, src);
    EXPECT_EQ(a.rc, NPU_ESYNTAX) << src;
    EXPECT_EQ(std::string(a.diag.message), message) << src;
    EXPECT_EQ(a.diag.line, line) << src;
    EXPECT_EQ(a.diag.col, col) << src;
    EXPECT_STREQ(a.diag.file, "test.s");
    EXPECT_EQ(a.prog.count, 0u);
    EXPECT_EQ(a.prog.words, nullptr);
}

uint32_t F32(float f) { return npu_f32_bits(f); }

// A folder under /tmp removed with everything in it.
class TempDir {
public:
    TempDir()
    {
        char tmpl[] = "/tmp/npusim-asm-XXXXXX";
        path_ = mkdtemp(tmpl);
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    std::string Write(const std::string &rel, const std::string &text) const
    {
        std::string p = path_ + "/" + rel;
        std::filesystem::create_directories(std::filesystem::path(p).parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
    const std::string &path() const { return path_; }

private:
    std::string path_;
};

struct FileResult {
    int rc;
    npu_program prog{};
    npu_diag diag{};
    ~FileResult() { npu_program_free(&prog); }
};

} // namespace

// ---- labels ---------------------------------------------------------------

TEST(Asm, ForwardAndBackwardLabelsBecomePcRelative)
{
    ASSEMBLE_OK(a, "top:\n"
                   "  nop\n"
                   "  beq s1, s2, done   ; forward\n"
                   "  j top              # backward\n"
                   "done: halt\n");
    ASSERT_EQ(a.prog.count, 4u);
    EXPECT_EQ(a[1].op, NPU_OP_BEQ);
    EXPECT_EQ(a[1].imm, 2);
    EXPECT_EQ(a[2].op, NPU_OP_J);
    EXPECT_EQ(a[2].imm, -2);
    EXPECT_EQ(a.prog.words[2], npu_encode(&a[2]));
}

TEST(Asm, LabelsShareALineAndMayStack)
{
    ASSEMBLE_OK(a, "a: b: nop\nc: loop s3, a\n bnez s1, b\n");
    EXPECT_EQ(a[1].imm, -1);
    EXPECT_EQ(a[2].imm, -2);
}

TEST(Asm, AbsoluteIndexTargetBecomesRelative)
{
    ASSEMBLE_OK(a, "nop\nnop\nnop\nj @1\njal s1, @7\nnop\nnop\nhalt\n");
    EXPECT_EQ(a[3].imm, -2);
    EXPECT_EQ(a[4].imm, 3);
}

TEST(Asm, LabelAfterTheLastInstructionIsAllowed)
{
    ASSEMBLE_OK(a, "nop\nend:\n");
    EXPECT_EQ(a.prog.count, 1u);
}

// The core would trap at the branch ("branch to instruction 2, outside the
// program (0..1)"); the assembler knows the program's length and says so
// first, for labels and @N alike (macros and includes expanded).
TEST(Asm, ABranchTargetOutsideTheProgramIsAnError)
{
    ExpectError("j @1000000\nhalt\n", 1, 3, "branch target @1000000 is outside the program (0..1)");
    ExpectError("j @-1\nhalt\n", 1, 3, "branch target @-1 is outside the program (0..1)");
    ExpectError("nop\n  beq s1, s2, @3\nhalt\n", 2, 15, "branch target @3 is outside the program (0..2)");
    ExpectError("jal s1, @18446744073709551615\n", 1, 9,
                "branch target @18446744073709551615 is outside the program (0..0)");
    ExpectError("j end\nhalt\nend:\n", 1, 3, "branch target 'end' is instruction 2, outside the program (0..1)");
    ExpectError(".macro skip\n  bnez s1, out\\@\nout\\@:\n.endm\nnop\nskip\n", 2, 12,
                "branch target 'out1' is instruction 2, outside the program (0..1)");
    ASSEMBLE_OK(a, "top: nop\nj @1\nbnez s1, top\nj @3\n");
    EXPECT_EQ(a[1].imm, 0);
    EXPECT_EQ(a[2].imm, -2);
    EXPECT_EQ(a[3].imm, 0);
}

TEST(Asm, ThousandsOfLabels)
{
    std::string src;
    for (int i = 0; i < 20000; i++)
        src += "l" + std::to_string(i) + ": j l" + std::to_string(19999 - i) + "\n";
    ASSEMBLE_OK(a, src);
    ASSERT_EQ(a.prog.count, 20000u);
    EXPECT_EQ(a[0].imm, 19999);
    EXPECT_EQ(a[19999].imm, -19999);
}

// ---- literals, constants, expressions ---------------------------------------

TEST(Asm, IntegerLiterals)
{
    ASSEMBLE_OK(a, "addi s1, s2, 42\naddi s1, s2, -7\naddi s1, s2, 0x2A\naddi s1, s2, 0b101\n"
                   "addi s1, s2, -2147483648\naddi s1, s2, 2147483647\n");
    EXPECT_EQ(a[0].imm, 42);
    EXPECT_EQ(a[1].imm, -7);
    EXPECT_EQ(a[2].imm, 42);
    EXPECT_EQ(a[3].imm, 5);
    EXPECT_EQ(a[4].imm, INT32_MIN);
    EXPECT_EQ(a[5].imm, INT32_MAX);
}

// An integer literal is its value, anywhere from -2^63 to 2^64 - 1 (a 64-bit
// word or register value written signed or unsigned), and each operand takes
// what fits it; beyond that range a literal or a result is an error. Before,
// 2^63 .. 2^64 - 1 wrapped to negatives: -18446744073709551615 was 1 and
// `.if 18446744073709551615 < 0` was true.
TEST(Asm, IntegerLiteralsKeepTheirValueFromMinus2To63To2To64Minus1)
{
    ASSEMBLE_OK(a, "li s1, -9223372036854775808\n"
                   "li s2, 18446744073709551615\n"
                   "li s3, 9223372036854775808 - 1\n"
                   "addi s4, s4, -9223372036854775808 / 4294967296\n"
                   ".if 18446744073709551615 < 0\n"
                   ".error \"wrapped\"\n"
                   ".endif\n"
                   ".if 9223372036854775808 > 9223372036854775807\n"
                   ".word 0xffffffffffffffff\n"
                   ".endif\n"
                   ".word -1\n"
                   ".word 0xff00000000000001 + 1\n");
    ASSERT_EQ(a.prog.count, 9u);
    EXPECT_EQ(a[0].imm, 0);  // li 0, lih 0x80000000
    EXPECT_EQ(a[1].op, NPU_OP_LIH);
    EXPECT_EQ(a[1].imm, INT32_MIN);
    EXPECT_EQ(a[2].op, NPU_OP_LI);  // all ones: one li, as -1 is
    EXPECT_EQ(a[2].imm, -1);
    EXPECT_EQ(a[3].imm, -1);  // 0x7fffffffffffffff: li -1, lih 0x7fffffff
    EXPECT_EQ(a[4].imm, INT32_MAX);
    EXPECT_EQ(a[5].imm, INT32_MIN);
    EXPECT_EQ(a.prog.words[6], UINT64_MAX);
    EXPECT_EQ(a.prog.words[7], UINT64_MAX);
    EXPECT_EQ(a.prog.words[8], 0xff00000000000002ull);

    ExpectError("addi s1, s2, -18446744073709551615\n", 1, 14,
                "integer overflow in expression: -18446744073709551615 is outside -2^63 .. 2^64 - 1");
    ExpectError("addi s1, s2, 18446744073709551615 + 2\n", 1, 35,
                "integer overflow in expression: 18446744073709551615 + 2 is outside -2^63 .. 2^64 - 1");
    ExpectError("addi s1, s2, 0xffffffffffffffff\n", 1, 14,
                "immediate 18446744073709551615 out of range for a 32-bit signed immediate");
    ExpectError("addi s1, s2, 9223372036854775808 - 1\n", 1, 14,
                "immediate 9223372036854775807 out of range for a 32-bit signed immediate");
    ExpectError("vld.f32 v1, [s2 + 18446744073709551615]\n", 1, 19,
                "offset 18446744073709551615 out of range for a 32-bit signed offset");
    ExpectError("vld.f32 v1, [s2 - 18446744073709551615]\n", 1, 19,
                "offset -18446744073709551615 out of range for a 32-bit signed offset");
    ExpectError("li s1, -9223372036854775809\n", 1, 8,
                "integer overflow in expression: -9223372036854775809 is outside -2^63 .. 2^64 - 1");
    ExpectError("li s1, -(-9223372036854775808) * 2\n", 1, 32,
                "integer overflow in expression: 9223372036854775808 * 2 is outside -2^63 .. 2^64 - 1");
    ExpectError("addi s1, s2, 18446744073709551616\n", 1, 14,
                "integer literal '18446744073709551616' out of range (at most 18446744073709551615, 2^64 - 1)");
    ExpectError(".word 0x10000000000000000\n", 1, 7,
                "integer literal '0x10000000000000000' out of range (at most 18446744073709551615, 2^64 - 1)");
    ExpectError("addi s1, s2, 99999999999999999999x\n", 1, 14, "malformed number '99999999999999999999x'");
    ExpectError("vadd.f32 v[18446744073709551615], v1, v2\n", 1, 12,
                "no register v18446744073709551615 (vector registers are v0..v31)");
}

TEST(Asm, FloatLiteralsRoundOnceToTheLaneType)
{
    ASSEMBLE_OK(a, "lf s1, 0.044715\n"
                   "lf s1, 1e-3\n"
                   "lf s1, 0x1p-3\n"
                   "lf s1, -2.5\n"
                   "lf s1, 3\n"
                   "lf s1, inf\n"
                   "lf s1, -inf\n"
                   "lf s1, nan\n"
                   "vbcasti.f32 v1, .5\n"
                   "vbcasti.f16 v1, 1.0\n"
                   "vbcasti.f16 v1, -0.5\n"
                   "vbcasti.f16 v1, 0x1p-24\n"
                   "vbcasti.i32 v1, -3\n"
                   "vbcasti.i16 v1, 0xffff\n"
                   "lf s1, bits(0x7fc00001)\n"
                   "vbcasti.f16 v1, bits(0x7e01)\n"
                   "vbcasti.i16 v1, bits(0xffff)\n"
                   "vmuli.f32 v1, v2, bits(0xffc00001)\n");
    EXPECT_EQ((uint32_t)a[0].imm, F32(0.044715f));
    EXPECT_EQ((uint32_t)a[1].imm, F32(1e-3f));
    EXPECT_EQ((uint32_t)a[2].imm, 0x3e000000u);
    EXPECT_EQ((uint32_t)a[3].imm, F32(-2.5f));
    EXPECT_EQ((uint32_t)a[4].imm, F32(3.0f));
    EXPECT_EQ((uint32_t)a[5].imm, 0x7f800000u);
    EXPECT_EQ((uint32_t)a[6].imm, 0xff800000u);
    EXPECT_EQ((uint32_t)a[7].imm, 0x7fc00000u);
    EXPECT_EQ((uint32_t)a[8].imm, F32(0.5f));
    EXPECT_EQ(a[9].imm, 0x3c00);
    EXPECT_EQ(a[10].imm, 0xb800);
    EXPECT_EQ(a[11].imm, 0x0001); // smallest binary16 subnormal
    EXPECT_EQ(a[12].imm, -3);
    EXPECT_EQ(a[13].imm, -1); // i16 literals are kept sign-extended
    EXPECT_EQ((uint32_t)a[14].imm, 0x7fc00001u);
    EXPECT_EQ(a[15].imm, 0x7e01);      // an f16 pattern, zero-extended as its literals are
    EXPECT_EQ(a[16].imm, -1);          // an i16 pattern, sign-extended as its literals are
    EXPECT_EQ((uint32_t)a[17].imm, 0xffc00001u);
}

// A non-zero literal that rounds to zero in the lane type is an error, as one
// that rounds to infinity is (vaddi.f32 v1, v2, 1e-50 added 0.0); the
// smallest subnormals still assemble.
TEST(Asm, FloatLiteralsThatUnderflowAreErrors)
{
    ExpectError("vaddi.f32 v1, v2, 1e-50\n", 1, 19,
                "literal 1e-50 underflows f32 (smallest non-zero value is 1.40129846e-45)");
    ExpectError("vaddi.f16 v1, v2, 1e-10\n", 1, 19,
                "literal 1e-10 underflows f16 (smallest non-zero value is 5.96046448e-08)");
    ExpectError("lf s1, -0x1p-151\n", 1, 8,
                "literal -3.50324616e-46 underflows f32 (smallest non-zero value is 1.40129846e-45)");
    ExpectError("vbcasti.f16 v1, 0x1p-26\n", 1, 17,
                "literal 1.49011612e-08 underflows f16 (smallest non-zero value is 5.96046448e-08)");
    ASSEMBLE_OK(a, "lf s1, 0x1p-149\nvbcasti.f16 v1, 0x1p-24\nvbcasti.f16 v1, 0x1.8p-25\nlf s1, -0.0\n"
                   "vbcasti.f16 v1, 0.0\n");
    EXPECT_EQ(a[0].imm, 1);
    EXPECT_EQ(a[1].imm, 1);
    EXPECT_EQ(a[2].imm, 1);  // 1.5 x 2^-25 rounds up to 2^-24
    EXPECT_EQ((uint32_t)a[3].imm, 0x80000000u);
    EXPECT_EQ(a[4].imm, 0);
}

// `-nan` is the canonical quiet NaN with its sign bit set, as written (it
// was the positive one); the disassembler prints it back as `-nan`.
TEST(Asm, MinusNanKeepsItsSign)
{
    ASSEMBLE_OK(a, "lf s1, -nan\nvbcasti.f16 v1, -nan\nvaddi.f32 v1, v2, -(-nan)\nvbcasti.f16 v1, nan\n");
    EXPECT_EQ((uint32_t)a[0].imm, 0xffc00000u);
    EXPECT_EQ(a[1].imm, 0xfe00);
    EXPECT_EQ((uint32_t)a[2].imm, 0x7fc00000u);
    EXPECT_EQ(a[3].imm, 0x7e00);
    char buf[64];
    npu_disasm(&a[0], 0, buf, sizeof buf);
    EXPECT_STREQ(buf, "lf s1, -nan");
    npu_disasm(&a[1], 1, buf, sizeof buf);
    EXPECT_STREQ(buf, "vbcasti.f16 v1, -nan");
}

// A float literal is read whole however many digits it has (past 1,024
// characters it was "malformed number").
TEST(Asm, LongFloatLiteralsAreRead)
{
    const std::string digits = "0." + std::string(2000, '0') + "1e2001";
    ASSEMBLE_OK(a, "lf s1, " + digits + "\nlf s2, 1." + std::string(3000, '0') + "\n");
    EXPECT_EQ((uint32_t)a[0].imm, F32(1.0f));
    EXPECT_EQ((uint32_t)a[1].imm, F32(1.0f));
    ExpectError("lf s1, 1." + std::string(3000, '0') + "x\n", 1, 8, "malformed number '1." + std::string(46, '0') + "...'");
}

// A float literal is rounded once to its operand's type (docs/isa.md), not
// to binary64 and then again: decimals just past a binary32 or binary16
// midpoint, whose nearest binary64 is the midpoint itself, round up, as does
// one just above half the least binary16 subnormal (it was "underflows
// f16"); negated and named literals alike. An expression computes in
// binary64 and rounds its result.
TEST(Asm, FloatLiteralsAreRoundedOnce)
{
    ASSEMBLE_OK(a, "lf s1, 1.000000059604644775390625000001\n"
                   "lf s2, -1.000000059604644775390625000001\n"
                   "vbcasti.f16 v1, 1.00048828125000000001\n"
                   "vbcasti.f16 v2, 2.98023223876953126e-08\n"
                   ".equ MID, 1.000000059604644775390625000001\n"
                   "lf s3, MID\n"
                   "lf s4, 1.000000059604644775390625\n"
                   "lf s5, MID * 1\n"
                   "vbcasti.f16 v3, 65519.9999999999999999\n");
    EXPECT_EQ((uint32_t)a[0].imm, 0x3f800001u);
    EXPECT_EQ((uint32_t)a[1].imm, 0xbf800001u);
    EXPECT_EQ(a[2].imm, 0x3c01);
    EXPECT_EQ(a[3].imm, 0x0001);
    EXPECT_EQ((uint32_t)a[4].imm, 0x3f800001u);
    EXPECT_EQ((uint32_t)a[5].imm, 0x3f800000u);  // the midpoint exactly: to even
    EXPECT_EQ((uint32_t)a[6].imm, 0x3f800000u);  // binary64's product is the midpoint
    EXPECT_EQ(a[7].imm, 0x7bff);                 // 65504, not "overflows f16"
}

TEST(Asm, EquNamesIntegerAndFloatConstants)
{
    ASSEMBLE_OK(a, ".equ TILE, 64\n"
                   ".equ BYTES, TILE * 2\n"
                   ".equ GELU_C, 0.044715\n"
                   ".equ HALF_C, GELU_C / 2\n"
                   "addi s1, s1, BYTES\n"
                   "lf s2, GELU_C\n"
                   "lf s3, HALF_C\n"
                   "vld.f16 v1, [s4 + TILE]\n");
    EXPECT_EQ(a[0].imm, 128);
    EXPECT_EQ((uint32_t)a[1].imm, F32(0.044715f));
    EXPECT_EQ((uint32_t)a[2].imm, F32((float)(0.044715 / 2)));
    EXPECT_EQ(a[3].imm, 64);
}

TEST(Asm, ExpressionsUseIntegerArithmeticUntilAFloatAppears)
{
    ASSEMBLE_OK(a, "addi s1, s1, 7 / 2\n"
                   "addi s1, s1, -7 / 2\n"
                   "addi s1, s1, (1 + 2) * -(3 - 5)\n"
                   "lf s1, 7 / 2.0\n"
                   "vld.f32 v1, [s2 - 4 * 8]\n"
                   "vld.f32 v1, [s2 + (2 - 3) * 4]\n");
    EXPECT_EQ(a[0].imm, 3);
    EXPECT_EQ(a[1].imm, -3);
    EXPECT_EQ(a[2].imm, 6);
    EXPECT_EQ((uint32_t)a[3].imm, F32(3.5f));
    EXPECT_EQ(a[4].imm, -32);
    EXPECT_EQ(a[5].imm, -4);
}

TEST(Asm, SpecialRegistersByName)
{
    ASSEMBLE_OK(a, "srd s1, lanes.f32\nsrd s2, vlenb\nsrd s3, shape.c0\n");
    EXPECT_EQ(a[0].imm, NPU_SPR_LANES_F32);
    EXPECT_EQ(a[1].imm, NPU_SPR_VLENB);
    EXPECT_EQ(a[2].imm, NPU_SPR_SHAPE_C0);
}

TEST(Asm, TrailingPredicateMasksTheInstruction)
{
    ASSEMBLE_OK(a, "vadd.f32 v1, v2, v3, p5\nvadd.f32 v1, v2, v3\nvfma.f16 v0, v1, v2, v3, p1\n");
    EXPECT_EQ(a[0].pm, 1);
    EXPECT_EQ(a[0].pg, 5);
    EXPECT_EQ(a[1].pm, 0);
    EXPECT_EQ(a[2].rs3, 3);
    EXPECT_EQ(a[2].pg, 1);
}

TEST(Asm, LiPseudoExpandsTo64Bits)
{
    ASSEMBLE_OK(a, "li s1, -5\n"
                   "li s2, 0x123456789\n"
                   "li s3, 0xffffffff\n"
                   "li s4, 0xffffffffffffffff\n"
                   "li s5, -0x80000001\n");
    ASSERT_EQ(a.prog.count, 8u);
    EXPECT_EQ(a[0].op, NPU_OP_LI);
    EXPECT_EQ(a[0].imm, -5);
    EXPECT_EQ(a[1].op, NPU_OP_LI);
    EXPECT_EQ(a[1].imm, 0x23456789);
    EXPECT_EQ(a[2].op, NPU_OP_LIH);
    EXPECT_EQ(a[2].rd, 2);
    EXPECT_EQ(a[2].imm, 1);
    EXPECT_EQ(a[3].imm, -1); // sign-extends to all ones ...
    EXPECT_EQ(a[4].op, NPU_OP_LIH);
    EXPECT_EQ(a[4].imm, 0); // ... and lih clears the high half
    EXPECT_EQ(a[5].op, NPU_OP_LI); // -1 fits: one instruction
    EXPECT_EQ(a[5].imm, -1);
    EXPECT_EQ(a[6].rd, 5); // -0x80000001 = 0xffffffff_7fffffff
    EXPECT_EQ(a[6].imm, INT32_MAX);
    EXPECT_EQ(a[7].op, NPU_OP_LIH);
    EXPECT_EQ(a[7].imm, -1);
    EXPECT_EQ(a.prog.locs[2].line, 2u);
}

// ---- macros -----------------------------------------------------------------

TEST(Asm, MacroExpandsWithUniqueLabelsPerExpansion)
{
    ASSEMBLE_OK(a, ".macro countdown reg, n\n"
                   "    li \\reg, \\n\n"
                   "again\\@:\n"
                   "    loop \\reg, again\\@\n"
                   ".endm\n"
                   "countdown s1, 10\n"
                   "countdown s2, 20\n");
    ASSERT_EQ(a.prog.count, 4u);
    EXPECT_EQ(a[0].imm, 10);
    EXPECT_EQ(a[1].op, NPU_OP_LOOP);
    EXPECT_EQ(a[1].imm, 0);
    EXPECT_EQ(a[2].rd, 2);
    EXPECT_EQ(a[3].imm, 0);
    EXPECT_EQ(a.prog.locs[1].line, 4u); // the body line, where the code is
}

TEST(Asm, MacroArgumentsMayHoldOperandsWithCommasInBrackets)
{
    ASSEMBLE_OK(a, ".macro ld2 dt, dst, mem\n"
                   "vld.\\dt \\dst, \\mem\n"
                   ".endm\n"
                   "ld2 f32, v3, [s2 + 4 * (1 + 1)]\n");
    EXPECT_EQ(a[0].dt, NPU_F32);
    EXPECT_EQ(a[0].rd, 3);
    EXPECT_EQ(a[0].imm, 8);
}

TEST(Asm, NestedMacroCalls)
{
    ASSEMBLE_OK(a, ".macro inner r\naddi \\r, \\r, 1\n.endm\n"
                   ".macro outer r\ninner \\r\ninner \\r\n.endm\n"
                   "outer s7\n");
    ASSERT_EQ(a.prog.count, 2u);
    EXPECT_EQ(a[1].rd, 7);
}

TEST(Asm, MacroArgumentCountMismatchIsAnError)
{
    ExpectError(".macro exp_f32 dst, src\nvexp.f32 \\dst, \\src\n.endm\n"
                "  exp_f32 v1, v2, v3\n",
                4, 3, "macro 'exp_f32' takes 2 arguments, got 3");
}

TEST(Asm, RecursiveMacroIsAnError)
{
    Assembled a;
    Assemble(a, ".macro forever\nforever\n.endm\nforever\n");
    EXPECT_EQ(a.rc, NPU_ESYNTAX);
    EXPECT_NE(std::string(a.diag.message).find("nested too deeply"), std::string::npos)
        << a.diag.message;
    EXPECT_EQ(a.diag.line, 2);
}

TEST(Asm, ExponentialMacroExpansionStopsWithAnError)
{
    std::string src;
    for (int i = 0; i < 40; i++)
        src += ".macro m" + std::to_string(i + 1) + "\nm" + std::to_string(i) + "\nm" +
               std::to_string(i) + "\n.endm\n";
    src = ".macro m0\nnop\n.endm\n" + src + "m40\n";
    Assembled a;
    Assemble(a, src);
    EXPECT_EQ(a.rc, NPU_ESYNTAX);
    EXPECT_NE(std::string(a.diag.message).find("macro expansion too large"), std::string::npos)
        << a.diag.message;
}

TEST(Asm, MacroErrorsNameTheBodyLine)
{
    ExpectError(".macro bad r\n  nop\n  vadd.f32 \\r, v1, v2\n.endm\nbad s3\n", 3, 12,
                "expected a vector register, found 's3'");
    ExpectError(".macro m a\n  addi \\b, s1, 1\n.endm\nm s1\n", 2, 8,
                "unknown macro parameter '\\b' in macro 'm'");
    ExpectError(".macro m\nnop\n", 1, 1, "unterminated .macro 'm' (no .endm)");
    ExpectError("nop\n.endm\n", 2, 1, ".endm without .macro");
    ExpectError(".macro vadd a\n.endm\n", 1, 8, "macro name 'vadd' is an instruction mnemonic");
}

// ---- predefined names and conditional assembly -----------------------------------

namespace {

void AssembleWith(Assembled &a, const std::string &src,
                  std::vector<npu_asm_define> defines)
{
    npu_asm_options opts{};
    opts.defines = defines.data();
    opts.num_defines = defines.size();
    Assemble(a, src, &opts);
}

} // namespace

TEST(Asm, DefinedDtypeAliasServesAsSuffix)
{
    const char *src = "vadd.DT v1, v2, v3\npwhile.DT p7, s1\n";
    Assembled f16, f32, i16;
    AssembleWith(f16, src, { { "DT", "f16" } });
    AssembleWith(f32, src, { { "DT", "f32" } });
    ASSERT_EQ(f16.rc, NPU_OK) << f16.diag.message;
    ASSERT_EQ(f32.rc, NPU_OK) << f32.diag.message;
    EXPECT_EQ(f16[0].dt, NPU_F16);
    EXPECT_EQ(f32[0].dt, NPU_F32);
    EXPECT_EQ(f32[1].dt, NPU_F32);

    AssembleWith(i16, "vfma.DT v1, v2, v3, v4\n", { { "DT", "i16" } });
    EXPECT_EQ(i16.rc, NPU_ESYNTAX);
    EXPECT_STREQ(i16.diag.message,
                 "dtype suffix .DT (= i16) not allowed for vfma (allowed: f16, f32)");

    ExpectError("vadd.DT v1, v2, v3\n", 1, 5,
                "unknown dtype suffix .DT for vadd (expected f16, f32, i16, i32 or a defined "
                "dtype alias)");
}

TEST(Asm, DefinedNumbersAreConstants)
{
    Assembled a;
    AssembleWith(a, "addi s1, s1, TILE * 2\nlf s2, ALPHA\naddi s3, s3, FLAG\n",
                 { { "TILE", "64" }, { "ALPHA", "0.25" }, { "FLAG", nullptr } });
    ASSERT_EQ(a.rc, NPU_OK) << a.diag.message;
    EXPECT_EQ(a[0].imm, 128);
    EXPECT_EQ((uint32_t)a[1].imm, F32(0.25f));
    EXPECT_EQ(a[2].imm, 1); // a bare name is 1, as with cc -D

    Assembled dup;
    AssembleWith(dup, ".equ TILE, 3\n", { { "TILE", "64" } });
    EXPECT_STREQ(dup.diag.message, "duplicate constant 'TILE' (first defined as a predefined name)");
}

// VLENB and UB_BYTES are the machine's: a host definition would build code
// for a machine the run does not have (as `.equ VLENB, 7` would).
TEST(Asm, TheMachinesConstantsCannotBeDefinedByTheHost)
{
    Assembled v;
    AssembleWith(v, "li s1, VLENB\n", { { "VLENB", "7" } });
    EXPECT_EQ(v.rc, NPU_ESYNTAX);
    EXPECT_STREQ(v.diag.file, "<defines>");
    EXPECT_STREQ(v.diag.message,
                 "definition VLENB=7: predefined from the machine's config (core.vlen / 8); change the config instead");
    Assembled u;
    AssembleWith(u, "li s1, UB_BYTES\n", { { "UB_BYTES", nullptr } });
    EXPECT_STREQ(u.diag.message, "definition UB_BYTES=: predefined from the machine's config (core.ub_bytes); change "
                                 "the config instead");
    Assembled e;
    AssembleWith(e, ".equ VLENB, 7\n", {});
    EXPECT_STREQ(e.diag.message, "duplicate constant 'VLENB' (first defined as a predefined name)");
}

TEST(Asm, BadDefinitionIsReported)
{
    Assembled a;
    AssembleWith(a, "nop\n", { { "DT", "f64" } });
    EXPECT_EQ(a.rc, NPU_ESYNTAX);
    EXPECT_STREQ(a.diag.file, "<defines>");
    EXPECT_EQ(a.diag.line, 0);
    EXPECT_STREQ(a.diag.message,
                 "definition DT=f64: neither a number nor a lane type (f16, f32, i16, i32)");
    Assembled b;
    AssembleWith(b, "nop\n", { { "s1", "3" } });
    EXPECT_STREQ(b.diag.message,
                 "definition s1=3: not a valid name (letters, digits and _, not a register)");
}

TEST(Asm, ConditionalAssemblyPicksOneBranch)
{
    const char *src = ".ifdef FAST\n"
                      "  vrcp.f32 v1, v2\n"
                      ".else\n"
                      "  .ifndef DT\n"
                      "    .error \"define DT\"\n"
                      "  .endif\n"
                      "  vdiv.junk is never read\n"
                      ".endif\n"
                      ".if TILE > 0\n"
                      "  halt\n"
                      ".endif\n"
                      ".if TILE == 0\n"
                      "  nop\n"
                      ".endif\n";
    Assembled fast;
    AssembleWith(fast, src, { { "FAST", nullptr }, { "TILE", "0" } });
    ASSERT_EQ(fast.rc, NPU_OK) << fast.diag.message;
    ASSERT_EQ(fast.prog.count, 2u);
    EXPECT_EQ(fast[0].op, NPU_OP_VRCP);
    EXPECT_EQ(fast[1].op, NPU_OP_NOP);

    Assembled bad;
    AssembleWith(bad, ".if 1 = 1\n.endif\n", {});
    EXPECT_EQ(bad.rc, NPU_ESYNTAX);
    EXPECT_STREQ(bad.diag.message, "expected '==', found '='");
    EXPECT_EQ(bad.diag.col, 7);

    Assembled b;
    AssembleWith(b, ".ifdef FAST\nvrcp.f32 v1, v2\n.else\nvsqrt.f32 v1, v2\n.endif\n"
                    ".if TILE - 64\nnop\n.endif\n.if TILE\nhalt\n.endif\n",
                 { { "TILE", "64" } });
    ASSERT_EQ(b.rc, NPU_OK) << b.diag.message;
    ASSERT_EQ(b.prog.count, 2u);
    EXPECT_EQ(b[0].op, NPU_OP_VSQRT);
    EXPECT_EQ(b[1].op, NPU_OP_HALT);

    Assembled c;
    AssembleWith(c, ".ifdef FAST\n.else\n.ifndef DT\n  .error \"define DT=f16 or f32\"\n.endif\n.endif\n",
                 {});
    EXPECT_EQ(c.rc, NPU_ESYNTAX);
    EXPECT_STREQ(c.diag.message, "define DT=f16 or f32");
    EXPECT_EQ(c.diag.line, 4);
    EXPECT_EQ(c.diag.col, 3);
}

TEST(Asm, ConditionalsInsideMacrosSeeTheArguments)
{
    ASSEMBLE_OK(a, ".macro pick n\n.if \\n\nnop\n.else\nhalt\n.endif\n.endm\npick 1\npick 0\n");
    ASSERT_EQ(a.prog.count, 2u);
    EXPECT_EQ(a[0].op, NPU_OP_NOP);
    EXPECT_EQ(a[1].op, NPU_OP_HALT);
}

TEST(Asm, UnbalancedConditionalsAreErrors)
{
    ExpectError("nop\n.ifdef X\nnop\n", 2, 1, "unterminated .ifdef (no .endif)");
    ExpectError(".endif\n", 1, 1, ".endif without .if");
    ExpectError(".if 1\n.else\n.else\n.endif\n", 3, 1, ".else after .else (the .if is at line 1)");
    ExpectError("x: .ifdef Y\n", 1, 4, "'.ifdef' must start its line");
    // A block opened in a macro must close in it.
    ExpectError(".macro m\n.if 1\n.endm\nm\n.endif\n", 2, 1, "unterminated .if (no .endif)");
}

// ---- includes -----------------------------------------------------------------

TEST(Asm, IncludeResolvesNextToTheIncludingFileThenIncludeDirs)
{
    TempDir dir;
    dir.Write("lib/exp.s", ".include \"consts.s\"\n.macro exp2 d\n vbcasti.f32 \\d, LN2\n.endm\n");
    dir.Write("lib/consts.s", ".equ LN2, 0.693147\n");
    dir.Write("common/util.s", "nop\n");
    std::string main = dir.Write("k/main.s", ".include \"../lib/exp.s\"\n"
                                             ".include \"util.s\"\n"
                                             "exp2 v4\n"
                                             "halt\n");
    std::string common = dir.path() + "/common";
    const char *dirs[] = { common.c_str() };
    npu_asm_options opts{};
    opts.include_dirs = dirs;
    opts.num_include_dirs = 1;
    FileResult r;
    r.rc = npu_assemble_file(main.c_str(), &opts, &r.prog, &r.diag);
    ASSERT_EQ(r.rc, NPU_OK) << r.diag.file << ":" << r.diag.line << ": " << r.diag.message;
    ASSERT_EQ(r.prog.count, 3u);
    EXPECT_EQ(r.prog.insns[0].op, NPU_OP_NOP);
    EXPECT_EQ((uint32_t)r.prog.insns[1].imm, F32(0.693147f));
    // Every file that contributed is named, and each instruction points at one.
    ASSERT_GE(r.prog.nfiles, 4u);
    EXPECT_EQ(std::string(r.prog.files[0]), main);
    EXPECT_EQ(std::string(r.prog.files[r.prog.locs[0].file]), common + "/util.s");
    EXPECT_NE(std::string(r.prog.files[r.prog.locs[1].file]).find("exp.s"), std::string::npos);
    EXPECT_EQ(r.prog.locs[1].line, 3u);
    EXPECT_EQ(r.prog.locs[2].file, 0u);
    EXPECT_EQ(r.prog.locs[2].line, 4u);
}

TEST(Asm, AFileIncludedTwiceIsReadOnce)
{
    TempDir dir;
    dir.Write("consts.s", ".equ ONE, 1.0\n.macro one d\nvbcasti.f32 \\d, ONE\n.endm\n");
    dir.Write("exp.s", ".include \"consts.s\"\n");
    dir.Write("tanh.s", ".include \"./consts.s\"\n");
    std::string main = dir.Write("k.s", ".include \"exp.s\"\n.include \"tanh.s\"\none v1\n");
    FileResult r;
    r.rc = npu_assemble_file(main.c_str(), nullptr, &r.prog, &r.diag);
    ASSERT_EQ(r.rc, NPU_OK) << r.diag.file << ":" << r.diag.line << ": " << r.diag.message;
    EXPECT_EQ(r.prog.count, 1u);
    EXPECT_EQ(r.prog.nfiles, 4u);
}

TEST(Asm, RecursiveIncludeIsAnError)
{
    TempDir dir;
    std::string a = dir.Write("a.s", "nop\n.include \"b.s\"\n");
    std::string b = dir.Write("b.s", "\n\n  .include \"a.s\"\n");
    FileResult r;
    r.rc = npu_assemble_file(a.c_str(), nullptr, &r.prog, &r.diag);
    EXPECT_EQ(r.rc, NPU_ESYNTAX);
    EXPECT_STREQ(r.diag.message, "recursive include of 'a.s'");
    EXPECT_EQ(std::string(r.diag.file), b);
    EXPECT_EQ(r.diag.line, 3);
    EXPECT_EQ(r.diag.col, 12);
    EXPECT_EQ(r.prog.count, 0u);

    std::string self = dir.Write("self.s", ".include \"./self.s\"\n");
    FileResult s;
    s.rc = npu_assemble_file(self.c_str(), nullptr, &s.prog, &s.diag);
    EXPECT_STREQ(s.diag.message, "recursive include of './self.s'");
}

TEST(Asm, MissingIncludeIsAnError)
{
    TempDir dir;
    std::string a = dir.Write("a.s", "nop\n  .include \"nope.s\" ; gone\n");
    FileResult r;
    r.rc = npu_assemble_file(a.c_str(), nullptr, &r.prog, &r.diag);
    EXPECT_EQ(r.rc, NPU_ESYNTAX);
    EXPECT_STREQ(r.diag.message, "cannot open include file 'nope.s'");
    EXPECT_EQ(r.diag.line, 2);
    EXPECT_EQ(r.diag.col, 12);
}

TEST(Asm, ErrorInsideAnIncludedFileNamesThatFile)
{
    TempDir dir;
    std::string inc = dir.Write("inc/bad.s", "nop\nvadx.f32 v1, v2, v3\n");
    std::string a = dir.Write("a.s", ".include \"inc/bad.s\"\n");
    FileResult r;
    r.rc = npu_assemble_file(a.c_str(), nullptr, &r.prog, &r.diag);
    EXPECT_EQ(r.rc, NPU_ESYNTAX);
    EXPECT_EQ(std::string(r.diag.file), inc);
    EXPECT_EQ(r.diag.line, 2);
    EXPECT_EQ(r.diag.col, 1);
    EXPECT_STREQ(r.diag.message, "unknown mnemonic 'vadx'");
}

TEST(Asm, MissingSourceFileIsAnIoError)
{
    FileResult r;
    r.rc = npu_assemble_file("/nonexistent/npusim/k.s", nullptr, &r.prog, &r.diag);
    EXPECT_EQ(r.rc, NPU_EIO);
    EXPECT_EQ(r.diag.line, 0);
    char line[600];
    npu_diag_format(&r.diag, line, sizeof line);
    EXPECT_EQ(std::string(line),
              "/nonexistent/npusim/k.s: cannot read source file: No such file or directory");
}

TEST(Asm, HostReaderServesIncludes)
{
    // Fuzzers and embedders supply sources from memory.
    static std::map<std::string, std::string> files = {
        { "src/main.s", ".include \"part.s\"\nj part_end\n" },
        { "src/part.s", "nop\npart_end: halt\n" },
    };
    auto reader = [](void *, const char *path, char **text, size_t *len) -> int {
        auto it = files.find(path);
        if (it == files.end())
            return NPU_EIO;
        *text = (char *)malloc(it->second.size() + 1);
        memcpy(*text, it->second.c_str(), it->second.size() + 1);
        *len = it->second.size();
        return NPU_OK;
    };
    npu_asm_options opts{};
    opts.reader = reader;
    FileResult r;
    r.rc = npu_assemble_file("src/main.s", &opts, &r.prog, &r.diag);
    ASSERT_EQ(r.rc, NPU_OK) << r.diag.message;
    ASSERT_EQ(r.prog.count, 3u);
    EXPECT_EQ(r.prog.insns[2].imm, -1);
}

TEST(Asm, IncludeChainsAreBoundedInDepth)
{
    // f0.s includes f1.s includes f2.s ...: every file distinct, no recursion.
    auto reader = [](void *, const char *path, char **text, size_t *len) -> int {
        int n = atoi(strrchr(path, 'f') + 1);
        std::string body = ".include \"f" + std::to_string(n + 1) + ".s\"\n";
        *text = strdup(body.c_str());
        *len = body.size();
        return NPU_OK;
    };
    npu_asm_options opts{};
    opts.reader = reader;
    FileResult r;
    r.rc = npu_assemble_file("f0.s", &opts, &r.prog, &r.diag);
    EXPECT_EQ(r.rc, NPU_ESYNTAX);
    EXPECT_STREQ(r.diag.message, "includes nested too deeply (limit 64)");
    EXPECT_STREQ(r.diag.file, "f63.s");
}

// ---- error messages: text, line and column --------------------------------------

TEST(Asm, UnknownMnemonicNamesIt) { ExpectError("nop\n  vadx.f32 v1, v2, v3\n", 2, 3, "unknown mnemonic 'vadx'"); }

TEST(Asm, UndefinedLabelNamesIt)
{
    ExpectError("loop:\n  nop\n  bnez s1, loop2\n", 3, 12, "undefined label 'loop2'");
}

TEST(Asm, DuplicateLabelNamesTheFirstDefinition)
{
    ExpectError("\n\ntop: nop\n\ntop: halt\n", 5, 1, "duplicate label 'top' (first defined at line 3)");
}

TEST(Asm, ImmediateOutOfRange)
{
    ExpectError("addi s1, s2, 70000000000\n", 1, 14,
                "immediate 70000000000 out of range for a 32-bit signed immediate");
    ExpectError("slli s1, s2, 64\n", 1, 14, "shift amount 64 out of range (0..63)");
    ExpectError("vshli.i16 v1, v2, 16\n", 1, 19, "shift amount 16 out of range for i16 lanes (0..15)");
    ExpectError("vbcasti.i16 v1, 65536\n", 1, 17, "literal 65536 out of range for i16 lanes (-32768..65535)");
    // bits(N) is one lane's pattern, in every form that takes a literal.
    ExpectError("vbcasti.f16 v1, bits(0x10000)\n", 1, 22, "bit pattern 65536 out of range for f16 lanes (0..65535)");
    ExpectError("vaddi.i16 v1, v2, bits(0x10000)\n", 1, 24, "bit pattern 65536 out of range for i16 lanes (0..65535)");
    ExpectError("vfmai.f16 v1, v2, v3, bits(0xffffffff)\n", 1, 28,
                "bit pattern 4294967295 out of range for f16 lanes (0..65535)");
    ExpectError("vcgei.f16 p1, v2, bits(-1)\n", 1, 24, "bit pattern -1 out of range for f16 lanes (0..65535)");
    ExpectError("vseli.f16 v1, v2, bits(0x1ffff), p1\n", 1, 24,
                "bit pattern 131071 out of range for f16 lanes (0..65535)");
    ExpectError("vbcasti.f32 v1, bits(0x100000000)\n", 1, 22,
                "bit pattern 4294967296 out of range for f32 lanes (0..4294967295)");
    ExpectError("lf s1, bits(0x100000000)\n", 1, 13, "bit pattern 4294967296 out of range for f32 (0..4294967295)");
    ExpectError("vbcasti.f16 v1, 70000\n", 1, 17, "literal 70000 overflows f16 (largest finite value is 65504)");
    ExpectError("dmawait 32\n", 1, 9, "DMA tag 32 out of range (0..31)");
    ExpectError("dmadim 3, s1, s2, s3\n", 1, 8, "DMA dimension 3 out of range (1..2)");
    ExpectError("vld.f32 v1, [s1 + 0x80000000]\n", 1, 19,
                "offset 2147483648 out of range for a 32-bit signed offset");
}

TEST(Asm, WrongRegisterClassNamesTheToken)
{
    ExpectError("vadd.f32 v1, s3, v2\n", 1, 14, "expected a vector register, found 's3'");
    ExpectError("add s1, s2, 5\n", 1, 13, "expected a scalar register, found '5'");
    ExpectError("vadd.f32 v1, v2, v3, v4\n", 1, 22, "expected a predicate register, found 'v4'");
    ExpectError("add s1, s32, s2\n", 1, 9, "no register 's32' (scalar registers are s0..s31)");
    ExpectError("pand p1, p2, p8\n", 1, 14, "no register 'p8' (predicate registers are p0..p7)");
}

TEST(Asm, DtypeSuffixErrors)
{
    ExpectError("vfma.i16 v1, v2, v3, v4\n", 1, 5, "dtype suffix .i16 not allowed for vfma (allowed: f16, f32)");
    ExpectError("  vadd v1, v2, v3\n", 1, 3, "missing dtype suffix for vadd");
    ExpectError("add.f32 s1, s2, s3\n", 1, 4, "dtype suffix .f32 not allowed for add (it takes none)");
    ExpectError("vadd.f64 v1, v2, v3\n", 1, 5,
                "unknown dtype suffix .f64 for vadd (expected f16, f32, i16, i32 or a defined "
                "dtype alias)");
}

TEST(Asm, TrailingTextAndMissingOperands)
{
    ExpectError("add s1, s2, s3,\n", 1, 15, "unexpected trailing text ','");
    ExpectError("halt now\n", 1, 6, "unexpected trailing text 'now'");
    ExpectError("vadd.f32 v1, v2, v3, p1 p2\n", 1, 25, "unexpected trailing text 'p2'");
    ExpectError("add s1, s2\n", 1, 11, "too few operands for add (expected 3)");
    ExpectError("add\n", 1, 4, "too few operands for add (expected 3)");
    ExpectError("add s1 s2, s3\n", 1, 8, "expected ',', found 's2'");
}

TEST(Asm, LexicalAndExpressionErrors)
{
    ExpectError("addi s1, s2, 12abc\n", 1, 14, "malformed number '12abc'");
    ExpectError("addi s1, s2, 1 / 0\n", 1, 16, "division by zero");
    ExpectError("addi s1, s2, (1 + 2\n", 1, 20, "expected ')', found end of line");
    ExpectError("addi s1, s2, N\n", 1, 14, "undefined constant 'N'");
    ExpectError("addi s1, s2, 1.5\n", 1, 14, "expected an integer immediate, found the float 1.5");
    ExpectError("addi s1, s2, 0xffffffffffffffff + 1\n", 1, 33,
                "integer overflow in expression: 18446744073709551615 + 1 is outside -2^63 .. 2^64 - 1");
    ExpectError("nop $ \n", 1, 5, "unexpected character '$'");
    ExpectError("nop ! \n", 1, 5, "unexpected trailing text '!'");
    ExpectError(".equ X, 1\n.equ X, 2\n", 2, 6, "duplicate constant 'X' (first defined at line 1)");
    ExpectError(".equ s1, 2\n", 1, 6, "'s1' is reserved and cannot name a constant");
    ExpectError(".bogus 1\n", 1, 1, "unknown directive '.bogus'");
    ExpectError("  .error \"\"\n", 1, 3, ".error directive");
    ExpectError("srd s1, lanes.f64\n", 1, 9, "unknown special register 'lanes.f64'");
    ExpectError(".include \"a.s\n", 1, 10, "unterminated string");
    ExpectError("42\n", 1, 1, "expected an instruction, found '42'");
}

TEST(Asm, NulByteIsAnError)
{
    std::string src("nop\nadd s1,\0 s2, s3\n", 19);
    Assembled a;
    Assemble(a, src);
    EXPECT_EQ(a.rc, NPU_ESYNTAX);
    EXPECT_STREQ(a.diag.message, "NUL byte in source");
    EXPECT_EQ(a.diag.line, 2);
    EXPECT_EQ(a.diag.col, 8);
}

TEST(Asm, CommentsAndBlankLinesAndCrLf)
{
    ASSEMBLE_OK(a, "; header\r\n\r\n  # another\r\nnop ; trailing\r\n\thalt\t# x\r\n");
    EXPECT_EQ(a.prog.count, 2u);
    EXPECT_EQ(a.prog.locs[1].line, 5u);
}

TEST(Asm, VeryLongLinesAreFine)
{
    std::string src = "addi s1, s2, " + std::string(100000, '(') + "1" + std::string(100000, ')');
    Assembled deep;
    Assemble(deep, src);
    EXPECT_EQ(deep.rc, NPU_ESYNTAX); // bounded nesting, not a stack overflow
    EXPECT_NE(std::string(deep.diag.message).find("nested too deeply"), std::string::npos);

    std::string sum = "addi s1, s2, 0";
    for (int i = 0; i < 50000; i++)
        sum += " + 1";
    ASSEMBLE_OK(a, sum + "   ; " + std::string(200000, 'x') + "\n");
    EXPECT_EQ(a[0].imm, 50000);
}

TEST(Asm, RandomGarbageNeverCrashes)
{
    static const char *const pieces[] = {
        "vadd.f32", "v1", "s2", "p3", ",", " ", "[", "]", "+", "-", "*", "/", "(", ")", ":", "@",
        "0x1p-3", "1e9", "99999999999999999999", ".equ", ".macro", ".endm", ".include", "\"",
        "\\", "\\@", "\n", "lbl", "m", "li", "bits(", "nan", "lanes.f32", "#", ";", "\0", "\t",
        "vbcasti.f16", "j", "@-1", "\xff", "inf", "vld.i16",
    };
    std::mt19937 rng(7);
    for (int trial = 0; trial < 3000; trial++) {
        std::string src;
        int n = rng() % 40;
        for (int i = 0; i < n; i++) {
            const char *p = pieces[rng() % (sizeof pieces / sizeof pieces[0])];
            src.append(p, *p ? strlen(p) : 1);
        }
        Assembled a;
        Assemble(a, src);
        if (a.rc != NPU_OK) {
            EXPECT_LT(a.rc, 0);
            EXPECT_EQ(a.prog.count, 0u);
            EXPECT_GT(strlen(a.diag.message), 0u) << src;
        }
    }
}

// ---- diagnostics ---------------------------------------------------------------

TEST(Asm, DiagFormatIsFileLineColMessage)
{
    npu_diag d{};
    snprintf(d.file, sizeof d.file, "k.s");
    d.line = 3;
    d.col = 7;
    snprintf(d.message, sizeof d.message, "undefined label 'x'");
    char buf[300];
    npu_diag_format(&d, buf, sizeof buf);
    EXPECT_STREQ(buf, "k.s:3:7: undefined label 'x'");
    d.line = 0;
    npu_diag_format(&d, buf, sizeof buf);
    EXPECT_STREQ(buf, "k.s: undefined label 'x'");
    char tiny[5];
    npu_diag_format(&d, tiny, sizeof tiny);
    EXPECT_STREQ(tiny, "k.s:");
}

TEST(Asm, SourceLocationsAreRecorded)
{
    ASSEMBLE_OK(a, "\nnop\n\n  halt\n");
    ASSERT_EQ(a.prog.nfiles, 1u);
    EXPECT_STREQ(a.prog.files[0], "test.s");
    EXPECT_EQ(a.prog.locs[0].line, 2u);
    EXPECT_EQ(a.prog.locs[1].line, 4u);
}

// ---- the program binary ----------------------------------------------------------

TEST(Program, BinaryWriteReadRoundTrip)
{
    ASSEMBLE_OK(a, "li s1, 0x123456789\nvfma.f16 v1, v2, v3, v4, p2\nlf s3, -0.0\ntop: j top\n");
    TempDir dir;
    std::string path = dir.path() + "/k.bin";
    npu_diag diag{};
    ASSERT_EQ(npu_program_write_binary(&a.prog, path.c_str(), &diag), NPU_OK) << diag.message;
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    EXPECT_EQ(std::filesystem::file_size(path), 16 + 8 * a.prog.count);

    npu_program back;
    ASSERT_EQ(npu_program_load_binary_file(&back, path.c_str(), &diag), NPU_OK) << diag.message;
    ASSERT_EQ(back.count, a.prog.count);
    for (size_t i = 0; i < back.count; i++) {
        EXPECT_EQ(back.words[i], a.prog.words[i]);
        EXPECT_EQ(back.insns[i].op, a.prog.insns[i].op);
        EXPECT_EQ(back.insns[i].imm, a.prog.insns[i].imm);
        EXPECT_EQ(back.locs[i].line, 0u);
    }
    ASSERT_EQ(back.nfiles, 1u);
    EXPECT_EQ(std::string(back.files[0]), path);
    // The loaded program can still grow.
    npu_insn nop{};
    nop.op = NPU_OP_NOP;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(npu_program_append(&back, &nop, npu_srcloc{ 0, 0 }), NPU_OK);
    EXPECT_EQ(back.count, a.prog.count + 100);
    npu_program_free(&back);
}

TEST(Program, BinaryIsLittleEndianWithMagicAndCount)
{
    ASSEMBLE_OK(a, "halt\n");
    TempDir dir;
    std::string path = dir.path() + "/h.bin";
    ASSERT_EQ(npu_program_write_binary(&a.prog, path.c_str(), nullptr), NPU_OK);
    std::ifstream in(path, std::ios::binary);
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_EQ(bytes.size(), 24u);
    EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "NPUSIMB1");
    EXPECT_EQ(bytes[8], 1);
    EXPECT_EQ(bytes[9] | bytes[10] | bytes[11] | bytes[12] | bytes[13] | bytes[14] | bytes[15], 0);
    EXPECT_EQ(bytes[16], npu_insn_table[NPU_OP_HALT].opcode);
}

TEST(Program, UndecodableWordsLoadAsInvalidAndTrapLater)
{
    unsigned char bin[32] = { 'N', 'P', 'U', 'S', 'I', 'M', 'B', '1', 2 };
    bin[16] = npu_insn_table[NPU_OP_NOP].opcode;
    bin[24] = 0xff; // no such opcode
    bin[31] = 0x80;
    npu_program p;
    npu_diag diag{};
    ASSERT_EQ(npu_program_read_binary(&p, bin, sizeof bin, "x.bin", &diag), NPU_OK);
    ASSERT_EQ(p.count, 2u);
    EXPECT_EQ(p.insns[0].op, NPU_OP_NOP);
    EXPECT_EQ(p.insns[1].op, NPU_OP_INVALID);
    EXPECT_EQ(p.words[1], 0x80000000000000ffull);
    npu_program_free(&p);
}

TEST(Program, BadBinariesAreFormatErrors)
{
    unsigned char good[24] = { 'N', 'P', 'U', 'S', 'I', 'M', 'B', '1', 1 };
    good[16] = npu_insn_table[NPU_OP_HALT].opcode;
    auto check = [](const unsigned char *data, size_t size, const char *message) {
        npu_program p;
        npu_diag diag{};
        EXPECT_EQ(npu_program_read_binary(&p, data, size, "k.bin", &diag), NPU_EFORMAT);
        EXPECT_STREQ(diag.message, message);
        EXPECT_STREQ(diag.file, "k.bin");
        EXPECT_EQ(p.count, 0u);
        EXPECT_EQ(p.words, nullptr);
    };
    check(good, 10, "not an npusim binary: 10 bytes, shorter than the 16-byte header");
    check(good, 23, "truncated npusim binary: header says 1 instructions (24 bytes), file has 23 bytes");
    unsigned char bad[24];
    memcpy(bad, good, sizeof bad);
    bad[7] = '2';
    check(bad, 24, "not an npusim binary: bad magic (expected \"NPUSIMB1\")");
    memcpy(bad, good, sizeof bad);
    bad[12] = 1;
    check(bad, 24, "unsupported npusim binary: reserved header field is 0x1, not 0");
    unsigned char longer[25] = {};
    memcpy(longer, good, sizeof good);
    check(longer, 25, "bad npusim binary: 1 bytes after the 1 instructions");
    npu_program p;
    EXPECT_EQ(npu_program_read_binary(&p, good, sizeof good, "k.bin", nullptr), NPU_OK);
    npu_program_free(&p);
}

TEST(Program, WriteToAMissingFolderFailsWithoutLeftovers)
{
    ASSEMBLE_OK(a, "halt\n");
    npu_diag diag{};
    EXPECT_EQ(npu_program_write_binary(&a.prog, "/nonexistent/npusim/k.bin", &diag), NPU_EIO);
    EXPECT_NE(std::string(diag.message).find("cannot create"), std::string::npos) << diag.message;
}

TEST(Program, AppendGrowsAndKeepsWordsInStep)
{
    npu_program p;
    npu_program_init(&p);
    npu_insn in{};
    in.op = NPU_OP_ADDI;
    for (int i = 0; i < 1000; i++) {
        in.imm = i;
        ASSERT_EQ(npu_program_append(&p, &in, npu_srcloc{ 0, (uint32_t)i }), NPU_OK);
    }
    ASSERT_EQ(p.count, 1000u);
    for (size_t i = 0; i < p.count; i++) {
        npu_insn d;
        ASSERT_EQ(npu_decode(p.words[i], &d), NPU_OK);
        EXPECT_EQ(d.imm, (int32_t)i);
        EXPECT_EQ(p.locs[i].line, i);
    }
    EXPECT_EQ(npu_program_add_file(&p, "a.s"), 0);
    EXPECT_EQ(npu_program_add_file(&p, "b.s"), 1);
    npu_program_free(&p);
    EXPECT_EQ(p.count, 0u);
}
