#pragma once
// One row of a numerically stable softmax, shared by the softmax and softmax cross-entropy
// kernels.

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace oneflow {

// Writes softmax(x) into y for a row of n > 0 values and returns logsumexp(x). The row maximum
// is subtracted before exp, so large logits neither overflow nor lose the result.
template <typename T>
inline T SoftmaxRow(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  T max_value = x[0];
  for (int64_t c = 1; c < n; ++c) { max_value = std::max(max_value, x[c]); }
  T sum = T(0);
  for (int64_t c = 0; c < n; ++c) {
    y[c] = std::exp(x[c] - max_value);
    sum += y[c];
  }
  const T inverse = T(1) / sum;
  for (int64_t c = 0; c < n; ++c) { y[c] *= inverse; }
  return max_value + std::log(sum);
}

}  // namespace oneflow
