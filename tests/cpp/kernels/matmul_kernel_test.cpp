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

// Batch matmul: each batch index against NaiveMatmul of its slices.
template <typename T>
void CheckBatchMatmul(const std::vector<int64_t>& batch_dims, bool transpose_a, bool transpose_b,
                      double tolerance) {
  const int64_t m = 4, n = 3, k = 5;
  int64_t batch_count = 1;
  for (int64_t dim : batch_dims) { batch_count *= dim; }
  std::vector<int64_t> a_dims = batch_dims, b_dims = batch_dims, out_dims = batch_dims;
  a_dims.insert(a_dims.end(), {transpose_a ? k : m, transpose_a ? m : k});
  b_dims.insert(b_dims.end(), {transpose_b ? n : k, transpose_b ? k : n});
  out_dims.insert(out_dims.end(), {m, n});
  std::vector<T> a = SampleValues<T>(batch_count * m * k, 3);
  std::vector<T> b = SampleValues<T>(batch_count * k * n, 4);
  OperatorConf conf = MakeOpConf("matmul", {{"a", 1}, {"b", 1}},
                                 {MakeAttr("transpose_a", transpose_a),
                                  MakeAttr("transpose_b", transpose_b), MakeAttr("alpha", 1.5)});
  KernelRunner runner(
      conf, {{"a_0", MakeTensor(Shape(a_dims), a)}, {"b_0", MakeTensor(Shape(b_dims), b)}});
  runner.Run();
  EXPECT_EQ(runner.output("out_0").desc.shape, Shape(out_dims));
  std::vector<T> expected;
  for (int64_t batch = 0; batch < batch_count; ++batch) {
    std::vector<T> a_slice(a.begin() + batch * m * k, a.begin() + (batch + 1) * m * k);
    std::vector<T> b_slice(b.begin() + batch * k * n, b.begin() + (batch + 1) * k * n);
    std::vector<T> product = NaiveMatmul(a_slice, b_slice, m, n, k, transpose_a, transpose_b, 1.5);
    expected.insert(expected.end(), product.begin(), product.end());
  }
  ExpectNear(Values<T>(runner.output("out_0")), expected, tolerance);
}

TEST(MatmulKernel, BatchMatmulMatchesNaiveLoopPerBatch) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      SCOPED_TRACE(testing::Message()
                   << "transpose_a=" << transpose_a << " transpose_b=" << transpose_b);
      CheckBatchMatmul<float>({3}, transpose_a, transpose_b, 1e-5);
      CheckBatchMatmul<double>({2, 3}, transpose_a, transpose_b, 1e-12);
    }
  }
}

// Broadcast matmul: a (2, 3, m, k) times b is the 2-D product of a's (6 * m, k) rows with b.
TEST(MatmulKernel, BroadcastMatmulMultipliesEveryRowOfA) {
  const int64_t rows = 2 * 3 * 4, n = 6, k = 5;
  std::vector<double> a = SampleValues<double>(rows * k, 5);
  std::vector<double> b = SampleValues<double>(k * n, 6);
  for (bool transpose_b : {false, true}) {
    OperatorConf conf =
        MakeOpConf("matmul", {{"a", 1}, {"b", 1}}, {MakeAttr("transpose_b", transpose_b)});
    KernelRunner runner(conf,
                        {{"a_0", MakeTensor(Shape({2, 3, 4, k}), a)},
                         {"b_0", MakeTensor(transpose_b ? Shape({n, k}) : Shape({k, n}), b)}});
    runner.Run();
    EXPECT_EQ(runner.output("out_0").desc.shape, Shape({2, 3, 4, n}));
    ExpectNear(Values<double>(runner.output("out_0")),
               NaiveMatmul(a, b, rows, n, k, false, transpose_b, 1.0), 1e-12);
  }
}

TEST(MatmulKernel, EmptyInnerDimensionGivesZerosForEveryBatch) {
  OperatorConf conf = MakeOpConf("matmul", {{"a", 1}, {"b", 1}});
  KernelRunner runner(conf, {{"a_0", MakeTensor<float>(Shape({3, 2, 0}), {})},
                             {"b_0", MakeTensor<float>(Shape({3, 0, 4}), {})}});
  runner.Run();
  ExpectNear(Values<float>(runner.output("out_0")), std::vector<float>(24, 0.0f), 0.0);
}

}  // namespace
}  // namespace test
}  // namespace oneflow
