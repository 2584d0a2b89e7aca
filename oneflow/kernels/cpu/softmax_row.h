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

template <typename Vector>
ONEFLOW_PER_ISA_BODY inline Vector LaneMax(Vector a, Vector b) {
  return a > b ? a : b;
}

// The maximum of a row of n > 0 values, as the lanes of a 64-byte vector whose merge is the
// maximum. GCC does not vectorize a floating max reduction (not even under `omp simd
// reduction(max)`: it was a third of a softmax row's time), so the row is folded 64 bytes at a
// time with GCC's vector extension, which each ISA clone compiles to its widest registers. The
// row's last 64 bytes are folded again as one vector (a maximum may see an element twice), and a
// row under 64 bytes is padded with its first element.
template <typename T>
ONEFLOW_PER_ISA_BODY inline auto RowMaxLanes(const T* __restrict__ x, int64_t n) {
  typedef T Vector __attribute__((vector_size(64)));
  constexpr int64_t kLanes = sizeof(Vector) / sizeof(T);
  Vector running;
  if (n < kLanes) {
    T padded[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) { padded[j] = x[j < n ? j : 0]; }
    std::memcpy(&running, padded, sizeof(Vector));
    return running;
  }
  std::memcpy(&running, x, sizeof(Vector));
  int64_t c = kLanes;
  for (; c + kLanes <= n; c += kLanes) {
    Vector next;
    std::memcpy(&next, x + c, sizeof(Vector));
    running = LaneMax(running, next);
  }
  if (c < n) {
    Vector last;
    std::memcpy(&last, x + n - kLanes, sizeof(Vector));
    running = LaneMax(running, last);
  }
  return running;
}

template <typename T>
ONEFLOW_PER_ISA_BODY inline T RowMax(const T* __restrict__ x, int64_t n) {
  return MergeAllLanes(RowMaxLanes(x, n), [](auto a, auto b) { return LaneMax(a, b); });
}

// y = exp(x - max_value) for a row of n values, and returns lanes of a 64-byte vector whose sum
// is sum(y). Whole 64-byte runs go through a vectorized loop; the rest is the row's last 64 bytes
// done again as one vector (only its new lanes stored and summed), or for rows under 64 bytes
// one padded vector. (With an OpenMP simd reduction, whose lanes GCC merges by one dependent
// scalar add each through the stack, and GCC's scalar epilogue, one exp call per element, a row
// of 40 floats cost more than one of 100.)
template <typename T>
ONEFLOW_PER_ISA_BODY inline auto ExpSumLanes(const T* __restrict__ x, T* __restrict__ y,
                                             int64_t n, T max_value) {
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
  return lanes;
}

template <typename T>
ONEFLOW_PER_ISA_BODY inline T ExpSumRow(const T* __restrict__ x, T* __restrict__ y, int64_t n,
                                        T max_value) {
  return MergeAllLanes(ExpSumLanes(x, y, n, max_value), [](auto a, auto b) { return a + b; });
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

// Softmax (kLog: log-softmax) of `rows` rows of n > 0 values each, x into y, a 64-byte vector's
// lanes of rows at a time (16 floats): the group's maxima as lanes first, merged together
// (MergeEachOf), then the exponentials (into y) and their sums likewise, then the group's logs
// as one vector, then y = x - (max + log sum), or y *= 1 / sum. logsumexp, if not null (softmax
// only), receives each row's log-sum-exp. Merging each row's lanes by itself was a chain of
// dependent shuffles per row, and a scalar log per row a fifth of a row of 40.
template <typename T, bool kLog>
ONEFLOW_PER_ISA_BODY inline void SoftmaxRows(const T* __restrict__ x, T* __restrict__ y,
                                             int64_t rows, int64_t n,
                                             T* __restrict__ logsumexp = nullptr) {
  typedef T Vector __attribute__((vector_size(64)));
  constexpr int64_t kGroup = sizeof(Vector) / sizeof(T);
  for (int64_t begin = 0; begin < rows; begin += kGroup) {
    const int64_t count = std::min(kGroup, rows - begin);
    const T* __restrict__ group_x = x + begin * n;
    T* __restrict__ group_y = y + begin * n;
    Vector lanes[kGroup];
    // A short group repeats its first row; those lanes are not used.
    for (int64_t r = 0; r < kGroup; ++r) {
      lanes[r] = RowMaxLanes(group_x + (r < count ? r : 0) * n, n);
    }
    const Vector max_value = MergeEachOf(lanes, [](Vector a, Vector b) { return LaneMax(a, b); });
    for (int64_t r = 0; r < kGroup; ++r) {
      const int64_t row = r < count ? r : 0;
      lanes[r] = ExpSumLanes(group_x + row * n, group_y + row * n, n, max_value[row]);
    }
    const Vector sum = MergeEachOf(lanes, [](Vector a, Vector b) { return a + b; });
    T factor[kGroup];
    if (kLog || logsumexp != nullptr) {
#pragma omp simd
      for (int64_t r = 0; r < kGroup; ++r) { factor[r] = max_value[r] + fast_math::Log(sum[r]); }
      if (!kLog) { std::copy(factor, factor + count, logsumexp + begin); }
    }
    if (!kLog) {
#pragma omp simd
      for (int64_t r = 0; r < kGroup; ++r) { factor[r] = T(1) / sum[r]; }
    }
    for (int64_t r = 0; r < count; ++r) {
      const T* __restrict__ row_x = group_x + r * n;
      T* __restrict__ row_y = group_y + r * n;
      const T row_factor = factor[r];
      if (kLog) {
        for (int64_t c = 0; c < n; ++c) { row_y[c] = row_x[c] - row_factor; }
      } else {
        for (int64_t c = 0; c < n; ++c) { row_y[c] *= row_factor; }
      }
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
