// CPU softmax, log_softmax and their gradients over any axis. The blob is seen as
// (outer, classes, inner) around the axis. inner == 1 (the last axis) runs contiguous rows a
// vector's lanes of them at a time (softmax_row.h), rows of under 32 classes 64 at a time
// transposed; otherwise each outer slice keeps per-position running maxima and sums in vectors
// of length inner, so every loop runs over contiguous memory and vectorizes (no transposes).
// Outer slices are split over the compute threads; the loops run per vector ISA
// (cpu_dispatch.h).

#include <algorithm>
#include <cmath>
#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/cpu/softmax_row.h"
#include "oneflow/kernels/fast_math.h"

namespace oneflow {

namespace {

struct AxisLayout {
  int64_t outer = 1, classes = 1, inner = 1;
  AxisLayout(const KernelInitContext& ctx, const std::string& argument) {
    const Shape& shape = ctx.Desc(argument).shape;
    int64_t axis = ctx.Attr<int64_t>("axis");
    if (axis < 0) { axis += shape.num_axes(); }
    for (int64_t a = 0; a < axis; ++a) { outer *= shape.At(a); }
    classes = shape.At(axis);
    for (int64_t a = axis + 1; a < shape.num_axes(); ++a) { inner *= shape.At(a); }
  }
  int64_t slice() const { return classes * inner; }
};

template <typename T, bool kLog>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInitContext& ctx) : layout_(ctx, "in") {}

  void Forward(KernelContext& ctx) override {
    const T* in = ctx.Input("in").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const AxisLayout layout = layout_;
    if (layout.classes == 0 || layout.inner == 0) { return; }
    if (layout.inner == 1 && layout.classes <= kShortRowClasses) {
      const int64_t classes = layout.classes;
      ParallelForRows(ctx, layout.outer, classes, [=](int64_t begin, int64_t end) {
        SoftmaxShortRows<T, kLog>(in + begin * classes, out + begin * classes, end - begin,
                                  classes);
      });
      return;
    }
    if (layout.inner == 1) {
      const int64_t classes = layout.classes;
      ParallelForRows(ctx, layout.outer, classes,
                      PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                        SoftmaxRows<T, kLog>(in + begin * classes, out + begin * classes,
                                             end - begin, classes);
                      }));
      return;
    }
    ParallelForRows(ctx, layout.outer, layout.slice(), [=](int64_t begin, int64_t end) {
      std::vector<T> buffer(2 * layout.inner);
      for (int64_t o = begin; o < end; ++o) {
        SoftmaxSlice<T, kLog>(in + o * layout.slice(), out + o * layout.slice(), layout.classes,
                              layout.inner, buffer.data(), buffer.data() + layout.inner);
      }
    });
  }

 private:
  AxisLayout layout_;
};

// softmax: dx = y (dy - sum(y dy));  log_softmax: dx = dy - exp(y) sum(dy).
template <typename T, bool kLog>
class SoftmaxGradKernel final : public Kernel {
 public:
  explicit SoftmaxGradKernel(const KernelInitContext& ctx) : layout_(ctx, "y") {}

  void Forward(KernelContext& ctx) override {
    const T* y_data = ctx.Input("y").data<T>();
    const T* dy_data = ctx.Input("dy").data<T>();
    T* dx_data = ctx.Output("dx").mut_data<T>();
    const AxisLayout layout = layout_;
    if (layout.classes == 0 || layout.inner == 0) { return; }
    const int64_t classes = layout.classes, inner = layout.inner;
    ParallelForRows(
        ctx, layout.outer, layout.slice(),
        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
          std::vector<T> dot(inner);
          for (int64_t o = begin; o < end; ++o) {
            const T* __restrict__ y = y_data + o * layout.slice();
            const T* __restrict__ dy = dy_data + o * layout.slice();
            T* __restrict__ dx = dx_data + o * layout.slice();
            T* __restrict__ d = dot.data();
            if (inner == 1) {
              const T sum = kLog ? RowSum<T, false>(dy, dy, classes)
                                 : RowSum<T, true>(y, dy, classes);
              for (int64_t c = 0; c < classes; ++c) {
                dx[c] = kLog ? dy[c] - fast_math::Exp(y[c]) * sum : y[c] * (dy[c] - sum);
              }
              continue;
            }
            for (int64_t i = 0; i < inner; ++i) { d[i] = T(0); }
            for (int64_t c = 0; c < classes; ++c) {
              for (int64_t i = 0; i < inner; ++i) {
                const int64_t k = c * inner + i;
                d[i] += kLog ? dy[k] : y[k] * dy[k];
              }
            }
            for (int64_t c = 0; c < classes; ++c) {
              for (int64_t i = 0; i < inner; ++i) {
                const int64_t k = c * inner + i;
                dx[k] = kLog ? dy[k] - fast_math::Exp(y[k]) * d[i] : y[k] * (dy[k] - d[i]);
              }
            }
          }
        }));
  }

 private:
  AxisLayout layout_;
};

template <typename T>
using PlainSoftmaxKernel = SoftmaxKernel<T, false>;
template <typename T>
using LogSoftmaxKernel = SoftmaxKernel<T, true>;
template <typename T>
using PlainSoftmaxGradKernel = SoftmaxGradKernel<T, false>;
template <typename T>
using LogSoftmaxGradKernel = SoftmaxGradKernel<T, true>;

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("softmax", PlainSoftmaxKernel);
REGISTER_CPU_FLOATING_KERNELS("softmax_grad", PlainSoftmaxGradKernel);
REGISTER_CPU_FLOATING_KERNELS("log_softmax", LogSoftmaxKernel);
REGISTER_CPU_FLOATING_KERNELS("log_softmax_grad", LogSoftmaxGradKernel);

}  // namespace oneflow
