// CPU one_hot and clip_by_scalar(_grad): elementwise loops split over the compute threads.
// one_hot validates every index against depth first (ValueError naming it).

#include <algorithm>

#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
T FloatingOrIntegral(const KernelInitContext& ctx, const std::string& floating,
                     const std::string& integral) {
  return IsFloatingDataType(DataTypeOf<T>::value) ? static_cast<T>(ctx.Attr<double>(floating))
                                                  : static_cast<T>(ctx.Attr<int64_t>(integral));
}

template <typename T>
class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(const KernelInitContext& ctx)
      : op_name_(ctx.conf().name()),
        depth_(ctx.Attr<int64_t>("depth")),
        on_(FloatingOrIntegral<T>(ctx, "floating_on_value", "integer_on_value")),
        off_(FloatingOrIntegral<T>(ctx, "floating_off_value", "integer_off_value")) {}

  void Forward(KernelContext& ctx) override {
    const Blob& indices = ctx.Input("indices");
    CheckIndicesInRange("one_hot (op '" + op_name_ + "')", "index", indices.data_type(),
                        indices.raw(), indices.elem_count(), depth_);
    T* out = ctx.Output("out").mut_data<T>();
    const DataType index_type = indices.data_type();
    const void* data = indices.raw();
    const int64_t depth = depth_;
    const T on = on_;
    const T off = off_;
    ParallelForRows(ctx, indices.elem_count(), depth,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      std::fill(out + begin * depth, out + end * depth, off);
                      for (int64_t row = begin; row < end; ++row) {
                        out[row * depth + IndexAt(index_type, data, row)] = on;
                      }
                    }));
  }

 private:
  std::string op_name_;
  int64_t depth_;
  T on_;
  T off_;
};

template <typename T>
struct ClipBounds {
  explicit ClipBounds(const KernelInitContext& ctx)
      : has_min(ctx.Attr<bool>("has_min")),
        has_max(ctx.Attr<bool>("has_max")),
        min(FloatingOrIntegral<T>(ctx, "floating_min", "integral_min")),
        max(FloatingOrIntegral<T>(ctx, "floating_max", "integral_max")) {}
  bool has_min;
  bool has_max;
  T min;
  T max;
};

template <typename T>
class ClipKernel final : public Kernel {
 public:
  explicit ClipKernel(const KernelInitContext& ctx) : bounds_(ctx) {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    T* y = ctx.Output("y").mut_data<T>();
    const ClipBounds<T> b = bounds_;
    ParallelForElements(ctx, ctx.Input("x").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) {
                            T value = x[i];
                            if (b.has_min && value < b.min) { value = b.min; }
                            if (b.has_max && value > b.max) { value = b.max; }
                            y[i] = value;
                          }
                        }));
  }

 private:
  ClipBounds<T> bounds_;
};

template <typename T>
class ClipGradKernel final : public Kernel {
 public:
  explicit ClipGradKernel(const KernelInitContext& ctx) : bounds_(ctx) {}
  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("dx").mut_data<T>();
    const ClipBounds<T> b = bounds_;
    ParallelForElements(ctx, ctx.Input("x").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) {
                            const bool clipped =
                                (b.has_min && x[i] < b.min) || (b.has_max && x[i] > b.max);
                            dx[i] = clipped ? T(0) : dy[i];
                          }
                        }));
  }

 private:
  ClipBounds<T> bounds_;
};

}  // namespace

REGISTER_CPU_ALL_TYPE_KERNELS("one_hot", OneHotKernel);
REGISTER_KERNEL("clip_by_scalar", "cpu", kFloat, ClipKernel<float>);
REGISTER_KERNEL("clip_by_scalar", "cpu", kDouble, ClipKernel<double>);
REGISTER_KERNEL("clip_by_scalar", "cpu", kInt8, ClipKernel<int8_t>);
REGISTER_KERNEL("clip_by_scalar", "cpu", kInt32, ClipKernel<int32_t>);
REGISTER_KERNEL("clip_by_scalar", "cpu", kInt64, ClipKernel<int64_t>);
REGISTER_CPU_FLOATING_KERNELS("clip_by_scalar_grad", ClipGradKernel);
// Integer gradients flow through casts, as in OneFlow 0.3 (its test_multiply).
REGISTER_KERNEL("clip_by_scalar_grad", "cpu", kInt8, ClipGradKernel<int8_t>);
REGISTER_KERNEL("clip_by_scalar_grad", "cpu", kInt32, ClipGradKernel<int32_t>);
REGISTER_KERNEL("clip_by_scalar_grad", "cpu", kInt64, ClipGradKernel<int64_t>);

}  // namespace oneflow
