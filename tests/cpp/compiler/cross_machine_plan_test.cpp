// Plans whose placements span machines: every edge between two machines becomes a send task on
// the producer's machine and a recv task on the consumer's (one channel id for both), machine 0's
// source tick starts the other machines and their sink ticks end at machine 0's, and the ops
// that talk to the caller (input, return) run on machine 0.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "oneflow/compiler/plan_builder.h"
#include "oneflow/compiler/task_graph.h"
#include "oneflow/framework/op_conf_util.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

DeviceResource TwoMachines() {
  DeviceResource resource;
  resource.machine_num = 2;
  resource.cpu_device_num = 2;
  return resource;
}

// x (input, S(0) over 0:0 and 1:0) -> relu on ["0:0", "1:0"] (S(0)) -> second on 1:0 (B) -> return,
// and second -> leaf on 1:0, which nobody reads (so machine 1 has a sink tick).
Job TwoMachineJob() {
  JobBuildContext job(test::MakeJobConf("two_machines", false), TwoMachines());
  ParallelConf both = test::CpuPlacement("0:0");
  both.add_device_name("1:0");
  job.AddOp(OpConfBuilder("input", "x")
                .Attr("shape", Shape({6, 5}))
                .Attr("dtype", kFloat)
                .Placement(both)
                .Build());
  OperatorConf relu =
      OpConfBuilder("relu", "relu").Input("x", MakeLbn("x", "out")).Placement(both).Build();
  const std::string relu_out = OutputLbn(job.AddOp(relu), "y");
  const std::string second = test::ForcedIdentity(job, "second", relu_out, "1:0", "B");
  job.AddOp(OpConfBuilder("return", "out").Input("in", second).Placement(both).Build());
  test::ForcedIdentity(job, "leaf", second, "1:0", "B");
  return job.job();
}

const TaskNode& NodeNamed(const TaskGraphProto& graph, const std::string& name) {
  for (const TaskNode& node : graph.node()) {
    if (node.name() == name) { return node; }
  }
  ADD_FAILURE() << "no node " << name;
  return graph.node(0);
}

TEST(CrossMachinePlan, EveryEdgeBetweenMachinesIsASendRecvPair) {
  int64_t ids = 0;
  const TaskGraphProto graph = BuildTaskGraph(TwoMachineJob(), &ids);
  std::map<int64_t, const TaskNode*> sends, recvs;  // by channel
  for (const TaskNode& node : graph.node()) {
    if (node.type() == kSendNode) { sends[node.channel().channel_id()] = &node; }
    if (node.type() == kRecvNode) { recvs[node.channel().channel_id()] = &node; }
  }
  ASSERT_FALSE(sends.empty());
  ASSERT_EQ(sends.size(), recvs.size());
  for (const auto& [channel, send] : sends) {
    const TaskNode& recv = *recvs.at(channel);
    EXPECT_NE(send->machine_id(), recv.machine_id());
    EXPECT_EQ(send->channel().peer_machine(), recv.machine_id());
    EXPECT_EQ(recv.channel().peer_machine(), send->machine_id());
    EXPECT_EQ(send->channel().carries_data(), recv.channel().carries_data());
    // The recv stands for the register the send reads.
    ASSERT_EQ(send->control_input_size(), 1);
    EXPECT_EQ(recv.mirrored_node(), send->control_input(0));
  }
  // No node reads a node of another machine any more.
  for (const TaskNode& node : graph.node()) {
    for (const auto& entry : node.input()) {
      EXPECT_EQ(graph.node(entry.second.node_id()).machine_id(), node.machine_id()) << node.name();
    }
    for (int64_t control : node.control_input()) {
      EXPECT_EQ(graph.node(control).machine_id(), node.machine_id()) << node.name();
    }
  }
}

TEST(CrossMachinePlan, MachineZeroDrivesTheIterationAndTalksToTheCaller) {
  int64_t ids = 0;
  const TaskGraphProto graph = BuildTaskGraph(TwoMachineJob(), &ids);
  // input and return run on machine 0 only (their blobs are boxed to and from machine 1).
  EXPECT_EQ(NodeNamed(graph, "x@0").machine_id(), 0);
  EXPECT_EQ(NodeNamed(graph, "out@0").machine_id(), 0);
  for (const TaskNode& node : graph.node()) {
    EXPECT_NE(node.name(), "x@1");
    EXPECT_NE(node.name(), "out@1");
  }
  // Machine 1's source tick reads machine 0's over a channel; its sink tick ends at machine 0's.
  const TaskNode& source1 = NodeNamed(graph, "source_tick@1");
  ASSERT_EQ(source1.control_input_size(), 1);
  const TaskNode& launch = graph.node(source1.control_input(0));
  EXPECT_EQ(launch.type(), kRecvNode);
  EXPECT_EQ(graph.node(launch.mirrored_node()).name(), "source_tick");
  EXPECT_TRUE(launch.input().empty() && launch.control_input().empty());
  const TaskNode& sink0 = NodeNamed(graph, "sink_tick");
  bool hears_machine_1 = false;
  for (int64_t control : sink0.control_input()) {
    const TaskNode& node = graph.node(control);
    if (node.type() == kRecvNode && graph.node(node.mirrored_node()).name() == "sink_tick@1") {
      hears_machine_1 = true;
    }
  }
  EXPECT_TRUE(hears_machine_1);
}

TEST(CrossMachinePlan, TasksKnowTheirMachineAndRecvRegistersMirrorTheSentOnes) {
  const Job job = TwoMachineJob();
  const Plan plan = BuildPlan({&job}, PlanOptions());
  EXPECT_EQ(plan.machine_num(), 2);
  ASSERT_EQ(plan.job_size(), 1);
  EXPECT_EQ(plan.job(0).machine_source_tick_size(), 2);
  EXPECT_EQ(plan.job(0).machine_sink_tick_size(), 2);
  std::map<int64_t, const RegstDescProto*> regsts;
  for (const TaskProto& task : plan.task()) {
    for (const RegstDescProto& regst : task.produced_regst_desc()) {
      regsts[regst.regst_desc_id()] = &regst;
    }
  }
  int data_channels = 0;
  for (const TaskProto& send : plan.task()) {
    if (send.task_type() != kSend) { continue; }
    EXPECT_EQ(send.produced_regst_desc_size(), 0);
    ASSERT_EQ(send.consumed_regst_desc_id_size(), 1);
    const RegstDescProto& sent = *regsts.at(send.consumed_regst_desc_id(0));
    for (const TaskProto& recv : plan.task()) {
      if (recv.task_type() != kRecv || recv.channel().channel_id() != send.channel().channel_id()) {
        continue;
      }
      ASSERT_EQ(recv.produced_regst_desc_size(), 1);
      const RegstDescProto& mirror = recv.produced_regst_desc(0);
      if (!send.channel().carries_data()) {
        EXPECT_EQ(mirror.blob_size(), 0);
        continue;
      }
      ++data_channels;
      ASSERT_EQ(mirror.blob_size(), sent.blob_size());
      for (int i = 0; i < sent.blob_size(); ++i) {
        EXPECT_EQ(mirror.blob(i).lbn(), sent.blob(i).lbn());
        EXPECT_EQ(mirror.blob(i).blob_desc().SerializeAsString(),
                  sent.blob(i).blob_desc().SerializeAsString());
      }
    }
  }
  // x's part for machine 1 goes there, and `second`'s result comes back for the return.
  EXPECT_GE(data_channels, 2);
}

}  // namespace
}  // namespace oneflow
