// NC1HWC0 and fractal-matrix packing, and the accuracy arithmetic (ULP distances).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "npusim/errors.h"
#include "npusim/fp16.h"
#include "npusim/reference.h"
#include "npusim/tensor.h"

TEST(Tensor, C0IsThirtyTwoBytesOfElements)
{
    npu_layout l;
    ASSERT_EQ(npu_layout_init(&l, 2, 20, 3, 5, 2), 0);
    EXPECT_EQ(l.c0, 16u);
    EXPECT_EQ(l.c1, 2u);
    ASSERT_EQ(npu_layout_init(&l, 2, 20, 3, 5, 4), 0);
    EXPECT_EQ(l.c0, 8u);
    EXPECT_EQ(l.c1, 3u);
    EXPECT_EQ(npu_layout_elems(&l), 2u * 3 * 3 * 5 * 8);
    EXPECT_EQ(npu_layout_bytes(&l), npu_layout_elems(&l) * 4);
}

TEST(Tensor, RejectsZeroDimsAndOverflow)
{
    npu_layout l;
    EXPECT_NE(npu_layout_init(&l, 0, 1, 1, 1, 4), 0);
    EXPECT_NE(npu_layout_init(&l, 1, 1, 1, 1, 3), 0);
    EXPECT_NE(npu_layout_init(&l, 1ull << 50, 1ull << 20, 1, 1, 4), 0);
}

TEST(Tensor, PackUnpackRoundTripKeepsPaddingZero)
{
    for (unsigned esize : {2u, 4u}) {
        for (uint64_t c : {1ull, 7ull, 8ull, 16ull, 17ull, 33ull}) {
            npu_layout l;
            ASSERT_EQ(npu_layout_init(&l, 2, c, 3, 5, esize), 0);
            const uint64_t n = npu_layout_logical_elems(&l);
            std::vector<uint8_t> nchw(n * esize), packed(npu_layout_bytes(&l)), back(n * esize);
            for (uint64_t i = 0; i < nchw.size(); i++)
                nchw[i] = uint8_t(1 + i % 251);  // never zero
            npu_pack_nc1hwc0(&l, nchw.data(), packed.data());
            EXPECT_EQ(npu_padding_nonzero(&l, packed.data()), 0u);
            npu_unpack_nc1hwc0(&l, packed.data(), back.data());
            EXPECT_EQ(nchw, back) << "esize " << esize << " C " << c;
            // Element (n=1, c, h=2, w=4) lands where the NC1HWC0 formula says.
            uint64_t ch = c - 1;
            uint64_t src = ((1 * c + ch) * 3 + 2) * 5 + 4;
            uint64_t dst = (((1 * l.c1 + ch / l.c0) * 3 + 2) * 5 + 4) * l.c0 + ch % l.c0;
            EXPECT_EQ(0, std::memcmp(&packed[dst * esize], &nchw[src * esize], esize));
        }
    }
}

TEST(Tensor, PaddingCheckCountsNonZeroPaddedLanes)
{
    npu_layout l;
    ASSERT_EQ(npu_layout_init(&l, 1, 3, 2, 2, 4), 0);  // C0 = 8: 5 padded lanes per pixel
    std::vector<uint8_t> packed(npu_layout_bytes(&l), 0);
    packed[(0 * 8 + 3) * 4] = 1;   // pixel 0, channel 3 (padding)
    packed[(3 * 8 + 7) * 4 + 3] = 0x80;  // pixel 3, channel 7: -0.0f is non-zero bits
    EXPECT_EQ(npu_padding_nonzero(&l, packed.data()), 2u);
}

TEST(Tensor, FractalMatrixPlacesSixteenBySixteenBlocksRowMajor)
{
    npu_matrix_layout l;
    ASSERT_EQ(npu_matrix_layout_init(&l, 33, 20, 2), NPU_OK);
    EXPECT_EQ(l.rows1, 3u);
    EXPECT_EQ(l.cols1, 2u);
    EXPECT_EQ(npu_matrix_layout_bytes(&l), 3u * 2u * 512u);
    EXPECT_EQ(npu_matrix_layout_offset(&l, 0, 0), 0u);
    EXPECT_EQ(npu_matrix_layout_offset(&l, 0, 17), 256u + 1u);       // fractal (0, 1)
    EXPECT_EQ(npu_matrix_layout_offset(&l, 17, 3), 2u * 256u + 16u + 3u);  // fractal (1, 0), row 1
    std::vector<uint16_t> m(33 * 20), back(33 * 20, 0xffff);
    for (size_t i = 0; i < m.size(); i++)
        m[i] = uint16_t(i + 1);
    std::vector<uint16_t> packed(npu_matrix_layout_bytes(&l) / 2, 0xffff);
    npu_pack_fractal(&l, m.data(), packed.data());
    for (uint64_t r = 0; r < 48; r++)
        for (uint64_t c = 0; c < 32; c++)
            ASSERT_EQ(packed[npu_matrix_layout_offset(&l, r, c)], r < 33 && c < 20 ? m[r * 20 + c] : 0)
                << r << "," << c;
    npu_unpack_fractal(&l, packed.data(), back.data());
    EXPECT_EQ(back, m);
    EXPECT_EQ(npu_matrix_layout_init(&l, 0, 5, 2), NPU_EINVAL);
    EXPECT_EQ(npu_matrix_layout_init(&l, 5, 5, 3), NPU_EINVAL);
    EXPECT_EQ(npu_matrix_layout_init(&l, uint64_t(1) << 40, uint64_t(1) << 40, 4), NPU_EINVAL);
}

TEST(Accuracy, CorrectlyRoundedResultIsZeroUlp)
{
    double ref = 1.0 / 3.0;
    EXPECT_EQ(npu_ulp_error(double(float(ref)), ref, NPU_F32), 0.0);
    EXPECT_EQ(npu_ulp_error(npu_f16_to_f32(npu_f64_to_f16(ref)), ref, NPU_F16), 0.0);
}

TEST(Accuracy, UlpIsMeasuredInTheOutputTypeAtTheReference)
{
    // One binary32 step above 1.0 is 2^-23; the reference sits exactly at 1.
    EXPECT_DOUBLE_EQ(npu_ulp_error(1.0 + 0x1p-23, 1.0, NPU_F32), 1.0);
    EXPECT_DOUBLE_EQ(npu_ulp_error(1.0 + 0x1p-10 * 3, 1.0, NPU_F16), 3.0);
    // Subnormal range: the ULP is constant (2^-149 for binary32).
    EXPECT_DOUBLE_EQ(npu_ulp_error(0x1p-148, 0x1p-149 * 3, NPU_F32), 1.0);
}

TEST(Accuracy, NanAndInfinityMismatchAreInfinite)
{
    EXPECT_EQ(npu_ulp_error(NAN, NAN, NPU_F32), 0.0);
    EXPECT_TRUE(std::isinf(npu_ulp_error(NAN, 1.0, NPU_F32)));
    EXPECT_TRUE(std::isinf(npu_ulp_error(INFINITY, 1.0, NPU_F16)));
    EXPECT_EQ(npu_ulp_error(INFINITY, 1e300, NPU_F32), 0.0);  // 1e300 rounds to inf in binary32
}

TEST(Accuracy, BoundPassesOnUlpOrAbsolute)
{
    npu_accuracy a;
    npu_accuracy_init(&a);
    npu_tolerance b{1.0, 1e-8, 0};
    EXPECT_TRUE(npu_accuracy_add(&a, 0, 1.0 + 0x1p-23, 1.0, NPU_F32, &b));
    EXPECT_FALSE(npu_accuracy_add(&a, 1, 1.0 + 0x1p-21, 1.0, NPU_F32, &b));
    EXPECT_TRUE(npu_accuracy_add(&a, 2, 1e-9, 0.0, NPU_F32, &b));  // many ULP, tiny absolute
    EXPECT_EQ(a.checked, 3u);
    EXPECT_EQ(a.failures, 1u);
    EXPECT_EQ(a.worst_index, 2u);
    // The element the absolute bound covers does not count in max_ulp_beyond_abs:
    // the largest error there is element 1's 4 ULP.
    EXPECT_GT(a.max_ulp, 1e6);
    EXPECT_EQ(a.max_ulp_beyond_abs, 4.0);
}

TEST(Accuracy, ZeroSignAndNanNessAreCheckedAndCountedApart)
{
    npu_accuracy a;
    npu_accuracy_init(&a);
    npu_tolerance b{1e9, 1.0, 0};  // any value passes: only sign of zero and NaN-ness can fail
    EXPECT_FALSE(npu_accuracy_add(&a, 0, 0.0, -0.0, NPU_F32, &b));    // tanh(-0) = -0
    EXPECT_FALSE(npu_accuracy_add(&a, 1, -0.0, 0.0, NPU_F16, &b));
    EXPECT_FALSE(npu_accuracy_add(&a, 2, 0.0, -1e-300, NPU_F32, &b)); // rounds to -0
    EXPECT_TRUE(npu_accuracy_add(&a, 3, -0.0, -0.0, NPU_F32, &b));
    EXPECT_TRUE(npu_accuracy_add(&a, 4, -1e-30, 1e-30, NPU_F32, &b)); // not zeros: a value error
    EXPECT_FALSE(npu_accuracy_add(&a, 5, NAN, 1.0, NPU_F32, &b));
    EXPECT_FALSE(npu_accuracy_add(&a, 6, 1.0, NAN, NPU_F16, &b));
    EXPECT_TRUE(npu_accuracy_add(&a, 7, NAN, NAN, NPU_F32, &b));
    EXPECT_EQ(a.zero_sign_mismatches, 3u);
    EXPECT_EQ(a.nan_mismatches, 2u);
    EXPECT_EQ(a.failures, 5u);
    // zero_sign=any: the zeros are counted but pass; NaN-ness still fails.
    npu_accuracy any;
    npu_accuracy_init(&any);
    npu_tolerance lax{1e9, 1.0, 1};
    EXPECT_TRUE(npu_accuracy_add(&any, 0, 0.0, -0.0, NPU_F32, &lax));
    EXPECT_FALSE(npu_accuracy_add(&any, 1, NAN, 0.0, NPU_F32, &lax));
    EXPECT_EQ(any.zero_sign_mismatches, 1u);
    EXPECT_EQ(any.failures, 1u);
}

// sum_ulp is every element's error: a NaN against a number makes it
// infinite (it left such elements out, so a kernel that returned NaN for
// half its elements had a mean of 0 ULP).
TEST(Accuracy, TheSumOfErrorsCountsEveryElement)
{
    npu_accuracy a;
    npu_accuracy_init(&a);
    npu_tolerance b{1.0, 0.0, 0};
    npu_accuracy_add(&a, 0, 1.0 + 0x1p-22, 1.0, NPU_F32, &b);
    EXPECT_EQ(a.sum_ulp, 2.0);
    npu_accuracy_add(&a, 1, NAN, -1.0, NPU_F32, &b);
    EXPECT_TRUE(std::isinf(a.sum_ulp));
}

TEST(Reference, EveryFunctionHasAFormulaAndKnownValues)
{
    for (unsigned i = 0; const npu_reference *r = npu_reference_at(i); i++) {
        EXPECT_NE(r->formula, nullptr);
        EXPECT_GE(r->num_inputs, 1u);
    }
    double x = 1.0, p[2] = {0.01, 20.0};
    EXPECT_DOUBLE_EQ(npu_reference_find("relu")->fn(&x, p), 1.0);
    x = -2.0;
    EXPECT_DOUBLE_EQ(npu_reference_find("leaky_relu")->fn(&x, p), -0.02);
    x = 1.0;
    EXPECT_NEAR(npu_reference_find("gelu_tanh")->fn(&x, p), 0.8411919906082768, 1e-15);
    EXPECT_NEAR(npu_reference_find("gelu_erf")->fn(&x, p), 0.8413447460685429, 1e-15);
    EXPECT_EQ(npu_reference_find("no_such_function"), nullptr);
}
