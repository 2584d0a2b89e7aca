#pragma once
// Host memory the framework hands out (blobs in registers, host tensors, kernel scratch) starts
// on a 64-byte boundary: a cache line, the widest vector loads (AVX-512), and what oneDNN's JIT
// kernels expect of their buffers.

#include <cstdint>

namespace oneflow {

constexpr int64_t kMemoryAlignment = 64;

// `bytes` rounded up to a whole number of kMemoryAlignment units.
constexpr int64_t AlignedSize(int64_t bytes) {
  return (bytes + kMemoryAlignment - 1) / kMemoryAlignment * kMemoryAlignment;
}

}  // namespace oneflow
