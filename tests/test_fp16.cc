// The binary16 helpers against independent references: GCC's _Float16
// conversions and arithmetic, midpoint tables, and exact __float128 sums.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "npusim/fp16.h"

namespace {

constexpr uint16_t kQNaN16 = NPU_F16_QNAN;

uint16_t bits_of(_Float16 h)
{
    uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
}

_Float16 half_of(uint16_t u)
{
    _Float16 h;
    std::memcpy(&h, &u, 2);
    return h;
}

bool is_nan16(uint16_t h) { return (h & 0x7fff) > 0x7c00; }

uint64_t f64_bits(double d)
{
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
}

double f64_from(uint64_t u)
{
    double d;
    std::memcpy(&d, &u, 8);
    return d;
}

// GCC's conversion with NaN made canonical, as npusim's contract says.
uint16_t gcc_to_half(double d) { return std::isnan(d) ? kQNaN16 : bits_of((_Float16)d); }
uint16_t gcc_to_half(float f) { return std::isnan(f) ? kQNaN16 : bits_of((_Float16)f); }

// Exact value of a finite half (binary64 holds every one).
double value_of(uint16_t h) { return (double)(float)half_of(h); }

// Round-to-nearest-even of any real given as a __float128, decided by exact
// comparison with the midpoint between the two bracketing halves. Independent
// of npusim's bit manipulation.
uint16_t ref_round_half(__float128 q)
{
    if (q != q)
        return NPU_F16_QNAN;
    uint16_t sign = q < 0 || (q == 0 && std::signbit((double)q)) ? 0x8000 : 0;
    __float128 m = q < 0 ? -q : q;
    if (m >= (__float128)65520.0)
        return sign | 0x7c00;
    // Largest positive finite half <= m, by binary search over encodings
    // (positive halves are ordered like their bit patterns).
    unsigned lo = 0, hi = 0x7bff;
    while (lo < hi) {
        unsigned mid = (lo + hi + 1) / 2;
        if ((__float128)value_of((uint16_t)mid) <= m)
            lo = mid;
        else
            hi = mid - 1;
    }
    if ((__float128)value_of((uint16_t)lo) == m)
        return sign | lo;
    __float128 below = value_of((uint16_t)lo);
    __float128 above = lo == 0x7bff ? (__float128)65536.0 : (__float128)value_of((uint16_t)(lo + 1));
    __float128 midpoint = (below + above) / 2; // exact: 13 significant bits
    unsigned r;
    if (m < midpoint)
        r = lo;
    else if (m > midpoint)
        r = lo + 1;
    else
        r = (lo & 1) ? lo + 1 : lo;
    return sign | r;
}

uint16_t ref_fma(uint16_t a, uint16_t b, uint16_t c)
{
    // A product of halves has 22 bits and the sum spans at most 81 bits, so
    // binary128 (113 bits) holds a*b + c exactly.
    __float128 q = (__float128)value_of(a) * (__float128)value_of(b) + (__float128)value_of(c);
    if (is_nan16(a) || is_nan16(b) || is_nan16(c))
        return NPU_F16_QNAN;
    return ref_round_half(q);
}

double lane_value(uint16_t h) { return (double)npu_f16_to_f32(h); }

} // namespace

TEST(Fp16, WideningIsExactAndNarrowingRoundTripsEveryHalf)
{
    for (uint32_t u = 0; u < 0x10000; u++) {
        uint16_t h = (uint16_t)u;
        float f = npu_f16_to_f32(h);
        if (is_nan16(h)) {
            EXPECT_EQ(npu_f32_bits(f), NPU_F32_QNAN_BITS) << std::hex << u;
            EXPECT_EQ(npu_f32_to_f16(f), NPU_F16_QNAN);
            continue;
        }
        ASSERT_EQ(npu_f32_bits(f), npu_f32_bits((float)half_of(h))) << std::hex << u;
        ASSERT_EQ(npu_f32_to_f16(f), h) << std::hex << u;
        ASSERT_EQ(npu_f64_to_f16((double)f), h) << std::hex << u;
    }
}

TEST(Fp16, NarrowingFromFloatMatchesGccAtEveryMidpointAndNeighbour)
{
    unsigned checked = 0;
    for (uint32_t u = 0; u <= 0x7bff; u++) {
        double below = value_of((uint16_t)u);
        double above = u == 0x7bff ? 65536.0 : value_of((uint16_t)(u + 1));
        float mid = (float)((below + above) / 2); // exact in binary32
        uint32_t mb = npu_f32_bits(mid);
        for (int k = -3; k <= 3; k++) {
            for (uint32_t sign : { 0u, 0x80000000u }) {
                float f = npu_f32_from_bits((mb + (uint32_t)k) | sign);
                ASSERT_EQ(npu_f32_to_f16(f), gcc_to_half(f)) << std::hexfloat << f;
                float g = npu_f32_from_bits((npu_f32_bits((float)below) + (uint32_t)k) | sign);
                if (k >= 0 || u > 0) {
                    ASSERT_EQ(npu_f32_to_f16(g), gcc_to_half(g)) << std::hexfloat << g;
                }
                checked += 2;
            }
        }
    }
    EXPECT_GT(checked, 400000u);
}

TEST(Fp16, NarrowingFromFloatMatchesGccAcrossAllBinades)
{
    // Every 251st encoding covers all exponents, subnormals, overflow, inf, NaN.
    for (uint64_t u = 0; u <= 0xffffffffull; u += 251) {
        float f = npu_f32_from_bits((uint32_t)u);
        ASSERT_EQ(npu_f32_to_f16(f), gcc_to_half(f)) << std::hex << u;
    }
    EXPECT_EQ(npu_f32_to_f16(65519.99f), 0x7bff);
    EXPECT_EQ(npu_f32_to_f16(65520.0f), 0x7c00);   // tie rounds to even: overflow
    EXPECT_EQ(npu_f32_to_f16(-65520.0f), 0xfc00);
    EXPECT_EQ(npu_f32_to_f16(0x1p-25f), 0x0000);   // half the smallest subnormal: tie to 0
    EXPECT_EQ(npu_f32_to_f16(0x1.000002p-25f), 0x0001);
    EXPECT_EQ(npu_f32_to_f16(0x3p-25f), 0x0002);   // 1.5 subnormal quanta: tie to even 2
    EXPECT_EQ(npu_f32_to_f16(-0.0f), 0x8000);
    EXPECT_EQ(npu_f32_to_f16(npu_f32_from_bits(0x7f800001u)), NPU_F16_QNAN); // sNaN
    EXPECT_EQ(npu_f32_to_f16(npu_f32_from_bits(0xffc12345u)), NPU_F16_QNAN);
}

TEST(Fp16, NarrowingFromDoubleRoundsOnceNotViaFloat)
{
    std::mt19937_64 rng(1234);
    std::vector<double> xs;
    for (uint32_t u = 0; u <= 0x7bff; u++) {
        double below = value_of((uint16_t)u);
        double above = u == 0x7bff ? 65536.0 : value_of((uint16_t)(u + 1));
        double mid = (below + above) / 2;
        uint64_t mb = f64_bits(mid);
        for (int k = -2; k <= 2; k++)
            xs.push_back(f64_from(mb + (uint64_t)k));
        // A hair above or below the midpoint, far below binary32's resolution:
        // rounding through float first would land exactly on the tie.
        xs.push_back(mid * (1 + 0x1p-40));
        xs.push_back(mid * (1 - 0x1p-40));
        xs.push_back(below);
    }
    std::uniform_real_distribution<double> expo(-30, 17);
    for (int i = 0; i < 500000; i++)
        xs.push_back(std::exp2(expo(rng)) * (1 + (double)(rng() >> 11) * 0x1p-53));
    xs.push_back(0x1p-1074);
    xs.push_back(0x1p-1022);
    xs.push_back(0x1p-25);
    xs.push_back(std::nextafter(0x1p-25, 1.0));
    xs.push_back(1e300);
    xs.push_back(INFINITY);

    for (double x : xs) {
        for (double d : { x, -x }) {
            uint16_t want = ref_round_half((__float128)d);
            ASSERT_EQ(npu_f64_to_f16(d), want) << std::hexfloat << d;
            ASSERT_EQ(gcc_to_half(d), want) << "reference disagrees with GCC at " << std::hexfloat << d;
        }
    }
    EXPECT_EQ(npu_f64_to_f16(NAN), NPU_F16_QNAN);
    EXPECT_EQ(npu_f64_to_f16(-NAN), NPU_F16_QNAN);
    // 1 + 2^-11 + 2^-40: float would make it the tie 1 + 2^-11 and round to 1.
    EXPECT_EQ(npu_f64_to_f16(1 + 0x1p-11 + 0x1p-40), 0x3c01);
}

TEST(Fp16, DoubleToFloatRoundsToNearestEvenWithCanonicalNaN)
{
    EXPECT_EQ(npu_f32_bits(npu_f64_to_f32(1 + 0x1p-24)), npu_f32_bits(1.0f));
    EXPECT_EQ(npu_f32_bits(npu_f64_to_f32(1 + 0x3p-24)), npu_f32_bits(1 + 0x1p-22f));
    EXPECT_EQ(npu_f32_bits(npu_f64_to_f32(0x1p-149)), 1u);
    EXPECT_EQ(npu_f32_bits(npu_f64_to_f32(-NAN)), NPU_F32_QNAN_BITS);
    EXPECT_TRUE(std::isinf(npu_f64_to_f32(1e39)));
}

// The lane recipe for f16 add, sub, mul: widen exactly, operate in binary64
// (exact for these), round once.
TEST(Fp16, LaneArithmeticRecipeMatchesGccFloat16ForEveryA)
{
    std::mt19937 rng(99);
    std::vector<uint16_t> bs = { 0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00,
                                 0x3c01, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x1400, 0x5640 };
    while (bs.size() < 160)
        bs.push_back((uint16_t)rng());
    for (uint32_t ua = 0; ua < 0x10000; ua++) {
        uint16_t a = (uint16_t)ua;
        for (uint16_t b : bs) {
            _Float16 ha = half_of(a), hb = half_of(b);
            uint16_t add = npu_f64_to_f16(lane_value(a) + lane_value(b));
            uint16_t sub = npu_f64_to_f16(lane_value(a) - lane_value(b));
            uint16_t mul = npu_f64_to_f16(lane_value(a) * lane_value(b));
            _Float16 s = ha + hb, d = ha - hb, m = ha * hb;
            ASSERT_EQ(add, is_nan16(bits_of(s)) ? kQNaN16 : bits_of(s)) << std::hex << a << " + " << b;
            ASSERT_EQ(sub, is_nan16(bits_of(d)) ? kQNaN16 : bits_of(d)) << std::hex << a << " - " << b;
            ASSERT_EQ(mul, is_nan16(bits_of(m)) ? kQNaN16 : bits_of(m)) << std::hex << a << " * " << b;
        }
    }
}

TEST(Fp16, LaneArithmeticRecipeMatchesGccFloat16OnRandomPairs)
{
    std::mt19937 rng(7);
    for (int i = 0; i < 10000000; i++) {
        uint32_t r = rng();
        uint16_t a = (uint16_t)r, b = (uint16_t)(r >> 16);
        _Float16 s = half_of(a) + half_of(b), m = half_of(a) * half_of(b);
        ASSERT_EQ(npu_f64_to_f16(lane_value(a) + lane_value(b)),
                  is_nan16(bits_of(s)) ? kQNaN16 : bits_of(s)) << std::hex << a << " + " << b;
        ASSERT_EQ(npu_f64_to_f16(lane_value(a) * lane_value(b)),
                  is_nan16(bits_of(m)) ? kQNaN16 : bits_of(m)) << std::hex << a << " * " << b;
    }
}

TEST(Fp16, FmaIsCorrectlyRoundedOnRandomOperands)
{
    std::mt19937 rng(2024);
    for (int i = 0; i < 2000000; i++) {
        uint16_t a = (uint16_t)rng(), b = (uint16_t)rng(), c = (uint16_t)rng();
        ASSERT_EQ(npu_f16_fma(a, b, c), ref_fma(a, b, c)) << std::hex << a << " " << b << " " << c;
    }
}

// Sums that land exactly on, or a product-lsb away from, a binary16 midpoint:
// the cases where rounding a*b + c to binary64 first and then to binary16 can
// go wrong, and where round-to-odd must keep the sticky bit.
TEST(Fp16, FmaIsCorrectlyRoundedNearMidpoints)
{
    std::mt19937 rng(31337);
    unsigned ties = 0;
    for (int i = 0; i < 400000; i++) {
        uint16_t a = (uint16_t)(rng() & 0x7fff), b = (uint16_t)(rng() & 0xffff);
        if (i & 1) { // short significands make exact ties common
            a &= 0xffe0;
            b &= 0xfff0;
        }
        uint16_t h = (uint16_t)(rng() % 0x7bff);
        if (is_nan16(a) || is_nan16(b) || (a & 0x7c00) == 0x7c00 || (b & 0x7c00) == 0x7c00)
            continue;
        double p = value_of(a) * value_of(b);
        double mid = (value_of(h) + value_of((uint16_t)(h + 1))) / 2;
        uint16_t c0 = gcc_to_half(mid - p);
        if ((c0 & 0x7c00) == 0x7c00)
            continue;
        for (int k = -2; k <= 2; k++) {
            uint16_t c = (uint16_t)(c0 + k);
            if (is_nan16(c) || (c & 0x7c00) == 0x7c00)
                continue;
            ties += (__float128)p + (__float128)value_of(c) == (__float128)mid;
            ASSERT_EQ(npu_f16_fma(a, b, c), ref_fma(a, b, c)) << std::hex << a << " " << b << " " << c;
        }
    }
    EXPECT_GT(ties, 1000u);

    // Hand-picked: exact tie 1 + 2^-11 rounds to even (1.0); one product lsb
    // above it rounds up; subnormal tie; cancellation to +0 / -0.
    const uint16_t one = 0x3c00, two_m11 = 0x1000; // 2^-11
    EXPECT_EQ(npu_f16_fma(two_m11, one, one), 0x3c00);
    EXPECT_EQ(npu_f16_fma(0x1001, 0x3c01, one), 0x3c01); // 2^-11 (1+2^-10)^2 > tie
    EXPECT_EQ(npu_f16_fma(0x0001, 0x3800, 0x0000), 0x0000); // 2^-25: tie to even 0
    EXPECT_EQ(npu_f16_fma(0x0001, 0x3801, 0x0000), 0x0001); // just above the tie
    EXPECT_EQ(npu_f16_fma(one, one, 0xbc00), 0x0000);
    EXPECT_EQ(npu_f16_fma(0x8000, one, 0x8000), 0x8000);
    EXPECT_EQ(npu_f16_fma(0x7c00, 0x0000, one), NPU_F16_QNAN);
    EXPECT_EQ(npu_f16_fma(0x7c00, one, 0xfc00), NPU_F16_QNAN);
    EXPECT_EQ(npu_f16_fma(0x7bff, 0x7bff, 0xfc00), 0xfc00);
    EXPECT_EQ(npu_f16_fma(0x7bff, 0x3c01, 0x0000), 0x7c00); // overflow
}
