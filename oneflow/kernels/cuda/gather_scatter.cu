// GPU gather, unsorted_segment_sum(_like), gather_nd, scatter_nd(_like) and
// tensor_scatter_nd_update, as the CPU kernels (cpu/gather.cpp, cpu/gather_nd.cpp).
//
// One thread per element of the moved rows; the row's source or target is computed from the
// indices on the device. Gathers and tensor_scatter_nd_update move bytes, so one kernel per
// element size serves every dtype. The sums (unsorted_segment_sum, scatter_nd) zero the output
// and add with atomics: float sums are therefore not bitwise deterministic (float16 adds in a
// float workspace and rounds once at the end). tensor_scatter_nd_update is deterministic:
// each target row records the last update row that addresses it (atomicMax), and only that
// row writes it, so a later duplicate wins as on the CPU.
//
// An index outside the logical shape raises a ValueError, as on the CPU, through the device's
// error report (index_check.h) once the work has completed (meanwhile its gathered row is zeros
// and its scattered row is dropped). Indices outside a device's part of a split gather axis give
// zeros / are dropped, as on the CPU (model-parallel partial sums).

#include <cuda_fp16.h>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/cuda/index_check.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {
namespace cuda {

namespace {

#define OF_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// The first row a device holds of axis `axis` of `argument` (0 unless split there).
int64_t PartBegin(const KernelInitContext& ctx, const std::string& argument, int64_t axis) {
  const SbpParallel sbp = ctx.Sbp(argument);
  if (!sbp.has_split_parallel() || sbp.split_parallel().axis() != axis) { return 0; }
  return SliceOfPart(ctx.LogicalDesc(argument).shape, sbp, ctx.parallel_context().parallel_id(),
                     ctx.parallel_context().parallel_num())
      .begin[axis];
}

// "<op_type> (op '<name>'): <what>", the prefix of a bad index's ValueError.
std::string CheckPrefix(const KernelInitContext& ctx, const std::string& what) {
  return ctx.conf().op_type() + " (op '" + ctx.conf().name() + "'): " + what;
}

__device__ __forceinline__ void AtomicAdd(float* target, float value) { atomicAdd(target, value); }
__device__ __forceinline__ void AtomicAdd(double* target, double value) {
  atomicAdd(target, value);
}
__device__ __forceinline__ void AtomicAdd(int32_t* target, int32_t value) {
  atomicAdd(reinterpret_cast<int*>(target), static_cast<int>(value));
}
// Two's complement: an unsigned add is a signed add.
__device__ __forceinline__ void AtomicAdd(int64_t* target, int64_t value) {
  atomicAdd(reinterpret_cast<unsigned long long*>(target), static_cast<unsigned long long>(value));
}

// The accumulator type of the sums: float for half, the type itself otherwise.
template <typename T>
using SumType = ComputeType<T>;

struct FloatToOutput {
  __device__ float operator()(float x) const { return x; }
};

// ---------------------------------------------------------------------------------------------
// gather and unsorted_segment_sum(_like)

// The params offset of element i of the gather output, or -1 when its index is outside the
// local rows [part_begin, part_begin + axis_dim).
template <typename Index>
__device__ __forceinline__ int64_t GatherSource(const GatherGeometry& g, int64_t part_begin,
                                                const Index* indices, int64_t i) {
  const int64_t row = i / g.inner;
  const int64_t column = i % g.inner;
  const int64_t outer = row / g.indices_per_batch;
  const int64_t position = row % g.indices_per_batch;
  const int64_t batch = outer / g.batch_outer;
  const int64_t local =
      static_cast<int64_t>(indices[batch * g.indices_per_batch + position]) - part_begin;
  if (local < 0 || local >= g.axis_dim) { return -1; }
  return (outer * g.axis_dim + local) * g.inner + column;
}

template <typename E, typename Index>
__global__ void GatherKernel(int64_t n, GatherGeometry g, int64_t part_begin, const Index* indices,
                             const E* in, E* out) {
  OF_GRID_STRIDE_LOOP(i, n) {
    const int64_t source = GatherSource(g, part_begin, indices, i);
    out[i] = source >= 0 ? in[source] : E(0);
  }
}

// E: an unsigned integer of the element's size.
template <typename E>
class GatherGpuKernel final : public Kernel {
 public:
  explicit GatherGpuKernel(const KernelInitContext& ctx) {
    int64_t axis = ctx.Attr<int64_t>("axis");
    const int64_t batch_dims = ctx.Attr<int64_t>("batch_dims");
    GatherShape("gather", ctx.Desc("in").shape, ctx.Desc("indices").shape, &axis, batch_dims);
    geometry_ =
        MakeGatherGeometry(ctx.Desc("in").shape, ctx.Desc("indices").shape, axis, batch_dims);
    part_begin_ = PartBegin(ctx, "in", axis);
    check_ = DeviceIndexCheck(CheckPrefix(ctx, "index"),
                              SingleLimit(ctx.LogicalDesc("in").shape.At(axis)));
  }

  void Forward(KernelContext& ctx) override {
    const Blob& indices = ctx.Input("indices");
    check_.Enqueue(ctx.cuda_device(), indices);
    const GatherGeometry& g = geometry_;
    const int64_t n = g.outer * g.indices_per_batch * g.inner;
    if (n == 0) { return; }
    const E* in = ctx.Input("in").data<E>();
    E* out = ctx.Output("out").mut_data<E>();
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    if (indices.data_type() == kInt32) {
      GatherKernel<E><<<BlockCount(n), kBlockSize, 0, stream>>>(n, g, part_begin_,
                                                                indices.data<int32_t>(), in, out);
    } else {
      GatherKernel<E><<<BlockCount(n), kBlockSize, 0, stream>>>(n, g, part_begin_,
                                                                indices.data<int64_t>(), in, out);
    }
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  GatherGeometry geometry_;
  int64_t part_begin_ = 0;
  DeviceIndexCheck check_;
};

// Adds element i of `data` into `out` at the row its segment id names (the inverse of the
// gather that reads `out` with the segment ids).
template <typename T, typename Acc, typename Index>
__global__ void SegmentSumKernel(int64_t n, GatherGeometry g, int64_t part_begin, const Index* ids,
                                 const T* data, Acc* out) {
  OF_GRID_STRIDE_LOOP(i, n) {
    const int64_t target = GatherSource(g, part_begin, ids, i);
    if (target >= 0) { AtomicAdd(out + target, Convert<Acc>(data[i])); }
  }
}

template <typename T>
class UnsortedSegmentSumGpuKernel final : public Kernel {
 public:
  explicit UnsortedSegmentSumGpuKernel(const KernelInitContext& ctx) {
    const Shape& out = ctx.Desc("out").shape;
    int64_t axis = ctx.Attr<int64_t>("axis");
    if (axis < 0) { axis += out.num_axes(); }
    const int64_t batch_dims = ctx.Attr<int64_t>("batch_dims");
    geometry_ = MakeGatherGeometry(out, ctx.Desc("segment_ids").shape, axis, batch_dims);
    out_count_ = out.elem_count();
    part_begin_ = PartBegin(ctx, "out", axis);
    check_ = DeviceIndexCheck(CheckPrefix(ctx, "segment id"),
                              SingleLimit(ctx.LogicalDesc("out").shape.At(axis)));
  }

  void Forward(KernelContext& ctx) override {
    using Acc = SumType<T>;
    check_.Enqueue(ctx.cuda_device(), ctx.Input("segment_ids"));
    if (out_count_ == 0) { return; }
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    T* out = ctx.Output("out").mut_data<T>();
    Acc* sums = std::is_same_v<T, Acc>
                    ? reinterpret_cast<Acc*>(out)
                    : static_cast<Acc*>(ctx.cuda_device().Workspace(out_count_ * sizeof(Acc)));
    OF_CUDA_CHECK(cudaMemsetAsync(sums, 0, out_count_ * sizeof(Acc), stream));
    const GatherGeometry& g = geometry_;
    const int64_t n = g.outer * g.indices_per_batch * g.inner;
    if (n > 0) {
      const Blob& ids = ctx.Input("segment_ids");
      const T* data = ctx.Input("data").data<T>();
      if (ids.data_type() == kInt32) {
        SegmentSumKernel<<<BlockCount(n), kBlockSize, 0, stream>>>(n, g, part_begin_,
                                                                   ids.data<int32_t>(), data, sums);
      } else {
        SegmentSumKernel<<<BlockCount(n), kBlockSize, 0, stream>>>(n, g, part_begin_,
                                                                   ids.data<int64_t>(), data, sums);
      }
      OF_CUDA_CHECK(cudaGetLastError());
    }
    if constexpr (!std::is_same_v<T, Acc>) {
      LaunchElementwise<float>(stream, out_count_, FloatToOutput(), out,
                               static_cast<const float*>(sums));
    }
  }

 private:
  GatherGeometry geometry_;
  int64_t out_count_ = 0;
  int64_t part_begin_ = 0;
  DeviceIndexCheck check_;
};

// ---------------------------------------------------------------------------------------------
// gather_nd, scatter_nd(_like), tensor_scatter_nd_update

constexpr int kMaxIndexDepth = 8;

// Index tuples of `depth` entries address rows of `inner` elements of a blob whose first
// `depth` dims are `dims`.
struct NdIndex {
  int depth = 0;
  int64_t dims[kMaxIndexDepth] = {};
  int64_t rows = 0;          // index tuples
  int64_t inner = 1;         // elements per addressed row
  int64_t indexed_rows = 1;  // prod(dims): rows of the indexed blob
};

NdIndex MakeNdIndex(const std::string& op_type, const Shape& shape, const Shape& indices) {
  NdIndex nd;
  const int64_t depth = indices.At(indices.num_axes() - 1);
  OF_CHECK(depth <= kMaxIndexDepth)
      << op_type << " on the GPU: index depth " << depth << " is more than " << kMaxIndexDepth;
  nd.depth = static_cast<int>(depth);
  for (int k = 0; k < nd.depth; ++k) {
    nd.dims[k] = shape.At(k);
    nd.indexed_rows *= shape.At(k);
  }
  nd.rows = indices.Count(0, indices.num_axes() - 1);
  nd.inner = shape.Count(depth, shape.num_axes());
  return nd;
}

// Each entry k of an index tuple must lie in [0, dims[k]).
DeviceIndexCheck NdIndexCheck(const KernelInitContext& ctx, const NdIndex& nd) {
  IndexLimits limits;
  limits.period = nd.depth;
  for (int k = 0; k < nd.depth; ++k) { limits.limits[k] = nd.dims[k]; }
  return DeviceIndexCheck(CheckPrefix(ctx, "index tuple entry"), limits);
}

// The row that index tuple `row` addresses, or -1 when an entry is out of range.
template <typename Index>
__device__ __forceinline__ int64_t NdRowOffset(const NdIndex& nd, const Index* indices,
                                               int64_t row) {
  int64_t offset = 0;
  for (int k = 0; k < nd.depth; ++k) {
    const int64_t value = static_cast<int64_t>(indices[row * nd.depth + k]);
    if (value < 0 || value >= nd.dims[k]) { return -1; }
    offset = offset * nd.dims[k] + value;
  }
  return offset;
}

template <typename E, typename Index>
__global__ void GatherNdKernel(int64_t n, NdIndex nd, const Index* indices, const E* params,
                               E* out) {
  OF_GRID_STRIDE_LOOP(i, n) {
    const int64_t offset = NdRowOffset(nd, indices, i / nd.inner);
    out[i] = offset >= 0 ? params[offset * nd.inner + i % nd.inner] : E(0);
  }
}

template <typename T, typename Index>
__global__ void ScatterNdAddKernel(int64_t n, NdIndex nd, const Index* indices, const T* updates,
                                   T* out) {
  OF_GRID_STRIDE_LOOP(i, n) {
    const int64_t offset = NdRowOffset(nd, indices, i / nd.inner);
    if (offset >= 0) { AtomicAdd(out + offset * nd.inner + i % nd.inner, updates[i]); }
  }
}

// winner[r]: the last index tuple that addresses row r (winner starts at -1).
template <typename Index>
__global__ void LastWriterKernel(NdIndex nd, const Index* indices, long long* winner) {
  OF_GRID_STRIDE_LOOP(row, nd.rows) {
    const int64_t offset = NdRowOffset(nd, indices, row);
    if (offset >= 0) { atomicMax(winner + offset, static_cast<long long>(row)); }
  }
}

template <typename E, typename Index>
__global__ void ScatterNdUpdateKernel(int64_t n, NdIndex nd, const Index* indices,
                                      const long long* winner, const E* updates, E* out) {
  OF_GRID_STRIDE_LOOP(i, n) {
    const int64_t row = i / nd.inner;
    const int64_t offset = NdRowOffset(nd, indices, row);
    if (offset >= 0 && winner[offset] == row) {
      out[offset * nd.inner + i % nd.inner] = updates[i];
    }
  }
}

// Calls launch(indices) with the indices blob's data as int32_t* or int64_t*.
template <typename Launch>
void WithIndices(const Blob& indices, Launch launch) {
  if (indices.data_type() == kInt32) {
    launch(indices.data<int32_t>());
  } else {
    launch(indices.data<int64_t>());
  }
  OF_CUDA_CHECK(cudaGetLastError());
}

template <typename E>
class GatherNdGpuKernel final : public Kernel {
 public:
  explicit GatherNdGpuKernel(const KernelInitContext& ctx)
      : nd_(MakeNdIndex("gather_nd", ctx.Desc("params").shape, ctx.Desc("indices").shape)),
        check_(NdIndexCheck(ctx, nd_)) {}

  void Forward(KernelContext& ctx) override {
    check_.Enqueue(ctx.cuda_device(), ctx.Input("indices"));
    const int64_t n = nd_.rows * nd_.inner;
    if (n == 0) { return; }
    const E* params = ctx.Input("params").data<E>();
    E* out = ctx.Output("out").mut_data<E>();
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    WithIndices(ctx.Input("indices"), [&](auto* indices) {
      GatherNdKernel<<<BlockCount(n), kBlockSize, 0, stream>>>(n, nd_, indices, params, out);
    });
  }

 private:
  NdIndex nd_;
  DeviceIndexCheck check_;
};

template <typename T>
class ScatterNdGpuKernel final : public Kernel {
 public:
  explicit ScatterNdGpuKernel(const KernelInitContext& ctx)
      : nd_(MakeNdIndex(ctx.conf().op_type(), ctx.Desc("out").shape, ctx.Desc("indices").shape)),
        out_count_(ctx.Desc("out").shape.elem_count()),
        check_(NdIndexCheck(ctx, nd_)) {}

  void Forward(KernelContext& ctx) override {
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    check_.Enqueue(ctx.cuda_device(), ctx.Input("indices"));
    T* out = ctx.Output("out").mut_data<T>();
    if (out_count_ == 0) { return; }
    OF_CUDA_CHECK(cudaMemsetAsync(out, 0, out_count_ * sizeof(T), stream));
    const int64_t n = nd_.rows * nd_.inner;
    if (n == 0) { return; }
    const T* updates = ctx.Input("updates").data<T>();
    WithIndices(ctx.Input("indices"), [&](auto* indices) {
      ScatterNdAddKernel<<<BlockCount(n), kBlockSize, 0, stream>>>(n, nd_, indices, updates, out);
    });
  }

 private:
  NdIndex nd_;
  int64_t out_count_;
  DeviceIndexCheck check_;
};

template <typename E>
class TensorScatterNdUpdateGpuKernel final : public Kernel {
 public:
  explicit TensorScatterNdUpdateGpuKernel(const KernelInitContext& ctx)
      : nd_(MakeNdIndex("tensor_scatter_nd_update", ctx.Desc("params").shape,
                        ctx.Desc("indices").shape)),
        out_count_(ctx.Desc("out").shape.elem_count()),
        check_(NdIndexCheck(ctx, nd_)) {}

  void Forward(KernelContext& ctx) override {
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    check_.Enqueue(ctx.cuda_device(), ctx.Input("indices"));
    const E* params = ctx.Input("params").data<E>();
    E* out = ctx.Output("out").mut_data<E>();
    if (out != params && out_count_ > 0) {
      OF_CUDA_CHECK(
          cudaMemcpyAsync(out, params, out_count_ * sizeof(E), cudaMemcpyDeviceToDevice, stream));
    }
    const int64_t n = nd_.rows * nd_.inner;
    if (n == 0) { return; }
    auto* winner =
        static_cast<long long*>(ctx.cuda_device().Workspace(nd_.indexed_rows * sizeof(long long)));
    // All bytes 0xff: every entry -1.
    OF_CUDA_CHECK(cudaMemsetAsync(winner, 0xff, nd_.indexed_rows * sizeof(long long), stream));
    const E* updates = ctx.Input("updates").data<E>();
    WithIndices(ctx.Input("indices"), [&](auto* indices) {
      LastWriterKernel<<<BlockCount(nd_.rows), kBlockSize, 0, stream>>>(nd_, indices, winner);
      ScatterNdUpdateKernel<<<BlockCount(n), kBlockSize, 0, stream>>>(n, nd_, indices, winner,
                                                                      updates, out);
    });
  }

 private:
  NdIndex nd_;
  int64_t out_count_;
  DeviceIndexCheck check_;
};

}  // namespace

// Byte movers: one kernel per element size.
#define OF_REGISTER_GPU_BYTE_KERNELS(op_type, KernelTemplate)          \
  REGISTER_KERNEL(op_type, "gpu", kFloat, KernelTemplate<uint32_t>);   \
  REGISTER_KERNEL(op_type, "gpu", kDouble, KernelTemplate<uint64_t>);  \
  REGISTER_KERNEL(op_type, "gpu", kFloat16, KernelTemplate<uint16_t>); \
  REGISTER_KERNEL(op_type, "gpu", kInt8, KernelTemplate<uint8_t>);     \
  REGISTER_KERNEL(op_type, "gpu", kInt32, KernelTemplate<uint32_t>);   \
  REGISTER_KERNEL(op_type, "gpu", kInt64, KernelTemplate<uint64_t>);   \
  REGISTER_KERNEL(op_type, "gpu", kUInt8, KernelTemplate<uint8_t>)

OF_REGISTER_GPU_BYTE_KERNELS("gather", GatherGpuKernel);
OF_REGISTER_GPU_BYTE_KERNELS("gather_nd", GatherNdGpuKernel);
OF_REGISTER_GPU_BYTE_KERNELS("tensor_scatter_nd_update", TensorScatterNdUpdateGpuKernel);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("unsorted_segment_sum", UnsortedSegmentSumGpuKernel);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("unsorted_segment_sum_like", UnsortedSegmentSumGpuKernel);
REGISTER_KERNEL("scatter_nd", "gpu", kFloat, ScatterNdGpuKernel<float>);
REGISTER_KERNEL("scatter_nd", "gpu", kDouble, ScatterNdGpuKernel<double>);
REGISTER_KERNEL("scatter_nd", "gpu", kInt32, ScatterNdGpuKernel<int32_t>);
REGISTER_KERNEL("scatter_nd", "gpu", kInt64, ScatterNdGpuKernel<int64_t>);
REGISTER_KERNEL("scatter_nd_like", "gpu", kFloat, ScatterNdGpuKernel<float>);
REGISTER_KERNEL("scatter_nd_like", "gpu", kDouble, ScatterNdGpuKernel<double>);
REGISTER_KERNEL("scatter_nd_like", "gpu", kInt32, ScatterNdGpuKernel<int32_t>);
REGISTER_KERNEL("scatter_nd_like", "gpu", kInt64, ScatterNdGpuKernel<int64_t>);

}  // namespace cuda
}  // namespace oneflow
