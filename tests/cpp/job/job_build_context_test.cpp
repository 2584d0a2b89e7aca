#include "oneflow/job/job_build_context.h"
#include "oneflow/sbp/tensor_slice.h"

#include "oneflow/framework/kernel_registry.h"

#include <gtest/gtest.h>

#include <functional>

#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

std::string ErrorText(const std::function<void()>& fn, ErrorKind* kind) {
  try {
    fn();
  } catch (const Error& error) {
    *kind = error.kind();
    return error.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

TEST(JobBuildContext, InfersOutputsAtOnce) {
  JobBuildContext job(test::MakeJobConf("job", false));
  std::string a = test::AddInput(job, "a", Shape({2, 3}));
  std::string b = test::AddInput(job, "b", Shape({3, 5}));
  const OperatorConf& op = job.AddOp(OpConfBuilder("matmul", "mm").Input("a", a).Input("b", b).Build());
  EXPECT_EQ(OutputLbn(op, "out"), "mm/out_0");
  EXPECT_EQ(job.LogicalBlobDesc("mm/out_0").shape, Shape({2, 5}));
  EXPECT_EQ(op.attr().at("transpose_a").bool_value(), false);  // default filled
}

TEST(JobBuildContext, MatmulMismatchNamesOpShapesAndRule) {
  JobBuildContext job(test::MakeJobConf("job", false));
  std::string a = test::AddInput(job, "a", Shape({2, 3}));
  std::string b = test::AddInput(job, "b", Shape({4, 5}));
  ErrorKind kind;
  std::string text = ErrorText(
      [&] { job.AddOp(OpConfBuilder("matmul", "bad_mm").Input("a", a).Input("b", b).Build()); },
      &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(text.find("bad_mm"), std::string::npos) << text;
  EXPECT_NE(text.find("(2, 3)"), std::string::npos) << text;
  EXPECT_NE(text.find("(4, 5)"), std::string::npos) << text;
  EXPECT_FALSE(job.HasOp("bad_mm"));
}

TEST(JobBuildContext, RejectsUnknownInputsAttrsAndDuplicateNames) {
  JobBuildContext job(test::MakeJobConf("job", false));
  std::string a = test::AddInput(job, "a", Shape({2}));
  ErrorKind kind;
  EXPECT_NE(ErrorText([&] { job.AddOp(OpConfBuilder("relu", "r").Input("x", "nope/out_0").Build()); },
                      &kind)
                .find("nope/out_0"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] {
              job.AddOp(OpConfBuilder("relu", "r").Input("x", a).Attr("alpha", 1.0).Build());
            },
                      &kind)
                .find("no attribute 'alpha'"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { test::AddInput(job, "a", Shape({2})); }, &kind).find("already used"),
            std::string::npos);
  EXPECT_EQ(ErrorText([&] { job.AddOp(OpConfBuilder("frobnicate", "f").Build()); }, &kind).find(
                "frobnicate") != std::string::npos,
            true);
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);
}

TEST(JobBuildContext, ShapesWhoseByteSizeOverflowsAreRejected) {
  JobBuildContext job(test::MakeJobConf("job", false));
  ErrorKind kind;
  std::string text = ErrorText(
      [&] { test::AddInput(job, "huge", Shape({int64_t{1} << 32, int64_t{1} << 32})); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(text.find("overflows"), std::string::npos) << text;
  EXPECT_NO_THROW(test::AddInput(job, "large", Shape({int64_t{1} << 20, int64_t{1} << 20})));
}

TEST(JobBuildContext, SeveralDevicesChooseAndRecordTheLayout) {
  JobBuildContext job(test::MakeJobConf("job", false));
  std::string x = test::AddInput(job, "x", Shape({4, 6}), kFloat, "0:0-1");
  EXPECT_EQ(SbpToString(job.Op("x").sbp_signature().argument_to_sbp().at("out_0")), "S(0)");
  // The relu follows its producer's layout; a hint on its output overrides that.
  const OperatorConf& follows = job.AddOp(
      OpConfBuilder("relu", "r1").Input("x", x).Placement(test::CpuPlacement("0:0-1")).Build());
  EXPECT_EQ(SbpToString(follows.sbp_signature().argument_to_sbp().at("y_0")), "S(0)");
  OperatorConf hinted =
      OpConfBuilder("relu", "r2").Input("x", x).Placement(test::CpuPlacement("0:0-1")).Build();
  (*hinted.mutable_sbp_hint())["y_0"] = SplitSbp(1);
  EXPECT_EQ(SbpToString(job.AddOp(hinted).sbp_signature().argument_to_sbp().at("x_0")), "S(1)");
}

TEST(JobBuildContext, SplittingAnAxisShorterThanTheDeviceCountIsAnError) {
  JobBuildContext job(test::MakeJobConf("job", false));
  ErrorKind kind;
  std::string text = ErrorText([&] { test::AddInput(job, "x", Shape({3}), kFloat, "0:0-3"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(text.find("op 'x' (input) on 4 devices"), std::string::npos) << text;
  EXPECT_NE(text.find("shorter than the device count"), std::string::npos) << text;
}

TEST(JobBuildContext, PlacementsNamingMissingDevicesAreErrors) {
  DeviceResource resource;
  resource.cpu_device_num = 2;
  JobBuildContext job(test::MakeJobConf("job", false), resource);
  // As in OneFlow 0.3, CPU devices beyond cpu_device_num are threads of their own, not errors.
  test::AddInput(job, "beyond", Shape({4}), kFloat, "0:2-3");
  ErrorKind kind;
  std::string text = ErrorText([&] { test::AddInput(job, "x", Shape({4}), kFloat, "0:64"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(text.find("op 'x' is placed on cpu[\"0:64\"], which names device 64; CPU device ids "
                      "must be below 64"),
            std::string::npos)
      << text;
  text = ErrorText([&] { test::AddInput(job, "y", Shape({4}), kFloat, "1:0"); }, &kind);
  EXPECT_NE(text.find("names machine 1, but this run has 1 machine"), std::string::npos) << text;
}

TEST(KernelRegistry, MissingDtypeIsNotImplementedAndNamesOpDeviceAndDtypes) {
  ErrorKind kind;
  std::string text = ErrorText(
      [] { KernelRegistry::Instance().Get("my_relu", "relu", "cpu", kInt8); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);
  EXPECT_NE(text.find("no CPU kernel for op 'my_relu' (relu) with dtype int8"), std::string::npos)
      << text;
  EXPECT_NE(text.find("registered dtypes: float32, float64"), std::string::npos) << text;
  EXPECT_TRUE(KernelRegistry::Instance().Has("relu", "cpu", kFloat));
}

}  // namespace
}  // namespace oneflow
