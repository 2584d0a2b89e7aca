#include "oneflow/compiler/task_graph.h"

#include <map>
#include <set>
#include <sstream>

#include "oneflow/common/error.h"
#include "oneflow/compiler/boxing/reshard.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/job/job_graph.h"
#include "oneflow/job/placement.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

TaskNode* TaskGraph::AddNode(TaskNodeType type, int64_t machine_id, int64_t device_id,
                             const std::string& name) {
  TaskNode* node = proto_.add_node();
  node->set_node_id(proto_.node_size() - 1);
  node->set_type(type);
  node->set_machine_id(machine_id);
  node->set_device_id(device_id);
  node->set_name(name);
  return node;
}

namespace {

SbpParallel SbpOf(const OperatorConf& op, const std::string& key) {
  auto it = op.sbp_signature().argument_to_sbp().find(key);
  return it == op.sbp_signature().argument_to_sbp().end() ? BroadcastSbp() : it->second;
}

class TaskGraphBuilder {
 public:
  TaskGraphBuilder(const Job& job, int64_t* next_collective_id)
      : job_(job), graph_(job.job_conf().job_name()), job_graph_(job) {
    graph_.set_collective_id_counter(next_collective_id);
  }

  TaskGraphProto Build() {
    source_ = graph_.AddNode(kSourceTickNode, 0, 0, "source_tick")->node_id();
    for (const std::string& op_name : job_graph_.TopologicalOrder()) {
      AddOp(job_graph_.Op(op_name));
    }
    ConnectSource();
    AddSink();
    return graph_.proto();
  }

 private:
  void AddOp(const OperatorConf& op) {
    const std::vector<DeviceId> devices = ParsePlacement(op.placement());
    const int64_t parallel_num = static_cast<int64_t>(devices.size());
    std::vector<int64_t>& nodes = op_nodes_[op.name()];
    for (int64_t id = 0; id < parallel_num; ++id) {
      TaskNode* node = graph_.AddNode(kComputeNode, devices[id].machine, devices[id].device,
                                      op.name() + "@" + std::to_string(id));
      node->set_parallel_id(id);
      if (op.op_type() == "variable") { node->set_variable_name(op.name()); }
      ExecNode* exec = node->mutable_exec();
      *exec->mutable_op_conf() = op;
      exec->mutable_parallel_context()->set_parallel_id(id);
      exec->mutable_parallel_context()->set_parallel_num(parallel_num);
      for (const bool is_input : {true, false}) {
        for (const auto& entry : is_input ? op.input() : op.output()) {
          for (int64_t i = 0; i < entry.second.value_size(); ++i) {
            const std::string key = ArgumentKey(entry.first, i);
            const BlobDescProto& logical = job_.logical_blob_desc().at(entry.second.value(i));
            BlobDesc physical = BlobDesc::FromProto(logical);
            physical.shape = PhysicalShape(physical.shape, SbpOf(op, key), id, parallel_num);
            (*exec->mutable_argument_blob_desc())[key] = physical.ToProto();
            (*exec->mutable_logical_blob_desc())[key] = logical;
          }
        }
      }
      nodes.push_back(node->node_id());
    }
    for (const auto& entry : op.input()) {
      for (int64_t i = 0; i < entry.second.value_size(); ++i) {
        const std::string& lbn = entry.second.value(i);
        const std::string key = ArgumentKey(entry.first, i);
        BlobLayout wanted{devices, SbpOf(op, key)};
        const std::vector<int64_t>& parts = PartsIn(lbn, wanted);
        for (int64_t id = 0; id < parallel_num; ++id) {
          TaskInput& input = (*graph_.Node(nodes[id])->mutable_input())[key];
          input.set_node_id(parts[id]);
          input.set_lbn(lbn);
        }
      }
    }
    for (const std::string& control : op.control_input()) {
      const OperatorConf& before = job_graph_.Op(control);
      const std::vector<int64_t>& before_nodes = op_nodes_.at(control);
      const bool one_to_one = SamePlacement(before.placement(), op.placement());
      for (int64_t id = 0; id < parallel_num; ++id) {
        TaskNode* node = graph_.Node(nodes[id]);
        if (one_to_one) {
          node->add_control_input(before_nodes[id]);
        } else {
          for (int64_t before_node : before_nodes) { node->add_control_input(before_node); }
        }
      }
    }
  }

  // Nodes that read nothing (ops without inputs, a boxing part that is all zeros) act once per
  // iteration when the source tick does.
  void ConnectSource() {
    for (int64_t id = 0; id < graph_.proto().node_size(); ++id) {
      TaskNode* node = graph_.Node(id);
      if (id != source_ && node->input().empty() && node->control_input().empty()) {
        node->add_control_input(source_);
      }
    }
  }

  // The nodes holding `lbn`'s parts in the `wanted` layout, boxing it there once.
  const std::vector<int64_t>& PartsIn(const std::string& lbn, const BlobLayout& wanted) {
    std::string producer_name, producer_key;
    ParseLbn(lbn, &producer_name, &producer_key);
    const OperatorConf& producer = job_graph_.Op(producer_name);
    BlobLayout have{ParsePlacement(producer.placement()), SbpOf(producer, producer_key)};
    const std::string memo_key = lbn + "|" + LayoutToString(wanted);
    auto it = boxed_.find(memo_key);
    if (it != boxed_.end()) { return it->second; }
    const BlobDesc logical = BlobDesc::FromProto(job_.logical_blob_desc().at(lbn));
    try {
      return boxed_[memo_key] =
                 Reshard(graph_, lbn, logical, have, op_nodes_.at(producer_name), wanted);
    } catch (Error& error) {
      error.AddContext("while boxing blob '" + lbn + "' from " + LayoutToString(have) + " to " +
                       LayoutToString(wanted));
      throw;
    }
  }

  void AddSink() {
    std::set<int64_t> consumed;
    for (const TaskNode& node : graph_.proto().node()) {
      for (const auto& entry : node.input()) { consumed.insert(entry.second.node_id()); }
      for (int64_t control : node.control_input()) { consumed.insert(control); }
    }
    const int64_t node_count = graph_.proto().node_size();
    TaskNode* sink = graph_.AddNode(kSinkTickNode, 0, 0, "sink_tick");
    for (int64_t id = 0; id < node_count; ++id) {
      if (!consumed.count(id)) { sink->add_control_input(id); }
    }
  }

  const Job& job_;
  TaskGraph graph_;
  JobGraph job_graph_;
  int64_t source_ = -1;
  std::map<std::string, std::vector<int64_t>> op_nodes_;  // op -> node per parallel id
  std::map<std::string, std::vector<int64_t>> boxed_;     // blob + layout -> its parts
};

const char* NodeColor(TaskNodeType type) {
  switch (type) {
    case kSliceBoxingNode:
      return "lightsalmon";
    case kCollectiveNode:
      return "gold";
    case kSourceTickNode:
    case kSinkTickNode:
      return "lightgrey";
    default:
      return "lightblue";
  }
}

std::string Quoted(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') { quoted += '\\'; }
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

TaskGraphProto BuildTaskGraph(const Job& job, int64_t* next_collective_id) {
  try {
    return TaskGraphBuilder(job, next_collective_id).Build();
  } catch (Error& error) {
    error.AddContext("while building the task graph of job '" + job.job_conf().job_name() + "'");
    throw;
  }
}

std::string TaskGraphToDot(const TaskGraphProto& graph) {
  std::ostringstream dot;
  dot << "digraph " << Quoted("task_graph_" + graph.job_name()) << " {\n  rankdir=TB;\n"
      << "  node [shape=box, style=filled, fontname=monospace, fontsize=10];\n";
  std::map<std::pair<int64_t, int64_t>, std::vector<const TaskNode*>> by_device;
  for (const TaskNode& node : graph.node()) {
    by_device[{node.machine_id(), node.device_id()}].push_back(&node);
  }
  for (const auto& entry : by_device) {
    const std::string device =
        std::to_string(entry.first.first) + ":" + std::to_string(entry.first.second);
    dot << "  subgraph " << Quoted("cluster_" + device)
        << " {\n    label=" << Quoted("device " + device) << ";\n";
    for (const TaskNode* node : entry.second) {
      dot << "    n" << node->node_id() << " [label=" << Quoted(node->name())
          << ", fillcolor=" << NodeColor(node->type()) << "];\n";
    }
    dot << "  }\n";
  }
  for (const TaskNode& node : graph.node()) {
    for (const auto& entry : node.input()) {
      dot << "  n" << entry.second.node_id() << " -> n" << node.node_id()
          << " [label=" << Quoted(entry.second.lbn()) << "];\n";
    }
    for (int64_t control : node.control_input()) {
      dot << "  n" << control << " -> n" << node.node_id() << " [style=dotted];\n";
    }
  }
  dot << "}\n";
  return dot.str();
}

}  // namespace oneflow
