// Inference, SBP signatures and gradient rule of ctc_loss and ctc_loss_grad.

#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

// log_probs (T=6, N=4, C=5), targets (4, 3), lengths (4,).
DescMap CtcInputs(DataType data_type = kFloat) {
  return {{"log_probs_0", {Shape({6, 4, 5}), data_type}},
          {"targets_0", {Shape({4, 3}), kInt32}},
          {"input_lengths_0", {Shape({4}), kInt64}},
          {"target_lengths_0", {Shape({4}), kInt32}}};
}

OperatorConf CtcConf(int64_t blank = 0) {
  return MakeOpConf("ctc_loss",
                    {{"log_probs", 1}, {"targets", 1}, {"input_lengths", 1}, {"target_lengths", 1}},
                    {MakeAttr<int64_t>("blank", blank)});
}

TEST(CtcLossOp, InfersLossAndAlpha) {
  DescMap outputs = Infer(CtcConf(4), CtcInputs(kDouble));
  EXPECT_EQ(outputs.at("loss_0").shape, Shape({4}));
  EXPECT_EQ(outputs.at("loss_0").data_type, kDouble);
  EXPECT_EQ(outputs.at("alpha_0").shape, Shape({4, 6, 7}));  // (N, T, 2S + 1)
  const OpDef& def = OpRegistry::Instance().Get("ctc_loss");
  EXPECT_EQ(def.kernel_data_type_argument, "log_probs");
  EXPECT_EQ(def.no_grad_inputs.count("targets"), 1u);
  EXPECT_EQ(def.no_grad_inputs.count("input_lengths"), 1u);
  EXPECT_EQ(def.no_grad_inputs.count("target_lengths"), 1u);
}

TEST(CtcLossOp, RejectsBadShapesDtypesAndBlank) {
  DescMap inputs = CtcInputs();
  inputs["targets_0"] = {Shape({3, 3}), kInt32};
  ExpectError([&] { Infer(CtcConf(), inputs); }, ErrorKind::kValue,
              {"ctc_loss: targets", "(6, 4, 5)", "(3, 3)"});
  inputs = CtcInputs();
  inputs["input_lengths_0"] = {Shape({4, 1}), kInt32};
  ExpectError([&] { Infer(CtcConf(), inputs); }, ErrorKind::kValue,
              {"ctc_loss: input_lengths", "(4, 1)"});
  inputs = CtcInputs();
  inputs["target_lengths_0"] = {Shape({4}), kFloat};
  ExpectError([&] { Infer(CtcConf(), inputs); }, ErrorKind::kType, {"target_lengths"});
  inputs = CtcInputs(kInt32);
  ExpectError([&] { Infer(CtcConf(), inputs); }, ErrorKind::kType, {"log_probs"});
  inputs = CtcInputs();
  inputs["log_probs_0"] = {Shape({6, 4}), kFloat};
  ExpectError([&] { Infer(CtcConf(), inputs); }, ErrorKind::kValue, {"3-D", "(6, 4)"});
  ExpectError([&] { Infer(CtcConf(5), CtcInputs()); }, ErrorKind::kValue,
              {"ctc_loss: blank 5 is out of range [0, 5)"});
}

TEST(CtcLossOp, SplitsTheBatchAndGeneratesItsGradOp) {
  std::vector<std::string> texts = SignatureStrings(Signatures(CtcConf(), CtcInputs()));
  EXPECT_TRUE(Contains(texts,
                       "alpha_0:S(0) input_lengths_0:S(0) log_probs_0:S(1) loss_0:S(0) "
                       "target_lengths_0:S(0) targets_0:S(0)"));
  FakeGradContext ctx(CtcConf(), CtcInputs(), {"log_probs"});
  GenerateGrad(ctx);
  const std::string& grad = ctx.input_grads().at("log_probs_0");
  EXPECT_EQ(ctx.ProducerOf(grad).op_type(), "ctc_loss_grad");
  EXPECT_EQ(ctx.Desc(grad).shape, Shape({6, 4, 5}));
  EXPECT_EQ(ctx.input_grads().count("targets_0"), 0u);
}

TEST(CtcLossGradOp, InfersAndDeclaresBatchSplitAndPartialSum) {
  DescMap inputs = CtcInputs();
  inputs["alpha_0"] = {Shape({4, 6, 7}), kFloat};
  inputs["dy_0"] = {Shape({4}), kFloat};
  OperatorConf conf = MakeOpConf("ctc_loss_grad", {{"dy", 1},
                                                   {"log_probs", 1},
                                                   {"targets", 1},
                                                   {"input_lengths", 1},
                                                   {"target_lengths", 1},
                                                   {"alpha", 1}});
  EXPECT_EQ(Infer(conf, inputs).at("log_probs_diff_0").shape, Shape({6, 4, 5}));
  std::vector<std::string> texts = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(texts,
                       "alpha_0:S(0) dy_0:S(0) input_lengths_0:S(0) log_probs_0:S(1) "
                       "log_probs_diff_0:S(1) target_lengths_0:S(0) targets_0:S(0)"));
  EXPECT_TRUE(Contains(texts,
                       "alpha_0:B dy_0:P input_lengths_0:B log_probs_0:B log_probs_diff_0:P "
                       "target_lengths_0:B targets_0:B"));
  inputs["alpha_0"] = {Shape({4, 6, 5}), kFloat};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue,
              {"ctc_loss_grad: alpha (4, 6, 5)", "(4, 6, 7)"});
  inputs["alpha_0"] = {Shape({4, 6, 7}), kFloat};
  inputs["dy_0"] = {Shape({4}), kDouble};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kType, {"dy"});
}

}  // namespace
}  // namespace test
}  // namespace oneflow
