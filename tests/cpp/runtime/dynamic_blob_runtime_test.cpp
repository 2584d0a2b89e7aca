// Dynamic blobs (BlobDesc::is_dynamic) in the runtime: argwhere's result read by gather_nd on two
// devices at once (two runtime threads, plus the input's), with many pieces in flight, so each
// register must carry its own piece's shape and each compute actor build kernels for the shapes
// it reads while the other thread does the same. Also runs under ThreadSanitizer.
#include <gtest/gtest.h>

#include <vector>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/compiler/plan_builder.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/runtime/job_instance.h"
#include "oneflow/runtime/runtime.h"
#include "oneflow/session/variable_store.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

constexpr int64_t kSize = 48;

// Piece i has a non-zero at every (i % 7 + 1)-th position (at none when i % 7 == 6), so the
// count of rows changes from piece to piece.
std::vector<float> PieceValues(int i) {
  std::vector<float> values(kSize, 0.0f);
  if (i % 7 == 6) { return values; }
  for (int64_t j = 0; j < kSize; j += i % 7 + 1) { values[j] = static_cast<float>(j + 1 + i); }
  return values;
}

Plan MakePlan(int64_t register_num) {
  JobBuildContext job(test::MakeJobConf("picks", false));
  std::string x = test::AddInput(job, "x", Shape({kSize}));
  for (const std::string device : {"1", "2"}) {
    const ParallelConf placement = test::CpuPlacement("0:" + device);
    const OperatorConf& rows = job.AddOp(
        OpConfBuilder("argwhere", "rows" + device).Input("input", x).Placement(placement).Build());
    EXPECT_TRUE(job.LogicalBlobDesc(OutputLbn(rows, "out")).is_dynamic);
    const OperatorConf& picked = job.AddOp(OpConfBuilder("gather_nd", "picked" + device)
                                               .Input("params", x)
                                               .Input("indices", OutputLbn(rows, "out"))
                                               .Placement(placement)
                                               .Build());
    job.AddOp(OpConfBuilder("return", "y" + device)
                  .Input("in", OutputLbn(picked, "out"))
                  .Placement(placement)
                  .Build());
  }
  CompleteJob(job);
  PlanOptions options;
  options.register_num = register_num;
  return BuildPlan({&job.job()}, options);
}

class DynamicBlobsOnTwoThreads : public ::testing::TestWithParam<int64_t> {};

TEST_P(DynamicBlobsOnTwoThreads, EachPieceKeepsItsOwnRows) {
  constexpr int kPieces = 40;
  Plan plan = MakePlan(GetParam());
  VariableStore variables;
  Runtime runtime(plan, variables, WatchHandler(), RuntimeOptions());
  std::vector<std::shared_ptr<JobInstance>> instances;
  for (int i = 0; i < kPieces; ++i) {
    HostTensor x = HostTensor::Allocate(BlobDesc{Shape({kSize}), kFloat});
    const std::vector<float> values = PieceValues(i);
    std::copy(values.begin(), values.end(), static_cast<float*>(x.data));
    instances.push_back(
        std::make_shared<JobInstance>("picks", std::map<std::string, HostTensor>{{"x", x}}));
    runtime.Launch("picks", instances.back());
  }
  for (int i = 0; i < kPieces; ++i) {
    instances[i]->Wait();
    std::vector<float> expected;
    for (float value : PieceValues(i)) {
      if (value != 0.0f) { expected.push_back(value); }
    }
    for (const std::string output : {"y1", "y2"}) {
      const HostTensor& got = instances[i]->outputs().at(output);
      ASSERT_EQ(got.desc.shape, Shape({static_cast<int64_t>(expected.size())}))
          << output << " of piece " << i;
      const float* data = static_cast<const float*>(got.data);
      EXPECT_EQ(std::vector<float>(data, data + expected.size()), expected)
          << output << " of piece " << i;
    }
  }
  runtime.Stop();
}

INSTANTIATE_TEST_SUITE_P(RegisterNum, DynamicBlobsOnTwoThreads, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace oneflow
