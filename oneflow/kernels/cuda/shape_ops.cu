// GPU slice, slice_update, concat, split_like, pad, reflection_pad2d, replication_pad2d and the 2-d
// pads' gradients, as the CPU kernels (cpu/slice.cpp, cpu/pad.cpp).
//
// slice, slice_update, concat and pad are one device strided copy (planned once per kernel
// with the CPU's StridedView geometry: size-1 axes dropped, axes contiguous in both views
// merged, at most 8 left), plus a device copy of x (slice_update) or a fill with the constant
// (pad). They move bytes, so one kernel per element size serves every dtype.
//
// The 2-d pads run one thread per output element. Their gradients add each dy element onto its
// source with atomics (a source element receives several padded ones), so float sums are not
// bitwise deterministic; float16 adds in a float workspace and rounds once.

#include <cuda_fp16.h>

#include <cstring>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/strided_copy.h"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

constexpr int kMaxCopyDims = 8;

// A copy of elem_count elements between two strided views of device buffers.
struct CopyPlan {
  int num_dims = 0;
  int64_t dims[kMaxCopyDims] = {};
  int64_t src_strides[kMaxCopyDims] = {};
  int64_t dst_strides[kMaxCopyDims] = {};
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  int64_t elem_count = 0;
};

CopyPlan MakeCopyPlan(const std::string& op_type, const std::vector<int64_t>& dims,
                      const StridedView& src, const StridedView& dst) {
  CopyPlan plan;
  plan.src_offset = src.offset;
  plan.dst_offset = dst.offset;
  plan.elem_count = 1;
  for (int64_t dim : dims) { plan.elem_count *= dim; }
  if (plan.elem_count == 0) { return plan; }
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] == 1) { continue; }
    const int last = plan.num_dims - 1;
    // Merge with the previous kept axis when both views step over it contiguously.
    if (last >= 0 && plan.src_strides[last] == src.strides[axis] * dims[axis] &&
        plan.dst_strides[last] == dst.strides[axis] * dims[axis]) {
      plan.dims[last] *= dims[axis];
      plan.src_strides[last] = src.strides[axis];
      plan.dst_strides[last] = dst.strides[axis];
      continue;
    }
    OF_CHECK(plan.num_dims < kMaxCopyDims)
        << op_type << " on the GPU: more than " << kMaxCopyDims << " axes left after merging";
    plan.dims[plan.num_dims] = dims[axis];
    plan.src_strides[plan.num_dims] = src.strides[axis];
    plan.dst_strides[plan.num_dims] = dst.strides[axis];
    ++plan.num_dims;
  }
  return plan;  // num_dims 0: a single element
}

template <typename E>
__global__ void StridedCopyKernel(CopyPlan plan, const E* src, E* dst) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < plan.elem_count;
       i += stride) {
    int64_t rest = i;
    int64_t src_offset = plan.src_offset;
    int64_t dst_offset = plan.dst_offset;
    for (int d = plan.num_dims - 1; d >= 0; --d) {
      const int64_t index = rest % plan.dims[d];
      rest /= plan.dims[d];
      src_offset += index * plan.src_strides[d];
      dst_offset += index * plan.dst_strides[d];
    }
    dst[dst_offset] = src[src_offset];
  }
}

template <int kBytes>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> {
  using type = uint8_t;
};
template <>
struct UnsignedOfSize<2> {
  using type = uint16_t;
};
template <>
struct UnsignedOfSize<4> {
  using type = uint32_t;
};
template <>
struct UnsignedOfSize<8> {
  using type = uint64_t;
};

template <int kBytes>
void LaunchCopyOfSize(cudaStream_t stream, const CopyPlan& plan, const void* src, void* dst) {
  using E = typename UnsignedOfSize<kBytes>::type;
  StridedCopyKernel<E><<<BlockCount(plan.elem_count), kBlockSize, 0, stream>>>(
      plan, static_cast<const E*>(src), static_cast<E*>(dst));
}

void LaunchStridedCopy(cudaStream_t stream, const CopyPlan& plan, int64_t element_size,
                       const void* src, void* dst) {
  if (plan.elem_count == 0) { return; }
  switch (element_size) {
    case 1:
      LaunchCopyOfSize<1>(stream, plan, src, dst);
      break;
    case 2:
      LaunchCopyOfSize<2>(stream, plan, src, dst);
      break;
    case 4:
      LaunchCopyOfSize<4>(stream, plan, src, dst);
      break;
    default:
      LaunchCopyOfSize<8>(stream, plan, src, dst);
      break;
  }
  OF_CUDA_CHECK(cudaGetLastError());
}

// The view of x that slice `spec` reads (as cpu/slice.cpp).
StridedView SliceView(const Shape& x, const SliceSpec& spec) {
  StridedView view;
  std::vector<int64_t> strides = ContiguousStrides(x.dims());
  for (int64_t axis = 0; axis < x.num_axes(); ++axis) {
    view.offset += spec.start[axis] * strides[axis];
    view.strides.push_back(strides[axis] * spec.step[axis]);
  }
  return view;
}

// The slice of the physical part: an axis split over devices is kept whole by the slice, so
// its slice is the whole part (as cpu/slice.cpp).
SliceSpec PhysicalSpec(const KernelInitContext& ctx, const Shape& x) {
  SliceSpec spec{Int64ListAttr(ctx.conf(), "start"), Int64ListAttr(ctx.conf(), "stop"),
                 Int64ListAttr(ctx.conf(), "step")};
  for (int64_t axis = 0; axis < x.num_axes(); ++axis) {
    if (spec.step[axis] == 1 && spec.start[axis] == 0 &&
        spec.stop[axis] == ctx.LogicalDesc("x").shape.At(axis)) {
      spec.stop[axis] = x.At(axis);
    }
  }
  return ClampToRunShape(spec, ctx.Desc("x"));
}

class SliceGpuKernel final : public Kernel {
 public:
  explicit SliceGpuKernel(const KernelInitContext& ctx) {
    const BlobDesc& x = ctx.Desc("x");
    const SliceSpec spec = PhysicalSpec(ctx, x.shape);
    element_size_ = SizeOf(x.data_type);
    plan_ = MakeCopyPlan("slice", SlicedDims("slice", x.shape, spec), SliceView(x.shape, spec),
                         ContiguousView(ctx.Desc("y").shape.dims()));
  }
  void Forward(KernelContext& ctx) override {
    LaunchStridedCopy(ctx.cuda_device().cuda_stream(), plan_, element_size_, ctx.Input("x").raw(),
                      ctx.Output("y").mut_raw());
  }

 private:
  int64_t element_size_ = 0;
  CopyPlan plan_;
};

class SliceUpdateGpuKernel final : public Kernel {
 public:
  explicit SliceUpdateGpuKernel(const KernelInitContext& ctx) {
    const BlobDesc& x = ctx.Desc("x");
    const SliceSpec spec = PhysicalSpec(ctx, x.shape);
    element_size_ = SizeOf(x.data_type);
    bytes_ = x.byte_size();
    plan_ = MakeCopyPlan("slice_update", SlicedDims("slice_update", x.shape, spec),
                         ContiguousView(ctx.Desc("update").shape.dims()), SliceView(x.shape, spec));
  }
  void Forward(KernelContext& ctx) override {
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    void* y = ctx.Output("y").mut_raw();
    const void* x = ctx.Input("x").raw();
    if (y != x && bytes_ > 0) {
      OF_CUDA_CHECK(cudaMemcpyAsync(y, x, bytes_, cudaMemcpyDeviceToDevice, stream));
    }
    LaunchStridedCopy(stream, plan_, element_size_, ctx.Input("update").raw(), y);
  }

 private:
  int64_t element_size_ = 0;
  int64_t bytes_ = 0;
  CopyPlan plan_;
};

// Input i is copied into out[..., offset_i : offset_i + dim_i, ...].
class ConcatGpuKernel final : public Kernel {
 public:
  explicit ConcatGpuKernel(const KernelInitContext& ctx) {
    const Shape& out = ctx.Desc("out").shape;
    const int64_t axis = NormalizeAxis("concat", "axis", ctx.Attr<int64_t>("axis"), out.num_axes());
    element_size_ = SizeOf(ctx.Desc("out").data_type);
    const std::vector<int64_t> out_strides = ContiguousStrides(out.dims());
    int64_t offset = 0;
    for (int64_t index = 0; ctx.Has("in", index); ++index) {
      const Shape& in = ctx.Desc("in", index).shape;
      plans_.push_back(MakeCopyPlan("concat", in.dims(), ContiguousView(in.dims()),
                                    StridedView{offset * out_strides[axis], out_strides}));
      offset += in.At(axis);
    }
  }
  void Forward(KernelContext& ctx) override {
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    void* out = ctx.Output("out").mut_raw();
    for (size_t index = 0; index < plans_.size(); ++index) {
      LaunchStridedCopy(stream, plans_[index], element_size_, ctx.Input("in", index).raw(), out);
    }
  }

 private:
  int64_t element_size_ = 0;
  std::vector<CopyPlan> plans_;
};

// Output i is in[..., offset_i : offset_i + dim_i, ...].
class SplitLikeGpuKernel final : public Kernel {
 public:
  explicit SplitLikeGpuKernel(const KernelInitContext& ctx) {
    const Shape& in = ctx.Desc("in").shape;
    const int64_t axis =
        NormalizeAxis("split_like", "axis", ctx.Attr<int64_t>("axis"), in.num_axes());
    element_size_ = SizeOf(ctx.Desc("in").data_type);
    const std::vector<int64_t> in_strides = ContiguousStrides(in.dims());
    int64_t offset = 0;
    for (int64_t index = 0; ctx.Has("out", index); ++index) {
      const Shape& out = ctx.Desc("out", index).shape;
      plans_.push_back(MakeCopyPlan("split_like", out.dims(),
                                    StridedView{offset * in_strides[axis], in_strides},
                                    ContiguousView(out.dims())));
      offset += out.At(axis);
    }
  }
  void Forward(KernelContext& ctx) override {
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    const void* in = ctx.Input("in").raw();
    for (size_t index = 0; index < plans_.size(); ++index) {
      LaunchStridedCopy(stream, plans_[index], element_size_, in,
                        ctx.Output("out", index).mut_raw());
    }
  }

 private:
  int64_t element_size_ = 0;
  std::vector<CopyPlan> plans_;
};

// y is filled with the constant, then x is copied into y[before : before + x.dims].
template <typename T>
class PadGpuKernel final : public Kernel {
  using E = typename UnsignedOfSize<sizeof(T)>::type;

 public:
  explicit PadGpuKernel(const KernelInitContext& ctx) {
    const Shape& x = ctx.Desc("x").shape;
    const Shape& y = ctx.Desc("y").shape;
    const std::vector<int64_t> before = Int64ListAttr(ctx.conf(), "padding_before");
    T value;
    if constexpr (std::is_same_v<T, half>) {
      value = __float2half(static_cast<float>(ctx.Attr<double>("floating_constant_value")));
    } else if constexpr (std::is_floating_point_v<T>) {
      value = static_cast<T>(ctx.Attr<double>("floating_constant_value"));
    } else {
      value = static_cast<T>(ctx.Attr<int64_t>("integral_constant_value"));
    }
    std::memcpy(&value_, &value, sizeof(T));
    y_count_ = y.elem_count();
    StridedView into_y = ContiguousView(y.dims());
    for (int64_t axis = 0; axis < y.num_axes(); ++axis) {
      into_y.offset += before[axis] * into_y.strides[axis];
    }
    plan_ = MakeCopyPlan("pad", x.dims(), ContiguousView(x.dims()), into_y);
  }
  void Forward(KernelContext& ctx) override {
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    E* y = static_cast<E*>(ctx.Output("y").mut_raw());
    if (plan_.elem_count < y_count_) { LaunchFill<E>(stream, y_count_, value_, y); }
    LaunchStridedCopy(stream, plan_, sizeof(E), ctx.Input("x").raw(), y);
  }

 private:
  E value_;
  int64_t y_count_ = 0;
  CopyPlan plan_;
};

// Source index in [0, size) of padded position `index` (may be < 0 or >= size).
struct Reflect {
  __device__ static int64_t Source(int64_t index, int64_t size) {
    if (index < 0) { return -index; }
    if (index >= size) { return 2 * (size - 1) - index; }
    return index;
  }
};
struct Replicate {
  __device__ static int64_t Source(int64_t index, int64_t size) {
    return index < 0 ? 0 : (index >= size ? size - 1 : index);
  }
};

struct Pad2dGeometry {
  int64_t planes = 0, height = 0, width = 0, left = 0, top = 0, out_height = 0, out_width = 0;
};

Pad2dGeometry MakePad2dGeometry(const KernelInitContext& ctx, const std::string& x_argument) {
  const Shape& x = ctx.Desc(x_argument).shape;
  const std::vector<int64_t> padding = Int64ListAttr(ctx.conf(), "padding");
  Pad2dGeometry g;
  g.planes = x.At(0) * x.At(1);
  g.height = x.At(2);
  g.width = x.At(3);
  g.left = padding[0];
  g.top = padding[2];
  g.out_height = g.height + padding[2] + padding[3];
  g.out_width = g.width + padding[0] + padding[1];
  return g;
}

// The x offset that padded element i reads.
template <typename Mode>
__device__ __forceinline__ int64_t Pad2dSource(const Pad2dGeometry& g, int64_t i) {
  const int64_t col = i % g.out_width;
  const int64_t row = (i / g.out_width) % g.out_height;
  const int64_t plane = i / (g.out_width * g.out_height);
  return (plane * g.height + Mode::Source(row - g.top, g.height)) * g.width +
         Mode::Source(col - g.left, g.width);
}

template <typename Mode, typename E>
__global__ void Pad2dKernel(int64_t n, Pad2dGeometry g, const E* x, E* y) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    y[i] = x[Pad2dSource<Mode>(g, i)];
  }
}

template <typename Mode, typename T, typename Acc>
__global__ void Pad2dGradKernel(int64_t n, Pad2dGeometry g, const T* dy, Acc* dx) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    atomicAdd(dx + Pad2dSource<Mode>(g, i), Convert<Acc>(dy[i]));
  }
}

template <typename Mode, typename T>
class Pad2dGpuKernel final : public Kernel {
  using E = typename UnsignedOfSize<sizeof(T)>::type;

 public:
  explicit Pad2dGpuKernel(const KernelInitContext& ctx) : geometry_(MakePad2dGeometry(ctx, "x")) {}
  void Forward(KernelContext& ctx) override {
    const Pad2dGeometry& g = geometry_;
    const int64_t n = g.planes * g.out_height * g.out_width;
    if (n == 0) { return; }
    Pad2dKernel<Mode, E><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        n, g, static_cast<const E*>(ctx.Input("x").raw()),
        static_cast<E*>(ctx.Output("y").mut_raw()));
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  Pad2dGeometry geometry_;
};

struct FloatToOutput {
  __device__ float operator()(float x) const { return x; }
};

template <typename Mode, typename T>
class Pad2dGradGpuKernel final : public Kernel {
  using Acc = ComputeType<T>;

 public:
  explicit Pad2dGradGpuKernel(const KernelInitContext& ctx)
      : geometry_(MakePad2dGeometry(ctx, "like")) {}
  void Forward(KernelContext& ctx) override {
    const Pad2dGeometry& g = geometry_;
    const int64_t dx_count = g.planes * g.height * g.width;
    if (dx_count == 0) { return; }
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    T* dx = ctx.Output("dx").mut_data<T>();
    Acc* sums = std::is_same_v<T, Acc>
                    ? reinterpret_cast<Acc*>(dx)
                    : static_cast<Acc*>(ctx.cuda_device().Workspace(dx_count * sizeof(Acc)));
    OF_CUDA_CHECK(cudaMemsetAsync(sums, 0, dx_count * sizeof(Acc), stream));
    const int64_t n = g.planes * g.out_height * g.out_width;
    Pad2dGradKernel<Mode>
        <<<BlockCount(n), kBlockSize, 0, stream>>>(n, g, ctx.Input("dy").data<T>(), sums);
    OF_CUDA_CHECK(cudaGetLastError());
    if constexpr (!std::is_same_v<T, Acc>) {
      LaunchElementwise<float>(stream, dx_count, FloatToOutput(), dx,
                               static_cast<const float*>(sums));
    }
  }

 private:
  Pad2dGeometry geometry_;
};

template <typename T>
using ReflectionPad2dGpuKernel = Pad2dGpuKernel<Reflect, T>;
template <typename T>
using ReflectionPad2dGradGpuKernel = Pad2dGradGpuKernel<Reflect, T>;
template <typename T>
using ReplicationPad2dGpuKernel = Pad2dGpuKernel<Replicate, T>;
template <typename T>
using ReplicationPad2dGradGpuKernel = Pad2dGradGpuKernel<Replicate, T>;

}  // namespace

#define OF_REGISTER_GPU_MOVE_KERNEL(op_type, Kernel) \
  REGISTER_KERNEL(op_type, "gpu", kFloat, Kernel);   \
  REGISTER_KERNEL(op_type, "gpu", kDouble, Kernel);  \
  REGISTER_KERNEL(op_type, "gpu", kFloat16, Kernel); \
  REGISTER_KERNEL(op_type, "gpu", kInt8, Kernel);    \
  REGISTER_KERNEL(op_type, "gpu", kInt32, Kernel);   \
  REGISTER_KERNEL(op_type, "gpu", kInt64, Kernel);   \
  REGISTER_KERNEL(op_type, "gpu", kUInt8, Kernel)

OF_REGISTER_GPU_MOVE_KERNEL("slice", SliceGpuKernel);
OF_REGISTER_GPU_MOVE_KERNEL("slice_update", SliceUpdateGpuKernel);
OF_REGISTER_GPU_MOVE_KERNEL("concat", ConcatGpuKernel);
OF_REGISTER_GPU_MOVE_KERNEL("split_like", SplitLikeGpuKernel);
OF_REGISTER_GPU_ALL_TYPE_KERNELS("pad", PadGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("reflection_pad2d", ReflectionPad2dGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("reflection_pad2d_grad", ReflectionPad2dGradGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("replication_pad2d", ReplicationPad2dGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("replication_pad2d_grad", ReplicationPad2dGradGpuKernel);

}  // namespace cuda
}  // namespace oneflow
