#pragma once
// Device versions of the per-element functors of the CPU kernels: the unary
// math family (oneflow/kernels/math_unary_functors.h, same formulas and edge
// cases), the activations and the broadcast binary ops. They take and return
// the compute type (float or double for floating kernels, the integer type for
// integer ones); half kernels compute in float.

#include <cuda_runtime.h>
#include <math_constants.h>

#include <cstdint>
#include <type_traits>

namespace oneflow {
namespace cuda {
namespace device_math {

// float and double overloads of the CUDA math library, so that functors can be
// templates.
#define OF_DEVICE_MATH_1(Name, float_function, double_function)                \
  __device__ __forceinline__ float Name(float x) { return float_function(x); } \
  __device__ __forceinline__ double Name(double x) { return double_function(x); }
#define OF_DEVICE_MATH_2(Name, float_function, double_function)                            \
  __device__ __forceinline__ float Name(float x, float y) { return float_function(x, y); } \
  __device__ __forceinline__ double Name(double x, double y) { return double_function(x, y); }

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
OF_DEVICE_MATH_1(Lgamma, lgammaf, lgamma)
OF_DEVICE_MATH_1(Ceil, ceilf, ceil)
OF_DEVICE_MATH_1(Floor, floorf, floor)
OF_DEVICE_MATH_1(Rint, rintf,
                 rint)  // half to even, as std::nearbyint in the default mode
OF_DEVICE_MATH_2(Pow, powf, pow)
OF_DEVICE_MATH_2(Atan2, atan2f, atan2)
OF_DEVICE_MATH_2(Fmod, fmodf, fmod)
#undef OF_DEVICE_MATH_1
#undef OF_DEVICE_MATH_2

template <typename T>
__device__ __forceinline__ T Sigmoid(T x) {
  return T(1) / (T(1) + Exp(-x));
}
// log(1 + e^x) = max(x, 0) + log1p(e^-|x|), as fast_math::Softplus.
template <typename T>
__device__ __forceinline__ T Softplus(T x) {
  const T magnitude = x < T(0) ? -x : x;
  return (x > T(0) ? x : T(0)) + Log1p(Exp(-magnitude));
}
// x * Phi(x) = 0.5 x erfc(-x / sqrt 2).
template <typename T>
__device__ __forceinline__ T Gelu(T x) {
  return T(0.5) * x * Erfc(x * T(-0.70710678118654752));
}

// digamma, as math_unary::Digamma (in double).
__device__ inline double Digamma(double value) {
  double result = 0.0;
  if (value <= 0.0) {
    if (value == floor(value)) { return CUDART_NAN; }
    result -= CUDART_PI / tan(CUDART_PI * value);
    value = 1.0 - value;
  }
  while (value < 6.0) {
    result -= 1.0 / value;
    value += 1.0;
  }
  const double inverse = 1.0 / value;
  const double z = inverse * inverse;
  result += log(value) - 0.5 * inverse -
            z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z / 132))));
  return result;
}

}  // namespace device_math

namespace math_unary_device {

namespace dm = ::oneflow::cuda::device_math;

// The op's float attributes (alpha, or min_val and max_val) in the compute
// type.
template <typename T>
struct Params {
  T a = T(0);
  T b = T(0);
};

constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kInverseSqrt2Pi = 0.39894228040143267794;

#define OF_UNARY_FORWARD(expression)                                          \
  template <typename T>                                                       \
  __device__ __forceinline__ static T Forward(T x, const Params<T>& params) { \
    return expression;                                                        \
  }
#define OF_UNARY_BACKWARD(expression)                                                \
  template <typename T>                                                              \
  __device__ __forceinline__ static T Backward(T x, T dy, const Params<T>& params) { \
    return expression;                                                               \
  }

// clang-format off
struct Abs { OF_UNARY_FORWARD(x < T(0) ? -x : x)
             OF_UNARY_BACKWARD(x > T(0) ? dy : (x < T(0) ? -dy : T(0))) };
struct Acos { OF_UNARY_FORWARD(dm::Acos(x)) OF_UNARY_BACKWARD(-dy / dm::Sqrt(T(1) - x * x)) };
struct Acosh { OF_UNARY_FORWARD(dm::Acosh(x)) OF_UNARY_BACKWARD(dy / dm::Sqrt(x * x - T(1))) };
struct Asin { OF_UNARY_FORWARD(dm::Asin(x)) OF_UNARY_BACKWARD(dy / dm::Sqrt(T(1) - x * x)) };
struct Asinh { OF_UNARY_FORWARD(dm::Asinh(x)) OF_UNARY_BACKWARD(dy / dm::Sqrt(x * x + T(1))) };
struct Atan { OF_UNARY_FORWARD(dm::Atan(x)) OF_UNARY_BACKWARD(dy / (T(1) + x * x)) };
struct Atanh { OF_UNARY_FORWARD(dm::Atanh(x)) OF_UNARY_BACKWARD(dy / (T(1) - x * x)) };
struct Ceil { OF_UNARY_FORWARD(dm::Ceil(x)) };
struct Cos { OF_UNARY_FORWARD(dm::Cos(x)) OF_UNARY_BACKWARD(-dy * dm::Sin(x)) };
struct Cosh { OF_UNARY_FORWARD(dm::Cosh(x)) OF_UNARY_BACKWARD(dy * dm::Sinh(x)) };
struct Erf { OF_UNARY_FORWARD(dm::Erf(x))
             OF_UNARY_BACKWARD(dy * T(kTwoOverSqrtPi) * dm::Exp(-x * x)) };
struct Erfc { OF_UNARY_FORWARD(dm::Erfc(x))
              OF_UNARY_BACKWARD(-dy * T(kTwoOverSqrtPi) * dm::Exp(-x * x)) };
struct Exp { OF_UNARY_FORWARD(dm::Exp(x)) OF_UNARY_BACKWARD(dy * dm::Exp(x)) };
struct Expm1 { OF_UNARY_FORWARD(dm::Expm1(x)) OF_UNARY_BACKWARD(dy * dm::Exp(x)) };
struct Floor { OF_UNARY_FORWARD(dm::Floor(x)) };
struct Lgamma { OF_UNARY_FORWARD(dm::Lgamma(x))
                OF_UNARY_BACKWARD(dy * static_cast<T>(dm::Digamma(static_cast<double>(x)))) };
struct Log { OF_UNARY_FORWARD(dm::Log(x)) OF_UNARY_BACKWARD(dy / x) };
struct Log1p { OF_UNARY_FORWARD(dm::Log1p(x)) OF_UNARY_BACKWARD(dy / (T(1) + x)) };
struct LogSigmoid { OF_UNARY_FORWARD(-dm::Softplus(-x)) OF_UNARY_BACKWARD(dy * dm::Sigmoid(-x)) };
struct Negative { OF_UNARY_FORWARD(-x) OF_UNARY_BACKWARD(-dy) };
struct Reciprocal { OF_UNARY_FORWARD(T(1) / x) OF_UNARY_BACKWARD(-dy / (x * x)) };
struct ReciprocalNoNan { OF_UNARY_FORWARD(x == T(0) ? T(0) : T(1) / x)
                         OF_UNARY_BACKWARD(x == T(0) ? T(0) : -dy / (x * x)) };
struct Rint { OF_UNARY_FORWARD(dm::Rint(x)) };
struct Round { OF_UNARY_FORWARD(dm::Rint(x)) };
struct Rsqrt { OF_UNARY_FORWARD(T(1) / dm::Sqrt(x))
               OF_UNARY_BACKWARD(dy * T(-0.5) / (x * dm::Sqrt(x))) };
struct SigmoidV2 { OF_UNARY_FORWARD(dm::Sigmoid(x))
                   OF_UNARY_BACKWARD(dy * dm::Sigmoid(x) * (T(1) - dm::Sigmoid(x))) };
struct Sign { OF_UNARY_FORWARD(T((x > T(0)) - (x < T(0)))) };
struct Sin { OF_UNARY_FORWARD(dm::Sin(x)) OF_UNARY_BACKWARD(dy * dm::Cos(x)) };
struct Sinh { OF_UNARY_FORWARD(dm::Sinh(x)) OF_UNARY_BACKWARD(dy * dm::Cosh(x)) };
struct Softplus { OF_UNARY_FORWARD(dm::Softplus(x)) OF_UNARY_BACKWARD(dy * dm::Sigmoid(x)) };
struct Sqrt { OF_UNARY_FORWARD(dm::Sqrt(x)) OF_UNARY_BACKWARD(dy * T(0.5) / dm::Sqrt(x)) };
struct Tan { OF_UNARY_FORWARD(dm::Tan(x)) OF_UNARY_BACKWARD(dy / (dm::Cos(x) * dm::Cos(x))) };
struct Gelu { OF_UNARY_FORWARD(dm::Gelu(x))
              OF_UNARY_BACKWARD(dy * (T(0.5) * dm::Erfc(x * T(-0.70710678118654752)) +
                                      x * T(kInverseSqrt2Pi) * dm::Exp(T(-0.5) * x * x))) };
struct HardSigmoid {
  OF_UNARY_FORWARD(x <= T(-3) ? T(0) : (x >= T(3) ? T(1) : x / T(6) + T(0.5)))
  OF_UNARY_BACKWARD(x > T(-3) && x < T(3) ? dy / T(6) : T(0))
};
struct HardSwish {
  OF_UNARY_FORWARD(x <= T(-3) ? T(0) : (x >= T(3) ? x : x * (x + T(3)) / T(6)))
  OF_UNARY_BACKWARD(x <= T(-3) ? T(0) : (x >= T(3) ? dy : dy * (T(2) * x + T(3)) / T(6)))
};
struct HardTanh {
  OF_UNARY_FORWARD(x < params.a ? params.a : (x > params.b ? params.b : x))
  OF_UNARY_BACKWARD(x > params.a && x < params.b ? dy : T(0))
};
struct LeakyRelu { OF_UNARY_FORWARD(x > T(0) ? x : params.a * x)
                   OF_UNARY_BACKWARD(x > T(0) ? dy : params.a * dy) };
struct Elu { OF_UNARY_FORWARD(x > T(0) ? x : params.a * (dm::Exp(x) - T(1)))
             OF_UNARY_BACKWARD(x > T(0) ? dy : dy * params.a * dm::Exp(x)) };
struct LogicalNot {
  template <typename T>
  __device__ __forceinline__ static int8_t Forward(T x, const Params<T>& params) {
    return x == T(0) ? 1 : 0;
  }
};
// clang-format on

#undef OF_UNARY_FORWARD
#undef OF_UNARY_BACKWARD

}  // namespace math_unary_device
}  // namespace cuda
}  // namespace oneflow
