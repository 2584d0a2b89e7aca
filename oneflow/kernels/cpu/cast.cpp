// CPU cast: registered per output dtype; the input dtype is dispatched inside.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename Out>
struct CastFrom {
  const Blob& in;
  Out* out;
  KernelContext& ctx;

  template <typename In>
  void operator()() const {
    const In* source = in.data<In>();
    Out* target = out;
    ParallelForElements(ctx, in.elem_count(), kElementwiseGrain, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) { target[i] = static_cast<Out>(source[i]); }
    });
  }
};

template <typename Out>
class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    SwitchDataType(in.data_type(), CastFrom<Out>{in, ctx.Output("out").mut_data<Out>(), ctx});
  }
};

}  // namespace

REGISTER_KERNEL("cast", "cpu", kFloat, CastKernel<float>);
REGISTER_KERNEL("cast", "cpu", kDouble, CastKernel<double>);
REGISTER_KERNEL("cast", "cpu", kInt8, CastKernel<int8_t>);
REGISTER_KERNEL("cast", "cpu", kInt32, CastKernel<int32_t>);
REGISTER_KERNEL("cast", "cpu", kInt64, CastKernel<int64_t>);
REGISTER_KERNEL("cast", "cpu", kUInt8, CastKernel<uint8_t>);

}  // namespace oneflow
