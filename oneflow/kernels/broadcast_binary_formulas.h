#pragma once
// Per-element formulas of the broadcast binary ops (oneflow/ops/broadcast_binary.cpp), written
// once for every device: each functor is a template over a math library M (HostMath for the CPU
// kernels, cuda::DeviceMath for the GPU kernels; see math_unary_formulas.h). Apply(x, y) -> z in
// the compute type, or int8 for comparisons and logical ops. The op list that pairs op types with
// these functors is broadcast_binary_op_list.h.

#include <cstdint>
#include <type_traits>

#include "oneflow/kernels/math_unary_formulas.h"  // OF_MATH_FUNC

namespace oneflow {
namespace broadcast_binary {

#define OF_BINARY_FUNCTOR(Name, expression)    \
  template <class M>                           \
  struct Name {                                \
    template <typename T>                      \
    OF_MATH_FUNC static auto Apply(T x, T y) { \
      return expression;                       \
    }                                          \
  };

// clang-format off
OF_BINARY_FUNCTOR(AddFunctor, T(x + y))
OF_BINARY_FUNCTOR(SubFunctor, T(x - y))
OF_BINARY_FUNCTOR(MulFunctor, T(x * y))
OF_BINARY_FUNCTOR(DivFunctor, T(x / y))
OF_BINARY_FUNCTOR(PowFunctor, T(M::Pow(x, y)))
OF_BINARY_FUNCTOR(Atan2Functor, T(M::Atan2(x, y)))
// 0 where x == 0 (even where y == 0 or log(y) is infinite), as OneFlow 0.3 and TensorFlow.
OF_BINARY_FUNCTOR(XdivyFunctor, x == T(0) ? T(0) : T(x / y))
OF_BINARY_FUNCTOR(XlogyFunctor, x == T(0) ? T(0) : T(x * M::Log(y)))
// NaN in either input gives NaN, as numpy.maximum / minimum.
OF_BINARY_FUNCTOR(MaximumFunctor, (x > y || x != x) ? x : y)
OF_BINARY_FUNCTOR(MinimumFunctor, (x < y || x != x) ? x : y)
OF_BINARY_FUNCTOR(EqualFunctor, int8_t(x == y))
OF_BINARY_FUNCTOR(NotEqualFunctor, int8_t(x != y))
OF_BINARY_FUNCTOR(GreaterFunctor, int8_t(x > y))
OF_BINARY_FUNCTOR(GreaterEqualFunctor, int8_t(x >= y))
OF_BINARY_FUNCTOR(LessFunctor, int8_t(x < y))
OF_BINARY_FUNCTOR(LessEqualFunctor, int8_t(x <= y))
OF_BINARY_FUNCTOR(LogicalAndFunctor, int8_t(x != T(0) && y != T(0)))
OF_BINARY_FUNCTOR(LogicalOrFunctor, int8_t(x != T(0) || y != T(0)))
// clang-format on
#undef OF_BINARY_FUNCTOR

// Python's floor division and modulo: the remainder takes the divisor's sign. Integer division
// by zero gives 0 (as numpy, without its warning) instead of trapping, and so does the lowest
// value divided by -1 (it wraps, as in numpy).
template <class M>
struct FloorModFunctor {
  template <typename T>
  OF_MATH_FUNC static T Apply(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      const T remainder = M::Fmod(x, y);
      return remainder != T(0) && ((remainder < T(0)) != (y < T(0))) ? remainder + y : remainder;
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (y == T(-1)) { return T(0); }  // (the lowest value % -1 traps on x86)
      }
      const T safe_y = y == T(0) ? T(1) : y;
      const T remainder = x % safe_y;
      const T adjusted = remainder != T(0) && ((remainder < T(0)) != (safe_y < T(0)))
                             ? remainder + safe_y
                             : remainder;
      return y == T(0) ? T(0) : adjusted;
    }
  }
};
template <class M>
struct FloorDivFunctor {
  template <typename T>
  OF_MATH_FUNC static T Apply(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      return M::Floor(x / y);
    } else {
      if constexpr (std::is_signed_v<T>) {
        // -x; the lowest value wraps to itself as in numpy (its division by -1 traps on x86).
        using U = std::make_unsigned_t<T>;
        if (y == T(-1)) { return static_cast<T>(U(0) - static_cast<U>(x)); }
      }
      const T safe_y = y == T(0) ? T(1) : y;
      const T quotient = x / safe_y;
      const T adjusted =
          (x % safe_y != T(0) && ((x < T(0)) != (safe_y < T(0)))) ? quotient - T(1) : quotient;
      return y == T(0) ? T(0) : adjusted;
    }
  }
};

}  // namespace broadcast_binary
}  // namespace oneflow
