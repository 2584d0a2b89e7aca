// GPU max_pool_{1,2,3}d, avg_pool_{1,2,3}d and their gradients, own kernels with the CPU
// kernels' semantics (cpu/pool.cpp, ops/pool.cpp): padding never takes part (a max ignores it,
// a mean divides by the number of input elements in the window), a NaN counts as the maximum,
// and the max gradient goes to the first maximum of each window in row-major window order.
// 1-D and 2-D pools run as 3-D ones with unit leading axes (WindowGeometry::WidenedTo3D).
//
// Forward: one thread per output element. Gradients: one thread per input element, which
// gathers dy from the windows that contain it (outputs in row-major order, as the CPU adds them):
// every element is written once, no atomics, deterministic.

#include <cuda_fp16.h>

#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/window_geometry.h"
#include "oneflow/kernels/cuda/elementwise.cuh"

namespace oneflow {
namespace cuda {

namespace {

// A 3-D pooling geometry, passed to the device by value.
struct Pool3D {
  int64_t batch, channels;
  int64_t input[3], output[3], window[3], strides[3], padding[3];
  bool channels_first;

  // Offset of (n, c, spatial position) in an activation with spatial sizes `sizes`.
  __device__ int64_t Offset(int64_t n, int64_t c, int64_t z, int64_t y, int64_t x,
                            const int64_t* sizes) const {
    if (channels_first) {
      return (((n * channels + c) * sizes[0] + z) * sizes[1] + y) * sizes[2] + x;
    }
    return ((((n * sizes[0] + z) * sizes[1] + y) * sizes[2] + x) * channels + c);
  }
  // Splits a flat index of an activation with spatial sizes `sizes` into (n, c, position).
  __device__ void Split(int64_t index, const int64_t* sizes, int64_t* n, int64_t* c,
                        int64_t* position) const {
    if (!channels_first) {
      *c = index % channels;
      index /= channels;
    }
    for (int axis = 2; axis >= 0; --axis) {
      position[axis] = index % sizes[axis];
      index /= sizes[axis];
    }
    if (channels_first) {
      *c = index % channels;
      index /= channels;
    }
    *n = index;
  }
  // The input range [begin, end) of output position `o` along `axis`, clipped to the input.
  __device__ void WindowRange(int axis, int64_t o, int64_t* begin, int64_t* end) const {
    const int64_t start = o * strides[axis] - padding[axis];
    *begin = start < 0 ? 0 : start;
    const int64_t stop = start + window[axis];
    *end = stop < input[axis] ? stop : input[axis];
  }
  // The output positions [begin, end) along `axis` whose windows contain input position i.
  __device__ void OutputRange(int axis, int64_t i, int64_t* begin, int64_t* end) const {
    const int64_t shifted = i + padding[axis];
    *begin = shifted < window[axis] ? 0 : (shifted - window[axis]) / strides[axis] + 1;
    const int64_t last = shifted / strides[axis] + 1;
    *end = last < output[axis] ? last : output[axis];
  }
};

Pool3D MakePool3D(const KernelInitContext& ctx) {
  const Shape& x = ctx.Desc("x").shape;
  const int64_t spatial_axes = x.num_axes() - 2;
  const WindowGeometry geometry =
      ComputeWindowGeometry(ctx.conf().op_type(), x, spatial_axes, PoolWindowAttributes(ctx.conf()))
          .WidenedTo3D();
  Pool3D pool;
  pool.batch = geometry.batch;
  pool.channels = geometry.channels;
  pool.channels_first = geometry.channels_first;
  for (int axis = 0; axis < 3; ++axis) {
    pool.input[axis] = geometry.input[axis];
    pool.output[axis] = geometry.output[axis];
    pool.window[axis] = geometry.window[axis];
    pool.strides[axis] = geometry.strides[axis];
    pool.padding[axis] = geometry.padding_before[axis];
  }
  return pool;
}

// Offset (in x) of the first maximum of output o's window (NaN counts as the maximum), or -1
// for a window without input elements.
template <typename T>
__device__ int64_t ArgMax(const Pool3D& p, const T* x, int64_t n, int64_t c, const int64_t* o) {
  using C = ComputeType<T>;
  int64_t begin[3], end[3];
  for (int axis = 0; axis < 3; ++axis) { p.WindowRange(axis, o[axis], &begin[axis], &end[axis]); }
  int64_t best = -1;
  C best_value = 0;
  for (int64_t z = begin[0]; z < end[0]; ++z) {
    for (int64_t y = begin[1]; y < end[1]; ++y) {
      for (int64_t w = begin[2]; w < end[2]; ++w) {
        const int64_t offset = p.Offset(n, c, z, y, w, p.input);
        const C value = Convert<C>(x[offset]);
        if (best < 0 || value > best_value || (value != value && best_value == best_value)) {
          best = offset;
          best_value = value;
        }
      }
    }
  }
  return best;
}

template <typename T>
__device__ int64_t WindowCount(const Pool3D& p, const int64_t* o) {
  int64_t count = 1;
  for (int axis = 0; axis < 3; ++axis) {
    int64_t begin, end;
    p.WindowRange(axis, o[axis], &begin, &end);
    count *= end > begin ? end - begin : 0;
  }
  return count;
}

template <typename T, bool kMax>
__global__ void PoolForwardKernel(Pool3D p, int64_t n_out, const T* x, T* y) {
  using C = ComputeType<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < n_out;
       index += stride) {
    int64_t n, c, o[3];
    p.Split(index, p.output, &n, &c, o);
    if constexpr (kMax) {
      const int64_t best = ArgMax(p, x, n, c, o);
      y[index] = best < 0 ? Convert<T>(C(0)) : x[best];
    } else {
      int64_t begin[3], end[3];
      for (int axis = 0; axis < 3; ++axis) {
        p.WindowRange(axis, o[axis], &begin[axis], &end[axis]);
      }
      C sum = 0;
      for (int64_t z = begin[0]; z < end[0]; ++z) {
        for (int64_t v = begin[1]; v < end[1]; ++v) {
          for (int64_t w = begin[2]; w < end[2]; ++w) {
            sum += Convert<C>(x[p.Offset(n, c, z, v, w, p.input)]);
          }
        }
      }
      const int64_t count = WindowCount<T>(p, o);
      y[index] = Convert<T>(count > 0 ? sum / static_cast<C>(count) : C(0));
    }
  }
}

template <typename T, bool kMax>
__global__ void PoolGradKernel(Pool3D p, int64_t n_in, const T* x, const T* dy, T* dx) {
  using C = ComputeType<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < n_in;
       index += stride) {
    int64_t n, c, i[3];
    p.Split(index, p.input, &n, &c, i);
    int64_t begin[3], end[3];
    for (int axis = 0; axis < 3; ++axis) { p.OutputRange(axis, i[axis], &begin[axis], &end[axis]); }
    C sum = 0;
    int64_t o[3];
    for (o[0] = begin[0]; o[0] < end[0]; ++o[0]) {
      for (o[1] = begin[1]; o[1] < end[1]; ++o[1]) {
        for (o[2] = begin[2]; o[2] < end[2]; ++o[2]) {
          const C gradient = Convert<C>(dy[p.Offset(n, c, o[0], o[1], o[2], p.output)]);
          if constexpr (kMax) {
            if (ArgMax(p, x, n, c, o) == index) { sum += gradient; }
          } else {
            sum += gradient / static_cast<C>(WindowCount<T>(p, o));
          }
        }
      }
    }
    dx[index] = Convert<T>(sum);
  }
}

template <typename T, bool kMax>
class PoolGpuKernel final : public Kernel {
 public:
  explicit PoolGpuKernel(const KernelInitContext& ctx) : pool_(MakePool3D(ctx)) {}
  void Forward(KernelContext& ctx) override {
    Blob& y = ctx.Output("y");
    const int64_t n = y.elem_count();
    if (n == 0) { return; }
    PoolForwardKernel<T, kMax><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        pool_, n, ctx.Input("x").data<T>(), y.mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  Pool3D pool_;
};

template <typename T, bool kMax>
class PoolGradGpuKernel final : public Kernel {
 public:
  explicit PoolGradGpuKernel(const KernelInitContext& ctx) : pool_(MakePool3D(ctx)) {}
  void Forward(KernelContext& ctx) override {
    Blob& dx = ctx.Output("dx");
    const int64_t n = dx.elem_count();
    if (n == 0) { return; }
    PoolGradKernel<T, kMax><<<BlockCount(n), kBlockSize, 0, ctx.cuda_device().cuda_stream()>>>(
        pool_, n, ctx.Input("x").data<T>(), ctx.Input("dy").data<T>(), dx.mut_data<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  }

 private:
  Pool3D pool_;
};

template <typename T>
using MaxPoolKernel = PoolGpuKernel<T, true>;
template <typename T>
using AvgPoolKernel = PoolGpuKernel<T, false>;
template <typename T>
using MaxPoolGradKernel = PoolGradGpuKernel<T, true>;
template <typename T>
using AvgPoolGradKernel = PoolGradGpuKernel<T, false>;

}  // namespace

#define OF_REGISTER_POOL_KERNELS(op_type, Forward, Grad) \
  OF_REGISTER_GPU_FLOATING_KERNELS(op_type, Forward);    \
  OF_REGISTER_GPU_FLOATING_KERNELS(op_type "_grad", Grad)

OF_REGISTER_POOL_KERNELS("max_pool_1d", MaxPoolKernel, MaxPoolGradKernel);
OF_REGISTER_POOL_KERNELS("max_pool_2d", MaxPoolKernel, MaxPoolGradKernel);
OF_REGISTER_POOL_KERNELS("max_pool_3d", MaxPoolKernel, MaxPoolGradKernel);
OF_REGISTER_POOL_KERNELS("avg_pool_1d", AvgPoolKernel, AvgPoolGradKernel);
OF_REGISTER_POOL_KERNELS("avg_pool_2d", AvgPoolKernel, AvgPoolGradKernel);
OF_REGISTER_POOL_KERNELS("avg_pool_3d", AvgPoolKernel, AvgPoolGradKernel);

}  // namespace cuda
}  // namespace oneflow
