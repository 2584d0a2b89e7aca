#pragma once
// One row of a numerically stable softmax, shared by the softmax and softmax cross-entropy
// kernels. Float rows use fast_math's vectorizable exp and log. Callers run them inside per-ISA
// clones (cpu_dispatch.h); they are forced inline so that they get the clone's vector ISA.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/fast_math.h"

namespace oneflow {

// The maximum of a row of n > 0 values. GCC does not vectorize a floating max reduction (not
// even under `omp simd reduction(max)`: it was a third of a softmax row's time), so the row is
// folded 64 bytes at a time with GCC's vector extension, which each ISA clone compiles to its
// widest registers.
template <typename T>
ONEFLOW_PER_ISA_BODY inline T RowMax(const T* __restrict__ x, int64_t n) {
  typedef T Vector __attribute__((vector_size(64)));
  constexpr int64_t kLanes = sizeof(Vector) / sizeof(T);
  if (n < kLanes) { return *std::max_element(x, x + n); }
  Vector running;
  std::memcpy(&running, x, sizeof(Vector));
  int64_t c = kLanes;
  for (; c + kLanes <= n; c += kLanes) {
    Vector next;
    std::memcpy(&next, x + c, sizeof(Vector));
    running = running > next ? running : next;
  }
  T max_value = running[0];
  for (int64_t j = 1; j < kLanes; ++j) { max_value = std::max(max_value, T(running[j])); }
  for (; c < n; ++c) { max_value = std::max(max_value, x[c]); }
  return max_value;
}

// Writes softmax(x) into y for a row of n > 0 values and returns logsumexp(x). The row maximum
// is subtracted before exp, so large logits neither overflow nor lose the result.
template <typename T>
ONEFLOW_PER_ISA_BODY inline T SoftmaxRow(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const T max_value = RowMax(x, n);
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
  const T max_value = RowMax(x, n);
  T sum = T(0);
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < n; ++c) { sum += fast_math::Exp(x[c] - max_value); }
  const T shift = max_value + fast_math::Log(sum);
  for (int64_t c = 0; c < n; ++c) { y[c] = x[c] - shift; }
}

}  // namespace oneflow
