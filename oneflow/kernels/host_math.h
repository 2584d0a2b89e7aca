#pragma once
// The math library of the CPU kernels for the per-element formulas written once for every device
// (math_unary_formulas.h, broadcast_binary_formulas.h): float32 exp, log, erf and their
// compositions from fast_math.h (inline and vectorizable), everything else and float64 from libm.
// The GPU counterpart is cuda::DeviceMath (cuda/math_functors.cuh).

#include <cmath>

#include "oneflow/kernels/fast_math.h"

namespace oneflow {

struct HostMath {
#define OF_HOST_MATH_1(Name, function) \
  template <typename T>                \
  static T Name(T x) {                 \
    return function(x);                \
  }
#define OF_HOST_MATH_2(Name, function) \
  template <typename T>                \
  static T Name(T x, T y) {            \
    return function(x, y);             \
  }
  OF_HOST_MATH_1(Exp, fast_math::Exp)
  OF_HOST_MATH_1(Log, fast_math::Log)
  OF_HOST_MATH_1(Erf, fast_math::Erf)
  OF_HOST_MATH_1(Erfc, fast_math::Erfc)
  OF_HOST_MATH_1(Sigmoid, fast_math::Sigmoid)
  OF_HOST_MATH_1(Softplus, fast_math::Softplus)
  OF_HOST_MATH_1(Gelu, fast_math::Gelu)
  OF_HOST_MATH_1(Expm1, std::expm1)
  OF_HOST_MATH_1(Log1p, std::log1p)
  OF_HOST_MATH_1(Sqrt, std::sqrt)
  OF_HOST_MATH_1(Sin, std::sin)
  OF_HOST_MATH_1(Cos, std::cos)
  OF_HOST_MATH_1(Tan, std::tan)
  OF_HOST_MATH_1(Asin, std::asin)
  OF_HOST_MATH_1(Acos, std::acos)
  OF_HOST_MATH_1(Atan, std::atan)
  OF_HOST_MATH_1(Sinh, std::sinh)
  OF_HOST_MATH_1(Cosh, std::cosh)
  OF_HOST_MATH_1(Tanh, std::tanh)
  OF_HOST_MATH_1(Asinh, std::asinh)
  OF_HOST_MATH_1(Acosh, std::acosh)
  OF_HOST_MATH_1(Atanh, std::atanh)
  OF_HOST_MATH_1(Ceil, std::ceil)
  OF_HOST_MATH_1(Floor, std::floor)
  OF_HOST_MATH_1(Rint, std::nearbyint)  // half to even in the default rounding mode
  OF_HOST_MATH_2(Pow, std::pow)
  OF_HOST_MATH_2(Atan2, std::atan2)
  OF_HOST_MATH_2(Fmod, std::fmod)
#undef OF_HOST_MATH_1
#undef OF_HOST_MATH_2
  // In double (lgamma_r: thread-safe, unlike lgamma's global sign).
  template <typename T>
  static T Lgamma(T x) {
    int sign;
    return static_cast<T>(lgamma_r(static_cast<double>(x), &sign));
  }
};

}  // namespace oneflow
