// GPU tril, fused_scale_tril, where, clip_by_scalar, clip_by_scalar_grad, prelu, prelu_grad,
// range and assign, as the CPU kernels (cpu/tril.cpp, cpu/where.cpp, cpu/one_hot_and_clip.cpp,
// cpu/prelu.cpp, cpu/range.cpp, cpu/assign.cpp).
//
// tril: one thread per element; a device holding part of a split row or column axis offsets its
// indices by its part's first row / column, as on the CPU. where: one thread per output
// element, the three inputs' offsets from a broadcast plan (size-1 output axes dropped,
// neighbours with the same broadcast pattern merged); x and y are moved as bytes. The clips are
// functors of the elementwise launcher (NaN passes through, as on the CPU); prelu is a functor of
// the broadcast launcher (alpha broadcast to x), prelu_grad reads alpha through the same plan.
//
// range: one thread per element, out[i] = start + (offset + i) * delta with offset the first
// index of this device's part (split) as on the CPU: integer dtypes in int64 arithmetic (done
// in uint64 so that it wraps as the CPU's does), floating ones in double with the multiply and
// the add rounded separately (__dmul_rn, __dadd_rn: never fused into an FMA, which the CPU
// build does not do either), then converted to the dtype. assign: one device-to-device copy of
// value over ref on the stream (none when they share memory or are empty).

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/broadcast.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {
namespace cuda {

namespace {

#define OF_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// A double attribute as T (half through float).
template <typename T>
T FromDouble(double value) {
  if constexpr (std::is_same_v<T, half>) {
    return __float2half(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

// ---------------------------------------------------------------------------------------------
// tril, fused_scale_tril

// The first index this device holds on axis `axis` of "in" (0 unless split there).
int64_t PartBegin(const KernelInitContext& ctx, int64_t axis) {
  const SbpParallel sbp = ctx.Sbp("in");
  if (!sbp.has_split_parallel() || sbp.split_parallel().axis() != axis) { return 0; }
  return SliceOfPart(ctx.LogicalDesc("in").shape, sbp, ctx.parallel_context().parallel_id(),
                     ctx.parallel_context().parallel_num())
      .begin[axis];
}

struct TrilGeometry {
  int64_t rows = 1, columns = 1, first_row = 0, shift = 0;  // kept columns: row + shift
};

template <typename T>
__global__ void TrilKernel(int64_t n, TrilGeometry g, bool scaled, ComputeType<T> scale, T fill,
                           const T* in, T* out) {
  using C = ComputeType<T>;
  OF_GRID_STRIDE_LOOP(i, n) {
    const int64_t row = (i / g.columns) % g.rows + g.first_row;
    const int64_t keep = min(max(row + g.shift, int64_t{0}), g.columns);
    if (i % g.columns >= keep) {
      out[i] = fill;
    } else {
      out[i] = scaled ? Convert<T>(Convert<C>(in[i]) * scale) : in[i];
    }
  }
}

template <typename T>
class TrilGpuKernel final : public Kernel {
 public:
  explicit TrilGpuKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("in").shape;
    const int64_t axes = shape.num_axes();
    count_ = shape.elem_count();
    geometry_.rows = std::max<int64_t>(1, shape.At(axes - 2));
    geometry_.columns = std::max<int64_t>(1, shape.At(axes - 1));
    const Shape& logical = ctx.LogicalDesc("in").shape;
    // Beyond +-(rows + columns) every diagonal keeps all or nothing; clamping avoids overflow.
    const int64_t bound = logical.At(axes - 2) + logical.At(axes - 1);
    const int64_t diagonal = std::clamp<int64_t>(ctx.Attr<int64_t>("diagonal"), -bound, bound);
    geometry_.first_row = PartBegin(ctx, axes - 2);
    geometry_.shift = diagonal - PartBegin(ctx, axes - 1) + 1;
    fill_ = FromDouble<T>(ctx.Attr<double>("fill_value"));
    const double scale = ctx.conf().attr().count("scale") ? ctx.Attr<double>("scale") : 1.0;
    scale_ = static_cast<ComputeType<T>>(scale);
    // The CPU scales when the scale, as T, is not 1 (float16: as float).
    scaled_ = scale_ != static_cast<ComputeType<T>>(1);
  }

  void Forward(KernelContext& ctx) override {
    if (count_ == 0) { return; }
    TrilKernel<T><<<BlockCount(count_), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        count_, geometry_, scaled_, scale_, fill_, ctx.Input("in").data<T>(),
        ctx.Output("out").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t count_ = 0;
  TrilGeometry geometry_;
  bool scaled_ = false;
  ComputeType<T> scale_{};
  T fill_{};
};

// ---------------------------------------------------------------------------------------------
// where

constexpr int kMaxWhereDims = 8;

struct WhereIndex {
  int num_dims = 0;
  int64_t out_dims[kMaxWhereDims] = {};
  int64_t strides[3][kMaxWhereDims] = {};  // condition, x, y; 0 where broadcast
};

WhereIndex MakeWhereIndex(const Shape& out, const std::vector<Shape>& inputs) {
  struct Axis {
    int64_t size;
    bool broadcast[3];
  };
  std::vector<Axis> axes;
  const int64_t rank = out.num_axes();
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t size = out.At(axis);
    if (size == 1) { continue; }
    Axis current{size, {}};
    for (int k = 0; k < 3; ++k) {
      const int64_t input_axis = axis - (rank - inputs[k].num_axes());
      current.broadcast[k] = input_axis < 0 || inputs[k].At(input_axis) == 1;
    }
    if (!axes.empty() &&
        std::equal(current.broadcast, current.broadcast + 3, axes.back().broadcast)) {
      axes.back().size *= size;
    } else {
      axes.push_back(current);
    }
  }
  OF_CHECK(static_cast<int64_t>(axes.size()) <= kMaxWhereDims)
      << "GPU where to " << out.ToString() << ": more than " << kMaxWhereDims
      << " axes after merging";
  WhereIndex index;
  index.num_dims = static_cast<int>(axes.size());
  int64_t strides[3] = {1, 1, 1};
  for (int64_t d = static_cast<int64_t>(axes.size()) - 1; d >= 0; --d) {
    index.out_dims[d] = axes[d].size;
    for (int k = 0; k < 3; ++k) {
      index.strides[k][d] = axes[d].broadcast[k] ? 0 : strides[k];
      if (!axes[d].broadcast[k]) { strides[k] *= axes[d].size; }
    }
  }
  return index;
}

template <typename Condition, typename E>
__global__ void WhereKernel(int64_t n, WhereIndex index, const Condition* condition, const E* x,
                            const E* y, E* out) {
  OF_GRID_STRIDE_LOOP(i, n) {
    int64_t rest = i;
    int64_t offsets[3] = {0, 0, 0};
    for (int d = index.num_dims - 1; d >= 0; --d) {
      const int64_t coordinate = rest % index.out_dims[d];
      rest /= index.out_dims[d];
      for (int k = 0; k < 3; ++k) { offsets[k] += coordinate * index.strides[k][d]; }
    }
    out[i] = condition[offsets[0]] != 0 ? x[offsets[1]] : y[offsets[2]];
  }
}

// E: an unsigned integer of the element's size.
template <typename E>
class WhereGpuKernel final : public Kernel {
 public:
  explicit WhereGpuKernel(const KernelInitContext& ctx)
      : condition_type_(ctx.Desc("condition").data_type),
        count_(ctx.Desc("out").shape.elem_count()),
        index_(MakeWhereIndex(ctx.Desc("out").shape, {ctx.Desc("condition").shape,
                                                      ctx.Desc("x").shape, ctx.Desc("y").shape})) {}

  void Forward(KernelContext& ctx) override {
    if (count_ == 0) { return; }
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    const Blob& condition = ctx.Input("condition");
    const E* x = static_cast<const E*>(ctx.Input("x").raw());
    const E* y = static_cast<const E*>(ctx.Input("y").raw());
    E* out = static_cast<E*>(ctx.Output("out").mut_raw());
    switch (condition_type_) {
      case kInt8:
        WhereKernel<<<BlockCount(count_), kBlockSize, 0, stream>>>(
            count_, index_, condition.data<int8_t>(), x, y, out);
        break;
      case kInt32:
        WhereKernel<<<BlockCount(count_), kBlockSize, 0, stream>>>(
            count_, index_, condition.data<int32_t>(), x, y, out);
        break;
      default:
        WhereKernel<<<BlockCount(count_), kBlockSize, 0, stream>>>(
            count_, index_, condition.data<int64_t>(), x, y, out);
        break;
    }
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  DataType condition_type_;
  int64_t count_;
  WhereIndex index_;
};

// ---------------------------------------------------------------------------------------------
// clip_by_scalar, clip_by_scalar_grad

template <typename T>
struct ClipBounds {
  explicit ClipBounds(const KernelInitContext& ctx)
      : has_min(ctx.Attr<bool>("has_min")), has_max(ctx.Attr<bool>("has_max")) {
    if constexpr (std::is_floating_point_v<T>) {
      min = static_cast<T>(ctx.Attr<double>("floating_min"));
      max = static_cast<T>(ctx.Attr<double>("floating_max"));
    } else {
      min = static_cast<T>(ctx.Attr<int64_t>("integral_min"));
      max = static_cast<T>(ctx.Attr<int64_t>("integral_max"));
    }
  }
  bool has_min, has_max;
  T min{}, max{};
};

template <typename T>
struct ClipFunctor {
  ClipBounds<T> b;
  __device__ T operator()(T value) const {
    if (b.has_min && value < b.min) { value = b.min; }
    if (b.has_max && value > b.max) { value = b.max; }
    return value;
  }
};

template <typename T>
struct ClipGradFunctor {
  ClipBounds<T> b;
  __device__ T operator()(T x, T dy) const {
    const bool clipped = (b.has_min && x < b.min) || (b.has_max && x > b.max);
    return clipped ? T(0) : dy;
  }
};

// float16 clips in float (its compute type), with float bounds, and rounds once.
template <typename T>
class ClipGpuKernel final : public Kernel {
 public:
  explicit ClipGpuKernel(const KernelInitContext& ctx) : bounds_(ctx) {}
  void Forward(KernelContext& ctx) override {
    LaunchElementwise<ComputeType<T>>(ctx.cuda_device().cuda_stream(),
                                      ctx.Input("x").elem_count(),
                                      ClipFunctor<ComputeType<T>>{bounds_},
                                      ctx.Output("y").mut_data<T>(), ctx.Input("x").data<T>());
  }

 private:
  ClipBounds<ComputeType<T>> bounds_;
};

template <typename T>
class ClipGradGpuKernel final : public Kernel {
 public:
  explicit ClipGradGpuKernel(const KernelInitContext& ctx) : bounds_(ctx) {}
  void Forward(KernelContext& ctx) override {
    LaunchElementwise<ComputeType<T>>(
        ctx.cuda_device().cuda_stream(), ctx.Input("x").elem_count(),
        ClipGradFunctor<ComputeType<T>>{bounds_}, ctx.Output("dx").mut_data<T>(),
        ctx.Input("x").data<T>(), ctx.Input("dy").data<T>());
  }

 private:
  ClipBounds<ComputeType<T>> bounds_;
};

// ---------------------------------------------------------------------------------------------
// prelu, prelu_grad

template <typename C>
struct PreluFunctor {
  __device__ C operator()(C x, C alpha) const { return x > C(0) ? x : alpha * x; }
};

template <typename T>
class PreluGpuKernel final : public Kernel {
 public:
  explicit PreluGpuKernel(const KernelInitContext& ctx)
      : plan_(ctx.Desc("x").shape, ctx.Desc("x").shape, ctx.Desc("alpha").shape) {}
  void Forward(KernelContext& ctx) override {
    LaunchBroadcastBinary<ComputeType<T>>(
        ctx.cuda_device().cuda_stream(), plan_, PreluFunctor<ComputeType<T>>(),
        ctx.Output("y").mut_data<T>(), ctx.Input("x").data<T>(), ctx.Input("alpha").data<T>());
  }

 private:
  BroadcastBinaryPlan plan_;
};

// dx = x > 0 ? dy : alpha dy; alpha's offset from the plan's second operand strides.
template <typename T>
__global__ void PreluGradKernel(int64_t n, BroadcastIndex index, const T* x, const T* alpha,
                                const T* dy, T* dx) {
  using C = ComputeType<T>;
  OF_GRID_STRIDE_LOOP(i, n) {
    int64_t rest = i;
    int64_t alpha_offset = 0;
    for (int d = index.num_dims - 1; d >= 0; --d) {
      alpha_offset += (rest % index.out_dims[d]) * index.y_strides[d];
      rest /= index.out_dims[d];
    }
    const C dy_value = Convert<C>(dy[i]);
    dx[i] =
        Convert<T>(Convert<C>(x[i]) > C(0) ? dy_value : Convert<C>(alpha[alpha_offset]) * dy_value);
  }
}

template <typename T>
class PreluGradGpuKernel final : public Kernel {
 public:
  explicit PreluGradGpuKernel(const KernelInitContext& ctx)
      : plan_(ctx.Desc("x").shape, ctx.Desc("x").shape, ctx.Desc("alpha").shape) {}
  void Forward(KernelContext& ctx) override {
    const int64_t n = plan_.out_count();
    if (n == 0) { return; }
    PreluGradKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, plan_.index(), ctx.Input("x").data<T>(), ctx.Input("alpha").data<T>(),
        ctx.Input("dy").data<T>(), ctx.Output("dx").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  BroadcastBinaryPlan plan_;
};

// ---------------------------------------------------------------------------------------------
// range, assign

template <typename T>
__global__ void RangeKernel(int64_t n, int64_t offset, int64_t integer_start, int64_t integer_delta,
                            double start, double delta, T* out) {
  OF_GRID_STRIDE_LOOP(i, n) {
    if constexpr (std::is_integral_v<T>) {
      const uint64_t value =
          static_cast<uint64_t>(integer_start) +
          static_cast<uint64_t>(offset + i) * static_cast<uint64_t>(integer_delta);
      out[i] = static_cast<T>(static_cast<int64_t>(value));
    } else {
      out[i] = static_cast<T>(__dadd_rn(start, __dmul_rn(static_cast<double>(offset + i), delta)));
    }
  }
}

template <typename T>
class RangeGpuKernel final : public Kernel {
 public:
  explicit RangeGpuKernel(const KernelInitContext& ctx)
      : integer_start_(ctx.Attr<int64_t>("integer_start")),
        integer_delta_(ctx.Attr<int64_t>("integer_delta")),
        start_(ctx.Attr<double>("start")),
        delta_(ctx.Attr<double>("delta")) {
    const SbpParallel sbp = ctx.Sbp("out");
    const Shape& logical = ctx.LogicalDesc("out").shape;
    if (sbp.has_split_parallel() && ctx.Desc("out").shape != logical) {
      offset_ = SliceOfPart(logical, sbp, ctx.parallel_context().parallel_id(),
                            ctx.parallel_context().parallel_num())
                    .begin[0];
    }
  }

  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    const int64_t n = out.elem_count();
    if (n == 0) { return; }
    RangeKernel<T><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, offset_, integer_start_, integer_delta_, start_, delta_, out.mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t integer_start_, integer_delta_;
  double start_, delta_;
  int64_t offset_ = 0;
};

class AssignGpuKernel final : public Kernel {
 public:
  explicit AssignGpuKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    const Blob& value = ctx.Input("value");
    Blob& ref = ctx.MutableInput("ref");
    if (value.raw() != ref.raw() && value.byte_size() > 0) {
      OF_CUDA_CHECK(cudaMemcpyAsync(ref.mut_raw(), value.raw(), value.byte_size(),
                                    cudaMemcpyDeviceToDevice, ctx.cuda_device().cuda_stream()));
    }
  }
};

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("prelu", PreluGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("prelu_grad", PreluGradGpuKernel);
OF_REGISTER_GPU_ALL_TYPE_KERNELS("tril", TrilGpuKernel);
OF_REGISTER_GPU_ALL_TYPE_KERNELS("fused_scale_tril", TrilGpuKernel);
REGISTER_KERNEL("where", "gpu", kFloat, WhereGpuKernel<uint32_t>);
REGISTER_KERNEL("where", "gpu", kDouble, WhereGpuKernel<uint64_t>);
REGISTER_KERNEL("where", "gpu", kFloat16, WhereGpuKernel<uint16_t>);
REGISTER_KERNEL("where", "gpu", kInt8, WhereGpuKernel<uint8_t>);
REGISTER_KERNEL("where", "gpu", kInt32, WhereGpuKernel<uint32_t>);
REGISTER_KERNEL("where", "gpu", kInt64, WhereGpuKernel<uint64_t>);
REGISTER_KERNEL("clip_by_scalar", "gpu", kFloat, ClipGpuKernel<float>);
REGISTER_KERNEL("clip_by_scalar", "gpu", kDouble, ClipGpuKernel<double>);
REGISTER_KERNEL("clip_by_scalar", "gpu", kInt8, ClipGpuKernel<int8_t>);
REGISTER_KERNEL("clip_by_scalar", "gpu", kInt32, ClipGpuKernel<int32_t>);
REGISTER_KERNEL("clip_by_scalar", "gpu", kInt64, ClipGpuKernel<int64_t>);
REGISTER_KERNEL("clip_by_scalar_grad", "gpu", kFloat, ClipGradGpuKernel<float>);
REGISTER_KERNEL("clip_by_scalar_grad", "gpu", kDouble, ClipGradGpuKernel<double>);
REGISTER_KERNEL("clip_by_scalar_grad", "gpu", kInt8, ClipGradGpuKernel<int8_t>);
REGISTER_KERNEL("clip_by_scalar_grad", "gpu", kInt32, ClipGradGpuKernel<int32_t>);
REGISTER_KERNEL("clip_by_scalar_grad", "gpu", kInt64, ClipGradGpuKernel<int64_t>);
REGISTER_KERNEL("clip_by_scalar", "gpu", kFloat16, ClipGpuKernel<half>);
REGISTER_KERNEL("clip_by_scalar_grad", "gpu", kFloat16, ClipGradGpuKernel<half>);
// The dtypes the op (and the CPU kernel) take.
REGISTER_KERNEL("range", "gpu", kFloat, RangeGpuKernel<float>);
REGISTER_KERNEL("range", "gpu", kDouble, RangeGpuKernel<double>);
REGISTER_KERNEL("range", "gpu", kInt8, RangeGpuKernel<int8_t>);
REGISTER_KERNEL("range", "gpu", kInt32, RangeGpuKernel<int32_t>);
REGISTER_KERNEL("range", "gpu", kInt64, RangeGpuKernel<int64_t>);
REGISTER_KERNEL("range", "gpu", kUInt8, RangeGpuKernel<uint8_t>);
// The CPU kernel's dtypes, and float16 (variables updated on the GPU may hold it): a byte copy.
REGISTER_KERNEL("assign", "gpu", kFloat, AssignGpuKernel);
REGISTER_KERNEL("assign", "gpu", kDouble, AssignGpuKernel);
REGISTER_KERNEL("assign", "gpu", kFloat16, AssignGpuKernel);
REGISTER_KERNEL("assign", "gpu", kInt8, AssignGpuKernel);
REGISTER_KERNEL("assign", "gpu", kInt32, AssignGpuKernel);
REGISTER_KERNEL("assign", "gpu", kInt64, AssignGpuKernel);
REGISTER_KERNEL("assign", "gpu", kUInt8, AssignGpuKernel);

}  // namespace cuda
}  // namespace oneflow
