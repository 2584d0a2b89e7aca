// CPU identity, reshape, reshape_like, cast_to_static_shape, parallel_cast, the mirrored casts,
// repeat (each act of its cycle hands on a copy: framework/time_shape.h) and OneFlow 0.3's test
// reshapes (oneflow/ops/fixture_ops.cpp): each copies its input bytes to its output (the layouts
// are the same contiguous row-major order).

#include <cstring>

#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

namespace {

class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    Blob& out = ctx.Output("out");
    if (in.raw() != out.mut_raw() && in.byte_size() > 0) {
      std::memcpy(out.mut_raw(), in.raw(), in.byte_size());
    }
  }
};

void RegisterCopyKernels(const std::string& op_type) {
  for (DataType data_type : {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8}) {
    KernelRegistry::Instance().Register(
        op_type, "cpu", data_type,
        [](const KernelInitContext& ctx) { return std::unique_ptr<Kernel>(new CopyKernel(ctx)); });
  }
}

// Registers the copy kernels at library load time, like REGISTER_KERNEL does.
struct CopyKernelsRegistrar {
  CopyKernelsRegistrar() {
    RegisterCopyKernels("identity");
    RegisterCopyKernels("reshape");
    RegisterCopyKernels("reshape_like");
    RegisterCopyKernels("cast_to_static_shape");
    RegisterCopyKernels("parallel_cast");
    RegisterCopyKernels("cast_to_mirrored");
    RegisterCopyKernels("cast_from_mirrored");
    RegisterCopyKernels("repeat");
    for (const char* op_type : {"TestReshape", "TestReshape4KeepHeaderOnly",
                                "TestReshapeLike4KeepHeaderOnly", "test_user_op_attr_auto_type"}) {
      RegisterCopyKernels(op_type);
    }
  }
};
const CopyKernelsRegistrar kCopyKernelsRegistrar;

}  // namespace

}  // namespace oneflow
