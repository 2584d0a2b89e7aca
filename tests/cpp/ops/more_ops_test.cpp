// Inference, SBP signatures and gradient rules of broadcast_atan2 / xdivy / xlogy,
// tensor_scatter_nd_update, random_mask_like and generate_random_batch_permutation_indices.

#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

TEST(Atan2XdivyXlogyOps, BroadcastFloatingInputsOnly) {
  for (const char* op_type : {"broadcast_atan2", "broadcast_xdivy", "broadcast_xlogy"}) {
    SCOPED_TRACE(op_type);
    OperatorConf conf = MakeOpConf(op_type, {{"x", 1}, {"y", 1}});
    DescMap outputs =
        Infer(conf, {{"x_0", {Shape({3, 1}), kDouble}}, {"y_0", {Shape({4}), kDouble}}});
    EXPECT_EQ(outputs.at("z_0").shape, Shape({3, 4}));
    EXPECT_EQ(outputs.at("z_0").data_type, kDouble);
    ExpectError(
        [&] {
          Infer(conf, {{"x_0", {Shape({3}), kInt32}}, {"y_0", {Shape({3}), kInt32}}});
        },
        ErrorKind::kType, {op_type, "int32"});
    ExpectError(
        [&] {
          Infer(conf, {{"x_0", {Shape({3}), kFloat}}, {"y_0", {Shape({4}), kFloat}}});
        },
        ErrorKind::kValue, {op_type, "(3,)", "(4,)"});
    std::vector<std::string> signatures = SignatureStrings(
        Signatures(conf, {{"x_0", {Shape({3, 4}), kFloat}}, {"y_0", {Shape({4}), kFloat}}}));
    EXPECT_TRUE(Contains(signatures, "x_0:S(0) y_0:B z_0:S(0)"));
    EXPECT_TRUE(Contains(signatures, "x_0:S(1) y_0:S(0) z_0:S(1)"));
    EXPECT_FALSE(Contains(signatures, "x_0:P y_0:B z_0:P"));  // not linear in x
  }
}

TEST(Atan2XdivyXlogyOps, GradientsReduceToTheBroadcastInputs) {
  for (const char* op_type : {"broadcast_atan2", "broadcast_xdivy", "broadcast_xlogy"}) {
    SCOPED_TRACE(op_type);
    OperatorConf conf = MakeOpConf(op_type, {{"x", 1}, {"y", 1}});
    FakeGradContext ctx(conf, {{"x_0", {Shape({2, 3}), kDouble}}, {"y_0", {Shape({3}), kDouble}}},
                        {"x", "y"});
    GenerateGrad(ctx);
    EXPECT_EQ(ctx.Desc(ctx.input_grads().at("x_0")).shape, Shape({2, 3}));
    EXPECT_EQ(ctx.Desc(ctx.input_grads().at("y_0")).shape, Shape({3}));
  }
}

OperatorConf ScatterUpdateConf() {
  return MakeOpConf("tensor_scatter_nd_update", {{"params", 1}, {"indices", 1}, {"updates", 1}});
}

TEST(TensorScatterNdUpdateOp, InfersParamsShapeAndChecksUpdates) {
  OperatorConf conf = ScatterUpdateConf();
  DescMap inputs = {{"params_0", {Shape({5, 3, 2}), kFloat}},
                    {"indices_0", {Shape({4, 1}), kInt32}},
                    {"updates_0", {Shape({4, 3, 2}), kFloat}}};
  DescMap outputs = Infer(conf, inputs);
  EXPECT_EQ(outputs.at("out_0").shape, Shape({5, 3, 2}));
  EXPECT_EQ(outputs.at("out_0").data_type, kFloat);
  DescMap bad = inputs;
  bad["updates_0"] = {Shape({4, 3}), kFloat};
  ExpectError([&] { Infer(conf, bad); }, ErrorKind::kValue,
              {"tensor_scatter_nd_update", "updates (4, 3)", "(4, 3, 2)"});
  bad = inputs;
  bad["updates_0"] = {Shape({4, 3, 2}), kDouble};
  ExpectError([&] { Infer(conf, bad); }, ErrorKind::kType,
              {"tensor_scatter_nd_update", "same dtype"});
  bad = inputs;
  bad["indices_0"] = {Shape({4, 4}), kInt64};
  ExpectError([&] { Infer(conf, bad); }, ErrorKind::kValue,
              {"tensor_scatter_nd_update", "4 entries", "(5, 3, 2)"});
}

TEST(TensorScatterNdUpdateOp, SplitsOnlyUnindexedAxesAndItsGradientUsesItself) {
  OperatorConf conf = ScatterUpdateConf();
  DescMap inputs = {{"params_0", {Shape({5, 3, 2}), kDouble}},
                    {"indices_0", {Shape({4, 1}), kInt64}},
                    {"updates_0", {Shape({4, 3, 2}), kDouble}}};
  std::vector<std::string> signatures = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(signatures, "indices_0:B out_0:S(1) params_0:S(1) updates_0:S(1)"));
  EXPECT_TRUE(Contains(signatures, "indices_0:B out_0:S(2) params_0:S(2) updates_0:S(2)"));
  EXPECT_TRUE(Contains(signatures, "indices_0:B out_0:P params_0:P updates_0:P"));
  EXPECT_TRUE(Contains(signatures, "indices_0:B out_0:B params_0:B updates_0:B"));
  for (const std::string& signature : signatures) {
    EXPECT_EQ(signature.find("params_0:S(0)"), std::string::npos) << signature;
  }
  FakeGradContext ctx(conf, inputs, {"params", "updates"});
  GenerateGrad(ctx);
  const std::string dparams = ctx.input_grads().at("params_0");
  const std::string dupdates = ctx.input_grads().at("updates_0");
  EXPECT_EQ(ctx.ProducerOf(dparams).op_type(), "tensor_scatter_nd_update");
  EXPECT_EQ(ctx.Desc(dparams).shape, Shape({5, 3, 2}));
  EXPECT_EQ(ctx.ProducerOf(dupdates).op_type(), "gather_nd");
  EXPECT_EQ(ctx.Desc(dupdates).shape, Shape({4, 3, 2}));
}

TEST(RandomMaskLikeOp, GivesAnInt8MaskAndChecksTheRate) {
  OperatorConf conf = MakeOpConf("random_mask_like", {{"like", 1}},
                                 {MakeAttr<double>("rate", 0.25), MakeAttr<int64_t>("seed", 3)});
  DescMap outputs = Infer(conf, {{"like_0", {Shape({4, 6}), kDouble}}});
  EXPECT_EQ(outputs.at("out_0").shape, Shape({4, 6}));
  EXPECT_EQ(outputs.at("out_0").data_type, kInt8);
  OperatorConf bad = MakeOpConf("random_mask_like", {{"like", 1}},
                                {MakeAttr<double>("rate", 1.0), MakeAttr<int64_t>("seed", 3)});
  ExpectError(
      [&] {
        Infer(bad, {{"like_0", {Shape({4}), kFloat}}});
      },
      ErrorKind::kValue, {"random_mask_like", "rate must be in [0, 1)", "1"});
  std::vector<std::string> signatures =
      SignatureStrings(Signatures(conf, {{"like_0", {Shape({4, 6}), kFloat}}}));
  EXPECT_TRUE(Contains(signatures, "like_0:S(1) out_0:S(1)"));
  EXPECT_TRUE(Contains(signatures, "like_0:B out_0:B"));
}

TEST(BatchPermutationOp, GivesInt32IndicesOfTheBatchAxis) {
  OperatorConf conf = MakeOpConf("generate_random_batch_permutation_indices", {{"x", 1}},
                                 {MakeAttr<int64_t>("seed", 1)});
  DescMap outputs = Infer(conf, {{"x_0", {Shape({7, 2}), kFloat}}});
  EXPECT_EQ(outputs.at("y_0").shape, Shape({7}));
  EXPECT_EQ(outputs.at("y_0").data_type, kInt32);
  ExpectError(
      [&] {
        Infer(conf, {{"x_0", {Shape(), kFloat}}});
      },
      ErrorKind::kValue, {"generate_random_batch_permutation_indices", "at least one axis"});
  std::vector<std::string> signatures =
      SignatureStrings(Signatures(conf, {{"x_0", {Shape({7, 2}), kFloat}}}));
  EXPECT_TRUE(Contains(signatures, "x_0:S(0) y_0:B"));
  EXPECT_TRUE(Contains(signatures, "x_0:B y_0:B"));
}

}  // namespace
}  // namespace test
}  // namespace oneflow
