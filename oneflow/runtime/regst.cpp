#include "oneflow/runtime/regst.h"

namespace oneflow {

Regst::Regst(const RegstDescProto& desc, void* memory)
    : regst_desc_id_(desc.regst_desc_id()), producer_actor_id_(desc.producer_task_id()) {
  char* cursor = static_cast<char*>(memory);
  for (const LogicalBlobDescPair& pair : desc.blob()) {
    BlobDesc blob_desc = BlobDesc::FromProto(pair.blob_desc());
    lbns_.push_back(pair.lbn());
    blobs_.emplace_back(cursor, blob_desc);
    cursor += (blob_desc.byte_size() + 63) / 64 * 64;
  }
}

int64_t Regst::BlobIndex(const std::string& lbn) const {
  for (size_t i = 0; i < lbns_.size(); ++i) {
    if (lbns_[i] == lbn) { return static_cast<int64_t>(i); }
  }
  return -1;
}

}  // namespace oneflow
