#pragma once
// Collectives among GPUs, on NCCL (CUDA builds). The compiler makes GPU collective tasks only
// where NCCL's layout is ours (all-reduce of whole buffers, reduce-scatter and all-gather of even
// splits along axis 0; reshard.h). One NCCL communicator per rank set and local GPU, created when
// the runtime starts: within one process with ncclCommInitAll; across machines the first rank's
// machine makes the NCCL unique id and hands it to the others through the control plane's store
// (the data plane's), then every machine initialises its ranks (ncclCommInitRank in a group).
//
// NCCL kernels of one GPU run in its stream's order and wait for their peers, so every GPU must
// enqueue the collectives it shares with others in one order, or two GPUs could each wait for a
// collective the other has queued behind. The order is the Plan's: collective ids grow in the
// topological order of the boxing that made them, so on each GPU the collectives of one iteration
// are enqueued by increasing id, iteration after iteration. A rank submitted early (its input was
// ready first) waits, on its own GPU thread, until the ranks before it in that order have been
// enqueued. Everything for one GPU happens on that GPU's runtime thread, so nothing here is
// shared between threads.

#ifdef ONEFLOW_WITH_CUDA

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "oneflow/comm/communicator.h"

namespace oneflow {

class DataPlane;

class NcclCommunicator final : public Communicator {
 public:
  // Communicators for every GPU collective of `plan` on machine `machine_id`. `plane` (null in a
  // single-process run) carries the unique ids of rank sets that span machines, under `key`
  // (unique per started Plan). Blocks until every machine has done the same. Throws
  // Error(kRuntime) naming the GPUs when NCCL cannot set them up.
  NcclCommunicator(const Plan& plan, int64_t machine_id, DataPlane* plane, const std::string& key);
  ~NcclCommunicator() override;

  // From the runtime thread of the rank's GPU (call.device is its CudaDeviceContext).
  void Submit(const CollectiveCall& call, Done done) override;

  // Whether the plan has GPU collectives on that machine (so a communicator is needed).
  static bool Needed(const Plan& plan, int64_t machine_id);

 private:
  struct Pending {
    CollectiveCall call;
    Done done;
  };
  // The order in which one GPU enqueues its collectives, and those waiting for their turn.
  struct Sequence {
    std::map<int64_t, std::vector<int64_t>> order;  // job -> its collective ids, sorted
    std::map<int64_t, size_t> position;             // collective id -> index in order
    std::map<std::tuple<int64_t, int64_t, size_t>, Pending> waiting;  // (job, piece, index)
    bool in_round = false;  // enqueueing one iteration's collectives
    int64_t job = 0;
    int64_t piece = 0;
    size_t next = 0;
  };
  void Enqueue(const Pending& pending);

  std::map<int64_t, Sequence> sequences_;  // GPU -> its sequence
  // A collective's ranks: (machine, GPU) of each.
  using RankSet = std::vector<std::pair<int64_t, int64_t>>;
  static RankSet RanksOf(const CollectiveTaskProto& task);
  void Connect(const RankSet& ranks, int64_t machine_id, DataPlane* plane, const std::string& key);

  // (rank set, rank) -> communicator (an ncclComm_t) of the ranks on this machine.
  std::map<std::pair<RankSet, int64_t>, void*> comms_;
};

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
