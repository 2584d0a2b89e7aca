#include "oneflow/kernels/cpu/copy_row.h"

#include "oneflow/kernels/cpu/cpu_dispatch.h"

namespace oneflow {

// Half a cache line as a GCC vector: one AVX register, two SSE2 ones. (A 64-byte vector goes
// through the stack without AVX-512, and Zen 4 splits 512-bit moves in two anyway.)
using Chunk = char __attribute__((vector_size(32)));

ONEFLOW_CPU_DISPATCH void CopyRowForward(void* dst, const void* src, int64_t bytes) {
  char* __restrict__ to = static_cast<char*>(dst);
  const char* __restrict__ from = static_cast<const char*>(src);
  constexpr int64_t kChunk = sizeof(Chunk);
  int64_t i = 0;
  // Two cache lines loaded before either is stored: both misses in flight together.
  for (; i + 4 * kChunk <= bytes; i += 4 * kChunk) {
    Chunk a, b, c, d;
    std::memcpy(&a, from + i, kChunk);
    std::memcpy(&b, from + i + kChunk, kChunk);
    std::memcpy(&c, from + i + 2 * kChunk, kChunk);
    std::memcpy(&d, from + i + 3 * kChunk, kChunk);
    std::memcpy(to + i, &a, kChunk);
    std::memcpy(to + i + kChunk, &b, kChunk);
    std::memcpy(to + i + 2 * kChunk, &c, kChunk);
    std::memcpy(to + i + 3 * kChunk, &d, kChunk);
  }
  for (; i + kChunk <= bytes; i += kChunk) {
    Chunk chunk;
    std::memcpy(&chunk, from + i, kChunk);
    std::memcpy(to + i, &chunk, kChunk);
  }
  if (i < bytes) { std::memcpy(to + i, from + i, static_cast<size_t>(bytes - i)); }
}

}  // namespace oneflow
