// Inference, SBP and gradient rules of relu, sigmoid, tanh, square, scalar_add/mul, identity,
// cast, constant, constant_like and add_n.

#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

TEST(ActivationOps, SameShapeAndFloatingOnly) {
  for (const std::string op_type : {"relu", "sigmoid", "tanh", "square"}) {
    SCOPED_TRACE(op_type);
    OperatorConf conf = MakeOpConf(op_type, {{"x", 1}});
    BlobDesc y = Infer(conf, {{"x_0", {Shape({2, 3}), kDouble}}}).at("y_0");
    EXPECT_EQ(y.shape, Shape({2, 3}));
    EXPECT_EQ(y.data_type, kDouble);
    ExpectError(
        [&] {
          Infer(conf, {{"x_0", {Shape({2}), kInt32}}});
        },
        ErrorKind::kType, {op_type + ": x has dtype int32"});
    std::vector<std::string> texts =
        SignatureStrings(Signatures(conf, {{"x_0", {Shape({2, 3}), kFloat}}}));
    EXPECT_TRUE(Contains(texts, "x_0:S(1) y_0:S(1)"));
    EXPECT_FALSE(Contains(texts, "x_0:P y_0:P"));
  }
}

TEST(ActivationOps, GradientsUseForwardOutput) {
  for (const std::string op_type : {"relu", "sigmoid", "tanh"}) {
    SCOPED_TRACE(op_type);
    OperatorConf conf = MakeOpConf(op_type, {{"x", 1}});
    FakeGradContext ctx(conf, {{"x_0", {Shape({4}), kFloat}}}, {"x"});
    GenerateGrad(ctx);
    const OperatorConf& grad = ctx.ProducerOf(ctx.input_grads().at("x_0"));
    EXPECT_EQ(grad.op_type(), op_type + "_grad");
    EXPECT_EQ(InputLbn(grad, "y"), ctx.Output("y"));
    EXPECT_EQ(ctx.Desc(ctx.input_grads().at("x_0")).shape, Shape({4}));
  }
  OperatorConf grad_conf = MakeOpConf("relu_grad", {{"y", 1}, {"dy", 1}});
  ExpectError(
      [&] {
        Infer(grad_conf, {{"y_0", {Shape({4}), kFloat}}, {"dy_0", {Shape({5}), kFloat}}});
      },
      ErrorKind::kValue, {"relu_grad", "(4,)", "(5,)"});
}

TEST(SquareOp, GradientIsTwiceXTimesDy) {
  FakeGradContext ctx(MakeOpConf("square", {{"x", 1}}), {{"x_0", {Shape({3}), kFloat}}}, {"x"});
  GenerateGrad(ctx);
  const OperatorConf& scale = ctx.ProducerOf(ctx.input_grads().at("x_0"));
  EXPECT_EQ(scale.op_type(), "scalar_mul");
  EXPECT_EQ(FromAttrValue<double>(scale.attr().at("operand")), 2.0);
  EXPECT_EQ(ctx.ProducerOf(InputLbn(scale, "in")).op_type(), "broadcast_mul");
}

TEST(ScalarOps, InferAndGradients) {
  OperatorConf mul = MakeOpConf("scalar_mul", {{"in", 1}}, {MakeAttr("operand", 3.0)});
  EXPECT_EQ(Infer(mul, {{"in_0", {Shape({2}), kInt64}}}).at("out_0").data_type, kInt64);
  ExpectError(
      [&] {
        Infer(mul, {{"in_0", {Shape({2}), kUInt8}}});
      },
      ErrorKind::kType, {"scalar_mul", "uint8"});
  FakeGradContext ctx(mul, {{"in_0", {Shape({2}), kFloat}}}, {"in"});
  GenerateGrad(ctx);
  const OperatorConf& grad = ctx.ProducerOf(ctx.input_grads().at("in_0"));
  EXPECT_EQ(FromAttrValue<double>(grad.attr().at("operand")), 3.0);
  EXPECT_TRUE(Contains(SignatureStrings(Signatures(mul, {{"in_0", {Shape({2}), kFloat}}})),
                       "in_0:P out_0:P"));
  OperatorConf add = MakeOpConf("scalar_add", {{"in", 1}});
  FakeGradContext add_ctx(add, {{"in_0", {Shape({2}), kFloat}}}, {"in"});
  GenerateGrad(add_ctx);
  EXPECT_EQ(add_ctx.input_grads().at("in_0"), add_ctx.OutputGrad("out"));
  EXPECT_FALSE(Contains(SignatureStrings(Signatures(add, {{"in_0", {Shape({2}), kFloat}}})),
                        "in_0:P out_0:P"));
}

TEST(IdentityOp, AllDtypesAndPassThroughGradient) {
  OperatorConf conf = MakeOpConf("identity", {{"in", 1}});
  EXPECT_EQ(Infer(conf, {{"in_0", {Shape({2}), kUInt8}}}).at("out_0").data_type, kUInt8);
  FakeGradContext ctx(conf, {{"in_0", {Shape({2}), kFloat}}}, {"in"});
  GenerateGrad(ctx);
  EXPECT_EQ(ctx.input_grads().at("in_0"), ctx.OutputGrad("out"));
  EXPECT_TRUE(ctx.added_ops().empty());
}

// The gradient is cast back to the input's dtype, integers included (OneFlow 0.3).
TEST(CastOp, OutputDtypeFromAttrAndGradientCastBack) {
  OperatorConf conf = MakeOpConf("cast", {{"in", 1}}, {MakeAttr("dtype", kDouble)});
  BlobDesc out = Infer(conf, {{"in_0", {Shape({2, 2}), kInt8}}}).at("out_0");
  EXPECT_EQ(out.data_type, kDouble);
  EXPECT_EQ(out.shape, Shape({2, 2}));
  FakeGradContext from_float(conf, {{"in_0", {Shape({2}), kFloat}}}, {"in"});
  GenerateGrad(from_float);
  const std::string& grad = from_float.input_grads().at("in_0");
  EXPECT_EQ(from_float.Desc(grad).data_type, kFloat);
  FakeGradContext from_int(conf, {{"in_0", {Shape({2}), kInt32}}}, {"in"});
  GenerateGrad(from_int);
  EXPECT_EQ(from_int.Desc(from_int.input_grads().at("in_0")).data_type, kInt32);
}

TEST(ConstantOps, InferFromAttrsAndLike) {
  OperatorConf conf =
      MakeOpConf("constant", {}, {MakeAttr("dtype", kInt32), MakeAttr("shape", Shape({3, 2}))});
  BlobDesc out = Infer(conf, {}).at("out_0");
  EXPECT_EQ(out.shape, Shape({3, 2}));
  EXPECT_EQ(out.data_type, kInt32);
  EXPECT_TRUE(OpRegistry::Instance().Get("constant").non_differentiable);
  OperatorConf like = MakeOpConf("constant_like", {{"like", 1}}, {MakeAttr("value", 1.0)});
  BlobDesc like_out = Infer(like, {{"like_0", {Shape({4}), kDouble}}}).at("out_0");
  EXPECT_EQ(like_out.shape, Shape({4}));
  EXPECT_EQ(like_out.data_type, kDouble);
  EXPECT_TRUE(OpRegistry::Instance().Get("constant_like").non_differentiable);
}

TEST(AddNOp, RequiresMatchingInputs) {
  OperatorConf conf = MakeOpConf("add_n", {{"in", 3}});
  DescMap inputs = {{"in_0", {Shape({2, 3}), kFloat}},
                    {"in_1", {Shape({2, 3}), kFloat}},
                    {"in_2", {Shape({2, 3}), kFloat}}};
  EXPECT_EQ(Infer(conf, inputs).at("out_0").shape, Shape({2, 3}));
  std::vector<std::string> texts = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(texts, "in_0:S(1) in_1:S(1) in_2:S(1) out_0:S(1)"));
  EXPECT_TRUE(Contains(texts, "in_0:P in_1:P in_2:P out_0:P"));
  FakeGradContext ctx(conf, inputs, {"in"});
  GenerateGrad(ctx);
  EXPECT_EQ(ctx.input_grads().size(), 3u);
  inputs["in_2"] = {Shape({3, 2}), kFloat};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kValue, {"add_n", "in[2] (3, 2)"});
  inputs["in_2"] = {Shape({2, 3}), kDouble};
  ExpectError([&] { Infer(conf, inputs); }, ErrorKind::kType, {"add_n", "float64"});
}

}  // namespace
}  // namespace test
}  // namespace oneflow
