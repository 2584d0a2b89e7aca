#pragma once
// The one communication interface of boxing. Collective tasks (one actor per rank) call it;
// nothing else touches a transport. Implementations: in-process (the CPU devices of one process,
// through shared memory: in_process_communicator.h); Gloo across processes and NCCL for GPUs
// implement the same interface.
//
// Asynchronous and keyed: Submit never blocks. A collective is identified by its collective id
// (fixed by the compiler, the same on every rank) and the piece (iteration) id, so ranks may
// submit in any order and an implementation that must issue collectives in one global order
// (Gloo, NCCL) sorts them by (piece id, collective id). `done` runs once this rank's output is
// complete and no rank reads this rank's input any more, from whichever thread completed it.

#include <cstdint>
#include <exception>
#include <functional>

#include "proto/plan.pb.h"

namespace oneflow {

class DeviceContext;

struct CollectiveCall {
  const CollectiveTaskProto* task = nullptr;  // kind, ranks, layouts, this rank
  int64_t piece_id = 0;
  const void* input = nullptr;  // this rank's part of the blob before the collective
  void* output = nullptr;       // this rank's part after it
  int64_t job_id = 0;
  DeviceContext* device = nullptr;  // the device (thread) of this rank; a GPU's for NCCL
  // Which act of the piece this is: 0, 1, ... for a collective that acts several times per
  // iteration (between flow.unpack and flow.pack: framework/time_shape.h), else 0.
  int64_t sub_piece = 0;
};

// "all_reduce", "reduce_scatter", "all_gather", "all_to_all".
const char* CollectiveKindName(CollectiveKind kind);

class Communicator {
 public:
  using Done = std::function<void(std::exception_ptr error)>;
  virtual ~Communicator() = default;
  virtual void Submit(const CollectiveCall& call, Done done) = 0;
};

}  // namespace oneflow
