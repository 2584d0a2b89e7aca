// The two ends of a transfer between machines (a channel of the Plan).
//
// The send actor reads the producer's register and sends its bytes; the producer gets the
// register back once they have left. A channel that only carries a control edge (a tick) sends a
// TickPayload instead: the piece id, and the error of that piece on the sending machine, so that
// a kernel error on another machine fails the call on machine 0.
//
// The recv actor comes in two kinds:
//   - one that reads a tick of its own machine (its control input): it acts once per piece,
//     receiving into a free register of its own (data) or into a TickPayload (whose piece id it
//     checks and whose error it records); its consumers see an ordinary register;
//   - one that reads nothing: it receives machine 0's source tick, so it starts each iteration of
//     the job on this machine. It listens before it acts (a launch arrives like a
//     Runtime::Launch) and its receive is cancelled when the runtime stops.
// Transfers complete on the data plane's workers: a CompletionOrderStream keeps pieces in order.
// A failed transfer means a peer is gone: it stops the runtime (every call in flight fails).
#include <cstring>
#include <memory>

#include "oneflow/comm/point_to_point.h"
#include "oneflow/common/error.h"
#include "oneflow/runtime/actor.h"
#include "oneflow/runtime/actors/source_tick_actor.h"
#include "oneflow/runtime/completion_order_stream.h"
#include "oneflow/runtime/job_instance.h"
#include "oneflow/runtime/thread.h"

namespace oneflow {
namespace {

struct TickPayload {
  static constexpr int64_t kErrorBytes = 4072;
  int64_t piece_id = -1;
  int64_t error_kind = 0;  // an ErrorKind, when error_size > 0
  int64_t error_size = 0;
  char error[kErrorBytes];

  void SetError(std::exception_ptr cause) {
    if (!cause) { return; }
    std::string message;
    ErrorKind kind = ErrorKind::kRuntime;
    try {
      std::rethrow_exception(cause);
    } catch (oneflow::Error& e) {
      kind = e.kind();
      message = e.what();
    } catch (std::exception& e) { message = e.what(); } catch (...) {
      message = "unknown error";
    }
    error_kind = static_cast<int64_t>(kind);
    error_size = std::min<int64_t>(static_cast<int64_t>(message.size()), kErrorBytes);
    std::memcpy(error, message.data(), static_cast<size_t>(error_size));
  }
  // The error again, of the same kind, saying where it happened.
  std::exception_ptr Error(int64_t machine) const {
    return std::make_exception_ptr(oneflow::Error(static_cast<ErrorKind>(error_kind))
                                   << "on machine " << machine << ": "
                                   << std::string(error, static_cast<size_t>(error_size)));
  }
};

// The bytes of a register's blobs: from the first blob to the end of the last.
std::pair<char*, int64_t> Payload(Regst* regst, const RegstDescProto& desc) {
  if (desc.blob_size() == 0) { return {nullptr, 0}; }
  char* begin = static_cast<char*>(regst->blob(0).mut_raw());
  Blob& last = regst->blob(desc.blob_size() - 1);
  return {begin, static_cast<char*>(last.mut_raw()) + last.byte_size() - begin};
}

class TransferActor : public Actor {
 public:
  TransferActor(const TaskProto& task, const ActorContext& context, DeviceContext& device)
      : Actor(task, context, device) {
    OF_CHECK(context.point_to_point != nullptr)
        << "task " << task.task_id() << " transfers between machines, but this runtime has no "
        << "data plane (a single-process session cannot run a Plan that spans machines)";
  }
  Stream* own_stream() override { return &stream_; }

 protected:
  // Runs `transfer` and releases the act's registers when it is done (after `on_success`).
  template <typename Transfer>
  void Start(Transfer transfer, std::function<void()> on_success = {}) {
    const int64_t ticket = stream_.BeginWork();
    const ActorContext* context = &this->context();
    transfer([this, ticket, context, on_success](std::exception_ptr error) {
      if (!error && on_success) {
        try {
          on_success();
        } catch (...) { error = std::current_exception(); }
      }
      if (error) { context->on_fatal_error(error); }
      stream_.EndWork(ticket);
    });
  }
  const CommChannelProto& channel() const { return task().channel(); }
  PointToPoint& p2p() const { return *context().point_to_point; }

 private:
  CompletionOrderStream stream_;
};

class SendActor final : public TransferActor {
 public:
  SendActor(const TaskProto& task, const ActorContext& context, DeviceContext& device)
      : TransferActor(task, context, device) {
    OF_CHECK(task.consumed_regst_desc_id_size() == 1)
        << "send task " << task.task_id() << " must read one register desc";
    desc_ = context.regst_descs.at(task.consumed_regst_desc_id(0));
  }

 private:
  void Act(const std::vector<Regst*>& inputs, const std::vector<Regst*>&) override {
    Regst* input = inputs.at(0);
    const int64_t peer = channel().peer_machine();
    const int64_t id = channel().channel_id();
    PointToPoint* p2p = &this->p2p();
    if (channel().carries_data()) {
      auto [data, bytes] = Payload(input, *desc_);
      Start([=](PointToPoint::Done done) { p2p->Send(peer, id, data, bytes, std::move(done)); });
      return;
    }
    auto tick = std::make_shared<TickPayload>();
    tick->piece_id = input->piece_id();
    if (input->job_instance()) { tick->SetError(input->job_instance()->error()); }
    Start([=](PointToPoint::Done done) {
      p2p->Send(peer, id, tick.get(), sizeof(TickPayload),
                [tick, done = std::move(done)](std::exception_ptr error) { done(error); });
    });
  }

  const RegstDescProto* desc_ = nullptr;
};

class RecvActor final : public TransferActor {
 public:
  using TransferActor::TransferActor;

 private:
  void Act(const std::vector<Regst*>& inputs, const std::vector<Regst*>& outputs) override {
    Regst* output = outputs.at(0);
    const int64_t peer = channel().peer_machine();
    const int64_t id = channel().channel_id();
    PointToPoint* p2p = &this->p2p();
    if (channel().carries_data()) {
      auto [data, bytes] = Payload(output, task().produced_regst_desc(0));
      Start([=](PointToPoint::Done done) { p2p->Recv(peer, id, data, bytes, std::move(done)); });
      return;
    }
    auto tick = std::make_shared<TickPayload>();
    const int64_t expected = inputs.at(0)->piece_id();
    std::shared_ptr<JobInstance> instance = inputs.at(0)->job_instance();
    Start(
        [=](PointToPoint::Done done) {
          p2p->Recv(peer, id, tick.get(), sizeof(TickPayload),
                    [tick, done = std::move(done)](std::exception_ptr error) { done(error); });
        },
        [=] {
          OF_CHECK(tick->piece_id == expected)
              << "channel " << id << " from machine " << peer << " delivered piece "
              << tick->piece_id << ", expected " << expected;
          if (tick->error_size > 0 && instance) { instance->AddError(tick->Error(peer)); }
        });
  }
};

// Receives machine 0's source tick: each one that arrives starts an iteration here, as a launch
// starts one on machine 0. The iteration's job instance is this machine's own (it gathers the
// errors of the piece here; the sink tick sends them to machine 0).
class RemoteLaunchActor final : public SourceTickActor {
 public:
  RemoteLaunchActor(const TaskProto& task, const ActorContext& context, DeviceContext& device)
      : SourceTickActor(task, context, device) {
    OF_CHECK(context.point_to_point != nullptr)
        << "task " << task.task_id() << " receives from machine " << task.channel().peer_machine()
        << ", but this runtime has no data plane";
  }

  void OnRuntimeStarted() override { Listen(0); }

 private:
  void Listen(int64_t piece_id) {
    auto tick = std::make_shared<TickPayload>();
    const ActorContext* context = &this->context();
    const int64_t self = actor_id();
    const int64_t peer = task().channel().peer_machine();
    const int64_t channel = task().channel().channel_id();
    const int64_t job_id = task().job_id();
    context->point_to_point->Recv(
        peer, channel, tick.get(), sizeof(TickPayload),
        [this, tick, context, self, piece_id, peer, channel, job_id](std::exception_ptr error) {
          if (PointToPoint::IsCancellation(error)) { return; }  // the runtime stops
          if (!error && tick->piece_id != piece_id) {
            error = std::make_exception_ptr(oneflow::Error(ErrorKind::kInternal)
                                            << "channel " << channel << " from machine " << peer
                                            << " delivered piece " << tick->piece_id
                                            << ", expected " << piece_id);
          }
          if (error) {
            context->on_fatal_error(error);
            return;
          }
          Listen(piece_id + 1);
          ActorMessage launch;
          launch.type = ActorMessageType::kLaunch;
          launch.dst_actor_id = self;
          launch.job_instance =
              std::make_shared<JobInstance>("job " + std::to_string(job_id) + " on machine " +
                                                std::to_string(task().machine_id()),
                                            std::map<std::string, HostTensor>());
          context->bus->Send(std::move(launch));
        });
  }

  void HandleCommand(const ActorMessage& message) override {
    if (message.type == ActorMessageType::kStop) {
      // Machine 0 has stopped: nothing more will come.
      context().point_to_point->CancelRecv(task().channel().channel_id());
    }
    SourceTickActor::HandleCommand(message);
  }
};

}  // namespace

std::unique_ptr<Actor> NewSendActor(const TaskProto& task, const ActorContext& context,
                                    DeviceContext& device) {
  return std::make_unique<SendActor>(task, context, device);
}

std::unique_ptr<Actor> NewRecvActor(const TaskProto& task, const ActorContext& context,
                                    DeviceContext& device) {
  if (task.consumed_regst_desc_id_size() == 0) {
    return std::make_unique<RemoteLaunchActor>(task, context, device);
  }
  return std::make_unique<RecvActor>(task, context, device);
}

}  // namespace oneflow
