#include "oneflow/framework/host_tensor.h"

#include <cstdlib>

#include "oneflow/common/alignment.h"
#include "oneflow/common/error.h"

namespace oneflow {

HostTensor HostTensor::Allocate(const BlobDesc& desc) {
  HostTensor tensor;
  tensor.desc = desc;
  size_t bytes = static_cast<size_t>(desc.byte_size());
  const size_t rounded = static_cast<size_t>(AlignedSize(static_cast<int64_t>(bytes)));
  void* memory = std::aligned_alloc(kMemoryAlignment, rounded == 0 ? kMemoryAlignment : rounded);
  if (memory == nullptr) {
    throw Error(ErrorKind::kRuntime) << "out of memory: cannot allocate " << bytes
                                     << " bytes for a " << desc.ToString() << " tensor";
  }
  tensor.holder = std::shared_ptr<void>(memory, [](void* pointer) { std::free(pointer); });
  tensor.data = memory;
  return tensor;
}

}  // namespace oneflow
