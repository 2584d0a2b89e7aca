// A job over four devices whose identity chain passes its blob through every kind of boxing
// (collectives, local slices, general slice boxing, direct reads across devices): many pieces in
// flight, every result equals the input. Also runs under ThreadSanitizer (scripts/run_tsan.sh).
#include <gtest/gtest.h>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/compiler/plan_builder.h"
#include "oneflow/runtime/job_instance.h"
#include "oneflow/runtime/runtime.h"
#include "oneflow/sbp/tensor_slice.h"
#include "oneflow/session/variable_store.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

const Shape kShape({7, 9});  // uneven over 2, 3 and 4 devices

Plan MakeBoxingChainPlan() {
  JobBuildContext job(test::MakeJobConf("chain", false));
  std::string blob = test::AddInput(job, "x", kShape, kFloat, "0:0-3");
  struct Step {
    std::string devices, sbp;
  };
  const std::vector<Step> steps = {
      {"0:0-3", "B"},     // all-gather
      {"0:0-3", "S(1)"},  // local slice
      {"0:0-3", "S(0)"},  // all-to-all
      {"0:0-3", "P"},     // split -> partial sum, locally
      {"0:0-3", "B"},     // all-reduce
      {"0:1-3", "S(0)"},  // general: 4 broadcast copies -> 3 row slices
      {"0:0-1", "P"},     // general: slices -> a partial sum on other devices
      {"0:0-1", "S(1)"},  // reduce-scatter
      {"0:3", "B"},       // general: gather on one device
      {"0:0-2", "B"},     // one device -> many: direct reads
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    blob =
        test::ForcedIdentity(job, "step" + std::to_string(i), blob, steps[i].devices, steps[i].sbp);
  }
  job.AddOp(OpConfBuilder("return", "y")
                .Input("in", blob)
                .Placement(test::CpuPlacement("0:0-2"))
                .Build());
  CompleteJob(job);
  return BuildPlan({&job.job()}, PlanOptions());
}

TEST(MultiDeviceRuntime, EveryBoxingOfAChainReturnsTheInput) {
  Plan plan = MakeBoxingChainPlan();
  int collectives = 0;
  for (const TaskProto& task : plan.task()) { collectives += task.task_type() == kCollective; }
  EXPECT_EQ(collectives,
            4 * 3 + 2);  // all-gather, all-to-all, all-reduce on 4; reduce-scatter on 2
  VariableStore variables;
  RuntimeOptions options;
  Runtime runtime(plan, variables, WatchHandler(), options);
  constexpr int kPieces = 12;
  std::vector<std::shared_ptr<JobInstance>> instances;
  for (int piece = 0; piece < kPieces; ++piece) {
    HostTensor x = HostTensor::Allocate(BlobDesc{kShape, kFloat});
    for (int64_t i = 0; i < kShape.elem_count(); ++i) {
      static_cast<float*>(x.data)[i] = piece * 100.0f + i;
    }
    instances.push_back(
        std::make_shared<JobInstance>("chain", std::map<std::string, HostTensor>{{"x", x}}));
    runtime.Launch("chain", instances.back());
  }
  for (int piece = 0; piece < kPieces; ++piece) {
    instances[piece]->Wait();
    const HostTensor& y = instances[piece]->outputs().at("y");
    ASSERT_EQ(y.desc.shape, kShape);
    for (int64_t i = 0; i < kShape.elem_count(); ++i) {
      ASSERT_EQ(static_cast<const float*>(y.data)[i], piece * 100.0f + i)
          << "piece " << piece << " element " << i;
    }
  }
  runtime.Stop();
}

}  // namespace
}  // namespace oneflow
