// fast_math's float32 functions against float64 libm (float64 Exp and Log against long double)
// over their whole ranges: the accuracy fast_math.h promises, and the special values (0,
// infinities, NaN, underflow).

#include "oneflow/kernels/fast_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace oneflow {
namespace test {
namespace {

constexpr float kFloatEpsilon = std::numeric_limits<float>::epsilon();
constexpr float kSmallestNormal = std::numeric_limits<float>::min();

// Evenly spaced points of [low, high], both ends included.
template <typename Fn>
void ForPoints(double low, double high, int count, Fn&& fn) {
  for (int i = 0; i <= count; ++i) {
    fn(static_cast<float>(low + (high - low) * i / count));
  }
}

// |ours - exact| within `relative` of |exact|, or `absolute` where exact is below that scale.
void ExpectClose(float ours, double exact, double relative, double absolute, const char* what,
                 float x) {
  const double error = std::fabs(double(ours) - exact);
  EXPECT_LE(error, std::max(relative * std::fabs(exact), absolute))
      << what << "(" << x << "): " << ours << " against " << exact;
}

TEST(FastMath, ExpIsWithinTwoUlpAndSaturates) {
  ForPoints(-87.0, 88.5, 200000, [](float x) {
    ExpectClose(fast_math::Exp(x), std::exp(double(x)), 2 * kFloatEpsilon, 0, "Exp", x);
  });
  EXPECT_EQ(fast_math::Exp(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fast_math::Exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_GT(fast_math::Exp(-100.0f), 0.0f);  // a denormal, as libm's
  EXPECT_TRUE(std::isnan(fast_math::Exp(std::nanf(""))));
}

TEST(FastMath, DoubleExpIsWithinTwoUlpAndSaturates) {
  constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
  constexpr double kNormal = std::numeric_limits<double>::min();
  constexpr int kCount = 400000;
  for (int i = 0; i <= kCount; ++i) {
    const double x = -745.0 + (709.78 + 745.0) * i / kCount + 1e-9 * (i % 7);
    const long double exact = std::exp(static_cast<long double>(x));
    const double error = std::fabs(static_cast<double>(fast_math::Exp(x) - exact));
    // Denormal results carry fewer bits: half of their last place, twice for safety.
    const double allowed = std::max(2 * kEpsilon * static_cast<double>(exact),
                                    std::numeric_limits<double>::denorm_min());
    ASSERT_LE(error, allowed) << "Exp(" << x << ") = " << fast_math::Exp(x) << " against "
                              << static_cast<double>(exact);
  }
  EXPECT_EQ(fast_math::Exp(0.0), 1.0);
  EXPECT_EQ(fast_math::Exp(710.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(fast_math::Exp(1e300), std::numeric_limits<double>::infinity());
  EXPECT_LT(fast_math::Exp(709.78), std::numeric_limits<double>::infinity());
  EXPECT_EQ(fast_math::Exp(-746.0), 0.0);
  EXPECT_EQ(fast_math::Exp(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_GT(fast_math::Exp(-740.0), 0.0);  // a denormal, as libm's
  EXPECT_LT(fast_math::Exp(-740.0), kNormal);
  EXPECT_TRUE(std::isnan(fast_math::Exp(std::nan(""))));
}

TEST(FastMath, DoubleLogIsWithinTwoUlp) {
  constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
  auto expect_close = [&](double x) {
    const long double exact = std::log(static_cast<long double>(x));
    const double error = std::fabs(static_cast<double>(fast_math::Log(x) - exact));
    ASSERT_LE(error, 2 * kEpsilon * std::fabs(static_cast<double>(exact)) + 1e-300)
        << "Log(" << x << ") = " << fast_math::Log(x) << " against "
        << static_cast<double>(exact);
  };
  for (int i = 0; i <= 200000; ++i) {  // around 1, where log's relative accuracy is hardest
    expect_close(0.5 + 1.5 * i / 200000.0);
  }
  for (int i = 0; i <= 200000; ++i) {  // every binade, denormals included
    expect_close(std::exp2(-1074.0 + 2097.0 * i / 200000.0));
  }
  expect_close(1.0 + kEpsilon);
  expect_close(1.0 - kEpsilon / 2);
  expect_close(std::numeric_limits<double>::denorm_min());
  expect_close(std::numeric_limits<double>::max());
  EXPECT_EQ(fast_math::Log(1.0), 0.0);
  EXPECT_EQ(fast_math::Log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(fast_math::Log(std::numeric_limits<double>::infinity()),
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(fast_math::Log(-1.0)));
  EXPECT_TRUE(std::isnan(fast_math::Log(-std::numeric_limits<double>::infinity())));
  EXPECT_TRUE(std::isnan(fast_math::Log(std::nan(""))));
}

TEST(FastMath, ExpBelow88AgreesWithExpWhileNormalAndFlushesAtMinus88) {
  ForPoints(-87.3, 88.0, 200000, [](float x) {
    ExpectClose(fast_math::ExpBelow88(x), std::exp(double(x)), 2 * kFloatEpsilon, 0,
                "ExpBelow88", x);
  });
  // Between -88 and the smallest normal result precision degrades, never the magnitude.
  ForPoints(-88.0, -87.3, 1000, [](float x) {
    ExpectClose(fast_math::ExpBelow88(x), std::exp(double(x)), 0, kSmallestNormal,
                "ExpBelow88", x);
  });
  EXPECT_EQ(fast_math::ExpBelow88(-88.0f), 0.0f);
  EXPECT_EQ(fast_math::ExpBelow88(-1000.0f), 0.0f);
  EXPECT_EQ(fast_math::ExpBelow88(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(fast_math::ExpBelow88(std::nanf(""))));
}

TEST(FastMath, LogIsWithinTwoUlp) {
  for (float x = 1e-37f; x < 1e37f; x *= 1.0013f) {
    ExpectClose(fast_math::Log(x), std::log(double(x)), 2 * kFloatEpsilon, 2e-7, "Log", x);
  }
  EXPECT_EQ(fast_math::Log(0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(fast_math::Log(-1.0f)));
  EXPECT_EQ(fast_math::Log(std::numeric_limits<float>::infinity()),
            std::numeric_limits<float>::infinity());
}

TEST(FastMath, ErfcIsRelativelyAccurateIntoItsTail) {
  // z^2 rounds to float before the exponential: relative error grows like z^2 epsilon.
  ForPoints(-6.0, 9.0, 100000, [](float x) {
    const double exact = std::erfc(double(x));
    const double relative = 4e-7 + 3.0 * double(x) * double(x) * kFloatEpsilon;
    ExpectClose(fast_math::Erfc(x), exact, relative, 0, "Erfc", x);
  });
  EXPECT_EQ(fast_math::Erfc(20.0f), 0.0f);
  EXPECT_EQ(fast_math::Erfc(-20.0f), 2.0f);
  EXPECT_TRUE(std::isnan(fast_math::Erfc(std::nanf(""))));
}

TEST(FastMath, ErfIsAccurateNearZeroAndSaturates) {
  ForPoints(-5.0, 5.0, 100001, [](float x) {
    ExpectClose(fast_math::Erf(x), std::erf(double(x)), 4e-7, 2e-7, "Erf", x);
  });
  EXPECT_EQ(fast_math::Erf(0.0f), 0.0f);
  EXPECT_EQ(fast_math::Erf(10.0f), 1.0f);
  EXPECT_EQ(fast_math::Erf(-10.0f), -1.0f);
}

TEST(FastMath, GeluIsRelativelyAccurateForNegativeInputs) {
  ForPoints(-12.0, 12.0, 100000, [](float x) {
    const double exact = 0.5 * double(x) * std::erfc(-double(x) / std::sqrt(2.0));
    const double z = double(x) / std::sqrt(2.0);
    const double relative = 5e-7 + 3.0 * z * z * kFloatEpsilon;
    ExpectClose(fast_math::Gelu(x), exact, relative, 0, "Gelu", x);
  });
  EXPECT_EQ(fast_math::Gelu(-20.0f), 0.0f);
  EXPECT_EQ(fast_math::Gelu(20.0f), 20.0f);
  EXPECT_TRUE(std::isnan(fast_math::Gelu(std::nanf(""))));
}

TEST(FastMath, SigmoidAndSoftplusSaturateWithoutOverflow) {
  ForPoints(-30.0, 30.0, 60000, [](float x) {
    ExpectClose(fast_math::Sigmoid(x), 1.0 / (1.0 + std::exp(-double(x))), 4 * kFloatEpsilon, 0,
                "Sigmoid", x);
    ExpectClose(fast_math::Softplus(x), std::log1p(std::exp(double(x))), 4 * kFloatEpsilon, 0,
                "Softplus", x);
  });
  EXPECT_EQ(fast_math::Sigmoid(200.0f), 1.0f);
  EXPECT_EQ(fast_math::Sigmoid(-200.0f), 0.0f);
  EXPECT_EQ(fast_math::Softplus(200.0f), 200.0f);
}

}  // namespace
}  // namespace test
}  // namespace oneflow
