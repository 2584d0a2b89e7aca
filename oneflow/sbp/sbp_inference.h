#pragma once
// Chooses one op's SBP signature among its candidates with OneFlow 0.3's greedy rule:
// prefer the candidate that matches each input's producer SBP, then the one that copies the
// fewest bytes (broadcast -> split is free to slice but counted expensive; anything -> partial
// sum is never chosen unless nothing else fits). With one device every candidate is equivalent
// and the first is taken.

#include <map>
#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "proto/sbp.pb.h"

namespace oneflow {

struct SbpInputHint {
  SbpParallel producer_sbp;  // how the producer laid the blob out
  BlobDesc logical_desc;
};

// `hints` is keyed by input argument key ("a_0"). Throws ValueError if `candidates` is empty.
SbpSignature SelectSbpSignature(const std::string& op_name,
                                const std::vector<SbpSignature>& candidates,
                                const std::map<std::string, SbpInputHint>& hints,
                                int64_t parallel_num);

// Copy cost in bytes of turning `from` into `to` for a blob of `desc`.
int64_t SbpCopyCost(const SbpParallel& from, const SbpParallel& to, const BlobDesc& desc);

std::string SbpToString(const SbpParallel& sbp);  // "S(0)", "B", "P"

}  // namespace oneflow
