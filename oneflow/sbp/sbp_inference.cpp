#include "oneflow/sbp/sbp_inference.h"

#include <limits>

#include "google/protobuf/util/message_differencer.h"
#include "oneflow/common/error.h"

namespace oneflow {

namespace {

bool SameSbp(const SbpParallel& a, const SbpParallel& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

}  // namespace

int64_t SbpCopyCost(const SbpParallel& from, const SbpParallel& to, const BlobDesc& desc) {
  if (SameSbp(from, to)) { return 0; }
  if (to.has_partial_sum_parallel()) { return std::numeric_limits<int64_t>::max() / 4; }
  if (from.has_broadcast_parallel()) { return std::numeric_limits<int32_t>::max(); }
  return desc.byte_size();
}

SbpSignature SelectSbpSignature(const std::string& op_name,
                                const std::vector<SbpSignature>& candidates,
                                const std::map<std::string, SbpInputHint>& hints,
                                int64_t parallel_num) {
  if (candidates.empty()) {
    throw Error(ErrorKind::kValue) << "op '" << op_name << "' has no valid SBP signature";
  }
  if (parallel_num == 1) { return candidates.front(); }
  const SbpSignature* best = nullptr;
  int64_t best_order = 0;
  int64_t best_cost = 0;
  for (const SbpSignature& candidate : candidates) {
    int64_t order = 0;
    int64_t cost = 0;
    for (const auto& entry : hints) {
      auto it = candidate.argument_to_sbp().find(entry.first);
      if (it == candidate.argument_to_sbp().end()) { continue; }
      if (SameSbp(it->second, entry.second.producer_sbp)) { order -= 8; }
      cost += SbpCopyCost(entry.second.producer_sbp, it->second, entry.second.logical_desc);
    }
    if (best == nullptr || order < best_order || (order == best_order && cost < best_cost)) {
      best = &candidate;
      best_order = order;
      best_cost = cost;
    }
  }
  return *best;
}

std::string SbpToString(const SbpParallel& sbp) {
  if (sbp.has_split_parallel()) { return "S(" + std::to_string(sbp.split_parallel().axis()) + ")"; }
  if (sbp.has_partial_sum_parallel()) { return "P"; }
  return "B";
}

}  // namespace oneflow
