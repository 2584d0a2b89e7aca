#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

OperatorConf TransposeConf(const std::vector<int64_t>& perm) {
  return MakeOpConf("transpose", {{"in", 1}}, {MakeAttr("perm", perm)});
}

TEST(TransposeOp, OutputAxisIsInputAxisPerm) {
  DescMap inputs = {{"in_0", {Shape({2, 3, 4}), kFloat}}};
  EXPECT_EQ(Infer(TransposeConf({2, 0, 1}), inputs).at("out_0").shape, Shape({4, 2, 3}));
  EXPECT_EQ(Infer(TransposeConf({0, 1, 2}), inputs).at("out_0").shape, Shape({2, 3, 4}));
  inputs = {{"in_0", {Shape({5, 6}), kUInt8}}};
  BlobDesc out = Infer(TransposeConf({1, 0}), inputs).at("out_0");
  EXPECT_EQ(out.shape, Shape({6, 5}));
  EXPECT_EQ(out.data_type, kUInt8);
}

TEST(TransposeOp, RejectsWhatIsNotAPermutation) {
  DescMap inputs = {{"in_0", {Shape({2, 3, 4}), kFloat}}};
  ExpectError([&] { Infer(TransposeConf({0, 1}), inputs); }, ErrorKind::kValue,
              {"transpose: perm [0, 1]", "(2, 3, 4)", "3 axes"});
  ExpectError([&] { Infer(TransposeConf({0, 1, 1}), inputs); }, ErrorKind::kValue,
              {"perm [0, 1, 1]", "(2, 3, 4)"});
  ExpectError([&] { Infer(TransposeConf({0, 1, 3}), inputs); }, ErrorKind::kValue,
              {"perm [0, 1, 3]"});
  ExpectError([&] { Infer(TransposeConf({-1, 0, 1}), inputs); }, ErrorKind::kValue,
              {"perm [-1, 0, 1]"});
}

TEST(TransposeOp, SplitAxisFollowsThePermutation) {
  DescMap inputs = {{"in_0", {Shape({2, 3, 4}), kFloat}}};
  std::vector<std::string> signatures =
      SignatureStrings(Signatures(TransposeConf({2, 0, 1}), inputs));
  EXPECT_TRUE(Contains(signatures, "in_0:S(2) out_0:S(0)"));
  EXPECT_TRUE(Contains(signatures, "in_0:S(0) out_0:S(1)"));
  EXPECT_TRUE(Contains(signatures, "in_0:S(1) out_0:S(2)"));
  EXPECT_TRUE(Contains(signatures, "in_0:P out_0:P"));
  EXPECT_TRUE(Contains(signatures, "in_0:B out_0:B"));
  EXPECT_FALSE(Contains(signatures, "in_0:S(0) out_0:S(0)"));
  EXPECT_EQ(signatures.size(), 5u);
}

TEST(TransposeOp, GradientIsTransposeByTheInversePermutation) {
  DescMap inputs = {{"in_0", {Shape({2, 3, 4, 5}), kDouble}}};
  FakeGradContext ctx(TransposeConf({1, 3, 0, 2}), inputs, {"in"});
  GenerateGrad(ctx);
  std::string din = ctx.input_grads().at("in_0");
  EXPECT_EQ(ctx.Desc(din).shape, Shape({2, 3, 4, 5}));
  const OperatorConf& grad = ctx.ProducerOf(din);
  EXPECT_EQ(grad.op_type(), "transpose");
  EXPECT_EQ(FromAttrValue<std::vector<int64_t>>(grad.attr().at("perm")),
            std::vector<int64_t>({2, 0, 3, 1}));

  FakeGradContext no_grad(TransposeConf({1, 3, 0, 2}), inputs, {});
  GenerateGrad(no_grad);
  EXPECT_TRUE(no_grad.added_ops().empty());
}

}  // namespace
}  // namespace test
}  // namespace oneflow
