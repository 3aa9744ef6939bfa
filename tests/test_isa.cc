// The instruction table itself: unique opcodes and mnemonics, no two rows
// matching one word, decode rejecting what no row encodes, and every row
// round-tripping encode -> disassemble -> assemble -> decode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>

extern "C" {
#include "npusim/asm.h"
#include "npusim/isa.h"
#include "npusim/program.h"
}

namespace {

std::string Disasm(const npu_insn &in, size_t index = 0)
{
    char buf[128];
    npu_disasm(&in, index, buf, sizeof buf);
    return buf;
}

bool SameInsn(const npu_insn &a, const npu_insn &b)
{
    return a.op == b.op && a.dt == b.dt && a.rd == b.rd && a.rs1 == b.rs1 && a.rs2 == b.rs2 &&
           a.rs3 == b.rs3 && a.pg == b.pg && a.pm == b.pm && a.vl == b.vl && a.imm == b.imm;
}

// Word bits every instance of a row has fixed, and their values
// (riscv-opcodes' mask/match): the opcode byte, plus every bit the format
// leaves unused, which must be zero.
uint64_t RowMask(const npu_insn_desc &d)
{
    return 0xffull | ~npu_format_field_mask((npu_format)d.format, d.flags & NPU_F_MASK);
}

// The row's word with every field at its least legal value: zero, but
// dmadim's dimension 1.
uint64_t LeastWord(unsigned op, unsigned dt)
{
    const npu_format_desc &f = npu_format_table[npu_insn_table[op].format];
    npu_insn in{};
    in.op = (uint16_t)op;
    in.dt = (uint8_t)dt;
    if (std::find(f.operands, f.operands + f.num_operands, NPU_OPK_DIM) != f.operands + f.num_operands)
        in.rd = 1;
    return npu_encode(&in);
}

} // namespace

TEST(Isa, OpcodesAreUnique)
{
    std::set<int> seen;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++)
        EXPECT_TRUE(seen.insert(npu_insn_table[op].opcode).second)
            << npu_insn_table[op].mnemonic << " reuses opcode " << int(npu_insn_table[op].opcode);
}

TEST(Isa, OpcodeZeroIsNeverAnInstruction)
{
    // An all-zero word (uninitialised memory) must trap, not execute.
    for (unsigned op = 1; op < NPU_NUM_OPS; op++)
        EXPECT_NE(npu_insn_table[op].opcode, 0) << npu_insn_table[op].mnemonic;
    npu_insn in;
    EXPECT_LT(npu_decode(0, &in), 0);
}

TEST(Isa, MnemonicsAreUnique)
{
    std::set<std::string> seen;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++)
        EXPECT_TRUE(seen.insert(npu_insn_table[op].mnemonic).second)
            << npu_insn_table[op].mnemonic;
}

TEST(Isa, MnemonicLookupFindsEveryRow)
{
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const char *m = npu_insn_table[op].mnemonic;
        EXPECT_EQ(npu_opcode_from_mnemonic(m, strlen(m)), (npu_opcode)op) << m;
        EXPECT_EQ(npu_opcode_from_byte(npu_insn_table[op].opcode), (npu_opcode)op) << m;
    }
}

TEST(Isa, NoWordMatchesTwoRows)
{
    for (unsigned a = 1; a < NPU_NUM_OPS; a++) {
        for (unsigned b = a + 1; b < NPU_NUM_OPS; b++) {
            const npu_insn_desc &da = npu_insn_table[a], &db = npu_insn_table[b];
            uint64_t common = RowMask(da) & RowMask(db);
            uint64_t match_a = da.opcode, match_b = db.opcode;
            EXPECT_NE((match_a ^ match_b) & common, 0u)
                << da.mnemonic << " and " << db.mnemonic << " overlap";
        }
    }
}

TEST(Isa, EveryRowIsDescribed)
{
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        ASSERT_NE(d.description, nullptr) << d.mnemonic;
        EXPECT_GT(strlen(d.description), 0u) << d.mnemonic;
        EXPECT_LT(d.format, NPU_NUM_FORMATS) << d.mnemonic;
        EXPECT_EQ(d.dtypes & ~NPU_DT_ALL, 0) << d.mnemonic;
        EXPECT_LT(d.cls, NPU_NUM_CLASSES) << d.mnemonic;
        EXPECT_LT(d.unit, NPU_NUM_UNITS) << d.mnemonic;
        EXPECT_LT(d.category, NPU_NUM_CATEGORIES) << d.mnemonic;
    }
    for (int i = 0; i < NPU_NUM_SPRS; i++) {
        ASSERT_NE(npu_spr_table[i].name, nullptr) << "special register " << i;
        EXPECT_GT(strlen(npu_spr_table[i].description), 0u) << npu_spr_table[i].name;
    }
}

TEST(Isa, MaskableRowsLeaveThePredicateFieldFree)
{
    // A row with NPU_F_MASK keeps pg/pm for the mask, so no operand may live there.
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        if (!(d.flags & NPU_F_MASK))
            continue;
        const npu_format_desc &f = npu_format_table[d.format];
        for (unsigned i = 0; i < f.num_operands; i++)
            EXPECT_NE(f.operands[i], NPU_OPK_PS) << d.mnemonic;
    }
}

TEST(Isa, DecodeRejectsBitsOutsideTheFormat)
{
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        uint64_t used = npu_format_field_mask((npu_format)d.format, d.flags & NPU_F_MASK);
        unsigned dt = 0;
        while (d.dtypes && !(d.dtypes & (1u << dt)))
            dt++;
        uint64_t base = LeastWord(op, dt);
        npu_insn in;
        ASSERT_EQ(npu_decode(base, &in), NPU_OK) << d.mnemonic;
        for (int bit = 8; bit < 64; bit++) {
            if (used >> bit & 1)
                continue;
            EXPECT_LT(npu_decode(base | 1ull << bit, &in), 0) << d.mnemonic << " bit " << bit;
        }
    }
}

// f16 literals are zero-extended and i16 ones sign-extended in imm, as the
// assembler writes them; with another upper half a word would be a second
// encoding of one instruction (its lanes read the low half alone).
TEST(Isa, DecodeRejectsA16BitLiteralWithAnotherUpperHalf)
{
    size_t rows = 0;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        const npu_format_desc &f = npu_format_table[d.format];
        if (std::find(f.operands, f.operands + f.num_operands, NPU_OPK_LIT) == f.operands + f.num_operands)
            continue;
        rows++;
        for (unsigned dt = 0; dt < 4; dt++) {
            if (!(d.dtypes >> dt & 1))
                continue;
            const uint64_t base = d.opcode | (uint64_t)dt << NPU_SH_DT;
            auto decodes = [&](uint32_t imm) {
                npu_insn in;
                return npu_decode(base | (uint64_t)imm << NPU_SH_IMM, &in) == NPU_OK;
            };
            const std::string name = std::string(d.mnemonic) + "." + npu_dtype_name((npu_dtype)dt);
            EXPECT_TRUE(decodes(0x7fff)) << name;
            switch (dt) {
            case NPU_F16:
                EXPECT_TRUE(decodes(0xffff)) << name;
                EXPECT_FALSE(decodes(0x10000)) << name;
                EXPECT_FALSE(decodes(0xffffffff)) << name;
                break;
            case NPU_I16:
                EXPECT_TRUE(decodes(0xffffffff)) << name;   // -1
                EXPECT_TRUE(decodes(0xffff8000)) << name;   // -32768
                EXPECT_FALSE(decodes(0xffff)) << name;      // 65535: written -1 (0xffffffff)
                EXPECT_FALSE(decodes(0x10000)) << name;
                break;
            default:
                EXPECT_TRUE(decodes(0xffffffff)) << name;
                EXPECT_TRUE(decodes(0x10000)) << name;
            }
        }
    }
    EXPECT_EQ(rows, 17u);  // vbcasti, 6 arithmetic and 3 fused NAMEi forms, 6 compares, vseli
}

TEST(Isa, DecodeRejectsDisallowedDtypes)
{
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        for (unsigned dt = 0; dt < 4; dt++) {
            bool allowed = d.dtypes == NPU_DT_NONE ? dt == 0 : (d.dtypes >> dt & 1);
            npu_insn in;
            int rc = npu_decode(LeastWord(op, dt), &in);
            if (allowed)
                EXPECT_EQ(rc, NPU_OK) << d.mnemonic << "." << npu_dtype_name((npu_dtype)dt);
            else
                EXPECT_LT(rc, 0) << d.mnemonic << "." << npu_dtype_name((npu_dtype)dt);
        }
    }
}

TEST(Isa, DecodeRejectsUnassignedOpcodes)
{
    std::set<int> used;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++)
        used.insert(npu_insn_table[op].opcode);
    for (int byte = 0; byte < 256; byte++) {
        if (used.count(byte))
            continue;
        npu_insn in;
        EXPECT_LT(npu_decode((uint64_t)byte, &in), 0) << "opcode " << byte;
    }
}

namespace {

// Random operands within each kind's legal range, with the literal and
// float corner cases (zeros, infinities, NaNs, subnormals) drawn often.
class OperandGen {
public:
    explicit OperandGen(uint32_t seed) : rng_(seed) {}

    uint32_t Bits(unsigned n) { return n >= 32 ? (uint32_t)rng_() : (uint32_t)rng_() & ((1u << n) - 1); }
    int32_t Int32() { return (int32_t)(uint32_t)rng_(); }
    bool Chance(unsigned percent) { return rng_() % 100 < percent; }

    uint32_t F16Bits()
    {
        static const uint16_t special[] = { 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7e01,
                                            0xfe00, 0x7c01, 0x0001, 0x8001, 0x03ff, 0x0400,
                                            0x7bff, 0xfbff, 0x3c00, 0x3555 };
        return Chance(30) ? special[rng_() % 16] : Bits(16);
    }
    uint32_t F32Bits()
    {
        static const uint32_t special[] = { 0x00000000, 0x80000000, 0x7f800000, 0xff800000,
                                            0x7fc00000, 0x7fc00001, 0xffc00000, 0x7f800001,
                                            0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff,
                                            0x3f800000, 0x3d372713, 0x4b800001, 0x4f000000 };
        return Chance(30) ? special[rng_() % 16] : Bits(32);
    }

    // A 16-bit lane's literal is kept as its lane reads it (any other upper
    // half does not decode: Isa.DecodeRejectsA16BitLiteralWithAnotherUpperHalf).
    int32_t Lit(npu_dtype dt)
    {
        switch (dt) {
        case NPU_F16: return (int32_t)F16Bits();
        case NPU_F32: return (int32_t)F32Bits();
        case NPU_I16: return (int16_t)Bits(16);
        case NPU_I32: return Int32();
        }
        return 0;
    }

    void Fill(npu_insn &in, npu_operand_kind k)
    {
        switch (k) {
        case NPU_OPK_SD: case NPU_OPK_SDRW: case NPU_OPK_VD: case NPU_OPK_VS: in.rd = (uint8_t)Bits(5); break;
        case NPU_OPK_SA: case NPU_OPK_VA: in.rs1 = (uint8_t)Bits(5); break;
        case NPU_OPK_SB: case NPU_OPK_VB: in.rs2 = (uint8_t)Bits(5); break;
        case NPU_OPK_SC: case NPU_OPK_VC: in.rs3 = (uint8_t)Bits(5); break;
        case NPU_OPK_PD: in.rd = (uint8_t)Bits(3); break;
        case NPU_OPK_PA: in.rs1 = (uint8_t)Bits(3); break;
        case NPU_OPK_PB: in.rs2 = (uint8_t)Bits(3); break;
        case NPU_OPK_PS: in.pg = (uint8_t)Bits(3); break;
        case NPU_OPK_IMM: in.imm = Chance(20) ? (Chance(50) ? INT32_MIN : INT32_MAX) : Int32(); break;
        case NPU_OPK_U6: in.imm = (int32_t)Bits(6); break;
        case NPU_OPK_ULANE: in.imm = (int32_t)Bits(npu_dtype_bytes((npu_dtype)in.dt) == 2 ? 4 : 5); break;
        case NPU_OPK_LIT: in.imm = Lit((npu_dtype)in.dt); break;
        case NPU_OPK_F32: in.imm = (int32_t)F32Bits(); break;
        // The round trip places the branch at instruction 128 of 256: the
        // assembler takes only targets inside the program.
        case NPU_OPK_REL: in.imm = (int32_t)Bits(8) - 128; break;
        case NPU_OPK_MEM:
            in.rs1 = (uint8_t)Bits(5);
            in.imm = Chance(20) ? 0 : Chance(10) ? INT32_MIN : Int32();
            {
                in.vl = npu_format_has_vector_mem((npu_format)npu_insn_table[in.op].format) && Chance(30);
            }
            break;
        case NPU_OPK_SPR: in.imm = (int32_t)(rng_() % NPU_NUM_SPRS); break;
        case NPU_OPK_DIM: in.rd = (uint8_t)(1 + rng_() % 2); break;
        case NPU_OPK_TAG: in.rd = (uint8_t)Bits(5); break;
        case NPU_OPK_TAGI: in.imm = (int32_t)Bits(5); break;
        case NPU_OPK_NONE: break;
        }
    }

private:
    std::mt19937 rng_;
};

// Calls f(op, dt) for every row of the table and every dtype it takes.
template <class F> void ForEachRowAndDtype(F f)
{
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        for (unsigned dt = 0; dt < 4; dt++)
            if (d.dtypes == NPU_DT_NONE ? dt == 0 : (d.dtypes >> dt & 1))
                f(op, dt);
    }
}

// An instruction of the row with random operands; when the row takes a
// mask and masked() says so (asked after the operands are drawn), a random
// predicate too.
template <class M> npu_insn RandomInsn(OperandGen &gen, unsigned op, unsigned dt, M masked)
{
    const npu_insn_desc &d = npu_insn_table[op];
    const npu_format_desc &f = npu_format_table[d.format];
    npu_insn in{};
    in.op = (uint16_t)op;
    in.dt = (uint8_t)dt;
    for (unsigned i = 0; i < f.num_operands; i++)
        gen.Fill(in, (npu_operand_kind)f.operands[i]);
    if ((d.flags & NPU_F_MASK) && masked()) {
        in.pm = 1;
        in.pg = (uint8_t)gen.Bits(3);
    }
    return in;
}

// The round trip's instruction sits between kAt nops on each side.
constexpr size_t kAt = 128;
std::string Nops(size_t n)
{
    std::string s;
    for (size_t i = 0; i < n; i++)
        s += "nop\n";
    return s;
}

} // namespace

TEST(Isa, EveryRowRoundTripsThroughDisassemblyAndAssembly)
{
    OperandGen gen(20240607);
    size_t checked = 0;
    ForEachRowAndDtype([&](unsigned op, unsigned dt) {
        const npu_insn_desc &d = npu_insn_table[op];
        for (int trial = 0; trial < 200; trial++) {
            const npu_insn in = RandomInsn(gen, op, dt, [&] { return gen.Chance(50); });
            uint64_t word = npu_encode(&in);
            npu_insn decoded;
            ASSERT_EQ(npu_decode(word, &decoded), NPU_OK) << d.mnemonic;
            ASSERT_TRUE(SameInsn(in, decoded)) << d.mnemonic;

            std::string text = Disasm(decoded, kAt);
            const std::string src = Nops(kAt) + text + "\n" + Nops(kAt);
            npu_program prog;
            npu_diag diag;
            int rc = npu_assemble("roundtrip.s", src.c_str(), src.size(), nullptr, &prog,
                                  &diag);
            ASSERT_EQ(rc, NPU_OK) << text << "\n  -> " << diag.col << ": " << diag.message;
            ASSERT_EQ(prog.count, 2 * kAt + 1) << text;
            EXPECT_EQ(prog.words[kAt], word) << text;
            npu_insn again;
            ASSERT_EQ(npu_decode(prog.words[kAt], &again), NPU_OK) << text;
            EXPECT_TRUE(SameInsn(again, in)) << text;
            EXPECT_TRUE(SameInsn(prog.insns[kAt], in)) << text;
            npu_program_free(&prog);
            checked++;
        }
    });
    EXPECT_GT(checked, 10000u);
}

TEST(Disasm, PrintsCanonicalOperands)
{
    // Disassembles the last instruction at its own index, or at `index`.
    auto text = [](const char *src, long index = -1) {
        npu_program prog;
        npu_diag diag;
        EXPECT_EQ(npu_assemble("t.s", src, strlen(src), nullptr, &prog, &diag), NPU_OK)
            << src << ": " << diag.message;
        size_t last = prog.count - 1;
        std::string s = prog.count ? Disasm(prog.insns[last], index < 0 ? last : (size_t)index)
                                   : "";
        npu_program_free(&prog);
        return s;
    };
    EXPECT_EQ(text("vadd.f32 v1, v2, v3, p1"), "vadd.f32 v1, v2, v3, p1");
    EXPECT_EQ(text("vadd.i16 v1,v2,v3"), "vadd.i16 v1, v2, v3");
    EXPECT_EQ(text("vld.f16 v4, [s2 + 64]"), "vld.f16 v4, [s2 + 64]");
    EXPECT_EQ(text("vld.f16 v4, [s2+0]"), "vld.f16 v4, [s2]");
    EXPECT_EQ(text("vst.f32 v4, [s2 - 8], p3"), "vst.f32 v4, [s2 - 8], p3");
    EXPECT_EQ(text("vlds.i32 v4, [s9 + 4], s3"), "vlds.i32 v4, [s9 + 4], s3");
    EXPECT_EQ(text("srd s1, lanes.f32"), "srd s1, lanes.f32");
    EXPECT_EQ(text("top: nop\n j top"), "j @0");
    EXPECT_EQ(text("top: nop\n j top", 10), "j @9"); // pc-relative: -1 from 10
    EXPECT_EQ(text("j @0"), "j @0");
    EXPECT_EQ(text("lf s1, 0.044715"), "lf s1, 0.044715");
    EXPECT_EQ(text("lf s1, 1"), "lf s1, 1.0");
    EXPECT_EQ(text("lf s1, -0.0"), "lf s1, -0.0");
    EXPECT_EQ(text("lf s1, -inf"), "lf s1, -inf");
    EXPECT_EQ(text("lf s1, nan"), "lf s1, nan");
    EXPECT_EQ(text("lf s1, bits(0x7fc00001)"), "lf s1, bits(0x7fc00001)");
    EXPECT_EQ(text("vbcasti.f16 v0, 0.5"), "vbcasti.f16 v0, 0.5");
    EXPECT_EQ(text("vbcasti.f16 v0, 1.0"), "vbcasti.f16 v0, 1.0");
    EXPECT_EQ(text("vbcasti.i16 v0, 0xffff"), "vbcasti.i16 v0, -1");
    EXPECT_EQ(text("vsel.f16 v1, v2, v3, p4"), "vsel.f16 v1, v2, v3, p4");
    EXPECT_EQ(text("dmadim 2, s1, s2, s3"), "dmadim 2, s1, s2, s3");
    EXPECT_EQ(text("dmald s1, s2, s3, 7"), "dmald s1, s2, s3, 7");
    EXPECT_EQ(text("dmawait 31"), "dmawait 31");
    EXPECT_EQ(text("vshli.i16 v1, v2, 15, p0"), "vshli.i16 v1, v2, 15, p0");
    EXPECT_EQ(text("halt"), "halt");
}

TEST(Disasm, InvalidAndTinyBuffersAreSafe)
{
    npu_insn in{};
    char buf[16];
    npu_disasm(&in, 0, buf, sizeof buf);
    EXPECT_STREQ(buf, "<invalid>");
    in.op = NPU_OP_VFMA;
    in.dt = NPU_F32;
    char tiny[6];
    npu_disasm(&in, 0, tiny, sizeof tiny);
    EXPECT_STREQ(tiny, "vfma.");
    npu_disasm(&in, 0, tiny, 1);
    EXPECT_STREQ(tiny, "");
}

// A maskable row's pg is its mask only while pm is set: with pm clear it must
// be zero, as every other unused bit (0x0e310540 decoded as 0x00310540 did,
// `vadd.f32 v1, v2, v3`, and ran).
TEST(Isa, DecodeRejectsAPredicateWithoutItsMaskBit)
{
    npu_insn in;
    EXPECT_EQ(npu_decode(0x0000000000310540ull, &in), NPU_OK);
    EXPECT_EQ(npu_decode(0x000000000e310540ull, &in), NPU_EDECODE);
    EXPECT_EQ(npu_decode(0x000000001e310540ull, &in), NPU_OK);  // pm set: masked by p7
    EXPECT_EQ(Disasm(in), "vadd.f32 v1, v2, v3, p7");
    size_t rows = 0;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++) {
        const npu_insn_desc &d = npu_insn_table[op];
        if (!(d.flags & NPU_F_MASK))
            continue;
        rows++;
        unsigned dt = 0;
        while (d.dtypes && !(d.dtypes & (1u << dt)))
            dt++;
        const uint64_t base = d.opcode | (uint64_t)dt << NPU_SH_DT;
        for (uint64_t pg = 1; pg < 8; pg++) {
            EXPECT_EQ(npu_decode(base | pg << NPU_SH_PG, &in), NPU_EDECODE) << d.mnemonic << " pg " << pg;
            EXPECT_EQ(npu_decode(base | pg << NPU_SH_PG | 1ull << NPU_SH_PM, &in), NPU_OK) << d.mnemonic;
        }
    }
    EXPECT_GT(rows, 50u);
}

namespace {

uint64_t Encoded(npu_opcode op, unsigned dt, uint8_t rd, int32_t imm)
{
    npu_insn in{};
    in.op = (uint16_t)op;
    in.dt = (uint8_t)dt;
    in.rd = rd;
    in.imm = imm;
    return npu_encode(&in);
}

bool Decodes(uint64_t w)
{
    npu_insn in;
    return npu_decode(w, &in) == NPU_OK;
}

} // namespace

// A field holds only what the assembler accepts for its operand: `dis`
// printed `slli s1, s2, 64`, `vshli.i16 v1, v2, 16`, `srd s16, 255` and
// `dmadim 3, s0, s0, s0`, none of which assemble. They are .word now.
TEST(Isa, DecodeRejectsValuesTheAssemblerRefuses)
{
    for (uint64_t w : { 0x0000004000010416ull, 0x000000100001065eull, 0x000000ff00004020ull, 0x0000000000000c90ull })
        EXPECT_FALSE(Decodes(w)) << std::hex << w;
    struct Edge {
        npu_opcode op;
        unsigned dt;
        uint8_t rd;
        int32_t last_ok, first_bad;
        bool in_rd;
    } edges[] = {
        { NPU_OP_SLLI, 0, 1, 63, 64, false },
        { NPU_OP_SRAI, 0, 1, 63, 64, false },
        { NPU_OP_VSHLI, NPU_I16, 1, 15, 16, false },
        { NPU_OP_VSHLI, NPU_I32, 1, 31, 32, false },
        { NPU_OP_SRD, 0, 1, NPU_NUM_SPRS - 1, NPU_NUM_SPRS, false },
        { NPU_OP_DMAWAIT, 0, 0, NPU_NUM_DMA_TAGS - 1, NPU_NUM_DMA_TAGS, false },
        { NPU_OP_DMADIM, 0, 0, 2, 3, true },
    };
    for (const Edge &e : edges) {
        const char *name = npu_insn_table[e.op].mnemonic;
        auto word = [&](int32_t v) { return e.in_rd ? Encoded(e.op, e.dt, (uint8_t)v, 0) : Encoded(e.op, e.dt, e.rd, v); };
        EXPECT_TRUE(Decodes(word(e.last_ok))) << name << " " << e.last_ok;
        EXPECT_FALSE(Decodes(word(e.first_bad))) << name << " " << e.first_bad;
        EXPECT_EQ(Decodes(word(0)), !e.in_rd) << name << " 0";  // dmadim's dimension is 1 or 2
        if (!e.in_rd) {
            EXPECT_FALSE(Decodes(word(-1))) << name << " -1";
            EXPECT_FALSE(Decodes(word(INT32_MIN))) << name;
        }
    }
}

namespace {

// Decodes w; when it decodes, it is the word npu_encode writes, and its
// disassembly assembles back to it (a branch at instruction 0 of a
// one-instruction program: only @0 is inside, any other target is refused
// as outside the program). Returns whether it decoded.
bool ExpectReassembles(uint64_t w)
{
    npu_insn in;
    if (npu_decode(w, &in) != NPU_OK)
        return false;
    EXPECT_EQ(npu_encode(&in), w) << std::hex << w;
    const std::string text = Disasm(in);
    npu_program prog;
    npu_diag diag;
    int rc = npu_assemble("w.s", text.c_str(), text.size(), nullptr, &prog, &diag);
    const npu_format_desc &f = npu_format_table[npu_insn_table[in.op].format];
    const bool branch = std::find(f.operands, f.operands + f.num_operands, NPU_OPK_REL) != f.operands + f.num_operands;
    if (branch && in.imm != 0) {
        EXPECT_EQ(rc, NPU_ESYNTAX) << text;
        EXPECT_NE(std::string(diag.message).find("is outside the program (0..0)"), std::string::npos)
            << text << ": " << diag.message;
        return true;
    }
    EXPECT_EQ(rc, NPU_OK) << std::hex << w << ": " << text << "\n  -> " << diag.col << ": " << diag.message;
    if (rc == NPU_OK) {
        EXPECT_EQ(prog.count, 1u) << text;
        if (prog.count == 1) {
            EXPECT_EQ(prog.words[0], w) << std::hex << w << ": " << text;
        }
        npu_program_free(&prog);
    }
    return true;
}

} // namespace

// What `dis` prints assembles to the same bytes: every word that decodes is
// the one encoding of its instruction and its text reads back to it. Words:
// uniformly random ones, random ones with a real opcode and random bits in
// and around its fields, and every single and double bit flip of valid
// encodings of every row.
TEST(Isa, EveryWordThatDecodesReassemblesToItself)
{
    std::mt19937_64 rng(20250101);
    size_t decoded = 0;
    for (int i = 0; i < 200000; i++)
        decoded += ExpectReassembles(rng());
    std::vector<unsigned> ops;
    for (unsigned op = 1; op < NPU_NUM_OPS; op++)
        ops.push_back(op);
    for (int i = 0; i < 100000; i++) {
        const npu_insn_desc &d = npu_insn_table[ops[rng() % ops.size()]];
        uint64_t used = npu_format_field_mask((npu_format)d.format, d.flags & NPU_F_MASK);
        uint64_t noise = rng() % 4 == 0 ? 1ull << (rng() % 64) : 0;  // now and then a bit outside
        uint64_t w = (d.opcode | (rng() & used & ~0xffull) | noise);
        if (rng() % 2)  // small immediates, where most legal values are
            w &= 0x000000ffffffffffull;
        decoded += ExpectReassembles(w);
    }
    OperandGen gen(77);
    size_t flips = 0;
    ForEachRowAndDtype([&](unsigned op, unsigned dt) {
        for (int trial = 0; trial < 3; trial++) {
            const npu_insn in = RandomInsn(gen, op, dt, [&] { return trial == 1; });
            const uint64_t w = npu_encode(&in);
            ASSERT_TRUE(ExpectReassembles(w)) << npu_insn_table[op].mnemonic;
            for (int a = 0; a < 64; a++) {
                decoded += ExpectReassembles(w ^ 1ull << a);
                for (int b = a + 1; b < 64; b++)
                    decoded += ExpectReassembles(w ^ 1ull << a ^ 1ull << b);
                flips++;
            }
        }
    });
    EXPECT_GT(flips, 10000u);
    EXPECT_GT(decoded, 100000u);
}
