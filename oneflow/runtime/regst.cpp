#include "oneflow/runtime/regst.h"

#include "oneflow/common/alignment.h"

namespace oneflow {

Regst::Regst(const RegstDescProto& desc, void* memory)
    : regst_desc_id_(desc.regst_desc_id()), producer_actor_id_(desc.producer_task_id()) {
  int64_t offset = 0;
  for (const LogicalBlobDescPair& pair : desc.blob()) {
    BlobDesc blob_desc = BlobDesc::FromProto(pair.blob_desc());
    lbns_.push_back(pair.lbn());
    offsets_.push_back(offset);
    blobs_.emplace_back(nullptr, blob_desc);
    offset += AlignedSize(blob_desc.byte_size());
  }
  Bind(memory);
}

void Regst::Bind(void* memory) {
  memory_ = memory;
  for (size_t i = 0; i < blobs_.size(); ++i) {
    blobs_[i].set_data(memory == nullptr ? nullptr : static_cast<char*>(memory) + offsets_[i]);
  }
}

int64_t Regst::BlobIndex(const std::string& lbn) const {
  for (size_t i = 0; i < lbns_.size(); ++i) {
    if (lbns_[i] == lbn) { return static_cast<int64_t>(i); }
  }
  return -1;
}

}  // namespace oneflow
