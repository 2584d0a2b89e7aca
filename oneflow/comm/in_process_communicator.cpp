#include "oneflow/comm/in_process_communicator.h"

#include <atomic>
#include <cstring>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/kernels/cpu/tensor_slice_copy.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

struct InProcessCommunicator::Rendezvous {
  std::vector<CollectiveCall> calls;  // by rank
  std::vector<Done> dones;
  int64_t arrived = 0;
  std::atomic<int64_t> remaining{0};  // shares not finished
  std::mutex error_mutex;
  std::exception_ptr error;
};

namespace {

struct AddInto {
  template <typename T>
  void operator()() const {
    const T* from = static_cast<const T*>(src) + begin;
    T* to = static_cast<T*>(dst) + begin;
    for (int64_t i = 0; i < count; ++i) { to[i] += from[i]; }
  }
  const void* src;
  void* dst;
  int64_t begin;
  int64_t count;
};

}  // namespace

void InProcessCommunicator::RunShare(const Rendezvous& rendezvous, int64_t rank) {
  const CollectiveTaskProto& task = *rendezvous.calls[rank].task;
  const int64_t ranks = static_cast<int64_t>(rendezvous.calls.size());
  const BlobDesc logical = BlobDesc::FromProto(task.logical_blob_desc());
  const DataType data_type = logical.data_type;
  const Shape& shape = logical.shape;
  auto input = [&](int64_t r) { return rendezvous.calls[r].input; };
  auto output = [&](int64_t r) { return rendezvous.calls[r].output; };
  switch (task.kind()) {
    case kAllReduce: {
      // This rank sums its chunk of the elements and writes it to every rank's output.
      const Range chunk = BalancedPart(shape.elem_count(), ranks, rank);
      const int64_t element = SizeOf(data_type);
      if (chunk.size() == 0) { return; }
      char* mine = static_cast<char*>(output(rank));
      std::memcpy(mine + chunk.begin * element,
                  static_cast<const char*>(input(0)) + chunk.begin * element,
                  chunk.size() * element);
      for (int64_t r = 1; r < ranks; ++r) {
        SwitchDataType(data_type, AddInto{input(r), mine, chunk.begin, chunk.size()});
      }
      for (int64_t r = 0; r < ranks; ++r) {
        if (r == rank) { continue; }
        std::memcpy(static_cast<char*>(output(r)) + chunk.begin * element,
                    mine + chunk.begin * element, chunk.size() * element);
      }
      return;
    }
    case kReduceScatter: {
      const TensorSlice full = FullSlice(shape);
      const TensorSlice mine = SliceOfPart(shape, task.dst_sbp(), rank, ranks);
      for (int64_t r = 0; r < ranks; ++r) {
        CopyTensorSlice(data_type, mine, input(r), full, output(rank), mine, r > 0);
      }
      return;
    }
    case kAllGather:
    case kAllToAll: {
      const TensorSlice mine = SliceOfPart(shape, task.dst_sbp(), rank, ranks);
      for (int64_t r = 0; r < ranks; ++r) {
        const TensorSlice theirs = SliceOfPart(shape, task.src_sbp(), r, ranks);
        CopyTensorSlice(data_type, Intersect(theirs, mine), input(r), theirs, output(rank), mine,
                        false);
      }
      return;
    }
    default:
      break;
  }
  OF_CHECK(false) << "unknown collective kind " << task.kind();
}

void InProcessCommunicator::FinishShare(const std::shared_ptr<Rendezvous>& rendezvous,
                                        std::exception_ptr error) {
  if (error) {
    std::lock_guard<std::mutex> lock(rendezvous->error_mutex);
    if (!rendezvous->error) { rendezvous->error = error; }
  }
  if (rendezvous->remaining.fetch_sub(1) != 1) { return; }
  std::exception_ptr result;
  {
    std::lock_guard<std::mutex> lock(rendezvous->error_mutex);
    result = rendezvous->error;
  }
  for (Done& done : rendezvous->dones) { done(result); }
}

void InProcessCommunicator::Submit(const CollectiveCall& call, Done done) {
  const CollectiveTaskProto& task = *call.task;
  const int64_t ranks = task.rank_device_size();
  OF_CHECK(task.rank() >= 0 && task.rank() < ranks) << "rank " << task.rank() << " of " << ranks;
  std::shared_ptr<Rendezvous> rendezvous;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_tuple(task.collective_id(), call.piece_id, call.sub_piece);
    std::shared_ptr<Rendezvous>& entry = pending_[key];
    if (!entry) {
      entry = std::make_shared<Rendezvous>();
      entry->calls.resize(ranks);
      entry->dones.resize(ranks);
    }
    OF_CHECK(!entry->dones[task.rank()])
        << "rank " << task.rank() << " submitted collective " << task.collective_id() << " piece "
        << call.piece_id << " (act " << call.sub_piece << ") twice";
    entry->calls[task.rank()] = call;
    entry->dones[task.rank()] = std::move(done);
    if (++entry->arrived < ranks) { return; }
    rendezvous = std::move(entry);
    pending_.erase(key);
  }
  // Every rank has arrived: this (the last) rank runs its share here, the others on their own
  // device threads.
  rendezvous->remaining.store(ranks);
  const int64_t me = task.rank();
  for (int64_t r = 0; r < ranks; ++r) {
    if (r == me) { continue; }
    executor_(task.rank_machine(r), task.rank_device(r), [rendezvous, r] {
      std::exception_ptr error;
      try {
        RunShare(*rendezvous, r);
      } catch (...) { error = std::current_exception(); }
      FinishShare(rendezvous, error);
    });
  }
  std::exception_ptr error;
  try {
    RunShare(*rendezvous, me);
  } catch (...) { error = std::current_exception(); }
  FinishShare(rendezvous, error);
}

}  // namespace oneflow
