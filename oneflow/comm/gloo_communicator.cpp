#include "oneflow/comm/gloo_communicator.h"

#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/context.h>

#include <set>
#include <thread>

#include "oneflow/comm/data_plane.h"
#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/kernels/cpu/tensor_slice_copy.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

struct SumReduction {
  template <typename T>
  gloo::AllreduceOptions::Func operator()() const {
    return [](void* out, const void* a, const void* b, size_t n) {
      T* c = static_cast<T*>(out);
      const T* x = static_cast<const T*>(a);
      const T* y = static_cast<const T*>(b);
      for (size_t i = 0; i < n; ++i) { c[i] = x[i] + y[i]; }
    };
  }
};

void AllReduce(const std::shared_ptr<gloo::Context>& context, uint32_t tag, DataType data_type,
               const void* input, void* output, int64_t elements) {
  gloo::AllreduceOptions options(context);
  SwitchDataType(data_type, [&]<typename T>() {
    options.setInput<T>(static_cast<T*>(const_cast<void*>(input)), static_cast<size_t>(elements));
    options.setOutput<T>(static_cast<T*>(output), static_cast<size_t>(elements));
    options.setReduceFunction(SumReduction{}.operator()<T>());
    return 0;
  });
  options.setTag(tag);
  options.setTimeout(DataPlane::kTransferTimeout);
  gloo::allreduce(options);
}

void RunCollective(const std::shared_ptr<gloo::Context>& context, const CollectiveCall& call) {
  const CollectiveTaskProto& task = *call.task;
  const BlobDesc logical = BlobDesc::FromProto(task.logical_blob_desc());
  const Shape& shape = logical.shape;
  const int64_t ranks = task.rank_device_size();
  const int64_t rank = task.rank();
  const int64_t element = SizeOf(logical.data_type);
  const uint32_t tag = static_cast<uint32_t>(task.collective_id());
  switch (task.kind()) {
    case kAllReduce:
      AllReduce(context, tag, logical.data_type, call.input, call.output, shape.elem_count());
      return;
    case kReduceScatter: {
      std::vector<char> whole(static_cast<size_t>(shape.elem_count() * element));
      AllReduce(context, tag, logical.data_type, call.input, whole.data(), shape.elem_count());
      const TensorSlice mine = SliceOfPart(shape, task.dst_sbp(), rank, ranks);
      CopyTensorSlice(logical.data_type, mine, whole.data(), FullSlice(shape), call.output, mine,
                      false);
      return;
    }
    case kAllGather:
    case kAllToAll: {
      std::vector<TensorSlice> parts;
      std::vector<size_t> bytes;
      int64_t total = 0;
      for (int64_t r = 0; r < ranks; ++r) {
        parts.push_back(SliceOfPart(shape, task.src_sbp(), r, ranks));
        bytes.push_back(static_cast<size_t>(parts.back().elem_count() * element));
        total += static_cast<int64_t>(bytes.back());
      }
      std::vector<char> gathered(static_cast<size_t>(std::max<int64_t>(total, 1)));
      gloo::AllgathervOptions options(context);
      options.setInput<char>(static_cast<char*>(const_cast<void*>(call.input)), bytes[rank]);
      options.setOutput<char>(gathered.data(), bytes);
      options.setTag(tag);
      options.setTimeout(DataPlane::kTransferTimeout);
      gloo::allgatherv(options);
      const TensorSlice mine = SliceOfPart(shape, task.dst_sbp(), rank, ranks);
      int64_t offset = 0;
      for (int64_t r = 0; r < ranks; ++r) {
        const TensorSlice region = Intersect(parts[r], mine);
        if (!region.empty()) {
          CopyTensorSlice(logical.data_type, region, gathered.data() + offset, parts[r],
                          call.output, mine, false);
        }
        offset += static_cast<int64_t>(bytes[r]);
      }
      return;
    }
    default:
      break;
  }
  OF_CHECK(false) << "unknown collective kind " << task.kind();
}

}  // namespace

bool GlooCommunicator::SpansMachines(const CollectiveTaskProto& task) {
  for (int64_t machine : task.rank_machine()) {
    if (machine != task.rank_machine(0)) { return true; }
  }
  return false;
}

std::string GlooCommunicator::RankSetKey(const CollectiveTaskProto& task) {
  std::string key;
  for (int64_t r = 0; r < task.rank_device_size(); ++r) {
    key += (r ? "," : "") + std::to_string(task.rank_machine(r)) + ":" +
           std::to_string(task.rank_device(r));
  }
  return key;
}

GlooCommunicator::GlooCommunicator(DataPlane& plane, const Plan& plan, const std::string& key)
    : plane_(plane) {
  // Rank sets in order of first appearance in the Plan: the same on every machine.
  std::vector<std::pair<std::string, const CollectiveTaskProto*>> sets;
  std::map<std::string, bool> seen;
  for (const TaskProto& task : plan.task()) {
    if (task.task_type() != kCollective || !SpansMachines(task.collective())) { continue; }
    const std::string set = RankSetKey(task.collective());
    if (seen.emplace(set, true).second) { sets.emplace_back(set, &task.collective()); }
  }
  // Members of one set on this machine connect at the same time (each waits for all).
  std::vector<std::thread> connecting;
  std::mutex mutex;
  std::exception_ptr error;
  for (size_t index = 0; index < sets.size(); ++index) {
    const CollectiveTaskProto& task = *sets[index].second;
    for (int64_t r = 0; r < task.rank_device_size(); ++r) {
      if (task.rank_machine(r) != plane.machine_id()) { continue; }
      const std::string group = key + "/set" + std::to_string(index);
      auto& slot = contexts_[sets[index].first][r];
      connecting.emplace_back([&, group, r, ranks = task.rank_device_size()] {
        try {
          auto context = plane_.ConnectGroup(group, r, ranks);
          std::lock_guard<std::mutex> lock(mutex);
          slot = std::move(context);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!error) { error = std::current_exception(); }
        }
      });
    }
  }
  for (std::thread& thread : connecting) { thread.join(); }
  if (error) { std::rethrow_exception(error); }
}

GlooCommunicator::~GlooCommunicator() {
  {
    std::lock_guard<std::mutex> lock(liveness_->mutex);
    liveness_->alive = false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_) {
    for (auto& entry : ranks_) { entry.second.worker->Detach(); }
  }
  ranks_.clear();
}

void GlooCommunicator::Abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
}

void GlooCommunicator::Submit(const CollectiveCall& call, Done done) {
  const CollectiveTaskProto& task = *call.task;
  Rank* rank;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Rank& slot = ranks_[{task.collective_id(), task.rank()}];
    if (!slot.worker) {
      auto set = contexts_.find(RankSetKey(task));
      OF_CHECK(set != contexts_.end() && set->second.count(task.rank()))
          << "collective " << task.collective_id() << " rank " << task.rank()
          << " has no Gloo context on machine " << plane_.machine_id();
      slot.context = set->second.at(task.rank());
      // The worker owns a copy of the task: one left behind after an abort outlives the actor.
      slot.task = std::make_shared<const CollectiveTaskProto>(task);
      slot.worker = std::make_unique<SerialWorker>();
    }
    rank = &slot;
  }
  std::shared_ptr<gloo::Context> context = rank->context;
  std::shared_ptr<const CollectiveTaskProto> task_copy = rank->task;
  CollectiveCall own_call = call;
  own_call.task = task_copy.get();
  SerialWorker* worker = rank->worker.get();
  worker->Post([context, call = own_call, task_copy, machine = plane_.machine_id(),
                liveness = liveness_, done = std::move(done)] {
    std::exception_ptr error;
    try {
      RunCollective(context, call);
    } catch (Error&) { error = std::current_exception(); } catch (std::exception& cause) {
      std::set<int64_t> peers(task_copy->rank_machine().begin(), task_copy->rank_machine().end());
      peers.erase(machine);
      std::string names;
      for (int64_t peer : peers) { names += (names.empty() ? "" : ", ") + std::to_string(peer); }
      error = std::make_exception_ptr(Error(ErrorKind::kPeerLost)
                                      << CollectiveKindName(task_copy->kind()) << " of '"
                                      << task_copy->lbn() << "' with "
                                      << (peers.size() == 1 ? "machine " : "machines ") << names
                                      << " failed (did its process stop?): " << cause.what());
    }
    std::lock_guard<std::mutex> lock(liveness->mutex);
    if (liveness->alive) { done(error); }
  });
}

}  // namespace oneflow
