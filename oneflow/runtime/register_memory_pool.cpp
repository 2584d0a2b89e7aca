#include "oneflow/runtime/register_memory_pool.h"

#include <algorithm>

#include "oneflow/common/alignment.h"
#include "oneflow/common/error.h"
#include "oneflow/device/memory.h"

namespace oneflow {

void* RegisterMemoryPool::Acquire(int64_t bytes, const std::string& what) {
  const int64_t size = AlignedSize(bytes);
  void* memory = nullptr;
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    memory = it->second.back();
    it->second.pop_back();
  } else {
    blocks_.push_back(AllocateMemory(MemoryCase(), size, what));
    memory = blocks_.back().get();
    reserved_bytes_ += size;
  }
  in_use_bytes_ += size;
  peak_in_use_bytes_ = std::max(peak_in_use_bytes_, in_use_bytes_);
  return memory;
}

void RegisterMemoryPool::Release(void* memory, int64_t bytes) {
  const int64_t size = AlignedSize(bytes);
  OF_CHECK(in_use_bytes_ >= size) << "register memory given back more often than lent";
  in_use_bytes_ -= size;
  free_[size].push_back(memory);
}

}  // namespace oneflow
