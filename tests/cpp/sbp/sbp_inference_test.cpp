#include "oneflow/sbp/sbp_inference.h"

#include <gtest/gtest.h>

#include "oneflow/common/error.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {
namespace {

SbpSignature Signature(const SbpParallel& in, const SbpParallel& out) {
  SbpSignature signature;
  (*signature.mutable_argument_to_sbp())["in_0"] = in;
  (*signature.mutable_argument_to_sbp())["out_0"] = out;
  return signature;
}

const BlobDesc kDesc{Shape({64, 32}), kFloat};

// An elementwise op with one input produced as `producer` on the same two devices.
SbpSelection Elementwise(const SbpParallel& producer, int64_t parallel_num = 2) {
  SbpSelection selection;
  selection.op_name = "op";
  selection.op_type = "relu";
  selection.parallel_num = parallel_num;
  selection.candidates = {Signature(BroadcastSbp(), BroadcastSbp()),
                          Signature(SplitSbp(0), SplitSbp(0)), Signature(SplitSbp(1), SplitSbp(1))};
  selection.inputs["in_0"] = SbpInputHint{producer, kDesc, parallel_num, true};
  selection.logical_descs = {{"in_0", kDesc}, {"out_0", kDesc}};
  return selection;
}

std::string ChosenInput(const SbpSelection& selection) {
  return SbpToString(SelectSbpSignature(selection).argument_to_sbp().at("in_0"));
}

TEST(SbpInference, PrefersTheProducersLayout) {
  EXPECT_EQ(ChosenInput(Elementwise(SplitSbp(1))), "S(1)");
  EXPECT_EQ(ChosenInput(Elementwise(BroadcastSbp())), "B");
}

TEST(SbpInference, OtherwiseTheFewestBytesMoved) {
  // From P, S(0) (reduce-scatter) moves half of what B (all-reduce) does.
  EXPECT_EQ(ChosenInput(Elementwise(PartialSumSbp())), "S(0)");
  const int64_t bytes = kDesc.byte_size();
  EXPECT_EQ(BoxingCost(SplitSbp(0), 2, true, SplitSbp(0), 2, kDesc), 0);
  EXPECT_EQ(BoxingCost(SplitSbp(0), 2, true, BroadcastSbp(), 2, kDesc), bytes);       // all-gather
  EXPECT_EQ(BoxingCost(PartialSumSbp(), 4, true, BroadcastSbp(), 4, kDesc), 6 * bytes);  // all-reduce
  EXPECT_EQ(BoxingCost(PartialSumSbp(), 4, true, SplitSbp(0), 4, kDesc), 3 * bytes);
  EXPECT_EQ(BoxingCost(SplitSbp(0), 4, true, SplitSbp(1), 4, kDesc), 3 * bytes / 4);  // all-to-all
  EXPECT_EQ(BoxingCost(BroadcastSbp(), 2, true, SplitSbp(1), 2, kDesc), 0);  // a local slice
  EXPECT_GT(BoxingCost(SplitSbp(0), 2, true, PartialSumSbp(), 2, kDesc), 1000 * bytes);
  // On one device every layout is the whole blob; other devices always copy.
  EXPECT_EQ(BoxingCost(PartialSumSbp(), 1, true, BroadcastSbp(), 1, kDesc), 0);
  EXPECT_EQ(BoxingCost(BroadcastSbp(), 2, false, BroadcastSbp(), 2, kDesc), 2 * bytes);
}

TEST(SbpInference, PartialSumIsChosenOnlyWhenNothingElseFits) {
  SbpSelection selection = Elementwise(SplitSbp(0));
  selection.candidates = {Signature(PartialSumSbp(), PartialSumSbp()),
                          Signature(BroadcastSbp(), BroadcastSbp())};
  EXPECT_EQ(ChosenInput(selection), "B");
}

TEST(SbpInference, TiesPreferSplittingTheBatchAxis) {
  // A source op (no inputs): every candidate costs nothing; axis 0 wins.
  SbpSelection selection = Elementwise(BroadcastSbp());
  selection.inputs.clear();
  SbpSignature chosen = SelectSbpSignature(selection);
  EXPECT_EQ(SbpToString(chosen.argument_to_sbp().at("out_0")), "S(0)");
}

TEST(SbpInference, HintsWinOverTheCostModel) {
  SbpSelection selection = Elementwise(SplitSbp(0));
  selection.required["out_0"] = SplitSbp(1);
  EXPECT_EQ(ChosenInput(selection), "S(1)");
  selection.required["out_0"] = PartialSumSbp();
  try {
    SelectSbpSignature(selection);
    FAIL() << "no candidate agrees with P";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kValue);
    const std::string message = error.what();
    EXPECT_NE(message.find("op 'op' (relu) on 2 devices"), std::string::npos) << message;
    EXPECT_NE(message.find("required layout {out_0: P}"), std::string::npos) << message;
    EXPECT_NE(message.find("in_0: S(1), out_0: S(1)"), std::string::npos) << message;
  }
}

TEST(SbpInference, SplittingAnAxisShorterThanTheDeviceCountIsInvalid) {
  SbpSelection selection = Elementwise(SplitSbp(0), 4);
  selection.logical_descs["in_0"] = selection.logical_descs["out_0"] = BlobDesc{Shape({3, 8}), kFloat};
  selection.inputs["in_0"].logical_desc = selection.logical_descs["in_0"];
  EXPECT_EQ(ChosenInput(selection), "S(1)");  // S(0) would leave a device without rows
  selection.required["out_0"] = SplitSbp(0);
  try {
    SelectSbpSignature(selection);
    FAIL() << "S(0) of 3 rows over 4 devices";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("required layout"), std::string::npos);
  }
  selection.candidates = {Signature(SplitSbp(0), SplitSbp(0))};
  selection.required.clear();
  try {
    SelectSbpSignature(selection);
    FAIL() << "only S(0) is declared";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("splitting axis 0 of 'in_0' (3, 8) over 4 devices: "
                                             "the axis is shorter than the device count"),
              std::string::npos)
        << error.what();
  }
}

TEST(SbpInference, OneDeviceTakesTheFirstAndNoCandidateIsAnErrorOnSeveral) {
  SbpSelection selection = Elementwise(SplitSbp(0), 1);
  EXPECT_EQ(ChosenInput(selection), "B");
  selection.candidates.clear();
  EXPECT_TRUE(SelectSbpSignature(selection).argument_to_sbp().empty());  // the whole blob
  selection.parallel_num = 2;
  try {
    SelectSbpSignature(selection);
    FAIL() << "an op without signatures cannot run on 2 devices";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("declares no SBP signatures"), std::string::npos);
  }
}

TEST(TensorSlice, BalancedSplitGivesTheFirstPartsOneMoreRow) {
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < 6; ++i) { sizes.push_back(BalancedPart(20, 6, i).size()); }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 3, 3, 3, 3}));
  EXPECT_EQ(BalancedPart(20, 6, 2).begin, 8);
  EXPECT_EQ(PhysicalShape(Shape({5, 7}), SplitSbp(1), 2, 3), Shape({5, 2}));
  EXPECT_EQ(PhysicalShape(Shape({5, 7}), PartialSumSbp(), 2, 3), Shape({5, 7}));
  EXPECT_EQ(SliceOfPart(Shape({5, 7}), SplitSbp(0), 1, 2).ToString(), "[3:5, 0:7]");
  EXPECT_EQ(SbpToString(SbpFromString("S(3)")), "S(3)");
  EXPECT_THROW(SbpFromString("S(x)"), Error);
}

}  // namespace
}  // namespace oneflow
