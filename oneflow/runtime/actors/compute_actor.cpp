// Compute actor: runs the kernels of its task's exec nodes on the blobs of the registers it
// holds. A kernel error is recorded on the iteration's job instance, and the iteration's
// remaining kernels are skipped, so the error surfaces in Python without stalling the Plan.
#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/runtime/actor.h"
#include "oneflow/runtime/job_instance.h"

namespace oneflow {
namespace {

class ComputeActor final : public Actor {
 public:
  ComputeActor(const TaskProto& task, const ActorContext& context, DeviceContext& device)
      : Actor(task, context, device) {
    for (const ExecNode& exec : task.exec_node()) {
      const OperatorConf& op = exec.op_conf();
      std::map<std::string, BlobDesc> descs;
      for (const auto& entry : exec.argument_blob_desc()) {
        descs[entry.first] = BlobDesc::FromProto(entry.second);
      }
      std::map<std::string, BlobDesc> logical_descs;
      for (const auto& entry : exec.logical_blob_desc()) {
        logical_descs[entry.first] = BlobDesc::FromProto(entry.second);
      }
      const OpDef& def = OpRegistry::Instance().Get(op.op_type());
      const KernelFactory& factory = KernelRegistry::Instance().Get(
          op.name(), op.op_type(), task.device_tag(), KernelDataType(def, op, descs));
      KernelSlot slot;
      slot.init_context = std::make_unique<KernelInitContext>(exec.op_conf(), descs,
                                                              exec.parallel_context(),
                                                              std::move(logical_descs));
      slot.kernel = factory(*slot.init_context);
      slot.context.set_device(&device);
      slot.context.set_watch_handler(context.watch_handler);
      for (const bool is_input : {true, false}) {
        for (const auto& entry : is_input ? op.input() : op.output()) {
          for (int64_t i = 0; i < entry.second.value_size(); ++i) {
            const std::string key = ArgumentKey(entry.first, i);
            Binding binding = is_input ? LocateInput(exec, key) : LocateOutput(entry.second.value(i));
            binding.slot = slot.context.AddBlob(key, Blob(nullptr, descs.at(key)), is_input);
            slot.bindings.push_back(binding);
          }
        }
      }
      kernels_.push_back(std::move(slot));
    }
  }

 private:
  // Where one argument's blob lives: which register (input position or output position), and
  // its slot in the kernel context.
  struct Binding {
    bool is_input;
    int64_t regst_position;
    int64_t blob_index;
    int64_t slot;
  };
  struct KernelSlot {
    std::unique_ptr<KernelInitContext> init_context;
    std::unique_ptr<Kernel> kernel;
    KernelContext context;
    std::vector<Binding> bindings;
  };

  Binding LocateInput(const ExecNode& exec, const std::string& key) const {
    auto it = exec.input_binding().find(key);
    OF_CHECK(it != exec.input_binding().end())
        << "task " << task().task_id() << ": input '" << key << "' of op '"
        << exec.op_conf().name() << "' has no binding";
    const int64_t position = ConsumedPosition(it->second.regst_desc_id());
    const RegstDescProto& desc = *context().regst_descs.at(it->second.regst_desc_id());
    for (int64_t index = 0; index < desc.blob_size(); ++index) {
      if (desc.blob(index).lbn() == it->second.lbn()) { return Binding{true, position, index, -1}; }
    }
    OF_CHECK(false) << "register desc " << it->second.regst_desc_id() << " holds no blob '"
                    << it->second.lbn() << "'";
    return Binding{};
  }

  Binding LocateOutput(const std::string& lbn) const {
    for (int64_t position = 0; position < task().produced_regst_desc_size(); ++position) {
      const RegstDescProto& desc = task().produced_regst_desc(position);
      for (int64_t index = 0; index < desc.blob_size(); ++index) {
        if (desc.blob(index).lbn() == lbn) { return Binding{false, position, index, -1}; }
      }
    }
    OF_CHECK(false) << "task " << task().task_id() << " has no register holding blob '" << lbn
                    << "'";
    return Binding{};
  }

  void Act(const std::vector<Regst*>& inputs, const std::vector<Regst*>& outputs) override {
    JobInstance* instance = inputs.empty() ? nullptr : inputs.front()->job_instance().get();
    if (instance != nullptr && instance->has_error()) { return; }
    for (KernelSlot& slot : kernels_) {
      for (const Binding& binding : slot.bindings) {
        Regst* regst = binding.is_input ? inputs[binding.regst_position]
                                        : outputs[binding.regst_position];
        slot.context.SetBlobData(binding.slot, regst->blob(binding.blob_index).mut_raw());
      }
      slot.context.set_job_instance(instance);
      try {
        slot.kernel->Forward(slot.context);
      } catch (Error& error) {
        error.AddContext("while running op '" + slot.init_context->conf().name() + "' (" +
                         slot.init_context->conf().op_type() + ")");
        if (instance == nullptr) { throw; }
        instance->AddError(std::current_exception());
        return;
      } catch (...) {
        if (instance == nullptr) { throw; }
        instance->AddError(std::current_exception());
        return;
      }
    }
  }

  std::vector<KernelSlot> kernels_;
};

}  // namespace

std::unique_ptr<Actor> NewComputeActor(const TaskProto& task, const ActorContext& context,
                                       DeviceContext& device) {
  return std::make_unique<ComputeActor>(task, context, device);
}

}  // namespace oneflow
