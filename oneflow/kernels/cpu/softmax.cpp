// CPU softmax (numerically stable: the row maximum is subtracted before exp) and softmax_grad,
// both over the last axis, rows split over the compute threads.

#include <algorithm>
#include <cmath>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/cpu/softmax_row.h"

namespace oneflow {

namespace {

template <typename T>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("in").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = classes_ == 0 ? 0 : shape.elem_count() / classes_;
  }

  void Forward(KernelContext& ctx) override {
    const T* in = ctx.Input("in").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const int64_t classes = classes_;
    ParallelForRows(ctx, rows_, classes, [=](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        SoftmaxRow(in + row * classes, out + row * classes, classes);
      }
    });
  }

 private:
  int64_t rows_, classes_;
};

template <typename T>
class SoftmaxGradKernel final : public Kernel {
 public:
  explicit SoftmaxGradKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("y").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = classes_ == 0 ? 0 : shape.elem_count() / classes_;
  }

  void Forward(KernelContext& ctx) override {
    const T* y_data = ctx.Input("y").data<T>();
    const T* dy_data = ctx.Input("dy").data<T>();
    T* dx_data = ctx.Output("dx").mut_data<T>();
    const int64_t classes = classes_;
    ParallelForRows(ctx, rows_, classes, [=](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const T* __restrict__ y = y_data + row * classes;
        const T* __restrict__ dy = dy_data + row * classes;
        T* __restrict__ dx = dx_data + row * classes;
        T dot = T(0);
        for (int64_t c = 0; c < classes; ++c) { dot += y[c] * dy[c]; }
        for (int64_t c = 0; c < classes; ++c) { dx[c] = y[c] * (dy[c] - dot); }
      }
    });
  }

 private:
  int64_t rows_, classes_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("softmax", SoftmaxKernel);
REGISTER_CPU_FLOATING_KERNELS("softmax_grad", SoftmaxGradKernel);

}  // namespace oneflow
