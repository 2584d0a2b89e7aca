// GPU argmax, argmin, sort, argsort, top_k, in_top_k, range and assign against the CPU kernels
// (see cuda_kernel_test_util.h). Inputs are full of ties, NaNs of both signs and several
// payloads, infinities, denormals and zeros of both signs, so that the index outputs check the
// CPU's tie and NaN rules; every blob after the run (outputs, and inputs) must be bit for bit
// the CPU's, sorted values and range values included. CUDA builds only; every test skips
// without a GPU.

#ifdef ONEFLOW_WITH_CUDA

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/cpp/kernels/cuda_kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

const Tolerance kExact{0.0, 0.0};

// Runs `conf` on the CPU and on the GPU with the same inputs; every blob after the run must
// hold the same bytes (ExpectClose cannot compare infinities, nor tell -0.0 or NaN payloads).
void CompareBitsWithCpu(const OperatorConf& conf, const std::map<std::string, HostTensor>& inputs) {
  SCOPED_TRACE(conf.op_type());
  const CpuAndGpuResults results = RunOnCpuAndGpu(conf, inputs);
  for (const auto& entry : results.gpu) {
    SCOPED_TRACE("blob " + entry.first);
    const HostTensor& actual = entry.second;
    const HostTensor& expected = results.cpu.at(entry.first);
    ASSERT_EQ(actual.desc.shape, expected.desc.shape);
    ASSERT_EQ(actual.desc.data_type, expected.desc.data_type);
    const int64_t width = SizeOf(expected.desc.data_type);
    int64_t failures = 0;
    for (int64_t i = 0; i < expected.desc.shape.elem_count() && failures < 10; ++i) {
      if (std::memcmp(static_cast<const char*>(actual.data) + i * width,
                      static_cast<const char*>(expected.data) + i * width, width) != 0) {
        ADD_FAILURE() << "element " << i << ": gpu " << ValueAt(actual, i) << ", cpu "
                      << ValueAt(expected, i);
        ++failures;
      }
    }
  }
}

// Small integers in [-3, 3) (ties everywhere); floating ones also get -0.0, NaNs (quiet, negative,
// with a payload), infinities and denormals here and there.
template <typename T>
HostTensor TieHeavy(const Shape& shape, int64_t seed, bool specials = true) {
  HostTensor tensor = Random<T>(shape, seed, -3.0, 3.0);
  T* data = static_cast<T*>(tensor.data);
  for (int64_t i = 0; i < shape.elem_count(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      data[i] = std::floor(data[i]);
      if (!specials) { continue; }
      const int64_t h = (i * 7919 + seed * 104729) % 97;
      if (h == 0) {
        data[i] = std::numeric_limits<T>::quiet_NaN();
      } else if (h == 1) {
        data[i] = -std::numeric_limits<T>::quiet_NaN();
      } else if (h == 2) {
        // A NaN with another payload.
        if constexpr (std::is_same_v<T, float>) {
          const uint32_t bits = 0x7FC01234u;
          std::memcpy(&data[i], &bits, sizeof(bits));
        } else {
          const uint64_t bits = 0xFFF8000000001234ull;
          std::memcpy(&data[i], &bits, sizeof(bits));
        }
      } else if (h == 3) {
        data[i] = std::numeric_limits<T>::infinity();
      } else if (h == 4) {
        data[i] = -std::numeric_limits<T>::infinity();
      } else if (h < 15 && data[i] == T(0)) {
        data[i] = -T(0);
      } else if (h == 20) {
        data[i] = std::numeric_limits<T>::denorm_min();
      } else if (h == 21) {
        data[i] = -std::numeric_limits<T>::denorm_min();
      }
    }
  }
  return tensor;
}

// Extreme integers too: the smallest and largest values of the type.
template <typename T>
HostTensor WithExtremes(const Shape& shape, int64_t seed) {
  HostTensor tensor = TieHeavy<T>(shape, seed);
  T* data = static_cast<T*>(tensor.data);
  for (int64_t i = 0; i < shape.elem_count(); i += 5) {
    data[i] = i % 10 == 0 ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  return tensor;
}

const std::vector<Shape>& AxisShapes() {
  static const std::vector<Shape> shapes = {
      Shape({1}),         Shape({7}),        Shape({3, 5}),       Shape({1001}),
      Shape({4, 257, 3}), Shape({2, 1, 33}), Shape({5, 40, 6, 2})};
  return shapes;
}

// Runs `check(input)` over every sortable dtype with tie-heavy inputs, plus extremes.
template <typename Check>
void ForEachSortableInput(const Shape& shape, int64_t seed, const Check& check) {
  check(TieHeavy<float>(shape, seed));
  check(TieHeavy<double>(shape, seed + 1));
  check(TieHeavy<int8_t>(shape, seed + 2));
  check(TieHeavy<int32_t>(shape, seed + 3));
  check(TieHeavy<int64_t>(shape, seed + 4));
  check(WithExtremes<float>(shape, seed + 5));
  check(WithExtremes<int8_t>(shape, seed + 6));
  check(WithExtremes<int32_t>(shape, seed + 7));
  check(WithExtremes<int64_t>(shape, seed + 8));
  // Distinct values: an order without ties.
  check(Random<float>(shape, seed + 9));
}

TEST(CudaSortKernels, ArgMaxArgMin) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : AxisShapes()) {
    for (int64_t axis = -1; axis < shape.num_axes(); ++axis) {
      for (const char* op_type : {"argmax", "argmin"}) {
        const OperatorConf conf =
            MakeOpConf(op_type, {{"in", 1}}, {MakeAttr<int64_t>("axis", axis)});
        ForEachSortableInput(shape, 10 * (axis + 1) + 20, [&](const HostTensor& in) {
          CompareBitsWithCpu(conf, {{"in_0", in}});
        });
      }
    }
  }
}

TEST(CudaSortKernels, ArgMaxArgMinLongAndManyRows) {
  SKIP_WITHOUT_GPU();
  for (const char* op_type : {"argmax", "argmin"}) {
    for (int64_t axis : {0, 1}) {
      const OperatorConf conf = MakeOpConf(op_type, {{"in", 1}}, {MakeAttr<int64_t>("axis", axis)});
      for (const Shape& shape : {Shape({1, 100003}), Shape({3, 100003}), Shape({300001, 3})}) {
        CompareBitsWithCpu(conf, {{"in_0", TieHeavy<float>(shape, 1)}});
        CompareBitsWithCpu(conf, {{"in_0", TieHeavy<float>(shape, 2, /*specials=*/false)}});
        CompareBitsWithCpu(conf, {{"in_0", Random<double>(shape, 3)}});
        CompareBitsWithCpu(conf, {{"in_0", TieHeavy<int64_t>(shape, 4)}});
      }
    }
  }
  // All NaN, all equal, all -inf.
  for (float fill :
       {std::numeric_limits<float>::quiet_NaN(), 2.0f, -std::numeric_limits<float>::infinity()}) {
    for (const char* op_type : {"argmax", "argmin"}) {
      const OperatorConf conf = MakeOpConf(op_type, {{"in", 1}});
      CompareBitsWithCpu(conf,
                         {{"in_0", MakeTensor(Shape({3, 1000}), std::vector<float>(3000, fill))}});
    }
  }
}

TEST(CudaSortKernels, ArgMaxArgMinEmpty) {
  SKIP_WITHOUT_GPU();
  for (const char* op_type : {"argmax", "argmin"}) {
    CompareBitsWithCpu(MakeOpConf(op_type, {{"in", 1}}, {MakeAttr<int64_t>("axis", 1)}),
                       {{"in_0", Random<float>(Shape({0, 5}), 1)}});
  }
}

TEST(CudaSortKernels, SortAndArgSort) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : AxisShapes()) {
    for (int64_t axis = -1; axis < shape.num_axes(); ++axis) {
      for (const char* op_type : {"sort", "argsort"}) {
        for (const char* direction : {"ASCENDING", "DESCENDING"}) {
          const OperatorConf conf = MakeOpConf(
              op_type, {{"in", 1}},
              {MakeAttr<int64_t>("axis", axis), MakeAttr("direction", std::string(direction))});
          ForEachSortableInput(shape, 10 * (axis + 1) + 30, [&](const HostTensor& in) {
            CompareBitsWithCpu(conf, {{"in_0", in}});
          });
        }
      }
    }
  }
}

TEST(CudaSortKernels, SortLongAndManyRows) {
  SKIP_WITHOUT_GPU();
  for (const char* op_type : {"sort", "argsort"}) {
    for (const char* direction : {"ASCENDING", "DESCENDING"}) {
      for (int64_t axis : {0, 1}) {
        const OperatorConf conf = MakeOpConf(
            op_type, {{"in", 1}},
            {MakeAttr<int64_t>("axis", axis), MakeAttr("direction", std::string(direction))});
        for (const Shape& shape : {Shape({1, 100003}), Shape({300001, 3})}) {
          CompareBitsWithCpu(conf, {{"in_0", TieHeavy<float>(shape, 1)}});
          CompareBitsWithCpu(conf, {{"in_0", TieHeavy<int32_t>(shape, 2)}});
          CompareBitsWithCpu(conf, {{"in_0", Random<double>(shape, 3)}});
        }
      }
    }
  }
}

// More rows than one batch of the GPU kernel holds (about 2^24 elements): the rows go in
// several batches, the last one shorter, along a strided axis.
TEST(CudaSortKernels, ArgSortInBatches) {
  SKIP_WITHOUT_GPU();
  const OperatorConf conf = MakeOpConf("argsort", {{"in", 1}}, {MakeAttr<int64_t>("axis", 1)});
  CompareBitsWithCpu(conf, {{"in_0", TieHeavy<int32_t>(Shape({1, 6000000, 3}), 1)}});
  const OperatorConf top_k =
      MakeOpConf("top_k", {{"in", 1}}, {MakeAttr<int64_t>("axis", 0), MakeAttr<int64_t>("k", 5)});
  CompareBitsWithCpu(top_k, {{"in_0", TieHeavy<float>(Shape({9000000, 2}), 2)}});
}

TEST(CudaSortKernels, SortEmpty) {
  SKIP_WITHOUT_GPU();
  for (int64_t axis : {0, 1, 2}) {
    for (const char* op_type : {"sort", "argsort"}) {
      CompareBitsWithCpu(MakeOpConf(op_type, {{"in", 1}}, {MakeAttr<int64_t>("axis", axis)}),
                         {{"in_0", Random<float>(Shape({2, 0, 3}), 1)}});
    }
  }
  CompareBitsWithCpu(
      MakeOpConf("top_k", {{"in", 1}}, {MakeAttr<int64_t>("axis", 1), MakeAttr<int64_t>("k", 2)}),
      {{"in_0", Random<float>(Shape({0, 5}), 1)}});
}

TEST(CudaSortKernels, TopK) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : AxisShapes()) {
    for (int64_t axis = -1; axis < shape.num_axes(); ++axis) {
      const int64_t size = shape.At(axis < 0 ? shape.num_axes() - 1 : axis);
      for (int64_t k : {int64_t{1}, int64_t{3}, size}) {
        if (k > size) { continue; }
        const OperatorConf conf = MakeOpConf(
            "top_k", {{"in", 1}}, {MakeAttr<int64_t>("axis", axis), MakeAttr<int64_t>("k", k)});
        ForEachSortableInput(shape, 10 * (axis + 1) + k, [&](const HostTensor& in) {
          CompareBitsWithCpu(conf, {{"in_0", in}});
        });
      }
    }
  }
  const OperatorConf long_rows = MakeOpConf("top_k", {{"in", 1}}, {MakeAttr<int64_t>("k", 10)});
  CompareBitsWithCpu(long_rows, {{"in_0", TieHeavy<float>(Shape({2, 100003}), 5)}});
  CompareBitsWithCpu(long_rows, {{"in_0", TieHeavy<int64_t>(Shape({100000, 12}), 6)}});
}

// Predictions in [-3, 3) floored (ties with the target), optionally with a non-finite value
// in some rows; targets in [-1, classes] (both ends out of range).
template <typename T, typename Target>
void CompareInTopK(int64_t rows, int64_t classes, int64_t k, bool non_finite, int64_t seed) {
  const OperatorConf conf =
      MakeOpConf("in_top_k", {{"targets", 1}, {"predictions", 1}}, {MakeAttr<int64_t>("k", k)});
  HostTensor predictions = TieHeavy<T>(Shape({rows, classes}), seed, /*specials=*/false);
  if (non_finite) {
    T* data = static_cast<T*>(predictions.data);
    for (int64_t row = 0; row < rows; row += 3) {
      const T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                            -std::numeric_limits<T>::infinity()};
      if (classes > 0) { data[row * classes + (row * 7) % classes] = specials[(row / 3) % 3]; }
    }
  }
  CompareBitsWithCpu(conf, {{"targets_0", Random<Target>(Shape({rows}), seed + 1, -1.0,
                                                         static_cast<double>(classes) + 1.0)},
                            {"predictions_0", predictions}});
}

TEST(CudaSortKernels, InTopK) {
  SKIP_WITHOUT_GPU();
  for (int64_t k : {0, 1, 2, 5, 100}) {
    for (bool non_finite : {false, true}) {
      CompareInTopK<float, int32_t>(37, 10, k, non_finite, k + 1);
      CompareInTopK<float, int64_t>(37, 10, k, non_finite, k + 2);
      CompareInTopK<double, int32_t>(5, 1000, k, non_finite, k + 3);
      CompareInTopK<double, int64_t>(300, 1, k, non_finite, k + 4);
    }
  }
  CompareInTopK<float, int32_t>(100000, 7, 3, true, 9);
  CompareInTopK<float, int64_t>(4, 100003, 20000, true, 10);
  CompareInTopK<float, int32_t>(6, 0, 1, false, 11);  // no classes: every target is out
  CompareInTopK<float, int32_t>(0, 5, 1, false, 12);
}

TEST(CudaSortKernels, Range) {
  SKIP_WITHOUT_GPU();
  struct IntegerCase {
    DataType dtype;
    int64_t start, limit, delta;
  };
  for (const IntegerCase& c :
       std::vector<IntegerCase>{{kInt64, -5, 100, 3},
                                {kInt64, 1, 3000001, 1},
                                {kInt32, 10, -7, -2},
                                {kInt8, 0, 300, 1},  // wraps, as the CPU
                                {kUInt8, 0, 300, 1},
                                {kInt64, int64_t{1} << 40, (int64_t{1} << 40) + 999, 7}}) {
    CompareBitsWithCpu(
        MakeOpConf("range", {},
                   {MakeAttr("dtype", c.dtype), MakeAttr<int64_t>("integer_start", c.start),
                    MakeAttr<int64_t>("integer_limit", c.limit),
                    MakeAttr<int64_t>("integer_delta", c.delta)}),
        {});
  }
  struct FloatingCase {
    DataType dtype;
    double start, limit, delta;
  };
  for (const FloatingCase& c : std::vector<FloatingCase>{{kFloat, 0.1, 100.3, 0.7},
                                                         {kFloat, 5.0, -5.0, -0.013},
                                                         {kDouble, -1e3, 1e3, 0.0037},
                                                         {kDouble, 1.0 / 3.0, 1e6, 1.0 / 7.0}}) {
    CompareBitsWithCpu(MakeOpConf("range", {},
                                  {MakeAttr("dtype", c.dtype), MakeAttr("start", c.start),
                                   MakeAttr("limit", c.limit), MakeAttr("delta", c.delta)}),
                       {});
  }
}

TEST(CudaSortKernels, Assign) {
  SKIP_WITHOUT_GPU();
  const OperatorConf conf = MakeOpConf("assign", {{"ref", 1}, {"value", 1}});
  const Shape shape({33, 17});
  CompareBitsWithCpu(conf,
                     {{"ref_0", Random<float>(shape, 1)}, {"value_0", Random<float>(shape, 2)}});
  CompareBitsWithCpu(conf,
                     {{"ref_0", Random<double>(shape, 3)}, {"value_0", Random<double>(shape, 4)}});
  CompareBitsWithCpu(conf, {{"ref_0", Random<int8_t>(shape, 5, -100, 100)},
                            {"value_0", Random<int8_t>(shape, 6, -100, 100)}});
  CompareBitsWithCpu(conf, {{"ref_0", Random<int32_t>(shape, 7, -100, 100)},
                            {"value_0", Random<int32_t>(shape, 8, -100, 100)}});
  CompareBitsWithCpu(conf, {{"ref_0", Random<int64_t>(shape, 9, -100, 100)},
                            {"value_0", Random<int64_t>(shape, 10, -100, 100)}});
  CompareBitsWithCpu(conf, {{"ref_0", Random<uint8_t>(shape, 11, 0, 250)},
                            {"value_0", Random<uint8_t>(shape, 12, 0, 250)}});
  CompareBitsWithCpu(conf, {{"ref_0", Random<float>(Shape({0, 3}), 13)},
                            {"value_0", Random<float>(Shape({0, 3}), 14)}});
  CompareHalfWithCpu(
      conf, {{"ref_0", Random<float>(shape, 15)}, {"value_0", Random<float>(shape, 16)}}, kExact);
}

}  // namespace
}  // namespace test
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
