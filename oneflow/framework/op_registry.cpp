#include "oneflow/framework/op_registry.h"

namespace oneflow {

namespace {

const ArgumentDef* FindArgument(const std::vector<ArgumentDef>& arguments,
                                const std::string& name) {
  for (const ArgumentDef& argument : arguments) {
    if (argument.name == name) { return &argument; }
  }
  return nullptr;
}

}  // namespace

const AttrDef* OpDef::FindAttr(const std::string& name) const {
  for (const AttrDef& attr : attrs) {
    if (attr.name == name) { return &attr; }
  }
  return nullptr;
}

const ArgumentDef* OpDef::FindInput(const std::string& name) const {
  return FindArgument(inputs, name);
}

const ArgumentDef* OpDef::FindOutput(const std::string& name) const {
  return FindArgument(outputs, name);
}

OpRegistry& OpRegistry::Instance() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::Register(OpDef def) {
  OF_CHECK(defs_.count(def.op_type) == 0) << "op '" << def.op_type << "' registered twice";
  OF_CHECK(def.infer) << "op '" << def.op_type << "' has no infer function";
  std::string op_type = def.op_type;
  defs_.emplace(op_type, std::move(def));
}

const OpDef& OpRegistry::Get(const std::string& op_type) const {
  const OpDef* def = Find(op_type);
  if (def == nullptr) {
    throw Error(ErrorKind::kNotImplemented) << "op type '" << op_type << "' is not registered";
  }
  return *def;
}

const OpDef* OpRegistry::Find(const std::string& op_type) const {
  auto it = defs_.find(op_type);
  return it == defs_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::OpTypes() const {
  std::vector<std::string> types;
  for (const auto& entry : defs_) { types.push_back(entry.first); }
  return types;
}

OpDefBuilder::OpDefBuilder(const std::string& op_type) { def_.op_type = op_type; }

OpDefBuilder& OpDefBuilder::Input(const std::string& name) {
  def_.inputs.push_back(ArgumentDef{name, false, false});
  return *this;
}
OpDefBuilder& OpDefBuilder::OptionalInput(const std::string& name) {
  def_.inputs.push_back(ArgumentDef{name, true, false});
  return *this;
}
OpDefBuilder& OpDefBuilder::VariadicInput(const std::string& name, bool optional) {
  def_.inputs.push_back(ArgumentDef{name, optional, true});
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(const std::string& name) {
  def_.outputs.push_back(ArgumentDef{name, false, false});
  return *this;
}
OpDefBuilder& OpDefBuilder::OptionalOutput(const std::string& name) {
  def_.outputs.push_back(ArgumentDef{name, true, false});
  return *this;
}
OpDefBuilder& OpDefBuilder::VariadicOutput(const std::string& name, const std::string& count_from) {
  def_.outputs.push_back(ArgumentDef{name, false, true, count_from});
  return *this;
}
OpDefBuilder& OpDefBuilder::SetInferFn(InferFn fn) {
  def_.infer = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetSbpFn(SbpFn fn) {
  def_.sbp = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetGradFn(GradFn fn) {
  def_.grad = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::NonDifferentiable() {
  def_.non_differentiable = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::MutableInput(const std::string& name) {
  def_.mutable_inputs.insert(name);
  def_.no_grad_inputs.insert(name);
  return *this;
}
OpDefBuilder& OpDefBuilder::NoGradInput(const std::string& name) {
  def_.no_grad_inputs.insert(name);
  return *this;
}
OpDefBuilder& OpDefBuilder::KernelDataTypeFrom(const std::string& argument) {
  def_.kernel_data_type_argument = argument;
  return *this;
}
OpDefBuilder& OpDefBuilder::InfersDynamic() {
  def_.infers_dynamic = true;
  return *this;
}

OpRegistrar::OpRegistrar(const OpDefBuilder& builder) {
  OpRegistry::Instance().Register(builder.def());
}

InferContext::InferContext(const OperatorConf& conf, std::map<std::string, BlobDesc> inputs,
                           ParallelContext parallel_context)
    : conf_(conf), inputs_(std::move(inputs)), parallel_context_(std::move(parallel_context)) {}

int64_t InferContext::InputCount(const std::string& argument) const {
  return ::oneflow::InputCount(conf_, argument);
}

const BlobDesc& InferContext::Input(const std::string& argument, int64_t index) const {
  auto it = inputs_.find(ArgumentKey(argument, index));
  if (it == inputs_.end()) {
    throw Error(ErrorKind::kValue) << "missing input '" << argument << "' index " << index;
  }
  return it->second;
}

BlobDesc& InferContext::Output(const std::string& argument, int64_t index) {
  return outputs_[ArgumentKey(argument, index)];
}

bool InferContext::AnyInputDynamic() const {
  for (const auto& entry : inputs_) {
    if (entry.second.is_dynamic) { return true; }
  }
  return false;
}

bool InferContext::HasOutput(const std::string& argument) const {
  return conf_.output().count(argument) > 0;
}

const AttrValue& InferContext::AttrValueOf(const std::string& name) const {
  auto it = conf_.attr().find(name);
  OF_CHECK(it != conf_.attr().end()) << "op '" << conf_.name() << "' has no attribute '" << name
                                     << "'";
  return it->second;
}

SbpContext::SbpContext(const OperatorConf& conf, std::map<std::string, BlobDesc> logical_inputs,
                       int64_t parallel_num)
    : conf_(conf), logical_inputs_(std::move(logical_inputs)), parallel_num_(parallel_num) {}

const BlobDesc& SbpContext::LogicalInput(const std::string& argument, int64_t index) const {
  return logical_inputs_.at(ArgumentKey(argument, index));
}

int64_t SbpContext::InputCount(const std::string& argument) const {
  return ::oneflow::InputCount(conf_, argument);
}

std::vector<std::string> SbpContext::KeysOf(const std::string& argument) const {
  std::vector<std::string> keys;
  auto collect = [&](const google::protobuf::Map<std::string, ListString>& map) {
    auto it = map.find(argument);
    if (it == map.end()) { return; }
    for (int64_t i = 0; i < it->second.value_size(); ++i) {
      keys.push_back(ArgumentKey(argument, i));
    }
  };
  collect(conf_.input());
  collect(conf_.output());
  return keys;
}

void SbpContext::SignatureBuilder::Set(const std::string& argument, const SbpParallel& sbp) {
  for (const std::string& key : context_->KeysOf(argument)) {
    (*signature_.mutable_argument_to_sbp())[key] = sbp;
  }
}

SbpContext::SignatureBuilder& SbpContext::SignatureBuilder::Split(const std::string& argument,
                                                                  int64_t axis) {
  SbpParallel sbp;
  sbp.mutable_split_parallel()->set_axis(axis);
  Set(argument, sbp);
  return *this;
}

SbpContext::SignatureBuilder& SbpContext::SignatureBuilder::Broadcast(
    const std::string& argument) {
  SbpParallel sbp;
  sbp.mutable_broadcast_parallel();
  Set(argument, sbp);
  return *this;
}

SbpContext::SignatureBuilder& SbpContext::SignatureBuilder::PartialSum(
    const std::string& argument) {
  SbpParallel sbp;
  sbp.mutable_partial_sum_parallel();
  Set(argument, sbp);
  return *this;
}

SbpContext::SignatureBuilder& SbpContext::SignatureBuilder::SplitAllInputs(int64_t axis) {
  for (const auto& entry : context_->conf_.input()) { Split(entry.first, axis); }
  return *this;
}

SbpContext::SignatureBuilder& SbpContext::SignatureBuilder::SplitAllOutputs(int64_t axis) {
  for (const auto& entry : context_->conf_.output()) { Split(entry.first, axis); }
  return *this;
}

SbpContext::SignatureBuilder& SbpContext::SignatureBuilder::BroadcastAllInputs() {
  for (const auto& entry : context_->conf_.input()) { Broadcast(entry.first); }
  return *this;
}

SbpContext::SignatureBuilder& SbpContext::SignatureBuilder::BroadcastAllOutputs() {
  for (const auto& entry : context_->conf_.output()) { Broadcast(entry.first); }
  return *this;
}

SbpContext::SignatureBuilder& SbpContext::SignatureBuilder::PartialSumAllOutputs() {
  for (const auto& entry : context_->conf_.output()) { PartialSum(entry.first); }
  return *this;
}

void SbpContext::SignatureBuilder::Build() { context_->signatures_.push_back(signature_); }

}  // namespace oneflow
