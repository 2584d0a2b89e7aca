// Inference, SBP signatures and gradient rules of deconv2d (transposed convolution), upsample
// and prelu.

#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

OperatorConf DeconvConf(std::vector<int64_t> strides, std::vector<int64_t> before,
                        std::vector<int64_t> after, std::vector<int64_t> output_padding,
                        const std::string& data_format = "channels_first") {
  return MakeOpConf(
      "deconv2d", {{"in", 1}, {"weight", 1}},
      {MakeAttr<std::string>("data_format", data_format), MakeAttr("strides", strides),
       MakeAttr<std::string>("padding", "customized"), MakeAttr("padding_before", before),
       MakeAttr("padding_after", after), MakeAttr("output_padding", output_padding)});
}

TEST(Deconv2dOp, InfersTheTransposedSizeInBothLayouts) {
  // (4 - 1) * 2 + 3 - 1 - 2 + 1 = 7 rows; (5 - 1) * 1 + 3 = 7 columns.
  OperatorConf conf = DeconvConf({2, 1}, {1, 0}, {2, 0}, {1, 0});
  DescMap outputs = Infer(
      conf, {{"in_0", {Shape({2, 3, 4, 5}), kFloat}}, {"weight_0", {Shape({3, 6, 3, 3}), kFloat}}});
  EXPECT_EQ(outputs.at("out_0").shape, Shape({2, 6, 7, 7}));
  OperatorConf last = DeconvConf({2, 2}, {0, 0}, {0, 0}, {0, 0}, "channels_last");
  outputs = Infer(last, {{"in_0", {Shape({2, 4, 5, 3}), kDouble}},
                         {"weight_0", {Shape({3, 2, 2, 6}), kDouble}}});
  EXPECT_EQ(outputs.at("out_0").shape, Shape({2, 8, 10, 6}));
  EXPECT_EQ(outputs.at("out_0").data_type, kDouble);
}

TEST(Deconv2dOp, RejectsBadWeightsAndOutputPadding) {
  OperatorConf conf = DeconvConf({2, 2}, {0, 0}, {0, 0}, {0, 2});
  DescMap inputs = {{"in_0", {Shape({1, 3, 4, 4}), kFloat}},
                    {"weight_0", {Shape({3, 2, 3, 3}), kFloat}}};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue,
              {"deconv2d", "output_padding [0, 2]", "[0, stride)"});
  inputs["weight_0"] = {Shape({4, 2, 3, 3}), kFloat};
  ExpectError(
      [&] {
        Infer(DeconvConf({1, 1}, {0, 0}, {0, 0}, {0, 0}), inputs);
      },
      ErrorKind::kValue, {"deconv2d", "(4, 2, 3, 3)", "3 channels"});
  inputs["weight_0"] = {Shape({3, 2, 3, 3}), kInt32};
  ExpectError(
      [&] {
        Infer(DeconvConf({1, 1}, {0, 0}, {0, 0}, {0, 0}), inputs);
      },
      ErrorKind::kType, {"deconv2d"});
}

TEST(Deconv2dOp, SignaturesMirrorTheConvolutionDataGradient) {
  OperatorConf conf = DeconvConf({2, 2}, {0, 0}, {0, 0}, {0, 0});
  std::vector<std::string> signatures =
      SignatureStrings(Signatures(conf, {{"in_0", {Shape({4, 3, 4, 4}), kFloat}},
                                         {"weight_0", {Shape({3, 2, 3, 3}), kFloat}}}));
  EXPECT_TRUE(Contains(signatures, "in_0:S(0) out_0:S(0) weight_0:B"));
  EXPECT_TRUE(Contains(signatures, "in_0:S(1) out_0:P weight_0:S(0)"));
  EXPECT_TRUE(Contains(signatures, "in_0:B out_0:S(1) weight_0:S(1)"));
  EXPECT_FALSE(Contains(signatures, "in_0:S(2) out_0:S(2) weight_0:B"));
}

TEST(Deconv2dOp, GradientsAreAConvolutionAndAFilterGradient) {
  OperatorConf conf = DeconvConf({2, 2}, {1, 1}, {1, 1}, {1, 1});
  DescMap inputs = {{"in_0", {Shape({2, 3, 4, 4}), kDouble}},
                    {"weight_0", {Shape({3, 5, 3, 3}), kDouble}}};
  FakeGradContext ctx(conf, inputs, {"in", "weight"});
  GenerateGrad(ctx);
  const std::string din = ctx.input_grads().at("in_0");
  const std::string dweight = ctx.input_grads().at("weight_0");
  EXPECT_EQ(ctx.ProducerOf(din).op_type(), "conv2d");
  EXPECT_EQ(ctx.Desc(din).shape, Shape({2, 3, 4, 4}));
  EXPECT_EQ(ctx.ProducerOf(dweight).op_type(), "conv_filter_grad");
  EXPECT_EQ(ctx.Desc(dweight).shape, Shape({3, 5, 3, 3}));
}

OperatorConf UpsampleConf(double height_scale, double width_scale,
                          const std::string& data_format = "channels_first") {
  return MakeOpConf("upsample", {{"x", 1}},
                    {MakeAttr("height_scale", height_scale), MakeAttr("width_scale", width_scale),
                     MakeAttr<std::string>("data_format", data_format),
                     MakeAttr<std::string>("interpolation", "bilinear")});
}

TEST(UpsampleOp, InfersScaledSpatialAxesAndSplitsBatchAndChannels) {
  EXPECT_EQ(Infer(UpsampleConf(2, 3), {{"x_0", {Shape({2, 4, 5, 6}), kFloat}}}).at("y_0").shape,
            Shape({2, 4, 10, 18}));
  OperatorConf last = UpsampleConf(1.5, 2, "channels_last");
  DescMap inputs = {{"x_0", {Shape({2, 5, 6, 4}), kFloat}}};
  EXPECT_EQ(Infer(last, inputs).at("y_0").shape, Shape({2, 7, 12, 4}));
  std::vector<std::string> signatures = SignatureStrings(Signatures(last, inputs));
  EXPECT_TRUE(Contains(signatures, "x_0:S(0) y_0:S(0)"));
  EXPECT_TRUE(Contains(signatures, "x_0:S(3) y_0:S(3)"));
  EXPECT_TRUE(Contains(signatures, "x_0:P y_0:P"));
  EXPECT_FALSE(Contains(signatures, "x_0:S(1) y_0:S(1)"));
  ExpectError([&] { Infer(UpsampleConf(0.5, 2), inputs); }, ErrorKind::kValue,
              {"upsample", "at least 1"});
}

TEST(UpsampleOp, GradientIsUpsampleGradOfTheInputShape) {
  OperatorConf conf = UpsampleConf(2, 2);
  FakeGradContext ctx(conf, {{"x_0", {Shape({1, 2, 3, 3}), kDouble}}}, {"x"});
  GenerateGrad(ctx);
  const std::string dx = ctx.input_grads().at("x_0");
  EXPECT_EQ(ctx.ProducerOf(dx).op_type(), "upsample_grad");
  EXPECT_EQ(ctx.Desc(dx).shape, Shape({1, 2, 3, 3}));
}

TEST(PreluOp, AlphaBroadcastsAndGetsAReducedGradient) {
  OperatorConf conf = MakeOpConf("prelu", {{"x", 1}, {"alpha", 1}});
  DescMap inputs = {{"x_0", {Shape({2, 3, 4, 4}), kDouble}},
                    {"alpha_0", {Shape({3, 1, 1}), kDouble}}};
  EXPECT_EQ(Infer(conf, inputs).at("y_0").shape, Shape({2, 3, 4, 4}));
  std::vector<std::string> signatures = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(signatures, "alpha_0:B x_0:S(0) y_0:S(0)"));
  EXPECT_TRUE(Contains(signatures, "alpha_0:S(0) x_0:S(1) y_0:S(1)"));
  EXPECT_TRUE(Contains(signatures, "alpha_0:B x_0:S(2) y_0:S(2)"));
  EXPECT_FALSE(Contains(signatures, "alpha_0:P x_0:P y_0:P"));
  FakeGradContext ctx(conf, inputs, {"x", "alpha"});
  GenerateGrad(ctx);
  EXPECT_EQ(ctx.ProducerOf(ctx.input_grads().at("x_0")).op_type(), "prelu_grad");
  const std::string dalpha = ctx.input_grads().at("alpha_0");
  EXPECT_EQ(ctx.ProducerOf(dalpha).op_type(), "reduce_sum_like");
  EXPECT_EQ(ctx.Desc(dalpha).shape, Shape({3, 1, 1}));
  inputs["alpha_0"] = {Shape({4, 1, 1}), kDouble};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue,
              {"prelu", "alpha (4, 1, 1)", "x (2, 3, 4, 4)"});
}

}  // namespace
}  // namespace test
}  // namespace oneflow
