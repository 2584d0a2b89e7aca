// Compute actor: runs the kernels of its task's exec nodes on the blobs of the registers it
// holds. A kernel error is recorded on the iteration's job instance, and the iteration's
// remaining kernels are skipped, so the error surfaces in Python without stalling the Plan.
//
// Dynamic blobs (BlobDesc::is_dynamic) carry their shape of the iteration in their register. An
// op reading one runs a kernel made for the shapes it reads (its outputs' shapes inferred by the
// op's infer function, within the bounds their memory was sized for); the last few such kernels
// are kept, so a shape that comes back reuses its kernel.
//
// An op that changes time shapes (framework/time_shape.h) acts in cycles of N acts: the actor
// counts them, tells the kernel its step and keeps its input (repeat, unpack) or its output
// (acc, pack, acc_tick) until the cycle's last act.
#include <algorithm>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/time_shape.h"
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
      KernelSlot slot;
      slot.factory = KernelRegistry::Instance().Get(op.name(), op.op_type(), task.device_tag(),
                                                    KernelDataType(def, op, descs));
      slot.init_context = std::make_unique<KernelInitContext>(exec.op_conf(), descs,
                                                              exec.parallel_context(),
                                                              std::move(logical_descs));
      slot.kernel = slot.factory(*slot.init_context);
      slot.context.set_device(&device);
      slot.context.set_watch_handler(context.watch_handler);
      for (const bool is_input : {true, false}) {
        for (const auto& entry : is_input ? op.input() : op.output()) {
          for (int64_t i = 0; i < entry.second.value_size(); ++i) {
            const std::string key = ArgumentKey(entry.first, i);
            Binding binding =
                is_input ? LocateInput(exec, key) : LocateOutput(entry.second.value(i));
            binding.key = key;
            binding.desc = descs.at(key);
            binding.dynamic = binding.desc.is_dynamic;
            binding.slot = slot.context.AddBlob(key, Blob(nullptr, descs.at(key)), is_input);
            (is_input ? slot.reads_dynamic : slot.writes_dynamic) |= binding.dynamic;
            slot.bindings.push_back(binding);
          }
        }
      }
      kernels_.push_back(std::move(slot));
    }
    if (task.exec_node_size() == 1) { cycle_ = CycleOfOp(task.exec_node(0).op_conf()); }
  }

 private:
  // Where one argument's blob lives: which register (input position or output position), and
  // its slot in the kernel context.
  struct Binding {
    bool is_input;
    int64_t regst_position;
    int64_t blob_index;
    int64_t slot;
    std::string key;       // "<argument>_<index>"
    BlobDesc desc;         // as compiled (for a dynamic blob, its bound)
    bool dynamic = false;  // the blob's shape changes with the data
  };
  // A kernel made for one set of input shapes of an op that reads dynamic blobs.
  struct ShapedKernel {
    std::vector<Shape> shapes;  // of every binding (inputs as read, outputs as inferred)
    std::unique_ptr<KernelInitContext> init_context;
    std::unique_ptr<Kernel> kernel;
  };
  struct KernelSlot {
    KernelFactory factory;
    std::unique_ptr<KernelInitContext> init_context;
    std::unique_ptr<Kernel> kernel;
    KernelContext context;
    std::vector<Binding> bindings;
    bool reads_dynamic = false;
    bool writes_dynamic = false;
    std::vector<ShapedKernel> shaped;  // the last kKeptShapedKernels made, oldest first
  };
  static constexpr size_t kKeptShapedKernels = 8;

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

  bool KeepsInputs() const override {
    return cycle_.kind == CycleKind::kExpand && step_ + 1 < cycle_.length;
  }
  bool KeepsOutputs() const override {
    return cycle_.kind == CycleKind::kReduce && step_ + 1 < cycle_.length;
  }

  void Act(const std::vector<Regst*>& inputs, const std::vector<Regst*>& outputs) override {
    // The cycle advances even when the iteration failed, so the next one starts at step 0.
    step_ = next_step_;
    next_step_ = (next_step_ + 1) % cycle_.length;
    JobInstance* instance = inputs.empty() ? nullptr : inputs.front()->job_instance().get();
    if (instance != nullptr && instance->has_error()) { return; }
    const Regst* any = inputs.empty() ? (outputs.empty() ? nullptr : outputs.front())
                                      : inputs.front();
    const int64_t piece_id = any == nullptr ? 0 : any->piece_id();
    for (KernelSlot& slot : kernels_) {
      for (const Binding& binding : slot.bindings) {
        Regst* regst = binding.is_input ? inputs[binding.regst_position]
                                        : outputs[binding.regst_position];
        slot.context.SetBlobData(binding.slot, regst->blob(binding.blob_index).mut_raw());
      }
      slot.context.set_job_instance(instance);
      slot.context.set_piece_id(piece_id);
      slot.context.set_cycle_step(step_);
      try {
        Kernel* kernel = slot.reads_dynamic ? KernelForShapes(slot, inputs) : slot.kernel.get();
        kernel->Forward(slot.context);
        if (slot.writes_dynamic) {
          for (const Binding& binding : slot.bindings) {
            if (binding.is_input || !binding.dynamic) { continue; }
            outputs[binding.regst_position]->blob(binding.blob_index)
                .set_shape(slot.context.BlobAt(binding.slot).shape());
          }
        }
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

  // The kernel for the shapes `slot`'s inputs have in this iteration; points the slot's blobs
  // at those shapes and its outputs' inferred ones.
  Kernel* KernelForShapes(KernelSlot& slot, const std::vector<Regst*>& inputs) {
    std::vector<Shape> shapes;
    for (const Binding& binding : slot.bindings) {
      if (!binding.is_input) { break; }  // inputs come first
      shapes.push_back(inputs[binding.regst_position]->blob(binding.blob_index).shape());
    }
    ShapedKernel* found = nullptr;
    for (ShapedKernel& shaped : slot.shaped) {
      if (std::equal(shapes.begin(), shapes.end(), shaped.shapes.begin())) {
        found = &shaped;
        break;
      }
    }
    if (found == nullptr) {
      if (slot.shaped.size() == kKeptShapedKernels) { slot.shaped.erase(slot.shaped.begin()); }
      slot.shaped.push_back(MakeShapedKernel(slot, std::move(shapes)));
      found = &slot.shaped.back();
    }
    for (size_t i = 0; i < slot.bindings.size(); ++i) {
      slot.context.SetBlobShape(slot.bindings[i].slot, found->shapes[i]);
    }
    return found->kernel.get();
  }

  ShapedKernel MakeShapedKernel(const KernelSlot& slot, std::vector<Shape> input_shapes) const {
    const KernelInitContext& bound = *slot.init_context;
    const OperatorConf& op = bound.conf();
    std::map<std::string, BlobDesc> inputs;
    for (size_t i = 0; i < input_shapes.size(); ++i) {
      BlobDesc desc = slot.bindings[i].desc;
      desc.shape = input_shapes[i];
      inputs[slot.bindings[i].key] = desc;
    }
    InferContext infer(op, inputs, bound.parallel_context());
    infer.set_in_run(true);
    try {
      OpRegistry::Instance().Get(op.op_type()).infer(infer);
    } catch (Error& error) {
      error.AddContext("for its inputs' shapes in this run (" + DescribeShapes(inputs) +
                       "), which depend on the data");
      throw;
    }
    ShapedKernel shaped;
    shaped.shapes = std::move(input_shapes);
    std::map<std::string, BlobDesc> descs = inputs;
    for (size_t i = shaped.shapes.size(); i < slot.bindings.size(); ++i) {
      const std::string& key = slot.bindings[i].key;
      const BlobDesc& limit = slot.bindings[i].desc;
      BlobDesc desc = infer.outputs().at(key);
      const bool fits = slot.bindings[i].dynamic ? desc.byte_size() <= limit.byte_size()
                                                 : desc.shape == limit.shape;
      if (!fits) {
        throw Error(ErrorKind::kValue)
            << "op '" << op.name() << "' (" << op.op_type() << "): its inputs in this run ("
            << DescribeShapes(inputs) << ") make output '" << key << "' " << desc.shape.ToString()
            << ", but that output is "
            << (slot.bindings[i].dynamic ? "bounded by " : "static ") << limit.ToString()
            << (slot.bindings[i].dynamic ? ""
                                         : " (a dynamic input must have its full shape here)");
      }
      desc.is_dynamic = limit.is_dynamic;
      shaped.shapes.push_back(desc.shape);
      descs[key] = desc;
    }
    shaped.init_context =
        std::make_unique<KernelInitContext>(op, std::move(descs), bound.parallel_context());
    shaped.kernel = slot.factory(*shaped.init_context);
    return shaped;
  }

  // "a_0 (3, 4), b_0 (4,)": for error messages.
  static std::string DescribeShapes(const std::map<std::string, BlobDesc>& descs) {
    std::string described;
    for (const auto& entry : descs) {
      described += (described.empty() ? "" : ", ") + entry.first + " " +
                   entry.second.shape.ToString();
    }
    return described;
  }

  std::vector<KernelSlot> kernels_;
  Cycle cycle_;             // of the task's op (kNone, length 1, for most)
  int64_t step_ = 0;        // of the last act in its cycle
  int64_t next_step_ = 0;
};

}  // namespace

std::unique_ptr<Actor> NewComputeActor(const TaskProto& task, const ActorContext& context,
                                       DeviceContext& device) {
  return std::make_unique<ComputeActor>(task, context, device);
}

}  // namespace oneflow
