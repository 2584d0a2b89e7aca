#pragma once
// Collectives whose ranks span machines, on Gloo. Every device rank of such a collective is a
// rank of a Gloo context for its rank set (one context per distinct set and device, connected
// when the runtime starts, in Plan order, on every machine alike). Each (collective, rank) has
// its own SerialWorker running the pieces in order, with the collective id as Gloo tag, so
// collectives never wait on one another and no global order is needed.
//
//   all-reduce       gloo::allreduce (sum)
//   reduce-scatter   gloo::allreduce into a whole buffer, then this rank's slice
//   all-gather       gloo::allgatherv of the parts, then each part's box into the output
//   all-to-all       the same as all-gather (every rank receives every part: simple, not lean)

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oneflow/comm/communicator.h"
#include "oneflow/comm/serial_worker.h"

namespace gloo {
class Context;
}

namespace oneflow {

class DataPlane;

class GlooCommunicator final : public Communicator {
 public:
  // Connects the contexts of every collective of `plan` that spans machines and has a rank on
  // this machine (blocks until every machine has done the same). `key` names this Plan's
  // rendezvous (unique per started Plan).
  GlooCommunicator(DataPlane& plane, const Plan& plan, const std::string& key);
  ~GlooCommunicator() override;

  void Submit(const CollectiveCall& call, Done done) override;
  // After a failure: the destructor leaves workers stuck in a collective behind (a peer that
  // stopped answering); their completions are dropped from then on.
  void Abort();

  // Whether a collective's ranks are on more than one machine.
  static bool SpansMachines(const CollectiveTaskProto& task);

 private:
  static std::string RankSetKey(const CollectiveTaskProto& task);

  DataPlane& plane_;
  // rank set -> context of each rank on this machine (by rank).
  std::map<std::string, std::map<int64_t, std::shared_ptr<gloo::Context>>> contexts_;
  std::mutex mutex_;
  bool aborted_ = false;
  // Completions run under this lock and only while `alive`: the destructor clears it, so a
  // worker left behind never calls into actors that are gone.
  struct Liveness {
    std::mutex mutex;
    bool alive = true;
  };
  std::shared_ptr<Liveness> liveness_ = std::make_shared<Liveness>();
  // Each (collective id, rank) run here: its context, a copy of its task, its worker.
  struct Rank {
    std::shared_ptr<gloo::Context> context;
    std::shared_ptr<const CollectiveTaskProto> task;
    std::unique_ptr<SerialWorker> worker;
  };
  std::map<std::pair<int64_t, int64_t>, Rank> ranks_;
};

}  // namespace oneflow
