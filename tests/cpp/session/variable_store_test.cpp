#include "oneflow/session/variable_store.h"

#include <gtest/gtest.h>

#include <numeric>

#include "tests/cpp/ops/op_test_util.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

// The variable op `name` of shape (5, 2) float32 on `devices`, laid out as `sbp`, initialised
// to `init`, as a traced job stores it (placement and chosen SBP signature filled in).
OperatorConf VariableOp(const std::string& name, const std::string& devices, const std::string& sbp,
                        double init = 0.0) {
  OperatorConf conf = OpConfBuilder("variable", name)
                          .Attr("shape", Shape({5, 2}))
                          .Attr("dtype", kFloat)
                          .Attr("initializer", "constant")
                          .Attr("initializer_args", std::vector<double>{init})
                          .Attr("seed", static_cast<int64_t>(0))
                          .Placement(test::CpuPlacement(devices))
                          .Build();
  (*conf.mutable_sbp_signature()->mutable_argument_to_sbp())["out_0"] = SbpFromString(sbp);
  return conf;
}

HostTensor Iota(const Shape& shape, float start = 0.0f) {
  HostTensor tensor = HostTensor::Allocate(BlobDesc{shape, kFloat});
  float* data = static_cast<float*>(tensor.data);
  std::iota(data, data + shape.elem_count(), start);
  return tensor;
}

std::vector<float> Values(const HostTensor& tensor) {
  const float* data = static_cast<const float*>(tensor.data);
  return std::vector<float>(data, data + tensor.desc.shape.elem_count());
}

TEST(VariableStore, SetValueResplitsIntoTheCurrentLayoutInPlace) {
  VariableStore store;
  store.Declare(VariableOp("w", "0:0-2", "S(0)"));  // rows 2 + 2 + 1
  const void* part0 = store.Part("w", 0).data;
  store.SetValue("w", Iota(Shape({5, 2})));
  EXPECT_EQ(store.Part("w", 0).data, part0);  // the runtime's registers alias the parts
  EXPECT_EQ(Values(store.Part("w", 0)), std::vector<float>({0, 1, 2, 3}));
  EXPECT_EQ(Values(store.Part("w", 1)), std::vector<float>({4, 5, 6, 7}));
  EXPECT_EQ(Values(store.Part("w", 2)), std::vector<float>({8, 9}));
  EXPECT_EQ(Values(store.Value("w")), Values(Iota(Shape({5, 2}))));

  store.Declare(VariableOp("b", "0:0-1", "B"));  // a broadcast variable: a replica per device
  store.SetValue("b", Iota(Shape({5, 2}), 10.0f));
  EXPECT_EQ(Values(store.Part("b", 0)), Values(Iota(Shape({5, 2}), 10.0f)));
  EXPECT_EQ(Values(store.Part("b", 1)), Values(Iota(Shape({5, 2}), 10.0f)));
}

TEST(VariableStore, ValueSurvivesAChangeOfLayout) {
  VariableStore store;
  store.Declare(VariableOp("w", "0:0-1", "S(0)"));
  store.SetValue("w", Iota(Shape({5, 2})));
  store.Declare(VariableOp("w", "0:0-2", "S(1)"));
  EXPECT_EQ(Values(store.Value("w")), Values(Iota(Shape({5, 2}))));
  EXPECT_EQ(Values(store.Part("w", 0)), std::vector<float>({0, 2, 4, 6, 8}));
}

TEST(VariableStore, SetValuesChecksEveryValueBeforeWritingAny) {
  VariableStore store;
  store.Declare(VariableOp("a", "0:0", "B", 1.0));
  store.Declare(VariableOp("b", "0:0-1", "S(0)", 2.0));
  const std::vector<float> a_before = Values(store.Value("a"));
  const std::vector<float> b_before = Values(store.Value("b"));
  test::ExpectError(
      [&] {
        store.SetValues({{"a", Iota(Shape({5, 2}))}, {"b", Iota(Shape({2, 5}))}});
      },
      ErrorKind::kValue, {"variable 'b'", "(5, 2)", "(2, 5)", "shape must match"});
  HostTensor doubles = HostTensor::Allocate(BlobDesc{Shape({5, 2}), kDouble});
  test::ExpectError(
      [&] {
        store.SetValues({{"a", Iota(Shape({5, 2}))}, {"b", doubles}});
      },
      ErrorKind::kType, {"variable 'b'", "float64", "dtype must match"});
  test::ExpectError(
      [&] {
        store.SetValues({{"a", Iota(Shape({5, 2}))}, {"c", Iota(Shape({5, 2}))}});
      },
      ErrorKind::kValue, {"no variable named 'c'"});
  EXPECT_EQ(Values(store.Value("a")), a_before);
  EXPECT_EQ(Values(store.Value("b")), b_before);
  store.SetValues({{"a", Iota(Shape({5, 2}))}, {"b", Iota(Shape({5, 2}), 3.0f)}});
  EXPECT_EQ(Values(store.Value("a")), Values(Iota(Shape({5, 2}))));
  EXPECT_EQ(Values(store.Value("b")), Values(Iota(Shape({5, 2}), 3.0f)));
  EXPECT_EQ(store.Desc("b").shape, Shape({5, 2}));
}

}  // namespace
}  // namespace oneflow
