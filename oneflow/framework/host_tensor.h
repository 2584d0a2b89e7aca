#pragma once
// A tensor in host memory that crosses the boundary between Python and the runtime: placeholder
// values pushed into input ops, results pulled from return ops, values handed to watchers.
// `holder` keeps the memory alive (a numpy array, or a buffer allocated here).

#include <memory>

#include "oneflow/framework/blob.h"

namespace oneflow {

struct HostTensor {
  BlobDesc desc;
  void* data = nullptr;
  std::shared_ptr<void> holder;

  // A fresh buffer of `desc`'s size, 64-byte aligned, owned by the tensor.
  static HostTensor Allocate(const BlobDesc& desc);
  Blob AsBlob() const { return Blob(data, desc); }
};

}  // namespace oneflow
