// Inference, SBP and gradient rules of bias_add, broadcast_*, reduce_sum, reduce_sum_like and
// broadcast_like.

#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

DescMap BinaryInputs(const Shape& x, const Shape& y, DataType data_type = kFloat) {
  return {{"x_0", {x, data_type}}, {"y_0", {y, data_type}}};
}

TEST(BiasAddOp, InfersAndChecksBiasSize) {
  OperatorConf conf = MakeOpConf("bias_add", {{"a", 1}, {"b", 1}});
  DescMap inputs = {{"a_0", {Shape({4, 3, 5}), kFloat}}, {"b_0", {Shape({3}), kFloat}}};
  EXPECT_EQ(Infer(conf, inputs).at("out_0").shape, Shape({4, 3, 5}));
  inputs["b_0"] = {Shape({5}), kFloat};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue,
              {"bias_add", "a.shape[1]=3", "(5,)"});
  OperatorConf last = MakeOpConf("bias_add", {{"a", 1}, {"b", 1}}, {MakeAttr<int64_t>("axis", -1)});
  EXPECT_EQ(Infer(last, inputs).at("out_0").shape, Shape({4, 3, 5}));
  inputs["b_0"] = {Shape({5}), kDouble};
  ExpectError([&] { Infer(last, inputs); }, ErrorKind::kType, {"float32", "float64"});
}

TEST(BiasAddOp, GradientSumsAllButTheBiasAxis) {
  OperatorConf conf = MakeOpConf("bias_add", {{"a", 1}, {"b", 1}});
  DescMap inputs = {{"a_0", {Shape({4, 3, 5}), kFloat}}, {"b_0", {Shape({3}), kFloat}}};
  FakeGradContext ctx(conf, inputs, {"a", "b"});
  GenerateGrad(ctx);
  EXPECT_EQ(ctx.input_grads().at("a_0"), ctx.OutputGrad("out"));
  const OperatorConf& reduce = ctx.ProducerOf(ctx.input_grads().at("b_0"));
  EXPECT_EQ(reduce.op_type(), "reduce_sum");
  EXPECT_EQ(FromAttrValue<std::vector<int64_t>>(reduce.attr().at("axis")),
            std::vector<int64_t>({0, 2}));
  EXPECT_EQ(ctx.Desc(ctx.input_grads().at("b_0")).shape, Shape({3}));
}

TEST(BiasAddOp, SbpSplitsBiasWithItsAxis) {
  OperatorConf conf = MakeOpConf("bias_add", {{"a", 1}, {"b", 1}});
  DescMap inputs = {{"a_0", {Shape({4, 6}), kFloat}}, {"b_0", {Shape({6}), kFloat}}};
  std::vector<std::string> texts = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(texts, "a_0:S(0) b_0:B out_0:S(0)"));
  EXPECT_TRUE(Contains(texts, "a_0:S(1) b_0:S(0) out_0:S(1)"));
  EXPECT_TRUE(Contains(texts, "a_0:B b_0:B out_0:B"));
}

TEST(BroadcastBinaryOp, InfersNumpyBroadcastShapes) {
  OperatorConf conf = MakeOpConf("broadcast_add", {{"x", 1}, {"y", 1}});
  EXPECT_EQ(Infer(conf, BinaryInputs(Shape({4, 1, 3}), Shape({5, 1}))).at("z_0").shape,
            Shape({4, 5, 3}));
  EXPECT_EQ(Infer(conf, BinaryInputs(Shape({2, 3}), Shape())).at("z_0").shape, Shape({2, 3}));
  EXPECT_EQ(Infer(conf, BinaryInputs(Shape({2, 3}), Shape({2, 3}), kInt64)).at("z_0").data_type,
            kInt64);
}

TEST(BroadcastBinaryOp, ErrorsNameShapesAndDtypes) {
  OperatorConf conf = MakeOpConf("broadcast_mul", {{"x", 1}, {"y", 1}});
  ExpectError(
      [&] {
        Infer(conf, BinaryInputs(Shape({2, 3}), Shape({4, 3})));
      },
      ErrorKind::kValue, {"broadcast_mul", "(2, 3)", "(4, 3)", "cannot be broadcast"});
  DescMap mixed = {{"x_0", {Shape({2}), kFloat}}, {"y_0", {Shape({2}), kInt32}}};
  ExpectError([&] { Infer(conf, mixed); }, ErrorKind::kType, {"broadcast_mul", "float32", "int32"});
  OperatorConf div = MakeOpConf("broadcast_div", {{"x", 1}, {"y", 1}});
  ExpectError([&] { Infer(div, BinaryInputs(Shape({2}), Shape({2}), kInt32)); }, ErrorKind::kType,
              {"broadcast_div", "int32"});
}

TEST(BroadcastBinaryOp, SbpSplitsOrBroadcastsEachInput) {
  OperatorConf conf = MakeOpConf("broadcast_mul", {{"x", 1}, {"y", 1}});
  std::vector<std::string> texts =
      SignatureStrings(Signatures(conf, BinaryInputs(Shape({4, 6}), Shape({6}))));
  EXPECT_TRUE(Contains(texts, "x_0:S(0) y_0:B z_0:S(0)"));
  EXPECT_TRUE(Contains(texts, "x_0:S(1) y_0:S(0) z_0:S(1)"));
  EXPECT_TRUE(Contains(texts, "x_0:P y_0:B z_0:P"));
  EXPECT_TRUE(Contains(texts, "x_0:B y_0:P z_0:P"));
  EXPECT_FALSE(Contains(texts, "x_0:P y_0:P z_0:P"));
  OperatorConf add = MakeOpConf("broadcast_add", {{"x", 1}, {"y", 1}});
  EXPECT_TRUE(Contains(SignatureStrings(Signatures(add, BinaryInputs(Shape({4}), Shape({4})))),
                       "x_0:P y_0:P z_0:P"));
}

TEST(BroadcastBinaryOp, AddGradientSkipsReduceForSameShape) {
  OperatorConf conf = MakeOpConf("broadcast_add", {{"x", 1}, {"y", 1}});
  FakeGradContext ctx(conf, BinaryInputs(Shape({4, 3}), Shape({3})), {"x", "y"});
  GenerateGrad(ctx);
  EXPECT_EQ(ctx.input_grads().at("x_0"), ctx.OutputGrad("z"));
  const OperatorConf& reduce = ctx.ProducerOf(ctx.input_grads().at("y_0"));
  EXPECT_EQ(reduce.op_type(), "reduce_sum_like");
  EXPECT_EQ(ctx.Desc(ctx.input_grads().at("y_0")).shape, Shape({3}));
}

TEST(BroadcastBinaryOp, SubMulDivGradientsHaveInputShapes) {
  for (const std::string op_type : {"broadcast_sub", "broadcast_mul", "broadcast_div"}) {
    SCOPED_TRACE(op_type);
    OperatorConf conf = MakeOpConf(op_type, {{"x", 1}, {"y", 1}});
    FakeGradContext ctx(conf, BinaryInputs(Shape({4, 1}), Shape({1, 3})), {"x", "y"});
    GenerateGrad(ctx);
    EXPECT_EQ(ctx.Desc(ctx.input_grads().at("x_0")).shape, Shape({4, 1}));
    EXPECT_EQ(ctx.Desc(ctx.input_grads().at("y_0")).shape, Shape({1, 3}));
  }
  OperatorConf sub = MakeOpConf("broadcast_sub", {{"x", 1}, {"y", 1}});
  FakeGradContext ctx(sub, BinaryInputs(Shape({3}), Shape({3})), {"y"});
  GenerateGrad(ctx);
  const OperatorConf& negate = ctx.ProducerOf(ctx.input_grads().at("y_0"));
  EXPECT_EQ(negate.op_type(), "scalar_mul");
  EXPECT_EQ(FromAttrValue<double>(negate.attr().at("operand")), -1.0);
}

TEST(ReduceSumOp, InfersWithNegativeAxesAndKeepdims) {
  DescMap inputs = {{"input_tensor_0", {Shape({2, 3, 4}), kFloat}}};
  OperatorConf conf = MakeOpConf("reduce_sum", {{"input_tensor", 1}},
                                 {MakeAttr<std::vector<int64_t>>("axis", {-1, 0})});
  EXPECT_EQ(Infer(conf, inputs).at("output_tensor_0").shape, Shape({3}));
  conf = MakeOpConf("reduce_sum", {{"input_tensor", 1}},
                    {MakeAttr<std::vector<int64_t>>("axis", {1}), MakeAttr("keepdims", true)});
  EXPECT_EQ(Infer(conf, inputs).at("output_tensor_0").shape, Shape({2, 1, 4}));
  conf = MakeOpConf("reduce_sum", {{"input_tensor", 1}});
  // Every axis reduced: shape (1,), as OneFlow 0.3 (no 0-d result).
  EXPECT_EQ(Infer(conf, inputs).at("output_tensor_0").shape, Shape({1}));
  conf = MakeOpConf("reduce_sum", {{"input_tensor", 1}},
                    {MakeAttr<std::vector<int64_t>>("axis", {3})});
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue, {"reduce_sum", "axis 3", "rank 3"});
}

TEST(ReduceSumOp, SbpAndGradient) {
  DescMap inputs = {{"input_tensor_0", {Shape({4, 6}), kFloat}}};
  OperatorConf conf = MakeOpConf("reduce_sum", {{"input_tensor", 1}},
                                 {MakeAttr<std::vector<int64_t>>("axis", {0})});
  std::vector<std::string> texts = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(texts, "input_tensor_0:S(0) output_tensor_0:P"));
  EXPECT_TRUE(Contains(texts, "input_tensor_0:S(1) output_tensor_0:S(0)"));
  EXPECT_TRUE(Contains(texts, "input_tensor_0:B output_tensor_0:B"));
  FakeGradContext ctx(conf, inputs, {"input_tensor"});
  GenerateGrad(ctx);
  const std::string& grad = ctx.input_grads().at("input_tensor_0");
  EXPECT_EQ(ctx.ProducerOf(grad).op_type(), "broadcast_like");
  EXPECT_EQ(ctx.Desc(grad).shape, Shape({4, 6}));
}

TEST(ReduceSumLikeOp, InfersAxesFromBroadcasting) {
  OperatorConf conf = MakeOpConf("reduce_sum_like", {{"x", 1}, {"like", 1}});
  DescMap inputs = {{"x_0", {Shape({4, 5, 3}), kFloat}}, {"like_0", {Shape({5, 1}), kFloat}}};
  EXPECT_EQ(Infer(conf, inputs).at("y_0").shape, Shape({5, 1}));
  inputs["like_0"] = {Shape({2, 3}), kFloat};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue, {"(2, 3)", "(4, 5, 3)"});
  OperatorConf explicit_axes = MakeOpConf("reduce_sum_like", {{"x", 1}, {"like", 1}},
                                          {MakeAttr<std::vector<int64_t>>("axis", {0, 2})});
  inputs["like_0"] = {Shape({5}), kFloat};
  EXPECT_EQ(Infer(explicit_axes, inputs).at("y_0").shape, Shape({5}));
  inputs["like_0"] = {Shape({1, 5, 1}), kFloat};
  EXPECT_EQ(Infer(explicit_axes, inputs).at("y_0").shape, Shape({1, 5, 1}));
  inputs["like_0"] = {Shape({3}), kFloat};
  ExpectError([&] { Infer(explicit_axes, inputs); }, ErrorKind::kValue, {"reduce_sum_like"});
}

TEST(BroadcastLikeOp, AcceptsDroppedOrKeptAxes) {
  OperatorConf conf = MakeOpConf("broadcast_like", {{"x", 1}, {"like", 1}},
                                 {MakeAttr<std::vector<int64_t>>("broadcast_axes", {0, 2})});
  DescMap inputs = {{"x_0", {Shape({5}), kFloat}}, {"like_0", {Shape({4, 5, 3}), kFloat}}};
  EXPECT_EQ(Infer(conf, inputs).at("y_0").shape, Shape({4, 5, 3}));
  inputs["x_0"] = {Shape({1, 5, 1}), kFloat};
  EXPECT_EQ(Infer(conf, inputs).at("y_0").shape, Shape({4, 5, 3}));
  inputs["x_0"] = {Shape({4, 1, 1}), kFloat};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue,
              {"broadcast_like", "(4, 1, 1)", "(4, 5, 3)", "[0, 2]"});
}

TEST(BroadcastLikeOp, GradientRoundTripsThroughReduceSumLike) {
  OperatorConf conf = MakeOpConf("broadcast_like", {{"x", 1}, {"like", 1}},
                                 {MakeAttr<std::vector<int64_t>>("broadcast_axes", {0, 2})});
  for (const Shape& x_shape : {Shape({5}), Shape({1, 5, 1})}) {
    DescMap inputs = {{"x_0", {x_shape, kFloat}}, {"like_0", {Shape({4, 5, 3}), kFloat}}};
    FakeGradContext ctx(conf, inputs, {"x"});
    GenerateGrad(ctx);
    EXPECT_EQ(ctx.Desc(ctx.input_grads().at("x_0")).shape, x_shape);
  }
}

TEST(LikeOps, SbpSignaturesMapAxesBetweenShapes) {
  OperatorConf broadcast = MakeOpConf("broadcast_like", {{"x", 1}, {"like", 1}},
                                      {MakeAttr<std::vector<int64_t>>("broadcast_axes", {0})});
  DescMap inputs = {{"x_0", {Shape({6}), kFloat}}, {"like_0", {Shape({4, 6}), kFloat}}};
  std::vector<std::string> texts = SignatureStrings(Signatures(broadcast, inputs));
  EXPECT_TRUE(Contains(texts, "like_0:S(0) x_0:B y_0:S(0)"));
  EXPECT_TRUE(Contains(texts, "like_0:S(1) x_0:S(0) y_0:S(1)"));
  EXPECT_TRUE(Contains(texts, "like_0:B x_0:P y_0:P"));
  OperatorConf reduce = MakeOpConf("reduce_sum_like", {{"x", 1}, {"like", 1}});
  inputs = {{"x_0", {Shape({4, 6}), kFloat}}, {"like_0", {Shape({6}), kFloat}}};
  texts = SignatureStrings(Signatures(reduce, inputs));
  EXPECT_TRUE(Contains(texts, "like_0:B x_0:S(0) y_0:P"));
  EXPECT_TRUE(Contains(texts, "like_0:S(0) x_0:S(1) y_0:S(0)"));
  EXPECT_TRUE(Contains(texts, "like_0:B x_0:B y_0:B"));
}

}  // namespace
}  // namespace test
}  // namespace oneflow
