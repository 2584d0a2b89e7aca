// Inference, SBP signatures and gradient rules of tril / fused_scale_tril and in_top_k.

#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

TEST(TrilOp, SplitsEveryAxisAndSumsPartialsOnlyWithAZeroFill) {
  DescMap inputs = {{"in_0", {Shape({2, 3, 4}), kFloat}}};
  OperatorConf zero_fill = MakeOpConf("tril", {{"in", 1}});
  std::vector<std::string> signatures = SignatureStrings(Signatures(zero_fill, inputs));
  for (const char* text : {"in_0:S(0) out_0:S(0)", "in_0:S(1) out_0:S(1)", "in_0:S(2) out_0:S(2)",
                           "in_0:P out_0:P", "in_0:B out_0:B"}) {
    EXPECT_TRUE(Contains(signatures, text)) << text;
  }
  OperatorConf filled = MakeOpConf("fused_scale_tril", {{"in", 1}}, {MakeAttr("fill_value", -1.0)});
  EXPECT_FALSE(Contains(SignatureStrings(Signatures(filled, inputs)), "in_0:P out_0:P"));
}

TEST(TrilOp, GradientIsTheSameOpWithAZeroFill) {
  OperatorConf conf = MakeOpConf(
      "fused_scale_tril", {{"in", 1}},
      {MakeAttr<int64_t>("diagonal", -1), MakeAttr("fill_value", 3.0), MakeAttr("scale", 0.5)});
  FakeGradContext ctx(conf, {{"in_0", {Shape({4, 4}), kDouble}}}, {"in"});
  GenerateGrad(ctx);
  const OperatorConf& grad = ctx.ProducerOf(ctx.input_grads().at("in_0"));
  EXPECT_EQ(grad.op_type(), "fused_scale_tril");
  EXPECT_EQ(FromAttrValue<double>(grad.attr().at("fill_value")), 0.0);
  EXPECT_EQ(FromAttrValue<double>(grad.attr().at("scale")), 0.5);
  EXPECT_EQ(FromAttrValue<int64_t>(grad.attr().at("diagonal")), -1);
}

TEST(TrilOp, RejectsVectorsAndFractionalFillsOfIntegers) {
  OperatorConf conf = MakeOpConf("tril", {{"in", 1}}, {MakeAttr("fill_value", 0.5)});
  ExpectError(
      [&] {
        Infer(conf, {{"in_0", {Shape({4}), kFloat}}});
      },
      ErrorKind::kValue, {"tril", "rank >= 2", "(4,)"});
  ExpectError(
      [&] {
        Infer(conf, {{"in_0", {Shape({2, 2}), kInt64}}});
      },
      ErrorKind::kValue, {"tril", "fill_value must be an integer", "int64"});
}

TEST(InTopKOp, WritesInt8AndSplitsTheBatch) {
  OperatorConf conf =
      MakeOpConf("in_top_k", {{"targets", 1}, {"predictions", 1}}, {MakeAttr<int64_t>("k", 2)});
  DescMap inputs = {{"targets_0", {Shape({6}), kInt64}},
                    {"predictions_0", {Shape({6, 10}), kFloat}}};
  DescMap outputs = Infer(conf, inputs);
  EXPECT_EQ(outputs.at("out_0").shape, Shape({6}));
  EXPECT_EQ(outputs.at("out_0").data_type, kInt8);
  std::vector<std::string> signatures = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(signatures, "out_0:S(0) predictions_0:S(0) targets_0:S(0)"));
  EXPECT_EQ(signatures.size(), 2u);
  inputs["targets_0"] = {Shape({6}), kFloat};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kType, {"in_top_k", "targets"});
}

}  // namespace
}  // namespace test
}  // namespace oneflow
