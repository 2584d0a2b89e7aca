#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

// out[i][j] = alpha * sum_k op(a)[i][k] * op(b)[k][j], by the definition.
template <typename T>
std::vector<T> NaiveMatmul(const std::vector<T>& a, const std::vector<T>& b, int64_t m, int64_t n,
                           int64_t k, bool transpose_a, bool transpose_b, double alpha) {
  std::vector<T> out(m * n, T(0));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        double a_value = transpose_a ? a[p * m + i] : a[i * k + p];
        double b_value = transpose_b ? b[j * k + p] : b[p * n + j];
        sum += a_value * b_value;
      }
      out[i * n + j] = static_cast<T>(alpha * sum);
    }
  }
  return out;
}

template <typename T>
void CheckMatmul(bool transpose_a, bool transpose_b, double alpha, double tolerance) {
  const int64_t m = 5, n = 7, k = 3;
  Shape a_shape = transpose_a ? Shape({k, m}) : Shape({m, k});
  Shape b_shape = transpose_b ? Shape({n, k}) : Shape({k, n});
  std::vector<T> a = SampleValues<T>(m * k, 1);
  std::vector<T> b = SampleValues<T>(k * n, 2);
  OperatorConf conf = MakeOpConf("matmul", {{"a", 1}, {"b", 1}},
                                 {MakeAttr("transpose_a", transpose_a),
                                  MakeAttr("transpose_b", transpose_b), MakeAttr("alpha", alpha)});
  KernelRunner runner(conf, {{"a_0", MakeTensor(a_shape, a)}, {"b_0", MakeTensor(b_shape, b)}});
  runner.Run();
  EXPECT_EQ(runner.output("out_0").desc.shape, Shape({m, n}));
  ExpectNear(Values<T>(runner.output("out_0")),
             NaiveMatmul(a, b, m, n, k, transpose_a, transpose_b, alpha), tolerance);
}

TEST(MatmulKernel, MatchesNaiveLoopForAllTransposes) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      SCOPED_TRACE(testing::Message()
                   << "transpose_a=" << transpose_a << " transpose_b=" << transpose_b);
      CheckMatmul<float>(transpose_a, transpose_b, 1.0, 1e-5);
      CheckMatmul<double>(transpose_a, transpose_b, 0.5, 1e-12);
    }
  }
}

TEST(MatmulKernel, EmptyInnerDimensionGivesZeros) {
  OperatorConf conf = MakeOpConf("matmul", {{"a", 1}, {"b", 1}});
  KernelRunner runner(conf, {{"a_0", MakeTensor<float>(Shape({2, 0}), {})},
                             {"b_0", MakeTensor<float>(Shape({0, 3}), {})}});
  runner.Run();
  ExpectNear(Values<float>(runner.output("out_0")), std::vector<float>(6, 0.0f), 0.0);
}

}  // namespace
}  // namespace test
}  // namespace oneflow
