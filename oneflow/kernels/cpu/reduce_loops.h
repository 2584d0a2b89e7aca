#pragma once
// The reduction engine behind the CPU reduce kernels (reduce_sum, reduce_max, ..., reduce_any).
//
// A reduction over any set of axes is first viewed as [outer kept O][reduced R][inner kept I]
// by dropping size-1 axes and merging neighbours of the same kind; this covers full, last-axis,
// first-axis and middle-axis reductions. Two loops do the work:
//   - I == 1 (contiguous rows): `ReduceRow`, 32 independent accumulator lanes (compiled to
//     vector registers; also what makes float sums accurate, see below), merged pairwise by
//     vector shuffles (`MergeLanes`); `ReduceRows` does a task's rows in one dispatched call,
//     float rows of up to 128 (sum, max, min) 8 at a time (`ReduceEightShortRows`);
//   - I > 1 (row accumulation): a chunk of up to kReduceChunk accumulators per (o, chunk) task,
//     each reduced row added to it elementwise, four rows per pass.
// Tasks (o, chunk) are spread over the device's compute threads; when there are fewer of them
// than threads (e.g. one output), R is cut into parts whose partial results are merged.
// Other axis patterns (kept, reduced, kept, reduced, ...) take a serial BroadcastPlan walk.
//
// A Reducer (see SumReducer) says how elements combine: Acc Identity(), Acc Combine(Acc, T),
// Acc Merge(Acc, Acc), Out Finish(Acc). Float sums and products accumulate in double (contiguous
// float sums: in float within blocks of 256, see ReduceRow): a float32 sum of millions of
// elements then stays within float32 rounding of the exact value (the test checks 4M
// mixed-magnitude elements against float64 at 1e-6), and the conversion costs little next to
// reading the input.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "oneflow/common/shape.h"
#include "oneflow/kernels/cpu/broadcast_plan.h"
#include "oneflow/kernels/cpu/elementwise_loops.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/cpu/vector_merge.h"

namespace oneflow {

// Accumulator type of sums and products: double for floating types, the type itself otherwise.
template <typename T>
struct WideAccumulator {
  using type = T;
};
template <>
struct WideAccumulator<float> {
  using type = double;
};

template <typename T>
struct SumReducer {
  using Acc = typename WideAccumulator<T>::type;
  using Out = T;
  static Acc Identity() { return Acc(0); }
  static Acc Combine(Acc acc, T x) { return acc + static_cast<Acc>(x); }
  static Acc Merge(Acc a, Acc b) { return a + b; }
  static Out Finish(Acc acc) { return static_cast<Out>(acc); }
};

template <typename T>
struct ProdReducer {
  using Acc = typename WideAccumulator<T>::type;
  using Out = T;
  static Acc Identity() { return Acc(1); }
  static Acc Combine(Acc acc, T x) { return acc * static_cast<Acc>(x); }
  static Acc Merge(Acc a, Acc b) { return a * b; }
  static Out Finish(Acc acc) { return static_cast<Out>(acc); }
};

// Lowest / highest value of T, and the NaN test (false for integers), as branch-free selects.
template <typename T>
inline T LowestValue() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::lowest();
}
template <typename T>
inline T HighestValue() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::max();
}
template <typename T>
inline bool IsNan(T x) {
  return x != x;  // NOLINT: the NaN test, vectorizes; always false for integers
}

// Max and min propagate NaN, as NumPy and PyTorch do. `CombineOrdered` is the same without the
// NaN test (a NaN x is skipped): ReduceContiguous tracks NaN in lanes of its own, which keeps the
// accumulator's dependency chain one compare and one select long.
template <typename T>
struct MaxReducer {
  using Acc = T;
  using Out = T;
  static Acc Identity() { return LowestValue<T>(); }
  static Acc Combine(Acc acc, T x) { return (x > acc || IsNan(x)) ? x : acc; }
  static Acc CombineOrdered(Acc acc, T x) { return Ordered(acc, x); }
  template <typename V>
  static V Ordered(V a, V b) { return b > a ? b : a; }  // scalars or vectors
  static Acc Merge(Acc a, Acc b) { return Combine(a, b); }
  static Out Finish(Acc acc) { return acc; }
};

template <typename T>
struct MinReducer {
  using Acc = T;
  using Out = T;
  static Acc Identity() { return HighestValue<T>(); }
  static Acc Combine(Acc acc, T x) { return (x < acc || IsNan(x)) ? x : acc; }
  static Acc CombineOrdered(Acc acc, T x) { return Ordered(acc, x); }
  template <typename V>
  static V Ordered(V a, V b) { return b < a ? b : a; }  // scalars or vectors
  static Acc Merge(Acc a, Acc b) { return Combine(a, b); }
  static Out Finish(Acc acc) { return acc; }
};

// Whether Reducer has CombineOrdered (max and min over a floating type).
template <typename Reducer, typename T, typename = void>
struct HasOrderedCombine : std::false_type {};
template <typename Reducer, typename T>
struct HasOrderedCombine<Reducer, T,
                         std::void_t<decltype(Reducer::CombineOrdered(Reducer::Identity(), T()))>>
    : std::bool_constant<std::numeric_limits<T>::has_quiet_NaN> {};

// any / all: output int8 (OneFlow's reduce_any / reduce_all dtype); NaN counts as true.
template <typename T>
struct AnyReducer {
  using Acc = int8_t;
  using Out = int8_t;
  static Acc Identity() { return 0; }
  static Acc Combine(Acc acc, T x) { return acc | static_cast<int8_t>(x != T(0)); }
  static Acc Merge(Acc a, Acc b) { return a | b; }
  static Out Finish(Acc acc) { return acc; }
};

template <typename T>
struct AllReducer {
  using Acc = int8_t;
  using Out = int8_t;
  static Acc Identity() { return 1; }
  static Acc Combine(Acc acc, T x) { return acc & static_cast<int8_t>(x != T(0)); }
  static Acc Merge(Acc a, Acc b) { return a & b; }
  static Out Finish(Acc acc) { return acc; }
};

constexpr int kReduceLanes = 32;
constexpr int64_t kReduceChunk = 512;
constexpr int64_t kFloatSumBlock = 8 * kReduceLanes;

// The merge of lanes[0, kReduceLanes) by `merge` (associative, commutative), written with
// 32-byte GCC vectors: the lanes' vectors merged pairwise, then the lanes of one vector by
// shuffles. `merge` takes and returns vectors. (The same halving over a plain array GCC compiles
// to scalar code through the stack, and rows of 64 elements then cost 3x what they read.)
template <typename Acc, typename Merge>
__attribute__((always_inline)) inline Acc MergeLanes(const Acc* lanes, Merge merge) {
  typedef Acc Vector __attribute__((vector_size(32)));
  constexpr int kWidth = static_cast<int>(sizeof(Vector) / sizeof(Acc));
  static_assert(kReduceLanes % kWidth == 0, "whole vectors of lanes");
  Vector vectors[kReduceLanes / kWidth];
  std::memcpy(vectors, lanes, sizeof(vectors));
#pragma GCC unroll 4
  for (int count = kReduceLanes / kWidth / 2; count > 0; count /= 2) {
#pragma GCC unroll 8
    for (int j = 0; j < count; ++j) { vectors[j] = merge(vectors[j], vectors[j + count]); }
  }
  return MergeAllLanes(vectors[0], merge);
}

// The reduction of x[0, count) with kReduceLanes independent accumulators merged pairwise;
// inlined into the two dispatched entry points below.
template <typename Reducer, typename T>
__attribute__((always_inline)) inline typename Reducer::Acc ReduceRow(const T* __restrict__ x,
                                                                      int64_t count) {
  using Acc = typename Reducer::Acc;
  Acc lanes[kReduceLanes];
  for (int j = 0; j < kReduceLanes; ++j) { lanes[j] = Reducer::Identity(); }
  int64_t i = 0;
  if constexpr (HasOrderedCombine<Reducer, T>::value) {
    // Max / min: the lanes skip NaN (one compare and one select per element, so the lanes stay
    // in registers) while integer flags of T's width, vectorized alongside, note whether any
    // element was NaN; the result is then NaN. 2x faster than the NaN-testing select. The tail
    // (under kReduceLanes elements) takes the NaN-testing Combine.
    using Flag = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
    Flag nan[kReduceLanes] = {};
    for (; i + kReduceLanes <= count; i += kReduceLanes) {
      for (int j = 0; j < kReduceLanes; ++j) {
        const T x_j = x[i + j];
        lanes[j] = Reducer::CombineOrdered(lanes[j], x_j);
        nan[j] |= static_cast<Flag>(IsNan(x_j));
      }
    }
    const bool any_nan = MergeLanes(nan, [](auto a, auto b) { return a | b; }) != 0;
    Acc acc = any_nan ? std::numeric_limits<T>::quiet_NaN()
                      : MergeLanes(lanes, [](auto a, auto b) { return Reducer::Ordered(a, b); });
    for (; i < count; ++i) { acc = Reducer::Combine(acc, x[i]); }
    return acc;
  } else {
    if constexpr (std::is_same_v<Reducer, SumReducer<float>>) {
      if (count < kFloatSumBlock) {
        // A row shorter than a block: float lanes merged pairwise in float (the accuracy of a
        // block); the double lanes, their conversions and their merge would cost more than the
        // row.
        float rest[kReduceLanes] = {};
        for (; i + kReduceLanes <= count; i += kReduceLanes) {
          for (int j = 0; j < kReduceLanes; ++j) { rest[j] += x[i + j]; }
        }
        Acc tail = 0;
        for (; i < count; ++i) { tail += x[i]; }
        return static_cast<Acc>(MergeLanes(rest, [](auto a, auto b) { return a + b; })) + tail;
      }
      // Blocks of kFloatSumBlock elements are summed in float lanes (8 additions per lane, so
      // within a few float roundings of the block's exact sum) and the blocks' lane sums in the
      // double lanes: the accuracy of double accumulation at float's vector width. (More float
      // lanes measured slower: GCC then keeps the block on the stack.)
      for (; i + kFloatSumBlock <= count; i += kFloatSumBlock) {
        float block[kReduceLanes] = {};
        for (int64_t b = 0; b < kFloatSumBlock; b += kReduceLanes) {
          for (int j = 0; j < kReduceLanes; ++j) { block[j] += x[i + b + j]; }
        }
        for (int j = 0; j < kReduceLanes; ++j) { lanes[j] += static_cast<Acc>(block[j]); }
      }
    }
    for (; i + kReduceLanes <= count; i += kReduceLanes) {
      for (int j = 0; j < kReduceLanes; ++j) { lanes[j] = Reducer::Combine(lanes[j], x[i + j]); }
    }
    if constexpr (std::is_same_v<Reducer, SumReducer<T>> && std::is_arithmetic_v<Acc>) {
      // The tail in an accumulator of its own: the lanes stay in registers.
      Acc tail = Reducer::Identity();
      for (; i < count; ++i) { tail = Reducer::Combine(tail, x[i]); }
      return MergeLanes(lanes, [](auto a, auto b) { return a + b; }) + tail;
    } else {
      for (int j = 0; i < count; ++i, ++j) { lanes[j] = Reducer::Combine(lanes[j], x[i]); }
      for (int width = kReduceLanes / 2; width > 0; width /= 2) {
        for (int j = 0; j < width; ++j) { lanes[j] = Reducer::Merge(lanes[j], lanes[j + width]); }
      }
      return lanes[0];
    }
  }
}

// The reduction of x[0, count).
template <typename Reducer, typename T>
ONEFLOW_CPU_DISPATCH typename Reducer::Acc ReduceContiguous(const T* __restrict__ x,
                                                            int64_t count) {
  return ReduceRow<Reducer>(x, count);
}

// Float rows of at most kShortRow elements (sums, max, min) are reduced kRowsAtOnce at a time:
// each row into one vector of 8 float lanes (a sum: at most 16 additions per lane, fewer than a
// block's roundings allow), then the 8 rows' vectors folded together by shuffles into one vector
// of their 8 results. A horizontal merge per row cost more than a row of 64 elements.
constexpr int64_t kShortRow = 128;
constexpr int64_t kRowsAtOnce = 8;
typedef float Float8 __attribute__((vector_size(32)));
typedef float UnalignedFloat8 __attribute__((vector_size(32), aligned(4)));
typedef int32_t Int8 __attribute__((vector_size(32)));

template <typename Reducer>
constexpr bool kFoldsShortRows = std::is_same_v<Reducer, SumReducer<float>> ||
                                 std::is_same_v<Reducer, MaxReducer<float>> ||
                                 std::is_same_v<Reducer, MinReducer<float>>;

// merge(a, b) over 8 rows' vectors into one vector whose lane k is row k's merge: each step pairs
// neighbouring lanes of two vectors ([a0.a1, a2.a3, b0.b1, b2.b3, a4.a5, a6.a7, b4.b5, b6.b7]),
// twice, then the two halves.
template <typename Vector, typename Merge>
__attribute__((always_inline)) inline Vector FoldEight(const Vector* rows, Merge merge) {
  auto pair = [merge](Vector a, Vector b) {
    return merge(__builtin_shuffle(a, b, Int8{0, 2, 8, 10, 4, 6, 12, 14}),
                 __builtin_shuffle(a, b, Int8{1, 3, 9, 11, 5, 7, 13, 15}));
  };
  const Vector abcd = pair(pair(rows[0], rows[1]), pair(rows[2], rows[3]));
  const Vector efgh = pair(pair(rows[4], rows[5]), pair(rows[6], rows[7]));
  return merge(__builtin_shuffle(abcd, efgh, Int8{0, 1, 2, 3, 8, 9, 10, 11}),
               __builtin_shuffle(abcd, efgh, Int8{4, 5, 6, 7, 12, 13, 14, 15}));
}

// The finished reductions of 8 short float rows, x + k * count for k in [0, 8), into out[0, 8).
// Max and min: the lanes skip NaN and flags note one, as in ReduceRow.
template <typename Reducer>
__attribute__((always_inline)) inline void ReduceEightShortRows(const float* __restrict__ x,
                                                                int64_t count,
                                                                float* __restrict__ out) {
  constexpr bool kSum = std::is_same_v<Reducer, SumReducer<float>>;
  Float8 rows[kRowsAtOnce];
  Int8 nans[kRowsAtOnce];
  float tails[kRowsAtOnce];
  for (int64_t k = 0; k < kRowsAtOnce; ++k) {
    const float* row = x + k * count;
    Float8 lanes = Float8{} + static_cast<float>(Reducer::Identity());
    Int8 nan = {};
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
      const Float8 v = *reinterpret_cast<const UnalignedFloat8*>(row + i);
      if constexpr (kSum) {
        lanes += v;
      } else {
        lanes = Reducer::Ordered(lanes, v);
        nan |= v != v;
      }
    }
    auto tail = Reducer::Identity();
    for (; i < count; ++i) { tail = Reducer::Combine(tail, row[i]); }
    rows[k] = lanes;
    nans[k] = nan;
    tails[k] = static_cast<float>(tail);
  }
  Float8 tail_vector;
  std::memcpy(&tail_vector, tails, sizeof(tail_vector));
  Float8 results;
  if constexpr (kSum) {
    results = FoldEight(rows, [](Float8 a, Float8 b) { return a + b; }) + tail_vector;
  } else {
    const Float8 folded =
        FoldEight(rows, [](Float8 a, Float8 b) { return Reducer::Ordered(a, b); });
    const Int8 nan = FoldEight(nans, [](Int8 a, Int8 b) { return a | b; }) |
                     (tail_vector != tail_vector);
    results = nan ? Float8{} + std::numeric_limits<float>::quiet_NaN()
                  : Reducer::Ordered(folded, tail_vector);
  }
  std::memcpy(out, &results, sizeof(results));
}

// out[r] = the finished reduction of row r, x[r * count, (r + 1) * count), for r in [0, rows):
// one call for many rows (a call per short row cost more than the row).
template <typename Reducer, typename T>
ONEFLOW_CPU_DISPATCH void ReduceRows(const T* __restrict__ x, int64_t rows, int64_t count,
                                     typename Reducer::Out* __restrict__ out) {
  int64_t r = 0;
  if constexpr (kFoldsShortRows<Reducer>) {
    if (count <= kShortRow) {
      for (; r + kRowsAtOnce <= rows; r += kRowsAtOnce) {
        ReduceEightShortRows<Reducer>(x + r * count, count, out + r);
      }
    }
  }
  for (; r < rows; ++r) {
    out[r] = Reducer::Finish(ReduceRow<Reducer>(x + r * count, count));
  }
}

// acc[j] combined with rows[r * row_stride + j] for r in [0, rows), j in [0, width).
template <typename Reducer, typename T>
ONEFLOW_CPU_DISPATCH void AccumulateRows(const T* __restrict__ x, int64_t rows, int64_t row_stride,
                                         int64_t width, typename Reducer::Acc* __restrict__ acc) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const T* __restrict__ x0 = x + r * row_stride;
    const T* __restrict__ x1 = x0 + row_stride;
    const T* __restrict__ x2 = x1 + row_stride;
    const T* __restrict__ x3 = x2 + row_stride;
    for (int64_t j = 0; j < width; ++j) {
      acc[j] = Reducer::Combine(
          Reducer::Combine(Reducer::Combine(Reducer::Combine(acc[j], x0[j]), x1[j]), x2[j]),
          x3[j]);
    }
  }
  for (; r < rows; ++r) {
    const T* __restrict__ row = x + r * row_stride;
    for (int64_t j = 0; j < width; ++j) { acc[j] = Reducer::Combine(acc[j], row[j]); }
  }
}

// A reduction of a physical input shape over normalised axes, prepared once per kernel.
class ReduceView {
 public:
  ReduceView() = default;
  ReduceView(const Shape& input, const std::vector<int64_t>& axes) {
    Shape kept = input;
    for (int64_t axis : axes) { kept.Set(axis, 1); }
    out_count_ = kept.elem_count();
    in_count_ = input.elem_count();
    // Groups of merged axes, size-1 axes dropped: (reduced, size).
    std::vector<std::pair<bool, int64_t>> groups;
    for (int64_t axis = 0; axis < input.num_axes(); ++axis) {
      if (input.At(axis) == 1) { continue; }
      bool reduced = std::binary_search(axes.begin(), axes.end(), axis);
      if (!groups.empty() && groups.back().first == reduced) {
        groups.back().second *= input.At(axis);
      } else {
        groups.emplace_back(reduced, input.At(axis));
      }
    }
    // Pad to the form [kept][reduced][kept], any part possibly 1.
    size_t index = 0;
    if (index < groups.size() && !groups[index].first) { outer_ = groups[index++].second; }
    if (index < groups.size() && groups[index].first) { reduce_ = groups[index++].second; }
    if (index < groups.size() && !groups[index].first) { inner_ = groups[index++].second; }
    simple_ = index == groups.size();
    if (!simple_) { plan_ = BroadcastPlan(input, {kept}); }
  }

  int64_t out_count() const { return out_count_; }

  // out[out_count] = the reduction of in[input shape], using the compute threads.
  template <typename Reducer, typename T>
  void Run(KernelContext& ctx, const T* in, typename Reducer::Out* out) const {
    using Acc = typename Reducer::Acc;
    if (out_count_ == 0) { return; }
    if (in_count_ == 0) {
      for (int64_t i = 0; i < out_count_; ++i) { out[i] = Reducer::Finish(Reducer::Identity()); }
      return;
    }
    if (!simple_) {
      RunByPlan<Reducer>(in, out);
      return;
    }
    const int64_t outer = outer_, reduce = reduce_, inner = inner_;
    const int64_t chunks = (inner + kReduceChunk - 1) / kReduceChunk;
    const int64_t tasks = outer * chunks;
    const int64_t threads = ctx.cpu_device().compute_threads();
    int64_t parts = 1;
    if (tasks < threads && in_count_ >= 2 * kElementwiseGrain) {
      parts = std::min<int64_t>((threads + tasks - 1) / tasks * 2,
                                std::max<int64_t>(reduce / 64, 1));
    }
    // One task: (o, chunk, part) -> the partial reduction of its rows into `target`.
    auto task = [=](int64_t t, Acc* target) {
      const int64_t part = t % parts;
      const int64_t chunk = (t / parts) % chunks;
      const int64_t o = t / parts / chunks;
      const int64_t r_begin = reduce * part / parts, r_end = reduce * (part + 1) / parts;
      const T* base = in + o * reduce * inner;
      if (inner == 1) {
        target[0] = ReduceContiguous<Reducer>(base + r_begin, r_end - r_begin);
        return;
      }
      const int64_t c_begin = chunk * kReduceChunk;
      const int64_t width = std::min(kReduceChunk, inner - c_begin);
      for (int64_t j = 0; j < width; ++j) { target[j] = Reducer::Identity(); }
      AccumulateRows<Reducer>(base + r_begin * inner + c_begin, r_end - r_begin, inner, width,
                              target);
    };
    const int64_t work_per_task = std::max<int64_t>(1, in_count_ / (tasks * parts));
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / work_per_task);
    if (parts == 1 && inner == 1) {
      ParallelForElements(ctx, tasks, grain, [=](int64_t begin, int64_t end) {
        ReduceRows<Reducer>(in + begin * reduce, end - begin, reduce, out + begin);
      });
      return;
    }
    if (parts == 1) {
      ParallelForElements(ctx, tasks, grain, [=](int64_t begin, int64_t end) {
        Acc buffer[kReduceChunk];
        for (int64_t t = begin; t < end; ++t) {
          const int64_t chunk = t % chunks, o = t / chunks;
          const int64_t width = std::min(kReduceChunk, inner - chunk * kReduceChunk);
          task(t, buffer);
          typename Reducer::Out* target = out + o * inner + chunk * kReduceChunk;
          for (int64_t j = 0; j < width; ++j) { target[j] = Reducer::Finish(buffer[j]); }
        }
      });
      return;
    }
    // Partials [task][part][kReduceChunk], merged in part order (deterministic).
    std::vector<Acc> partials(tasks * parts * kReduceChunk);
    Acc* partial_data = partials.data();
    ParallelForElements(ctx, tasks * parts, 1, [=](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) { task(t, partial_data + t * kReduceChunk); }
    });
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t chunk = t % chunks, o = t / chunks;
      const int64_t width = inner == 1 ? 1 : std::min(kReduceChunk, inner - chunk * kReduceChunk);
      Acc* first = partial_data + t * parts * kReduceChunk;
      for (int64_t part = 1; part < parts; ++part) {
        const Acc* other = first + part * kReduceChunk;
        for (int64_t j = 0; j < width; ++j) { first[j] = Reducer::Merge(first[j], other[j]); }
      }
      typename Reducer::Out* target = out + o * inner + chunk * kReduceChunk;
      for (int64_t j = 0; j < width; ++j) { target[j] = Reducer::Finish(first[j]); }
    }
  }

 private:
  // Any axis pattern, serially: rows of the plan combined into one accumulator per output.
  template <typename Reducer, typename T>
  void RunByPlan(const T* in, typename Reducer::Out* out) const {
    using Acc = typename Reducer::Acc;
    std::vector<Acc> acc(out_count_, Reducer::Identity());
    const int64_t row_size = plan_.row_size();
    const bool row_reduced = plan_.row_stride(0) == 0;
    for (BroadcastPlan::RowCursor row(plan_, 0); row.index() < plan_.row_count(); row.Next()) {
      const int64_t out_offset = row.offset(0);
      const T* in_row = in + row.index() * row_size;
      if (row_reduced) {
        acc[out_offset] =
            Reducer::Merge(acc[out_offset], ReduceContiguous<Reducer>(in_row, row_size));
      } else {
        Acc* target = acc.data() + out_offset;
        for (int64_t i = 0; i < row_size; ++i) {
          target[i] = Reducer::Combine(target[i], in_row[i]);
        }
      }
    }
    for (int64_t i = 0; i < out_count_; ++i) { out[i] = Reducer::Finish(acc[i]); }
  }

  bool simple_ = true;
  int64_t outer_ = 1, reduce_ = 1, inner_ = 1;
  int64_t out_count_ = 1, in_count_ = 1;
  BroadcastPlan plan_;
};

}  // namespace oneflow
