#include "oneflow/session/variable_store.h"

#include "oneflow/common/error.h"
#include "oneflow/framework/attr.h"
#include "oneflow/session/initializer.h"

namespace oneflow {

void VariableStore::Declare(const OperatorConf& variable_op) {
  BlobDesc desc{FromAttrValue<Shape>(variable_op.attr().at("shape")),
                FromAttrValue<DataType>(variable_op.attr().at("dtype"))};
  auto it = variables_.find(variable_op.name());
  if (it != variables_.end()) {
    if (it->second.desc.shape != desc.shape || it->second.desc.data_type != desc.data_type) {
      throw Error(ErrorKind::kValue) << "variable '" << variable_op.name() << "' already exists as "
                                     << it->second.desc.ToString() << "; cannot redeclare it as "
                                     << desc.ToString();
    }
    return;
  }
  HostTensor tensor = HostTensor::Allocate(desc);
  InitializeVariable(variable_op, tensor);
  variables_.emplace(variable_op.name(), std::move(tensor));
}

HostTensor& VariableStore::Get(const std::string& name) {
  auto it = variables_.find(name);
  if (it == variables_.end()) {
    throw Error(ErrorKind::kValue) << "no variable named '" << name << "'";
  }
  return it->second;
}

std::vector<std::string> VariableStore::Names() const {
  std::vector<std::string> names;
  for (const auto& entry : variables_) { names.push_back(entry.first); }
  return names;
}

}  // namespace oneflow
