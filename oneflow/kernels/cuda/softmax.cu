// GPU softmax, log_softmax, their gradients (any axis),
// sparse_softmax_cross_entropy and softmax_cross_entropy with their gradients, as the CPU
// kernels (cpu/softmax.cpp, cpu/sparse_softmax_cross_entropy.cpp, cpu/losses.cpp). The blob is seen
// as (outer, classes, inner); each (outer, inner) position is one row of `classes` elements,
// `inner` apart, reduced by one thread block (block_reduce.cuh). Float16 computes in float, float
// in float, double in double.
//
// A label outside [0, classes) raises a ValueError, as on the CPU, through the device's error
// report (index_check.h) once the work has completed; the kernels meanwhile write NaN as that
// row's loss and leave the label term out of its gradient.

#include <cuda_fp16.h>
#include <math_constants.h>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cuda/block_reduce.cuh"
#include "oneflow/kernels/cuda/elementwise.cuh"
#include "oneflow/kernels/cuda/index_check.h"
#include "oneflow/kernels/cuda/math_functors.cuh"

namespace oneflow {
namespace cuda {

namespace {

using dm = DeviceMath;

struct RowLayout {
  int64_t outer = 1, classes = 1, inner = 1;
  __host__ __device__ int64_t rows() const { return outer * inner; }
  // Offset of row `row`'s first element; its elements are `inner` apart.
  __device__ int64_t RowOffset(int64_t row) const {
    return (row / inner) * classes * inner + row % inner;
  }
};

RowLayout LayoutOf(const Shape& shape, int64_t axis) {
  if (axis < 0) { axis += shape.num_axes(); }
  RowLayout layout;
  layout.outer = shape.Count(0, axis);
  layout.classes = shape.At(axis);
  layout.inner = shape.Count(axis + 1, shape.num_axes());
  return layout;
}

template <typename C>
struct MaxOp {
  __device__ C operator()(C a, C b) const { return a > b ? a : b; }
};
template <typename C>
struct SumOp {
  __device__ C operator()(C a, C b) const { return a + b; }
};

// Row maximum and sum of exp(x - max) of one row, by the whole block.
template <typename T, typename C>
__device__ void RowMaxAndSum(const T* x, int64_t classes, int64_t inner, C* max_value, C* sum) {
  C local_max = -CUDART_INF_F;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
    local_max = MaxOp<C>()(local_max, Convert<C>(x[c * inner]));
  }
  *max_value = BlockReduce(local_max, MaxOp<C>());
  C local_sum = 0;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
    local_sum += dm::Exp(Convert<C>(x[c * inner]) - *max_value);
  }
  *sum = BlockReduce(local_sum, SumOp<C>());
}

template <typename T, bool kLog>
__global__ void SoftmaxKernel(RowLayout layout, const T* in, T* out) {
  using C = ComputeType<T>;
  for (int64_t row = blockIdx.x; row < layout.rows(); row += gridDim.x) {
    const int64_t offset = layout.RowOffset(row);
    const T* x = in + offset;
    T* y = out + offset;
    C max_value, sum;
    RowMaxAndSum(x, layout.classes, layout.inner, &max_value, &sum);
    const C log_sum = dm::Log(sum);
    for (int64_t c = threadIdx.x; c < layout.classes; c += blockDim.x) {
      const C shifted = Convert<C>(x[c * layout.inner]) - max_value;
      y[c * layout.inner] = Convert<T>(kLog ? shifted - log_sum : dm::Exp(shifted) / sum);
    }
  }
}

// softmax: dx = y (dy - sum(y dy));  log_softmax: dx = dy - exp(y) sum(dy).
template <typename T, bool kLog>
__global__ void SoftmaxGradKernel(RowLayout layout, const T* y_data, const T* dy_data, T* dx_data) {
  using C = ComputeType<T>;
  for (int64_t row = blockIdx.x; row < layout.rows(); row += gridDim.x) {
    const int64_t offset = layout.RowOffset(row);
    const T* y = y_data + offset;
    const T* dy = dy_data + offset;
    T* dx = dx_data + offset;
    C local = 0;
    for (int64_t c = threadIdx.x; c < layout.classes; c += blockDim.x) {
      const int64_t k = c * layout.inner;
      local += kLog ? Convert<C>(dy[k]) : Convert<C>(y[k]) * Convert<C>(dy[k]);
    }
    const C dot = BlockReduce(local, SumOp<C>());
    for (int64_t c = threadIdx.x; c < layout.classes; c += blockDim.x) {
      const int64_t k = c * layout.inner;
      const C y_value = Convert<C>(y[k]);
      const C dy_value = Convert<C>(dy[k]);
      dx[k] = Convert<T>(kLog ? dy_value - dm::Exp(y_value) * dot : y_value * (dy_value - dot));
    }
  }
}

int RowBlocks(int64_t rows) { return static_cast<int>(std::min<int64_t>(rows, kMaxBlocks * 4)); }

template <typename T, bool kLog>
class SoftmaxGpuKernel final : public Kernel {
 public:
  explicit SoftmaxGpuKernel(const KernelInitContext& ctx)
      : layout_(LayoutOf(ctx.Desc("in").shape, ctx.Attr<int64_t>("axis"))) {}
  void Forward(KernelContext& ctx) override {
    if (layout_.rows() == 0 || layout_.classes == 0) { return; }
    SoftmaxKernel<T, kLog><<<RowBlocks(layout_.rows()), RowBlockSize(layout_.classes), 0,
                             ctx.cuda_device().cuda_stream()>>>(layout_, ctx.Input("in").data<T>(),
                                                                ctx.Output("out").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  RowLayout layout_;
};

template <typename T, bool kLog>
class SoftmaxGradGpuKernel final : public Kernel {
 public:
  explicit SoftmaxGradGpuKernel(const KernelInitContext& ctx)
      : layout_(LayoutOf(ctx.Desc("y").shape, ctx.Attr<int64_t>("axis"))) {}
  void Forward(KernelContext& ctx) override {
    if (layout_.rows() == 0 || layout_.classes == 0) { return; }
    SoftmaxGradKernel<T, kLog><<<RowBlocks(layout_.rows()), RowBlockSize(layout_.classes), 0,
                                 ctx.cuda_device().cuda_stream()>>>(
        layout_, ctx.Input("y").data<T>(), ctx.Input("dy").data<T>(),
        ctx.Output("dx").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  RowLayout layout_;
};

// prob = softmax(prediction row); out = logsumexp(row) - row[label] (NaN for a
// bad label).
template <typename T, typename Label>
__global__ void SparseSoftmaxCrossEntropyKernel(int64_t rows, int64_t classes, const T* prediction,
                                                const Label* label, T* prob, T* out) {
  using C = ComputeType<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = prediction + row * classes;
    T* p = prob + row * classes;
    C max_value, sum;
    RowMaxAndSum(x, classes, int64_t{1}, &max_value, &sum);
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      p[c] = Convert<T>(dm::Exp(Convert<C>(x[c]) - max_value) / sum);
    }
    if (threadIdx.x == 0) {
      const int64_t k = static_cast<int64_t>(label[row]);
      out[row] = Convert<T>(k >= 0 && k < classes ? max_value + dm::Log(sum) - Convert<C>(x[k])
                                                  : C(CUDART_NAN));
    }
  }
}

// prediction_diff = prob * dy[row], minus dy[row] at the label.
template <typename T, typename Label>
__global__ void SparseSoftmaxCrossEntropyGradKernel(int64_t n, int64_t classes, const T* prob,
                                                    const T* dy, const Label* label, T* diff) {
  using C = ComputeType<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t row = i / classes;
    const int64_t c = i % classes;
    const C scale = Convert<C>(dy[row]);
    const C value = Convert<C>(prob[i]) * scale;
    diff[i] = Convert<T>(static_cast<int64_t>(label[row]) == c ? value - scale : value);
  }
}

template <typename T>
class SparseSoftmaxCrossEntropyGpuKernel final : public Kernel {
 public:
  explicit SparseSoftmaxCrossEntropyGpuKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("prediction").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = ctx.Desc("label").shape.elem_count();
    check_ = DeviceIndexCheck(
        ctx.conf().op_type() + " (op '" + ctx.conf().name() + "'): label value",
        SingleLimit(classes_));
  }
  void Forward(KernelContext& ctx) override {
    if (rows_ == 0 || classes_ == 0) { return; }
    const Blob& label = ctx.Input("label");
    check_.Enqueue(ctx.cuda_device(), label);
    const T* prediction = ctx.Input("prediction").data<T>();
    T* prob = ctx.Output("prob").mut_data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    const int blocks = RowBlocks(rows_), threads = RowBlockSize(classes_);
    if (label.data_type() == kInt32) {
      SparseSoftmaxCrossEntropyKernel<T><<<blocks, threads, 0, stream>>>(
          rows_, classes_, prediction, label.data<int32_t>(), prob, out);
    } else {
      SparseSoftmaxCrossEntropyKernel<T><<<blocks, threads, 0, stream>>>(
          rows_, classes_, prediction, label.data<int64_t>(), prob, out);
    }
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t rows_, classes_;
  DeviceIndexCheck check_;
};

template <typename T>
class SparseSoftmaxCrossEntropyGradGpuKernel final : public Kernel {
 public:
  explicit SparseSoftmaxCrossEntropyGradGpuKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("prob").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = ctx.Desc("label").shape.elem_count();
  }
  void Forward(KernelContext& ctx) override {
    const int64_t n = rows_ * classes_;
    if (n == 0) { return; }
    const Blob& label = ctx.Input("label");
    const T* prob = ctx.Input("prob").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* diff = ctx.Output("prediction_diff").mut_data<T>();
    cudaStream_t stream = ctx.cuda_device().cuda_stream();
    if (label.data_type() == kInt32) {
      SparseSoftmaxCrossEntropyGradKernel<T><<<BlockCount(n), kBlockSize, 0, stream>>>(
          n, classes_, prob, dy, label.data<int32_t>(), diff);
    } else {
      SparseSoftmaxCrossEntropyGradKernel<T><<<BlockCount(n), kBlockSize, 0, stream>>>(
          n, classes_, prob, dy, label.data<int64_t>(), diff);
    }
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t rows_, classes_;
};

// prob = softmax(prediction row); out = logsumexp(row) sum(label) - sum(label prediction), as
// the CPU (exact when a prob underflows).
template <typename T>
__global__ void SoftmaxCrossEntropyKernel(int64_t rows, int64_t classes, const T* prediction,
                                          const T* label, T* prob, T* out) {
  using C = ComputeType<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = prediction + row * classes;
    const T* l = label + row * classes;
    T* p = prob + row * classes;
    C max_value, sum;
    RowMaxAndSum(x, classes, int64_t{1}, &max_value, &sum);
    C label_sum = 0, dot = 0;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      p[c] = Convert<T>(dm::Exp(Convert<C>(x[c]) - max_value) / sum);
      label_sum += Convert<C>(l[c]);
      dot += Convert<C>(l[c]) * Convert<C>(x[c]);
    }
    label_sum = BlockReduce(label_sum, SumOp<C>());
    dot = BlockReduce(dot, SumOp<C>());
    if (threadIdx.x == 0) { out[row] = Convert<T>((max_value + dm::Log(sum)) * label_sum - dot); }
  }
}

// prediction_diff = (prob sum(label) - label) dy[row].
template <typename T>
__global__ void SoftmaxCrossEntropyGradKernel(int64_t rows, int64_t classes, const T* prob,
                                              const T* label, const T* dy, T* diff) {
  using C = ComputeType<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t offset = row * classes;
    C label_sum = 0;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      label_sum += Convert<C>(label[offset + c]);
    }
    label_sum = BlockReduce(label_sum, SumOp<C>());
    const C scale = Convert<C>(dy[row]);
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      diff[offset + c] = Convert<T>(
          (Convert<C>(prob[offset + c]) * label_sum - Convert<C>(label[offset + c])) * scale);
    }
  }
}

template <typename T>
class SoftmaxCrossEntropyGpuKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyGpuKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("prediction").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = classes_ == 0 ? 0 : shape.elem_count() / classes_;
  }
  void Forward(KernelContext& ctx) override {
    if (rows_ == 0) { return; }
    SoftmaxCrossEntropyKernel<T>
        <<<RowBlocks(rows_), RowBlockSize(classes_), 0, ctx.cuda_device().cuda_stream()>>>(
            rows_, classes_, ctx.Input("prediction").data<T>(), ctx.Input("label").data<T>(),
            ctx.Output("prob").mut_data<T>(), ctx.Output("out").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t rows_, classes_;
};

template <typename T>
class SoftmaxCrossEntropyGradGpuKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyGradGpuKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("prob").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = classes_ == 0 ? 0 : shape.elem_count() / classes_;
  }
  void Forward(KernelContext& ctx) override {
    if (rows_ == 0) { return; }
    SoftmaxCrossEntropyGradKernel<T>
        <<<RowBlocks(rows_), RowBlockSize(classes_), 0, ctx.cuda_device().cuda_stream()>>>(
            rows_, classes_, ctx.Input("prob").data<T>(), ctx.Input("label").data<T>(),
            ctx.Input("dy").data<T>(), ctx.Output("prediction_diff").mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t rows_, classes_;
};

template <typename T>
using PlainSoftmaxKernel = SoftmaxGpuKernel<T, false>;
template <typename T>
using LogSoftmaxKernel = SoftmaxGpuKernel<T, true>;
template <typename T>
using PlainSoftmaxGradKernel = SoftmaxGradGpuKernel<T, false>;
template <typename T>
using LogSoftmaxGradKernel = SoftmaxGradGpuKernel<T, true>;

}  // namespace

OF_REGISTER_GPU_FLOATING_KERNELS("softmax", PlainSoftmaxKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("softmax_grad", PlainSoftmaxGradKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("log_softmax", LogSoftmaxKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("log_softmax_grad", LogSoftmaxGradKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("sparse_softmax_cross_entropy",
                                 SparseSoftmaxCrossEntropyGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("sparse_softmax_cross_entropy_grad",
                                 SparseSoftmaxCrossEntropyGradGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("softmax_cross_entropy", SoftmaxCrossEntropyGpuKernel);
OF_REGISTER_GPU_FLOATING_KERNELS("softmax_cross_entropy_grad", SoftmaxCrossEntropyGradGpuKernel);

}  // namespace cuda
}  // namespace oneflow
