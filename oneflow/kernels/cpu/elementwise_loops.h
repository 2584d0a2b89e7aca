#pragma once
// The hot loops of elementwise CPU kernels, compiled once per vector ISA and chosen at load
// time (cpu_dispatch.h). A functor's per-element function must be inline and branch-free
// (selects, no libm calls for float: fast_math.h) for its loop to vectorize.

#include <cstdint>

#include "oneflow/kernels/cpu/cpu_dispatch.h"

namespace oneflow {

// y[i] = Functor::Forward(x[i], params) for i in [0, count).
template <typename Functor, typename T, typename Out, typename Params>
ONEFLOW_CPU_DISPATCH void UnaryLoop(const T* __restrict__ x, Out* __restrict__ y, int64_t count,
                                    Params params) {
  for (int64_t i = 0; i < count; ++i) { y[i] = Functor::Forward(x[i], params); }
}

// dx[i] = Functor::Backward(x[i], dy[i], params) for i in [0, count).
template <typename Functor, typename T, typename Params>
ONEFLOW_CPU_DISPATCH void UnaryGradLoop(const T* __restrict__ x, const T* __restrict__ dy,
                                        T* __restrict__ dx, int64_t count, Params params) {
  for (int64_t i = 0; i < count; ++i) { dx[i] = Functor::Backward(x[i], dy[i], params); }
}

// One row of a broadcast binary op: each input either contiguous (stride 1) or one repeated
// value (stride 0). z[i] = Functor::Apply(x, y).
template <typename Functor, typename T, typename Out>
ONEFLOW_CPU_DISPATCH void BinaryRow(const T* __restrict__ x, int64_t x_stride,
                                    const T* __restrict__ y, int64_t y_stride, Out* __restrict__ z,
                                    int64_t count) {
  if (x_stride == 1 && y_stride == 1) {
    for (int64_t i = 0; i < count; ++i) { z[i] = Functor::Apply(x[i], y[i]); }
  } else if (x_stride == 1) {
    const T y_value = *y;
    for (int64_t i = 0; i < count; ++i) { z[i] = Functor::Apply(x[i], y_value); }
  } else if (y_stride == 1) {
    const T x_value = *x;
    for (int64_t i = 0; i < count; ++i) { z[i] = Functor::Apply(x_value, y[i]); }
  } else {
    const Out value = Functor::Apply(*x, *y);
    for (int64_t i = 0; i < count; ++i) { z[i] = value; }
  }
}

}  // namespace oneflow
