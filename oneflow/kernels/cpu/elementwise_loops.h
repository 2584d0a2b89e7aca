#pragma once
// The hot loops of elementwise CPU kernels. With a generic build (-march=x86-64, the
// ONEFLOW_CPU_ARCH for binaries that run anywhere) each loop is compiled once per vector ISA
// and chosen at load time by the CPU the process runs on (GCC function multiversioning: an
// ifunc resolver picks the AVX-512, AVX2+FMA or baseline clone). A build for the machine's own
// CPU (ONEFLOW_CPU_ARCH=native, the default; __AVX2__ is then defined) compiles one version
// for it: clones would be no faster, and GCC cannot inline the per-element functions, compiled
// for the native CPU, into a clone whose ISA is not a superset of it (measured: a call per
// element, 6x slower). A functor's per-element function must be inline and branch-free
// (selects, no libm calls for float: fast_math.h) for its loop to vectorize.

#include <cstdint>

namespace oneflow {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__)
#define OF_ELEMENTWISE_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OF_ELEMENTWISE_CLONES
#endif

// y[i] = Functor::Forward(x[i], params) for i in [0, count).
template <typename Functor, typename T, typename Out, typename Params>
OF_ELEMENTWISE_CLONES void UnaryLoop(const T* __restrict__ x, Out* __restrict__ y, int64_t count,
                                     Params params) {
  for (int64_t i = 0; i < count; ++i) { y[i] = Functor::Forward(x[i], params); }
}

// dx[i] = Functor::Backward(x[i], dy[i], params) for i in [0, count).
template <typename Functor, typename T, typename Params>
OF_ELEMENTWISE_CLONES void UnaryGradLoop(const T* __restrict__ x, const T* __restrict__ dy,
                                         T* __restrict__ dx, int64_t count, Params params) {
  for (int64_t i = 0; i < count; ++i) { dx[i] = Functor::Backward(x[i], dy[i], params); }
}

// One row of a broadcast binary op: each input either contiguous (stride 1) or one repeated
// value (stride 0). z[i] = Functor::Apply(x, y).
template <typename Functor, typename T, typename Out>
OF_ELEMENTWISE_CLONES void BinaryRow(const T* __restrict__ x, int64_t x_stride,
                                     const T* __restrict__ y, int64_t y_stride,
                                     Out* __restrict__ z, int64_t count) {
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
