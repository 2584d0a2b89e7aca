// GPU kernels of the simple elementwise ops, each a functor over the launcher
// of elementwise.cuh: cast, fused_cast_scale, the copies (identity, reshape, ...), constant and
// constant_like, scalar_add / scalar_mul / scalar_pow, relu / sigmoid / tanh /
// square and their gradients, add_n and bias_add. Same op types, arguments,
// attributes and dtypes as the CPU kernels (oneflow/kernels/cpu/), plus
// float16, which computes in float.

#include <cuda_fp16.h>

#include <string>

#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/cuda/math_functors.cuh"

namespace oneflow {
namespace cuda {

namespace {

using dm = DeviceMath;

cudaStream_t StreamOf(KernelContext& ctx) { return ctx.cuda_device().cuda_stream(); }

// ---- cast: registered per output dtype; the input dtype is dispatched inside,
// as on the CPU.

struct IdentityFunctor {
  template <typename T>
  __device__ T operator()(T x) const {
    return x;
  }
};

// Compute type of a cast: float when either side is half (so half converts
// through float), else the output type.
template <typename In, typename Out>
using CastCompute =
    std::conditional_t<std::is_same_v<In, half> || std::is_same_v<Out, half>, float, Out>;

template <typename Out>
struct CastFrom {
  const Blob& in;
  Out* out;
  cudaStream_t stream;
  template <typename In>
  void operator()() const {
    LaunchElementwise<CastCompute<In, Out>>(stream, in.elem_count(), IdentityFunctor(), out,
                                            in.data<In>());
  }
};

template <typename Out>
class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    Blob& out = ctx.Output("out");
    CastFrom<Out> cast{in, out.mut_data<Out>(), StreamOf(ctx)};
    switch (in.data_type()) {
      case kFloat:
        return cast.template operator()<float>();
      case kDouble:
        return cast.template operator()<double>();
      case kInt8:
        return cast.template operator()<int8_t>();
      case kInt32:
        return cast.template operator()<int32_t>();
      case kInt64:
        return cast.template operator()<int64_t>();
      case kUInt8:
        return cast.template operator()<uint8_t>();
      case kFloat16:
        return cast.template operator()<half>();
      default:
        throw Error(ErrorKind::kNotImplemented)
            << "cast: no GPU cast from " << DataType_Name(in.data_type());
    }
  }
};

// fused_cast_scale: y = Out(x) * scalar[0], x float16, float32 or float64, the scalar read on the
// device.
template <typename Out>
struct CastScale {
  const Out* scalar;
  // x converted to Out first; a float16 product is computed in float (exact for two halves)
  // and rounded once: a float16 multiply, as the CPU.
  template <typename C>
  __device__ Out operator()(C x) const {
    using Compute = ComputeType<Out>;
    return Convert<Out>(Convert<Compute>(Convert<Out>(x)) * Convert<Compute>(scalar[0]));
  }
};

template <typename Out>
class FusedCastScaleKernel final : public Kernel {
 public:
  explicit FusedCastScaleKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    const Blob& x = ctx.Input("x");
    const CastScale<Out> functor{ctx.Input("scalar").data<Out>()};
    Out* y = ctx.Output("y").mut_data<Out>();
    if (x.data_type() == kFloat) {
      LaunchElementwise<float>(StreamOf(ctx), x.elem_count(), functor, y, x.data<float>());
    } else if (x.data_type() == kDouble) {
      LaunchElementwise<double>(StreamOf(ctx), x.elem_count(), functor, y, x.data<double>());
    } else {  // float16, through float
      LaunchElementwise<float>(StreamOf(ctx), x.elem_count(), functor, y, x.data<half>());
    }
  }
};

// ---- copies: the output is the input's bytes.

class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    Blob& out = ctx.Output("out");
    if (in.raw() != out.mut_raw() && in.byte_size() > 0) {
      OF_CUDA_CHECK(cudaMemcpyAsync(out.mut_raw(), in.raw(), in.byte_size(),
                                    cudaMemcpyDeviceToDevice, StreamOf(ctx)));
    }
  }
};

struct CopyKernelsRegistrar {
  CopyKernelsRegistrar() {
    for (const char* op_type : {"identity", "reshape", "reshape_like", "cast_to_static_shape",
                                "parallel_cast", "cast_to_mirrored", "cast_from_mirrored"}) {
      for (DataType data_type : {kFloat, kDouble, kFloat16, kInt8, kInt32, kInt64, kUInt8}) {
        KernelRegistry::Instance().Register(op_type, "gpu", data_type,
                                            [](const KernelInitContext& ctx) {
                                              return std::unique_ptr<Kernel>(new CopyKernel(ctx));
                                            });
      }
    }
  }
};
const CopyKernelsRegistrar kCopyKernelsRegistrar;

// ---- constant, constant_like: the value is converted to the element type
// once.

template <typename T>
T ConvertOnHost(double value) {
  if constexpr (std::is_same_v<T, half>) {
    return __float2half(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(const KernelInitContext& ctx) {
    if (ctx.Attr<bool>("is_floating_value")) {
      value_ = ConvertOnHost<T>(ctx.Attr<double>("floating_value"));
    } else if constexpr (std::is_same_v<T, half>) {
      value_ = ConvertOnHost<T>(static_cast<double>(ctx.Attr<int64_t>("integer_value")));
    } else {
      value_ = static_cast<T>(ctx.Attr<int64_t>("integer_value"));
    }
  }
  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    LaunchFill(StreamOf(ctx), out.elem_count(), value_, out.mut_data<T>());
  }

 private:
  T value_;
};

template <typename T>
class ConstantLikeKernel final : public Kernel {
 public:
  explicit ConstantLikeKernel(const KernelInitContext& ctx)
      : value_(ConvertOnHost<T>(ctx.Attr<double>("value"))) {}
  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    LaunchFill(StreamOf(ctx), out.elem_count(), value_, out.mut_data<T>());
  }

 private:
  T value_;
};

// ---- scalar math: the operand in the compute type, converted once (as the CPU
// kernel, which converts it to the element type: for integers the operand is
// truncated first).

template <typename C>
struct ScalarAdd {
  C operand;
  __device__ C operator()(C x) const { return x + operand; }
};
template <typename C>
struct ScalarMul {
  C operand;
  __device__ C operator()(C x) const { return x * operand; }
};
template <typename C>
struct ScalarPow {
  C operand;
  __device__ C operator()(C x) const { return dm::Pow(x, operand); }
};

template <template <typename> class Functor, typename T>
class ScalarMathKernel final : public Kernel {
 public:
  using C = ComputeType<T>;
  explicit ScalarMathKernel(const KernelInitContext& ctx) {
    const double operand =
        ctx.Attr<double>(ctx.conf().attr().count("exponent") ? "exponent" : "operand");
    // The CPU kernel converts the operand to T; for half, round it to half too.
    operand_ = std::is_same_v<T, half> ? static_cast<C>(__half2float(ConvertOnHost<half>(operand)))
                                       : static_cast<C>(static_cast<T>(operand));
  }
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    LaunchElementwise<C>(StreamOf(ctx), in.elem_count(), Functor<C>{operand_},
                         ctx.Output("out").mut_data<T>(), in.data<T>());
  }

 private:
  C operand_;
};

// ---- relu, sigmoid, tanh, square (x -> y) and their gradients ((y, dy) ->
// dx).

struct Relu {
  template <typename C>
  __device__ C operator()(C x) const {
    return x < C(0) ? C(0) : x;  // NaN stays NaN
  }
};
struct ReluGrad {
  template <typename C>
  __device__ C operator()(C y, C dy) const {
    return y > C(0) ? dy : C(0);
  }
};
struct Sigmoid {
  template <typename C>
  __device__ C operator()(C x) const {
    return C(1) / (C(1) + dm::Exp(-x));
  }
};
struct SigmoidGrad {
  template <typename C>
  __device__ C operator()(C y, C dy) const {
    return dy * y * (C(1) - y);
  }
};
struct Tanh {
  template <typename C>
  __device__ C operator()(C x) const {
    return dm::Tanh(x);
  }
};
struct TanhGrad {
  template <typename C>
  __device__ C operator()(C y, C dy) const {
    return dy * (C(1) - y * y);
  }
};
struct Square {
  template <typename C>
  __device__ C operator()(C x) const {
    return x * x;
  }
};

template <typename Functor, typename T>
class ActivationKernel final : public Kernel {
 public:
  explicit ActivationKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& x = ctx.Input("x");
    LaunchElementwise<ComputeType<T>>(StreamOf(ctx), x.elem_count(), Functor(),
                                      ctx.Output("y").mut_data<T>(), x.data<T>());
  }
};

template <typename Functor, typename T>
class ActivationGradKernel final : public Kernel {
 public:
  explicit ActivationGradKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& y = ctx.Input("y");
    LaunchElementwise<ComputeType<T>>(StreamOf(ctx), y.elem_count(), Functor(),
                                      ctx.Output("dx").mut_data<T>(), y.data<T>(),
                                      ctx.Input("dy").data<T>());
  }
};

// ---- add_n: up to kAddNGroup inputs summed per pass; later groups are added
// to the output.

constexpr int kAddNGroup = 8;

template <typename T>
struct AddNArgs {
  const T* in[kAddNGroup];
  int count;
  bool accumulate;  // add to out instead of overwriting it
};

template <typename T>
__global__ void AddNKernel(int64_t n, AddNArgs<T> args, T* out) {
  using C = ComputeType<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    C sum = args.accumulate ? Convert<C>(out[i]) : C(0);
    for (int k = 0; k < args.count; ++k) { sum += Convert<C>(args.in[k][i]); }
    out[i] = Convert<T>(sum);
  }
}

template <typename T>
class AddNGpuKernel final : public Kernel {
 public:
  explicit AddNGpuKernel(const KernelInitContext& ctx) {
    while (ctx.Has("in", input_count_)) { ++input_count_; }
  }
  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    const int64_t n = out.elem_count();
    if (n == 0) { return; }
    for (int64_t first = 0; first < input_count_; first += kAddNGroup) {
      AddNArgs<T> args{};
      args.count = static_cast<int>(std::min<int64_t>(kAddNGroup, input_count_ - first));
      args.accumulate = first > 0;
      for (int k = 0; k < args.count; ++k) { args.in[k] = ctx.Input("in", first + k).data<T>(); }
      AddNKernel<T><<<BlockCount(n), kBlockSize, 0, StreamOf(ctx)>>>(n, args, out.mut_data<T>());
      OF_CUDA_CHECK(cudaGetLastError());
    }
  }

 private:
  int64_t input_count_ = 0;
};

// ---- bias_add: a viewed as (outer, channels, inner), b[c] added along the
// channels.

template <typename T>
__global__ void BiasAddKernel(int64_t n, int64_t channels, int64_t inner, const T* a, const T* b,
                              T* out) {
  using C = ComputeType<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t channel = (i / inner) % channels;
    out[i] = Convert<T>(Convert<C>(a[i]) + Convert<C>(b[channel]));
  }
}

template <typename T>
class BiasAddGpuKernel final : public Kernel {
 public:
  explicit BiasAddGpuKernel(const KernelInitContext& ctx) {
    const Shape& a = ctx.Desc("a").shape;
    int64_t axis = ctx.Attr<int64_t>("axis");
    if (axis < 0) { axis += a.num_axes(); }
    channels_ = a.At(axis);
    inner_ = a.Count(axis + 1, a.num_axes());
  }
  void Forward(KernelContext& ctx) override {
    const Blob& a = ctx.Input("a");
    const int64_t n = a.elem_count();
    if (n == 0) { return; }
    BiasAddKernel<T><<<BlockCount(n), kBlockSize, 0, StreamOf(ctx)>>>(
        n, channels_, inner_, a.data<T>(), ctx.Input("b").data<T>(),
        ctx.Output("out").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t channels_ = 1, inner_ = 1;
};

template <typename T>
using ReluKernel = ActivationKernel<Relu, T>;
template <typename T>
using ReluGradKernel = ActivationGradKernel<ReluGrad, T>;
template <typename T>
using SigmoidKernel = ActivationKernel<Sigmoid, T>;
template <typename T>
using SigmoidGradKernel = ActivationGradKernel<SigmoidGrad, T>;
template <typename T>
using TanhKernel = ActivationKernel<Tanh, T>;
template <typename T>
using TanhGradKernel = ActivationGradKernel<TanhGrad, T>;
template <typename T>
using SquareKernel = ActivationKernel<Square, T>;
template <typename T>
using ScalarAddKernel = ScalarMathKernel<ScalarAdd, T>;
template <typename T>
using ScalarMulKernel = ScalarMathKernel<ScalarMul, T>;
template <typename T>
using ScalarPowKernel = ScalarMathKernel<ScalarPow, T>;

}  // namespace

OF_REGISTER_GPU_ALL_TYPE_KERNELS("cast", CastKernel);
REGISTER_KERNEL("fused_cast_scale", "gpu", kFloat, FusedCastScaleKernel<float>);
REGISTER_KERNEL("fused_cast_scale", "gpu", kDouble, FusedCastScaleKernel<double>);
REGISTER_KERNEL("fused_cast_scale", "gpu", kFloat16, FusedCastScaleKernel<half>);
OF_REGISTER_GPU_ALL_TYPE_KERNELS("constant", ConstantKernel);
OF_REGISTER_GPU_ALL_TYPE_KERNELS("constant_like", ConstantLikeKernel);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("scalar_add", ScalarAddKernel);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("scalar_mul", ScalarMulKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("scalar_pow", ScalarPowKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("relu", ReluKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("relu_grad", ReluGradKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("sigmoid", SigmoidKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("sigmoid_grad", SigmoidGradKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("tanh", TanhKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("tanh_grad", TanhGradKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("square", SquareKernel);
OF_REGISTER_GPU_ARITHMETIC_KERNELS("add_n", AddNGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("bias_add", BiasAddGpuKernel);

}  // namespace cuda
}  // namespace oneflow
