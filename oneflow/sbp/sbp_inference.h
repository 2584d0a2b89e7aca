#pragma once
// Chooses one op's SBP signature among the candidates its SbpFn declared. The cost model, in
// order (OneFlow 0.3's greedy rule, per op, in the order ops are added):
//   1. Validity: a candidate that splits an axis shorter than the device count is dropped (every
//      device must hold at least one row).
//   2. Hints win: the signature must agree with every required entry (blob.with_distribute,
//      flow.parallel_cast, a variable updated in place keeping its producer's layout). If no
//      candidate does, that is an error naming the hint and the candidates.
//   3. Match the producer: -8 for each input whose producer already lays it out this way on the
//      same devices (no boxing at all).
//   4. Fewest bytes moved: the bytes boxing would move between devices for all inputs
//      (BoxingCost); converting anything into partial-sum is effectively forbidden.
//   5. Prefer splits along the batch axis (axis 0) for the outputs, then fewer partial-sum
//      outputs, then the order in which the op declared its candidates.
// With one device every candidate is equivalent and the first valid one is taken.

#include <map>
#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "proto/sbp.pb.h"

namespace oneflow {

// How an input's producer lays the blob out.
struct SbpInputHint {
  SbpParallel producer_sbp;
  BlobDesc logical_desc;
  int64_t producer_parallel_num = 1;
  bool same_placement = true;  // the producer runs on exactly the op's devices, in order
};

struct SbpSelection {
  std::string op_name;
  std::string op_type;
  int64_t parallel_num = 1;
  std::vector<SbpSignature> candidates;
  std::map<std::string, SbpInputHint> inputs;     // by input argument key ("a_0")
  std::map<std::string, BlobDesc> logical_descs;  // every argument key, inputs and outputs
  std::map<std::string, SbpParallel> required;    // hints, by argument key
};

// Throws ValueError when no candidate is valid and agrees with the hints.
SbpSignature SelectSbpSignature(const SbpSelection& selection);
// The candidates that fit the device count (rule 1), ignoring hints.
std::vector<SbpSignature> ValidSbpSignatures(const SbpSelection& selection);

// Bytes written into the consumer's parts from other devices (or added up) when a blob laid out
// as `from` over `from_parallel_num` devices is converted to `to` over `to_parallel_num`.
int64_t BoxingCost(const SbpParallel& from, int64_t from_parallel_num, bool same_placement,
                   const SbpParallel& to, int64_t to_parallel_num, const BlobDesc& desc);

// "a_0: S(0), b_0: B, out_0: S(0)"
std::string SbpSignatureToString(const SbpSignature& signature);

}  // namespace oneflow
