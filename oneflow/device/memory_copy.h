#pragma once
// A synchronous copy between memories of any kinds (host, pinned host, GPU), for setup and
// teardown: variables moving between the session's host memory and GPU registers. Kernels copy
// asynchronously on their stream instead.

#include <cstdint>

#include "proto/plan.pb.h"

namespace oneflow {

// Throws Error(kRuntime) when a CUDA copy fails, or when GPU memory is named in a build without
// CUDA.
void CopyMemory(void* dst, const MemoryCase& dst_case, const void* src, const MemoryCase& src_case,
                int64_t bytes);

}  // namespace oneflow
