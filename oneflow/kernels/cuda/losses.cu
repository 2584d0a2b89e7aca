// GPU sigmoid_cross_entropy, smooth_l1_loss and their gradients, as the CPU kernels
// (cpu/losses.cpp): functors of the elementwise launcher over (prediction, label[, dy]), with
// the device twins of fast_math's softplus and sigmoid (math_functors.cuh). Float16 computes in
// float. softmax_cross_entropy lives with the softmax rows (softmax.cu).

#include <cuda_fp16.h>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/cuda/math_functors.cuh"

namespace oneflow {
namespace cuda {

namespace {

using dm = DeviceMath;

struct SigmoidCrossEntropy {
  template <typename T>
  __device__ static T Forward(T x, T z, T) {
    return dm::Softplus(x) - x * z;
  }
  template <typename T>
  __device__ static T Backward(T x, T z, T dy, T) {
    return (dm::Sigmoid(x) - z) * dy;
  }
};

struct SmoothL1 {
  template <typename T>
  __device__ static T Forward(T x, T z, T beta) {
    const T d = x - z;
    const T magnitude = d < T(0) ? -d : d;
    return magnitude < beta ? T(0.5) * d * d / beta : magnitude - T(0.5) * beta;
  }
  template <typename T>
  __device__ static T Backward(T x, T z, T dy, T beta) {
    const T d = x - z;
    const T sign = d > T(0) ? T(1) : (d < T(0) ? T(-1) : T(0));
    const T magnitude = d < T(0) ? -d : d;
    return (magnitude < beta ? d / beta : sign) * dy;
  }
};

template <typename Loss, typename C>
struct LossForward {
  C param;
  __device__ C operator()(C x, C z) const { return Loss::Forward(x, z, param); }
};

template <typename Loss, typename C>
struct LossBackward {
  C param;
  __device__ C operator()(C x, C z, C dy) const { return Loss::Backward(x, z, dy, param); }
};

template <typename C>
C LossParam(const KernelInitContext& ctx) {
  return ctx.conf().attr().count("beta") ? static_cast<C>(ctx.Attr<double>("beta")) : C(0);
}

template <typename Loss, typename T>
class LossGpuKernel final : public Kernel {
  using C = ComputeType<T>;

 public:
  explicit LossGpuKernel(const KernelInitContext& ctx) : param_(LossParam<C>(ctx)) {}
  void Forward(KernelContext& ctx) override {
    LaunchElementwise<C>(ctx.cuda_device().cuda_stream(), ctx.Input("prediction").elem_count(),
                         LossForward<Loss, C>{param_},
                         ctx.Output(ctx.HasOutput("loss") ? "loss" : "out").mut_data<T>(),
                         ctx.Input("prediction").data<T>(), ctx.Input("label").data<T>());
  }

 private:
  C param_;
};

template <typename Loss, typename T>
class LossGradGpuKernel final : public Kernel {
  using C = ComputeType<T>;

 public:
  explicit LossGradGpuKernel(const KernelInitContext& ctx) : param_(LossParam<C>(ctx)) {}
  void Forward(KernelContext& ctx) override {
    LaunchElementwise<C>(ctx.cuda_device().cuda_stream(), ctx.Input("prediction").elem_count(),
                         LossBackward<Loss, C>{param_}, ctx.Output("prediction_diff").mut_data<T>(),
                         ctx.Input("prediction").data<T>(), ctx.Input("label").data<T>(),
                         ctx.Input("dy").data<T>());
  }

 private:
  C param_;
};

template <typename T>
using SigmoidCrossEntropyGpuKernel = LossGpuKernel<SigmoidCrossEntropy, T>;
template <typename T>
using SigmoidCrossEntropyGradGpuKernel = LossGradGpuKernel<SigmoidCrossEntropy, T>;
template <typename T>
using SmoothL1LossGpuKernel = LossGpuKernel<SmoothL1, T>;
template <typename T>
using SmoothL1LossGradGpuKernel = LossGradGpuKernel<SmoothL1, T>;

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("sigmoid_cross_entropy", SigmoidCrossEntropyGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("sigmoid_cross_entropy_grad", SigmoidCrossEntropyGradGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("smooth_l1_loss", SmoothL1LossGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("smooth_l1_loss_grad", SmoothL1LossGradGpuKernel);

}  // namespace cuda
}  // namespace oneflow
