// float16 CPU kernels derived from float32 ones (half_via_float_kernel.h): the registry hands
// them out where no float16 CPU kernel is registered, they compute like the float32 kernel on
// the float16 values and round once, write back outputs and mutable inputs only, and leave
// float32 blobs of a mixed-precision op (batch norm statistics) in place.

#include "oneflow/framework/kernel_registry.h"
#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

HostTensor HalfTensor(const Shape& shape, const std::vector<float>& values) {
  HostTensor tensor = HostTensor::Allocate(BlobDesc{shape, kFloat16});
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.elem_count());
  for (size_t i = 0; i < values.size(); ++i) {
    static_cast<_Float16*>(tensor.data)[i] = static_cast<_Float16>(values[i]);
  }
  return tensor;
}

std::vector<float> HalfValues(const HostTensor& tensor) {
  EXPECT_EQ(tensor.desc.data_type, kFloat16);
  std::vector<float> values(tensor.desc.shape.elem_count());
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(static_cast<const _Float16*>(tensor.data)[i]);
  }
  return values;
}

// The values rounded to float16 and back.
std::vector<float> Rounded(const std::vector<float>& values) {
  std::vector<float> rounded(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    rounded[i] = static_cast<float>(static_cast<_Float16>(values[i]));
  }
  return rounded;
}

TEST(HalfViaFloatKernel, RegistryDerivesCpuFloat16KernelsFromFloat32Ones) {
  const KernelRegistry& registry = KernelRegistry::Instance();
  EXPECT_TRUE(registry.Has("relu", "cpu", kFloat16));
  EXPECT_TRUE(registry.Has("matmul", "cpu", kFloat16));
  EXPECT_TRUE(registry.Has("cast", "cpu", kFloat16));  // its own kernel
  // Not for variables (the kernel's output is the state), nor for dtypes other than float16.
  EXPECT_FALSE(registry.Has("variable", "cpu", kFloat16));
  EXPECT_FALSE(registry.Has("matmul", "cpu", kInt8));
  EXPECT_THROW(registry.Get("v", "variable", "cpu", kFloat16), Error);
}

TEST(HalfViaFloatKernel, ComputesInFloat32AndRoundsOnce) {
  const Shape shape({3, 4});
  const std::vector<float> a = SampleValues<float>(12, 1), b = SampleValues<float>(12, 2);
  const OperatorConf conf = MakeOpConf("broadcast_mul", {{"x", 1}, {"y", 1}});
  KernelRunner half(conf, {{"x_0", HalfTensor(shape, a)}, {"y_0", HalfTensor(shape, b)}});
  half.Run();
  const std::vector<float> got = HalfValues(half.output("z_0"));
  const std::vector<float> ra = Rounded(a), rb = Rounded(b);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], static_cast<float>(static_cast<_Float16>(ra[i] * rb[i]))) << i;
  }
}

TEST(HalfViaFloatKernel, WritesBackMutableInputs) {
  const Shape shape({5});
  const std::vector<float> ref = SampleValues<float>(5, 3), value = SampleValues<float>(5, 4);
  const OperatorConf conf = MakeOpConf("assign", {{"ref", 1}, {"value", 1}});
  KernelRunner runner(conf, {{"ref_0", HalfTensor(shape, ref)}, {"value_0", HalfTensor(shape, value)}});
  runner.Run();
  EXPECT_EQ(HalfValues(runner.input("ref_0")), Rounded(value));
  EXPECT_EQ(HalfValues(runner.input("value_0")), Rounded(value));
}

// normalization_train with float16 x and float32 statistics and moving statistics: y as the
// float32 kernel computes it from the rounded x, and the float32 moving statistics updated in
// their own memory.
TEST(HalfViaFloatKernel, MixedPrecisionBatchNormUpdatesFloat32StatisticsInPlace) {
  const Shape x_shape({4, 3, 2}), channels({3});
  const std::vector<float> x = SampleValues<float>(24, 5);
  auto inputs = [&](bool half) {
    std::map<std::string, HostTensor> tensors = {
        {"x_0", half ? HalfTensor(x_shape, x) : MakeTensor(x_shape, Rounded(x))},
        {"mean_0", MakeTensor(channels, std::vector<float>{0.1f, -0.2f, 0.05f})},
        {"variance_0", MakeTensor(channels, std::vector<float>{0.5f, 0.3f, 0.4f})},
        {"gamma_0", MakeTensor(channels, std::vector<float>{1.5f, 0.5f, -1.0f})},
        {"beta_0", MakeTensor(channels, std::vector<float>{0.0f, 0.25f, -0.5f})},
        {"moving_mean_0", MakeTensor(channels, std::vector<float>{1.0f, 2.0f, 3.0f})},
        {"moving_variance_0", MakeTensor(channels, std::vector<float>{1.0f, 1.0f, 1.0f})}};
    return tensors;
  };
  const OperatorConf conf = MakeOpConf(
      "normalization_train",
      {{"x", 1}, {"mean", 1}, {"variance", 1}, {"gamma", 1}, {"beta", 1}, {"moving_mean", 1},
       {"moving_variance", 1}},
      {MakeAttr<int64_t>("axis", 1), MakeAttr<double>("momentum", 0.9)});
  KernelRunner half(conf, inputs(true));
  KernelRunner reference(conf, inputs(false));
  half.Run();
  reference.Run();
  const std::vector<float> expected = Values<float>(reference.output("y_0"));
  const std::vector<float> got = HalfValues(half.output("y_0"));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], static_cast<float>(static_cast<_Float16>(expected[i]))) << i;
  }
  for (const char* key : {"moving_mean_0", "moving_variance_0"}) {
    EXPECT_EQ(half.input(key).desc.data_type, kFloat);
    EXPECT_EQ(Values<float>(half.input(key)), Values<float>(reference.input(key))) << key;
  }
  EXPECT_NE(Values<float>(half.input("moving_mean_0"))[0], 1.0f);  // it was updated
}

}  // namespace
}  // namespace test
}  // namespace oneflow
