#pragma once
// Numerically stable softmax rows, shared by the softmax and softmax cross-entropy kernels. Float
// rows use fast_math's vectorizable exp and log. The one-row functions are forced inline and
// callers run them inside per-ISA clones (cpu_dispatch.h); SoftmaxSlice and SoftmaxShortRows are
// dispatched themselves.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/vector_merge.h"
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
  T max_value = MergeAllLanes(running, [](Vector a, Vector b) { return a > b ? a : b; });
  for (; c < n; ++c) { max_value = std::max(max_value, x[c]); }
  return max_value;
}

// y = exp(x - max_value) for a row of n values, and returns sum(y). Whole 64-byte runs go through
// a vectorized loop; the rest is the row's last 64 bytes done again as one vector (only its new
// lanes stored and summed), or for rows under 64 bytes one padded vector. The sum runs in a
// 64-byte vector merged by shuffles. (With an OpenMP simd reduction, whose lanes GCC merges by
// one dependent scalar add each through the stack, and GCC's scalar epilogue, one exp call per
// element, a row of 40 floats cost more than one of 100.)
template <typename T>
ONEFLOW_PER_ISA_BODY inline T ExpSumRow(const T* __restrict__ x, T* __restrict__ y, int64_t n,
                                        T max_value) {
  typedef T Vector __attribute__((vector_size(64)));
  constexpr int64_t kLanes = sizeof(Vector) / sizeof(T);
  const int64_t body = n / kLanes * kLanes;
#pragma omp simd
  for (int64_t c = 0; c < body; ++c) { y[c] = fast_math::Exp(x[c] - max_value); }
  Vector lanes = {};
  for (int64_t c = 0; c < body; c += kLanes) {
    Vector next;
    std::memcpy(&next, y + c, sizeof(Vector));
    lanes += next;
  }
  if (body < n) {
    // The last kLanes elements (or the row padded with max_value), of which lanes from
    // `first_new` on were not in the body.
    const int64_t start = n >= kLanes ? n - kLanes : 0;
    const int64_t first_new = body - start;
    T tail[kLanes];
    if (n >= kLanes) {
      std::memcpy(tail, x + start, sizeof(tail));
    } else {
      for (int64_t j = 0; j < kLanes; ++j) { tail[j] = j < n ? x[j] : max_value; }
    }
#pragma omp simd
    for (int64_t j = 0; j < kLanes; ++j) {
      tail[j] = j >= first_new && start + j < n ? fast_math::Exp(tail[j] - max_value) : T(0);
    }
    Vector fresh;
    std::memcpy(&fresh, tail, sizeof(Vector));
    lanes += fresh;
    if (n >= kLanes) {
      // Lanes before first_new hold 0 here; y already holds their exponentials.
      for (int64_t j = first_new; j < kLanes; ++j) { y[start + j] = tail[j]; }
    } else {
      for (int64_t j = 0; j < n; ++j) { y[j] = tail[j]; }
    }
  }
  return MergeAllLanes(lanes, [](Vector a, Vector b) { return a + b; });
}

// sum(a[c] * b[c]) (kProduct) or sum(a[c]) over a row of n values, in a 64-byte vector merged by
// shuffles (see ExpSumRow), the last elements added one by one.
template <typename T, bool kProduct>
ONEFLOW_PER_ISA_BODY inline T RowSum(const T* __restrict__ a, const T* __restrict__ b,
                                     int64_t n) {
  typedef T Vector __attribute__((vector_size(64)));
  constexpr int64_t kLanes = sizeof(Vector) / sizeof(T);
  Vector lanes = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    Vector next;
    std::memcpy(&next, a + c, sizeof(Vector));
    if constexpr (kProduct) {
      Vector factor;
      std::memcpy(&factor, b + c, sizeof(Vector));
      next *= factor;
    }
    lanes += next;
  }
  T sum = MergeAllLanes(lanes, [](Vector u, Vector v) { return u + v; });
  for (; c < n; ++c) { sum += kProduct ? a[c] * b[c] : a[c]; }
  return sum;
}

// Writes softmax(x) into y for a row of n > 0 values and returns logsumexp(x). The row maximum
// is subtracted before exp, so large logits neither overflow nor lose the result.
template <typename T>
ONEFLOW_PER_ISA_BODY inline T SoftmaxRow(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const T max_value = RowMax(x, n);
  const T sum = ExpSumRow(x, y, n, max_value);
  const T inverse = T(1) / sum;
  for (int64_t c = 0; c < n; ++c) { y[c] *= inverse; }
  return max_value + fast_math::Log(sum);
}

// Writes log(softmax(x)) into y for `rows` rows of n > 0 values each, kLogRowGroup rows at a
// time: their maxima and sums first (y holds the exponentials meanwhile), then the group's logs
// as one vector loop (a scalar log per row was a fifth of a row of 40), then y = x - shift.
constexpr int64_t kLogRowGroup = 16;
template <typename T>
ONEFLOW_PER_ISA_BODY inline void LogSoftmaxRows(const T* __restrict__ x, T* __restrict__ y,
                                                int64_t rows, int64_t n) {
  for (int64_t begin = 0; begin < rows; begin += kLogRowGroup) {
    const int64_t count = std::min(kLogRowGroup, rows - begin);
    T max_value[kLogRowGroup];
    T sum[kLogRowGroup];
    for (int64_t r = 0; r < kLogRowGroup; ++r) {
      const int64_t offset = (begin + r) * n;
      max_value[r] = r < count ? RowMax(x + offset, n) : T(0);
      sum[r] = r < count ? ExpSumRow(x + offset, y + offset, n, max_value[r]) : T(1);
    }
#pragma omp simd
    for (int64_t r = 0; r < kLogRowGroup; ++r) { max_value[r] += fast_math::Log(sum[r]); }
    for (int64_t r = 0; r < count; ++r) {
      const T* __restrict__ row_x = x + (begin + r) * n;
      T* __restrict__ row_y = y + (begin + r) * n;
      const T shift = max_value[r];
      for (int64_t c = 0; c < n; ++c) { row_y[c] = row_x[c] - shift; }
    }
  }
}

// Softmax (kLog: log-softmax) of one (classes, inner) slice along the classes: running maxima
// and sums per inner position (max_value, sum: inner elements each), so every loop runs over
// contiguous memory and vectorizes. If logsumexp is not null (softmax only), it receives the
// inner positions' log-sum-exp.
template <typename T, bool kLog>
ONEFLOW_CPU_DISPATCH void SoftmaxSlice(const T* __restrict__ x, T* __restrict__ y, int64_t classes,
                                       int64_t inner, T* __restrict__ max_value,
                                       T* __restrict__ sum, T* __restrict__ logsumexp = nullptr) {
  for (int64_t i = 0; i < inner; ++i) {
    max_value[i] = x[i];
    sum[i] = T(0);
  }
  for (int64_t c = 1; c < classes; ++c) {
    const T* __restrict__ xc = x + c * inner;
    for (int64_t i = 0; i < inner; ++i) { max_value[i] = std::max(max_value[i], xc[i]); }
  }
  for (int64_t c = 0; c < classes; ++c) {
    const T* __restrict__ xc = x + c * inner;
    T* __restrict__ yc = y + c * inner;
    for (int64_t i = 0; i < inner; ++i) {
      const T e = fast_math::Exp(xc[i] - max_value[i]);
      if (!kLog) { yc[i] = e; }
      sum[i] += e;
    }
  }
  if (kLog) {
    for (int64_t i = 0; i < inner; ++i) { max_value[i] += fast_math::Log(sum[i]); }
    for (int64_t c = 0; c < classes; ++c) {
      const T* __restrict__ xc = x + c * inner;
      T* __restrict__ yc = y + c * inner;
      for (int64_t i = 0; i < inner; ++i) { yc[i] = xc[i] - max_value[i]; }
    }
  } else {
    if (logsumexp != nullptr) {
      for (int64_t i = 0; i < inner; ++i) {
        logsumexp[i] = max_value[i] + fast_math::Log(sum[i]);
      }
    }
    for (int64_t i = 0; i < inner; ++i) { sum[i] = T(1) / sum[i]; }
    for (int64_t c = 0; c < classes; ++c) {
      T* __restrict__ yc = y + c * inner;
      for (int64_t i = 0; i < inner; ++i) { yc[i] *= sum[i]; }
    }
  }
}

// Rows of at most kShortRowClasses (the last axis) go kShortRowBlock rows at a time through
// SoftmaxSlice: transposed into a (classes, rows) buffer, where every loop runs down 64 rows in
// vectors, and back. Row by row, the loops' setup, the maximum's horizontal merge, the exp
// loop's scalar epilogue and a scalar log per row cost more than the row: 43 ns for 10 floats.
constexpr int64_t kShortRowClasses = 31;
constexpr int64_t kShortRowBlock = 64;
// The buffer SoftmaxShortRows needs, in elements.
constexpr int64_t kShortRowBuffer = 2 * kShortRowClasses * kShortRowBlock + 3 * kShortRowBlock;

// Softmax (kLog: log-softmax) of `rows` rows of `classes` <= kShortRowClasses; logsumexp, if not
// null (softmax only), receives each row's log-sum-exp.
template <typename T, bool kLog>
ONEFLOW_CPU_DISPATCH void SoftmaxShortRows(const T* __restrict__ x, T* __restrict__ y,
                                           int64_t rows, int64_t classes,
                                           T* __restrict__ logsumexp = nullptr) {
  T buffer[kShortRowBuffer];
  T* columns = buffer;
  T* results = columns + classes * kShortRowBlock;
  T* max_value = results + classes * kShortRowBlock;
  T* sum = max_value + kShortRowBlock;
  T* block_logsumexp = sum + kShortRowBlock;
  for (int64_t begin = 0; begin < rows; begin += kShortRowBlock) {
    const int64_t count = std::min(kShortRowBlock, rows - begin);
    const T* block_x = x + begin * classes;
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t c = 0; c < classes; ++c) { columns[c * count + r] = block_x[r * classes + c]; }
    }
    SoftmaxSlice<T, kLog>(columns, results, classes, count, max_value, sum,
                          logsumexp != nullptr ? block_logsumexp : nullptr);
    T* block_y = y + begin * classes;
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t c = 0; c < classes; ++c) { block_y[r * classes + c] = results[c * count + r]; }
    }
    if (logsumexp != nullptr) {
      std::copy(block_logsumexp, block_logsumexp + count, logsumexp + begin);
    }
  }
}

}  // namespace oneflow
