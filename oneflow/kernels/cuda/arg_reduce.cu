// GPU argmax and argmin, as the CPU kernels (cpu/arg_sort.cpp): the input viewed as
// [outer][axis][inner], out[o][i] (int32) the index along the axis of the largest (smallest)
// element of row (o, i). The first NaN of a row wins over every number, in both; otherwise the
// first index holding the extremum wins (-0.0 and +0.0 are equal, so the first zero of either
// sign).
//
// Each element gets a rank (ordered_key.cuh) so that the winner is the element of largest rank
// and, among equal ranks, the lowest index:
//   argmax: the ordered key (NaN above every number, equal numbers equal);
//   argmin: NaN the largest rank, numbers the complement of their key (smaller, larger rank).
// Picking (larger rank, else lower index) is associative and commutative, so any reduction
// order gives the CPU's answer.
//   inner == 1 (contiguous rows): one block per row (grid-stride over rows), each thread scans
//     its strided share in index order, then a block reduction;
//   inner > 1: one thread per (o, i) walks the axis with stride inner (neighbouring threads
//     read neighbouring elements).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

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

template <typename T, bool kIsMax>
__device__ __forceinline__ OrderedKeyType<T> ArgRank(T x) {
  using K = OrderedKeyType<T>;
  const K key = OrderedKey(x);
  if constexpr (kIsMax) {
    return key;
  } else {
    // Only a NaN has the largest key of a floating type; an integer's largest key is INT_MAX's,
    // the smallest rank.
    if constexpr (kIsFloatingKey<T>) {
      if (key == MaxOrderedKey<T>()) { return key; }
    }
    return static_cast<K>(~key);
  }
}

// A candidate: its rank and its index along the axis. A plain aggregate (block_reduce.cuh keeps
// candidates in shared memory).
template <typename K>
struct Candidate {
  K rank;
  int64_t index;
};

template <typename K>
__device__ __forceinline__ Candidate<K> Better(const Candidate<K>& a, const Candidate<K>& b) {
  if (a.rank != b.rank) { return a.rank > b.rank ? a : b; }
  return a.index <= b.index ? a : b;
}

// One block per contiguous row of `size` elements (grid-stride over rows).
template <typename T, bool kIsMax>
__global__ void ArgReduceRowsKernel(int64_t rows, int64_t size, const T* in, int32_t* out) {
  using K = OrderedKeyType<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = in + row * size;
    // A thread without elements (size < blockDim.x) loses to every element: rank 0 ties at most,
    // and then the larger index loses.
    Candidate<K> best{K(0), INT64_MAX};
    const int64_t first = threadIdx.x;
    if (first < size) { best = Candidate<K>{ArgRank<T, kIsMax>(x[first]), first}; }
    for (int64_t j = first + blockDim.x; j < size; j += blockDim.x) {
      const K rank = ArgRank<T, kIsMax>(x[j]);
      // j grows, so on equal ranks the earlier index stays.
      if (rank > best.rank) { best = Candidate<K>{rank, j}; }
    }
    best = BlockReduce(best, [](Candidate<K> a, Candidate<K> b) { return Better(a, b); });
    if (threadIdx.x == 0) { out[row] = static_cast<int32_t>(best.index); }
  }
}

// [outer][size][inner], one thread per output (o, i).
template <typename T, bool kIsMax>
__global__ void ArgReduceColumnsKernel(int64_t outer, int64_t size, int64_t inner, const T* in,
                                       int32_t* out) {
  using K = OrderedKeyType<T>;
  const int64_t count = outer * inner;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += stride) {
    const int64_t o = index / inner;
    const int64_t i = index % inner;
    const T* column = in + o * size * inner + i;
    K best = ArgRank<T, kIsMax>(column[0]);
    int64_t best_index = 0;
    for (int64_t r = 1; r < size; ++r) {
      const K rank = ArgRank<T, kIsMax>(column[r * inner]);
      if (rank > best) {  // strictly: the first of equal ranks stays
        best = rank;
        best_index = r;
      }
    }
    out[index] = static_cast<int32_t>(best_index);
  }
}

template <typename T, bool kIsMax>
class ArgReduceGpuKernel final : public Kernel {
 public:
  explicit ArgReduceGpuKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("in").shape;
    const int64_t axis =
        NormalizeAxis(ctx.conf().op_type(), "axis", ctx.Attr<int64_t>("axis"), shape.num_axes());
    outer_ = shape.Count(0, axis);
    size_ = shape.At(axis);
    inner_ = shape.Count(axis + 1, shape.num_axes());
  }

  void Forward(KernelContext& ctx) override {
    // The op rejects an empty axis; no output, nothing to do.
    if (outer_ * inner_ == 0 || size_ == 0) { return; }
    const T* in = ctx.Input("in").data<T>();
    int32_t* out = ctx.Output("out").mut_data<int32_t>();
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    if (inner_ == 1) {
      const int blocks = static_cast<int>(std::min<int64_t>(outer_, kMaxBlocks));
      ArgReduceRowsKernel<T, kIsMax>
          <<<blocks, RowBlockSize(size_), 0, stream>>>(outer_, size_, in, out);
    } else {
      ArgReduceColumnsKernel<T, kIsMax>
          <<<BlockCount(outer_ * inner_), kBlockSize, 0, stream>>>(outer_, size_, inner_, in, out);
    }
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t outer_ = 0, size_ = 0, inner_ = 0;
};

template <typename T>
using ArgMaxGpuKernel = ArgReduceGpuKernel<T, true>;
template <typename T>
using ArgMinGpuKernel = ArgReduceGpuKernel<T, false>;

}  // namespace

OF_REGISTER_GPU_SORTABLE_KERNELS("argmax", ArgMaxGpuKernel);
OF_REGISTER_GPU_SORTABLE_KERNELS("argmin", ArgMinGpuKernel);

}  // namespace cuda
}  // namespace oneflow
