#include "oneflow/session/variable_store.h"

#include "oneflow/common/error.h"
#include "oneflow/framework/attr.h"
#include "oneflow/job/placement.h"
#include "oneflow/kernels/cpu/tensor_slice_copy.h"
#include "oneflow/sbp/tensor_slice.h"
#include "oneflow/session/initializer.h"

namespace oneflow {

namespace {

SbpParallel LayoutOf(const OperatorConf& variable_op, int64_t parallel_num) {
  auto it = variable_op.sbp_signature().argument_to_sbp().find("out_0");
  if (it == variable_op.sbp_signature().argument_to_sbp().end()) { return BroadcastSbp(); }
  return SbpOverDevices(it->second, parallel_num);
}

}  // namespace

std::vector<HostTensor> VariableStore::Split(const HostTensor& logical, const SbpParallel& sbp,
                                             int64_t parallel_num) {
  if (parallel_num == 1) { return {logical}; }
  std::vector<HostTensor> parts;
  const TensorSlice full = FullSlice(logical.desc.shape);
  for (int64_t id = 0; id < parallel_num; ++id) {
    TensorSlice slice = SliceOfPart(logical.desc.shape, sbp, id, parallel_num);
    HostTensor part = HostTensor::Allocate(BlobDesc{slice.shape(), logical.desc.data_type});
    CopyTensorSlice(logical.desc.data_type, slice, logical.data, full, part.data, slice, false);
    parts.push_back(std::move(part));
  }
  return parts;
}

void VariableStore::Declare(const OperatorConf& variable_op) {
  BlobDesc desc{FromAttrValue<Shape>(variable_op.attr().at("shape")),
                FromAttrValue<DataType>(variable_op.attr().at("dtype"))};
  const int64_t parallel_num = ParallelNum(variable_op.placement());
  const SbpParallel sbp = LayoutOf(variable_op, parallel_num);
  auto it = variables_.find(variable_op.name());
  if (it != variables_.end()) {
    Variable& variable = it->second;
    if (variable.logical.shape != desc.shape || variable.logical.data_type != desc.data_type) {
      throw Error(ErrorKind::kValue) << "variable '" << variable_op.name() << "' already exists as "
                                     << variable.logical.ToString() << "; cannot redeclare it as "
                                     << desc.ToString();
    }
    if (variable.parallel_num != parallel_num || !SameSbp(variable.sbp, sbp)) {
      variable.parts = Split(Value(variable_op.name()), sbp, parallel_num);
      variable.sbp = sbp;
      variable.parallel_num = parallel_num;
    }
    return;
  }
  HostTensor tensor = HostTensor::Allocate(desc);
  InitializeVariable(variable_op, tensor);
  Variable variable;
  variable.logical = desc;
  variable.sbp = sbp;
  variable.parallel_num = parallel_num;
  variable.parts = Split(tensor, sbp, parallel_num);
  variables_.emplace(variable_op.name(), std::move(variable));
}

const VariableStore::Variable& VariableStore::Find(const std::string& name) const {
  auto it = variables_.find(name);
  if (it == variables_.end()) {
    throw Error(ErrorKind::kValue) << "no variable named '" << name << "'";
  }
  return it->second;
}

HostTensor& VariableStore::Part(const std::string& name, int64_t parallel_id) {
  Variable& variable = const_cast<Variable&>(Find(name));
  OF_CHECK(parallel_id >= 0 && parallel_id < variable.parallel_num)
      << "variable '" << name << "' has " << variable.parallel_num << " parts, not part "
      << parallel_id;
  return variable.parts[parallel_id];
}

HostTensor VariableStore::Value(const std::string& name) const {
  const Variable& variable = Find(name);
  if (variable.parallel_num == 1 || variable.sbp.has_broadcast_parallel()) {
    return variable.parts.front();
  }
  OF_CHECK(variable.sbp.has_split_parallel()) << "variable '" << name << "' is partial-sum";
  HostTensor logical = HostTensor::Allocate(variable.logical);
  const TensorSlice full = FullSlice(variable.logical.shape);
  for (int64_t id = 0; id < variable.parallel_num; ++id) {
    TensorSlice slice = SliceOfPart(variable.logical.shape, variable.sbp, id, variable.parallel_num);
    CopyTensorSlice(variable.logical.data_type, slice, variable.parts[id].data, slice, logical.data,
                    full, false);
  }
  return logical;
}

void VariableStore::CheckValueDesc(const std::string& name, const BlobDesc& desc) const {
  const BlobDesc& logical = Find(name).logical;
  if (desc.data_type != logical.data_type) {
    throw Error(ErrorKind::kType) << "variable '" << name << "' is " << logical.ToString()
                                  << "; cannot set it to a value of dtype "
                                  << DataTypeName(desc.data_type) << " (the dtype must match)";
  }
  if (desc.shape != logical.shape) {
    throw Error(ErrorKind::kValue) << "variable '" << name << "' is " << logical.ToString()
                                   << "; cannot set it to a value of shape "
                                   << desc.shape.ToString() << " (the shape must match)";
  }
}

void VariableStore::SetValue(const std::string& name, const HostTensor& value) {
  CheckValueDesc(name, value.desc);
  Variable& variable = const_cast<Variable&>(Find(name));
  const TensorSlice full = FullSlice(variable.logical.shape);
  for (int64_t id = 0; id < variable.parallel_num; ++id) {
    // A broadcast variable holds a full replica per device, a split one the slice of its part.
    TensorSlice slice =
        SliceOfPart(variable.logical.shape, variable.sbp, id, variable.parallel_num);
    CopyTensorSlice(variable.logical.data_type, slice, value.data, full, variable.parts[id].data,
                    slice, false);
  }
}

void VariableStore::SetValues(const std::map<std::string, HostTensor>& values) {
  for (const auto& entry : values) { CheckValueDesc(entry.first, entry.second.desc); }
  for (const auto& entry : values) { SetValue(entry.first, entry.second); }
}

std::vector<std::string> VariableStore::Names() const {
  std::vector<std::string> names;
  for (const auto& entry : variables_) { names.push_back(entry.first); }
  return names;
}

}  // namespace oneflow
