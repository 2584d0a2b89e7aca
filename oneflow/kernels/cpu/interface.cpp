// CPU kernels of the interface ops and the variable op.
#include <cstring>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/runtime/job_instance.h"

namespace oneflow {
namespace {

// The variable's register aliases the session's variable memory: nothing to compute.
class VariableKernel final : public Kernel {
 public:
  explicit VariableKernel(const KernelInitContext&) {}
  void Forward(KernelContext&) override {}
};

class InputKernel final : public Kernel {
 public:
  explicit InputKernel(const KernelInitContext& ctx) : op_name_(ctx.conf().name()) {}
  void Forward(KernelContext& ctx) override {
    const HostTensor& value = ctx.job_instance()->Input(op_name_);
    Blob& out = ctx.Output("out");
    OF_CHECK(value.desc.shape == out.shape() && value.desc.data_type == out.data_type())
        << "input '" << op_name_ << "' got " << value.desc.ToString() << ", expected "
        << out.desc().ToString();
    std::memcpy(out.mut_raw(), value.data, out.byte_size());
  }

 private:
  std::string op_name_;
};

HostTensor CopyToHost(const Blob& blob) {
  HostTensor tensor = HostTensor::Allocate(blob.desc());
  std::memcpy(tensor.data, blob.raw(), blob.byte_size());
  return tensor;
}

class ReturnKernel final : public Kernel {
 public:
  explicit ReturnKernel(const KernelInitContext& ctx) : op_name_(ctx.conf().name()) {}
  void Forward(KernelContext& ctx) override {
    ctx.job_instance()->SetOutput(op_name_, CopyToHost(ctx.Input("in")));
  }

 private:
  std::string op_name_;
};

class WatchKernel final : public Kernel {
 public:
  explicit WatchKernel(const KernelInitContext& ctx)
      : handler_id_(ctx.Attr<int64_t>("handler_id")) {}
  void Forward(KernelContext& ctx) override {
    ctx.watch_handler()(handler_id_, CopyToHost(ctx.Input("in")));
  }

 private:
  int64_t handler_id_;
};

#define REGISTER_INTERFACE_KERNELS(data_type)                     \
  REGISTER_KERNEL("variable", "cpu", data_type, VariableKernel); \
  REGISTER_KERNEL("input", "cpu", data_type, InputKernel);       \
  REGISTER_KERNEL("return", "cpu", data_type, ReturnKernel);     \
  REGISTER_KERNEL("watch", "cpu", data_type, WatchKernel)

REGISTER_INTERFACE_KERNELS(kFloat);
REGISTER_INTERFACE_KERNELS(kDouble);
REGISTER_INTERFACE_KERNELS(kInt8);
REGISTER_INTERFACE_KERNELS(kInt32);
REGISTER_INTERFACE_KERNELS(kInt64);
REGISTER_INTERFACE_KERNELS(kUInt8);

}  // namespace
}  // namespace oneflow
