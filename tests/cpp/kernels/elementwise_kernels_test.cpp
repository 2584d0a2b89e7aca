// Elementwise CPU kernels against reference loops: activations and their gradients, scalar
// math, copies, cast, constants, add_n and the model updates.

#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

template <typename T>
std::vector<T> Map(const std::vector<T>& values, T (*fn)(T)) {
  std::vector<T> out;
  for (T value : values) { out.push_back(fn(value)); }
  return out;
}

template <typename T>
void CheckActivation(const std::string& op_type, T (*forward)(T), T (*backward)(T, T),
                     int64_t count) {
  SCOPED_TRACE(op_type);
  Shape shape({count});
  std::vector<T> x = SampleValues<T>(count, 1);
  KernelRunner runner(MakeOpConf(op_type, {{"x", 1}}), {{"x_0", MakeTensor(shape, x)}});
  runner.Run();
  std::vector<T> y = Values<T>(runner.output("y_0"));
  ExpectNear(y, Map(x, forward), 1e-6);
  if (backward == nullptr) { return; }
  std::vector<T> dy = SampleValues<T>(count, 2);
  KernelRunner grad(MakeOpConf(op_type + "_grad", {{"y", 1}, {"dy", 1}}),
                    {{"y_0", MakeTensor(shape, y)}, {"dy_0", MakeTensor(shape, dy)}});
  grad.Run();
  std::vector<T> expected;
  for (int64_t i = 0; i < count; ++i) { expected.push_back(backward(y[i], dy[i])); }
  ExpectNear(Values<T>(grad.output("dx_0")), expected, 1e-6);
}

TEST(ActivationKernels, ForwardAndGradientMatchFormulas) {
  for (int64_t count : {7, 70000}) {  // the large count runs in ParallelFor chunks
    CheckActivation<float>(
        "relu", [](float x) { return x > 0 ? x : 0.0f; },
        [](float y, float dy) { return y > 0 ? dy : 0.0f; }, count);
    CheckActivation<double>(
        "sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); },
        [](double y, double dy) { return dy * y * (1 - y); }, count);
    CheckActivation<float>(
        "tanh", [](float x) { return std::tanh(x); },
        [](float y, float dy) { return dy * (1 - y * y); }, count);
    CheckActivation<double>(
        "square", [](double x) { return x * x; }, nullptr, count);
  }
}

TEST(ScalarMathKernels, FloatAndIntegerOperands) {
  std::vector<int32_t> x = {1, -2, 3};
  KernelRunner mul(MakeOpConf("scalar_mul", {{"in", 1}}, {MakeAttr("operand", 3.0)}),
                   {{"in_0", MakeTensor(Shape({3}), x)}});
  mul.Run();
  EXPECT_EQ(Values<int32_t>(mul.output("out_0")), std::vector<int32_t>({3, -6, 9}));
  KernelRunner add(MakeOpConf("scalar_add", {{"in", 1}}, {MakeAttr("operand", 0.5)}),
                   {{"in_0", MakeTensor<float>(Shape({2}), {1.0f, 2.0f})}});
  add.Run();
  ExpectNear(Values<float>(add.output("out_0")), std::vector<float>({1.5f, 2.5f}), 0.0);
}

TEST(CopyKernels, IdentityReshapeAndReshapeLikeCopyBytes) {
  std::vector<uint8_t> values = {1, 2, 3, 4, 5, 6};
  KernelRunner identity(MakeOpConf("identity", {{"in", 1}}),
                        {{"in_0", MakeTensor(Shape({6}), values)}});
  identity.Run();
  EXPECT_EQ(Values<uint8_t>(identity.output("out_0")), values);
  KernelRunner reshape(MakeOpConf("reshape", {{"in", 1}}, {MakeAttr("shape", Shape({3, -1}))}),
                       {{"in_0", MakeTensor(Shape({2, 3}), values)}});
  reshape.Run();
  EXPECT_EQ(reshape.output("out_0").desc.shape, Shape({3, 2}));
  EXPECT_EQ(Values<uint8_t>(reshape.output("out_0")), values);
  std::vector<double> doubles = {1, 2, 3, 4};
  KernelRunner like(MakeOpConf("reshape_like", {{"in", 1}, {"like", 1}}),
                    {{"in_0", MakeTensor(Shape({4}), doubles)},
                     {"like_0", MakeTensor(Shape({2, 2}), std::vector<double>(4))}});
  like.Run();
  EXPECT_EQ(like.output("out_0").desc.shape, Shape({2, 2}));
  EXPECT_EQ(Values<double>(like.output("out_0")), doubles);
}

TEST(CastKernel, ConvertsBetweenDtypes) {
  KernelRunner to_int(MakeOpConf("cast", {{"in", 1}}, {MakeAttr("dtype", kInt32)}),
                      {{"in_0", MakeTensor<float>(Shape({3}), {1.7f, -2.2f, 3.0f})}});
  to_int.Run();
  EXPECT_EQ(Values<int32_t>(to_int.output("out_0")), std::vector<int32_t>({1, -2, 3}));
  KernelRunner to_double(MakeOpConf("cast", {{"in", 1}}, {MakeAttr("dtype", kDouble)}),
                         {{"in_0", MakeTensor<uint8_t>(Shape({2}), {200, 7})}});
  to_double.Run();
  EXPECT_EQ(Values<double>(to_double.output("out_0")), std::vector<double>({200.0, 7.0}));
}

TEST(ConstantKernels, FillWithTheRequestedValue) {
  KernelRunner floating(MakeOpConf("constant", {},
                                   {MakeAttr("dtype", kFloat), MakeAttr("shape", Shape({2, 2})),
                                    MakeAttr("floating_value", 1.5)}),
                        {});
  floating.Run();
  EXPECT_EQ(Values<float>(floating.output("out_0")), std::vector<float>(4, 1.5f));
  KernelRunner integer(
      MakeOpConf("constant", {},
                 {MakeAttr("dtype", kInt64), MakeAttr("shape", Shape({3})),
                  MakeAttr("is_floating_value", false), MakeAttr<int64_t>("integer_value", 7)}),
      {});
  integer.Run();
  EXPECT_EQ(Values<int64_t>(integer.output("out_0")), std::vector<int64_t>(3, 7));
  KernelRunner like(MakeOpConf("constant_like", {{"like", 1}}, {MakeAttr("value", 1.0)}),
                    {{"like_0", MakeTensor(Shape({3}), std::vector<double>({5, 6, 7}))}});
  like.Run();
  EXPECT_EQ(Values<double>(like.output("out_0")), std::vector<double>(3, 1.0));
}

TEST(AddNKernel, SumsAnyNumberOfInputs) {
  for (int64_t count : {1, 2, 4}) {
    std::map<std::string, HostTensor> inputs;
    std::vector<float> expected(5, 0.0f);
    for (int64_t index = 0; index < count; ++index) {
      std::vector<float> values = SampleValues<float>(5, index);
      for (int64_t i = 0; i < 5; ++i) { expected[i] += values[i]; }
      inputs[ArgumentKey("in", index)] = MakeTensor(Shape({5}), values);
    }
    KernelRunner runner(MakeOpConf("add_n", {{"in", count}}), inputs);
    runner.Run();
    ExpectNear(Values<float>(runner.output("out_0")), expected, 1e-6);
  }
}

TEST(ModelUpdateKernels, SgdAndMomentumFollowOneFlowFormulas) {
  std::vector<double> model = {1.0, -2.0};
  std::vector<double> diff = {0.5, 0.25};
  HostTensor learning_rate = MakeTensor<float>(Shape({1}), {0.1f});
  KernelRunner sgd(MakeOpConf("sgd_update", {{"model", 1}, {"model_diff", 1}, {"learning_rate", 1}},
                              {MakeAttr("scale", 2.0), MakeAttr("weight_decay", 0.5)}),
                   {{"model_0", MakeTensor(Shape({2}), model)},
                    {"model_diff_0", MakeTensor(Shape({2}), diff)},
                    {"learning_rate_0", learning_rate}});
  sgd.Run();
  double lr = static_cast<double>(0.1f);
  ExpectNear(Values<double>(sgd.input("model_0")),
             {1.0 - lr * (2 * 0.5 + 0.5 * 1.0), -2.0 - lr * (2 * 0.25 + 0.5 * -2.0)}, 1e-12);

  std::vector<float> momentum = {0.5f, -1.0f};
  KernelRunner momentum_update(
      MakeOpConf("momentum_update",
                 {{"model", 1}, {"model_diff", 1}, {"momentum", 1}, {"learning_rate", 1}},
                 {MakeAttr("beta", 0.9)}),
      {{"model_0", MakeTensor<float>(Shape({2}), {1.0f, -2.0f})},
       {"model_diff_0", MakeTensor<float>(Shape({2}), {0.5f, 0.25f})},
       {"momentum_0", MakeTensor(Shape({2}), momentum)},
       {"learning_rate_0", learning_rate}});
  momentum_update.Run();
  std::vector<float> v = {0.9f * 0.5f - 0.1f * 0.5f, 0.9f * -1.0f - 0.1f * 0.25f};
  ExpectNear(Values<float>(momentum_update.input("momentum_0")), v, 1e-6);
  ExpectNear(Values<float>(momentum_update.input("model_0")), {1.0f + v[0], -2.0f + v[1]}, 1e-6);
}

}  // namespace
}  // namespace test
}  // namespace oneflow
