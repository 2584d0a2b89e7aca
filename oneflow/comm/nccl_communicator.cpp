#ifdef ONEFLOW_WITH_CUDA

#include "oneflow/comm/nccl_communicator.h"

#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "oneflow/common/error.h"
#include "oneflow/device/cuda_check.h"
#include "oneflow/device/cuda_device_context.h"
#include "oneflow/framework/blob.h"

namespace oneflow {

namespace {

#define OF_NCCL_CHECK(call)                                                                 \
  do {                                                                                      \
    const ncclResult_t of_nccl_status_ = (call);                                            \
    if (of_nccl_status_ != ncclSuccess) {                                                   \
      throw Error(ErrorKind::kRuntime) << #call << " failed: "                              \
                                       << ncclGetErrorString(of_nccl_status_) << " ("       \
                                       << __FILE__ << ":" << __LINE__ << ")";               \
    }                                                                                       \
  } while (false)

ncclDataType_t NcclDataType(DataType data_type) {
  switch (data_type) {
    case kFloat: return ncclFloat32;
    case kDouble: return ncclFloat64;
    case kFloat16: return ncclFloat16;
    case kInt8: return ncclInt8;
    case kUInt8: return ncclUint8;
    case kInt32: return ncclInt32;
    case kInt64: return ncclInt64;
    default: break;
  }
  throw Error(ErrorKind::kNotImplemented)
      << "NCCL collectives of dtype " << DataTypeName(data_type) << " are not supported";
}

std::vector<int64_t> RankDevices(const CollectiveTaskProto& task) {
  return std::vector<int64_t>(task.rank_device().begin(), task.rank_device().end());
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

NcclCommunicator::NcclCommunicator(const Plan& plan, int64_t machine_id) {
  std::set<std::vector<int64_t>> rank_sets;
  for (const TaskProto& task : plan.task()) {
    if (!IsGpuCollective(task, machine_id)) { continue; }
    const CollectiveTaskProto& collective = task.collective();
    for (int64_t machine : collective.rank_machine()) {
      OF_CHECK(machine == machine_id) << "GPU collective " << collective.collective_id()
                                      << " spans machines; NCCL runs within one process here";
    }
    rank_sets.insert(RankDevices(collective));
    const int64_t gpu = collective.rank_device(collective.rank());
    sequences_[gpu].order[task.job_id()].push_back(collective.collective_id());
  }
  for (auto& [gpu, sequence] : sequences_) {
    for (auto& [job, order] : sequence.order) {
      std::sort(order.begin(), order.end());
      order.erase(std::unique(order.begin(), order.end()), order.end());
      for (size_t i = 0; i < order.size(); ++i) { sequence.position[order[i]] = i; }
    }
  }
  for (const std::vector<int64_t>& devices : rank_sets) {
    std::vector<ncclComm_t> comms(devices.size());
    std::vector<int> ordinals(devices.begin(), devices.end());
    const ncclResult_t status =
        ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), ordinals.data());
    if (status != ncclSuccess) {
      std::string names;
      for (int64_t device : devices) { names += (names.empty() ? "" : ",") + std::to_string(device); }
      throw Error(ErrorKind::kRuntime) << "NCCL could not connect GPUs " << names << ": "
                                       << ncclGetErrorString(status);
    }
    for (size_t i = 0; i < devices.size(); ++i) { comms_[{devices, devices[i]}] = comms[i]; }
  }
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
  const int64_t gpu = task.rank_device(task.rank());
  Sequence& sequence = sequences_.at(gpu);
  const size_t index = sequence.position.at(task.collective_id());
  sequence.waiting.emplace(std::make_tuple(call.job_id, call.piece_id, index),
                           Pending{call, std::move(done)});
  // Enqueue every rank whose turn has come: one iteration's collectives in id order, then the
  // next iteration's (of whichever job runs: jobs never overlap).
  while (true) {
    if (!sequence.in_round) {
      auto first = std::find_if(sequence.waiting.begin(), sequence.waiting.end(),
                                [](const auto& entry) { return std::get<2>(entry.first) == 0; });
      if (first == sequence.waiting.end()) { return; }
      sequence.in_round = true;
      sequence.job = std::get<0>(first->first);
      sequence.piece = std::get<1>(first->first);
      sequence.next = 0;
    }
    auto it = sequence.waiting.find(std::make_tuple(sequence.job, sequence.piece, sequence.next));
    if (it == sequence.waiting.end()) { return; }
    Pending pending = std::move(it->second);
    sequence.waiting.erase(it);
    if (++sequence.next == sequence.order.at(sequence.job).size()) { sequence.in_round = false; }
    Enqueue(pending);
  }
}

void NcclCommunicator::Enqueue(const Pending& pending) {
  const CollectiveCall& call = pending.call;
  const CollectiveTaskProto& task = *call.task;
  auto* device = dynamic_cast<CudaDeviceContext*>(call.device);
  OF_CHECK(device != nullptr) << "GPU collective " << task.collective_id()
                              << " was submitted from a thread that is not a GPU's";
  try {
    const std::vector<int64_t> devices = RankDevices(task);
    auto comm = static_cast<ncclComm_t>(comms_.at({devices, devices.at(task.rank())}));
    const BlobDesc logical = BlobDesc::FromProto(task.logical_blob_desc());
    const ncclDataType_t data_type = NcclDataType(logical.data_type);
    const size_t total = static_cast<size_t>(logical.shape.elem_count());
    const size_t part = total / devices.size();
    cudaStream_t stream = device->cuda_stream();
    switch (task.kind()) {
      case kAllReduce:
        OF_NCCL_CHECK(ncclAllReduce(call.input, call.output, total, data_type, ncclSum, comm,
                                    stream));
        break;
      case kReduceScatter:
        OF_NCCL_CHECK(ncclReduceScatter(call.input, call.output, part, data_type, ncclSum, comm,
                                        stream));
        break;
      case kAllGather:
        OF_NCCL_CHECK(ncclAllGather(call.input, call.output, part, data_type, comm, stream));
        break;
      default:
        OF_CHECK(false) << "no NCCL collective for " << CollectiveKindName(task.kind());
    }
  } catch (...) {
    pending.done(std::current_exception());
    return;
  }
  Done done = pending.done;
  device->stream().AddCallback([done] { done(nullptr); });
}

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
