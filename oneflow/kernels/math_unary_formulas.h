#pragma once
// Per-element forward and backward of the unary math ops (oneflow/ops/math_unary.cpp), written
// once for every device. Each functor is a template over a math library M that supplies the
// transcendental functions in the compute type: HostMath (host_math.h: fast_math for float32,
// libm for float64) for the CPU kernels, cuda::DeviceMath (cuda/math_functors.cuh) for the GPU
// kernels. Forward(x, params) -> y; Backward(x, dy, params) -> dx. `params` carries an op's float
// attributes (leaky_relu's alpha, hardtanh's min_val and max_val) in the compute type. Written
// branch-free (selects) so that the CPU loops over them vectorize.

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OF_MATH_FUNC __host__ __device__ __forceinline__
#else
#define OF_MATH_FUNC inline
#endif

namespace oneflow {
namespace math_unary {

template <typename T>
struct Params {
  T a = T(0);
  T b = T(0);
};

constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kInverseSqrt2Pi = 0.39894228040143267794;

// digamma (d lgamma / dx) in double: for x > 0 by recurrence to x >= 6 and the asymptotic series;
// for x <= 0 by reflection; NaN at the poles (non-positive integers). Scalar: only lgamma's
// gradient uses it.
OF_MATH_FUNC double Digamma(double value) {
  constexpr double kPi = 3.14159265358979323846;
  double result = 0.0;
  if (value <= 0.0) {
    if (value == floor(value)) { return nan(""); }
    result -= kPi / tan(kPi * value);
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

#define OF_UNARY_FORWARD(expression)                            \
  template <typename T>                                         \
  OF_MATH_FUNC static T Forward(T x, const Params<T>& params) { \
    return expression;                                          \
  }
#define OF_UNARY_BACKWARD(expression)                                  \
  template <typename T>                                                \
  OF_MATH_FUNC static T Backward(T x, T dy, const Params<T>& params) { \
    return expression;                                                 \
  }

// clang-format off
template <class M> struct Abs { OF_UNARY_FORWARD(x < T(0) ? -x : x)
                                OF_UNARY_BACKWARD(x > T(0) ? dy : (x < T(0) ? -dy : T(0))) };
template <class M> struct Acos { OF_UNARY_FORWARD(M::Acos(x))
                                 OF_UNARY_BACKWARD(-dy / M::Sqrt(T(1) - x * x)) };
template <class M> struct Acosh { OF_UNARY_FORWARD(M::Acosh(x))
                                  OF_UNARY_BACKWARD(dy / M::Sqrt(x * x - T(1))) };
template <class M> struct Asin { OF_UNARY_FORWARD(M::Asin(x))
                                 OF_UNARY_BACKWARD(dy / M::Sqrt(T(1) - x * x)) };
template <class M> struct Asinh { OF_UNARY_FORWARD(M::Asinh(x))
                                  OF_UNARY_BACKWARD(dy / M::Sqrt(x * x + T(1))) };
template <class M> struct Atan { OF_UNARY_FORWARD(M::Atan(x))
                                 OF_UNARY_BACKWARD(dy / (T(1) + x * x)) };
template <class M> struct Atanh { OF_UNARY_FORWARD(M::Atanh(x))
                                  OF_UNARY_BACKWARD(dy / (T(1) - x * x)) };
template <class M> struct Ceil { OF_UNARY_FORWARD(M::Ceil(x)) };
template <class M> struct Cos { OF_UNARY_FORWARD(M::Cos(x)) OF_UNARY_BACKWARD(-dy * M::Sin(x)) };
template <class M> struct Cosh { OF_UNARY_FORWARD(M::Cosh(x)) OF_UNARY_BACKWARD(dy * M::Sinh(x)) };
template <class M> struct Erf { OF_UNARY_FORWARD(M::Erf(x))
                                OF_UNARY_BACKWARD(dy * T(kTwoOverSqrtPi) * M::Exp(-x * x)) };
template <class M> struct Erfc { OF_UNARY_FORWARD(M::Erfc(x))
                                 OF_UNARY_BACKWARD(-dy * T(kTwoOverSqrtPi) * M::Exp(-x * x)) };
template <class M> struct Exp { OF_UNARY_FORWARD(M::Exp(x)) OF_UNARY_BACKWARD(dy * M::Exp(x)) };
template <class M> struct Expm1 { OF_UNARY_FORWARD(M::Expm1(x)) OF_UNARY_BACKWARD(dy * M::Exp(x)) };
template <class M> struct Floor { OF_UNARY_FORWARD(M::Floor(x)) };
template <class M> struct Lgamma {
  OF_UNARY_FORWARD(M::Lgamma(x))
  OF_UNARY_BACKWARD(dy * static_cast<T>(Digamma(static_cast<double>(x))))
};
template <class M> struct Log { OF_UNARY_FORWARD(M::Log(x)) OF_UNARY_BACKWARD(dy / x) };
template <class M> struct Log1p { OF_UNARY_FORWARD(M::Log1p(x))
                                  OF_UNARY_BACKWARD(dy / (T(1) + x)) };
// log(sigmoid(x)) = -softplus(-x); d/dx = sigmoid(-x).
template <class M> struct LogSigmoid { OF_UNARY_FORWARD(-M::Softplus(-x))
                                       OF_UNARY_BACKWARD(dy * M::Sigmoid(-x)) };
template <class M> struct Negative { OF_UNARY_FORWARD(-x) OF_UNARY_BACKWARD(-dy) };
template <class M> struct Reciprocal { OF_UNARY_FORWARD(T(1) / x)
                                       OF_UNARY_BACKWARD(-dy / (x * x)) };
template <class M> struct ReciprocalNoNan { OF_UNARY_FORWARD(x == T(0) ? T(0) : T(1) / x)
                                            OF_UNARY_BACKWARD(x == T(0) ? T(0) : -dy / (x * x)) };
// Half to even, as numpy.round and OneFlow 0.3's round (nearbyint in the default rounding mode).
template <class M> struct Rint { OF_UNARY_FORWARD(M::Rint(x)) };
template <class M> struct Round { OF_UNARY_FORWARD(M::Rint(x)) };
template <class M> struct Rsqrt { OF_UNARY_FORWARD(T(1) / M::Sqrt(x))
                                  OF_UNARY_BACKWARD(dy * T(-0.5) / (x * M::Sqrt(x))) };
template <class M> struct SigmoidV2 {
  OF_UNARY_FORWARD(M::Sigmoid(x))
  OF_UNARY_BACKWARD(dy * M::Sigmoid(x) * (T(1) - M::Sigmoid(x)))
};
template <class M> struct Sign { OF_UNARY_FORWARD(T((x > T(0)) - (x < T(0)))) };
template <class M> struct Sin { OF_UNARY_FORWARD(M::Sin(x)) OF_UNARY_BACKWARD(dy * M::Cos(x)) };
template <class M> struct Sinh { OF_UNARY_FORWARD(M::Sinh(x)) OF_UNARY_BACKWARD(dy * M::Cosh(x)) };
template <class M> struct Softplus { OF_UNARY_FORWARD(M::Softplus(x))
                                     OF_UNARY_BACKWARD(dy * M::Sigmoid(x)) };
template <class M> struct Sqrt { OF_UNARY_FORWARD(M::Sqrt(x))
                                 OF_UNARY_BACKWARD(dy * T(0.5) / M::Sqrt(x)) };
template <class M> struct Tan { OF_UNARY_FORWARD(M::Tan(x))
                                OF_UNARY_BACKWARD(dy / (M::Cos(x) * M::Cos(x))) };
// gelu(x) = x * Phi(x); d/dx = Phi(x) + x * phi(x).
template <class M> struct Gelu {
  OF_UNARY_FORWARD(M::Gelu(x))
  OF_UNARY_BACKWARD(dy * (T(0.5) * M::Erfc(x * T(-0.70710678118654752)) +
                          x * T(kInverseSqrt2Pi) * M::Exp(T(-0.5) * x * x)))
};
// relu6(x + 3) / 6.
template <class M> struct HardSigmoid {
  OF_UNARY_FORWARD(x <= T(-3) ? T(0) : (x >= T(3) ? T(1) : x / T(6) + T(0.5)))
  OF_UNARY_BACKWARD(x > T(-3) && x < T(3) ? dy / T(6) : T(0))
};
// x * relu6(x + 3) / 6.
template <class M> struct HardSwish {
  OF_UNARY_FORWARD(x <= T(-3) ? T(0) : (x >= T(3) ? x : x * (x + T(3)) / T(6)))
  OF_UNARY_BACKWARD(x <= T(-3) ? T(0) : (x >= T(3) ? dy : dy * (T(2) * x + T(3)) / T(6)))
};
// params: a = min_val, b = max_val.
template <class M> struct HardTanh {
  OF_UNARY_FORWARD(x < params.a ? params.a : (x > params.b ? params.b : x))
  OF_UNARY_BACKWARD(x > params.a && x < params.b ? dy : T(0))
};
// params: a = alpha.
template <class M> struct LeakyRelu { OF_UNARY_FORWARD(x > T(0) ? x : params.a * x)
                                      OF_UNARY_BACKWARD(x > T(0) ? dy : params.a * dy) };
template <class M> struct Elu { OF_UNARY_FORWARD(x > T(0) ? x : params.a * (M::Exp(x) - T(1)))
                                OF_UNARY_BACKWARD(x > T(0) ? dy : dy * params.a * M::Exp(x)) };
template <class M> struct LogicalNot {
  template <typename T>
  OF_MATH_FUNC static int8_t Forward(T x, const Params<T>& params) {
    return x == T(0) ? 1 : 0;
  }
};
// clang-format on

#undef OF_UNARY_FORWARD
#undef OF_UNARY_BACKWARD

}  // namespace math_unary
}  // namespace oneflow
