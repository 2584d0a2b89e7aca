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

TEST(MatmulOp, RejectsNon2DAndBadDtypes) {
  DescMap inputs = {{"a_0", {Shape({2, 3, 4}), kFloat}}, {"b_0", {Shape({4, 5}), kFloat}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kValue,
              {"matmul", "2-D", "(2, 3, 4)"});
  inputs = {{"a_0", {Shape({2, 3}), kFloat}}, {"b_0", {Shape({3, 5}), kDouble}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kType,
              {"float32", "float64"});
  inputs = {{"a_0", {Shape({2, 3}), kInt32}}, {"b_0", {Shape({3, 5}), kInt32}}};
  ExpectError([&] { Infer(MatmulConf(false, false), inputs); }, ErrorKind::kType, {"int32"});
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

}  // namespace
}  // namespace test
}  // namespace oneflow
