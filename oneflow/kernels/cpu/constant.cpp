// CPU constant and constant_like: fill the output with one value, converted to the element type
// once at construction.

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
void Fill(KernelContext& ctx, Blob& out, T value) {
  T* data = out.mut_data<T>();
  ParallelForElements(ctx, out.elem_count(), kElementwiseGrain, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) { data[i] = value; }
  });
}

template <typename T>
class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(const KernelInitContext& ctx) {
    value_ = ctx.Attr<bool>("is_floating_value")
                 ? static_cast<T>(ctx.Attr<double>("floating_value"))
                 : static_cast<T>(ctx.Attr<int64_t>("integer_value"));
  }
  void Forward(KernelContext& ctx) override { Fill(ctx, ctx.Output("out"), value_); }

 private:
  T value_;
};

template <typename T>
class ConstantLikeKernel final : public Kernel {
 public:
  explicit ConstantLikeKernel(const KernelInitContext& ctx)
      : value_(static_cast<T>(ctx.Attr<double>("value"))) {}
  void Forward(KernelContext& ctx) override { Fill(ctx, ctx.Output("out"), value_); }

 private:
  T value_;
};

}  // namespace

REGISTER_CPU_ALL_TYPE_KERNELS("constant", ConstantKernel);
REGISTER_CPU_ALL_TYPE_KERNELS("constant_like", ConstantLikeKernel);

}  // namespace oneflow
