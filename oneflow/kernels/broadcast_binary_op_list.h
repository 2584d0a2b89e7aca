#pragma once
// The broadcast binary ops and the functor that computes each, once for every device: a kernel
// file passes its registration macros, each called as MACRO(op type, functor name).
//   ALL_TYPES: floating dtypes, int32 and int64;
//   FLOATING:  floating dtypes only;
//   COMPARE:   comparisons and logical ops (every arithmetic dtype in, int8 out).

#define OF_FOR_EACH_BROADCAST_BINARY_OP(ALL_TYPES, FLOATING, COMPARE) \
  ALL_TYPES("broadcast_add", AddFunctor);                             \
  ALL_TYPES("broadcast_sub", SubFunctor);                             \
  ALL_TYPES("broadcast_mul", MulFunctor);                             \
  FLOATING("broadcast_div", DivFunctor);                              \
  FLOATING("broadcast_pow", PowFunctor);                              \
  FLOATING("broadcast_atan2", Atan2Functor);                          \
  FLOATING("broadcast_xdivy", XdivyFunctor);                          \
  FLOATING("broadcast_xlogy", XlogyFunctor);                          \
  ALL_TYPES("broadcast_maximum", MaximumFunctor);                     \
  ALL_TYPES("broadcast_minimum", MinimumFunctor);                     \
  ALL_TYPES("broadcast_floor_mod", FloorModFunctor);                  \
  ALL_TYPES("broadcast_floordiv", FloorDivFunctor);                   \
  COMPARE("broadcast_equal", EqualFunctor);                           \
  COMPARE("broadcast_not_equal", NotEqualFunctor);                    \
  COMPARE("broadcast_greater", GreaterFunctor);                       \
  COMPARE("broadcast_greater_equal", GreaterEqualFunctor);            \
  COMPARE("broadcast_less", LessFunctor);                             \
  COMPARE("broadcast_less_equal", LessEqualFunctor);                  \
  COMPARE("broadcast_logical_and", LogicalAndFunctor);                \
  COMPARE("broadcast_logical_or", LogicalOrFunctor)
