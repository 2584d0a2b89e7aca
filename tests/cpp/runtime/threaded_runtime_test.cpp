// The runtime on several threads: one job whose ops sit on four single-device placements, so
// its actors run on four runtime threads and every register crosses threads. Fake kernels
// ("test_fault") raise errors where a test wants them. These tests also run under
// ThreadSanitizer (scripts/run_tsan.sh).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/compiler/plan_builder.h"
#include "oneflow/device/cpu_device_context.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/runtime/job_instance.h"
#include "oneflow/runtime/runtime.h"
#include "oneflow/session/variable_store.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

// test_fault: out = in, but throws ValueError when in[0] == fail_at; with in_parallel_for the
// throw happens inside the last chunk of a ParallelFor (on a worker thread of the device).
REGISTER_OP("test_fault")
    .Input("in")
    .Output("out")
    .Attr<double>("fail_at", -1.0)
    .Attr<bool>("in_parallel_for", false)
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "test_fault", "in", "out", {kFloat});
    });

class TestFaultKernel final : public Kernel {
 public:
  explicit TestFaultKernel(const KernelInitContext& ctx)
      : fail_at_(ctx.Attr<double>("fail_at")),
        in_parallel_for_(ctx.Attr<bool>("in_parallel_for")) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    Blob& out = ctx.Output("out");
    const bool fail = in.data<float>()[0] == static_cast<float>(fail_at_);
    const int64_t count = in.elem_count();
    auto copy = [&](int64_t begin, int64_t end) {
      if (fail && end == count) {
        throw Error(ErrorKind::kValue) << "test_fault: failing on purpose at " << fail_at_;
      }
      std::memcpy(out.mut_data<float>() + begin, in.data<float>() + begin,
                  (end - begin) * sizeof(float));
    };
    if (in_parallel_for_) {
      ctx.cpu_device().ParallelFor(count, 1, copy);
    } else {
      copy(0, count);
    }
  }

 private:
  double fail_at_;
  bool in_parallel_for_;
};
REGISTER_KERNEL("test_fault", "cpu", kFloat, TestFaultKernel);

constexpr int64_t kSize = 64;

std::map<std::string, HostTensor> Inputs(float value) {
  HostTensor tensor = HostTensor::Allocate(BlobDesc{Shape({kSize}), kFloat});
  for (int64_t i = 0; i < kSize; ++i) { static_cast<float*>(tensor.data)[i] = value + i; }
  return {{"x", tensor}};
}

std::string AddOn(JobBuildContext& job, OpConfBuilder builder, const std::string& devices) {
  return OutputLbn(job.AddOp(builder.Placement(test::CpuPlacement(devices)).Build()), "out");
}

// x (device 0) -> a (1) -> {b (2), c (3)} -> d = b + c (0) -> y: fan-out, fan-in, four threads.
Plan MakeDiamondPlan(int64_t register_num) {
  JobBuildContext job(test::MakeJobConf("diamond", false));
  std::string x = test::AddInput(job, "x", Shape({kSize}));
  std::string a = AddOn(job, OpConfBuilder("identity", "a").Input("in", x), "0:1");
  std::string b = AddOn(job, OpConfBuilder("identity", "b").Input("in", a), "0:2");
  std::string c = AddOn(job, OpConfBuilder("identity", "c").Input("in", a), "0:3");
  std::string d = AddOn(job, OpConfBuilder("add_n", "d").Input("in", b).Input("in", c), "0:0");
  job.AddOp(
      OpConfBuilder("return", "y").Input("in", d).Placement(test::CpuPlacement("0:0")).Build());
  CompleteJob(job);
  PlanOptions options;
  options.register_num = register_num;
  return BuildPlan({&job.job()}, options);
}

// x (0) -> a (1) -> fault (2) -> c (3) -> y.
Plan MakeChainPlan(double fail_at, bool in_parallel_for) {
  JobBuildContext job(test::MakeJobConf("chain", false));
  std::string x = test::AddInput(job, "x", Shape({kSize}));
  std::string a = AddOn(job, OpConfBuilder("identity", "a").Input("in", x), "0:1");
  std::string f = AddOn(job,
                        OpConfBuilder("test_fault", "fault")
                            .Input("in", a)
                            .Attr("fail_at", fail_at)
                            .Attr("in_parallel_for", in_parallel_for),
                        "0:2");
  std::string c = AddOn(job, OpConfBuilder("identity", "c").Input("in", f), "0:3");
  job.AddOp(
      OpConfBuilder("return", "y").Input("in", c).Placement(test::CpuPlacement("0:3")).Build());
  CompleteJob(job);
  return BuildPlan({&job.job()}, PlanOptions());
}

float OutputAt(const JobInstance& instance, int64_t index) {
  return static_cast<const float*>(instance.outputs().at("y").data)[index];
}

bool FinishesWithin(JobInstance& instance, std::chrono::seconds limit) {
  try {
    return instance.WaitFor(limit);
  } catch (...) { return true; }
}

class DiamondOnFourThreads : public ::testing::TestWithParam<int64_t> {};

TEST_P(DiamondOnFourThreads, EveryPieceInOrderWithinTheRegisterWindow) {
  const int64_t register_num = GetParam();
  constexpr int kPieces = 40;
  Plan plan = MakeDiamondPlan(register_num);
  ASSERT_EQ(plan.thread_num(), 4);
  VariableStore variables;
  Runtime runtime(plan, variables, WatchHandler(), RuntimeOptions());
  std::vector<std::shared_ptr<JobInstance>> instances;
  for (int i = 0; i < kPieces; ++i) {
    instances.push_back(std::make_shared<JobInstance>("diamond", Inputs(3.0f * i)));
    runtime.Launch("diamond", instances.back());
  }
  for (int i = 0; i < kPieces; ++i) {
    instances[i]->Wait();
    EXPECT_EQ(OutputAt(*instances[i], 0), 2 * 3.0f * i);
    EXPECT_EQ(OutputAt(*instances[i], kSize - 1), 2 * (3.0f * i + kSize - 1));
  }
  runtime.Stop();
  for (const auto& entry : runtime.CollectRegstStats()) {
    EXPECT_LE(entry.second.max_in_flight, entry.second.register_num)
        << "register desc " << entry.first;
    EXPECT_EQ(entry.second.pieces, kPieces) << "register desc " << entry.first;
  }
}

INSTANTIATE_TEST_SUITE_P(RegisterNum, DiamondOnFourThreads, ::testing::Values(1, 2, 3));

TEST(ThreadedRuntime, KernelErrorMidPipelineFailsOnlyItsCall) {
  Plan plan = MakeChainPlan(/*fail_at=*/50.0, /*in_parallel_for=*/false);
  VariableStore variables;
  Runtime runtime(plan, variables, WatchHandler(), RuntimeOptions());
  std::vector<std::shared_ptr<JobInstance>> instances;
  for (int i = 0; i < 10; ++i) {
    instances.push_back(std::make_shared<JobInstance>("chain", Inputs(10.0f * i)));
    runtime.Launch("chain", instances.back());
  }
  for (int i = 0; i < 10; ++i) {
    if (i == 5) {
      try {
        instances[i]->Wait();
        ADD_FAILURE() << "piece 5 should fail";
      } catch (const Error& error) {
        EXPECT_EQ(error.kind(), ErrorKind::kValue);
        EXPECT_NE(std::string(error.what()).find("failing on purpose"), std::string::npos);
        EXPECT_NE(std::string(error.what()).find("while running op 'fault'"), std::string::npos);
      }
    } else {
      instances[i]->Wait();
      EXPECT_EQ(OutputAt(*instances[i], 1), 10.0f * i + 1);
    }
  }
}

TEST(ThreadedRuntime, ErrorInsideAParallelForChunkBecomesTheCallsError) {
  Plan plan = MakeChainPlan(/*fail_at=*/7.0, /*in_parallel_for=*/true);
  VariableStore variables;
  RuntimeOptions options;
  options.compute_threads = 3;  // the throwing chunk runs on a worker of the device's pool
  Runtime runtime(plan, variables, WatchHandler(), options);
  auto failing = std::make_shared<JobInstance>("chain", Inputs(7.0f));
  runtime.Launch("chain", failing);
  EXPECT_THROW(failing->Wait(), Error);
  auto fine = std::make_shared<JobInstance>("chain", Inputs(1.0f));
  runtime.Launch("chain", fine);
  fine->Wait();
  EXPECT_EQ(OutputAt(*fine, kSize - 1), kSize);
}

TEST(ThreadedRuntime, StopWhilePiecesAreInFlightFinishesEveryCall) {
  Plan plan = MakeDiamondPlan(2);
  VariableStore variables;
  std::vector<std::shared_ptr<JobInstance>> instances;
  {
    Runtime runtime(plan, variables, WatchHandler(), RuntimeOptions());
    for (int i = 0; i < 30; ++i) {
      instances.push_back(std::make_shared<JobInstance>("diamond", Inputs(1.0f * i)));
      runtime.Launch("diamond", instances.back());
    }
    runtime.Stop();  // at once, with pieces in flight
    EXPECT_THROW(runtime.Launch("diamond", std::make_shared<JobInstance>("diamond", Inputs(0))),
                 Error);
  }
  for (auto& instance : instances) {
    EXPECT_TRUE(FinishesWithin(*instance, std::chrono::seconds(0)));
  }
}

TEST(ThreadedRuntime, AnExceptionEscapingAnActorAbortsWithoutHanging) {
  Plan plan = MakeDiamondPlan(2);
  // Corrupt the Plan: the input's register names a consumer that no thread runs, so sending
  // to it throws on a runtime thread (an internal error, not a kernel's).
  for (TaskProto& task : *plan.mutable_task()) {
    if (task.exec_node_size() && task.exec_node(0).op_conf().name() == "x") {
      task.mutable_produced_regst_desc(0)->add_consumer_task_id(987654);
    }
  }
  VariableStore variables;
  Runtime runtime(plan, variables, WatchHandler(), RuntimeOptions());
  auto instance = std::make_shared<JobInstance>("diamond", Inputs(1.0f));
  runtime.Launch("diamond", instance);
  try {
    instance->Wait();
    ADD_FAILURE() << "the call should fail";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("987654"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("the runtime stopped"), std::string::npos);
  }
  EXPECT_THROW(runtime.Launch("diamond", std::make_shared<JobInstance>("diamond", Inputs(0))),
               Error);
  runtime.Stop();  // returns: the aborted threads have ended
}

}  // namespace
}  // namespace oneflow
