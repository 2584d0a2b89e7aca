// The GPU kernels evaluate the same per-element formulas as the CPU kernels
// (math_unary_formulas.h, broadcast_binary_formulas.h) through a different math
// library: cuda::DeviceMath instead of HostMath. DeviceMath's functions are
// __host__ __device__, so this test (CUDA builds, no GPU needed) evaluates every
// formula with both libraries on the host and checks that they agree: each
// DeviceMath function is the intended one (rint, not round; erfc, not erf; the
// float and double overloads). The GPU's own libm is checked by the GPU kernel
// tests where a GPU is present.

#ifdef ONEFLOW_WITH_CUDA

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "oneflow/kernels/broadcast_binary_formulas.h"
#include "oneflow/kernels/broadcast_binary_op_list.h"
#include "oneflow/kernels/cuda/math_functors.cuh"
#include "oneflow/kernels/host_math.h"
#include "oneflow/kernels/math_unary_formulas.h"
#include "oneflow/kernels/math_unary_op_list.h"

namespace oneflow {
namespace {

using cuda::DeviceMath;

template <typename T>
std::vector<T> Samples() {
  std::vector<T> values = {T(0),    T(-0.0), T(0.5), T(-0.5), T(1),  T(-1), T(2.5),
                           T(-2.5), T(3),    T(-3),  T(1e-4), T(30), T(-30)};
  for (int i = -40; i <= 40; ++i) { values.push_back(T(i) * T(0.1137)); }
  if (std::is_floating_point<T>::value) {
    values.push_back(std::numeric_limits<T>::infinity());
    values.push_back(-std::numeric_limits<T>::infinity());
    values.push_back(std::numeric_limits<T>::quiet_NaN());
  }
  return values;
}

template <typename T>
bool Agree(T host, T device) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(host) || std::isnan(device)) { return std::isnan(host) && std::isnan(device); }
    if (std::isinf(host) || std::isinf(device)) { return host == device; }
    // HostMath computes float32 exp, log and erf with fast_math (a few ulp from libm).
    const double rtol = std::is_same<T, float>::value ? 2e-6 : 1e-13;
    return std::abs(double(host) - double(device)) <= 1e-30 + rtol * std::abs(double(host));
  } else {
    return host == device;
  }
}

template <template <class> class Formula, typename T, bool kWithBackward>
void CheckUnary(const std::string& name) {
  math_unary::Params<T> params;
  params.a = T(-0.5);  // hardtanh's min_val; leaky_relu's and elu's alpha
  params.b = T(0.7);   // hardtanh's max_val
  for (const T x : Samples<T>()) {
    const auto host = Formula<HostMath>::Forward(x, params);
    const auto device = Formula<DeviceMath>::Forward(x, params);
    EXPECT_TRUE(Agree(host, device))
        << name << "(" << x << "): host " << host << ", device " << device;
    if constexpr (kWithBackward) {
      const T dy = T(0.75);
      const T host_dx = Formula<HostMath>::Backward(x, dy, params);
      const T device_dx = Formula<DeviceMath>::Backward(x, dy, params);
      EXPECT_TRUE(Agree(host_dx, device_dx))
          << name << "_grad(" << x << "): host " << host_dx << ", device " << device_dx;
    }
  }
}

TEST(DeviceMath, UnaryFormulasAgreeWithHostMath) {
#define OF_CHECK_FULL(op_type, Functor)                  \
  CheckUnary<math_unary::Functor, float, true>(op_type); \
  CheckUnary<math_unary::Functor, double, true>(op_type)
#define OF_CHECK_FORWARD(op_type, Functor)                \
  CheckUnary<math_unary::Functor, float, false>(op_type); \
  CheckUnary<math_unary::Functor, double, false>(op_type)
#define OF_CHECK_INTEGERS(op_type, Functor)                 \
  CheckUnary<math_unary::Functor, int32_t, false>(op_type); \
  CheckUnary<math_unary::Functor, int64_t, false>(op_type)
  OF_FOR_EACH_MATH_UNARY_OP(OF_CHECK_FULL, OF_CHECK_FORWARD, OF_CHECK_INTEGERS);
#undef OF_CHECK_FULL
#undef OF_CHECK_FORWARD
#undef OF_CHECK_INTEGERS
}

template <template <class> class Formula, typename T>
void CheckBinary(const std::string& name) {
  const std::vector<T> samples = Samples<T>();
  for (const T x : samples) {
    for (const T y : samples) {
      const auto host = Formula<HostMath>::Apply(x, y);
      const auto device = Formula<DeviceMath>::Apply(x, y);
      EXPECT_TRUE(Agree(host, device))
          << name << "(" << x << ", " << y << "): host " << host << ", device " << device;
    }
  }
}

TEST(DeviceMath, BinaryFormulasAgreeWithHostMath) {
#define OF_CHECK_FLOATING(op_type, Functor)               \
  CheckBinary<broadcast_binary::Functor, float>(op_type); \
  CheckBinary<broadcast_binary::Functor, double>(op_type)
#define OF_CHECK_ALL_TYPES(op_type, Functor)                \
  OF_CHECK_FLOATING(op_type, Functor);                      \
  CheckBinary<broadcast_binary::Functor, int32_t>(op_type); \
  CheckBinary<broadcast_binary::Functor, int64_t>(op_type)
#define OF_CHECK_COMPARE(op_type, Functor) OF_CHECK_ALL_TYPES(op_type, Functor)
  OF_FOR_EACH_BROADCAST_BINARY_OP(OF_CHECK_ALL_TYPES, OF_CHECK_FLOATING, OF_CHECK_COMPARE);
#undef OF_CHECK_FLOATING
#undef OF_CHECK_ALL_TYPES
#undef OF_CHECK_COMPARE
}

// Spot values of the library functions themselves, against the C library.
TEST(DeviceMath, FunctionsAreTheIntendedOnes) {
  EXPECT_EQ(DeviceMath::Rint(2.5f), 2.0f);  // half to even
  EXPECT_EQ(DeviceMath::Rint(-3.5), -4.0);
  EXPECT_EQ(DeviceMath::Floor(-0.5f), -1.0f);
  EXPECT_EQ(DeviceMath::Ceil(-0.5), -0.0);
  EXPECT_DOUBLE_EQ(DeviceMath::Erfc(0.3), std::erfc(0.3));
  EXPECT_DOUBLE_EQ(DeviceMath::Fmod(-7.0, 3.0), -1.0);
  EXPECT_DOUBLE_EQ(DeviceMath::Lgamma(4.0), std::log(6.0));
  EXPECT_DOUBLE_EQ(DeviceMath::Softplus(0.0), std::log(2.0));
  EXPECT_DOUBLE_EQ(DeviceMath::Gelu(1.0), 0.5 * std::erfc(-1.0 / std::sqrt(2.0)));
  EXPECT_NEAR(math_unary::Digamma(1.0), -0.57721566490153286, 1e-10);  // -Euler's gamma
  EXPECT_TRUE(std::isnan(math_unary::Digamma(-2.0)));
}

}  // namespace
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
