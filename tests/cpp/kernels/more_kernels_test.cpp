// broadcast_atan2 / xdivy / xlogy, tensor_scatter_nd_update,
// generate_random_batch_permutation_indices and random_mask_like kernels against reference
// loops and their defining properties.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

template <typename T>
std::vector<T> RunBinary(const std::string& op_type, const std::vector<T>& x,
                         const std::vector<T>& y) {
  OperatorConf conf = MakeOpConf(op_type, {{"x", 1}, {"y", 1}});
  const Shape shape({static_cast<int64_t>(x.size())});
  KernelRunner runner(conf, {{"x_0", MakeTensor(shape, x)}, {"y_0", MakeTensor(shape, y)}});
  runner.Run();
  return Values<T>(runner.output("z_0"));
}

TEST(Atan2Kernel, EveryQuadrantAndTheAxes) {
  std::vector<double> x = {1, 1, -1, -1, 0, 0, 2, -2, 0.0, -0.0};
  std::vector<double> y = {1, -1, -1, 1, 3, -3, 0, 0, -1, -1};
  std::vector<double> out = RunBinary("broadcast_atan2", x, y);
  for (size_t i = 0; i < x.size(); ++i) { EXPECT_EQ(out[i], std::atan2(x[i], y[i])) << "at " << i; }
  EXPECT_EQ(out[8], M_PI);
  EXPECT_EQ(out[9], -M_PI);
  std::vector<float> out_float = RunBinary<float>("broadcast_atan2", {1.0f}, {-1.0f});
  EXPECT_FLOAT_EQ(out_float[0], static_cast<float>(3 * M_PI / 4));
}

TEST(XdivyXlogyKernels, ZeroWhereXIsZero) {
  std::vector<double> x = {0, 0, 0, 3, -2};
  std::vector<double> y = {0, 2, -1, 4, 0.5};
  std::vector<double> quotient = RunBinary("broadcast_xdivy", x, y);
  std::vector<double> expected_quotient = {0, 0, 0, 0.75, -4};
  EXPECT_EQ(quotient, expected_quotient);
  std::vector<double> y_log = {0, 2, 1, 4, 0.5};
  std::vector<double> product = RunBinary("broadcast_xlogy", x, y_log);
  EXPECT_EQ(product[0], 0.0);  // not 0 * -inf
  EXPECT_EQ(product[1], 0.0);
  EXPECT_DOUBLE_EQ(product[3], 3 * std::log(4.0));
  EXPECT_DOUBLE_EQ(product[4], -2 * std::log(0.5));
  std::vector<float> float_product =
      RunBinary<float>("broadcast_xlogy", {0.0f, 2.0f}, {0.0f, 8.0f});
  EXPECT_EQ(float_product[0], 0.0f);
  EXPECT_FLOAT_EQ(float_product[1], 2.0f * std::log(8.0f));
}

TEST(TensorScatterNdUpdateKernel, ReplacesRowsAndTheLaterDuplicateWins) {
  OperatorConf conf =
      MakeOpConf("tensor_scatter_nd_update", {{"params", 1}, {"indices", 1}, {"updates", 1}});
  std::vector<int32_t> params(5 * 300);
  std::iota(params.begin(), params.end(), 0);
  std::vector<int64_t> indices = {4, 1, 4};
  std::vector<int32_t> updates(3 * 300);
  for (int64_t row = 0; row < 3; ++row) {
    std::fill(updates.begin() + row * 300, updates.begin() + (row + 1) * 300, -1 - row);
  }
  KernelRunner runner(conf, {{"params_0", MakeTensor(Shape({5, 300}), params)},
                             {"indices_0", MakeTensor(Shape({3, 1}), indices)},
                             {"updates_0", MakeTensor(Shape({3, 300}), updates)}});
  runner.Run();
  std::vector<int32_t> out = Values<int32_t>(runner.output("out_0"));
  for (int64_t row = 0; row < 5; ++row) {
    for (int64_t column = 0; column < 300; ++column) {
      int32_t expected = row == 4 ? -3 : row == 1 ? -2 : params[row * 300 + column];
      ASSERT_EQ(out[row * 300 + column], expected) << row << ", " << column;
    }
  }
  std::vector<int64_t> bad_indices = {0, 5, 1};
  KernelRunner bad(conf, {{"params_0", MakeTensor(Shape({5, 300}), params)},
                          {"indices_0", MakeTensor(Shape({3, 1}), bad_indices)},
                          {"updates_0", MakeTensor(Shape({3, 300}), updates)}});
  ExpectError([&] { bad.Run(); }, ErrorKind::kValue,
              {"tensor_scatter_nd_update", "index tuple (5) of row 1", "[0, 5)"});
}

TEST(BatchPermutationKernel, APermutationThatChangesEachIteration) {
  OperatorConf conf = MakeOpConf("generate_random_batch_permutation_indices", {{"x", 1}},
                                 {MakeAttr<int64_t>("seed", 9)});
  KernelRunner runner(conf, {{"x_0", MakeTensor(Shape({40, 2}), std::vector<float>(80))}});
  runner.Run();
  std::vector<int32_t> first = Values<int32_t>(runner.output("y_0"));
  runner.Run();
  std::vector<int32_t> second = Values<int32_t>(runner.output("y_0"));
  EXPECT_NE(first, second);
  std::vector<int32_t> identity(40);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(first, identity);
  for (std::vector<int32_t> permutation : {first, second}) {
    std::sort(permutation.begin(), permutation.end());
    EXPECT_EQ(permutation, identity);
  }
  KernelRunner again(conf, {{"x_0", MakeTensor(Shape({40, 2}), std::vector<float>(80))}});
  again.Run();
  EXPECT_EQ(Values<int32_t>(again.output("y_0")), first);  // same seed, same first draw
}

TEST(RandomMaskLikeKernel, KeepsAboutOneMinusRate) {
  OperatorConf conf = MakeOpConf("random_mask_like", {{"like", 1}},
                                 {MakeAttr<double>("rate", 0.2), MakeAttr<int64_t>("seed", 4)});
  KernelRunner runner(conf,
                      {{"like_0", MakeTensor(Shape({100, 100}), std::vector<double>(10000))}});
  runner.Run();
  std::vector<int8_t> mask = Values<int8_t>(runner.output("out_0"));
  int64_t kept = 0;
  for (int8_t bit : mask) {
    ASSERT_TRUE(bit == 0 || bit == 1);
    kept += bit;
  }
  EXPECT_NEAR(kept / 10000.0, 0.8, 0.015);  // 3.75 sigma
}

}  // namespace
}  // namespace test
}  // namespace oneflow
