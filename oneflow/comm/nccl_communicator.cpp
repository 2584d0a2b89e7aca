#ifdef ONEFLOW_WITH_CUDA

#include "oneflow/comm/nccl_communicator.h"

#include <gloo/rendezvous/store.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include "oneflow/comm/data_plane.h"
#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/blob.h"
#include "oneflow/kernels/cuda/box_copy.h"

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

// The receive staging starts at this alignment after the send staging (NCCL and the copies are
// fastest on aligned buffers).
constexpr int64_t kStagingAlignment = 256;

int64_t AlignUp(int64_t bytes) {
  return (bytes + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment;
}

// Send staging, then receive staging, in one workspace.
int64_t WorkspaceBytes(const NcclCollectivePlan& plan, int64_t elem_size) {
  if (plan.send_staging == 0 && plan.recv_staging == 0) { return 0; }
  return AlignUp(plan.send_staging * elem_size) + plan.recv_staging * elem_size;
}

// The buffers of one rank's collective.
struct Buffers {
  const char* input = nullptr;
  char* output = nullptr;
  char* send_staging = nullptr;
  char* recv_staging = nullptr;
  int64_t elem_size = 0;

  char* At(PlanBuffer buffer, int64_t offset) const {
    char* base = nullptr;
    switch (buffer) {
      case PlanBuffer::kInput:
        base = const_cast<char*>(input);
        break;
      case PlanBuffer::kOutput:
        base = output;
        break;
      case PlanBuffer::kSendStaging:
        base = send_staging;
        break;
      case PlanBuffer::kRecvStaging:
        base = recv_staging;
        break;
    }
    OF_CHECK(base != nullptr) << "NCCL plan names the " << PlanBufferName(buffer)
                              << " buffer, which this collective does not have";
    return base + offset * elem_size;
  }
};

void RunCopies(const std::vector<BoxCopy>& copies, const Buffers& buffers, cudaStream_t stream) {
  for (const BoxCopy& copy : copies) {
    LaunchBoxCopy(buffers.elem_size, static_cast<int64_t>(copy.extent.size()), copy.extent.data(),
                  buffers.At(copy.src, copy.src_base), copy.src_dims.data(), copy.src_begin.data(),
                  buffers.At(copy.dst, copy.dst_base), copy.dst_dims.data(), copy.dst_begin.data(),
                  stream);
  }
}

// A rank's sends and receives, in one NCCL group so that they progress together (a blocking
// send before its peer's receive would deadlock). The group is always closed, even when a call
// in it fails.
void SendAndReceive(const NcclCollectivePlan& plan, const Buffers& buffers,
                    ncclDataType_t data_type, ncclComm_t comm, cudaStream_t stream) {
  if (plan.sends.empty() && plan.recvs.empty()) { return; }
  std::vector<const char*> sends;
  std::vector<char*> recvs;
  for (const PeerTransfer& send : plan.sends) {
    sends.push_back(buffers.At(send.buffer, send.offset));
  }
  for (const PeerTransfer& recv : plan.recvs) {
    recvs.push_back(buffers.At(recv.buffer, recv.offset));
  }
  OF_NCCL_CHECK(ncclGroupStart());
  ncclResult_t status = ncclSuccess;
  for (size_t i = 0; i < sends.size() && status == ncclSuccess; ++i) {
    const PeerTransfer& send = plan.sends[i];
    status = ncclSend(sends[i], static_cast<size_t>(send.count), data_type,
                      static_cast<int>(send.peer), comm, stream);
  }
  for (size_t i = 0; i < recvs.size() && status == ncclSuccess; ++i) {
    const PeerTransfer& recv = plan.recvs[i];
    status = ncclRecv(recvs[i], static_cast<size_t>(recv.count), data_type,
                      static_cast<int>(recv.peer), comm, stream);
  }
  const ncclResult_t end = ncclGroupEnd();
  OF_NCCL_CHECK(status);
  OF_NCCL_CHECK(end);
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
    launch.elem_size = SizeOf(logical.data_type);
    launch.plan = PlanNcclCollective(collective.kind(), logical.shape, collective.src_sbp(),
                                     collective.dst_sbp(), static_cast<int64_t>(ranks.size()),
                                     collective.rank());
    int64_t& workspace = workspace_bytes_[collective.rank_device(collective.rank())];
    workspace = std::max(workspace, WorkspaceBytes(launch.plan, launch.elem_size));
  }
}

void NcclCommunicator::Connect(const RankSet& ranks, int64_t machine_id, DataPlane* plane,
                               const std::string& key) {
  std::string names;
  bool local_only = true;
  std::vector<int64_t> local_ranks;
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    // (Appended piecewise: GCC 12 warns falsely, -Wrestrict, on `(cond ? "" : ",") + string`.)
    if (!names.empty()) { names += ","; }
    names += std::to_string(ranks[rank].first) + ":" + std::to_string(ranks[rank].second);
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
  if (call.sub_piece > 0) {
    // The sequencer's order (iteration, collective id) would deadlock a collective that acts
    // several times per iteration against the ones after its section.
    throw Error(ErrorKind::kNotImplemented)
        << "a collective between GPUs (" << CollectiveKindName(task.kind()) << ", collective "
        << task.collective_id() << ") inside a section between flow.unpack/flow.repeat and "
        << "flow.pack/flow.acc is not supported yet; place that section on one GPU or on CPUs";
  }
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
    const NcclCollectivePlan& plan = launch.plan;
    auto comm = static_cast<ncclComm_t>(launch.comm);
    const auto data_type = static_cast<ncclDataType_t>(launch.data_type);
    cudaStream_t stream = device->cuda_stream();
    Buffers buffers;
    buffers.input = static_cast<const char*>(call.input);
    buffers.output = static_cast<char*>(call.output);
    buffers.elem_size = launch.elem_size;
    const int64_t workspace_bytes = workspace_bytes_.at(task.rank_device(task.rank()));
    if (workspace_bytes > 0) {
      // The largest staging of this GPU's collectives, so the workspace never grows (and
      // synchronizes) after the first collective; this one's staging is at its start.
      char* workspace = static_cast<char*>(device->Workspace(workspace_bytes));
      if (plan.send_staging > 0) { buffers.send_staging = workspace; }
      if (plan.recv_staging > 0) {
        buffers.recv_staging = workspace + AlignUp(plan.send_staging * launch.elem_size);
      }
    }
    const void* send = plan.send_from_input ? buffers.input : buffers.send_staging;
    void* recv = plan.recv_into_output ? buffers.output : buffers.recv_staging;
    const auto count = static_cast<size_t>(plan.chunk);
    OF_CHECK(count == 0 || (send != nullptr && recv != nullptr))
        << NcclPrimitiveName(plan.primitive) << " of collective " << task.collective_id()
        << " rank " << task.rank() << " has no buffer: " << plan.ToString();
    RunCopies(plan.pack, buffers, stream);
    // A zero chunk is zero on every rank (the plans agree): nothing to call.
    switch (plan.primitive) {
      case NcclPrimitive::kAllReduce:
        if (count > 0) {
          OF_NCCL_CHECK(ncclAllReduce(send, recv, count, data_type, ncclSum, comm, stream));
        }
        break;
      case NcclPrimitive::kReduceScatter:
        if (count > 0) {
          OF_NCCL_CHECK(ncclReduceScatter(send, recv, count, data_type, ncclSum, comm, stream));
        }
        break;
      case NcclPrimitive::kAllGather:
        if (count > 0) { OF_NCCL_CHECK(ncclAllGather(send, recv, count, data_type, comm, stream)); }
        break;
      case NcclPrimitive::kSendRecv:
        SendAndReceive(plan, buffers, data_type, comm, stream);
        break;
    }
    RunCopies(plan.unpack, buffers, stream);
  } catch (...) {
    done(std::current_exception());
    return;
  }
  device->stream().AddCallback([done] { done(nullptr); });
}

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
