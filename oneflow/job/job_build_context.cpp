#include "oneflow/job/job_build_context.h"

#include <optional>
#include <set>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/job/device_resolution.h"
#include "oneflow/job/placement.h"
#include "oneflow/sbp/sbp_inference.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

JobBuildContext::JobBuildContext(const JobConf& job_conf, DeviceResource resource)
    : resource_(resource) {
  *job_.mutable_job_conf() = job_conf;
}

const OperatorConf& JobBuildContext::Op(const std::string& op_name) const {
  auto it = op_index_.find(op_name);
  if (it == op_index_.end()) {
    throw Error(ErrorKind::kValue) << "job '" << job_name() << "' has no op '" << op_name << "'";
  }
  return job_.op(it->second);
}

OperatorConf& JobBuildContext::MutableOp(const std::string& op_name) {
  Op(op_name);
  return *job_.mutable_op(op_index_.at(op_name));
}

const BlobDesc& JobBuildContext::LogicalBlobDesc(const std::string& lbn) const {
  auto it = blob_descs_.find(lbn);
  if (it == blob_descs_.end()) {
    throw Error(ErrorKind::kValue) << "job '" << job_name() << "' has no blob '" << lbn << "'";
  }
  return it->second;
}

void JobBuildContext::SetBlobDiff(const std::string& lbn, const std::string& diff_lbn) {
  (*job_.mutable_blob_to_diff())[lbn] = diff_lbn;
}

void JobBuildContext::AddDiffWatch(const std::string& lbn, int64_t handler_id) {
  LogicalBlobDesc(lbn);
  (*job_.mutable_diff_watch())[handler_id] = lbn;
}

void JobBuildContext::CheckAndFillArguments(OperatorConf& conf) const {
  const OpDef& def = OpRegistry::Instance().Get(conf.op_type());
  for (const auto& entry : conf.input()) {
    const ArgumentDef* argument = def.FindInput(entry.first);
    if (argument == nullptr) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                     << ") has no input named '" << entry.first << "'";
    }
    if (entry.second.value_size() > 1 && !argument->variadic) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                     << "): input '" << entry.first << "' takes one blob, got "
                                     << entry.second.value_size();
    }
    for (const std::string& lbn : entry.second.value()) {
      if (!HasBlob(lbn)) {
        throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                       << "): input '" << entry.first << "' refers to blob '"
                                       << lbn << "', which is not in job '" << job_name() << "'";
      }
    }
  }
  for (const ArgumentDef& argument : def.inputs) {
    auto it = conf.input().find(argument.name);
    if (!argument.optional && (it == conf.input().end() || it->second.value_size() == 0)) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                     << ") is missing input '" << argument.name << "'";
    }
  }
  for (const auto& entry : conf.output()) {
    if (def.FindOutput(entry.first) == nullptr) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                     << ") has no output named '" << entry.first << "'";
    }
  }
  for (const ArgumentDef& argument : def.outputs) {
    if (argument.optional || conf.output().count(argument.name)) { continue; }
    int64_t count = 1;
    if (def.FindInput(argument.count_from) != nullptr) {
      count = InputCount(conf, argument.count_from);
    } else if (!argument.count_from.empty()) {
      auto attr = conf.attr().find(argument.count_from);
      count = attr == conf.attr().end() ? 0 : AttrListSize(attr->second);
    }
    for (int64_t index = 0; index < count; ++index) {
      (*conf.mutable_output())[argument.name].add_value(MakeLbn(conf.name(), argument.name, index));
    }
  }
  for (const std::string& control_input : conf.control_input()) {
    if (!HasOp(control_input)) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "': control input '"
                                     << control_input << "' is not an op of job '" << job_name()
                                     << "'";
    }
  }
}

void JobBuildContext::FillAttributes(OperatorConf& conf) const {
  const OpDef& def = OpRegistry::Instance().Get(conf.op_type());
  for (const auto& entry : conf.attr()) {
    const AttrDef* attr = def.FindAttr(entry.first);
    if (attr == nullptr) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                     << ") has no attribute '" << entry.first << "'";
    }
    if (attr->default_value.value_case() != entry.second.value_case()) {
      throw Error(ErrorKind::kType) << "op '" << conf.name() << "' (" << conf.op_type()
                                    << "): attribute '" << entry.first << "' must be "
                                    << AttrTypeName(attr->default_value.value_case()) << ", got "
                                    << AttrTypeName(entry.second.value_case());
    }
  }
  for (const AttrDef& attr : def.attrs) {
    if (conf.attr().count(attr.name)) { continue; }
    if (attr.required) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                     << ") requires attribute '" << attr.name << "'";
    }
    (*conf.mutable_attr())[attr.name] = attr.default_value;
  }
}

std::string JobBuildContext::DescribeInputs(const OperatorConf& conf) const {
  std::string text;
  for (const auto& entry : conf.input()) {
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      const std::string& lbn = entry.second.value(i);
      text += (text.empty() ? "" : ", ") + entry.first +
              (entry.second.value_size() > 1 ? "[" + std::to_string(i) + "]" : std::string()) +
              ": " + (HasBlob(lbn) ? LogicalBlobDesc(lbn).ToString() : lbn);
    }
  }
  return text.empty() ? "no inputs" : "inputs " + text;
}

namespace {

// A shape whose byte size overflows int64 would wrap to a small allocation that kernels then
// index far past; reject it while the op is added.
void CheckByteSizeFits(const OperatorConf& conf, const std::string& argument,
                       const BlobDesc& desc) {
  int64_t bytes = SizeOf(desc.data_type);
  for (int64_t dim : desc.shape.dims()) {
    if (dim < 0 || __builtin_mul_overflow(bytes, dim, &bytes)) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                     << "): output '" << argument << "' of shape "
                                     << desc.shape.ToString()
                                     << " is too large (its byte size overflows int64)";
    }
  }
}

// Whether every device of `a` and `b` is on one machine.
bool OnOneMachine(const ParallelConf& a, const ParallelConf& b) {
  std::set<int64_t> machines;
  for (const ParallelConf* conf : {&a, &b}) {
    for (const DeviceId& device : ParsePlacement(*conf)) { machines.insert(device.machine); }
  }
  return machines.size() == 1;
}

}  // namespace

SbpSignature JobBuildContext::ChooseSbpSignature(const OpDef& def, const OperatorConf& conf,
                                                 const std::map<std::string, BlobDesc>& inputs,
                                                 const std::map<std::string, BlobDesc>& descs,
                                                 int64_t parallel_num) const {
  if (conf.mirrored() && conf.op_type() != "cast_to_mirrored") {
    // Each device computes the op on its own values: every blob is whole on every device.
    SbpSignature signature;
    for (const auto& entry : descs) {
      (*signature.mutable_argument_to_sbp())[entry.first] = BroadcastSbp();
    }
    return signature;
  }
  try {
    return SelectSbpSignature(MakeSbpSelection(def, conf, inputs, descs, parallel_num));
  } catch (Error& error) {
    std::string dynamic;
    for (const auto& entry : descs) {
      if (entry.second.is_dynamic) { dynamic += (dynamic.empty() ? "" : ", ") + entry.first; }
    }
    if (dynamic.empty() || parallel_num == 1) { throw; }
    error << " (" << dynamic << " depends on the data: such blobs are whole (B) on each of "
          << "several devices, as boxing does not carry their shape of a run)";
    throw;
  }
}

void JobBuildContext::InferMirrored(OperatorConf& conf) const {
  const std::string& type = conf.op_type();
  // Which view the inputs must be in: fixed for the two casts, else the first input's.
  std::optional<bool> inputs_mirrored;
  if (type == "cast_to_mirrored") {
    conf.set_mirrored(true);
    inputs_mirrored = false;
  } else if (type == "cast_from_mirrored") {
    conf.set_mirrored(false);
    inputs_mirrored = true;
  }
  for (const auto& entry : conf.input()) {
    for (const std::string& lbn : entry.second.value()) {
      const OperatorConf& producer = Op(OpNameOfLbn(lbn));
      const bool mirrored = producer.mirrored();
      if (!inputs_mirrored.has_value()) {
        inputs_mirrored = mirrored;
        conf.set_mirrored(mirrored);
      }
      if (mirrored && !*inputs_mirrored) {
        throw Error(ErrorKind::kValue)
            << "op '" << conf.name() << "' (" << type << ") reads '" << lbn
            << "', a mirrored blob (one value per device), together with consistent blobs or in "
            << "the consistent view; convert it with flow.cast_to_current_logical_view(blob) "
            << "in the consistent view";
      }
      if (!mirrored && *inputs_mirrored) {
        throw Error(ErrorKind::kValue)
            << "op '" << conf.name() << "' (" << type << ") mixes the mirrored view with '" << lbn
            << "', a consistent blob; convert it with flow.cast_to_current_logical_view(blob) "
            << "in the mirrored view";
      }
      if (mirrored && type != "cast_from_mirrored" &&
          !SamePlacement(producer.placement(), conf.placement())) {
        throw Error(ErrorKind::kValue)
            << "op '" << conf.name() << "' (" << type << ") on "
            << PlacementToString(conf.placement()) << " reads the mirrored blob '" << lbn
            << "' of " << PlacementToString(producer.placement())
            << ": a mirrored blob stays on its devices (one value each)";
      }
    }
  }
}

std::vector<SbpSignature> JobBuildContext::ValidSbpSignatures(const std::string& op_name) const {
  const OperatorConf& conf = Op(op_name);
  const OpDef& def = OpRegistry::Instance().Get(conf.op_type());
  std::map<std::string, BlobDesc> inputs;
  std::map<std::string, BlobDesc> descs;
  for (const bool is_input : {true, false}) {
    for (const auto& entry : is_input ? conf.input() : conf.output()) {
      for (int64_t i = 0; i < entry.second.value_size(); ++i) {
        const BlobDesc& desc = LogicalBlobDesc(entry.second.value(i));
        descs[ArgumentKey(entry.first, i)] = desc;
        if (is_input) { inputs[ArgumentKey(entry.first, i)] = desc; }
      }
    }
  }
  OperatorConf unhinted = conf;
  unhinted.clear_sbp_hint();
  return oneflow::ValidSbpSignatures(
      MakeSbpSelection(def, unhinted, inputs, descs, ParallelNum(conf.placement())));
}

SbpSelection JobBuildContext::MakeSbpSelection(const OpDef& def, const OperatorConf& conf,
                                               const std::map<std::string, BlobDesc>& inputs,
                                               const std::map<std::string, BlobDesc>& descs,
                                               int64_t parallel_num) const {
  SbpSelection selection;
  selection.op_name = conf.name();
  selection.op_type = conf.op_type();
  selection.parallel_num = parallel_num;
  selection.logical_descs = descs;
  for (const auto& hint : conf.sbp_hint()) {
    if (!descs.count(hint.first)) {
      throw Error(ErrorKind::kValue) << "op '" << conf.name() << "' (" << conf.op_type()
                                     << ") has an SBP hint for '" << hint.first
                                     << "', which is none of its inputs or outputs";
    }
    selection.required[hint.first] = hint.second;
  }
  SbpContext sbp_context(conf, inputs, parallel_num);
  if (def.sbp) { def.sbp(sbp_context); }
  selection.candidates = sbp_context.signatures();
  for (const auto& entry : conf.input()) {
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      // The hint is how the producer laid the blob out (its chosen signature).
      const std::string& lbn = entry.second.value(i);
      std::string producer_name, producer_key;
      ParseLbn(lbn, &producer_name, &producer_key);
      const OperatorConf& producer = Op(producer_name);
      const auto& producer_sbp = producer.sbp_signature().argument_to_sbp();
      SbpInputHint hint;
      auto found = producer_sbp.find(producer_key);
      hint.producer_sbp = found != producer_sbp.end() ? found->second : BroadcastSbp();
      hint.logical_desc = inputs.at(ArgumentKey(entry.first, i));
      hint.producer_parallel_num = ParallelNum(producer.placement());
      hint.same_placement = SamePlacement(producer.placement(), conf.placement());
      const std::string key = ArgumentKey(entry.first, i);
      if (def.mutable_inputs.count(entry.first)) {
        // Updated in place: the op must work on the producer's own memory, so no boxing.
        if (!hint.same_placement) {
          throw Error(ErrorKind::kValue)
              << "op '" << conf.name() << "' (" << conf.op_type() << ") updates input '"
              << entry.first << "' in place, so it must be placed like its producer '"
              << producer_name << "' (" << PlacementToString(producer.placement()) << "), not on "
              << PlacementToString(conf.placement());
        }
        selection.required[key] = hint.producer_sbp;
      }
      selection.inputs[key] = hint;
    }
  }
  // Blobs of data-dependent shape are whole on each device: boxing carries no run shapes, and a
  // part of one would have its own. So on several devices an op reads them broadcast and makes
  // its dynamic outputs broadcast (descs: InferDynamic has marked the outputs).
  if (parallel_num > 1) {
    for (const auto& entry : descs) {
      if (entry.second.is_dynamic) { selection.required.emplace(entry.first, BroadcastSbp()); }
    }
  }
  return selection;
}

void JobBuildContext::InferDynamic(const OpDef& def, const OperatorConf& conf,
                                   const std::map<std::string, BlobDesc>& inputs,
                                   std::map<std::string, BlobDesc>* descs) const {
  bool any_input_dynamic = false;
  for (const auto& entry : inputs) { any_input_dynamic |= entry.second.is_dynamic; }
  for (const auto& entry : conf.output()) {
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      BlobDesc& desc = descs->at(ArgumentKey(entry.first, i));
      if (!def.infers_dynamic) { desc.is_dynamic = any_input_dynamic; }
    }
  }
}

void JobBuildContext::CheckDynamicOutputsWhole(const OperatorConf& conf,
                                               const std::map<std::string, BlobDesc>& descs) const {
  if (ParallelNum(conf.placement()) == 1) { return; }
  for (const auto& entry : descs) {
    if (!entry.second.is_dynamic) { continue; }
    const auto& sbp = conf.sbp_signature().argument_to_sbp();
    auto found = sbp.find(entry.first);
    if (found != sbp.end() && !found->second.has_broadcast_parallel()) {
      throw Error(ErrorKind::kValue)
          << "op '" << conf.name() << "' (" << conf.op_type() << ") lays '" << entry.first
          << "', whose shape depends on the data (" << entry.second.ToString() << "), out as "
          << SbpToString(found->second) << " over " << ParallelNum(conf.placement())
          << " devices; such a blob is whole (broadcast) on each device";
    }
  }
}

std::string JobBuildContext::ResolvedDeviceTag(const OperatorConf& op) const {
  const OpDef& def = OpRegistry::Instance().Get(op.op_type());
  std::map<std::string, BlobDesc> descs;
  for (const auto* arguments : {&op.input(), &op.output()}) {
    for (const auto& entry : *arguments) {
      for (int64_t i = 0; i < entry.second.value_size(); ++i) {
        descs[ArgumentKey(entry.first, i)] = LogicalBlobDesc(entry.second.value(i));
      }
    }
  }
  return ResolveDeviceTag(op, KernelDataType(def, op, descs), resource_);
}

void JobBuildContext::KeepOnHostAfterDynamicHostInputs(
    OperatorConf* conf, const std::map<std::string, BlobDesc>& inputs) const {
  if (conf->placement().device_tag() != "gpu" || resource_.gpu_device_num == 0) { return; }
  for (const auto& entry : conf->input()) {
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      if (!inputs.at(ArgumentKey(entry.first, i)).is_dynamic) { continue; }
      std::string producer_name, producer_key;
      ParseLbn(entry.second.value(i), &producer_name, &producer_key);
      const OperatorConf& producer = Op(producer_name);
      // Made on the host of this machine (argwhere has no GPU kernel, and an interface op
      // always runs on the host): read there too, on the host devices of this op's ids, as a
      // "gpu" op without a GPU kernel is.
      if (ResolvedDeviceTag(producer) == "cpu" &&
          OnOneMachine(producer.placement(), conf->placement())) {
        conf->mutable_placement()->set_device_tag("cpu");
        return;
      }
    }
  }
}

void JobBuildContext::CheckDynamicInputsStay(const OperatorConf& conf,
                                             const std::map<std::string, BlobDesc>& inputs,
                                             const std::string& device_tag) const {
  for (const auto& entry : conf.input()) {
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      if (!inputs.at(ArgumentKey(entry.first, i)).is_dynamic) { continue; }
      const std::string& lbn = entry.second.value(i);
      std::string producer_name, producer_key;
      ParseLbn(lbn, &producer_name, &producer_key);
      const OperatorConf& producer = Op(producer_name);
      // The blob is whole on each of its devices (CheckDynamicOutputsWhole), so a reader on
      // the same devices, or on CPU devices of the same machine, reads one of its registers as
      // it is; copies between machines or between host and GPU would lose the run's shape.
      const bool same_kind = ResolvedDeviceTag(producer) == device_tag;
      const bool host_reads = device_tag == "cpu" && OnOneMachine(producer.placement(),
                                                                  conf.placement());
      if (!same_kind || !(SamePlacement(producer.placement(), conf.placement()) || host_reads)) {
        throw Error(ErrorKind::kValue)
            << "op '" << conf.name() << "' (" << conf.op_type() << ") on "
            << PlacementToString(conf.placement()) << " (" << device_tag << " kernel) reads '"
            << lbn << "', whose shape depends on the data (" << LogicalBlobDesc(lbn).ToString()
            << ") and which is made on " << PlacementToString(producer.placement()) << " ("
            << ResolvedDeviceTag(producer) << " kernel); such a blob is read on the devices "
            << "that made it or on CPU devices of the same machine, not across machines or "
            << "between host and GPU: place the op there, or make it static first "
            << "(flow.cast_to_static_shape)";
      }
    }
  }
}

const OperatorConf& JobBuildContext::AddOp(OperatorConf conf) {
  if (conf.name().empty()) {
    throw Error(ErrorKind::kValue) << "an op of type '" << conf.op_type() << "' has no name";
  }
  if (HasOp(conf.name())) {
    throw Error(ErrorKind::kValue) << "op name '" << conf.name() << "' is already used in job '"
                                   << job_name() << "'; op names must be unique";
  }
  const OpDef& def = OpRegistry::Instance().Get(conf.op_type());
  if (!conf.has_placement() || conf.placement().device_name_size() == 0) {
    *conf.mutable_placement() = DefaultPlacement();
  }
  CheckPlacementDevices(conf.placement(), resource_, conf.name());
  const int64_t parallel_num = ParallelNum(conf.placement());
  CheckAndFillArguments(conf);
  FillAttributes(conf);
  InferMirrored(conf);

  std::map<std::string, BlobDesc> inputs;
  for (const auto& entry : conf.input()) {
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      const std::string& lbn = entry.second.value(i);
      inputs[ArgumentKey(entry.first, i)] = LogicalBlobDesc(lbn);
    }
  }
  ParallelContext logical_context;
  logical_context.set_parallel_id(0);
  logical_context.set_parallel_num(1);
  InferContext infer_context(conf, inputs, logical_context);
  try {
    def.infer(infer_context);
  } catch (Error& error) {
    Error wrapped(error.kind());
    wrapped << "op '" << conf.name() << "' (" << conf.op_type() << ") with "
            << DescribeInputs(conf) << ": " << error.message();
    throw wrapped;
  }
  for (const auto& entry : conf.output()) {
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      auto it = infer_context.outputs().find(ArgumentKey(entry.first, i));
      OF_CHECK(it != infer_context.outputs().end() && it->second.data_type != kInvalidDataType)
          << "infer function of op type '" << conf.op_type() << "' did not set output '"
          << entry.first << "' index " << i;
      CheckByteSizeFits(conf, entry.first, it->second);
    }
  }

  std::map<std::string, BlobDesc> descs = inputs;
  for (const auto& entry : infer_context.outputs()) { descs[entry.first] = entry.second; }
  InferDynamic(def, conf, inputs, &descs);
  *conf.mutable_sbp_signature() = ChooseSbpSignature(def, conf, inputs, descs, parallel_num);
  CheckDynamicOutputsWhole(conf, descs);

  DataType kernel_data_type = KernelDataType(def, conf, descs);
  KeepOnHostAfterDynamicHostInputs(&conf, inputs);
  const std::string device_tag = ResolveDeviceTag(conf, kernel_data_type, resource_);
  KernelRegistry::Instance().Get(conf.name(), conf.op_type(), device_tag, kernel_data_type);
  CheckDynamicInputsStay(conf, inputs, device_tag);

  for (const auto& entry : conf.output()) {
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      const BlobDesc& desc = descs.at(ArgumentKey(entry.first, i));
      blob_descs_[entry.second.value(i)] = desc;
      (*job_.mutable_logical_blob_desc())[entry.second.value(i)] = desc.ToProto();
    }
  }
  op_index_[conf.name()] = job_.op_size();
  *job_.add_op() = std::move(conf);
  return job_.op(job_.op_size() - 1);
}

}  // namespace oneflow
