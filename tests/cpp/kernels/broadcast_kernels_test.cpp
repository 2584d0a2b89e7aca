// bias_add, broadcast_*, reduce_sum, reduce_sum_like and broadcast_like kernels against
// index-by-index reference loops.

#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

// Offset in an operand of shape `operand` (right-aligned, broadcast where 1) of the element at
// flat index `index` of `full`.
int64_t BroadcastOffset(const Shape& full, const Shape& operand, int64_t index) {
  int64_t offset = 0;
  int64_t operand_stride = 1;
  int64_t shift = full.num_axes() - operand.num_axes();
  for (int64_t axis = full.num_axes() - 1; axis >= 0; --axis) {
    int64_t coordinate = index % full.At(axis);
    index /= full.At(axis);
    int64_t operand_axis = axis - shift;
    if (operand_axis < 0) { continue; }
    int64_t dim = operand.At(operand_axis);
    if (dim != 1) { offset += coordinate * operand_stride; }
    operand_stride *= dim;
  }
  return offset;
}

template <typename T>
void CheckBroadcastBinary(const std::string& op_type, const Shape& x_shape, const Shape& y_shape,
                          const Shape& z_shape, T (*reference)(T, T)) {
  SCOPED_TRACE(op_type + " " + x_shape.ToString() + " " + y_shape.ToString());
  std::vector<T> x = SampleValues<T>(x_shape.elem_count(), 3);
  std::vector<T> y = SampleValues<T>(y_shape.elem_count(), 4);
  for (T& value : y) {
    if (value == T(0)) { value = T(3); }
  }
  OperatorConf conf = MakeOpConf(op_type, {{"x", 1}, {"y", 1}});
  KernelRunner runner(conf, {{"x_0", MakeTensor(x_shape, x)}, {"y_0", MakeTensor(y_shape, y)}});
  runner.Run();
  std::vector<T> expected(z_shape.elem_count());
  for (int64_t i = 0; i < z_shape.elem_count(); ++i) {
    expected[i] =
        reference(x[BroadcastOffset(z_shape, x_shape, i)], y[BroadcastOffset(z_shape, y_shape, i)]);
  }
  ExpectNear(Values<T>(runner.output("z_0")), expected, 1e-6);
}

TEST(BroadcastBinaryKernel, MatchesReferenceForManyShapePairs) {
  struct Case {
    Shape x, y, z;
  };
  std::vector<Case> cases = {
      {Shape({3, 4}), Shape({3, 4}), Shape({3, 4})},
      {Shape({3, 4}), Shape({4}), Shape({3, 4})},
      {Shape({3, 1}), Shape({3, 4}), Shape({3, 4})},
      {Shape({2, 1, 4}), Shape({3, 1}), Shape({2, 3, 4})},
      {Shape(), Shape({2, 5}), Shape({2, 5})},
      {Shape({2, 3, 1, 5}), Shape({1, 3, 4, 1}), Shape({2, 3, 4, 5})},
      {Shape({200, 300}), Shape({300}), Shape({200, 300})},  // large: runs in chunks
      // Chunks start at rows inside every outer axis, so each resumes the odometer mid-carry.
      {Shape({8, 9, 1, 600}), Shape({9, 7, 1}), Shape({8, 9, 7, 600})},
  };
  for (const Case& c : cases) {
    CheckBroadcastBinary<float>("broadcast_add", c.x, c.y, c.z,
                                [](float a, float b) { return a + b; });
    CheckBroadcastBinary<double>("broadcast_sub", c.x, c.y, c.z,
                                 [](double a, double b) { return a - b; });
    CheckBroadcastBinary<int32_t>("broadcast_mul", c.x, c.y, c.z,
                                  [](int32_t a, int32_t b) { return a * b; });
    CheckBroadcastBinary<float>("broadcast_div", c.x, c.y, c.z,
                                [](float a, float b) { return a / b; });
  }
  CheckBroadcastBinary<int64_t>("broadcast_add", Shape({2, 3}), Shape({3}), Shape({2, 3}),
                                [](int64_t a, int64_t b) { return a + b; });
}

TEST(BroadcastBinaryKernel, LargeSameShapeWorkIsSplit) {
  Shape shape({300, 300});
  OperatorConf conf = MakeOpConf("broadcast_add", {{"x", 1}, {"y", 1}});
  KernelRunner runner(conf, {{"x_0", MakeTensor(shape, SampleValues<float>(90000, 1))},
                             {"y_0", MakeTensor(shape, SampleValues<float>(90000, 2))}});
  runner.Run();
  EXPECT_EQ(runner.device().parallel_for_calls, 1);
}

TEST(BiasAddKernel, AddsAlongAnyAxis) {
  for (int64_t axis : {0, 1, 2}) {
    Shape a_shape({3, 4, 5});
    int64_t channels = a_shape.At(axis);
    std::vector<double> a = SampleValues<double>(60, 1);
    std::vector<double> b = SampleValues<double>(channels, 2);
    OperatorConf conf = MakeOpConf("bias_add", {{"a", 1}, {"b", 1}}, {MakeAttr("axis", axis)});
    KernelRunner runner(
        conf, {{"a_0", MakeTensor(a_shape, a)}, {"b_0", MakeTensor(Shape({channels}), b)}});
    runner.Run();
    std::vector<double> expected(60);
    for (int64_t i = 0; i < 60; ++i) {
      int64_t channel = (i / a_shape.Count(axis + 1, 3)) % channels;
      expected[i] = a[i] + b[channel];
    }
    ExpectNear(Values<double>(runner.output("out_0")), expected, 1e-12);
  }
}

// Sum of `x` (shape `full`) into shape `kept` (same rank, 1 on summed axes).
template <typename T>
std::vector<T> ReferenceSum(const std::vector<T>& x, const Shape& full, const Shape& kept) {
  std::vector<T> out(kept.elem_count(), T(0));
  for (int64_t i = 0; i < full.elem_count(); ++i) { out[BroadcastOffset(full, kept, i)] += x[i]; }
  return out;
}

TEST(ReduceSumKernel, MatchesReferenceForAxisSets) {
  Shape shape({3, 4, 5});
  std::vector<float> x = SampleValues<float>(60, 5);
  std::vector<std::vector<int64_t>> axis_sets = {{}, {0}, {1}, {2}, {0, 2}, {-1, -2}, {0, 1}};
  for (const std::vector<int64_t>& axes : axis_sets) {
    for (bool keepdims : {false, true}) {
      OperatorConf conf = MakeOpConf("reduce_sum", {{"input_tensor", 1}},
                                     {MakeAttr("axis", axes), MakeAttr("keepdims", keepdims)});
      KernelRunner runner(conf, {{"input_tensor_0", MakeTensor(shape, x)}});
      runner.Run();
      std::vector<int64_t> kept_dims = shape.dims();
      for (int64_t axis : axes) { kept_dims[(axis + 3) % 3] = 1; }
      if (axes.empty()) { kept_dims = {1, 1, 1}; }
      ExpectNear(Values<float>(runner.output("output_tensor_0")),
                 ReferenceSum(x, shape, Shape(kept_dims)), 1e-5);
    }
  }
}

TEST(ReduceSumLikeKernel, InferredAndExplicitAxes) {
  Shape shape({4, 5, 3});
  std::vector<double> x = SampleValues<double>(60, 6);
  OperatorConf inferred = MakeOpConf("reduce_sum_like", {{"x", 1}, {"like", 1}});
  KernelRunner runner(inferred, {{"x_0", MakeTensor(shape, x)},
                                 {"like_0", MakeTensor(Shape({5, 1}), std::vector<double>(5))}});
  runner.Run();
  ExpectNear(Values<double>(runner.output("y_0")), ReferenceSum(x, shape, Shape({1, 5, 1})), 1e-12);
  OperatorConf explicit_axes = MakeOpConf("reduce_sum_like", {{"x", 1}, {"like", 1}},
                                          {MakeAttr<std::vector<int64_t>>("axis", {1})});
  KernelRunner second(explicit_axes,
                      {{"x_0", MakeTensor(shape, x)},
                       {"like_0", MakeTensor(Shape({4, 3}), std::vector<double>(12))}});
  second.Run();
  ExpectNear(Values<double>(second.output("y_0")), ReferenceSum(x, shape, Shape({4, 1, 3})), 1e-12);
}

TEST(BroadcastLikeKernel, RepeatsAlongAxes) {
  Shape like({4, 5, 3});
  std::vector<float> x = SampleValues<float>(5, 7);
  OperatorConf conf = MakeOpConf("broadcast_like", {{"x", 1}, {"like", 1}},
                                 {MakeAttr<std::vector<int64_t>>("broadcast_axes", {0, 2})});
  KernelRunner runner(conf, {{"x_0", MakeTensor(Shape({5}), x)},
                             {"like_0", MakeTensor(like, std::vector<float>(60))}});
  runner.Run();
  std::vector<float> expected(60);
  for (int64_t i = 0; i < 60; ++i) { expected[i] = x[BroadcastOffset(like, Shape({1, 5, 1}), i)]; }
  ExpectNear(Values<float>(runner.output("y_0")), expected, 0.0);
}

}  // namespace
}  // namespace test
}  // namespace oneflow
