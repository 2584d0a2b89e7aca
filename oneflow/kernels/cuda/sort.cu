// GPU sort, argsort, top_k and in_top_k, as the CPU kernels (cpu/arg_sort.cpp, cpu/in_top_k.cpp).
//
// sort / argsort / top_k: the input viewed as [outer][axis][inner]; each of the outer * inner
// rows along the axis is ordered as the CPU's std::stable_sort orders it: ascending (smaller
// first, NaN last) or descending (larger first, NaN first), equal elements (-0.0 and +0.0 are
// equal, so are all NaNs) in index order. top_k is the first k of the descending order (the
// CPU's partial_sort breaks ties by index, the same order). Sorted values are copied from the
// input, bits and all.
//
// Each element becomes an unsigned key (ordered_key.cuh; complemented for descending) whose
// unsigned order is that order, and rows are sorted with two stable radix sorts over the whole
// batch (cub::DeviceRadixSort, no host synchronization, efficient for one long row or for
// millions of short ones alike):
//   1. (key, position) pairs by key: equal keys keep their positions' order;
//   2. the resulting positions by their row (position / size), begin_bit 0 to the bits of the
//      row count: each row's positions come out together, still in key order, ties still in
//      index order. Skipped when the batch is one row.
// position - row * size is then the index along the axis. Rows go in batches of about
// kMaxBatchItems elements (at least one row), so the scratch memory (keys, positions, row ids,
// cub's temporary storage, all from CudaDeviceContext::Workspace) stays bounded and positions
// fit 32 bits; a row must have fewer than 2^31 elements (the indices are int32).
//
// in_top_k: one block per row (grid-stride over rows); its threads count the classes scoring
// strictly higher than the target (compared through their ordered keys) and the non-finite
// predictions, then a block reduction: out = no non-finite prediction and fewer than k higher;
// a target outside [0, classes) gives 0 without reading the row.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <limits>
#include <string>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cuda/block_reduce.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/cuda/ordered_key.cuh"

namespace oneflow {
namespace cuda {

namespace {

#define OF_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// ---------------------------------------------------------------------------------------------
// sort, argsort, top_k

constexpr int64_t kMaxBatchItems = int64_t{1} << 24;
constexpr size_t kWorkspaceAlignment = 256;

size_t AlignUp(size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

// The number of bits that hold every value in [0, count).
int BitsFor(int64_t count) {
  int bits = 0;
  while (bits < 63 && (int64_t{1} << bits) < count) { ++bits; }
  return bits;
}

// Element q of the batch is element j of row r = row_begin + q / size, j = q % size: its key
// (complemented when descending) and its position q.
template <typename T>
__global__ void MakeKeysKernel(int64_t count, int64_t row_begin, int64_t size, int64_t inner,
                               bool descending, const T* in, OrderedKeyType<T>* keys,
                               uint32_t* positions) {
  using K = OrderedKeyType<T>;
  OF_GRID_STRIDE_LOOP(q, count) {
    const int64_t r = row_begin + q / size;
    const int64_t j = q % size;
    const int64_t o = r / inner;
    const int64_t i = r % inner;
    const K key = OrderedKey(in[(o * size + j) * inner + i]);
    keys[q] = descending ? static_cast<K>(~key) : key;
    positions[q] = static_cast<uint32_t>(q);
  }
}

// The batch row of each position.
__global__ void RowOfPositionKernel(int64_t count, int64_t size, const uint32_t* positions,
                                    uint32_t* rows) {
  OF_GRID_STRIDE_LOOP(q, count) {
    rows[q] = static_cast<uint32_t>(static_cast<int64_t>(positions[q]) / size);
  }
}

// Output element j < out_size of each batch row from the row's sorted positions: the index
// (kIndices) or the input element there.
template <typename T, bool kIndices>
__global__ void WriteSortedKernel(int64_t count, int64_t row_begin, int64_t size, int64_t inner,
                                  int64_t out_size, const uint32_t* sorted, const T* in,
                                  void* out) {
  OF_GRID_STRIDE_LOOP(q, count) {
    const int64_t row_in_batch = q / out_size;
    const int64_t j = q % out_size;
    const int64_t row_start = row_in_batch * size;
    const int64_t source = static_cast<int64_t>(sorted[row_start + j]) - row_start;
    const int64_t r = row_begin + row_in_batch;
    const int64_t o = r / inner;
    const int64_t i = r % inner;
    const int64_t target = (o * out_size + j) * inner + i;
    if constexpr (kIndices) {
      static_cast<int32_t*>(out)[target] = static_cast<int32_t>(source);
    } else {
      static_cast<T*>(out)[target] = in[(o * size + source) * inner + i];
    }
  }
}

// Sorts the rows along attr "axis" of "in" and writes the first out_size of each row's order.
template <typename T>
class RowSorter {
 public:
  using K = OrderedKeyType<T>;

  explicit RowSorter(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("in").shape;
    const int64_t axis =
        NormalizeAxis(ctx.conf().op_type(), "axis", ctx.Attr<int64_t>("axis"), shape.num_axes());
    outer_ = shape.Count(0, axis);
    size_ = shape.At(axis);
    inner_ = shape.Count(axis + 1, shape.num_axes());
    rows_ = outer_ * inner_;
    OF_CHECK(size_ <= std::numeric_limits<int32_t>::max())
        << "GPU " << ctx.conf().op_type() << " of " << shape.ToString() << ": axis " << axis
        << " has " << size_ << " elements, more than int32 indices hold";
    batch_rows_ = size_ == 0 ? 0 : std::max<int64_t>(1, std::min(rows_, kMaxBatchItems / size_));
  }

  int64_t size() const { return size_; }

  template <bool kIndices>
  void Run(KernelContext& ctx, bool descending, int64_t out_size, void* out) {
    if (rows_ == 0 || size_ == 0 || out_size == 0) { return; }
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    const T* in = ctx.Input("in").data<T>();
    const int64_t max_items = batch_rows_ * size_;
    if (!planned_) {
      // Two batch shapes at most: full batches and the last one.
      const int64_t last_rows = rows_ - (rows_ - 1) / batch_rows_ * batch_rows_;
      temp_bytes_ = std::max(TempBytes(batch_rows_), TempBytes(last_rows));
      planned_ = true;
    }
    const size_t key_bytes = AlignUp(max_items * sizeof(K));
    const size_t index_bytes = AlignUp(max_items * sizeof(uint32_t));
    char* workspace = static_cast<char*>(ctx.cuda_device().Workspace(
        static_cast<int64_t>(2 * key_bytes + 4 * index_bytes + std::max<size_t>(temp_bytes_, 1))));
    K* keys_in = reinterpret_cast<K*>(workspace);
    K* keys_out = reinterpret_cast<K*>(workspace + key_bytes);
    uint32_t* positions_in = reinterpret_cast<uint32_t*>(workspace + 2 * key_bytes);
    uint32_t* positions_out = reinterpret_cast<uint32_t*>(workspace + 2 * key_bytes + index_bytes);
    uint32_t* rows_in = reinterpret_cast<uint32_t*>(workspace + 2 * key_bytes + 2 * index_bytes);
    uint32_t* rows_out = reinterpret_cast<uint32_t*>(workspace + 2 * key_bytes + 3 * index_bytes);
    void* temp = workspace + 2 * key_bytes + 4 * index_bytes;
    for (int64_t row_begin = 0; row_begin < rows_; row_begin += batch_rows_) {
      const int64_t rows = std::min(batch_rows_, rows_ - row_begin);
      const int64_t items = rows * size_;
      MakeKeysKernel<T><<<BlockCount(items), kBlockSize, 0, stream>>>(
          items, row_begin, size_, inner_, descending, in, keys_in, positions_in);
      OF_CUDA_CHECK(cudaGetLastError());
      size_t temp_bytes = temp_bytes_;
      OF_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
          temp, temp_bytes, keys_in, keys_out, positions_in, positions_out, static_cast<int>(items),
          0, static_cast<int>(sizeof(K) * 8), stream));
      const uint32_t* sorted = positions_out;
      const int row_bits = BitsFor(rows);
      if (row_bits > 0) {
        RowOfPositionKernel<<<BlockCount(items), kBlockSize, 0, stream>>>(items, size_,
                                                                          positions_out, rows_in);
        OF_CUDA_CHECK(cudaGetLastError());
        temp_bytes = temp_bytes_;
        OF_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
            temp, temp_bytes, rows_in, rows_out, positions_out, positions_in,
            static_cast<int>(items), 0, row_bits, stream));
        sorted = positions_in;
      }
      const int64_t out_items = rows * out_size;
      WriteSortedKernel<T, kIndices><<<BlockCount(out_items), kBlockSize, 0, stream>>>(
          out_items, row_begin, size_, inner_, out_size, sorted, in, out);
      OF_CUDA_CHECK(cudaGetLastError());
    }
  }

 private:
  // cub's temporary storage for a batch of `rows` rows (both sorts).
  size_t TempBytes(int64_t rows) const {
    const int items = static_cast<int>(rows * size_);
    size_t by_key = 0;
    OF_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, by_key, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
        static_cast<const uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr), items, 0,
        static_cast<int>(sizeof(K) * 8)));
    size_t by_row = 0;
    const int row_bits = BitsFor(rows);
    if (row_bits > 0) {
      OF_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
          nullptr, by_row, static_cast<const uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr),
          static_cast<const uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr), items, 0,
          row_bits));
    }
    return AlignUp(std::max(by_key, by_row));
  }

  int64_t outer_ = 0, size_ = 0, inner_ = 0, rows_ = 0, batch_rows_ = 0;
  bool planned_ = false;
  size_t temp_bytes_ = 0;
};

// sort (values) and argsort (int32 indices), attr "direction".
template <typename T, bool kIndices>
class SortGpuKernel final : public Kernel {
 public:
  explicit SortGpuKernel(const KernelInitContext& ctx)
      : sorter_(ctx), descending_(ctx.Attr<std::string>("direction") == "DESCENDING") {}

  void Forward(KernelContext& ctx) override {
    // int32 indices (kIndices) or T values.
    sorter_.template Run<kIndices>(ctx, descending_, sorter_.size(), ctx.Output("out").mut_raw());
  }

 private:
  RowSorter<T> sorter_;
  bool descending_;
};

template <typename T>
using SortValuesGpuKernel = SortGpuKernel<T, false>;
template <typename T>
using ArgSortGpuKernel = SortGpuKernel<T, true>;

// top_k: the indices of the first k of each row's descending order.
template <typename T>
class TopKGpuKernel final : public Kernel {
 public:
  explicit TopKGpuKernel(const KernelInitContext& ctx) : sorter_(ctx), k_(ctx.Attr<int64_t>("k")) {
    OF_CHECK(k_ >= 0 && k_ <= sorter_.size())
        << "GPU top_k: k = " << k_ << " is outside [0, " << sorter_.size() << "]";
  }

  void Forward(KernelContext& ctx) override {
    sorter_.template Run<true>(ctx, /*descending=*/true, k_, ctx.Output("out").mut_data<int32_t>());
  }

 private:
  RowSorter<T> sorter_;
  int64_t k_;
};

// ---------------------------------------------------------------------------------------------
// in_top_k

template <typename T, typename Target>
__global__ void InTopKKernel(int64_t rows, int64_t classes, int64_t k, const Target* targets,
                             const T* predictions, int8_t* out) {
  using K = OrderedKeyType<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t target = static_cast<int64_t>(targets[row]);
    // The same target for every thread of the block: all leave the row together.
    if (target < 0 || target >= classes) {
      if (threadIdx.x == 0) { out[row] = 0; }
      continue;
    }
    const T* x = predictions + row * classes;
    const K value = OrderedKey(x[target]);
    int64_t higher = 0;
    int64_t non_finite = 0;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
      const T prediction = x[j];
      // For finite numbers (the only rows whose count matters) the order of the keys is the
      // order of the numbers, -0.0 == +0.0.
      higher += OrderedKey(prediction) > value ? 1 : 0;
      non_finite += isfinite(prediction) ? 0 : 1;
    }
    higher = BlockReduce(higher, [](int64_t a, int64_t b) { return a + b; });
    non_finite = BlockReduce(non_finite, [](int64_t a, int64_t b) { return a + b; });
    if (threadIdx.x == 0) { out[row] = non_finite == 0 && higher < k ? 1 : 0; }
  }
}

template <typename T>
class InTopKGpuKernel final : public Kernel {
 public:
  explicit InTopKGpuKernel(const KernelInitContext& ctx)
      : k_(ctx.Attr<int64_t>("k")),
        rows_(ctx.Desc("predictions").shape.At(0)),
        classes_(ctx.Desc("predictions").shape.At(1)),
        target_type_(ctx.Desc("targets").data_type) {}

  void Forward(KernelContext& ctx) override {
    if (rows_ == 0) { return; }
    const T* predictions = ctx.Input("predictions").data<T>();
    int8_t* out = ctx.Output("out").mut_data<int8_t>();
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    const int blocks = static_cast<int>(std::min<int64_t>(rows_, kMaxBlocks));
    const int threads = RowBlockSize(classes_);
    if (target_type_ == kInt32) {
      InTopKKernel<T><<<blocks, threads, 0, stream>>>(
          rows_, classes_, k_, ctx.Input("targets").data<int32_t>(), predictions, out);
    } else {
      InTopKKernel<T><<<blocks, threads, 0, stream>>>(
          rows_, classes_, k_, ctx.Input("targets").data<int64_t>(), predictions, out);
    }
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t k_, rows_, classes_;
  DataType target_type_;
};

}  // namespace

OF_REGISTER_GPU_SORTABLE_KERNELS("sort", SortValuesGpuKernel);
OF_REGISTER_GPU_SORTABLE_KERNELS("argsort", ArgSortGpuKernel);
OF_REGISTER_GPU_SORTABLE_KERNELS("top_k", TopKGpuKernel);
// float and double, as the CPU kernel (the op takes no float16).
REGISTER_KERNEL("in_top_k", "gpu", kFloat, InTopKGpuKernel<float>);
REGISTER_KERNEL("in_top_k", "gpu", kDouble, InTopKGpuKernel<double>);

}  // namespace cuda
}  // namespace oneflow
