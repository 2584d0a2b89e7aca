// Ops on GPUs in the TaskGraph and the Plan: which ops resolve to GPUs, the copy nodes where
// blobs cross between host and GPU memory, the NCCL collectives among the same GPUs (any split
// axis, uneven splits, split to split), GPU blobs boxed through host memory, the threads and
// memory cases of the Plan. Runs without a GPU: only the compiler is exercised, and op types
// without a real GPU kernel in this build get a stand-in that is never run.
#include <gtest/gtest.h>

#include <cstring>

#include "oneflow/compiler/plan_builder.h"
#include "oneflow/compiler/task_graph.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/tensor_slice.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

class NeverRunKernel final : public Kernel {
 public:
  explicit NeverRunKernel(const KernelInitContext&) {}
  void Forward(KernelContext&) override { FAIL() << "a compiler test ran a kernel"; }
};

void EnsureGpuKernel(const std::string& op_type, DataType data_type) {
  if (!KernelRegistry::Instance().Has(op_type, "gpu", data_type)) {
    KernelRegistry::Instance().Register(
        op_type, "gpu", data_type,
        [](const KernelInitContext& ctx) { return std::make_unique<NeverRunKernel>(ctx); });
  }
}

ParallelConf GpuPlacement(const std::string& devices) {
  ParallelConf conf;
  conf.set_device_tag("gpu");
  conf.add_device_name(devices);
  return conf;
}

DeviceResource Gpus(int64_t count) {
  DeviceResource resource;
  resource.gpu_device_num = count;
  return resource;
}

std::string Identity(JobBuildContext& job, const std::string& name, const std::string& in,
                     const ParallelConf& placement, const std::string& sbp) {
  OperatorConf conf = OpConfBuilder("identity", name).Input("in", in).Placement(placement).Build();
  (*conf.mutable_sbp_hint())["in_0"] = SbpFromString(sbp);
  (*conf.mutable_sbp_hint())["out_0"] = SbpFromString(sbp);
  return OutputLbn(job.AddOp(conf), "out");
}

const TaskNode& NodeNamed(const TaskGraphProto& graph, const std::string& name) {
  for (const TaskNode& node : graph.node()) {
    if (node.name() == name) { return node; }
  }
  ADD_FAILURE() << "no node " << name;
  return graph.node(0);
}

const TaskNode& InputNode(const TaskGraphProto& graph, const TaskNode& node,
                          const std::string& key = "in_0") {
  return graph.node(node.input().at(key).node_id());
}

int Count(const TaskGraphProto& graph, TaskNodeType type) {
  int count = 0;
  for (const TaskNode& node : graph.node()) { count += node.type() == type; }
  return count;
}

std::string Direction(const TaskNode& node) {
  return node.exec().op_conf().attr().at("direction").string_value();
}

class GpuPlanTest : public ::testing::Test {
 protected:
  void SetUp() override { EnsureGpuKernel("identity", kFloat); }
};

// x (host) -> first (gpu 0) -> second (cpu 0).
JobBuildContext HostGpuHost(const DeviceResource& resource) {
  JobBuildContext job(test::MakeJobConf("hgh", false), resource);
  const std::string x = test::AddInput(job, "x", Shape({4, 3}));
  const std::string first = Identity(job, "first", x, GpuPlacement("0:0"), "B");
  Identity(job, "second", first, test::CpuPlacement("0:0"), "B");
  return job;
}

TEST_F(GpuPlanTest, CopiesWhereBlobsCrossBetweenHostAndGpu) {
  const JobBuildContext job = HostGpuHost(Gpus(1));
  int64_t collectives = 0;
  const TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives, Gpus(1));
  const TaskNode& first = NodeNamed(graph, "first@0");
  EXPECT_EQ(first.device_tag(), "gpu");
  const TaskNode& h2d = InputNode(graph, first);
  EXPECT_EQ(h2d.type(), kCopyHdNode);
  EXPECT_EQ(h2d.device_tag(), "gpu");
  EXPECT_EQ(Direction(h2d), "h2d");
  EXPECT_EQ(InputNode(graph, h2d).name(), "x@0");
  const TaskNode& second = NodeNamed(graph, "second@0");
  EXPECT_NE(second.device_tag(), "gpu");
  const TaskNode& d2h = InputNode(graph, second);
  EXPECT_EQ(d2h.type(), kCopyHdNode);
  EXPECT_EQ(Direction(d2h), "d2h");
  EXPECT_EQ(InputNode(graph, d2h).node_id(), first.node_id());
  EXPECT_EQ(Count(graph, kCopyHdNode), 2);
}

// x (host) -> argwhere (gpu placement, no GPU kernel: host) -> picked (gpu placement, reads
// the dynamic rows: host) -> static (cast_to_static_shape, host) -> after (gpu).
TEST_F(GpuPlanTest, OpsReadingADynamicBlobMadeOnTheHostRunOnTheHostUntilItIsStatic) {
  ASSERT_FALSE(KernelRegistry::Instance().Has("argwhere", "gpu", kFloat));
  EnsureGpuKernel("identity", kInt32);
  EnsureGpuKernel("cast_to_static_shape", kInt32);
  JobBuildContext job(test::MakeJobConf("rows", false), Gpus(1));
  const std::string x = test::AddInput(job, "x", Shape({6}));
  const OperatorConf& argwhere = job.AddOp(OpConfBuilder("argwhere", "argwhere")
                                               .Input("input", x)
                                               .Placement(GpuPlacement("0:0"))
                                               .Build());
  const std::string rows = OutputLbn(argwhere, "out");
  ASSERT_TRUE(job.LogicalBlobDesc(rows).is_dynamic);
  const std::string picked = Identity(job, "picked", rows, GpuPlacement("0:0"), "B");
  EXPECT_TRUE(job.LogicalBlobDesc(picked).is_dynamic);
  EXPECT_EQ(job.Op("picked").placement().device_tag(), "cpu") << "runs where its input was made";
  const OperatorConf& cast = job.AddOp(OpConfBuilder("cast_to_static_shape", "static")
                                           .Input("in", picked)
                                           .Placement(GpuPlacement("0:0"))
                                           .Build());
  EXPECT_EQ(cast.placement().device_tag(), "cpu");
  const std::string fixed = OutputLbn(cast, "out");
  EXPECT_FALSE(job.LogicalBlobDesc(fixed).is_dynamic);
  Identity(job, "after", fixed, GpuPlacement("0:0"), "B");
  EXPECT_EQ(job.Op("after").placement().device_tag(), "gpu") << "static again: on the GPU";

  int64_t collectives = 0;
  const TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives, Gpus(1));
  const TaskNode& picked_node = NodeNamed(graph, "picked@0");
  EXPECT_EQ(picked_node.device_tag(), "cpu");
  EXPECT_EQ(InputNode(graph, picked_node).name(), "argwhere@0") << "read directly, no copy";
  EXPECT_EQ(NodeNamed(graph, "static@0").device_tag(), "cpu");
  const TaskNode& after = NodeNamed(graph, "after@0");
  EXPECT_EQ(after.device_tag(), "gpu");
  const TaskNode& h2d = InputNode(graph, after);
  EXPECT_EQ(h2d.type(), kCopyHdNode);
  EXPECT_EQ(Direction(h2d), "h2d");
  EXPECT_EQ(InputNode(graph, h2d).name(), "static@0");
}

TEST_F(GpuPlanTest, WithoutGpusEverythingRunsOnTheHost) {
  const JobBuildContext job = HostGpuHost(DeviceResource());
  int64_t collectives = 0;
  const TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives, DeviceResource());
  EXPECT_EQ(Count(graph, kCopyHdNode), 0);
  for (const TaskNode& node : graph.node()) { EXPECT_NE(node.device_tag(), "gpu") << node.name(); }
  PlanOptions options;
  const Plan plan = BuildPlan({&job.job()}, options);
  ASSERT_EQ(plan.thread_size(), 1);
  EXPECT_EQ(plan.thread(0).device_tag(), "cpu");
  for (const TaskProto& task : plan.task()) {
    EXPECT_EQ(task.device_tag(), "cpu");
    for (const RegstDescProto& regst : task.produced_regst_desc()) {
      EXPECT_EQ(regst.memory_case().kind(), kHostMemory);
    }
  }
}

TEST_F(GpuPlanTest, PlanPutsGpuTasksOnGpuThreadsWithDeviceAndPinnedMemory) {
  const JobBuildContext job = HostGpuHost(Gpus(1));
  PlanOptions options;
  options.resource = Gpus(1);
  const Plan plan = BuildPlan({&job.job()}, options);
  ASSERT_EQ(plan.thread_num(), 2);
  EXPECT_EQ(plan.thread(0).device_tag(), "cpu");
  EXPECT_EQ(plan.thread(1).device_tag(), "gpu");
  EXPECT_EQ(plan.thread(1).device_id(), 0);
  auto task_named = [&](const std::string& op) -> const TaskProto& {
    for (const TaskProto& task : plan.task()) {
      if (task.exec_node_size() > 0 && task.exec_node(0).op_conf().name() == op) { return task; }
    }
    ADD_FAILURE() << "no task runs " << op;
    return plan.task(0);
  };
  const TaskProto& first = task_named("first");
  EXPECT_EQ(first.device_tag(), "gpu");
  EXPECT_EQ(first.thread_id(), 1);
  EXPECT_EQ(first.produced_regst_desc(0).memory_case().kind(), kDeviceMemory);
  // The input's register is read by the copy to the GPU: pinned.
  EXPECT_EQ(task_named("x").produced_regst_desc(0).memory_case().kind(), kPinnedHostMemory);
  // The copy back writes pinned host memory; the consumer on the host stays on thread 0.
  const TaskProto& second = task_named("second");
  EXPECT_EQ(second.thread_id(), 0);
  int copies = 0;
  for (const TaskProto& task : plan.task()) {
    if (task.exec_node_size() == 0 || task.exec_node(0).op_conf().op_type() != "copy_hd") {
      continue;
    }
    ++copies;
    EXPECT_EQ(task.thread_id(), 1);
    EXPECT_EQ(task.device_tag(), "gpu");
    const bool d2h = task.exec_node(0).op_conf().attr().at("direction").string_value() == "d2h";
    EXPECT_EQ(task.produced_regst_desc(0).memory_case().kind(),
              d2h ? kPinnedHostMemory : kDeviceMemory);
  }
  EXPECT_EQ(copies, 2);
}

TEST_F(GpuPlanTest, GpuBlobsOnOtherGpusAreBoxedInHostMemory) {
  // 5 rows split over GPUs 0-1, then over GPUs 0-2: not one rank set, so no NCCL collective.
  JobBuildContext job(test::MakeJobConf("box", false), Gpus(3));
  const std::string x = test::AddInput(job, "x", Shape({5, 5}), kFloat, "0:0-1");
  const std::string first = Identity(job, "first", x, GpuPlacement("0:0-1"), "S(0)");
  Identity(job, "second", first, GpuPlacement("0:0-2"), "S(0)");
  int64_t collectives = 0;
  const TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives, Gpus(3));
  for (int64_t id = 0; id < 3; ++id) {
    const TaskNode& second = NodeNamed(graph, "second@" + std::to_string(id));
    EXPECT_EQ(second.device_tag(), "gpu");
    const TaskNode& h2d = InputNode(graph, second);
    ASSERT_EQ(h2d.type(), kCopyHdNode);
    EXPECT_EQ(Direction(h2d), "h2d");
    EXPECT_EQ(h2d.device_id(), id);
    // Each part of the target is assembled by the host from the parts copied out of the GPUs.
    const TaskNode& boxing = InputNode(graph, h2d);
    EXPECT_EQ(boxing.type(), kSliceBoxingNode);
    EXPECT_NE(boxing.device_tag(), "gpu");
    const TaskNode& d2h = InputNode(graph, boxing);
    EXPECT_EQ(Direction(d2h), "d2h");
  }
  // The copies out of the GPUs hold one part each: 3 and 2 of the 5 rows.
  int copies_out = 0;
  for (const TaskNode& node : graph.node()) {
    if (node.type() != kCopyHdNode || Direction(node) != "d2h") { continue; }
    ++copies_out;
    const int64_t id = node.device_id();
    EXPECT_EQ(InputNode(graph, node).name(), "first@" + std::to_string(id));
    EXPECT_EQ(Shape(node.exec().argument_blob_desc().at("out_0").shape()),
              Shape({id == 0 ? 3 : 2, 5}));
  }
  EXPECT_EQ(copies_out, 2);
  EXPECT_EQ(Count(graph, kCollectiveNode), 0);
}

TEST_F(GpuPlanTest, SameLayoutOnTheSameGpusIsReadDirectly) {
  JobBuildContext job(test::MakeJobConf("direct", false), Gpus(2));
  const std::string x = test::AddInput(job, "x", Shape({6, 5}), kFloat, "0:0-1");
  const std::string first = Identity(job, "first", x, GpuPlacement("0:0-1"), "B");
  Identity(job, "second", first, GpuPlacement("0:1"), "B");
  int64_t collectives = 0;
  const TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives, Gpus(2));
  // B on GPUs 0-1 -> GPU 1: GPU 1's own replica.
  EXPECT_EQ(InputNode(graph, NodeNamed(graph, "second@0")).name(), "first@1");
  EXPECT_EQ(Count(graph, kCopyHdNode), 2);  // only the two copies of x to the GPUs
}

TEST_F(GpuPlanTest, VariablesOnGpusLiveInGpuMemory) {
  EnsureGpuKernel("variable", kFloat);
  JobBuildContext job(test::MakeJobConf("var", false), Gpus(1));
  OperatorConf conf = OpConfBuilder("variable", "w")
                          .Attr("shape", Shape({3}))
                          .Attr("dtype", kFloat)
                          .Attr("initializer", "constant")
                          .Attr("initializer_args", std::vector<double>{1.0})
                          .Placement(GpuPlacement("0:0"))
                          .Build();
  const std::string w = OutputLbn(job.AddOp(conf), "out");
  Identity(job, "use", w, GpuPlacement("0:0"), "B");
  PlanOptions options;
  options.resource = Gpus(1);
  const Plan plan = BuildPlan({&job.job()}, options);
  bool found = false;
  for (const TaskProto& task : plan.task()) {
    for (const RegstDescProto& regst : task.produced_regst_desc()) {
      if (regst.variable_name() != "w") { continue; }
      found = true;
      EXPECT_EQ(task.device_tag(), "gpu");
      EXPECT_EQ(regst.memory_case().kind(), kDeviceMemory);
      EXPECT_EQ(regst.memory_case().device_id(), 0);
    }
  }
  EXPECT_TRUE(found);
}

// An op with a CPU kernel only: out = in.
REGISTER_OP("test_no_gpu_kernel").Input("in").Output("out").SetInferFn([](InferContext& ctx) {
  InferElementwiseUnary(ctx, "test_no_gpu_kernel", "in", "out", {kFloat});
});
class TestNoGpuKernel final : public Kernel {
 public:
  explicit TestNoGpuKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override {
    std::memcpy(ctx.Output("out").mut_data<float>(), ctx.Input("in").data<float>(),
                ctx.Input("in").elem_count() * sizeof(float));
  }
};
REGISTER_KERNEL("test_no_gpu_kernel", "cpu", kFloat, TestNoGpuKernel);

TEST_F(GpuPlanTest, OpsWithoutAGpuKernelRunOnTheHostDeviceOfTheSameId) {
  ASSERT_FALSE(KernelRegistry::Instance().Has("test_no_gpu_kernel", "gpu", kFloat));
  JobBuildContext job(test::MakeJobConf("fallback", false), Gpus(1));
  const std::string x = test::AddInput(job, "x", Shape({4, 3}));
  const std::string first = Identity(job, "first", x, GpuPlacement("0:0"), "B");
  job.AddOp(OpConfBuilder("test_no_gpu_kernel", "sort")
                .Input("in", first)
                .Placement(GpuPlacement("0:0"))
                .Build());
  int64_t collectives = 0;
  const TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives, Gpus(1));
  const TaskNode& sort = NodeNamed(graph, "sort@0");
  EXPECT_NE(sort.device_tag(), "gpu");
  EXPECT_EQ(Direction(InputNode(graph, sort)), "d2h");
}

TEST_F(GpuPlanTest, GpuIdsBeyondTheMachinesGpusAreRejected) {
  JobBuildContext job(test::MakeJobConf("bad", false), Gpus(1));
  const std::string x = test::AddInput(job, "x", Shape({4, 3}));
  try {
    Identity(job, "first", x, GpuPlacement("0:1"), "B");
    FAIL() << "GPU 1 of 1 was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(error.what()).find("names GPU 1"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace oneflow

namespace oneflow {
namespace {

// first (P on GPUs 0-1) -> second (`to` on GPUs 0-1).
TaskGraphProto PartialSumOnGpus(const std::string& to, const Shape& shape) {
  EnsureGpuKernel("identity", kFloat);
  JobBuildContext job(test::MakeJobConf("nccl", false), Gpus(2));
  const std::string x = test::AddInput(job, "x", shape, kFloat, "0:0-1");
  const std::string first = Identity(job, "first", x, GpuPlacement("0:0-1"), "P");
  Identity(job, "second", first, GpuPlacement("0:0-1"), to);
  int64_t collectives = 0;
  return BuildTaskGraph(job.job(), &collectives, Gpus(2));
}

TEST(GpuCollectives, PartialSumsOnGpusAreReducedByNccl) {
  struct Case {
    std::string to;
    CollectiveKind kind;
  };
  for (const Case& c : {Case{"B", kAllReduce}, Case{"S(0)", kReduceScatter}}) {
    const TaskGraphProto graph = PartialSumOnGpus(c.to, Shape({6, 5}));
    for (int64_t rank = 0; rank < 2; ++rank) {
      const TaskNode& second = NodeNamed(graph, "second@" + std::to_string(rank));
      const TaskNode& collective = InputNode(graph, second);
      ASSERT_EQ(collective.type(), kCollectiveNode) << c.to;
      EXPECT_EQ(collective.device_tag(), "gpu");
      EXPECT_EQ(collective.collective().kind(), c.kind);
      EXPECT_EQ(collective.device_id(), rank);
      EXPECT_EQ(InputNode(graph, collective).name(), "first@" + std::to_string(rank));
    }
  }
}

TEST(GpuCollectives, EvenSplitsOnGpusAreGatheredByNccl) {
  EnsureGpuKernel("identity", kFloat);
  JobBuildContext job(test::MakeJobConf("gather", false), Gpus(2));
  const std::string x = test::AddInput(job, "x", Shape({6, 5}), kFloat, "0:0-1");
  const std::string first = Identity(job, "first", x, GpuPlacement("0:0-1"), "S(0)");
  Identity(job, "second", first, GpuPlacement("0:0-1"), "B");
  int64_t collectives = 0;
  const TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives, Gpus(2));
  const TaskNode& gather = InputNode(graph, NodeNamed(graph, "second@1"));
  ASSERT_EQ(gather.type(), kCollectiveNode);
  EXPECT_EQ(gather.device_tag(), "gpu");
  EXPECT_EQ(gather.collective().kind(), kAllGather);
}

// first (`from` on GPUs 0-1) -> second (`to` on GPUs 0-1).
TaskGraphProto OnTwoGpus(const std::string& from, const std::string& to, const Shape& shape) {
  EnsureGpuKernel("identity", kFloat);
  JobBuildContext job(test::MakeJobConf("nccl", false), Gpus(2));
  const std::string x = test::AddInput(job, "x", shape, kFloat, "0:0-1");
  const std::string first = Identity(job, "first", x, GpuPlacement("0:0-1"), from);
  Identity(job, "second", first, GpuPlacement("0:0-1"), to);
  int64_t collectives = 0;
  return BuildTaskGraph(job.job(), &collectives, Gpus(2));
}

TEST(GpuCollectives, AnyAxisAndUnevenSplitsAreNcclCollectives) {
  // Other axes than 0, uneven splits and split-to-split: packed into NCCL's chunks by the
  // communicator (nccl_collective_plan.h), so the blob never leaves the GPUs.
  struct Case {
    std::string from;
    std::string to;
    Shape shape;
    CollectiveKind kind;
  };
  for (const Case& c : {Case{"S(1)", "B", Shape({6, 4}), kAllGather},
                        Case{"P", "S(1)", Shape({6, 4}), kReduceScatter},
                        Case{"S(0)", "S(1)", Shape({6, 4}), kAllToAll},
                        Case{"S(1)", "S(0)", Shape({5, 3}), kAllToAll},
                        Case{"S(0)", "B", Shape({5, 5}), kAllGather},
                        Case{"P", "S(0)", Shape({5, 4}), kReduceScatter},
                        Case{"P", "S(2)", Shape({2, 3, 5}), kReduceScatter}}) {
    const std::string what = c.from + "->" + c.to + " of " + c.shape.ToString();
    const TaskGraphProto graph = OnTwoGpus(c.from, c.to, c.shape);
    for (int64_t rank = 0; rank < 2; ++rank) {
      const TaskNode& collective =
          InputNode(graph, NodeNamed(graph, "second@" + std::to_string(rank)));
      ASSERT_EQ(collective.type(), kCollectiveNode) << what;
      EXPECT_EQ(collective.device_tag(), "gpu") << what;
      EXPECT_EQ(collective.device_id(), rank) << what;
      EXPECT_EQ(collective.collective().kind(), c.kind) << what;
      EXPECT_EQ(collective.collective().rank(), rank) << what;
      EXPECT_EQ(InputNode(graph, collective).name(), "first@" + std::to_string(rank)) << what;
    }
    // Nothing else reads the GPU parts: no copy to the host, no slice boxing.
    for (const TaskNode& node : graph.node()) {
      for (const auto& input : node.input()) {
        if (graph.node(input.second.node_id()).name().rfind("first@", 0) != 0) { continue; }
        EXPECT_EQ(node.type(), kCollectiveNode) << what << ": " << node.name();
        EXPECT_EQ(node.device_tag(), "gpu") << what << ": " << node.name();
      }
    }
  }
}

TEST(GpuCollectives, UnevenAndAllToAllOutputsHaveTheirPartsShape) {
  // The runtime allocates each rank's output register from the plan: its part of the target.
  for (const auto& [from, to] : {std::make_pair(std::string("S(0)"), std::string("S(1)")),
                                 std::make_pair(std::string("S(1)"), std::string("B")),
                                 std::make_pair(std::string("P"), std::string("S(0)"))}) {
    EnsureGpuKernel("identity", kFloat);
    JobBuildContext job(test::MakeJobConf("nccl", false), Gpus(2));
    const std::string x = test::AddInput(job, "x", Shape({5, 3}), kFloat, "0:0-1");
    const std::string first = Identity(job, "first", x, GpuPlacement("0:0-1"), from);
    Identity(job, "second", first, GpuPlacement("0:0-1"), to);
    PlanOptions options;
    options.resource = Gpus(2);
    const Plan plan = BuildPlan({&job.job()}, options);
    int collectives = 0;
    for (const TaskProto& task : plan.task()) {
      // (x, on the host, is boxed there for `first`.)
      if (task.task_type() != kCollective || task.device_tag() != "gpu") { continue; }
      ++collectives;
      EXPECT_EQ(task.device_tag(), "gpu");
      const CollectiveTaskProto& collective = task.collective();
      const RegstDescProto& out = task.produced_regst_desc(0);
      ASSERT_EQ(out.blob_size(), 1);
      EXPECT_EQ(out.memory_case().kind(), kDeviceMemory);
      EXPECT_EQ(Shape(out.blob(0).blob_desc().shape()),
                PhysicalShape(Shape({5, 3}), SbpFromString(to), collective.rank(), 2))
          << from << "->" << to;
    }
    EXPECT_EQ(collectives, 2) << from << "->" << to;
  }
}

TEST(GpuCollectives, LocalConversionsOfGpuBlobsAreSliceBoxingOnEachGpu) {
  // B -> S, B -> P and S -> P need no communication: each GPU converts its own part, on the GPU.
  for (const auto& [from, to] : {std::make_pair(std::string("B"), std::string("S(1)")),
                                 std::make_pair(std::string("B"), std::string("P")),
                                 std::make_pair(std::string("S(0)"), std::string("P"))}) {
    const std::string what = from + "->" + to;
    const TaskGraphProto graph = OnTwoGpus(from, to, Shape({6, 4}));
    for (int64_t rank = 0; rank < 2; ++rank) {
      const TaskNode& boxing = InputNode(graph, NodeNamed(graph, "second@" + std::to_string(rank)));
      ASSERT_EQ(boxing.type(), kSliceBoxingNode) << what;
      EXPECT_EQ(boxing.device_tag(), "gpu") << what;
      EXPECT_EQ(boxing.device_id(), rank) << what;
      EXPECT_EQ(boxing.exec().op_conf().placement().device_tag(), "gpu") << what;
      EXPECT_FALSE(boxing.exec().op_conf().attr().at("sum").bool_value()) << what;
      if (from == "B" && to == "P" && rank == 1) {
        EXPECT_EQ(boxing.input_size(), 0) << what;  // zeros: the value is on GPU 0
      } else {
        EXPECT_EQ(InputNode(graph, boxing).name(), "first@" + std::to_string(rank)) << what;
      }
    }
    for (const TaskNode& node : graph.node()) {
      for (const auto& input : node.input()) {
        if (graph.node(input.second.node_id()).name().rfind("first@", 0) != 0) { continue; }
        EXPECT_EQ(node.device_tag(), "gpu") << what << ": " << node.name();
        EXPECT_NE(node.type(), kCopyHdNode) << what << ": " << node.name();
      }
    }
  }
}

TEST(GpuCollectives, CollectiveIdsFollowTheBoxingOrder) {
  // Two all-reduces in a row: ids grow downstream, the order every GPU enqueues them in.
  EnsureGpuKernel("identity", kFloat);
  JobBuildContext job(test::MakeJobConf("two", false), Gpus(2));
  const std::string x = test::AddInput(job, "x", Shape({4, 4}), kFloat, "0:0-1");
  std::string blob = x;
  for (const char* name : {"a", "b", "c", "d"}) {
    blob = Identity(job, name, blob, GpuPlacement("0:0-1"), name[0] % 2 ? "P" : "B");
  }
  int64_t collectives = 0;
  const TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives, Gpus(2));
  const TaskNode& first = InputNode(graph, NodeNamed(graph, "b@0"));
  const TaskNode& second = InputNode(graph, NodeNamed(graph, "d@0"));
  ASSERT_EQ(first.type(), kCollectiveNode);
  ASSERT_EQ(second.type(), kCollectiveNode);
  EXPECT_LT(first.collective().collective_id(), second.collective().collective_id());
}

}  // namespace
}  // namespace oneflow

namespace oneflow {
namespace {

// A variable on a GPU and an op (added by `add_updater`) that updates it in place.
TaskGraphProto UpdatedVariable(
    const Shape& shape, DataType dtype,
    const std::function<void(JobBuildContext&, const std::string&)>& add_updater) {
  EnsureGpuKernel("variable", dtype);
  JobBuildContext job(test::MakeJobConf("update", false), Gpus(1));
  OperatorConf conf = OpConfBuilder("variable", "v")
                          .Attr("shape", shape)
                          .Attr("dtype", dtype)
                          .Attr("initializer", "constant")
                          .Attr("initializer_args", std::vector<double>{0.0})
                          .Placement(GpuPlacement("0:0"))
                          .Build();
  add_updater(job, OutputLbn(job.AddOp(conf), "out"));
  int64_t collectives = 0;
  return BuildTaskGraph(job.job(), &collectives, Gpus(1));
}

TEST(GpuInPlaceUpdates, AVariableStaysOnTheHostWhenItsUpdaterHasNoGpuKernel) {
  if (KernelRegistry::Instance().Has("increment_counter", "gpu", kInt64)) {
    GTEST_SKIP() << "increment_counter has a GPU kernel in this build";
  }
  const TaskGraphProto graph =
      UpdatedVariable(Shape({1}), kInt64, [](JobBuildContext& job, const std::string& v) {
        job.AddOp(OpConfBuilder("increment_counter", "counter")
                      .Input("counter", v)
                      .Placement(GpuPlacement("0:0"))
                      .Build());
      });
  // Else the counter would increment a copy of the variable, and the variable never change.
  EXPECT_NE(NodeNamed(graph, "v@0").device_tag(), "gpu");
  const TaskNode& counter = NodeNamed(graph, "counter@0");
  EXPECT_NE(counter.device_tag(), "gpu");
  EXPECT_EQ(InputNode(graph, counter, "counter_0").name(), "v@0");
  EXPECT_EQ(Count(graph, kCopyHdNode), 0);
}

TEST(GpuInPlaceUpdates, AVariableAndItsGpuUpdaterShareGpuMemory) {
  EnsureGpuKernel("assign", kFloat);
  const TaskGraphProto graph =
      UpdatedVariable(Shape({3}), kFloat, [](JobBuildContext& job, const std::string& v) {
        job.AddOp(OpConfBuilder("assign", "assign")
                      .Input("ref", v)
                      .Input("value", v)
                      .Placement(GpuPlacement("0:0"))
                      .Build());
      });
  EXPECT_EQ(NodeNamed(graph, "v@0").device_tag(), "gpu");
  const TaskNode& assign = NodeNamed(graph, "assign@0");
  EXPECT_EQ(assign.device_tag(), "gpu");
  EXPECT_EQ(InputNode(graph, assign, "ref_0").name(), "v@0");
}

}  // namespace
}  // namespace oneflow
