#include "oneflow/framework/shape_functions.h"
#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

// out[index] = in[index permuted back], element by element.
template <typename T>
std::vector<T> NaiveTranspose(const std::vector<T>& in, const Shape& shape,
                              const std::vector<int64_t>& perm) {
  int64_t num_axes = shape.num_axes();
  std::vector<int64_t> out_dims(num_axes);
  for (int64_t axis = 0; axis < num_axes; ++axis) { out_dims[axis] = shape.At(perm[axis]); }
  std::vector<T> out(in.size());
  std::vector<int64_t> out_index(num_axes, 0);
  for (size_t position = 0; position < out.size(); ++position) {
    int64_t rest = static_cast<int64_t>(position);
    for (int64_t axis = num_axes - 1; axis >= 0; --axis) {
      out_index[axis] = rest % out_dims[axis];
      rest /= out_dims[axis];
    }
    std::vector<int64_t> in_index(num_axes);
    for (int64_t axis = 0; axis < num_axes; ++axis) { in_index[perm[axis]] = out_index[axis]; }
    int64_t in_position = 0;
    for (int64_t axis = 0; axis < num_axes; ++axis) {
      in_position = in_position * shape.At(axis) + in_index[axis];
    }
    out[position] = in[in_position];
  }
  return out;
}

template <typename T>
void CheckTranspose(const Shape& shape, const std::vector<int64_t>& perm) {
  SCOPED_TRACE(testing::Message() << "shape " << shape.ToString() << " perm " << AxesToString(perm)
                                  << " dtype size " << sizeof(T));
  // Position-dependent values make a misplaced element visible, even for int8.
  std::vector<T> in(shape.elem_count());
  for (size_t i = 0; i < in.size(); ++i) { in[i] = static_cast<T>(i % 101); }
  KernelRunner runner(MakeOpConf("transpose", {{"in", 1}}, {MakeAttr("perm", perm)}),
                      {{"in_0", MakeTensor(shape, in)}});
  runner.Run();
  std::vector<T> expected = NaiveTranspose(in, shape, perm);
  std::vector<T> actual = Values<T>(runner.output("out_0"));
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) { ASSERT_EQ(actual[i], expected[i]) << "at " << i; }
}

struct TransposeCase {
  Shape shape;
  std::vector<int64_t> perm;
};

// Copies of rows (last axis kept), tiled 2-D transposes with and without batch axes, size-1
// axes, merged axes, identity, whole tiles of 8x8 register blocks, and sizes that are not
// multiples of the tile or of the block.
std::vector<TransposeCase> Cases() {
  return {
      {Shape({7}), {0}},
      {Shape({3, 5}), {1, 0}},
      {Shape({70, 45}), {1, 0}},
      {Shape({96, 64}), {1, 0}},
      {Shape({3, 40, 17}), {0, 2, 1}},
      {Shape({2, 3, 4}), {0, 2, 1}},
      {Shape({2, 3, 4}), {2, 0, 1}},
      {Shape({2, 3, 4}), {1, 0, 2}},
      {Shape({2, 3, 4}), {2, 1, 0}},
      {Shape({2, 3, 4}), {0, 1, 2}},
      {Shape({2, 1, 3, 4}), {2, 3, 0, 1}},
      {Shape({3, 1, 1, 5}), {3, 2, 0, 1}},
      {Shape({2, 3, 4, 5}), {0, 2, 1, 3}},
      {Shape({2, 3, 4, 5}), {3, 1, 2, 0}},
      {Shape({2, 3, 4, 5}), {1, 3, 0, 2}},
      {Shape({5, 33, 40}), {0, 2, 1}},
      {Shape({33, 5, 40}), {2, 1, 0}},
      {Shape({2, 3, 2, 3, 2}), {4, 2, 0, 3, 1}},
  };
}

TEST(TransposeKernel, MatchesNaiveLoopForEveryDtypeSize) {
  for (const TransposeCase& c : Cases()) {
    CheckTranspose<float>(c.shape, c.perm);
    CheckTranspose<double>(c.shape, c.perm);
    CheckTranspose<int8_t>(c.shape, c.perm);
    CheckTranspose<int32_t>(c.shape, c.perm);
    CheckTranspose<int64_t>(c.shape, c.perm);
    CheckTranspose<uint8_t>(c.shape, c.perm);
  }
}

TEST(TransposeKernel, LargeInputsAreSplitOverThreads) {
  std::vector<int64_t> perm_keep_last = {1, 0, 2};
  std::vector<int64_t> perm_swap = {1, 0};
  Shape rows({300, 256, 3});
  Shape matrix({700, 300});
  CheckTranspose<float>(rows, perm_keep_last);
  CheckTranspose<double>(matrix, perm_swap);
  KernelRunner runner(MakeOpConf("transpose", {{"in", 1}}, {MakeAttr("perm", perm_swap)}),
                      {{"in_0", MakeTensor(matrix, SampleValues<float>(matrix.elem_count()))}});
  runner.Run();
  EXPECT_EQ(runner.device().parallel_for_calls, 1);
}

TEST(TransposeKernel, EmptyInputIsFine) {
  std::vector<int64_t> perm = {1, 0};
  KernelRunner runner(MakeOpConf("transpose", {{"in", 1}}, {MakeAttr("perm", perm)}),
                      {{"in_0", MakeTensor<float>(Shape({0, 3}), {})}});
  runner.Run();
  EXPECT_EQ(runner.output("out_0").desc.shape, Shape({3, 0}));
}

}  // namespace
}  // namespace test
}  // namespace oneflow
