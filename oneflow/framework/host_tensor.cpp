#include "oneflow/framework/host_tensor.h"

#include <cstdlib>

#include "oneflow/common/error.h"

namespace oneflow {

HostTensor HostTensor::Allocate(const BlobDesc& desc) {
  HostTensor tensor;
  tensor.desc = desc;
  size_t bytes = static_cast<size_t>(desc.byte_size());
  size_t rounded = (bytes + 63) / 64 * 64;
  void* memory = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (memory == nullptr) {
    throw Error(ErrorKind::kRuntime) << "out of memory: cannot allocate " << bytes
                                     << " bytes for a " << desc.ToString() << " tensor";
  }
  tensor.holder = std::shared_ptr<void>(memory, [](void* pointer) { std::free(pointer); });
  tensor.data = memory;
  return tensor;
}

}  // namespace oneflow
