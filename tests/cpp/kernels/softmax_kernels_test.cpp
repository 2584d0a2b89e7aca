// softmax, softmax_grad, sparse_softmax_cross_entropy and its gradient against reference loops.

#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

template <typename T>
std::vector<T> ReferenceSoftmax(const std::vector<T>& x, int64_t rows, int64_t classes) {
  std::vector<T> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) {
      sum += std::exp(static_cast<double>(x[r * classes + c]));
    }
    for (int64_t c = 0; c < classes; ++c) {
      y[r * classes + c] = static_cast<T>(std::exp(static_cast<double>(x[r * classes + c])) / sum);
    }
  }
  return y;
}

TEST(SoftmaxKernel, ForwardIsStableAndGradientMatches) {
  const int64_t rows = 6, classes = 5;
  Shape shape({2, 3, classes});
  std::vector<float> x = SampleValues<float>(rows * classes, 1);
  KernelRunner forward(MakeOpConf("softmax", {{"in", 1}}), {{"in_0", MakeTensor(shape, x)}});
  forward.Run();
  std::vector<float> y = Values<float>(forward.output("out_0"));
  ExpectNear(y, ReferenceSoftmax(x, rows, classes), 1e-6);

  std::vector<float> large = {1000.0f, 1001.0f, 999.0f};
  KernelRunner stable(MakeOpConf("softmax", {{"in", 1}}),
                      {{"in_0", MakeTensor(Shape({1, 3}), large)}});
  stable.Run();
  ExpectNear(Values<float>(stable.output("out_0")),
             ReferenceSoftmax<float>({0.0f, 1.0f, -1.0f}, 1, 3), 1e-6);

  std::vector<float> dy = SampleValues<float>(rows * classes, 2);
  KernelRunner grad(MakeOpConf("softmax_grad", {{"y", 1}, {"dy", 1}}),
                    {{"y_0", MakeTensor(shape, y)}, {"dy_0", MakeTensor(shape, dy)}});
  grad.Run();
  std::vector<float> expected(rows * classes);
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0;
    for (int64_t c = 0; c < classes; ++c) { dot += y[r * classes + c] * dy[r * classes + c]; }
    for (int64_t c = 0; c < classes; ++c) {
      expected[r * classes + c] =
          static_cast<float>(y[r * classes + c] * (dy[r * classes + c] - dot));
    }
  }
  ExpectNear(Values<float>(grad.output("dx_0")), expected, 1e-6);
}

template <typename Label>
void CheckSparseSoftmaxCrossEntropy() {
  const int64_t rows = 4, classes = 3;
  std::vector<double> prediction = SampleValues<double>(rows * classes, 3);
  std::vector<Label> label = {0, 2, 1, 2};
  OperatorConf conf = MakeOpConf("sparse_softmax_cross_entropy", {{"prediction", 1}, {"label", 1}});
  KernelRunner runner(conf, {{"prediction_0", MakeTensor(Shape({rows, classes}), prediction)},
                             {"label_0", MakeTensor(Shape({rows}), label)}});
  runner.Run();
  std::vector<double> prob = ReferenceSoftmax(prediction, rows, classes);
  ExpectNear(Values<double>(runner.output("prob_0")), prob, 1e-12);
  std::vector<double> loss;
  for (int64_t r = 0; r < rows; ++r) { loss.push_back(-std::log(prob[r * classes + label[r]])); }
  ExpectNear(Values<double>(runner.output("out_0")), loss, 1e-12);

  std::vector<double> dy = {1.0, 0.5, -2.0, 3.0};
  KernelRunner grad(
      MakeOpConf("sparse_softmax_cross_entropy_grad", {{"prob", 1}, {"label", 1}, {"dy", 1}}),
      {{"prob_0", MakeTensor(Shape({rows, classes}), prob)},
       {"label_0", MakeTensor(Shape({rows}), label)},
       {"dy_0", MakeTensor(Shape({rows}), dy)}});
  grad.Run();
  std::vector<double> expected(rows * classes);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < classes; ++c) {
      expected[r * classes + c] = (prob[r * classes + c] - (c == label[r] ? 1.0 : 0.0)) * dy[r];
    }
  }
  ExpectNear(Values<double>(grad.output("prediction_diff_0")), expected, 1e-12);
}

TEST(SparseSoftmaxCrossEntropyKernel, MatchesReferenceForBothLabelDtypes) {
  CheckSparseSoftmaxCrossEntropy<int32_t>();
  CheckSparseSoftmaxCrossEntropy<int64_t>();
}

TEST(SparseSoftmaxCrossEntropyKernel, OutOfRangeLabelIsValueError) {
  OperatorConf conf = MakeOpConf("sparse_softmax_cross_entropy", {{"prediction", 1}, {"label", 1}});
  KernelRunner runner(conf, {{"prediction_0", MakeTensor(Shape({2, 3}), SampleValues<float>(6))},
                             {"label_0", MakeTensor<int64_t>(Shape({2}), {1, 3})}});
  ExpectError([&] { runner.Run(); }, ErrorKind::kValue,
              {"sparse_softmax_cross_entropy", "label value 3", "depth 3"});
}

}  // namespace
}  // namespace test
}  // namespace oneflow
