// CPU sparse_softmax_cross_entropy and its gradient op. The kernel's dtype is the prediction's;
// int32 and int64 labels are both handled inside. Labels are validated serially before the
// parallel part so that the error is raised on the calling thread.

#include <algorithm>
#include <cmath>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/cpu/softmax_row.h"

namespace oneflow {

namespace {

// Reads label n as int64 from an int32 or int64 blob.
int64_t LabelAt(const Blob& label, int64_t index) {
  return label.data_type() == kInt32 ? static_cast<int64_t>(label.data<int32_t>()[index])
                                     : label.data<int64_t>()[index];
}

void CheckLabels(const std::string& op_type, const Blob& label, int64_t depth) {
  for (int64_t index = 0; index < label.elem_count(); ++index) {
    int64_t value = LabelAt(label, index);
    if (value < 0 || value >= depth) {
      throw Error(ErrorKind::kValue)
          << op_type << ": label value " << value << " at index " << index
          << " is out of range [0, " << depth << ") for depth " << depth;
    }
  }
}

template <typename T>
class SparseSoftmaxCrossEntropyKernel final : public Kernel {
 public:
  explicit SparseSoftmaxCrossEntropyKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("prediction").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = ctx.Desc("label").shape.elem_count();
  }

  void Forward(KernelContext& ctx) override {
    const Blob& label = ctx.Input("label");
    CheckLabels("sparse_softmax_cross_entropy", label, classes_);
    const T* prediction = ctx.Input("prediction").data<T>();
    T* prob = ctx.Output("prob").mut_data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const int64_t classes = classes_;
    if (classes <= kShortRowClasses) {
      // -log(softmax(x)[k]) = logsumexp(x) - x[k], exact even when softmax(x)[k] underflows.
      ParallelForRows(ctx, rows_, classes, [&, prediction, prob, out](int64_t begin, int64_t end) {
        SoftmaxShortRows<T, false>(prediction + begin * classes, prob + begin * classes,
                                   end - begin, classes, out + begin);
        for (int64_t row = begin; row < end; ++row) {
          out[row] -= prediction[row * classes + LabelAt(label, row)];
        }
      });
      return;
    }
    ParallelForRows(
        ctx, rows_, classes,
        PerIsa([&, prediction, prob, out](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
          SoftmaxRows<T, false>(prediction + begin * classes, prob + begin * classes,
                                end - begin, classes, out + begin);
          // -log(softmax(x)[k]) = logsumexp(x) - x[k], exact even when softmax(x)[k] underflows.
          for (int64_t row = begin; row < end; ++row) {
            out[row] -= prediction[row * classes + LabelAt(label, row)];
          }
        }));
  }

 private:
  int64_t rows_, classes_;
};

template <typename T>
class SparseSoftmaxCrossEntropyGradKernel final : public Kernel {
 public:
  explicit SparseSoftmaxCrossEntropyGradKernel(const KernelInitContext& ctx) {
    const Shape& shape = ctx.Desc("prob").shape;
    classes_ = shape.At(shape.num_axes() - 1);
    rows_ = ctx.Desc("label").shape.elem_count();
  }

  void Forward(KernelContext& ctx) override {
    const Blob& label = ctx.Input("label");
    CheckLabels("sparse_softmax_cross_entropy_grad", label, classes_);
    const T* prob = ctx.Input("prob").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* diff = ctx.Output("prediction_diff").mut_data<T>();
    const int64_t classes = classes_;
    ParallelForRows(ctx, rows_, classes,
                    PerIsa([&, prob, dy, diff](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t row = begin; row < end; ++row) {
                        const T* __restrict__ p = prob + row * classes;
                        T* __restrict__ d = diff + row * classes;
                        const T scale = dy[row];
                        for (int64_t c = 0; c < classes; ++c) { d[c] = p[c] * scale; }
                        d[LabelAt(label, row)] -= scale;
                      }
                    }));
  }

 private:
  int64_t rows_, classes_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("sparse_softmax_cross_entropy", SparseSoftmaxCrossEntropyKernel);
REGISTER_CPU_FLOATING_KERNELS("sparse_softmax_cross_entropy_grad",
                              SparseSoftmaxCrossEntropyGradKernel);

}  // namespace oneflow
