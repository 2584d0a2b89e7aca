// GPU conv1d / conv2d / conv3d, their gradients conv_data_grad and conv_filter_grad, and
// deconv2d (the transposed convolution) through cuDNN's convolution API, for the same attributes
// as the CPU kernels (cpu/conv.cpp): both data formats, strides, dilations, groups. 1-D
// convolutions run as 2-D ones with a unit axis. deconv2d is the backward-data pass
// (cudnnConvolutionBackwardData) of the convolution that maps its output back to its input, with
// its weight as that convolution's weight (ArgumentsOf), as on the CPU; it has no bias.
// Descriptors are built in the constructor from the physical shapes; the algorithm is chosen
// once, at the first call (cuDNN's heuristics need the handle), among those whose workspace fits
// kMaxWorkspaceBytes, by cuDNN's heuristic ranking or its measured search (the device's
// GpuOptions); the workspace comes from CudaDeviceContext::Workspace.
// Float32 runs without tensor cores (CUDNN_FMA_MATH, no TF32) so that it matches the CPU, unless
// the device's options allow TF32; float16 computes in float32 and may use tensor cores.
//
// Padding that differs before and after an axis (cuDNN pads symmetrically; "SAME" padding with
// an odd total, e.g. a 3x3 stride-2 convolution of an even size, or conv2d_transpose): cuDNN
// pads both sides by the smaller padding and works on a "wide" activation in the workspace,
// longer on that axis by the difference. The forward and filter passes read the activation
// zero-padded into it (PadKernel); the backward-data pass (conv_data_grad, deconv2d) writes its
// result there and copies the wanted window out (CropKernel).

#include <cuda_fp16.h>
#include <cudnn.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/window_geometry.h"
#include "oneflow/kernels/conv_arguments.h"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;

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

constexpr int kMaxCropRank = 5;

// A window of a larger tensor: narrow (dims, row-major) is wide[index + offsets].
struct CropGeometry {
  int rank = 0;
  int64_t dims[kMaxCropRank] = {};
  int64_t wide_dims[kMaxCropRank] = {};
  int64_t offsets[kMaxCropRank] = {};
};

template <typename T>
__global__ void CropKernel(CropGeometry geometry, int64_t count, const T* wide, T* out) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += stride) {
    int64_t rest = index, offset = 0, wide_stride = 1;
    for (int axis = geometry.rank - 1; axis >= 0; --axis) {
      offset += (rest % geometry.dims[axis] + geometry.offsets[axis]) * wide_stride;
      rest /= geometry.dims[axis];
      wide_stride *= geometry.wide_dims[axis];
    }
    out[index] = wide[offset];
  }
}

// wide = narrow placed at the offsets, zeros around it (the transpose of CropKernel).
template <typename T>
__global__ void PadKernel(CropGeometry geometry, int64_t wide_count, const T* narrow, T* wide) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       index < wide_count; index += stride) {
    int64_t rest = index, offset = 0, narrow_stride = 1;
    bool inside = true;
    for (int axis = geometry.rank - 1; axis >= 0; --axis) {
      const int64_t coordinate = rest % geometry.wide_dims[axis] - geometry.offsets[axis];
      rest /= geometry.wide_dims[axis];
      inside = inside && coordinate >= 0 && coordinate < geometry.dims[axis];
      offset += coordinate * narrow_stride;
      narrow_stride *= geometry.dims[axis];
    }
    wide[index] = inside ? narrow[offset] : T(0);
  }
}

// Bytes of cuDNN's workspace before the wide buffer (which starts aligned).
int64_t AlignedBytes(size_t bytes) {
  constexpr int64_t kAlignment = 256;
  return (static_cast<int64_t>(bytes) + kAlignment - 1) / kAlignment * kAlignment;
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

  explicit CudnnConvKernel(const KernelInitContext& ctx)
      : arguments_(ArgumentsOf(kPass, ctx.conf().op_type())) {
    const std::string op_type = ctx.conf().op_type();
    const Shape& activation = ctx.Desc(arguments_.activation).shape;
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
    // Uneven padding: cuDNN pads both sides of an axis by the smaller padding p and works on a
    // wide activation, longer by |before - after| on that axis, with activation[j] =
    // wide[j + before - p]: position q of the padded activation is wide[q - p] and
    // activation[q - before]. The wide length X' = X + |before - after| has X' + 2p = X + before
    // + after, so the convolution maps it to the same output length.
    std::vector<int64_t> wide_dims = activation.dims();
    OF_CHECK(activation.num_axes() <= kMaxCropRank)
        << op_type << ": rank " << activation.num_axes() << " is more than a GPU convolution takes";
    crop_.rank = static_cast<int>(activation.num_axes());
    for (int64_t axis = 0; axis < crop_.rank; ++axis) {
      crop_.dims[axis] = activation.At(axis);
      crop_.wide_dims[axis] = activation.At(axis);
    }
    for (int64_t axis = 0; axis < spatial_axes; ++axis) {
      const int64_t before = geometry.padding_before[axis], after = geometry.padding_after[axis];
      if (before != after) {
        const int64_t memory_axis = (channels_first ? 2 : 1) + axis;
        padding[axis] = std::min(before, after);
        wide_dims[memory_axis] += before > after ? before - after : after - before;
        crop_.wide_dims[memory_axis] = wide_dims[memory_axis];
        crop_.offsets[memory_axis] = before - padding[axis];
        wide_ = true;
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
    result_count_ = ctx.Desc(arguments_.result).shape.elem_count();
    shapes_ = "input " + activation.ToString() + ", filter " + weight.ToString() + " and output " +
              output.ToString();
    const Shape wide_activation(wide_dims);
    wide_count_ = wide_ ? wide_activation.elem_count() : 0;
    const cudnnTensorFormat_t format = channels_first ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    const std::vector<int> x_dims =
        ToIntDims(CudnnDims(wide_activation, channels_first, spatial_axes));
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
    // The math type is set at the first call, from the device's options (ChooseAlgorithm).
  }

  ~CudnnConvKernel() override {
    cudnnDestroyTensorDescriptor(x_desc_);
    cudnnDestroyTensorDescriptor(y_desc_);
    cudnnDestroyFilterDescriptor(w_desc_);
    cudnnDestroyConvolutionDescriptor(conv_desc_);
  }

  void Forward(KernelContext& ctx) override {
    CudaDeviceContext& device = ctx.cuda_device();
    void* result = ctx.Output(arguments_.result).mut_raw();
    if (empty_) {
      // An empty sum: zeros (nothing to do when the result itself is empty).
      if (result_count_ > 0) {
        OF_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(T) * result_count_, device.cuda_stream()));
      }
      return;
    }
    cudnnHandle_t handle = device.cudnn_handle();
    if (!algorithm_chosen_) { ChooseAlgorithm(handle, device.options()); }
    // [cuDNN's workspace][the wide activation of an uneven padding], one allocation.
    const int64_t cudnn_bytes = wide_ ? AlignedBytes(workspace_bytes_) : workspace_bytes_;
    const int64_t total_bytes = cudnn_bytes + static_cast<int64_t>(sizeof(T)) * wide_count_;
    char* workspace = total_bytes > 0 ? static_cast<char*>(device.Workspace(total_bytes)) : nullptr;
    T* wide = wide_ ? reinterpret_cast<T*>(workspace + cudnn_bytes) : nullptr;
    const typename Types::Scalar alpha = 1, beta = 0;
    // The forward and filter passes read the activation, zero-padded into `wide` if uneven.
    const void* activation = nullptr;
    if constexpr (kPass != ConvPass::kBackwardData) {
      activation = ctx.Input(arguments_.activation).raw();
      if (wide_) {
        PadKernel<T><<<BlockCount(wide_count_), kBlockSize, 0, device.cuda_stream()>>>(
            crop_, wide_count_, static_cast<const T*>(activation), wide);
        OF_CUDA_CHECK(cudaGetLastError());
        activation = wide;
      }
    }
    if constexpr (kPass == ConvPass::kForward) {
      OF_CUDNN_CHECK(cudnnConvolutionForward(
          handle, &alpha, x_desc_, activation, w_desc_, ctx.Input(arguments_.weight).raw(),
          conv_desc_, forward_algorithm_, workspace, workspace_bytes_, &beta, y_desc_, result));
    } else if constexpr (kPass == ConvPass::kBackwardData) {
      void* data_grad = wide_ ? static_cast<void*>(wide) : result;
      OF_CUDNN_CHECK(cudnnConvolutionBackwardData(
          handle, &alpha, w_desc_, ctx.Input(arguments_.weight).raw(), y_desc_,
          ctx.Input(arguments_.output).raw(), conv_desc_, data_algorithm_, workspace,
          workspace_bytes_, &beta, x_desc_, data_grad));
      if (wide_) {
        CropKernel<T><<<BlockCount(result_count_), kBlockSize, 0, device.cuda_stream()>>>(
            crop_, result_count_, static_cast<const T*>(data_grad), static_cast<T*>(result));
        OF_CUDA_CHECK(cudaGetLastError());
      }
    } else {
      OF_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
          handle, &alpha, x_desc_, activation, y_desc_, ctx.Input(arguments_.output).raw(),
          conv_desc_, filter_algorithm_, workspace, workspace_bytes_, &beta, w_desc_, result));
    }
  }

 private:
  // With the heuristic search: the first algorithm of cuDNN's heuristic ranking that is
  // supported and whose workspace fits; where the ranking offers none (cuDNN 9 on an H200 ranked
  // no legacy algorithm for some of CudaKernels.Convolution's shapes), and without the heuristic
  // search: the fastest that cuDNN's measured search ran successfully (cudnnFind*: it runs each
  // algorithm once, in scratch memory of its own, and sorts them by time). Strict float32
  // (`fma_only`) passes over results measured with tensor-core math.
  template <typename Perf, typename Algorithm, typename Rank, typename Find, typename Bytes>
  static bool PickAlgorithm(bool heuristic, bool fma_only, Rank rank, Find find,
                            Bytes workspace_bytes, Algorithm* algorithm, size_t* bytes) {
    constexpr int kRequested = 16;
    Perf results[kRequested];
    int returned = 0;
    auto first_fitting = [&]() {
      for (int i = 0; i < returned; ++i) {
        size_t needed = 0;
        const bool tensor_cores = results[i].mathType == CUDNN_TENSOR_OP_MATH ||
                                  results[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
        if (results[i].status != CUDNN_STATUS_SUCCESS || (fma_only && tensor_cores) ||
            workspace_bytes(results[i].algo, &needed) != CUDNN_STATUS_SUCCESS ||
            needed > kMaxWorkspaceBytes) {
          continue;
        }
        *algorithm = results[i].algo;
        *bytes = needed;
        return true;
      }
      return false;
    };
    if (heuristic && rank(kRequested, &returned, results) == CUDNN_STATUS_SUCCESS &&
        first_fitting()) {
      return true;
    }
    returned = 0;
    return find(kRequested, &returned, results) == CUDNN_STATUS_SUCCESS && first_fitting();
  }

  void ChooseAlgorithm(cudnnHandle_t handle, const GpuOptions& options) {
    // TF32 is cuDNN's default math for float32 on Ampere and later.
    const bool tf32 = std::is_same<T, float>::value && options.allow_tf32;
    const cudnnMathType_t math = tf32 ? CUDNN_DEFAULT_MATH : Types::kMath;
    OF_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, math));
    const bool heuristic = options.conv_heuristic_search;
    const bool fma_only = math == CUDNN_FMA_MATH;
    bool found = false;
    if constexpr (kPass == ConvPass::kForward) {
      found = PickAlgorithm<cudnnConvolutionFwdAlgoPerf_t>(
          heuristic, fma_only,
          [&](int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* results) {
            return cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc_, w_desc_, conv_desc_,
                                                          y_desc_, requested, returned, results);
          },
          [&](int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* results) {
            return cudnnFindConvolutionForwardAlgorithm(handle, x_desc_, w_desc_, conv_desc_,
                                                        y_desc_, requested, returned, results);
          },
          [&](cudnnConvolutionFwdAlgo_t algorithm, size_t* bytes) {
            return cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc_, w_desc_, conv_desc_,
                                                           y_desc_, algorithm, bytes);
          },
          &forward_algorithm_, &workspace_bytes_);
    } else if constexpr (kPass == ConvPass::kBackwardData) {
      found = PickAlgorithm<cudnnConvolutionBwdDataAlgoPerf_t>(
          heuristic, fma_only,
          [&](int requested, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* results) {
            return cudnnGetConvolutionBackwardDataAlgorithm_v7(
                handle, w_desc_, y_desc_, conv_desc_, x_desc_, requested, returned, results);
          },
          [&](int requested, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* results) {
            return cudnnFindConvolutionBackwardDataAlgorithm(
                handle, w_desc_, y_desc_, conv_desc_, x_desc_, requested, returned, results);
          },
          [&](cudnnConvolutionBwdDataAlgo_t algorithm, size_t* bytes) {
            return cudnnGetConvolutionBackwardDataWorkspaceSize(handle, w_desc_, y_desc_,
                                                                conv_desc_, x_desc_, algorithm,
                                                                bytes);
          },
          &data_algorithm_, &workspace_bytes_);
    } else {
      found = PickAlgorithm<cudnnConvolutionBwdFilterAlgoPerf_t>(
          heuristic, fma_only,
          [&](int requested, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* results) {
            return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                handle, x_desc_, y_desc_, conv_desc_, w_desc_, requested, returned, results);
          },
          [&](int requested, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* results) {
            return cudnnFindConvolutionBackwardFilterAlgorithm(
                handle, x_desc_, y_desc_, conv_desc_, w_desc_, requested, returned, results);
          },
          [&](cudnnConvolutionBwdFilterAlgo_t algorithm, size_t* bytes) {
            return cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, x_desc_, y_desc_,
                                                                  conv_desc_, w_desc_, algorithm,
                                                                  bytes);
          },
          &filter_algorithm_, &workspace_bytes_);
    }
    if (!found) {
      throw Error(ErrorKind::kNotImplemented)
          << "conv: cuDNN has no algorithm for " << shapes_
          << " ("
          << (heuristic ? "neither ranked nor found by a measured search"
                        : "none found by a measured search")
          << ") within " << kMaxWorkspaceBytes
          << " bytes of workspace";
    }
    algorithm_chosen_ = true;
  }

  ConvArguments arguments_;
  bool empty_ = false;
  int64_t result_count_ = 0;
  // Uneven padding: the passes work on a wide activation (see the constructor).
  bool wide_ = false;
  int64_t wide_count_ = 0;
  CropGeometry crop_;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  std::string shapes_;  // for errors
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
OF_REGISTER_GPU_FLOATING_KERNELS("deconv2d", ConvDataGradKernel);

}  // namespace cuda
}  // namespace oneflow
