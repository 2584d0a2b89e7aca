#pragma once
// One row of a numerically stable softmax, shared by the softmax and softmax cross-entropy
// kernels. Float rows use fast_math's vectorizable exp and log. Callers run them inside per-ISA
// clones (cpu_dispatch.h); they are forced inline so that they get the clone's vector ISA.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/fast_math.h"

namespace oneflow {

// Writes softmax(x) into y for a row of n > 0 values and returns logsumexp(x). The row maximum
// is subtracted before exp, so large logits neither overflow nor lose the result.
template <typename T>
ONEFLOW_PER_ISA_BODY inline T SoftmaxRow(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  T max_value = x[0];
#pragma omp simd reduction(max : max_value)
  for (int64_t c = 1; c < n; ++c) { max_value = std::max(max_value, x[c]); }
  T sum = T(0);
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < n; ++c) {
    y[c] = fast_math::Exp(x[c] - max_value);
    sum += y[c];
  }
  const T inverse = T(1) / sum;
  for (int64_t c = 0; c < n; ++c) { y[c] *= inverse; }
  return max_value + fast_math::Log(sum);
}

// Writes log(softmax(x)) into y for a row of n > 0 values.
template <typename T>
ONEFLOW_PER_ISA_BODY inline void LogSoftmaxRow(const T* __restrict__ x, T* __restrict__ y,
                                               int64_t n) {
  T max_value = x[0];
#pragma omp simd reduction(max : max_value)
  for (int64_t c = 1; c < n; ++c) { max_value = std::max(max_value, x[c]); }
  T sum = T(0);
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < n; ++c) { sum += fast_math::Exp(x[c] - max_value); }
  const T shift = max_value + fast_math::Log(sum);
  for (int64_t c = 0; c < n; ++c) { y[c] = x[c] - shift; }
}

}  // namespace oneflow
