#include "oneflow/job/device_resolution.h"

#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

bool IsHostOnlyOp(const std::string& op_type) {
  return op_type == "input" || op_type == "return" || op_type == "watch";
}

std::string ResolveDeviceTag(const OperatorConf& op, DataType kernel_data_type,
                             const DeviceResource& resource) {
  if (op.placement().device_tag() != "gpu" || resource.gpu_device_num == 0 ||
      IsHostOnlyOp(op.op_type())) {
    return "cpu";
  }
  return KernelRegistry::Instance().Has(op.op_type(), "gpu", kernel_data_type) ? "gpu" : "cpu";
}

}  // namespace oneflow
