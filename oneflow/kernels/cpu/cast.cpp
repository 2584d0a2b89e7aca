// CPU cast: registered per output dtype; the input dtype is dispatched inside. float16 (a
// storage type, GCC's _Float16) converts through float, with the vectorized conversions of
// half_conversion.h.

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/half_conversion.h"
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

// Out from float16 through float (half_conversion.h), in chunks of a stack buffer when Out is
// not float itself.
template <typename Out>
void CastFromHalf(KernelContext& ctx, const Blob& in, Out* out) {
  const _Float16* source = static_cast<const _Float16*>(in.raw());
  ParallelForElements(ctx, in.elem_count(), kElementwiseGrain, [=](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<Out, float>) {
      HalfToFloat(source + begin, out + begin, end - begin);
    } else {
      constexpr int64_t kChunk = 1024;
      float buffer[kChunk];
      for (int64_t chunk = begin; chunk < end; chunk += kChunk) {
        const int64_t count = std::min(kChunk, end - chunk);
        HalfToFloat(source + chunk, buffer, count);
        for (int64_t i = 0; i < count; ++i) { out[chunk + i] = static_cast<Out>(buffer[i]); }
      }
    }
  });
}

template <typename Out>
class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    if (in.data_type() == kFloat16) {
      CastFromHalf(ctx, in, ctx.Output("out").mut_data<Out>());
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
    if constexpr (std::is_same_v<In, float>) {
      ParallelForElements(ctx, in.elem_count(), kElementwiseGrain,
                          [=](int64_t begin, int64_t end) {
                            FloatToHalf(source + begin, target + begin, end - begin);
                          });
    } else {
      ParallelForElements(ctx, in.elem_count(), kElementwiseGrain,
                          PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                            for (int64_t i = begin; i < end; ++i) {
                              target[i] = static_cast<_Float16>(static_cast<float>(source[i]));
                            }
                          }));
    }
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

// fused_cast_scale: y = Out(x) * scalar[0], x float16, float32 or float64.
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
    } else if (x.data_type() == kDouble) {
      scaled.template operator()<double>();
    } else {  // float16, through float
      scaled.template operator()<_Float16>();
    }
  }
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("fused_cast_scale", FusedCastScaleKernel);
// float16: x rounded to float16 first, the product of two halves (exact in float) rounded once,
// which is a float16 multiply (OneFlow's GPU kernel, and TensorFlow's cast * cast).
REGISTER_KERNEL("fused_cast_scale", "cpu", kFloat16, FusedCastScaleKernel<_Float16>);
REGISTER_KERNEL("cast", "cpu", kFloat, CastKernel<float>);
REGISTER_KERNEL("cast", "cpu", kDouble, CastKernel<double>);
REGISTER_KERNEL("cast", "cpu", kInt8, CastKernel<int8_t>);
REGISTER_KERNEL("cast", "cpu", kInt32, CastKernel<int32_t>);
REGISTER_KERNEL("cast", "cpu", kInt64, CastKernel<int64_t>);
REGISTER_KERNEL("cast", "cpu", kUInt8, CastKernel<uint8_t>);
REGISTER_KERNEL("cast", "cpu", kFloat16, CastToHalfKernel);

}  // namespace oneflow
