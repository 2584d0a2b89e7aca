// The two ends of a transfer between machines (a channel of the Plan). The send actor reads the
// producer's register and sends its bytes; the producer gets the register back once they have
// left. The recv actor acts once per piece (on its machine's source tick), receives into a free
// register of its own, and hands it to the consumers on its machine as an ordinary register.
// A channel that only carries a control edge sends the piece id, and the receiver checks it.
// Transfers complete on the data plane's workers: a CompletionOrderStream keeps pieces in order.
// A failed transfer means a peer is gone: it stops the runtime (every call in flight fails).
#include <memory>

#include "oneflow/comm/point_to_point.h"
#include "oneflow/common/error.h"
#include "oneflow/runtime/actor.h"
#include "oneflow/runtime/completion_order_stream.h"
#include "oneflow/runtime/job_instance.h"

namespace oneflow {
namespace {

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
  Stream& stream() override { return stream_; }

 protected:
  // Runs `transfer` and releases the act's registers when it is done.
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
    PointToPoint* p2p = context().point_to_point;
    if (channel().carries_data()) {
      auto [data, bytes] = Payload(input, *desc_);
      Start([=](PointToPoint::Done done) { p2p->Send(peer, id, data, bytes, std::move(done)); });
    } else {
      auto piece = std::make_shared<int64_t>(input->piece_id());
      Start([=](PointToPoint::Done done) {
        p2p->Send(peer, id, piece.get(), sizeof(int64_t),
                  [piece, done = std::move(done)](std::exception_ptr error) { done(error); });
      });
    }
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
    PointToPoint* p2p = context().point_to_point;
    if (channel().carries_data()) {
      auto [data, bytes] = Payload(output, task().produced_regst_desc(0));
      Start([=](PointToPoint::Done done) { p2p->Recv(peer, id, data, bytes, std::move(done)); });
    } else {
      auto piece = std::make_shared<int64_t>(-1);
      const int64_t expected = inputs.at(0)->piece_id();
      Start(
          [=](PointToPoint::Done done) {
            p2p->Recv(peer, id, piece.get(), sizeof(int64_t),
                      [piece, done = std::move(done)](std::exception_ptr error) { done(error); });
          },
          [=] {
            OF_CHECK(*piece == expected) << "channel " << id << " from machine " << peer
                                         << " delivered piece " << *piece << ", expected "
                                         << expected;
          });
    }
  }
};

}  // namespace

std::unique_ptr<Actor> NewSendActor(const TaskProto& task, const ActorContext& context,
                                    DeviceContext& device) {
  return std::make_unique<SendActor>(task, context, device);
}

std::unique_ptr<Actor> NewRecvActor(const TaskProto& task, const ActorContext& context,
                                    DeviceContext& device) {
  return std::make_unique<RecvActor>(task, context, device);
}

}  // namespace oneflow
