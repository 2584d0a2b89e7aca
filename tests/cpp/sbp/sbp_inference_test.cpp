#include "oneflow/sbp/sbp_inference.h"

#include <gtest/gtest.h>

#include "oneflow/common/error.h"

namespace oneflow {
namespace {

SbpParallel Split(int64_t axis) {
  SbpParallel sbp;
  sbp.mutable_split_parallel()->set_axis(axis);
  return sbp;
}

SbpParallel Broadcast() {
  SbpParallel sbp;
  sbp.mutable_broadcast_parallel();
  return sbp;
}

SbpSignature Signature(const SbpParallel& in, const SbpParallel& out) {
  SbpSignature signature;
  (*signature.mutable_argument_to_sbp())["in_0"] = in;
  (*signature.mutable_argument_to_sbp())["out_0"] = out;
  return signature;
}

const BlobDesc kDesc{Shape({64, 32}), kFloat};

TEST(SbpInference, PrefersTheProducersLayout) {
  std::vector<SbpSignature> candidates = {Signature(Broadcast(), Broadcast()),
                                          Signature(Split(0), Split(0)),
                                          Signature(Split(1), Split(1))};
  std::map<std::string, SbpInputHint> hints = {{"in_0", SbpInputHint{Split(1), kDesc}}};
  SbpSignature chosen = SelectSbpSignature("op", candidates, hints, 2);
  EXPECT_EQ(SbpToString(chosen.argument_to_sbp().at("in_0")), "S(1)");
}

TEST(SbpInference, OtherwiseTheCheapestCopy) {
  // From S(0): S(0) is free, B costs the blob's bytes, and P is never chosen if avoidable.
  SbpParallel partial;
  partial.mutable_partial_sum_parallel();
  EXPECT_EQ(SbpCopyCost(Split(0), Split(0), kDesc), 0);
  EXPECT_EQ(SbpCopyCost(Split(0), Broadcast(), kDesc), kDesc.byte_size());
  EXPECT_GT(SbpCopyCost(Split(0), partial, kDesc), SbpCopyCost(Broadcast(), Split(0), kDesc));
  std::vector<SbpSignature> candidates = {Signature(partial, partial),
                                          Signature(Broadcast(), Broadcast())};
  std::map<std::string, SbpInputHint> hints = {{"in_0", SbpInputHint{Split(0), kDesc}}};
  EXPECT_EQ(SbpToString(SelectSbpSignature("op", candidates, hints, 2).argument_to_sbp().at("in_0")),
            "B");
}

TEST(SbpInference, OneDeviceTakesTheFirstAndNoCandidateIsAnError) {
  std::vector<SbpSignature> candidates = {Signature(Split(0), Split(0)),
                                          Signature(Broadcast(), Broadcast())};
  std::map<std::string, SbpInputHint> hints = {{"in_0", SbpInputHint{Broadcast(), kDesc}}};
  EXPECT_EQ(SbpToString(SelectSbpSignature("op", candidates, hints, 1).argument_to_sbp().at("in_0")),
            "S(0)");
  EXPECT_THROW(SelectSbpSignature("op", {}, hints, 2), Error);
}

}  // namespace
}  // namespace oneflow
