#pragma once
// Collectives among GPUs, on NCCL (CUDA builds). The compiler makes GPU collective tasks only
// where NCCL's layout is ours (all-reduce of whole buffers, reduce-scatter and all-gather of even
// splits along axis 0; reshard.h). One NCCL communicator per rank set and local GPU, created when
// the runtime starts: within one process with ncclCommInitAll; across machines the first rank's
// machine makes the NCCL unique id and hands it to the others through the control plane's store
// (the data plane's), then every machine initialises its ranks (ncclCommInitRank in a group).
//
// NCCL kernels of one GPU run in its stream's order and wait for their peers, so every GPU
// enqueues its collectives in one global order (collective_sequencer.h): a rank submitted early
// waits, on its own GPU thread, until the ranks before it have been enqueued. Everything for one
// GPU happens on that GPU's runtime thread, so nothing here is shared between threads.

#ifdef ONEFLOW_WITH_CUDA

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "oneflow/comm/collective_sequencer.h"
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
  void Enqueue(const CollectiveCall& call, const Done& done);

  std::map<int64_t, CollectiveSequencer> sequences_;  // GPU -> the order it enqueues in
  // A collective's ranks: (machine, GPU) of each.
  using RankSet = std::vector<std::pair<int64_t, int64_t>>;
  static RankSet RanksOf(const CollectiveTaskProto& task);
  void Connect(const RankSet& ranks, int64_t machine_id, DataPlane* plane, const std::string& key);

  // (rank set, rank) -> communicator (an ncclComm_t) of the ranks on this machine.
  std::map<std::pair<RankSet, int64_t>, void*> comms_;
  // What each (collective id, rank) of this machine launches, worked out when the runtime starts.
  struct Launch {
    void* comm = nullptr;  // ncclComm_t
    int data_type = 0;     // ncclDataType_t
    size_t total = 0;      // elements of the whole blob
    size_t part = 0;       // elements of one rank's part (reduce-scatter, all-gather)
  };
  std::map<std::pair<int64_t, int64_t>, Launch> launches_;
};

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
