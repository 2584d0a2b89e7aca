#include "oneflow/sbp/sbp_inference.h"

#include <limits>

#include "oneflow/common/error.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

// Converting to partial-sum never moves data well; such candidates lose to any other.
constexpr int64_t kForbiddenCost = int64_t{1} << 50;

// Why `candidate` cannot run on `parallel_num` devices, or "" if it can.
std::string InvalidSplit(const SbpSignature& candidate, const SbpSelection& selection) {
  const std::map<std::string, SbpParallel> sorted(candidate.argument_to_sbp().begin(),
                                                  candidate.argument_to_sbp().end());
  for (const auto& entry : sorted) {
    if (!entry.second.has_split_parallel()) { continue; }
    auto desc = selection.logical_descs.find(entry.first);
    if (desc == selection.logical_descs.end()) { continue; }
    const int64_t axis = entry.second.split_parallel().axis();
    const Shape& shape = desc->second.shape;
    if (axis >= shape.num_axes()) {
      return "'" + entry.first + "' of shape " + shape.ToString() + " has no axis " +
             std::to_string(axis);
    }
    if (shape.At(axis) < selection.parallel_num) {
      return "splitting axis " + std::to_string(axis) + " of '" + entry.first + "' " +
             shape.ToString() + " over " + std::to_string(selection.parallel_num) +
             " devices: the axis is shorter than the device count";
    }
  }
  return "";
}

bool AgreesWithHints(const SbpSignature& candidate, const SbpSelection& selection) {
  for (const auto& entry : selection.required) {
    auto it = candidate.argument_to_sbp().find(entry.first);
    if (it == candidate.argument_to_sbp().end()) { continue; }
    if (!SameSbp(SbpOverDevices(it->second, selection.parallel_num),
                 SbpOverDevices(entry.second, selection.parallel_num))) {
      return false;
    }
  }
  return true;
}

std::string DescribeCandidates(const std::vector<SbpSignature>& candidates) {
  std::string text;
  for (const SbpSignature& candidate : candidates) {
    text += "\n    " + SbpSignatureToString(candidate);
  }
  return text.empty() ? " none" : text;
}

}  // namespace

int64_t BoxingCost(const SbpParallel& from, int64_t from_parallel_num, bool same_placement,
                   const SbpParallel& to, int64_t to_parallel_num, const BlobDesc& desc) {
  const SbpParallel src = SbpOverDevices(from, from_parallel_num);
  const SbpParallel dst = SbpOverDevices(to, to_parallel_num);
  const int64_t bytes = desc.byte_size();
  if (same_placement && SameSbp(src, dst)) { return 0; }
  if (dst.has_partial_sum_parallel()) { return kForbiddenCost; }
  if (!same_placement) {
    // A general slice copy: every consumer part is written (a broadcast one in full).
    return dst.has_broadcast_parallel() ? bytes * to_parallel_num : bytes;
  }
  const int64_t n = to_parallel_num;
  if (src.has_partial_sum_parallel()) {
    return dst.has_broadcast_parallel() ? 2 * bytes * (n - 1) : bytes * (n - 1);  // all-reduce,
  }                                                                               // reduce-scatter
  if (src.has_split_parallel()) {
    if (dst.has_broadcast_parallel()) { return bytes * (n - 1); }  // all-gather
    return bytes * (n - 1) / n;                                    // all-to-all
  }
  return 0;  // broadcast -> split: each device slices its own copy
}

std::vector<SbpSignature> ValidSbpSignatures(const SbpSelection& selection) {
  std::vector<SbpSignature> valid;
  for (const SbpSignature& candidate : selection.candidates) {
    if (selection.parallel_num == 1 || InvalidSplit(candidate, selection).empty()) {
      valid.push_back(candidate);
    }
  }
  return valid;
}

SbpSignature SelectSbpSignature(const SbpSelection& selection) {
  std::vector<const SbpSignature*> valid;
  std::string first_invalid;
  for (const SbpSignature& candidate : selection.candidates) {
    std::string reason = selection.parallel_num > 1 ? InvalidSplit(candidate, selection) : "";
    if (reason.empty()) {
      valid.push_back(&candidate);
    } else if (first_invalid.empty()) {
      first_invalid = reason;
    }
  }
  std::vector<const SbpSignature*> agreeing;
  for (const SbpSignature* candidate : valid) {
    if (AgreesWithHints(*candidate, selection)) { agreeing.push_back(candidate); }
  }
  if (selection.candidates.empty() && selection.parallel_num == 1) {
    return SbpSignature();  // one device: the whole blob everywhere
  }
  if (agreeing.empty()) {
    Error error(ErrorKind::kValue);
    error << "op '" << selection.op_name << "' (" << selection.op_type << ") on "
          << selection.parallel_num << " devices: ";
    if (selection.candidates.empty()) {
      error << "the op declares no SBP signatures, so it cannot be laid out over devices";
    } else if (valid.empty()) {
      error << "no SBP signature fits: " << first_invalid;
    } else {
      SbpSignature required;
      for (const auto& entry : selection.required) {
        (*required.mutable_argument_to_sbp())[entry.first] = entry.second;
      }
      // A hinted layout the op declares but that cannot fit: say why.
      std::string unfit;
      for (const SbpSignature& candidate : selection.candidates) {
        if (unfit.empty() && AgreesWithHints(candidate, selection)) {
          unfit = InvalidSplit(candidate, selection);
        }
      }
      std::vector<SbpSignature> fitting;
      for (const SbpSignature* candidate : valid) { fitting.push_back(*candidate); }
      error << "no SBP signature agrees with the required layout {"
            << SbpSignatureToString(required) << "}";
      if (!unfit.empty()) { error << ": " << unfit; }
      error << "; on " << selection.parallel_num << " devices the op supports:"
            << DescribeCandidates(fitting);
    }
    throw error;
  }
  if (selection.parallel_num == 1) { return *agreeing.front(); }

  const SbpSignature* best = nullptr;
  int64_t best_score[4] = {0, 0, 0, 0};
  for (const SbpSignature* candidate : agreeing) {
    int64_t order = 0;
    int64_t cost = 0;
    for (const auto& entry : selection.inputs) {
      auto it = candidate->argument_to_sbp().find(entry.first);
      if (it == candidate->argument_to_sbp().end()) { continue; }
      const SbpInputHint& hint = entry.second;
      int64_t input_cost = BoxingCost(hint.producer_sbp, hint.producer_parallel_num,
                                      hint.same_placement, it->second, selection.parallel_num,
                                      hint.logical_desc);
      const SbpParallel produced = SbpOverDevices(hint.producer_sbp, hint.producer_parallel_num);
      const SbpParallel wanted = SbpOverDevices(it->second, selection.parallel_num);
      const bool no_boxing = hint.same_placement && SameSbp(produced, wanted);
      if (no_boxing) { order -= 8; }
      cost = std::min(kForbiddenCost * 4, cost + input_cost);
    }
    int64_t not_batch_split = 0;
    int64_t partial_outputs = 0;
    for (const auto& entry : candidate->argument_to_sbp()) {
      if (selection.inputs.count(entry.first)) { continue; }
      const SbpParallel& sbp = entry.second;
      if (!(sbp.has_split_parallel() && sbp.split_parallel().axis() == 0)) { ++not_batch_split; }
      if (sbp.has_partial_sum_parallel()) { ++partial_outputs; }
    }
    int64_t score[4] = {order, cost, not_batch_split, partial_outputs};
    bool better = best == nullptr;
    for (int i = 0; i < 4 && !better; ++i) {
      if (score[i] != best_score[i]) {
        better = score[i] < best_score[i];
        break;
      }
    }
    if (better) {
      best = candidate;
      std::copy(score, score + 4, best_score);
    }
  }
  return *best;
}

std::string SbpSignatureToString(const SbpSignature& signature) {
  // Protobuf maps iterate in no fixed order; messages list arguments sorted.
  std::map<std::string, SbpParallel> sorted(signature.argument_to_sbp().begin(),
                                            signature.argument_to_sbp().end());
  std::string text;
  for (const auto& entry : sorted) {
    text += (text.empty() ? "" : ", ") + entry.first + ": " + SbpToString(entry.second);
  }
  return text;
}

}  // namespace oneflow
