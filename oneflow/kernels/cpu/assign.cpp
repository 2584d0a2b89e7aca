// CPU kernel of "assign": copies value's bytes over ref's part (same physical shape per device).
#include <cstring>

#include "oneflow/framework/kernel_registry.h"

namespace oneflow {
namespace {

class AssignKernel final : public Kernel {
 public:
  explicit AssignKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    const Blob& value = ctx.Input("value");
    Blob& ref = ctx.MutableInput("ref");
    if (value.raw() != ref.raw() && value.byte_size() > 0) {
      std::memcpy(ref.mut_raw(), value.raw(), value.byte_size());
    }
  }
};

REGISTER_KERNEL("assign", "cpu", kFloat, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kDouble, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kInt8, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kInt32, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kInt64, AssignKernel);
REGISTER_KERNEL("assign", "cpu", kUInt8, AssignKernel);

}  // namespace
}  // namespace oneflow
