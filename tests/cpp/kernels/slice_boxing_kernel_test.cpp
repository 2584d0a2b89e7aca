// slice_boxing's kernels: the host kernel copies float16 boxes (bytes) but refuses to add them,
// and SwitchDataType has no host type for float16; the GPU kernel (the local conversions of GPU
// blobs: compiler/boxing/reshard.h) against the host kernel where a GPU is present.

#include <gtest/gtest.h>

#include <cstring>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "tests/cpp/kernels/cuda_kernel_test_util.h"
#include "tests/cpp/kernels/kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

// slice_boxing of a `logical` blob: out = box `out_slice` from inputs holding `in_slices`.
OperatorConf SliceBoxingConf(const Shape& logical, DataType dtype,
                             const std::vector<std::vector<int64_t>>& in_slices,
                             const std::vector<int64_t>& out_slice, bool sum, bool zero_fill) {
  std::vector<int64_t> flat;
  for (const auto& slice : in_slices) { flat.insert(flat.end(), slice.begin(), slice.end()); }
  return MakeOpConf(
      "slice_boxing", {{"in", static_cast<int64_t>(in_slices.size())}},
      {MakeAttr("logical_shape", logical), MakeAttr("dtype", dtype), MakeAttr("in_slices", flat),
       MakeAttr("out_slice", out_slice), MakeAttr("sum", sum), MakeAttr("zero_fill", zero_fill)});
}

TEST(SliceBoxingKernel, CopiesFloat16BoxesOnTheHost) {
  // B -> S(0) of a (4, 3) float16 blob: rows 2 and 3.
  HostTensor in = HostTensor::Allocate(BlobDesc{Shape({4, 3}), kFloat16});
  auto* values = static_cast<uint16_t*>(in.data);
  for (int i = 0; i < 12; ++i) { values[i] = static_cast<uint16_t>(0x3c00 + i); }
  KernelRunner runner(
      SliceBoxingConf(Shape({4, 3}), kFloat16, {{0, 0, 4, 3}}, {2, 0, 2, 3}, false, false),
      {{"in_0", in}});
  runner.Run();
  const HostTensor& out = runner.output("out_0");
  ASSERT_EQ(out.desc.shape, Shape({2, 3}));
  EXPECT_EQ(std::memcmp(out.data, values + 6, 6 * sizeof(uint16_t)), 0);
}

TEST(SliceBoxingKernel, RefusesToAddFloat16OnTheHost) {
  HostTensor in = HostTensor::Allocate(BlobDesc{Shape({2, 2}), kFloat16});
  try {
    KernelRunner runner(SliceBoxingConf(Shape({2, 2}), kFloat16, {{0, 0, 2, 2}, {0, 0, 2, 2}},
                                        {0, 0, 2, 2}, true, false),
                        {{"in_0", in}, {"in_1", in}});
    FAIL() << "a float16 sum was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("float16"), std::string::npos) << error.what();
  }
}

TEST(SliceBoxingKernel, SwitchDataTypeHasNoHostTypeForFloat16) {
  const auto size_of = [](DataType data_type) {
    return SwitchDataType(data_type, []<typename T>() { return sizeof(T); });
  };
  EXPECT_EQ(size_of(kDouble), 8u);
  EXPECT_THROW(size_of(kFloat16), Error);
}

#ifdef ONEFLOW_WITH_CUDA

TEST(SliceBoxingKernel, GpuLocalConversionsMatchTheHost) {
  SKIP_WITHOUT_GPU();
  const Shape logical({5, 4});
  // B -> S(1) (part 1 of 2), B -> P (device 0: the value; device 1: zeros), S(0) -> P (rows 3..5
  // among zeros).
  CompareWithCpu(SliceBoxingConf(logical, kFloat, {{0, 0, 5, 4}}, {0, 2, 5, 2}, false, false),
                 {{"in_0", Random<float>(logical, 1)}});
  CompareWithCpu(SliceBoxingConf(logical, kInt64, {{0, 0, 5, 4}}, {0, 0, 5, 4}, false, false),
                 {{"in_0", Random<int64_t>(logical, 2, -50, 50)}});
  CompareWithCpu(SliceBoxingConf(logical, kDouble, {}, {0, 0, 5, 4}, false, true), {});
  CompareWithCpu(SliceBoxingConf(logical, kFloat, {{3, 0, 2, 4}}, {0, 0, 5, 4}, false, true),
                 {{"in_0", Random<float>(Shape({2, 4}), 3)}});
  // A 0-d blob, B -> P on device 0.
  CompareWithCpu(SliceBoxingConf(Shape({}), kFloat, {{}}, {}, false, true),
                 {{"in_0", Random<float>(Shape({}), 4)}});
}

#endif  // ONEFLOW_WITH_CUDA

}  // namespace
}  // namespace test
}  // namespace oneflow
