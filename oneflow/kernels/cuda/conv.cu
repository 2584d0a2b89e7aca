// GPU conv1d / conv2d / conv3d and their gradients conv_data_grad and conv_filter_grad through
// cuDNN's convolution API, for the same attributes as the CPU kernels (cpu/conv.cpp): both data
// formats, strides, dilations, groups. 1-D convolutions run as 2-D ones with a unit axis.
// Descriptors are built in the constructor from the physical shapes; the algorithm is chosen
// once, at the first call (cuDNN's heuristics need the handle), among those whose workspace fits
// kMaxWorkspaceBytes; the workspace comes from CudaDeviceContext::Workspace.
// Float32 runs without tensor cores (CUDNN_FMA_MATH, no TF32) so that it matches the CPU;
// float16 computes in float32 and may use tensor cores.
//
// Not yet: padding that differs before and after an axis (cuDNN pads symmetrically; "same"
// padding with an even total needs an explicit pad first) raises NotImplementedError naming the
// op, as does deconv2d.

#include <cuda_fp16.h>
#include <cudnn.h>

#include <string>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/window_geometry.h"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;

enum class ConvPass { kForward, kBackwardData, kBackwardFilter };

template <typename T>
struct CudnnTypes;
template <>
struct CudnnTypes<float> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_FLOAT;
  static constexpr cudnnDataType_t kCompute = CUDNN_DATA_FLOAT;
  static constexpr cudnnMathType_t kMath = CUDNN_FMA_MATH;
  using Scalar = float;
};
template <>
struct CudnnTypes<double> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_DOUBLE;
  static constexpr cudnnDataType_t kCompute = CUDNN_DATA_DOUBLE;
  static constexpr cudnnMathType_t kMath = CUDNN_DEFAULT_MATH;
  using Scalar = double;
};
template <>
struct CudnnTypes<half> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_HALF;
  static constexpr cudnnDataType_t kCompute = CUDNN_DATA_FLOAT;
  static constexpr cudnnMathType_t kMath = CUDNN_TENSOR_OP_MATH;
  using Scalar = float;
};

// Blob names of one pass: the convolution's input, its weight, its output.
struct ConvArguments {
  std::string activation, weight, output;
};

ConvArguments ArgumentsOf(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward:
      return {"in", "weight", "out"};
    case ConvPass::kBackwardData:
      return {"dx", "weight", "dy"};
    default:
      return {"x", "filter_diff", "dy"};
  }
}

std::vector<int> ToIntDims(const std::vector<int64_t>& dims) {
  std::vector<int> result;
  for (int64_t dim : dims) {
    OF_CHECK(dim >= 0 && dim <= INT32_MAX) << "GPU convolution: dimension " << dim << " too big";
    result.push_back(static_cast<int>(dim));
  }
  return result;
}

// Logical (N, C, spatial...) dimensions of an activation or (K, C, kernel...) of a weight, with
// the spatial axes widened to at least 2.
std::vector<int64_t> CudnnDims(const Shape& shape, bool channels_first, int64_t spatial_axes) {
  std::vector<int64_t> dims = {shape.At(0), shape.At(channels_first ? 1 : spatial_axes + 1)};
  for (int64_t axis = 0; axis < spatial_axes; ++axis) {
    dims.push_back(shape.At((channels_first ? 2 : 1) + axis));
  }
  if (spatial_axes == 1) { dims.push_back(1); }
  return dims;
}

template <typename T, ConvPass kPass>
class CudnnConvKernel final : public Kernel {
 public:
  using Types = CudnnTypes<T>;

  explicit CudnnConvKernel(const KernelInitContext& ctx) : arguments_(ArgumentsOf(kPass)) {
    const std::string op_type = ctx.conf().op_type();
    const Shape& activation = kPass == ConvPass::kBackwardData
                                  ? ctx.Desc("x_like").shape
                                  : ctx.Desc(arguments_.activation).shape;
    const Shape& weight = ctx.Desc(arguments_.weight).shape;
    const Shape& output = ctx.Desc(arguments_.output).shape;
    const int64_t spatial_axes = activation.num_axes() - 2;
    WindowAttributes attributes = ConvWindowAttributes(ctx.conf());
    const bool channels_first = attributes.data_format == "channels_first";
    if (attributes.window.empty()) {
      for (int64_t axis = 0; axis < spatial_axes; ++axis) {
        attributes.window.push_back(weight.At((channels_first ? 2 : 1) + axis));
      }
    }
    const WindowGeometry geometry =
        ComputeWindowGeometry(op_type, activation, spatial_axes, attributes);
    std::vector<int64_t> padding = geometry.padding_before, strides = geometry.strides,
                         dilations = geometry.dilations;
    for (int64_t axis = 0; axis < spatial_axes; ++axis) {
      if (geometry.padding_before[axis] != geometry.padding_after[axis]) {
        throw Error(ErrorKind::kNotImplemented)
            << op_type << " '" << ctx.conf().name() << "': the GPU kernel needs the same padding "
            << "before and after each spatial axis, got " << geometry.padding_before[axis]
            << " and " << geometry.padding_after[axis] << " on axis " << axis << " (input "
            << activation.ToString() << ", padding '" << attributes.padding << "')";
      }
    }
    if (spatial_axes == 1) {
      padding.push_back(0);
      strides.push_back(1);
      dilations.push_back(1);
    }
    for (const Shape* shape : {&activation, &weight, &output}) {
      if (shape->elem_count() == 0) { empty_ = true; }
    }
    output_bytes_ = static_cast<int64_t>(sizeof(T)) * ctx.Desc(ResultArgument()).shape.elem_count();
    const cudnnTensorFormat_t format = channels_first ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    const std::vector<int> x_dims = ToIntDims(CudnnDims(activation, channels_first, spatial_axes));
    const std::vector<int> y_dims = ToIntDims(CudnnDims(output, channels_first, spatial_axes));
    const std::vector<int> w_dims = ToIntDims(CudnnDims(weight, channels_first, spatial_axes));
    OF_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc_));
    OF_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc_));
    OF_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc_));
    OF_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_desc_));
    if (empty_) { return; }
    OF_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(x_desc_, format, Types::kData,
                                                static_cast<int>(x_dims.size()), x_dims.data()));
    OF_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(y_desc_, format, Types::kData,
                                                static_cast<int>(y_dims.size()), y_dims.data()));
    OF_CUDNN_CHECK(cudnnSetFilterNdDescriptor(w_desc_, Types::kData, format,
                                              static_cast<int>(w_dims.size()), w_dims.data()));
    const std::vector<int> pad = ToIntDims(padding), stride = ToIntDims(strides),
                           dilation = ToIntDims(dilations);
    OF_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(conv_desc_, static_cast<int>(pad.size()),
                                                   pad.data(), stride.data(), dilation.data(),
                                                   CUDNN_CROSS_CORRELATION, Types::kCompute));
    OF_CUDNN_CHECK(
        cudnnSetConvolutionGroupCount(conv_desc_, static_cast<int>(ctx.Attr<int64_t>("groups"))));
    OF_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, Types::kMath));
  }

  ~CudnnConvKernel() override {
    cudnnDestroyTensorDescriptor(x_desc_);
    cudnnDestroyTensorDescriptor(y_desc_);
    cudnnDestroyFilterDescriptor(w_desc_);
    cudnnDestroyConvolutionDescriptor(conv_desc_);
  }

  void Forward(KernelContext& ctx) override {
    CudaDeviceContext& device = ctx.cuda_device();
    void* result = ctx.Output(ResultArgument()).mut_raw();
    if (empty_) {
      // An empty sum: zeros (nothing to do when the result itself is empty).
      if (output_bytes_ > 0) {
        OF_CUDA_CHECK(cudaMemsetAsync(result, 0, output_bytes_, device.cuda_stream()));
      }
      return;
    }
    cudnnHandle_t handle = device.cudnn_handle();
    if (!algorithm_chosen_) { ChooseAlgorithm(handle); }
    void* workspace = workspace_bytes_ > 0 ? device.Workspace(workspace_bytes_) : nullptr;
    const typename Types::Scalar alpha = 1, beta = 0;
    if constexpr (kPass == ConvPass::kForward) {
      OF_CUDNN_CHECK(cudnnConvolutionForward(
          handle, &alpha, x_desc_, ctx.Input("in").raw(), w_desc_, ctx.Input("weight").raw(),
          conv_desc_, forward_algorithm_, workspace, workspace_bytes_, &beta, y_desc_, result));
    } else if constexpr (kPass == ConvPass::kBackwardData) {
      OF_CUDNN_CHECK(cudnnConvolutionBackwardData(
          handle, &alpha, w_desc_, ctx.Input("weight").raw(), y_desc_, ctx.Input("dy").raw(),
          conv_desc_, data_algorithm_, workspace, workspace_bytes_, &beta, x_desc_, result));
    } else {
      OF_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
          handle, &alpha, x_desc_, ctx.Input("x").raw(), y_desc_, ctx.Input("dy").raw(), conv_desc_,
          filter_algorithm_, workspace, workspace_bytes_, &beta, w_desc_, result));
    }
  }

 private:
  std::string ResultArgument() const {
    switch (kPass) {
      case ConvPass::kForward:
        return "out";
      case ConvPass::kBackwardData:
        return "dx";
      default:
        return "filter_diff";
    }
  }

  // The first algorithm of cuDNN's heuristic ranking that is supported and whose workspace fits.
  void ChooseAlgorithm(cudnnHandle_t handle) {
    constexpr int kRequested = 16;
    int returned = 0;
    bool found = false;
    if constexpr (kPass == ConvPass::kForward) {
      cudnnConvolutionFwdAlgoPerf_t results[kRequested];
      OF_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
          handle, x_desc_, w_desc_, conv_desc_, y_desc_, kRequested, &returned, results));
      for (int i = 0; i < returned && !found; ++i) {
        if (results[i].status != CUDNN_STATUS_SUCCESS) { continue; }
        size_t bytes = 0;
        if (cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc_, w_desc_, conv_desc_, y_desc_,
                                                    results[i].algo,
                                                    &bytes) != CUDNN_STATUS_SUCCESS ||
            bytes > kMaxWorkspaceBytes) {
          continue;
        }
        forward_algorithm_ = results[i].algo;
        workspace_bytes_ = bytes;
        found = true;
      }
    } else if constexpr (kPass == ConvPass::kBackwardData) {
      cudnnConvolutionBwdDataAlgoPerf_t results[kRequested];
      OF_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
          handle, w_desc_, y_desc_, conv_desc_, x_desc_, kRequested, &returned, results));
      for (int i = 0; i < returned && !found; ++i) {
        if (results[i].status != CUDNN_STATUS_SUCCESS) { continue; }
        size_t bytes = 0;
        if (cudnnGetConvolutionBackwardDataWorkspaceSize(handle, w_desc_, y_desc_, conv_desc_,
                                                         x_desc_, results[i].algo,
                                                         &bytes) != CUDNN_STATUS_SUCCESS ||
            bytes > kMaxWorkspaceBytes) {
          continue;
        }
        data_algorithm_ = results[i].algo;
        workspace_bytes_ = bytes;
        found = true;
      }
    } else {
      cudnnConvolutionBwdFilterAlgoPerf_t results[kRequested];
      OF_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
          handle, x_desc_, y_desc_, conv_desc_, w_desc_, kRequested, &returned, results));
      for (int i = 0; i < returned && !found; ++i) {
        if (results[i].status != CUDNN_STATUS_SUCCESS) { continue; }
        size_t bytes = 0;
        if (cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, x_desc_, y_desc_, conv_desc_,
                                                           w_desc_, results[i].algo,
                                                           &bytes) != CUDNN_STATUS_SUCCESS ||
            bytes > kMaxWorkspaceBytes) {
          continue;
        }
        filter_algorithm_ = results[i].algo;
        workspace_bytes_ = bytes;
        found = true;
      }
    }
    OF_CHECK(found) << "cuDNN offers no convolution algorithm for this shape within "
                    << kMaxWorkspaceBytes << " bytes of workspace";
    algorithm_chosen_ = true;
  }

  ConvArguments arguments_;
  bool empty_ = false;
  int64_t output_bytes_ = 0;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  bool algorithm_chosen_ = false;
  cudnnConvolutionFwdAlgo_t forward_algorithm_{};
  cudnnConvolutionBwdDataAlgo_t data_algorithm_{};
  cudnnConvolutionBwdFilterAlgo_t filter_algorithm_{};
  size_t workspace_bytes_ = 0;
};

template <typename T>
using ConvForwardKernel = CudnnConvKernel<T, ConvPass::kForward>;
template <typename T>
using ConvDataGradKernel = CudnnConvKernel<T, ConvPass::kBackwardData>;
template <typename T>
using ConvFilterGradKernel = CudnnConvKernel<T, ConvPass::kBackwardFilter>;

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("conv1d", ConvForwardKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("conv2d", ConvForwardKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("conv3d", ConvForwardKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("conv_data_grad", ConvDataGradKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("conv_filter_grad", ConvFilterGradKernel);

}  // namespace cuda
}  // namespace oneflow
