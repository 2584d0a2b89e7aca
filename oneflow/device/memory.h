#pragma once
// Register memory: allocated once when a Plan starts, of the kind its MemoryCase names. Host
// memory is 64-byte aligned; pinned host memory and device memory need a CUDA build (and, for
// device memory, that GPU) and otherwise raise an error naming what was asked.

#include <cstdint>
#include <memory>
#include <string>

#include "proto/plan.pb.h"

namespace oneflow {

// Throws Error(kRuntime) naming `what` (e.g. "a register of task 12 (op 'fc')") and the byte
// count when the memory cannot be had.
std::shared_ptr<void> AllocateMemory(const MemoryCase& memory_case, int64_t bytes,
                                     const std::string& what);

// "host", "pinned host", "gpu 1".
std::string MemoryCaseToString(const MemoryCase& memory_case);

}  // namespace oneflow
