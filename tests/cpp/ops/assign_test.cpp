#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

TEST(AssignOp, NeedsValueOfRefsShapeAndDtype) {
  OperatorConf conf = MakeOpConf("assign", {{"ref", 1}, {"value", 1}});
  EXPECT_TRUE(
      Infer(conf, {{"ref_0", {Shape({2, 3}), kFloat}}, {"value_0", {Shape({2, 3}), kFloat}}})
          .empty());
  ExpectError(
      [&] {
        Infer(conf, {{"ref_0", {Shape({2, 3}), kFloat}}, {"value_0", {Shape({3, 2}), kFloat}}});
      },
      ErrorKind::kValue, {"assign", "(3, 2)", "(2, 3)"});
  ExpectError(
      [&] {
        Infer(conf, {{"ref_0", {Shape({2, 3}), kFloat}}, {"value_0", {Shape({2, 3}), kDouble}}});
      },
      ErrorKind::kType, {"assign", "float64"});
}

TEST(AssignOp, RefAndValueAreLaidOutAlike) {
  OperatorConf conf = MakeOpConf("assign", {{"ref", 1}, {"value", 1}});
  DescMap inputs = {{"ref_0", {Shape({4, 6}), kFloat}}, {"value_0", {Shape({4, 6}), kFloat}}};
  std::vector<std::string> signatures = SignatureStrings(Signatures(conf, inputs));
  EXPECT_TRUE(Contains(signatures, "ref_0:S(0) value_0:S(0)"));
  EXPECT_TRUE(Contains(signatures, "ref_0:S(1) value_0:S(1)"));
  EXPECT_TRUE(Contains(signatures, "ref_0:B value_0:B"));
  EXPECT_EQ(signatures.size(), 3u);
}

TEST(AssignOp, UpdatesRefInPlaceAndHasNoGradient) {
  const OpDef& def = OpRegistry::Instance().Get("assign");
  EXPECT_EQ(def.mutable_inputs, std::set<std::string>({"ref"}));
  EXPECT_TRUE(def.outputs.empty());
  EXPECT_TRUE(def.non_differentiable);
}

}  // namespace
}  // namespace test
}  // namespace oneflow
