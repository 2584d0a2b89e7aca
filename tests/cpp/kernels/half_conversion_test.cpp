// The vectorized float16 <-> float32 conversions against IEEE 754 binary16 decoded by hand:
// every one of the 65536 bit patterns, round trips, ties to even at every midpoint, overflow,
// and ranges whose length is not a multiple of the vector width (the scalar tail); each
// instruction-set version this CPU supports (scalar, F16C, AVX-512), and the one chosen.
#include "oneflow/kernels/cpu/half_conversion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace oneflow {
namespace test {
namespace {

// binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits.
double DecodeHalf(uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = fraction == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(fraction, -24);  // subnormal
  } else {
    magnitude = std::ldexp(1024 + fraction, exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

_Float16 FromBits(uint16_t bits) {
  _Float16 value;
  std::memcpy(&value, &bits, sizeof(bits));
  return value;
}

uint16_t BitsOf(_Float16 value) {
  uint16_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// GetParam(): -1 for the chosen implementation, else a HalfConversionIsa.
class HalfConversionTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (GetParam() >= 0 && !HalfConversionIsaSupported(Isa())) {
      GTEST_SKIP() << "this CPU lacks the instruction set";
    }
  }
  HalfConversionIsa Isa() const { return static_cast<HalfConversionIsa>(GetParam()); }
  void ToFloat(const _Float16* in, float* out, int64_t count) const {
    if (GetParam() < 0) {
      HalfToFloat(in, out, count);
    } else {
      HalfToFloat(Isa(), in, out, count);
    }
  }
  void ToHalf(const float* in, _Float16* out, int64_t count) const {
    if (GetParam() < 0) {
      FloatToHalf(in, out, count);
    } else {
      FloatToHalf(Isa(), in, out, count);
    }
  }
};

std::vector<_Float16> AllHalves() {
  std::vector<_Float16> halves(1 << 16);
  for (uint32_t bits = 0; bits < (1u << 16); ++bits) { halves[bits] = FromBits(bits); }
  return halves;
}

TEST_P(HalfConversionTest, EveryHalfConvertsToItsExactValue) {
  const std::vector<_Float16> halves = AllHalves();
  std::vector<float> floats(halves.size());
  ToFloat(halves.data(), floats.data(), static_cast<int64_t>(halves.size()));
  for (uint32_t bits = 0; bits < (1u << 16); ++bits) {
    const double expected = DecodeHalf(static_cast<uint16_t>(bits));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(floats[bits])) << "bits " << bits;
    } else {
      EXPECT_EQ(static_cast<double>(floats[bits]), expected) << "bits " << bits;
    }
  }
}

TEST_P(HalfConversionTest, EveryHalfSurvivesARoundTrip) {
  const std::vector<_Float16> halves = AllHalves();
  std::vector<float> floats(halves.size());
  std::vector<_Float16> back(halves.size());
  ToFloat(halves.data(), floats.data(), static_cast<int64_t>(halves.size()));
  ToHalf(floats.data(), back.data(), static_cast<int64_t>(floats.size()));
  for (uint32_t bits = 0; bits < (1u << 16); ++bits) {
    if (std::isnan(DecodeHalf(static_cast<uint16_t>(bits)))) {
      EXPECT_TRUE(std::isnan(static_cast<float>(back[bits]))) << "bits " << bits;
    } else {
      EXPECT_EQ(BitsOf(back[bits]), bits) << "bits " << bits;
    }
  }
}

// Between each pair of neighbouring positive finite halves: the midpoint goes to the one with
// an even fraction, a float just below it down, one just above it up.
TEST_P(HalfConversionTest, RoundsToNearestWithTiesToEven) {
  std::vector<float> inputs;
  std::vector<uint16_t> expected;
  for (uint16_t low = 0; low < 0x7bff; ++low) {
    const double midpoint = (DecodeHalf(low) + DecodeHalf(low + 1)) / 2;  // exact in float
    const float tie = static_cast<float>(midpoint);
    inputs.insert(inputs.end(), {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, 1e9f)});
    expected.insert(expected.end(),
                    {static_cast<uint16_t>(low % 2 == 0 ? low : low + 1), low,
                     static_cast<uint16_t>(low + 1)});
  }
  std::vector<_Float16> out(inputs.size());
  ToHalf(inputs.data(), out.data(), static_cast<int64_t>(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(BitsOf(out[i]), expected[i]) << "input " << inputs[i];
  }
}

TEST_P(HalfConversionTest, OverflowGoesToInfinityFromTheLastMidpoint) {
  // 65504 is the largest half; 65520 is the midpoint to the next (unrepresentable) step.
  const std::vector<float> inputs = {65504.0f, 65519.0f, 65520.0f, 1e6f, -1e6f,
                                     std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN(), 1e-8f, -0.0f};
  const std::vector<uint16_t> expected = {0x7bff, 0x7bff, 0x7c00, 0x7c00, 0xfc00,
                                          0x7c00, 0,      0x0000, 0x8000};
  std::vector<_Float16> out(inputs.size());
  ToHalf(inputs.data(), out.data(), static_cast<int64_t>(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (std::isnan(inputs[i])) {
      EXPECT_TRUE(std::isnan(static_cast<float>(out[i])));
    } else {
      EXPECT_EQ(BitsOf(out[i]), expected[i]) << "input " << inputs[i];
    }
  }
}

TEST_P(HalfConversionTest, EveryLengthAndOffsetConvertsOnlyItsRange) {
  std::vector<float> source(80);
  for (size_t i = 0; i < source.size(); ++i) { source[i] = 0.25f * static_cast<float>(i) - 7; }
  for (int64_t offset = 0; offset < 3; ++offset) {
    for (int64_t count = 0; count <= 40; ++count) {
      std::vector<_Float16> half(source.size(), FromBits(0x7e00));  // NaN: untouched marker
      ToHalf(source.data() + offset, half.data() + offset, count);
      std::vector<float> back(source.size(), -1.0f);
      ToFloat(half.data() + offset, back.data() + offset, count);
      for (int64_t i = 0; i < static_cast<int64_t>(source.size()); ++i) {
        const bool inside = i >= offset && i < offset + count;
        if (inside) {
          ASSERT_EQ(back[i], source[i]) << "offset " << offset << " count " << count;
        } else {
          ASSERT_EQ(BitsOf(half[i]), 0x7e00) << "offset " << offset << " count " << count;
          ASSERT_EQ(back[i], -1.0f);
        }
      }
    }
  }
}

std::string IsaName(const ::testing::TestParamInfo<int>& info) {
  static const char* const kNames[] = {"Scalar", "F16c", "Avx512"};
  return info.param < 0 ? "Chosen" : kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(Isa, HalfConversionTest,
                         ::testing::Values(-1, static_cast<int>(HalfConversionIsa::kScalar),
                                           static_cast<int>(HalfConversionIsa::kF16c),
                                           static_cast<int>(HalfConversionIsa::kAvx512)),
                         IsaName);

}  // namespace
}  // namespace test
}  // namespace oneflow
