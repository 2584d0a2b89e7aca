// GPU reductions: reduce_sum, reduce_sum_like, reduce_max, reduce_min,
// reduce_prod, reduce_any, reduce_all, and reduce_prod_grad (same axes, dtypes and NaN rules as
// cpu/reduce_loops.h; float16 added). One plan for any set of axes: size-1 axes
// dropped, neighbours of the same kind (kept / reduced) merged.
// - [outer kept O][reduced R][inner kept I] with I > 1 (a bias's gradient: the rows of a
//   matrix summed per column): blocks of 32 columns by 8 row lanes, where a warp reads 32
//   neighbouring elements of a row; R is split among enough blocks to fill the GPU, the splits'
//   partial results go to scratch memory and a second kernel combines them in split order
//   (deterministic, no atomics).
// - anything else (I == 1, i.e. contiguous rows, or kept and reduced axes
//   interleaved): a block per output element (more, splitting its reduced elements, when there
//   are few outputs: a whole tensor's sum); its threads split the reduced elements (contiguous
//   when the reduced axes are innermost) and combine them with a block reduction.
// Sums and products accumulate in float for float and float16, double for
// double.

#include <cuda_fp16.h>
#include <math_constants.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cuda/block_reduce.cuh"
#include "oneflow/kernels/cuda/broadcast.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

constexpr int kMaxReduceDims = 8;

template <typename T>
__device__ __forceinline__ T LowestValue() {
  if constexpr (std::is_same_v<T, float>) {
    return -CUDART_INF_F;
  } else if constexpr (std::is_same_v<T, double>) {
    return -CUDART_INF;
  } else if constexpr (std::is_same_v<T, int8_t>) {
    return INT8_MIN;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return INT32_MIN;
  } else {
    static_assert(std::is_same_v<T, int64_t>, "LowestValue: unsupported type");
    return INT64_MIN;
  }
}
template <typename T>
__device__ __forceinline__ T HighestValue() {
  if constexpr (std::is_same_v<T, float>) {
    return CUDART_INF_F;
  } else if constexpr (std::is_same_v<T, double>) {
    return CUDART_INF;
  } else if constexpr (std::is_same_v<T, int8_t>) {
    return INT8_MAX;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return INT32_MAX;
  } else {
    static_assert(std::is_same_v<T, int64_t>, "HighestValue: unsupported type");
    return INT64_MAX;
  }
}

// Reducers: Acc Identity(), Acc Combine(Acc, Acc) (also used to merge partial
// results), and the output type Out (T, or int8 for any / all). Elements are
// converted to Acc before combining.
template <typename T>
struct SumReducer {
  using Acc = ComputeType<T>;
  using Out = T;
  __device__ static Acc Identity() { return Acc(0); }
  __device__ static Acc Combine(Acc a, Acc b) { return a + b; }
};
template <typename T>
struct ProdReducer {
  using Acc = ComputeType<T>;
  using Out = T;
  __device__ static Acc Identity() { return Acc(1); }
  __device__ static Acc Combine(Acc a, Acc b) { return a * b; }
};
// Max and min propagate NaN.
template <typename T>
struct MaxReducer {
  using Acc = ComputeType<T>;
  using Out = T;
  __device__ static Acc Identity() { return LowestValue<Acc>(); }
  __device__ static Acc Combine(Acc a, Acc b) { return (b > a || b != b) ? b : a; }
};
template <typename T>
struct MinReducer {
  using Acc = ComputeType<T>;
  using Out = T;
  __device__ static Acc Identity() { return HighestValue<Acc>(); }
  __device__ static Acc Combine(Acc a, Acc b) { return (b < a || b != b) ? b : a; }
};
// any / all over truth values (x != 0, NaN counts as true), output int8.
template <typename T>
struct AnyReducer {
  using Acc = int8_t;
  using Out = int8_t;
  __device__ static Acc Identity() { return 0; }
  __device__ static Acc Combine(Acc a, Acc b) { return a | b; }
};
template <typename T>
struct AllReducer {
  using Acc = int8_t;
  using Out = int8_t;
  __device__ static Acc Identity() { return 1; }
  __device__ static Acc Combine(Acc a, Acc b) { return a & b; }
};

// reduce_prod_grad's statistics of a group: the product of its nonzero elements (in double, as
// the CPU) and the number of zeros.
struct ProductAndZeros {
  double product;
  int64_t zeros;
};
template <typename T>
struct NonzeroProductReducer {
  using Acc = ProductAndZeros;
  using Out = ProductAndZeros;
  __device__ static Acc Identity() { return {1.0, 0}; }
  __device__ static Acc Combine(Acc a, Acc b) { return {a.product * b.product, a.zeros + b.zeros}; }
};
// An element as the reducer's accumulator (a truth value for any / all).
template <typename Reducer, typename T>
__device__ __forceinline__ typename Reducer::Acc Load(T x) {
  using Acc = typename Reducer::Acc;
  if constexpr (std::is_same_v<Reducer, AnyReducer<T>> || std::is_same_v<Reducer, AllReducer<T>>) {
    return static_cast<Acc>(Convert<float>(x) != 0.0f);
  } else if constexpr (std::is_same_v<Reducer, NonzeroProductReducer<T>>) {
    const double value = Convert<double>(x);
    return value == 0.0 ? Acc{1.0, 1} : Acc{value, 0};
  } else {
    return Convert<Acc>(x);
  }
}

// Coordinates of a flat index over `dims` axes (row-major) dotted with
// `strides`.
struct AxesIndex {
  int dims = 0;
  int64_t sizes[kMaxReduceDims];
  int64_t strides[kMaxReduceDims];
  __device__ int64_t Offset(int64_t index) const {
    int64_t offset = 0;
    for (int d = dims - 1; d >= 0; --d) {
      offset += (index % sizes[d]) * strides[d];
      index /= sizes[d];
    }
    return offset;
  }
};

// Blocks per output element (grid-stride over outputs; y: the split of the reduced elements,
// [split * per_split, ...)). One split: the outputs; several: split-major partial results in
// `partial`.
template <typename Reducer, typename T>
__global__ void ReduceByBlockKernel(int64_t out_count, int64_t reduce_count, int64_t per_split,
                                    AxesIndex kept, AxesIndex reduced, const T* in,
                                    typename Reducer::Acc* partial, typename Reducer::Out* out) {
  using Acc = typename Reducer::Acc;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * per_split;
  const int64_t end = min(reduce_count, begin + per_split);
  for (int64_t o = blockIdx.x; o < out_count; o += gridDim.x) {
    const T* base = in + kept.Offset(o);
    Acc acc = Reducer::Identity();
    for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) {
      acc = Reducer::Combine(acc, Load<Reducer>(base[reduced.Offset(r)]));
    }
    acc = BlockReduce(acc, [](Acc a, Acc b) { return Reducer::Combine(a, b); });
    if (threadIdx.x != 0) { continue; }
    if (partial != nullptr) {
      partial[static_cast<int64_t>(blockIdx.y) * out_count + o] = acc;
    } else {
      out[o] = Convert<typename Reducer::Out>(acc);
    }
  }
}

constexpr int kColumnTile = 32;  // columns of a block: a warp
constexpr int kRowLanes = 8;     // warps of a block, each summing every 8th row
// Enough blocks for every SM of an H100/H200 several times over.
constexpr int64_t kColumnBlocksWanted = 1024;
constexpr int64_t kMinRowsPerSplit = 64;
constexpr int64_t kMinElementsPerSplit = 4096;  // of a block per output
constexpr int64_t kMaxSplits = 65535;  // gridDim.y

// [O][R][I]: block (x = o * tiles + tile, y = split) combines rows [split * rows_per_split, ...)
// of columns tile * 32 .. + 31 of group o. One split: the outputs; several: split-major partial
// results in `partial`.
template <typename Reducer, typename T>
__global__ void ReduceColumnTilesKernel(int64_t outer, int64_t reduce_count, int64_t inner,
                                        int64_t rows_per_split, const T* in,
                                        typename Reducer::Acc* partial,
                                        typename Reducer::Out* out) {
  using Acc = typename Reducer::Acc;
  __shared__ Acc lanes[kRowLanes][kColumnTile];
  const int64_t tiles = (inner + kColumnTile - 1) / kColumnTile;
  const int64_t o = blockIdx.x / tiles;
  const int64_t i = (blockIdx.x % tiles) * kColumnTile + threadIdx.x;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * rows_per_split;
  const int64_t end = min(reduce_count, begin + rows_per_split);
  Acc acc = Reducer::Identity();
  if (i < inner) {
    const T* column = in + o * reduce_count * inner + i;
    for (int64_t r = begin + threadIdx.y; r < end; r += kRowLanes) {
      acc = Reducer::Combine(acc, Load<Reducer>(column[r * inner]));
    }
  }
  lanes[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || i >= inner) { return; }
  for (int lane = 1; lane < kRowLanes; ++lane) {
    acc = Reducer::Combine(acc, lanes[lane][threadIdx.x]);
  }
  const int64_t index = o * inner + i;
  if (partial != nullptr) {
    partial[static_cast<int64_t>(blockIdx.y) * outer * inner + index] = acc;
  } else {
    out[index] = Convert<typename Reducer::Out>(acc);
  }
}

// out[index] = the splits' partial results of `index`, combined in split order.
template <typename Reducer>
__global__ void CombineSplitsKernel(int64_t out_count, int64_t splits,
                                    const typename Reducer::Acc* partial,
                                    typename Reducer::Out* out) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       index < out_count; index += stride) {
    typename Reducer::Acc acc = partial[index];
    for (int64_t split = 1; split < splits; ++split) {
      acc = Reducer::Combine(acc, partial[split * out_count + index]);
    }
    out[index] = Convert<typename Reducer::Out>(acc);
  }
}

// The plan of one reduction, built once per kernel from the physical input
// shape.
class ReducePlan {
 public:
  ReducePlan() = default;
  ReducePlan(const Shape& input, const std::vector<int64_t>& axes) {
    Shape kept_shape = input;
    for (int64_t axis : axes) { kept_shape.Set(axis, 1); }
    out_count_ = kept_shape.elem_count();
    // Merged groups (reduced?, size), size-1 axes dropped.
    std::vector<std::pair<bool, int64_t>> groups;
    for (int64_t axis = 0; axis < input.num_axes(); ++axis) {
      if (input.At(axis) == 1) { continue; }
      const bool is_reduced = std::binary_search(axes.begin(), axes.end(), axis);
      if (!groups.empty() && groups.back().first == is_reduced) {
        groups.back().second *= input.At(axis);
      } else {
        groups.emplace_back(is_reduced, input.At(axis));
      }
    }
    // Strides of the groups in the input, and the kept / reduced index
    // descriptions.
    int64_t stride = 1;
    std::vector<int64_t> strides(groups.size());
    for (int64_t g = static_cast<int64_t>(groups.size()) - 1; g >= 0; --g) {
      strides[g] = stride;
      stride *= groups[g].second;
    }
    reduce_count_ = 1;
    for (size_t g = 0; g < groups.size(); ++g) {
      AxesIndex& index = groups[g].first ? reduced_ : kept_;
      OF_CHECK(index.dims < kMaxReduceDims)
          << "GPU reduction of " << input.ToString() << ": more than " << kMaxReduceDims
          << " alternating kept and reduced axis groups";
      index.sizes[index.dims] = groups[g].second;
      index.strides[index.dims] = strides[g];
      ++index.dims;
      if (groups[g].first) { reduce_count_ *= groups[g].second; }
    }
    // [O][R][I] with I > 1: the column kernel.
    const size_t n = groups.size();
    if (n >= 2 && !groups[n - 1].first && groups[n - 2].first &&
        (n == 2 || (n == 3 && !groups[0].first))) {
      columns_ = true;
      inner_ = groups[n - 1].second;
      outer_ = n == 3 ? groups[0].second : 1;
      blocks_ = outer_ * ((inner_ + kColumnTile - 1) / kColumnTile);
    } else {
      blocks_ = std::min<int64_t>(out_count_, kMaxBlocks * 4);
    }
    // Few outputs of many elements: the reduced elements are split among more blocks.
    const int64_t min_per_split = columns_ ? kMinRowsPerSplit : kMinElementsPerSplit;
    int64_t splits = (kColumnBlocksWanted + blocks_ - 1) / std::max<int64_t>(1, blocks_);
    splits = std::min({splits, std::max<int64_t>(1, reduce_count_ / min_per_split), kMaxSplits});
    per_split_ = (reduce_count_ + splits - 1) / splits;
    splits_ = per_split_ == 0 ? 1 : (reduce_count_ + per_split_ - 1) / per_split_;
  }

  // Scratch memory Run needs (the splits' partial results), 0 for none.
  template <typename Reducer>
  int64_t ScratchBytes() const {
    return splits_ > 1
               ? splits_ * out_count_ * static_cast<int64_t>(sizeof(typename Reducer::Acc))
               : 0;
  }

  // `scratch`: ScratchBytes<Reducer>() bytes of device memory (null when 0).
  template <typename Reducer, typename T>
  void Run(cudaStream_t stream, const T* in, typename Reducer::Out* out, void* scratch) const {
    if (out_count_ == 0) { return; }
    auto* partial = splits_ > 1 ? static_cast<typename Reducer::Acc*>(scratch) : nullptr;
    const dim3 blocks(static_cast<unsigned>(blocks_), static_cast<unsigned>(splits_));
    if (columns_) {
      ReduceColumnTilesKernel<Reducer, T><<<blocks, dim3(kColumnTile, kRowLanes), 0, stream>>>(
          outer_, reduce_count_, inner_, per_split_, in, partial, out);
    } else {
      ReduceByBlockKernel<Reducer, T><<<blocks, RowBlockSize(per_split_), 0, stream>>>(
          out_count_, reduce_count_, per_split_, kept_, reduced_, in, partial, out);
    }
    OF_CUDA_CHECK(cudaGetLastError());
    if (partial != nullptr) {
      CombineSplitsKernel<Reducer><<<BlockCount(out_count_), kBlockSize, 0, stream>>>(
          out_count_, splits_, partial, out);
      OF_CUDA_CHECK(cudaGetLastError());
    }
  }

 private:
  int64_t out_count_ = 0;
  int64_t reduce_count_ = 1;
  AxesIndex kept_, reduced_;
  bool columns_ = false;
  int64_t outer_ = 1, inner_ = 1;
  // Blocks along x (outputs, or column tiles) and y (splits of the reduced elements).
  int64_t blocks_ = 1, splits_ = 1, per_split_ = 1;
};

// Scratch memory of `plan` for `Reducer` from the device's workspace, or null.
template <typename Reducer>
void* PlanScratch(const ReducePlan& plan, CudaDeviceContext& device) {
  const int64_t bytes = plan.ScratchBytes<Reducer>();
  return bytes > 0 ? device.Workspace(bytes) : nullptr;
}

template <template <typename> class Reducer, typename T>
class ReduceGpuKernel final : public Kernel {
 public:
  explicit ReduceGpuKernel(const KernelInitContext& ctx) {
    const Shape& input = ctx.Desc("input_tensor").shape;
    plan_ =
        ReducePlan(input, NormalizeReduceAxes(ctx.conf().op_type(),
                                              Int64ListAttr(ctx.conf(), "axis"), input.num_axes()));
  }
  void Forward(KernelContext& ctx) override {
    plan_.Run<Reducer<T>>(ctx.cuda_device().cuda_stream(), ctx.Input("input_tensor").data<T>(),
                          ctx.Output("output_tensor").mut_data<typename Reducer<T>::Out>(),
                          PlanScratch<Reducer<T>>(plan_, ctx.cuda_device()));
  }

 private:
  ReducePlan plan_;
};

template <typename T>
class ReduceSumLikeGpuKernel final : public Kernel {
 public:
  explicit ReduceSumLikeGpuKernel(const KernelInitContext& ctx) {
    const Shape& x = ctx.Desc("x").shape;
    plan_ = ReducePlan(x, ReduceSumLikeAxes("reduce_sum_like", x, ctx.Desc("like").shape,
                                            Int64ListAttr(ctx.conf(), "axis")));
  }
  void Forward(KernelContext& ctx) override {
    plan_.Run<SumReducer<T>>(ctx.cuda_device().cuda_stream(), ctx.Input("x").data<T>(),
                             ctx.Output("y").mut_data<T>(),
                             PlanScratch<SumReducer<T>>(plan_, ctx.cuda_device()));
  }

 private:
  ReducePlan plan_;
};

template <typename T>
using ReduceSumKernel = ReduceGpuKernel<SumReducer, T>;
template <typename T>
using ReduceMaxKernel = ReduceGpuKernel<MaxReducer, T>;
template <typename T>
using ReduceMinKernel = ReduceGpuKernel<MinReducer, T>;
template <typename T>
using ReduceProdKernel = ReduceGpuKernel<ProdReducer, T>;
template <typename T>
using ReduceAnyKernel = ReduceGpuKernel<AnyReducer, T>;
template <typename T>
using ReduceAllKernel = ReduceGpuKernel<AllReducer, T>;

// dx = dy * (product of the group's other elements): product / x without zeros in the group,
// the product of the nonzeros at the group's only zero, 0 otherwise (as the CPU). The groups'
// statistics are a reduction into the workspace; the kept-shape offset of each x element comes
// from a broadcast plan of the kept shape to x.
template <typename T>
__global__ void ReduceProdGradKernel(int64_t n, BroadcastIndex index, const T* x,
                                     const ProductAndZeros* groups, const T* dy, T* dx) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t rest = i;
    int64_t out = 0;
    for (int d = index.num_dims - 1; d >= 0; --d) {
      out += (rest % index.out_dims[d]) * index.y_strides[d];
      rest /= index.out_dims[d];
    }
    const double value = static_cast<double>(x[i]);
    const ProductAndZeros group = groups[out];
    double others = 0.0;
    if (group.zeros == 0) {
      others = group.product / value;
    } else if (group.zeros == 1 && value == 0.0) {
      others = group.product;
    }
    dx[i] = static_cast<T>(others * static_cast<double>(dy[out]));
  }
}

template <typename T>
class ReduceProdGradGpuKernel final : public Kernel {
 public:
  explicit ReduceProdGradGpuKernel(const KernelInitContext& ctx) {
    const Shape& x = ctx.Desc("x").shape;
    const std::vector<int64_t> axes =
        NormalizeReduceAxes("reduce_prod_grad", Int64ListAttr(ctx.conf(), "axis"), x.num_axes());
    const Shape kept = ReduceShape(x, axes, true);
    group_count_ = kept.elem_count();
    plan_ = ReducePlan(x, axes);
    broadcast_ = BroadcastBinaryPlan(x, x, kept);
  }
  void Forward(KernelContext& ctx) override {
    const int64_t n = broadcast_.out_count();
    if (n == 0) { return; }
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    // [the groups' statistics][the reduction's scratch], one workspace.
    const int64_t group_bytes = group_count_ * static_cast<int64_t>(sizeof(ProductAndZeros));
    auto* groups = static_cast<ProductAndZeros*>(ctx.cuda_device().Workspace(
        group_bytes + plan_.ScratchBytes<NonzeroProductReducer<T>>()));
    const T* x = ctx.Input("x").data<T>();
    plan_.Run<NonzeroProductReducer<T>>(stream, x, groups, groups + group_count_);
    ReduceProdGradKernel<T><<<BlockCount(n), kBlockSize, 0, stream>>>(
        n, broadcast_.index(), x, groups, ctx.Input("dy").data<T>(),
        ctx.Output("dx").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t group_count_ = 0;
  ReducePlan plan_;
  BroadcastBinaryPlan broadcast_;
};

}  // namespace

REGISTER_KERNEL("reduce_prod_grad", "gpu", kFloat, ReduceProdGradGpuKernel<float>);
REGISTER_KERNEL("reduce_prod_grad", "gpu", kDouble, ReduceProdGradGpuKernel<double>);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("reduce_sum", ReduceSumKernel);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("reduce_sum_like", ReduceSumLikeGpuKernel);
// int8: the gradients of int8 broadcast ops, as on the CPU (sums wrap as int8 does).
REGISTER_KERNEL("reduce_sum_like", "gpu", kInt8, ReduceSumLikeGpuKernel<int8_t>);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("reduce_max", ReduceMaxKernel);
REGISTER_KERNEL("reduce_max", "gpu", kInt8, ReduceMaxKernel<int8_t>);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("reduce_min", ReduceMinKernel);
REGISTER_KERNEL("reduce_min", "gpu", kInt8, ReduceMinKernel<int8_t>);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("reduce_prod", ReduceProdKernel);
OF_REGISTER_GPU_ALL_TYPE_KERNELS("reduce_any", ReduceAnyKernel);
OF_REGISTER_GPU_ALL_TYPE_KERNELS("reduce_all", ReduceAllKernel);

}  // namespace cuda
}  // namespace oneflow
