#include "oneflow/framework/kernel_registry.h"

#include <algorithm>

#include "oneflow/common/error.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/kernels/cpu/half_via_float_kernel.h"

namespace oneflow {

KernelRegistry& KernelRegistry::Instance() {
  static KernelRegistry registry;
  return registry;
}

void KernelRegistry::Register(const std::string& op_type, const std::string& device_tag,
                              DataType data_type, KernelFactory factory) {
  auto key = std::make_tuple(op_type, device_tag, data_type);
  OF_CHECK(factories_.count(key) == 0) << "kernel for op '" << op_type << "' on " << device_tag
                                       << " with dtype " << DataTypeName(data_type)
                                       << " registered twice";
  factories_.emplace(key, std::move(factory));
}

const KernelFactory* KernelRegistry::Find(const std::string& op_type,
                                          const std::string& device_tag,
                                          DataType data_type) const {
  auto it = factories_.find(std::make_tuple(op_type, device_tag, data_type));
  if (it != factories_.end()) { return &it->second; }
  if (device_tag != "cpu" || data_type != kFloat16 || !CanComputeHalfViaFloat(op_type)) {
    return nullptr;
  }
  auto float_kernel = factories_.find(std::make_tuple(op_type, device_tag, kFloat));
  if (float_kernel == factories_.end()) { return nullptr; }
  std::lock_guard<std::mutex> lock(derived_mutex_);
  KernelFactory& derived = derived_half_factories_[op_type];
  if (!derived) { derived = MakeHalfViaFloatFactory(float_kernel->second); }
  return &derived;
}

bool KernelRegistry::Has(const std::string& op_type, const std::string& device_tag,
                         DataType data_type) const {
  return Find(op_type, device_tag, data_type) != nullptr;
}

const KernelFactory& KernelRegistry::Get(const std::string& op_name, const std::string& op_type,
                                         const std::string& device_tag,
                                         DataType data_type) const {
  const KernelFactory* factory = Find(op_type, device_tag, data_type);
  if (factory == nullptr) {
    std::string device = device_tag;
    std::transform(device.begin(), device.end(), device.begin(), ::toupper);
    Error error(ErrorKind::kNotImplemented);
    error << "no " << device << " kernel for op '" << op_name << "' (" << op_type
          << ") with dtype " << DataTypeName(data_type);
    std::string registered;
    for (const auto& entry : factories_) {
      if (std::get<0>(entry.first) == op_type && std::get<1>(entry.first) == device_tag) {
        registered += (registered.empty() ? "" : ", ") + DataTypeName(std::get<2>(entry.first));
      }
    }
    if (!registered.empty()) { error << "; registered dtypes: " << registered; }
    throw error;
  }
  return *factory;
}

DataType KernelDataType(const OpDef& def, const OperatorConf& conf,
                        const std::map<std::string, BlobDesc>& descs) {
  std::string argument = def.kernel_data_type_argument;
  if (argument.empty()) {
    for (const ArgumentDef& output : def.outputs) {
      if (conf.output().count(output.name)) {
        argument = output.name;
        break;
      }
    }
  }
  if (argument.empty()) {
    for (const ArgumentDef& input : def.inputs) {
      if (conf.input().count(input.name)) {
        argument = input.name;
        break;
      }
    }
  }
  if (argument.empty()) { return kInvalidDataType; }
  auto it = descs.find(ArgumentKey(argument, 0));
  return it == descs.end() ? kInvalidDataType : it->second.data_type;
}

}  // namespace oneflow
