#pragma once
// The math library of the GPU kernels: DeviceMath supplies, in float and double, the functions
// the per-element formulas written once for every device call (math_unary_formulas.h,
// broadcast_binary_formulas.h), as HostMath (host_math.h) does for the CPU kernels. Half kernels
// compute in float. The functions are __host__ __device__ so that host code can evaluate the
// same formulas (tests/cpp/kernels/device_math_test.cpp).

#include <cuda_runtime.h>

#include <cstdint>

#include "oneflow/kernels/math_unary_formulas.h"

namespace oneflow {
namespace cuda {

struct DeviceMath {
#define OF_DEVICE_MATH_1(Name, float_function, double_function)         \
  OF_MATH_FUNC static float Name(float x) { return float_function(x); } \
  OF_MATH_FUNC static double Name(double x) { return double_function(x); }
#define OF_DEVICE_MATH_2(Name, float_function, double_function)                     \
  OF_MATH_FUNC static float Name(float x, float y) { return float_function(x, y); } \
  OF_MATH_FUNC static double Name(double x, double y) { return double_function(x, y); }
  OF_DEVICE_MATH_1(Exp, expf, exp)
  OF_DEVICE_MATH_1(Expm1, expm1f, expm1)
  OF_DEVICE_MATH_1(Log, logf, log)
  OF_DEVICE_MATH_1(Log1p, log1pf, log1p)
  OF_DEVICE_MATH_1(Sqrt, sqrtf, sqrt)
  OF_DEVICE_MATH_1(Sin, sinf, sin)
  OF_DEVICE_MATH_1(Cos, cosf, cos)
  OF_DEVICE_MATH_1(Tan, tanf, tan)
  OF_DEVICE_MATH_1(Asin, asinf, asin)
  OF_DEVICE_MATH_1(Acos, acosf, acos)
  OF_DEVICE_MATH_1(Atan, atanf, atan)
  OF_DEVICE_MATH_1(Sinh, sinhf, sinh)
  OF_DEVICE_MATH_1(Cosh, coshf, cosh)
  OF_DEVICE_MATH_1(Tanh, tanhf, tanh)
  OF_DEVICE_MATH_1(Asinh, asinhf, asinh)
  OF_DEVICE_MATH_1(Acosh, acoshf, acosh)
  OF_DEVICE_MATH_1(Atanh, atanhf, atanh)
  OF_DEVICE_MATH_1(Erf, erff, erf)
  OF_DEVICE_MATH_1(Erfc, erfcf, erfc)
  OF_DEVICE_MATH_1(Ceil, ceilf, ceil)
  OF_DEVICE_MATH_1(Floor, floorf, floor)
  OF_DEVICE_MATH_1(Rint, rintf, rint)  // half to even, as std::nearbyint in the default mode
  OF_DEVICE_MATH_2(Pow, powf, pow)
  OF_DEVICE_MATH_2(Atan2, atan2f, atan2)
  OF_DEVICE_MATH_2(Fmod, fmodf, fmod)
#undef OF_DEVICE_MATH_1
#undef OF_DEVICE_MATH_2

  // In double, as HostMath::Lgamma.
  template <typename T>
  OF_MATH_FUNC static T Lgamma(T x) {
    return static_cast<T>(lgamma(static_cast<double>(x)));
  }
  template <typename T>
  OF_MATH_FUNC static T Sigmoid(T x) {
    return T(1) / (T(1) + Exp(-x));
  }
  // log(1 + e^x) = max(x, 0) + log1p(e^-|x|), as fast_math::Softplus.
  template <typename T>
  OF_MATH_FUNC static T Softplus(T x) {
    const T magnitude = x < T(0) ? -x : x;
    return (x > T(0) ? x : T(0)) + Log1p(Exp(-magnitude));
  }
  // x * Phi(x) = 0.5 x erfc(-x / sqrt 2).
  template <typename T>
  OF_MATH_FUNC static T Gelu(T x) {
    return T(0.5) * x * Erfc(x * T(-0.70710678118654752));
  }
};

}  // namespace cuda
}  // namespace oneflow
