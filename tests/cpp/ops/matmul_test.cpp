#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

OperatorConf MatmulConf(bool transpose_a, bool transpose_b) {
  return MakeOpConf("matmul", {{"a", 1}, {"b", 1}},
                    {MakeAttr("transpose_a", transpose_a), MakeAttr("transpose_b", transpose_b)});
}

TEST(MatmulOp, InfersShapeForEveryTransposeCombination) {
  DescMap inputs = {{"a_0", {Shape({2, 3}), kFloat}}, {"b_0", {Shape({3, 4}), kFloat}}};
  EXPECT_EQ(Infer(MatmulConf(false, false), inputs).at("out_0").shape, Shape({2, 4}));
  inputs = {{"a_0", {Shape({3, 2}), kDouble}}, {"b_0", {Shape({3, 4}), kDouble}}};
  BlobDesc out = Infer(MatmulConf(true, false), inputs).at("out_0");
  EXPECT_EQ(out.shape, Shape({2, 4}));
  EXPECT_EQ(out.data_type, kDouble);
  inputs = {{"a_0", {Shape({2, 3}), kFloat}}, {"b_0", {Shape({4, 3}), kFloat}}};
  EXPECT_EQ(Infer(MatmulConf(false, true), inputs).at("out_0").shape, Shape({2, 4}));
  inputs = {{"a_0", {Shape({3, 2}), kFloat}}, {"b_0", {Shape({4, 3}), kFloat}}};
  EXPECT_EQ(Infer(MatmulConf(true, true), inputs).at("out_0").shape, Shape({2, 4}));
}

TEST(MatmulOp, InnerDimensionMismatchStatesShapes) {
  DescMap inputs = {{"a_0", {Shape({2, 3}), kFloat}}, {"b_0", {Shape({4, 5}), kFloat}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kValue,
              {"matmul: a (2, 3) and b (4, 5) cannot be multiplied: a.shape[1]=3 != "
               "b.shape[0]=4 (transpose_a=false, transpose_b=false)"});
  ExpectError([&] { Infer(MatmulConf(true, true), inputs); }, ErrorKind::kValue,
              {"a.shape[0]=2 != b.shape[1]=5", "transpose_a=true, transpose_b=true"});
}

TEST(MatmulOp, RejectsUnsupportedRanksAndBadDtypes) {
  DescMap inputs = {{"a_0", {Shape({3}), kFloat}}, {"b_0", {Shape({3}), kFloat}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kValue,
              {"matmul: unsupported ranks", "(3,)", "rank 1"});
  inputs = {{"a_0", {Shape({4, 5}), kFloat}}, {"b_0", {Shape({2, 5, 6}), kFloat}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kValue,
              {"unsupported ranks", "(4, 5)", "(2, 5, 6)"});
  inputs = {{"a_0", {Shape({2, 3, 4}), kFloat}}, {"b_0", {Shape({1, 2, 4, 5}), kFloat}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kValue,
              {"unsupported ranks", "rank 3", "rank 4"});
  inputs = {{"a_0", {Shape({2, 3}), kFloat}}, {"b_0", {Shape({3, 5}), kDouble}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kType,
              {"float32", "float64"});
  inputs = {{"a_0", {Shape({2, 3}), kInt32}}, {"b_0", {Shape({3, 5}), kInt32}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kType, {"int32"});
}

TEST(MatmulOp, InfersBatchMatmulOverTheLastTwoAxes) {
  DescMap inputs = {{"a_0", {Shape({2, 3, 4}), kFloat}}, {"b_0", {Shape({2, 4, 5}), kFloat}}};
  EXPECT_EQ(Infer(MatmulConf(false, false), inputs).at("out_0").shape, Shape({2, 3, 5}));
  inputs = {{"a_0", {Shape({6, 2, 4, 3}), kDouble}}, {"b_0", {Shape({6, 2, 5, 4}), kDouble}}};
  BlobDesc out = Infer(MatmulConf(true, true), inputs).at("out_0");
  EXPECT_EQ(out.shape, Shape({6, 2, 3, 5}));
  EXPECT_EQ(out.data_type, kDouble);
  inputs = {{"a_0", {Shape({2, 4, 3}), kFloat}}, {"b_0", {Shape({2, 4, 5}), kFloat}}};
  EXPECT_EQ(Infer(MatmulConf(true, false), inputs).at("out_0").shape, Shape({2, 3, 5}));
}

TEST(MatmulOp, BatchMatmulErrorsNameTheAxes) {
  DescMap inputs = {{"a_0", {Shape({2, 3, 4}), kFloat}}, {"b_0", {Shape({3, 4, 5}), kFloat}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kValue,
              {"batch dimensions", "(2, 3, 4)", "(3, 4, 5)", "a.shape[0]=2 != b.shape[0]=3"});
  inputs = {{"a_0", {Shape({2, 3, 4}), kFloat}}, {"b_0", {Shape({2, 5, 6}), kFloat}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kValue,
              {"cannot be multiplied: a.shape[2]=4 != b.shape[1]=5"});
}

TEST(MatmulOp, InfersBroadcastMatmulAndRejectsTransposeA) {
  DescMap inputs = {{"a_0", {Shape({2, 3, 4}), kFloat}}, {"b_0", {Shape({4, 5}), kFloat}}};
  EXPECT_EQ(Infer(MatmulConf(false, false), inputs).at("out_0").shape, Shape({2, 3, 5}));
  inputs = {{"a_0", {Shape({2, 7, 3, 4}), kFloat}}, {"b_0", {Shape({5, 4}), kFloat}}};
  EXPECT_EQ(Infer(MatmulConf(false, true), inputs).at("out_0").shape, Shape({2, 7, 3, 5}));
  ExpectError([&] { Infer(MatmulConf(true, true), inputs); }, ErrorKind::kValue,
              {"(2, 7, 3, 4)", "(5, 4)", "transpose_a must be false"});
  inputs = {{"a_0", {Shape({2, 3, 4}), kFloat}}, {"b_0", {Shape({3, 5}), kFloat}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kValue,
              {"a.shape[2]=4 != b.shape[0]=3"});
}

TEST(MatmulOp, SbpSignaturesFollowTransposes) {
  DescMap inputs = {{"a_0", {Shape({4, 6}), kFloat}}, {"b_0", {Shape({6, 8}), kFloat}}};
  std::vector<std::string> plain = SignatureStrings(Signatures(MatmulConf(false, false), inputs));
  EXPECT_TRUE(Contains(plain, "a_0:S(0) b_0:B out_0:S(0)"));
  EXPECT_TRUE(Contains(plain, "a_0:B b_0:S(1) out_0:S(1)"));
  EXPECT_TRUE(Contains(plain, "a_0:S(1) b_0:S(0) out_0:P"));
  EXPECT_TRUE(Contains(plain, "a_0:B b_0:B out_0:B"));
  std::vector<std::string> transposed =
      SignatureStrings(Signatures(MatmulConf(true, true), inputs));
  EXPECT_TRUE(Contains(transposed, "a_0:S(1) b_0:B out_0:S(0)"));
  EXPECT_TRUE(Contains(transposed, "a_0:B b_0:S(0) out_0:S(1)"));
  EXPECT_TRUE(Contains(transposed, "a_0:S(0) b_0:S(1) out_0:P"));
}

TEST(MatmulOp, GradientRuleForEveryTransposeCombination) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      Shape a_shape = transpose_a ? Shape({3, 2}) : Shape({2, 3});
      Shape b_shape = transpose_b ? Shape({4, 3}) : Shape({3, 4});
      DescMap inputs = {{"a_0", {a_shape, kFloat}}, {"b_0", {b_shape, kFloat}}};
      FakeGradContext ctx(MatmulConf(transpose_a, transpose_b), inputs, {"a", "b"});
      GenerateGrad(ctx);
      ASSERT_EQ(ctx.input_grads().size(), 2u);
      EXPECT_EQ(ctx.Desc(ctx.input_grads().at("a_0")).shape, a_shape);
      EXPECT_EQ(ctx.Desc(ctx.input_grads().at("b_0")).shape, b_shape);
    }
  }
  DescMap inputs = {{"a_0", {Shape({2, 3}), kFloat}}, {"b_0", {Shape({3, 4}), kFloat}}};
  FakeGradContext only_b(MatmulConf(false, false), inputs, {"b"});
  GenerateGrad(only_b);
  EXPECT_EQ(only_b.input_grads().count("a_0"), 0u);
  EXPECT_EQ(only_b.added_ops().size(), 1u);
}

TEST(MatmulOp, BatchedSbpSignaturesSplitLeadingAxes) {
  DescMap inputs = {{"a_0", {Shape({2, 4, 6}), kFloat}}, {"b_0", {Shape({2, 8, 6}), kFloat}}};
  std::vector<std::string> batch = SignatureStrings(Signatures(MatmulConf(false, true), inputs));
  EXPECT_TRUE(Contains(batch, "a_0:S(0) b_0:S(0) out_0:S(0)"));
  EXPECT_TRUE(Contains(batch, "a_0:S(1) b_0:B out_0:S(1)"));
  EXPECT_TRUE(Contains(batch, "a_0:B b_0:S(1) out_0:S(2)"));
  EXPECT_TRUE(Contains(batch, "a_0:S(2) b_0:S(2) out_0:P"));
  EXPECT_TRUE(Contains(batch, "a_0:B b_0:B out_0:B"));
  inputs = {{"a_0", {Shape({2, 3, 4, 6}), kFloat}}, {"b_0", {Shape({6, 8}), kFloat}}};
  std::vector<std::string> broadcast =
      SignatureStrings(Signatures(MatmulConf(false, false), inputs));
  EXPECT_TRUE(Contains(broadcast, "a_0:S(0) b_0:B out_0:S(0)"));
  EXPECT_TRUE(Contains(broadcast, "a_0:S(1) b_0:B out_0:S(1)"));
  EXPECT_TRUE(Contains(broadcast, "a_0:S(2) b_0:B out_0:S(2)"));
  EXPECT_TRUE(Contains(broadcast, "a_0:B b_0:S(1) out_0:S(3)"));
  EXPECT_TRUE(Contains(broadcast, "a_0:S(3) b_0:S(0) out_0:P"));
  EXPECT_FALSE(Contains(broadcast, "a_0:S(0) b_0:S(0) out_0:S(0)"));
}

TEST(MatmulOp, BatchGradientKeepsShapesForEveryTransposeCombination) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      Shape a_shape = transpose_a ? Shape({5, 2, 3, 2}) : Shape({5, 2, 2, 3});
      Shape b_shape = transpose_b ? Shape({5, 2, 4, 3}) : Shape({5, 2, 3, 4});
      DescMap inputs = {{"a_0", {a_shape, kFloat}}, {"b_0", {b_shape, kFloat}}};
      FakeGradContext ctx(MatmulConf(transpose_a, transpose_b), inputs, {"a", "b"});
      GenerateGrad(ctx);
      ASSERT_EQ(ctx.input_grads().size(), 2u);
      EXPECT_EQ(ctx.Desc(ctx.input_grads().at("a_0")).shape, a_shape);
      EXPECT_EQ(ctx.Desc(ctx.input_grads().at("b_0")).shape, b_shape);
      EXPECT_EQ(ctx.added_ops().size(), 2u);  // one batch matmul each, no reshapes
    }
  }
}

TEST(MatmulOp, BroadcastGradientSumsBOverAllLeadingAxesWithOneMatmul) {
  for (bool transpose_b : {false, true}) {
    Shape a_shape({5, 2, 3});
    Shape b_shape = transpose_b ? Shape({4, 3}) : Shape({3, 4});
    DescMap inputs = {{"a_0", {a_shape, kDouble}}, {"b_0", {b_shape, kDouble}}};
    FakeGradContext ctx(MatmulConf(false, transpose_b), inputs, {"a", "b"});
    GenerateGrad(ctx);
    EXPECT_EQ(ctx.Desc(ctx.input_grads().at("a_0")).shape, a_shape);
    std::string db = ctx.input_grads().at("b_0");
    EXPECT_EQ(ctx.Desc(db).shape, b_shape);
    const OperatorConf& db_op = ctx.ProducerOf(db);
    EXPECT_EQ(db_op.op_type(), "matmul");
    // Both operands of db's product are 2-D reshapes of a and of out's gradient.
    for (const char* argument : {"a", "b"}) {
      const OperatorConf& operand = ctx.ProducerOf(InputLbn(db_op, argument, 0));
      EXPECT_EQ(operand.op_type(), "reshape");
      EXPECT_EQ(ctx.Desc(InputLbn(db_op, argument, 0)).shape.num_axes(), 2);
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace oneflow
