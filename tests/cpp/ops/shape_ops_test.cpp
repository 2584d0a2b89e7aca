// Inference, SBP and gradients of reshape, reshape_like, softmax, sparse_softmax_cross_entropy
// and the model update ops.

#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

OperatorConf ReshapeConf(const Shape& shape) {
  return MakeOpConf("reshape", {{"in", 1}}, {MakeAttr("shape", shape)});
}

TEST(ReshapeOp, ResolvesMinusOneAndRejectsCountMismatch) {
  DescMap inputs = {{"in_0", {Shape({2, 3}), kInt8}}};
  EXPECT_EQ(Infer(ReshapeConf(Shape({3, -1})), inputs).at("out_0").shape, Shape({3, 2}));
  EXPECT_EQ(Infer(ReshapeConf(Shape({6})), inputs).at("out_0").data_type, kInt8);
  ExpectError(
      [&] {
        Infer(ReshapeConf(Shape({4, 2})), inputs);
      },
      ErrorKind::kValue, {"reshape: cannot reshape (2, 3) (6 elements) into (4, 2) (8 elements)"});
  ExpectError(
      [&] {
        Infer(ReshapeConf(Shape({4, -1})), inputs);
      },
      ErrorKind::kValue, {"reshape", "(2, 3)", "(4, -1)"});
  ExpectError(
      [&] {
        Infer(ReshapeConf(Shape({-1, -1})), inputs);
      },
      ErrorKind::kValue, {"only one dimension may be -1"});
  ExpectError(
      [&] {
        Infer(ReshapeConf(Shape({0, -1})), inputs);
      },
      ErrorKind::kValue, {"reshape", "(0, -1)"});
}

TEST(ReshapeOp, SbpSplitsMatchingLeadingAxes) {
  DescMap inputs = {{"in_0", {Shape({4, 6}), kFloat}}};
  std::vector<std::string> texts =
      SignatureStrings(Signatures(ReshapeConf(Shape({4, 2, 3})), inputs));
  EXPECT_TRUE(Contains(texts, "in_0:S(0) out_0:S(0)"));
  EXPECT_FALSE(Contains(texts, "in_0:S(1) out_0:S(1)"));
  EXPECT_TRUE(Contains(texts, "in_0:B out_0:B"));
}

TEST(ReshapeOp, GradientIsReshapeLike) {
  FakeGradContext ctx(ReshapeConf(Shape({6})), {{"in_0", {Shape({2, 3}), kFloat}}}, {"in"});
  GenerateGrad(ctx);
  const std::string& grad = ctx.input_grads().at("in_0");
  EXPECT_EQ(ctx.ProducerOf(grad).op_type(), "reshape_like");
  EXPECT_EQ(ctx.Desc(grad).shape, Shape({2, 3}));
  OperatorConf like = MakeOpConf("reshape_like", {{"in", 1}, {"like", 1}});
  ExpectError(
      [&] {
        Infer(like, {{"in_0", {Shape({6}), kFloat}}, {"like_0", {Shape({4}), kFloat}}});
      },
      ErrorKind::kValue, {"reshape_like", "(6,) (6 elements)", "(4,) (4 elements)"});
  EXPECT_EQ(OpRegistry::Instance().Get("reshape_like").no_grad_inputs.count("like"), 1u);
}

TEST(SoftmaxOp, InferSbpAndGradient) {
  OperatorConf conf = MakeOpConf("softmax", {{"in", 1}});
  DescMap inputs = {{"in_0", {Shape({4, 10}), kFloat}}};
  EXPECT_EQ(Infer(conf, inputs).at("out_0").shape, Shape({4, 10}));
  std::vector<std::string> texts = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(texts, "in_0:S(0) out_0:S(0)"));
  EXPECT_FALSE(Contains(texts, "in_0:S(1) out_0:S(1)"));
  FakeGradContext ctx(conf, inputs, {"in"});
  GenerateGrad(ctx);
  EXPECT_EQ(ctx.ProducerOf(ctx.input_grads().at("in_0")).op_type(), "softmax_grad");
  ExpectError(
      [&] {
        Infer(conf, {{"in_0", {Shape({4}), kInt64}}});
      },
      ErrorKind::kType, {"softmax", "int64"});
}

TEST(SparseSoftmaxCrossEntropyOp, InferAndErrors) {
  OperatorConf conf = MakeOpConf("sparse_softmax_cross_entropy", {{"prediction", 1}, {"label", 1}});
  DescMap inputs = {{"prediction_0", {Shape({8, 10}), kDouble}}, {"label_0", {Shape({8}), kInt32}}};
  DescMap outputs = Infer(conf, inputs);
  EXPECT_EQ(outputs.at("prob_0").shape, Shape({8, 10}));
  EXPECT_EQ(outputs.at("out_0").shape, Shape({8}));
  EXPECT_EQ(outputs.at("out_0").data_type, kDouble);
  inputs["label_0"] = {Shape({7}), kInt64};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue, {"(7,)", "(8, 10)"});
  inputs["label_0"] = {Shape({8}), kFloat};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kType, {"label", "float32"});
  const OpDef& def = OpRegistry::Instance().Get("sparse_softmax_cross_entropy");
  EXPECT_EQ(def.kernel_data_type_argument, "prediction");
  EXPECT_EQ(def.no_grad_inputs.count("label"), 1u);
}

TEST(SparseSoftmaxCrossEntropyOp, SbpAndGradient) {
  OperatorConf conf = MakeOpConf("sparse_softmax_cross_entropy", {{"prediction", 1}, {"label", 1}});
  DescMap inputs = {{"prediction_0", {Shape({8, 10}), kFloat}}, {"label_0", {Shape({8}), kInt64}}};
  std::vector<std::string> texts = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(texts, "label_0:S(0) out_0:S(0) prediction_0:S(0) prob_0:S(0)"));
  FakeGradContext ctx(conf, inputs, {"prediction"});
  GenerateGrad(ctx);
  const std::string& grad = ctx.input_grads().at("prediction_0");
  EXPECT_EQ(ctx.ProducerOf(grad).op_type(), "sparse_softmax_cross_entropy_grad");
  EXPECT_EQ(ctx.Desc(grad).shape, Shape({8, 10}));
  EXPECT_EQ(ctx.input_grads().count("label_0"), 0u);
}

TEST(ModelUpdateOps, CheckShapesAndLearningRate) {
  OperatorConf sgd =
      MakeOpConf("sgd_update", {{"model", 1}, {"model_diff", 1}, {"learning_rate", 1}});
  DescMap inputs = {{"model_0", {Shape({3, 4}), kDouble}},
                    {"model_diff_0", {Shape({3, 4}), kDouble}},
                    {"learning_rate_0", {Shape({1}), kFloat}}};
  EXPECT_TRUE(Infer(sgd, inputs).empty());
  std::vector<std::string> texts = SignatureStrings(Signatures(sgd, inputs));
  EXPECT_TRUE(Contains(texts, "learning_rate_0:B model_0:S(0) model_diff_0:S(0)"));
  inputs["learning_rate_0"] = {Shape({1}), kDouble};
  ExpectError([&] { Infer(sgd, inputs); }, ErrorKind::kType, {"learning_rate", "float64"});
  inputs["learning_rate_0"] = {Shape({1}), kFloat};
  inputs["model_diff_0"] = {Shape({4, 3}), kDouble};
  ExpectError([&] { Infer(sgd, inputs); }, ErrorKind::kValue, {"model_diff (4, 3)", "(3, 4)"});
  const OpDef& momentum = OpRegistry::Instance().Get("momentum_update");
  EXPECT_EQ(momentum.mutable_inputs.count("model"), 1u);
  EXPECT_EQ(momentum.mutable_inputs.count("momentum"), 1u);
  EXPECT_TRUE(momentum.non_differentiable);
}

}  // namespace
}  // namespace test
}  // namespace oneflow
