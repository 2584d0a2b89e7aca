#ifdef ONEFLOW_WITH_CUDA

#include "oneflow/comm/nccl_communicator.h"

#include <gloo/rendezvous/store.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "oneflow/comm/data_plane.h"
#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/blob.h"

namespace oneflow {

namespace {

#define OF_NCCL_CHECK(call)                                                                  \
  do {                                                                                       \
    const ncclResult_t of_nccl_status_ = (call);                                             \
    if (of_nccl_status_ != ncclSuccess) {                                                    \
      throw Error(ErrorKind::kRuntime)                                                       \
          << #call << " failed: " << ncclGetErrorString(of_nccl_status_) << " (" << __FILE__ \
          << ":" << __LINE__ << ")";                                                         \
    }                                                                                        \
  } while (false)

ncclDataType_t NcclDataType(DataType data_type) {
  switch (data_type) {
    case kFloat:
      return ncclFloat32;
    case kDouble:
      return ncclFloat64;
    case kFloat16:
      return ncclFloat16;
    case kInt8:
      return ncclInt8;
    case kUInt8:
      return ncclUint8;
    case kInt32:
      return ncclInt32;
    case kInt64:
      return ncclInt64;
    default:
      break;
  }
  throw Error(ErrorKind::kNotImplemented)
      << "NCCL collectives of dtype " << DataTypeName(data_type) << " are not supported";
}

bool IsGpuCollective(const TaskProto& task, int64_t machine_id) {
  return task.task_type() == kCollective && task.device_tag() == "gpu" &&
         task.machine_id() == machine_id;
}

}  // namespace

bool NcclCommunicator::Needed(const Plan& plan, int64_t machine_id) {
  for (const TaskProto& task : plan.task()) {
    if (IsGpuCollective(task, machine_id)) { return true; }
  }
  return false;
}

NcclCommunicator::RankSet NcclCommunicator::RanksOf(const CollectiveTaskProto& task) {
  RankSet ranks;
  for (int64_t rank = 0; rank < task.rank_device_size(); ++rank) {
    ranks.emplace_back(task.rank_machine(rank), task.rank_device(rank));
  }
  return ranks;
}

NcclCommunicator::NcclCommunicator(const Plan& plan, int64_t machine_id, DataPlane* plane,
                                   const std::string& key) {
  std::set<RankSet> rank_sets;
  for (const TaskProto& task : plan.task()) {
    if (!IsGpuCollective(task, machine_id)) { continue; }
    const CollectiveTaskProto& collective = task.collective();
    rank_sets.insert(RanksOf(collective));
    const int64_t gpu = collective.rank_device(collective.rank());
    sequences_[gpu].Declare(task.job_id(), collective.collective_id());
  }
  // Every machine walks the rank sets in the same (sorted) order, so the blocking
  // initialisations meet.
  for (const RankSet& ranks : rank_sets) { Connect(ranks, machine_id, plane, key); }
  for (const TaskProto& task : plan.task()) {
    if (!IsGpuCollective(task, machine_id)) { continue; }
    const CollectiveTaskProto& collective = task.collective();
    const RankSet ranks = RanksOf(collective);
    const BlobDesc logical = BlobDesc::FromProto(collective.logical_blob_desc());
    Launch& launch = launches_[{collective.collective_id(), collective.rank()}];
    launch.comm = comms_.at({ranks, collective.rank()});
    launch.data_type = NcclDataType(logical.data_type);
    launch.total = static_cast<size_t>(logical.shape.elem_count());
    launch.part = launch.total / ranks.size();
  }
}

void NcclCommunicator::Connect(const RankSet& ranks, int64_t machine_id, DataPlane* plane,
                               const std::string& key) {
  std::string names;
  bool local_only = true;
  std::vector<int64_t> local_ranks;
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    names += (names.empty() ? "" : ",") + std::to_string(ranks[rank].first) + ":" +
             std::to_string(ranks[rank].second);
    local_only = local_only && ranks[rank].first == machine_id;
    if (ranks[rank].first == machine_id) { local_ranks.push_back(static_cast<int64_t>(rank)); }
  }
  const auto fail = [&](const char* what, ncclResult_t status) {
    throw Error(ErrorKind::kRuntime) << "NCCL could not connect GPUs " << names << " (" << what
                                     << "): " << ncclGetErrorString(status);
  };
  std::vector<ncclComm_t> comms(local_ranks.size());
  if (local_only) {
    std::vector<int> ordinals;
    for (const auto& rank : ranks) { ordinals.push_back(static_cast<int>(rank.second)); }
    const ncclResult_t status =
        ncclCommInitAll(comms.data(), static_cast<int>(ordinals.size()), ordinals.data());
    if (status != ncclSuccess) { fail("ncclCommInitAll", status); }
  } else {
    OF_CHECK(plane != nullptr) << "GPU collective over " << names
                               << " spans machines, but this runtime has no data plane";
    // The first rank's machine makes the id; the others wait for it in the store.
    const std::string id_key = key + "/nccl/" + names;
    ncclUniqueId id;
    if (ranks.front().first == machine_id) {
      const ncclResult_t status = ncclGetUniqueId(&id);
      if (status != ncclSuccess) { fail("ncclGetUniqueId", status); }
      plane->store().set(id_key, std::vector<char>(id.internal, id.internal + sizeof(id.internal)));
    } else {
      const std::vector<char> bytes = plane->store().get(id_key);
      OF_CHECK(bytes.size() == sizeof(id.internal))
          << "NCCL unique id for GPUs " << names << ": " << bytes.size() << " bytes";
      std::copy(bytes.begin(), bytes.end(), id.internal);
    }
    ncclResult_t status = ncclGroupStart();
    if (status != ncclSuccess) { fail("ncclGroupStart", status); }
    for (size_t i = 0; i < local_ranks.size(); ++i) {
      OF_CUDA_CHECK(cudaSetDevice(static_cast<int>(ranks[local_ranks[i]].second)));
      status = ncclCommInitRank(&comms[i], static_cast<int>(ranks.size()), id,
                                static_cast<int>(local_ranks[i]));
      if (status != ncclSuccess) { fail("ncclCommInitRank", status); }
    }
    status = ncclGroupEnd();
    if (status != ncclSuccess) { fail("ncclGroupEnd", status); }
  }
  for (size_t i = 0; i < local_ranks.size(); ++i) { comms_[{ranks, local_ranks[i]}] = comms[i]; }
}

NcclCommunicator::~NcclCommunicator() {
  for (auto& entry : comms_) {
    const ncclResult_t status = ncclCommDestroy(static_cast<ncclComm_t>(entry.second));
    if (status != ncclSuccess) {
      std::fprintf(stderr, "oneflow: ncclCommDestroy on gpu %lld failed: %s\n",
                   static_cast<long long>(entry.first.second), ncclGetErrorString(status));
    }
  }
}

void NcclCommunicator::Submit(const CollectiveCall& call, Done done) {
  const CollectiveTaskProto& task = *call.task;
  CollectiveSequencer& sequence = sequences_.at(task.rank_device(task.rank()));
  sequence.Submit(call.job_id, call.piece_id, task.collective_id(),
                  [this, call, done = std::move(done)] { Enqueue(call, done); });
}

void NcclCommunicator::Enqueue(const CollectiveCall& call, const Done& done) {
  const CollectiveTaskProto& task = *call.task;
  auto* device = dynamic_cast<CudaDeviceContext*>(call.device);
  OF_CHECK(device != nullptr) << "GPU collective " << task.collective_id()
                              << " was submitted from a thread that is not a GPU's";
  try {
    const Launch& launch = launches_.at({task.collective_id(), task.rank()});
    auto comm = static_cast<ncclComm_t>(launch.comm);
    const auto data_type = static_cast<ncclDataType_t>(launch.data_type);
    const size_t total = launch.total;
    const size_t part = launch.part;
    cudaStream_t stream = device->cuda_stream();
    switch (task.kind()) {
      case kAllReduce:
        OF_NCCL_CHECK(
            ncclAllReduce(call.input, call.output, total, data_type, ncclSum, comm, stream));
        break;
      case kReduceScatter:
        OF_NCCL_CHECK(
            ncclReduceScatter(call.input, call.output, part, data_type, ncclSum, comm, stream));
        break;
      case kAllGather:
        OF_NCCL_CHECK(ncclAllGather(call.input, call.output, part, data_type, comm, stream));
        break;
      default:
        OF_CHECK(false) << "no NCCL collective for " << CollectiveKindName(task.kind());
    }
  } catch (...) {
    done(std::current_exception());
    return;
  }
  device->stream().AddCallback([done] { done(nullptr); });
}

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
