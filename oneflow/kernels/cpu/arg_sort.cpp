// CPU argmax, argmin, top_k, sort and argsort. The input is viewed as [outer][axis][inner];
// rows along the axis are independent and split over the compute threads.
//   argmax/argmin, contiguous rows (inner == 1): the vectorized max/min of reduce_loops.h, then
//     a scan for its first position (stops early; ~1.5 reads per element on average);
//   argmax/argmin, strided rows: a chunk of running (best value, index) pairs per inner
//     position, updated row by row with selects (vectorizes);
//   top_k, k <= kSmallTopK: one pass over the row keeping the best k (value, index) pairs in
//     order; most elements only compare with the k-th best (1.5x faster than partial_sort);
//   top_k, larger k: std::partial_sort of the row's indices, O(n log k);
//   sort/argsort: std::stable_sort of the row's indices (ties keep index order).
// Strided rows are gathered into a contiguous buffer first.

#include <algorithm>
#include <numeric>
#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/reduce_loops.h"

namespace oneflow {

namespace {

// [outer][axis][inner] view of the input along attr "axis".
struct AxisView {
  explicit AxisView(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("in").shape;
    int64_t axis = NormalizeAxis(ctx.conf().op_type(), "axis", ctx.Attr<int64_t>("axis"),
                                 shape.num_axes());
    outer = shape.Count(0, axis);
    size = shape.At(axis);
    inner = shape.Count(axis + 1, shape.num_axes());
  }
  int64_t outer, size, inner;
};

// a orders before b in descending order: larger first, NaN largest of all.
template <typename T>
inline bool Greater(T a, T b) {
  return a > b || (IsNan(a) && !IsNan(b));
}
// a orders before b in ascending order: smaller first, NaN last (NumPy's order).
template <typename T>
inline bool Less(T a, T b) {
  return a < b || (!IsNan(a) && IsNan(b));
}

template <typename T, bool kIsMax>
class ArgExtremumKernel final : public Kernel {
 public:
  explicit ArgExtremumKernel(const KernelInitContext& ctx) : view_(ctx) {}

  void Forward(KernelContext& ctx) override {
    const T* in = ctx.Input("in").data<T>();
    int32_t* out = ctx.Output("out").mut_data<int32_t>();
    const AxisView view = view_;
    if (view.inner == 1) {
      ParallelForRows(ctx, view.outer, view.size, [=](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const T* x = in + row * view.size;
          const T best = kIsMax ? ReduceContiguous<MaxReducer<T>>(x, view.size)
                                : ReduceContiguous<MinReducer<T>>(x, view.size);
          int64_t index = 0;
          if (IsNan(best)) {
            while (!IsNan(x[index])) { ++index; }
          } else {
            while (x[index] != best) { ++index; }
          }
          out[row] = static_cast<int32_t>(index);
        }
      });
      return;
    }
    const int64_t chunks = (view.inner + kReduceChunk - 1) / kReduceChunk;
    ParallelForRows(ctx, view.outer * chunks, view.size * std::min(view.inner, kReduceChunk),
                    [=](int64_t begin, int64_t end) {
                      T best[kReduceChunk];
                      int32_t index[kReduceChunk];
                      for (int64_t task = begin; task < end; ++task) {
                        const int64_t o = task / chunks, c = (task % chunks) * kReduceChunk;
                        const int64_t width = std::min(kReduceChunk, view.inner - c);
                        const T* x = in + o * view.size * view.inner + c;
                        for (int64_t j = 0; j < width; ++j) {
                          best[j] = x[j];
                          index[j] = 0;
                        }
                        for (int64_t r = 1; r < view.size; ++r) {
                          const T* row = x + r * view.inner;
                          for (int64_t j = 0; j < width; ++j) {
                            // A NaN wins over any number and the first NaN stays.
                            const bool take = kIsMax ? Greater(row[j], best[j])
                                                     : row[j] < best[j] ||
                                                           (IsNan(row[j]) && !IsNan(best[j]));
                            best[j] = take ? row[j] : best[j];
                            index[j] = take ? static_cast<int32_t>(r) : index[j];
                          }
                        }
                        int32_t* target = out + o * view.inner + c;
                        for (int64_t j = 0; j < width; ++j) { target[j] = index[j]; }
                      }
                    });
  }

 private:
  AxisView view_;
};

template <typename T>
using ArgMaxKernel = ArgExtremumKernel<T, true>;
template <typename T>
using ArgMinKernel = ArgExtremumKernel<T, false>;

// Runs fn(values, indices, row) for each row along the axis: `values` the row (contiguous),
// `indices` a scratch array of the row's size holding 0, 1, ... (none when !with_indices); fn
// writes the row's outputs itself.
template <typename T, typename Fn>
void ForEachRow(KernelContext& ctx, const AxisView& view, const T* in, const Fn& fn,
                bool with_indices = true) {
  ParallelForRows(ctx, view.outer * view.inner, view.size, [&](int64_t begin, int64_t end) {
    std::vector<T> gathered(view.inner == 1 ? 0 : view.size);
    std::vector<int32_t> indices(with_indices ? view.size : 0);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t o = row / view.inner, i = row % view.inner;
      const T* base = in + o * view.size * view.inner + i;
      const T* values = base;
      if (view.inner != 1) {
        for (int64_t r = 0; r < view.size; ++r) { gathered[r] = base[r * view.inner]; }
        values = gathered.data();
      }
      std::iota(indices.begin(), indices.end(), 0);
      fn(values, with_indices ? indices.data() : nullptr, o * view.size * view.inner + i);
    }
  });
}

constexpr int64_t kSmallTopK = 32;

// The indices of the k (<= kSmallTopK, <= size) largest of values[0, size) into best_index, best
// first, in partial_sort's order (Greater, ties by lower index). One pass: the running best k
// stay sorted, and the elements in between that cannot enter (<= the k-th best: not greater,
// not NaN, and an equal one has a higher index) are skipped by a one-compare loop.
template <typename T>
void SmallTopK(const T* values, int64_t size, int64_t k, int32_t* best_index) {
  T best[kSmallTopK];
  int64_t count = 0;
  auto insert = [&](T value, int64_t r) {
    int64_t position = count == k ? k - 1 : count;  // when full, the k-th best drops out
    while (position > 0 && Greater(value, best[position - 1])) {
      best[position] = best[position - 1];
      best_index[position] = best_index[position - 1];
      --position;
    }
    best[position] = value;
    best_index[position] = static_cast<int32_t>(r);
    if (count < k) { ++count; }
  };
  int64_t r = 0;
  for (; r < size && count < k; ++r) { insert(values[r], r); }
  while (r < size) {
    const T threshold = best[k - 1];
    while (r < size && values[r] <= threshold) { ++r; }
    if (r == size) { break; }
    if (Greater(values[r], threshold)) { insert(values[r], r); }
    ++r;
  }
}

template <typename T>
class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const KernelInitContext& ctx)
      : view_(ctx), k_(ctx.Attr<int64_t>("k")) {}

  void Forward(KernelContext& ctx) override {
    int32_t* out = ctx.Output("out").mut_data<int32_t>();
    const int64_t k = k_, inner = view_.inner, size = view_.size;
    const bool small = k <= kSmallTopK;
    ForEachRow(
        ctx, view_, ctx.Input("in").data<T>(),
        [=](const T* values, int32_t* indices, int64_t offset) {
          int32_t small_best[kSmallTopK];
          const int32_t* best = small_best;
          if (small) {
            SmallTopK(values, size, k, small_best);
          } else {
            std::partial_sort(indices, indices + k, indices + size,
                              [values](int32_t a, int32_t b) {
                                return Greater(values[a], values[b]) ||
                                       (!Greater(values[b], values[a]) && a < b);
                              });
            best = indices;
          }
          // The output row starts where the input row does, with k in place of size.
          const int64_t o = offset / (size * inner), i = offset % inner;
          int32_t* target = out + o * k * inner + i;
          for (int64_t j = 0; j < k; ++j) { target[j * inner] = best[j]; }
        },
        /*with_indices=*/!small);
  }

 private:
  AxisView view_;
  int64_t k_;
};

// Sorts a row's indices stably in `descending` or ascending order.
template <typename T>
void SortIndices(const T* values, int32_t* indices, int64_t size, bool descending) {
  if (descending) {
    std::stable_sort(indices, indices + size,
                     [values](int32_t a, int32_t b) { return Greater(values[a], values[b]); });
  } else {
    std::stable_sort(indices, indices + size,
                     [values](int32_t a, int32_t b) { return Less(values[a], values[b]); });
  }
}

template <typename T, bool kIndices>
class SortKernel final : public Kernel {
 public:
  explicit SortKernel(const KernelInitContext& ctx)
      : view_(ctx), descending_(ctx.Attr<std::string>("direction") == "DESCENDING") {}

  void Forward(KernelContext& ctx) override {
    const int64_t inner = view_.inner, size = view_.size;
    const bool descending = descending_;
    Blob& out = ctx.Output("out");
    int32_t* out_indices = kIndices ? out.mut_data<int32_t>() : nullptr;
    T* out_values = kIndices ? nullptr : out.mut_data<T>();
    ForEachRow(ctx, view_, ctx.Input("in").data<T>(),
               [=](const T* values, int32_t* indices, int64_t offset) {
                 SortIndices(values, indices, size, descending);
                 for (int64_t j = 0; j < size; ++j) {
                   if (kIndices) {
                     out_indices[offset + j * inner] = indices[j];
                   } else {
                     out_values[offset + j * inner] = values[indices[j]];
                   }
                 }
               });
  }

 private:
  AxisView view_;
  bool descending_;
};

template <typename T>
using SortValuesKernel = SortKernel<T, false>;
template <typename T>
using ArgSortKernel = SortKernel<T, true>;

#define OF_REGISTER_SORTABLE_KERNELS(op_type, Kernel)       \
  REGISTER_KERNEL(op_type, "cpu", kFloat, Kernel<float>);   \
  REGISTER_KERNEL(op_type, "cpu", kDouble, Kernel<double>); \
  REGISTER_KERNEL(op_type, "cpu", kInt8, Kernel<int8_t>);   \
  REGISTER_KERNEL(op_type, "cpu", kInt32, Kernel<int32_t>); \
  REGISTER_KERNEL(op_type, "cpu", kInt64, Kernel<int64_t>)

}  // namespace

OF_REGISTER_SORTABLE_KERNELS("argmax", ArgMaxKernel);
OF_REGISTER_SORTABLE_KERNELS("argmin", ArgMinKernel);
OF_REGISTER_SORTABLE_KERNELS("top_k", TopKKernel);
OF_REGISTER_SORTABLE_KERNELS("sort", SortValuesKernel);
OF_REGISTER_SORTABLE_KERNELS("argsort", ArgSortKernel);

}  // namespace oneflow
