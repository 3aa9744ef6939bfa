// UB vector and scalar loads and stores, and the DMA engine's descriptors,
// copies and traps, on the functional core.
#include "exec_harness.h"

using namespace exec_test;

// ================================ UB loads and stores ============================

TEST_P(ExecVlen, VectorStoreThenLoadRoundTripsAndReportsTheAccess)
{
    Machine m(GetParam());
    for (int dt = 0; dt < 4; dt++) {
        unsigned n = m.lanes(dt), es = width(dt) / 8;
        for (unsigned i = 0; i < n; i++)
            m.set_lane(1, dt, i, 0x1000 + i * 3);
        m.c.s[4] = 512;
        npu_step_info info;
        ASSERT_EQ(m.exec(vmem(NPU_OP_VST, dt, 1, 4, 64), &info), NPU_CORE_HALTED);
        EXPECT_EQ(info.ub_addr, 576u);
        EXPECT_EQ(info.ub_bytes, (uint64_t)n * es);
        EXPECT_EQ(info.ub_stride, 0);
        EXPECT_EQ(info.ub_lanes, n);
        for (unsigned i = 0; i < n; i++) {
            uint32_t x = 0;
            std::memcpy(&x, m.c.ub + 576 + i * es, es);
            ASSERT_EQ(x, 0x1000 + i * 3);
        }
        std::memset(m.c.v[2], 0, sizeof m.c.v[2]);
        ASSERT_EQ(m.exec(vmem(NPU_OP_VLD, dt, 2, 4, 64)), NPU_CORE_HALTED);
        EXPECT_EQ(std::memcmp(m.c.v[1], m.c.v[2], GetParam() / 8), 0);
    }
}

TEST_P(ExecVlen, MaskedStoreWritesOnlyActiveLanesAndSkipsBoundsOfInactiveOnes)
{
    Machine m(GetParam());
    unsigned n = m.lanes(NPU_F32);
    for (unsigned i = 0; i < n; i++)
        m.set_lane(1, NPU_F32, i, 0xa0000000u + i);
    std::memset(m.c.ub, 0x55, 16384);
    // Lanes 0..2 active; the vector starts 12 bytes before the end of UB, so
    // lanes 3.. would be out of bounds but are inactive: no trap.
    m.c.p[1][0] = 7;
    m.c.p[1][1] = 0;
    m.c.s[2] = 16384 - 12;
    npu_step_info info;
    ASSERT_EQ(m.exec(masked(vmem(NPU_OP_VST, NPU_F32, 1, 2, 0), 1), &info), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned i = 0; i < 3; i++) {
        uint32_t x;
        std::memcpy(&x, m.c.ub + 16384 - 12 + 4 * i, 4);
        EXPECT_EQ(x, 0xa0000000u + i);
    }
    EXPECT_EQ(m.c.ub[16384 - 13], 0x55);
    EXPECT_EQ(info.ub_lanes, 3u);
    EXPECT_EQ(info.ub_bytes, 12u);

    // A masked load zeroes the inactive lanes of vd (no merge: the old value
    // is not an input, so a masked tail load carries no false dependency).
    std::memset(m.c.v[3], 0x77, sizeof m.c.v[3]);
    m.c.p[1][0] = 2;
    m.c.s[2] = 0;
    std::memcpy(m.c.ub + 4, "\x01\x02\x03\x04", 4);
    ASSERT_EQ(m.exec(masked(vmem(NPU_OP_VLD, NPU_F32, 3, 2, 0), 1)), NPU_CORE_HALTED);
    EXPECT_EQ(m.lane(3, NPU_F32, 1), 0x04030201u);
    EXPECT_EQ(m.lane(3, NPU_F32, 0), 0u);
    EXPECT_EQ(m.lane(3, NPU_F32, n - 1), 0u);
}

TEST_P(ExecVlen, VlOffsetsCountVectorLengths)
{
    Machine m(GetParam());
    const unsigned vlenb = GetParam() / 8;
    for (unsigned i = 0; i < 4 * vlenb; i++)
        m.c.ub[i] = uint8_t(i);
    m.c.s[2] = 0;
    npu_insn ld = vmem(NPU_OP_VLD, NPU_I16, 1, 2, 3);
    ld.vl = 1;  // [s2 + 3 vl]
    npu_step_info info;
    ASSERT_EQ(m.exec(ld, &info), NPU_CORE_HALTED) << m.c.trap.message;
    EXPECT_EQ(info.ub_addr, 3u * vlenb);
    EXPECT_EQ(m.lane(1, NPU_I16, 0), uint32_t(uint8_t(3 * vlenb) | (uint8_t(3 * vlenb + 1) << 8)));
}

TEST_P(ExecVlen, StridedAccessesPlaceLaneIAtBasePlusIStride)
{
    Machine m(GetParam());
    unsigned n = m.lanes(NPU_I16);
    for (unsigned i = 0; i < n; i++)
        m.set_lane(1, NPU_I16, i, 100 + i);
    m.c.s[2] = 8192;
    m.c.s[3] = (uint64_t)-6; // negative stride
    npu_step_info info;
    ASSERT_EQ(m.exec(insn(NPU_OP_VSTS, NPU_I16, 1, 2, 3, 0, 2), &info), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned i = 0; i < n; i++) {
        uint16_t x;
        std::memcpy(&x, m.c.ub + 8194 - 6 * (int)i, 2);
        ASSERT_EQ(x, 100 + i);
    }
    EXPECT_EQ(info.ub_stride, -6);
    EXPECT_EQ(info.ub_addr, 8194u - 6 * (n - 1));
    EXPECT_EQ(info.ub_bytes, 6u * (n - 1) + 2);
    ASSERT_EQ(m.exec(insn(NPU_OP_VLDS, NPU_I16, 4, 2, 3, 0, 2)), NPU_CORE_HALTED);
    EXPECT_EQ(std::memcmp(m.c.v[1], m.c.v[4], GetParam() / 8), 0);
    // Stride 0 broadcasts one element.
    m.c.s[3] = 0;
    ASSERT_EQ(m.exec(insn(NPU_OP_VLDS, NPU_I16, 5, 2, 3, 0, 2)), NPU_CORE_HALTED);
    for (unsigned i = 0; i < n; i++)
        ASSERT_EQ(m.lane(5, NPU_I16, i), 100u);
}

TEST(Exec, MisalignedVectorLoadTrapsWithTheLaneAddress)
{
    Machine m;
    std::memset(m.c.v[1], 0x33, sizeof m.c.v[1]);
    m.load({ li(2, 100), vmem(NPU_OP_VLD, NPU_F32, 1, 2, 2), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 102u);
    EXPECT_STREQ(m.c.trap.message, "vld.f32: lane 0 at UB 0x66 is not 4-byte aligned");
    EXPECT_EQ(m.c.v[1][0], 0x33); // nothing loaded
}

TEST(Exec, VectorLoadOutsideUbTrapsAtTheFirstBadByte)
{
    Machine m;
    std::memset(m.c.v[1], 0x33, sizeof m.c.v[1]);
    m.load({ li(2, 16384 - 16), vmem(NPU_OP_VLD, NPU_F16, 1, 2, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_UB_BOUNDS);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 16384u);
    EXPECT_EQ(m.c.v[1][0], 0x33); // the in-bounds lanes were not loaded either
    EXPECT_STREQ(npu_trap_name(m.c.trap.kind), "ub_out_of_bounds");

    m.load({ li(2, -4), vmem(NPU_OP_VST, NPU_F32, 1, 2, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_UB_BOUNDS);
    EXPECT_EQ(m.c.trap.addr, (uint64_t)-4);
}

TEST(Exec, ScalarLoadStoreMoveEightAlignedBytes)
{
    Machine m;
    m.c.s[1] = 0x0123456789abcdefull;
    m.c.s[2] = 64;
    npu_step_info info;
    ASSERT_EQ(m.exec(insn(NPU_OP_SST, 0, 0, 2, 1, 0, 8), &info), NPU_CORE_HALTED);
    EXPECT_EQ(m.c.ub[72], 0xef);
    EXPECT_EQ(m.c.ub[79], 0x01);
    EXPECT_EQ(info.ub_addr, 72u);
    EXPECT_EQ(info.ub_bytes, 8u);
    ASSERT_EQ(m.exec(insn(NPU_OP_SLD, 0, 3, 2, 0, 0, 8)), NPU_CORE_HALTED);
    EXPECT_EQ(m.c.s[3], 0x0123456789abcdefull);
    EXPECT_EQ(m.exec(insn(NPU_OP_SLD, 0, 3, 2, 0, 0, 4)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_EQ(m.c.trap.addr, 68u);
    m.c.s[2] = 16384;
    EXPECT_EQ(m.exec(insn(NPU_OP_SST, 0, 0, 2, 1, 0, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_UB_BOUNDS);
    EXPECT_EQ(m.c.trap.addr, 16384u);
}

// ================================ DMA ==============================================

namespace {

npu_insn dmadim(int dim, int count_reg, int gm_stride_reg, int ub_stride_reg)
{
    return insn(NPU_OP_DMADIM, 0, dim, count_reg, gm_stride_reg, ub_stride_reg);
}

// dmald/dmast: ub = s[ub_reg], gm = s[gm_reg], row bytes = s[row_reg], tag in rd.
npu_insn dma(npu_opcode op, int ub_reg, int gm_reg, int row_reg, int tag)
{
    return insn(op, 0, tag, ub_reg, gm_reg, row_reg);
}

uint8_t gm_pattern(uint64_t i) { return (uint8_t)(i * 7 + 3); }

} // namespace

TEST(Exec, OneDimensionalDmaCopiesOneRowAndReportsIt)
{
    Machine m;
    m.c.s[1] = 256;  // ub
    m.c.s[2] = 1024; // gm
    m.c.s[3] = 96;   // row bytes
    npu_step_info info;
    ASSERT_EQ(m.exec(dma(NPU_OP_DMALD, 1, 2, 3, 4), &info), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned i = 0; i < 96; i++)
        ASSERT_EQ(m.c.ub[256 + i], gm_pattern(1024 + i));
    EXPECT_EQ(m.c.ub[256 + 96], 0);
    EXPECT_EQ(info.has_dma, 1);
    EXPECT_EQ(info.dma.to_ub, 1);
    EXPECT_EQ(info.dma.tag, 4u);
    EXPECT_EQ(info.dma.ub_addr, 256u);
    EXPECT_EQ(info.dma.gm_addr, 1024u);
    EXPECT_EQ(info.dma.row_bytes, 96u);
    EXPECT_EQ(info.dma.total_bytes, 96u);
    EXPECT_EQ(info.dma.shape.count[0], 1u);
    EXPECT_EQ(m.c.dma_tags_issued, 1u << 4);

    // And back out to another GM place, once the load has landed.
    ASSERT_EQ(m.exec(insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 4)), NPU_CORE_HALTED) << m.c.trap.message;
    m.c.s[2] = 4096;
    ASSERT_EQ(m.exec(dma(NPU_OP_DMAST, 1, 2, 3, 5), &info), NPU_CORE_HALTED);
    EXPECT_EQ(info.dma.to_ub, 0);
    for (unsigned i = 0; i < 96; i++)
        ASSERT_EQ(m.gmem[4096 + i], gm_pattern(1024 + i));
    EXPECT_EQ(m.gmem[4096 + 96], gm_pattern(4096 + 96));
}

TEST(Exec, TwoDimensionalDmaStepsBothSidesByTheirStrides)
{
    Machine m;
    // 3 rows of 32 bytes: GM rows 160 bytes apart, packed in UB with a 64-byte pitch.
    m.c.s[1] = 3;
    m.c.s[2] = 160;
    m.c.s[3] = 64;
    m.c.s[4] = 0;    // ub
    m.c.s[5] = 2048; // gm
    m.c.s[6] = 32;   // row
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMALD, 4, 5, 6, 0), insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 0), halt() });
    ASSERT_EQ(m.run(), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned r = 0; r < 3; r++)
        for (unsigned i = 0; i < 32; i++)
            ASSERT_EQ(m.c.ub[r * 64 + i], gm_pattern(2048 + r * 160 + i)) << r << " " << i;
    EXPECT_EQ(m.c.ub[32], 0); // the gap between UB rows is untouched
}

TEST(Exec, ThreeDimensionalDmaWalksDimensionOneInsideDimensionTwo)
{
    Machine m;
    // dim 1: 2 rows, gm +64, ub +32 ; dim 2: 3 planes, gm +1024, ub +128 ; row 32 bytes
    m.c.s[1] = 2;
    m.c.s[2] = 64;
    m.c.s[3] = 32;
    m.c.s[7] = 3;
    m.c.s[8] = 1024;
    m.c.s[9] = 128;
    m.c.s[4] = 512;
    m.c.s[5] = 0;
    m.c.s[6] = 32;
    npu_step_info info;
    m.load({ dmadim(1, 1, 2, 3), dmadim(2, 7, 8, 9), dma(NPU_OP_DMALD, 4, 5, 6, 31), halt() });
    npu_core_step(&m.c, nullptr);
    npu_core_step(&m.c, nullptr);
    ASSERT_EQ(npu_core_step(&m.c, &info), NPU_CORE_RUNNING) << m.c.trap.message;
    EXPECT_EQ(info.dma.total_bytes, 2u * 3 * 32);
    EXPECT_EQ(info.dma.shape.count[1], 3u);
    EXPECT_EQ(info.dma.shape.gm_stride[1], 1024);
    for (unsigned k2 = 0; k2 < 3; k2++)
        for (unsigned k1 = 0; k1 < 2; k1++)
            for (unsigned i = 0; i < 32; i++)
                ASSERT_EQ(m.c.ub[512 + k2 * 128 + k1 * 32 + i], gm_pattern(k2 * 1024 + k1 * 64 + i));

    // Store it back transposed-ish with a negative GM stride on dimension 1.
    m.c.s[2] = (uint64_t)-64;
    m.c.s[5] = 8192;
    m.load({ insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 31), dmadim(1, 1, 2, 3), dma(NPU_OP_DMAST, 4, 5, 6, 1), halt() });
    ASSERT_EQ(m.run(), NPU_CORE_HALTED) << m.c.trap.message;
    for (unsigned k2 = 0; k2 < 3; k2++)
        for (unsigned k1 = 0; k1 < 2; k1++)
            for (unsigned i = 0; i < 32; i++)
                ASSERT_EQ(m.gmem[8192 + k2 * 1024 - k1 * 64 + i], gm_pattern(k2 * 1024 + k1 * 64 + i));

    // Reset restores the one-row descriptor.
    npu_core_reset(&m.c);
    EXPECT_EQ(m.c.dma_desc.count[0], 1u);
    EXPECT_EQ(m.c.dma_desc.count[1], 1u);
    EXPECT_EQ(m.c.dma_desc.gm_stride[1], 0);
}

TEST(Exec, DmaOutsideGmTrapsBeforeCopyingAnything)
{
    Machine m; // GM is 65536 bytes
    m.c.s[1] = 2;
    m.c.s[2] = 65536 - 64; // second row starts at the last 64 bytes...
    m.c.s[3] = 128;
    m.c.s[4] = 0;
    m.c.s[5] = 0;
    m.c.s[6] = 96; // ...and is 96 bytes long
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMALD, 4, 5, 6, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_GM_BOUNDS);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 65536u);
    EXPECT_EQ(m.c.ub[0], 0); // the first, in-bounds row was not copied
    EXPECT_EQ(m.c.dma_tags_issued, 0u);
    EXPECT_STREQ(npu_trap_name(m.c.trap.kind), "gm_out_of_bounds");
    EXPECT_STREQ(m.c.trap.message, "dmald: rows of 96 bytes from GM 0x0 reach outside the 65536-byte GM");
}

TEST(Exec, DmaOutsideUbOrMisalignedTraps)
{
    Machine m;
    m.c.s[4] = 16384 - 32;
    m.c.s[5] = 0;
    m.c.s[6] = 64;
    EXPECT_EQ(m.exec(dma(NPU_OP_DMALD, 4, 5, 6, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_UB_BOUNDS);
    EXPECT_EQ(m.c.trap.addr, 16384u);

    m.c.s[4] = 0;
    m.c.s[5] = 48; // GM address not a multiple of 32
    EXPECT_EQ(m.exec(dma(NPU_OP_DMALD, 4, 5, 6, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_EQ(m.c.trap.addr, 48u);

    m.c.s[5] = 64;
    m.c.s[6] = 40; // row not a multiple of 32
    EXPECT_EQ(m.exec(dma(NPU_OP_DMAST, 4, 5, 6, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_STREQ(m.c.trap.message, "dmast: row of 40 bytes is not a multiple of 32");

    // A row of 0 bytes moves nothing and is no transfer (docs/isa.md), at
    // any address; its tag counts as used.
    m.c.s[6] = 0;
    m.c.s[5] = 8;
    npu_step_info zero{};
    EXPECT_EQ(m.exec(dma(NPU_OP_DMAST, 4, 5, 6, 2), &zero), NPU_CORE_HALTED) << m.c.trap.message;
    EXPECT_FALSE(zero.has_dma);
    EXPECT_TRUE(m.c.dma_tags_issued >> 2 & 1);
    m.c.s[5] = 64;

    // A negative GM stride that walks below address 0.
    m.c.s[1] = 2;
    m.c.s[2] = (uint64_t)-64;
    m.c.s[3] = 32;
    m.c.s[5] = 32;
    m.c.s[6] = 32;
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMALD, 4, 5, 6, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_GM_BOUNDS);
    EXPECT_EQ(m.c.trap.addr, (uint64_t)-32);

    m.c.s[2] = 32;
    m.c.s[3] = 16; // UB stride not a multiple of 32
    m.c.s[6] = 32;
    m.load({ dmadim(1, 1, 2, 3), dma(NPU_OP_DMALD, 4, 5, 6, 0), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_MISALIGNED);
    EXPECT_EQ(m.c.trap.addr, 16u);
}

TEST(Exec, DmaDescriptorRejectsBadDimensionsAndZeroCounts)
{
    Machine m;
    m.c.s[1] = 4;
    EXPECT_EQ(m.exec(dmadim(3, 1, 0, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
    EXPECT_EQ(m.exec(dmadim(0, 1, 0, 0)), NPU_CORE_TRAPPED);
    m.c.s[1] = 0;
    EXPECT_EQ(m.exec(dmadim(1, 1, 0, 0)), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_ILLEGAL);
    EXPECT_EQ(m.c.dma_desc.count[0], 1u);
}

TEST(Exec, DmaWaitOnATagNoDmaUsedTraps)
{
    Machine m;
    m.load({ li(1, 1), insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 5), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_TRAPPED);
    EXPECT_EQ(m.c.trap.kind, NPU_TRAP_DMA_TAG);
    EXPECT_EQ(m.c.trap.pc, 1u);
    EXPECT_EQ(m.c.trap.addr, 0u);
    EXPECT_STREQ(m.c.trap.message, "dmawait on tag 5, which no DMA or cube operation has used");
    EXPECT_STREQ(npu_trap_name(m.c.trap.kind), "dma_tag");

    m.c.s[6] = 32;
    m.load({ dma(NPU_OP_DMALD, 4, 5, 6, 5), insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 5),
             insn(NPU_OP_DMAWAIT, 0, 0, 0, 0, 0, 5), halt() });
    EXPECT_EQ(m.run(), NPU_CORE_HALTED) << m.c.trap.message;
}
