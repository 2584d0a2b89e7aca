// Inference, SBP signatures and gradient rules of the shape and indexing ops: concat, slice,
// pad, gather and unsorted_segment_sum.

#include <limits>

#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

TEST(ConcatOp, InfersTheJoinedAxisAndRejectsMismatches) {
  OperatorConf conf = MakeOpConf("concat", {{"in", 2}}, {MakeAttr<int64_t>("axis", -1)});
  DescMap outputs =
      Infer(conf, {{"in_0", {Shape({2, 3}), kInt32}}, {"in_1", {Shape({2, 5}), kInt32}}});
  EXPECT_EQ(outputs.at("out_0").shape, Shape({2, 8}));
  EXPECT_EQ(outputs.at("out_0").data_type, kInt32);
  ExpectError(
      [&] { Infer(conf, {{"in_0", {Shape({2, 3}), kFloat}}, {"in_1", {Shape({3, 5}), kFloat}}}); },
      ErrorKind::kValue, {"concat", "input 1", "(3, 5)", "(2, 3)", "axis 1"});
}

TEST(ConcatOp, SplitsOnlyOtherAxes) {
  OperatorConf conf = MakeOpConf("concat", {{"in", 2}}, {MakeAttr<int64_t>("axis", 1)});
  std::vector<std::string> signatures = SignatureStrings(Signatures(
      conf, {{"in_0", {Shape({4, 3}), kFloat}}, {"in_1", {Shape({4, 5}), kFloat}}}));
  EXPECT_TRUE(Contains(signatures, "in_0:S(0) in_1:S(0) out_0:S(0)"));
  EXPECT_TRUE(Contains(signatures, "in_0:P in_1:P out_0:P"));
  EXPECT_FALSE(Contains(signatures, "in_0:S(1) in_1:S(1) out_0:S(1)"));
}

OperatorConf SliceConf(std::vector<int64_t> start, std::vector<int64_t> stop,
                       std::vector<int64_t> step) {
  return MakeOpConf("slice", {{"x", 1}},
                    {MakeAttr("start", start), MakeAttr("stop", stop), MakeAttr("step", step)});
}

TEST(SliceOp, InfersSteppedAndReversedSlices) {
  DescMap inputs = {{"x_0", {Shape({5, 6}), kFloat}}};
  EXPECT_EQ(Infer(SliceConf({4, 1}, {-1, 6}, {-2, 2}), inputs).at("y_0").shape, Shape({3, 3}));
  EXPECT_EQ(Infer(SliceConf({3, 0}, {1, 6}, {1, 1}), inputs).at("y_0").shape, Shape({0, 6}));
  // Steps longer than the axis take one element, without overflow at the int64 limits.
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Infer(SliceConf({1, 5}, {5, -1}, {max, min}), inputs).at("y_0").shape, Shape({1, 1}));
  EXPECT_EQ(Infer(SliceConf({0, 5}, {5, 0}, {max - 1, -max}), inputs).at("y_0").shape,
            Shape({1, 1}));
  ExpectError([&] { Infer(SliceConf({0, 0}, {5, 6}, {1, 0}), inputs); }, ErrorKind::kValue,
              {"slice", "step of axis 1 is 0"});
  ExpectError([&] { Infer(SliceConf({0, 0}, {5, 7}, {1, 1}), inputs); }, ErrorKind::kValue,
              {"slice", "axis 1 of size 6"});
}

TEST(SliceOp, SplitsTheAxesItKeepsWholeAndItsGradientWritesIntoZeros) {
  DescMap inputs = {{"x_0", {Shape({4, 6}), kDouble}}};
  OperatorConf conf = SliceConf({0, 1}, {4, 5}, {1, 1});
  std::vector<std::string> signatures = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(signatures, "x_0:S(0) y_0:S(0)"));
  EXPECT_FALSE(Contains(signatures, "x_0:S(1) y_0:S(1)"));
  EXPECT_TRUE(Contains(signatures, "x_0:P y_0:P"));
  FakeGradContext ctx(conf, inputs, {"x"});
  GenerateGrad(ctx);
  const std::string dx = ctx.input_grads().at("x_0");
  EXPECT_EQ(ctx.Desc(dx).shape, Shape({4, 6}));
  EXPECT_EQ(ctx.ProducerOf(dx).op_type(), "slice_update");
}

TEST(PadOp, PartialSumOnlyWithAZeroConstant) {
  auto conf = [](double value) {
    return MakeOpConf("pad", {{"x", 1}},
                      {MakeAttr("padding_before", std::vector<int64_t>{0, 1}),
                       MakeAttr("padding_after", std::vector<int64_t>{0, 2}),
                       MakeAttr("floating_constant_value", value)});
  };
  DescMap inputs = {{"x_0", {Shape({4, 3}), kFloat}}};
  EXPECT_EQ(Infer(conf(0.0), inputs).at("y_0").shape, Shape({4, 6}));
  EXPECT_TRUE(Contains(SignatureStrings(Signatures(conf(0.0), inputs)), "x_0:P y_0:P"));
  std::vector<std::string> nonzero = SignatureStrings(Signatures(conf(1.0), inputs));
  EXPECT_FALSE(Contains(nonzero, "x_0:P y_0:P"));
  EXPECT_TRUE(Contains(nonzero, "x_0:S(0) y_0:S(0)"));
  EXPECT_FALSE(Contains(nonzero, "x_0:S(1) y_0:S(1)"));
}

TEST(GatherOp, InfersBatchGatherAndDeclaresTheModelParallelSignature) {
  OperatorConf conf = MakeOpConf("gather", {{"in", 1}, {"indices", 1}},
                                 {MakeAttr<int64_t>("axis", 1)});
  DescMap inputs = {{"in_0", {Shape({5, 7, 3}), kFloat}}, {"indices_0", {Shape({2, 4}), kInt64}}};
  EXPECT_EQ(Infer(conf, inputs).at("out_0").shape, Shape({5, 2, 4, 3}));
  std::vector<std::string> signatures = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(signatures, "in_0:S(1) indices_0:B out_0:P"));
  EXPECT_TRUE(Contains(signatures, "in_0:S(2) indices_0:B out_0:S(3)"));
  EXPECT_TRUE(Contains(signatures, "in_0:B indices_0:S(1) out_0:S(2)"));

  OperatorConf batch = MakeOpConf("gather", {{"in", 1}, {"indices", 1}},
                                  {MakeAttr<int64_t>("axis", 1), MakeAttr<int64_t>("batch_dims", 1)});
  DescMap batch_inputs = {{"in_0", {Shape({5, 7, 3}), kFloat}},
                          {"indices_0", {Shape({5, 4}), kInt32}}};
  EXPECT_EQ(Infer(batch, batch_inputs).at("out_0").shape, Shape({5, 4, 3}));
  EXPECT_TRUE(Contains(SignatureStrings(Signatures(batch, batch_inputs)),
                       "in_0:S(0) indices_0:S(0) out_0:S(0)"));
  ExpectError([&] { Infer(conf, {{"in_0", {Shape({5, 7}), kFloat}},
                                 {"indices_0", {Shape({2}), kFloat}}}); },
              ErrorKind::kType, {"gather", "indices"});
}

TEST(GatherOp, GradientIsASegmentSumLikeParams) {
  OperatorConf conf = MakeOpConf("gather", {{"in", 1}, {"indices", 1}});
  DescMap inputs = {{"in_0", {Shape({10, 4}), kDouble}}, {"indices_0", {Shape({3}), kInt32}}};
  FakeGradContext ctx(conf, inputs, {"in"});
  GenerateGrad(ctx);
  const std::string din = ctx.input_grads().at("in_0");
  EXPECT_EQ(ctx.Desc(din).shape, Shape({10, 4}));
  EXPECT_EQ(ctx.ProducerOf(din).op_type(), "unsorted_segment_sum_like");
  EXPECT_EQ(ctx.added_ops().size(), 1u);
}

TEST(UnsortedSegmentSumOp, SplitsOutputSegmentsOrSumsPartialAddends) {
  OperatorConf conf = MakeOpConf("unsorted_segment_sum", {{"data", 1}, {"segment_ids", 1}},
                                 {MakeAttr<int64_t>("num_segments", 6)});
  DescMap inputs = {{"data_0", {Shape({4, 3}), kFloat}}, {"segment_ids_0", {Shape({4}), kInt32}}};
  EXPECT_EQ(Infer(conf, inputs).at("out_0").shape, Shape({6, 3}));
  std::vector<std::string> signatures = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(signatures, "data_0:B out_0:S(0) segment_ids_0:B"));
  EXPECT_TRUE(Contains(signatures, "data_0:S(0) out_0:P segment_ids_0:S(0)"));
  EXPECT_TRUE(Contains(signatures, "data_0:S(1) out_0:S(1) segment_ids_0:B"));
}

}  // namespace
}  // namespace test
}  // namespace oneflow
