// CPU acc, unpack, pack and acc_tick (framework/time_shape.h; repeat is a copy kernel, copy.cpp).
// Each act is one step of the op's cycle (KernelContext::cycle_step): acc copies the first input of the cycle and adds the others (the output is kept between the
// acts of a cycle); unpack copies row block `step` of its input, pack writes its input into row
// block `step` of its output; acc_tick only counts.

#include <cstring>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
class AccKernel final : public Kernel {
 public:
  explicit AccKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    Blob& out = ctx.Output("out");
    if (ctx.cycle_step() == 0) {
      if (in.byte_size() > 0) { std::memcpy(out.mut_raw(), in.raw(), in.byte_size()); }
      return;
    }
    const T* x = in.data<T>();
    T* sum = out.mut_data<T>();
    ParallelForElements(ctx, in.elem_count(), kElementwiseGrain, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) { sum[i] += x[i]; }
    });
  }
};

// unpack (`unpack` true) and pack: the piece is row block `step` of the whole blob.
class RowBlockKernel final : public Kernel {
 public:
  RowBlockKernel(const KernelInitContext& ctx, bool unpack) : unpack_(unpack) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    Blob& out = ctx.Output("out");
    const int64_t piece_bytes = unpack_ ? out.byte_size() : in.byte_size();
    if (piece_bytes == 0) { return; }
    const int64_t offset = ctx.cycle_step() * piece_bytes;
    if (unpack_) {
      std::memcpy(out.mut_raw(), static_cast<const char*>(in.raw()) + offset, piece_bytes);
    } else {
      std::memcpy(static_cast<char*>(out.mut_raw()) + offset, in.raw(), piece_bytes);
    }
  }

 private:
  bool unpack_;
};

class AccTickKernel final : public Kernel {
 public:
  explicit AccTickKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override { *ctx.Output("out").mut_data<int8_t>() = 0; }
};

struct TimeShapeKernelsRegistrar {
  TimeShapeKernelsRegistrar() {
    KernelRegistry& registry = KernelRegistry::Instance();
    for (DataType data_type : {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8}) {
      for (const bool unpack : {true, false}) {
        registry.Register(unpack ? "unpack" : "pack", "cpu", data_type,
                          [unpack](const KernelInitContext& ctx) {
                            return std::unique_ptr<Kernel>(new RowBlockKernel(ctx, unpack));
                          });
      }
    }
    registry.Register("acc_tick", "cpu", kInt8, [](const KernelInitContext& ctx) {
      return std::unique_ptr<Kernel>(new AccTickKernel(ctx));
    });
  }
};
const TimeShapeKernelsRegistrar kTimeShapeKernelsRegistrar;

}  // namespace

REGISTER_KERNEL("acc", "cpu", kFloat, AccKernel<float>);
REGISTER_KERNEL("acc", "cpu", kDouble, AccKernel<double>);
REGISTER_KERNEL("acc", "cpu", kInt8, AccKernel<int8_t>);
REGISTER_KERNEL("acc", "cpu", kInt32, AccKernel<int32_t>);
REGISTER_KERNEL("acc", "cpu", kInt64, AccKernel<int64_t>);

}  // namespace oneflow
