// Collective actor: one rank of a collective boxing (all-reduce, reduce-scatter, all-gather,
// all-to-all). Its act hands its input and output part to the communicator (in-process, or Gloo
// when the ranks span machines) and returns at once; its registers go out when the collective
// completes, which may be on another thread and, for consecutive pieces, in any order: its
// CompletionOrderStream releases them in the order the work was started. A rank on a GPU goes to
// the NCCL communicator, which enqueues it on the GPU's stream in the Plan's collective order.
#include <deque>
#include <mutex>

#include "oneflow/comm/communicator.h"
#include "oneflow/comm/gloo_communicator.h"
#include "oneflow/common/error.h"
#include "oneflow/device/stream.h"
#include "oneflow/runtime/actor.h"
#include "oneflow/runtime/completion_order_stream.h"
#include "oneflow/runtime/job_instance.h"

namespace oneflow {
namespace {

class CollectiveActor final : public Actor {
 public:
  CollectiveActor(const TaskProto& task, const ActorContext& context, DeviceContext& device)
      : Actor(task, context, device) {
    communicator_ = task.device_tag() == "gpu" ? context.gpu_communicator
                    : GlooCommunicator::SpansMachines(task.collective())
                        ? context.cross_machine_communicator
                        : context.communicator;
    OF_CHECK(communicator_ != nullptr)
        << "collective task " << task.task_id() << " has no communicator on this machine";
    const BlobBinding& input = task.collective().input();
    input_position_ = ConsumedPosition(input.regst_desc_id());
    input_blob_ = context.regst_descs.at(input.regst_desc_id())->blob_size() == 1
                      ? 0
                      : BlobIndexIn(*context.regst_descs.at(input.regst_desc_id()), input.lbn());
  }

  Stream* own_stream() override { return &stream_; }

 private:
  static int64_t BlobIndexIn(const RegstDescProto& desc, const std::string& lbn) {
    for (int64_t index = 0; index < desc.blob_size(); ++index) {
      if (desc.blob(index).lbn() == lbn) { return index; }
    }
    OF_CHECK(false) << "register desc " << desc.regst_desc_id() << " holds no blob '" << lbn << "'";
    return -1;
  }

  void Act(const std::vector<Regst*>& inputs, const std::vector<Regst*>& outputs) override {
    Regst* input = inputs.at(input_position_);
    CollectiveCall call;
    call.task = &task().collective();
    call.piece_id = input->piece_id();
    // Several acts of one piece (a collective between flow.unpack and flow.pack) in order.
    sub_piece_ = acted_ && input->piece_id() == last_piece_ ? sub_piece_ + 1 : 0;
    acted_ = true;
    last_piece_ = input->piece_id();
    call.sub_piece = sub_piece_;
    call.job_id = task().job_id();
    call.device = &device();
    call.input = input->blob(input_blob_).raw();
    call.output = outputs.at(0)->blob(0).mut_raw();
    std::shared_ptr<JobInstance> instance = input->job_instance();
    const int64_t ticket = stream_.BeginWork();
    const bool across_machines = communicator_ == context().cross_machine_communicator;
    communicator_->Submit(call,
                          [this, ticket, instance, across_machines](std::exception_ptr error) {
                            if (error && across_machines) {
                              // A broken collective between machines breaks every later one: stop
                              // the runtime.
                              context().on_fatal_error(error);
                            } else if (error && instance) {
                              instance->AddError(error);
                            }
                            stream_.EndWork(ticket);
                          });
  }

  Communicator* communicator_ = nullptr;
  CompletionOrderStream stream_;
  int64_t input_position_ = 0;
  int64_t input_blob_ = 0;
  bool acted_ = false;
  int64_t last_piece_ = 0;
  int64_t sub_piece_ = 0;
};

}  // namespace

std::unique_ptr<Actor> NewCollectiveActor(const TaskProto& task, const ActorContext& context,
                                          DeviceContext& device) {
  return std::make_unique<CollectiveActor>(task, context, device);
}

}  // namespace oneflow
