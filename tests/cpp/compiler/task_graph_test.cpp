// TaskGraph building and the boxing choices of Reshard, on hand-built multi-device jobs.
#include "oneflow/compiler/task_graph.h"

#include <gtest/gtest.h>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/sbp/tensor_slice.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

int Count(const TaskGraphProto& graph, TaskNodeType type) {
  int count = 0;
  for (const TaskNode& node : graph.node()) { count += node.type() == type; }
  return count;
}

const TaskNode& NodeNamed(const TaskGraphProto& graph, const std::string& name) {
  for (const TaskNode& node : graph.node()) {
    if (node.name() == name) { return node; }
  }
  ADD_FAILURE() << "no node " << name;
  return graph.node(0);
}

// x (S(0) on 0:0-1) -> first (`from` on `from_devices`) -> second (`to` on `to_devices`).
TaskGraphProto Chain(const std::string& from_devices, const std::string& from,
                     const std::string& to_devices, const std::string& to) {
  JobBuildContext job(test::MakeJobConf("chain", false));
  std::string x = test::AddInput(job, "x", Shape({6, 5}), kFloat, from_devices);
  std::string first = test::ForcedIdentity(job, "first", x, from_devices, from);
  test::ForcedIdentity(job, "second", first, to_devices, to);
  int64_t collectives = 0;
  return BuildTaskGraph(job.job(), &collectives);
}

TEST(TaskGraph, OneComputeNodePerOpAndDeviceWithPhysicalShapes) {
  TaskGraphProto graph = Chain("0:0-2", "S(1)", "0:0-2", "S(1)");
  const TaskNode& part = NodeNamed(graph, "first@2");
  EXPECT_EQ(part.device_id(), 2);
  EXPECT_EQ(part.exec().parallel_context().parallel_num(), 3);
  // (6, 5) split along axis 1 over 3 devices: 2, 2, 1 columns.
  EXPECT_EQ(Shape(part.exec().argument_blob_desc().at("out_0").shape()), Shape({6, 1}));
  EXPECT_EQ(Shape(part.exec().logical_blob_desc().at("out_0").shape()), Shape({6, 5}));
  EXPECT_EQ(Count(graph, kSourceTickNode), 1);
  EXPECT_EQ(Count(graph, kSinkTickNode), 1);
}

TEST(TaskGraph, SameLayoutNeedsNoBoxing) {
  TaskGraphProto graph = Chain("0:0-1", "S(0)", "0:0-1", "S(0)");
  EXPECT_EQ(Count(graph, kCollectiveNode) + Count(graph, kSliceBoxingNode), 0);
  EXPECT_EQ(NodeNamed(graph, "second@1").input().at("in_0").node_id(),
            NodeNamed(graph, "first@1").node_id());
}

TEST(TaskGraph, CollectivesOnTheSameDevices) {
  struct Expected {
    std::string from, to;
    CollectiveKind kind;
  };
  for (const Expected& e : std::vector<Expected>{{"P", "B", kAllReduce},
                                                 {"P", "S(1)", kReduceScatter},
                                                 {"S(0)", "B", kAllGather},
                                                 {"S(0)", "S(1)", kAllToAll}}) {
    TaskGraphProto graph = Chain("0:0-2", e.from, "0:0-2", e.to);
    ASSERT_EQ(Count(graph, kCollectiveNode), 3) << e.from << "->" << e.to;
    for (const TaskNode& node : graph.node()) {
      if (node.type() != kCollectiveNode) { continue; }
      EXPECT_EQ(node.collective().kind(), e.kind);
      EXPECT_EQ(node.collective().rank_device_size(), 3);
      EXPECT_EQ(node.device_id(), node.collective().rank());  // rank r runs on device r
    }
  }
}

TEST(TaskGraph, BroadcastToSplitIsALocalSlice) {
  TaskGraphProto graph = Chain("0:0-1", "B", "0:0-1", "S(1)");
  ASSERT_EQ(Count(graph, kSliceBoxingNode), 2);
  for (const TaskNode& node : graph.node()) {
    if (node.type() != kSliceBoxingNode) { continue; }
    ASSERT_EQ(node.input_size(), 1);
    // It reads the copy on its own device.
    EXPECT_EQ(graph.node(node.input().at("in_0").node_id()).device_id(), node.device_id());
  }
}

TEST(TaskGraph, OneDeviceToManyBroadcastReadsDirectly) {
  JobBuildContext job(test::MakeJobConf("fan", false));
  std::string x = test::AddInput(job, "x", Shape({6, 5}), kFloat, "0:0");
  test::ForcedIdentity(job, "wide", x, "0:0-3", "B");
  int64_t collectives = 0;
  TaskGraphProto graph = BuildTaskGraph(job.job(), &collectives);
  EXPECT_EQ(Count(graph, kSliceBoxingNode) + Count(graph, kCollectiveNode), 0);
  EXPECT_EQ(NodeNamed(graph, "wide@3").input().at("in_0").node_id(),
            NodeNamed(graph, "x@0").node_id());
}

TEST(TaskGraph, DifferentDeviceCountsAssembleOverlappingParts) {
  TaskGraphProto graph = Chain("0:0-1", "S(0)", "0:1-3", "S(0)");
  ASSERT_EQ(Count(graph, kSliceBoxingNode), 3);
  // Rows 0-2 and 3-5 on two devices; rows 0-1, 2-3, 4-5 on three: the middle part overlaps both.
  const TaskNode& middle =
      NodeNamed(graph, "slice_boxing(first/out_0 0:0,0:1 S(0)->0:1,0:2,0:3 S(0))@1");
  EXPECT_EQ(middle.device_id(), 2);
  EXPECT_EQ(middle.input_size(), 2);
}

TEST(TaskGraph, CollectiveIdsAreUniqueAcrossJobs) {
  int64_t collectives = 0;
  JobBuildContext first(test::MakeJobConf("a", false));
  test::ForcedIdentity(first, "p", test::AddInput(first, "x", Shape({4}), kFloat, "0:0-1"), "0:0-1",
                       "P");
  test::ForcedIdentity(first, "b", "p/out_0", "0:0-1", "B");
  BuildTaskGraph(first.job(), &collectives);
  EXPECT_EQ(collectives, 1);
  BuildTaskGraph(first.job(), &collectives);
  EXPECT_EQ(collectives, 2);
}

}  // namespace
}  // namespace oneflow
