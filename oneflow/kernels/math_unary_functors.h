#pragma once
// Per-element forward and backward of the unary math ops (oneflow/ops/math_unary.cpp), shared
// by device kernels. Forward(x, params) -> y; Backward(x, dy, params) -> dx. `params` carries an
// op's float attributes (leaky_relu's alpha, hardtanh's min_val and max_val) in the kernel's
// element type. Written branch-free so that loops over them vectorize; float32 transcendental
// functions come from fast_math.h, float64 ones from libm.

#include <cmath>
#include <cstdint>

#include "oneflow/kernels/fast_math.h"

namespace oneflow {
namespace math_unary {

template <typename T>
struct Params {
  T a = T(0);
  T b = T(0);
};

namespace fm = ::oneflow::fast_math;

constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kInverseSqrt2Pi = 0.39894228040143267794;

template <typename T>
inline T Select(bool condition, T yes, T no) {
  return condition ? yes : no;
}

// digamma (d lgamma / dx) for x > 0 by recurrence to x >= 6 and the asymptotic series; for
// x <= 0 by reflection. Scalar: only lgamma's gradient uses it.
template <typename T>
T Digamma(T x) {
  double value = static_cast<double>(x);
  double result = 0.0;
  if (value <= 0.0) {
    if (value == std::floor(value)) { return T(NAN); }
    result -= M_PI / std::tan(M_PI * value);
    value = 1.0 - value;
  }
  while (value < 6.0) {
    result -= 1.0 / value;
    value += 1.0;
  }
  const double inverse = 1.0 / value;
  const double z = inverse * inverse;
  result += std::log(value) - 0.5 * inverse -
            z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z / 132))));
  return static_cast<T>(result);
}

#define OF_UNARY_FORWARD(expression)             \
  template <typename T>                          \
  static T Forward(T x, const Params<T>& params) { \
    return expression;                           \
  }
#define OF_UNARY_BACKWARD(expression)                      \
  template <typename T>                                    \
  static T Backward(T x, T dy, const Params<T>& params) { \
    return expression;                                     \
  }

// clang-format off
struct Abs { OF_UNARY_FORWARD(x < T(0) ? -x : x)
             OF_UNARY_BACKWARD(x > T(0) ? dy : (x < T(0) ? -dy : T(0))) };
struct Acos { OF_UNARY_FORWARD(std::acos(x)) OF_UNARY_BACKWARD(-dy / std::sqrt(T(1) - x * x)) };
struct Acosh { OF_UNARY_FORWARD(std::acosh(x)) OF_UNARY_BACKWARD(dy / std::sqrt(x * x - T(1))) };
struct Asin { OF_UNARY_FORWARD(std::asin(x)) OF_UNARY_BACKWARD(dy / std::sqrt(T(1) - x * x)) };
struct Asinh { OF_UNARY_FORWARD(std::asinh(x)) OF_UNARY_BACKWARD(dy / std::sqrt(x * x + T(1))) };
struct Atan { OF_UNARY_FORWARD(std::atan(x)) OF_UNARY_BACKWARD(dy / (T(1) + x * x)) };
struct Atanh { OF_UNARY_FORWARD(std::atanh(x)) OF_UNARY_BACKWARD(dy / (T(1) - x * x)) };
struct Ceil { OF_UNARY_FORWARD(std::ceil(x)) };
struct Cos { OF_UNARY_FORWARD(std::cos(x)) OF_UNARY_BACKWARD(-dy * std::sin(x)) };
struct Cosh { OF_UNARY_FORWARD(std::cosh(x)) OF_UNARY_BACKWARD(dy * std::sinh(x)) };
struct Erf { OF_UNARY_FORWARD(fm::Erf(x))
             OF_UNARY_BACKWARD(dy * T(kTwoOverSqrtPi) * fm::Exp(-x * x)) };
struct Erfc { OF_UNARY_FORWARD(fm::Erfc(x))
              OF_UNARY_BACKWARD(-dy * T(kTwoOverSqrtPi) * fm::Exp(-x * x)) };
struct Exp { OF_UNARY_FORWARD(fm::Exp(x)) OF_UNARY_BACKWARD(dy * fm::Exp(x)) };
struct Expm1 { OF_UNARY_FORWARD(std::expm1(x)) OF_UNARY_BACKWARD(dy * fm::Exp(x)) };
struct Floor { OF_UNARY_FORWARD(std::floor(x)) };
struct Lgamma {
  template <typename T>
  static T Forward(T x, const Params<T>& params) {
    int sign;
    return static_cast<T>(lgamma_r(static_cast<double>(x), &sign));
  }
  OF_UNARY_BACKWARD(dy * Digamma(x))
};
struct Log { OF_UNARY_FORWARD(fm::Log(x)) OF_UNARY_BACKWARD(dy / x) };
struct Log1p { OF_UNARY_FORWARD(std::log1p(x)) OF_UNARY_BACKWARD(dy / (T(1) + x)) };
// log(sigmoid(x)) = -softplus(-x); d/dx = sigmoid(-x).
struct LogSigmoid { OF_UNARY_FORWARD(-fm::Softplus(-x)) OF_UNARY_BACKWARD(dy * fm::Sigmoid(-x)) };
struct Negative { OF_UNARY_FORWARD(-x) OF_UNARY_BACKWARD(-dy) };
struct Reciprocal { OF_UNARY_FORWARD(T(1) / x) OF_UNARY_BACKWARD(-dy / (x * x)) };
struct ReciprocalNoNan { OF_UNARY_FORWARD(x == T(0) ? T(0) : T(1) / x)
                         OF_UNARY_BACKWARD(x == T(0) ? T(0) : -dy / (x * x)) };
struct Rint { OF_UNARY_FORWARD(std::nearbyint(x)) };
// Half to even, as numpy.round and OneFlow 0.3's round (std::nearbyint).
struct Round { OF_UNARY_FORWARD(std::nearbyint(x)) };
struct Rsqrt { OF_UNARY_FORWARD(T(1) / std::sqrt(x))
               OF_UNARY_BACKWARD(dy * T(-0.5) / (x * std::sqrt(x))) };
struct SigmoidV2 { OF_UNARY_FORWARD(fm::Sigmoid(x))
                   OF_UNARY_BACKWARD(dy * fm::Sigmoid(x) * (T(1) - fm::Sigmoid(x))) };
struct Sign { OF_UNARY_FORWARD(T((x > T(0)) - (x < T(0)))) };
struct Sin { OF_UNARY_FORWARD(std::sin(x)) OF_UNARY_BACKWARD(dy * std::cos(x)) };
struct Sinh { OF_UNARY_FORWARD(std::sinh(x)) OF_UNARY_BACKWARD(dy * std::cosh(x)) };
struct Softplus { OF_UNARY_FORWARD(fm::Softplus(x)) OF_UNARY_BACKWARD(dy * fm::Sigmoid(x)) };
struct Sqrt { OF_UNARY_FORWARD(std::sqrt(x)) OF_UNARY_BACKWARD(dy * T(0.5) / std::sqrt(x)) };
struct Tan { OF_UNARY_FORWARD(std::tan(x))
             OF_UNARY_BACKWARD(dy / (std::cos(x) * std::cos(x))) };
// gelu(x) = x * Phi(x); d/dx = Phi(x) + x * phi(x).
struct Gelu { OF_UNARY_FORWARD(fm::Gelu(x))
              OF_UNARY_BACKWARD(dy * (T(0.5) * fm::Erfc(x * T(-0.70710678118654752)) +
                                      x * T(kInverseSqrt2Pi) * fm::Exp(T(-0.5) * x * x))) };
// relu6(x + 3) / 6.
struct HardSigmoid {
  OF_UNARY_FORWARD(x <= T(-3) ? T(0) : (x >= T(3) ? T(1) : x / T(6) + T(0.5)))
  OF_UNARY_BACKWARD(x > T(-3) && x < T(3) ? dy / T(6) : T(0))
};
// x * relu6(x + 3) / 6.
struct HardSwish {
  OF_UNARY_FORWARD(x <= T(-3) ? T(0) : (x >= T(3) ? x : x * (x + T(3)) / T(6)))
  OF_UNARY_BACKWARD(x <= T(-3) ? T(0) : (x >= T(3) ? dy : dy * (T(2) * x + T(3)) / T(6)))
};
// params: a = min_val, b = max_val.
struct HardTanh {
  OF_UNARY_FORWARD(x < params.a ? params.a : (x > params.b ? params.b : x))
  OF_UNARY_BACKWARD(x > params.a && x < params.b ? dy : T(0))
};
// params: a = alpha.
struct LeakyRelu { OF_UNARY_FORWARD(x > T(0) ? x : params.a * x)
                   OF_UNARY_BACKWARD(x > T(0) ? dy : params.a * dy) };
struct Elu { OF_UNARY_FORWARD(x > T(0) ? x : params.a * (fm::Exp(x) - T(1)))
             OF_UNARY_BACKWARD(x > T(0) ? dy : dy * params.a * fm::Exp(x)) };
struct LogicalNot {
  template <typename T>
  static int8_t Forward(T x, const Params<T>& params) {
    return x == T(0) ? 1 : 0;
  }
};
// clang-format on

#undef OF_UNARY_FORWARD
#undef OF_UNARY_BACKWARD

}  // namespace math_unary
}  // namespace oneflow
