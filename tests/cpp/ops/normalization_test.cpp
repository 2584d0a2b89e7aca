// Inference of the batch-normalization ops' dtypes: one dtype throughout, or (mixed precision)
// float16 data with float32 per-channel blobs.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "tests/cpp/ops/op_test_util.h"

namespace oneflow {
namespace test {
namespace {

const Shape kX({4, 3, 5});
const Shape kChannels({3});

std::map<std::string, AttrValue> Attrs() { return {MakeAttr<int64_t>("axis", 1)}; }

void ExpectDesc(const BlobDesc& actual, const BlobDesc& expected, const std::string& what) {
  EXPECT_EQ(actual.shape, expected.shape) << what;
  EXPECT_EQ(DataTypeName(actual.data_type), DataTypeName(expected.data_type)) << what;
}

TEST(NormalizationOps, Float16DataKeepsFloat32PerChannelBlobs) {
  const BlobDesc x{kX, kFloat16}, channel{kChannels, kFloat};
  ExpectDesc(Infer(MakeOpConf("batch_norm_mean", {{"x", 1}}, Attrs()), {{"x_0", x}}).at("mean_0"),
             channel, "mean");
  ExpectDesc(Infer(MakeOpConf("batch_norm_variance", {{"x", 1}, {"mean", 1}}, Attrs()),
                   {{"x_0", x}, {"mean_0", channel}})
                 .at("variance_0"),
             channel, "variance");
  const DescMap train_inputs = {{"x_0", x},          {"mean_0", channel},
                                {"variance_0", channel}, {"gamma_0", channel},
                                {"beta_0", channel},     {"moving_mean_0", channel},
                                {"moving_variance_0", channel}};
  const OperatorConf train =
      MakeOpConf("normalization_train",
                 {{"x", 1}, {"mean", 1}, {"variance", 1}, {"gamma", 1}, {"beta", 1},
                  {"moving_mean", 1}, {"moving_variance", 1}},
                 Attrs());
  ExpectDesc(Infer(train, train_inputs).at("y_0"), x, "y");

  const DescMap stats = Infer(
      MakeOpConf("normalization_train_grad_stats",
                 {{"x", 1}, {"dy", 1}, {"mean", 1}, {"variance", 1}}, Attrs()),
      {{"x_0", x}, {"dy_0", x}, {"mean_0", channel}, {"variance_0", channel}});
  ExpectDesc(stats.at("sum_dy_0"), channel, "sum_dy");
  ExpectDesc(stats.at("sum_dy_xhat_0"), channel, "sum_dy_xhat");

  const DescMap grad = Infer(
      MakeOpConf("normalization_grad",
                 {{"x", 1}, {"dy", 1}, {"mean", 1}, {"variance", 1}, {"gamma", 1}}, Attrs()),
      {{"x_0", x}, {"dy_0", x}, {"mean_0", channel}, {"variance_0", channel},
       {"gamma_0", channel}});
  ExpectDesc(grad.at("dx_0"), x, "dx");
  for (const char* name : {"mean_diff_0", "variance_diff_0", "gamma_diff_0", "beta_diff_0"}) {
    ExpectDesc(grad.at(name), channel, name);
  }
}

// x's dtype selects the kernel, not a float32 per-channel output's.
TEST(NormalizationOps, KernelDtypeIsXs) {
  const BlobDesc x{kX, kFloat16}, channel{kChannels, kFloat};
  for (const auto& [op_type, inputs] : std::vector<std::pair<std::string, DescMap>>{
           {"batch_norm_mean", {{"x_0", x}}},
           {"batch_norm_variance", {{"x_0", x}, {"mean_0", channel}}},
           {"normalization_train_grad_stats",
            {{"x_0", x}, {"dy_0", x}, {"mean_0", channel}, {"variance_0", channel}}}}) {
    std::map<std::string, int64_t> counts;
    for (const auto& entry : inputs) { counts[entry.first.substr(0, entry.first.size() - 2)] = 1; }
    const OperatorConf conf = MakeOpConf(op_type, counts, Attrs());
    DescMap descs = inputs;
    for (const auto& entry : Infer(conf, inputs)) { descs[entry.first] = entry.second; }
    EXPECT_EQ(DataTypeName(KernelDataType(OpRegistry::Instance().Get(op_type), conf, descs)),
              "float16")
        << op_type;
  }
}

TEST(NormalizationOps, PerChannelDtypesAreChecked) {
  const OperatorConf conf =
      MakeOpConf("normalization", {{"x", 1}, {"mean", 1}, {"variance", 1}, {"gamma", 1}}, Attrs());
  // float16 data: per-channel blobs must be float32.
  ExpectError(
      [&] {
        Infer(conf, {{"x_0", {kX, kFloat16}},
                     {"mean_0", {kChannels, kFloat}},
                     {"variance_0", {kChannels, kFloat}},
                     {"gamma_0", {kChannels, kFloat16}}});
      },
      ErrorKind::kType, {"normalization", "gamma", "float32", "float16"});
  // Otherwise every blob has x's dtype.
  ExpectError(
      [&] {
        Infer(conf, {{"x_0", {kX, kFloat}},
                     {"mean_0", {kChannels, kFloat}},
                     {"variance_0", {kChannels, kDouble}},
                     {"gamma_0", {kChannels, kFloat}}});
      },
      ErrorKind::kType, {"normalization", "variance", "same dtype"});
  ExpectError([&] { Infer(conf, {{"x_0", {kX, kInt32}}, {"mean_0", {kChannels, kInt32}},
                                 {"variance_0", {kChannels, kInt32}},
                                 {"gamma_0", {kChannels, kInt32}}}); },
              ErrorKind::kType, {"normalization", "x"});
}

}  // namespace
}  // namespace test
}  // namespace oneflow
