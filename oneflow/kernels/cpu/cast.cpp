// CPU cast: registered per output dtype; the input dtype is dispatched inside. float16 (a
// storage type, GCC's _Float16: F16C/AVX-512 conversions) converts through float.

#include <cstring>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
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
    ParallelForElements(ctx, in.elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) {
                            target[i] = static_cast<Out>(source[i]);
                          }
                        }));
  }
};

// Out converted from float16 through float.
template <typename Out>
struct ConvertedFromHalf {
  _Float16 value;
  operator Out() const { return static_cast<Out>(static_cast<float>(value)); }  // NOLINT
};

template <typename Out>
class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    if (in.data_type() == kFloat16) {
      CastFrom<Out>{in, ctx.Output("out").mut_data<Out>(), ctx}
          .template operator()<ConvertedFromHalf<Out>>();
      return;
    }
    SwitchDataType(in.data_type(), CastFrom<Out>{in, ctx.Output("out").mut_data<Out>(), ctx});
  }
};

// To float16: through float (one rounding for float inputs).
struct HalfFrom {
  const Blob& in;
  _Float16* out;
  KernelContext& ctx;

  template <typename In>
  void operator()() const {
    const In* source = in.data<In>();
    _Float16* target = out;
    ParallelForElements(ctx, in.elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          for (int64_t i = begin; i < end; ++i) {
                            target[i] = static_cast<_Float16>(static_cast<float>(source[i]));
                          }
                        }));
  }
};

class CastToHalfKernel final : public Kernel {
 public:
  explicit CastToHalfKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    _Float16* out = static_cast<_Float16*>(ctx.Output("out").mut_raw());
    if (in.data_type() == kFloat16) {
      std::memcpy(out, in.raw(), in.byte_size());
      return;
    }
    SwitchDataType(in.data_type(), HalfFrom{in, out, ctx});
  }
};

// fused_cast_scale: y = Out(x) * scalar[0], x float32 or float64.
template <typename Out>
class FusedCastScaleKernel final : public Kernel {
 public:
  explicit FusedCastScaleKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    const Blob& x = ctx.Input("x");
    const Out scale = ctx.Input("scalar").data<Out>()[0];
    Out* y = ctx.Output("y").mut_data<Out>();
    auto scaled = [&]<typename In>() {
      const In* source = x.data<In>();
      ParallelForElements(ctx, x.elem_count(), kElementwiseGrain,
                          PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                            for (int64_t i = begin; i < end; ++i) {
                              y[i] = static_cast<Out>(source[i]) * scale;
                            }
                          }));
    };
    if (x.data_type() == kFloat) {
      scaled.template operator()<float>();
    } else {
      scaled.template operator()<double>();
    }
  }
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("fused_cast_scale", FusedCastScaleKernel);
REGISTER_KERNEL("cast", "cpu", kFloat, CastKernel<float>);
REGISTER_KERNEL("cast", "cpu", kDouble, CastKernel<double>);
REGISTER_KERNEL("cast", "cpu", kInt8, CastKernel<int8_t>);
REGISTER_KERNEL("cast", "cpu", kInt32, CastKernel<int32_t>);
REGISTER_KERNEL("cast", "cpu", kInt64, CastKernel<int64_t>);
REGISTER_KERNEL("cast", "cpu", kUInt8, CastKernel<uint8_t>);
REGISTER_KERNEL("cast", "cpu", kFloat16, CastToHalfKernel);

}  // namespace oneflow
