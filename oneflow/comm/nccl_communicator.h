#pragma once
// Collectives among GPUs, on NCCL (CUDA builds). The compiler makes GPU collective tasks for every
// conversion between GPU layouts on the same GPUs that needs communication (reshard.h): P -> B
// (ncclAllReduce), P -> S(k) (ncclReduceScatter), S(k) -> B (ncclAllGather) and S(i) -> S(j)
// (grouped ncclSend/ncclRecv), any axis, even or uneven splits (split blobs of up to
// kMaxBoxCopyAxes axes). NCCL moves rank-major chunks of equal size, so each (collective, rank)
// has a plan worked out when the runtime starts (nccl_collective_plan.h, host code tested without
// a GPU): box copies that pack the parts into padded chunks of a staging buffer, the NCCL call,
// box copies that unpack the received chunks (kernels/cuda/box_copy.h). Where the layout already
// is NCCL's (even splits along axis 0, or after leading axes of size 1) NCCL reads the input and
// writes the output directly.
//
// Everything of one collective runs on the rank's GPU stream, in stream order, with no
// synchronization: pack, NCCL, unpack. The staging buffers are the GPU's workspace
// (CudaDeviceContext::Workspace): kernels enqueued later on the same stream reuse it only after
// the collective's work, in stream order. Every collective asks for the largest staging of any
// collective of its GPU, so the workspace grows here (synchronizing the stream) at most once, at
// the GPU's first collective, before any NCCL call was enqueued on it.
//
// One NCCL communicator per rank set and local GPU, created when the runtime starts: within one
// process with ncclCommInitAll; across machines the first rank's machine makes the NCCL unique id
// and hands it to the others through the control plane's store (the data plane's), then every
// machine initialises its ranks (ncclCommInitRank in a group).
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
#include "oneflow/comm/nccl_collective_plan.h"

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
    void* comm = nullptr;   // ncclComm_t
    int data_type = 0;      // ncclDataType_t
    int64_t elem_size = 0;  // bytes
    NcclCollectivePlan plan;
  };
  std::map<std::pair<int64_t, int64_t>, Launch> launches_;
  // GPU -> the workspace bytes its largest staging needs.
  std::map<int64_t, int64_t> workspace_bytes_;
};

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
