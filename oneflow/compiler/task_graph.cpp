#include "oneflow/compiler/task_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "oneflow/common/error.h"
#include "oneflow/compiler/boxing/reshard.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/job/device_resolution.h"
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
  TaskGraphBuilder(const Job& job, int64_t* next_collective_id, const DeviceResource& resource)
      : job_(job), resource_(resource), graph_(job.job_conf().job_name()), job_graph_(job) {
    graph_.set_collective_id_counter(next_collective_id);
  }

  // Machine 0 drives every iteration: its source tick starts it, its sink tick ends it. Another
  // machine of the job has a source tick started by machine 0's (over a transfer) and a sink tick
  // that ends its part and tells machine 0's.
  TaskGraphProto Build() {
    std::set<int64_t> machines;
    for (const OperatorConf& op : job_.op()) {
      for (const DeviceId& device : ParsePlacement(op.placement())) {
        machines.insert(device.machine);
      }
    }
    spans_machines_ = machines.size() > 1 || (machines.size() == 1 && *machines.begin() != 0);
    ResolveDevices();
    SourceOf(0);
    for (const std::string& op_name : job_graph_.TopologicalOrder()) {
      AddOp(job_graph_.Op(op_name));
    }
    AddSinks();
    for (const auto& [machine, source] : std::map<int64_t, int64_t>(sources_)) {
      if (machine != 0) { graph_.Node(source)->add_control_input(SourceOf(0)); }
    }
    LowerCrossMachineEdges();
    ConnectSource();
    return graph_.proto();
  }

 private:
  int64_t SourceOf(int64_t machine) {
    auto it = sources_.find(machine);
    if (it != sources_.end()) { return it->second; }
    const std::string name =
        machine == 0 ? "source_tick" : "source_tick@" + std::to_string(machine);
    return sources_[machine] = graph_.AddNode(kSourceTickNode, machine, 0, name)->node_id();
  }

  // Ops that exchange values with the caller (the values pushed into a call, its results, watched
  // blobs) run where the caller is: on machine 0. Their SBP stays as chosen, so the boxing after
  // an input (before a return) splits (gathers) the blob over the machines as the job says.
  std::vector<DeviceId> DevicesOf(const OperatorConf& op) const {
    std::vector<DeviceId> devices = ParsePlacement(op.placement());
    const std::string& type = op.op_type();
    if (!spans_machines_ || (type != "input" && type != "return" && type != "watch")) {
      return devices;
    }
    if (op.mirrored()) {  // one per device: a dynamic mirrored blob's (ops/interface.cpp)
      throw Error(ErrorKind::kValue)
          << "op '" << op.name() << "' (" << type << ") exchanges each device's own value of a "
          << "mirrored blob whose shape differs per device (a ListNumpy argument given arrays "
          << "of different shapes) with the caller; on several machines such values are not "
          << "supported: give every device an array of one shape";
    }
    for (const DeviceId& device : devices) {
      if (device.machine == 0) { return {device}; }
    }
    return {DeviceId{0, 0}};
  }

  // Whether the op runs on GPUs (device_resolution.h), by the dtype that selects its kernel.
  bool RunsOnGpu(const OperatorConf& op) const {
    if (op.placement().device_tag() != "gpu" || resource_.gpu_device_num == 0) { return false; }
    std::map<std::string, BlobDesc> descs;
    for (const bool is_input : {true, false}) {
      for (const auto& entry : is_input ? op.input() : op.output()) {
        for (int64_t i = 0; i < entry.second.value_size(); ++i) {
          descs[ArgumentKey(entry.first, i)] =
              BlobDesc::FromProto(job_.logical_blob_desc().at(entry.second.value(i)));
        }
      }
    }
    const DataType dtype = KernelDataType(OpRegistry::Instance().Get(op.op_type()), op, descs);
    return ResolveDeviceTag(op, dtype, resource_) == "gpu";
  }

  // Where each op runs. An op that updates an input in place (a MutableInput: an optimizer's
  // model, a step counter) must share that blob's memory with its producer, so the two run on
  // the same kind of device: if either has to run on the host, both do (repeated until no pair
  // differs, since a variable may have several updaters).
  void ResolveDevices() {
    for (const OperatorConf& op : job_.op()) { on_gpu_[op.name()] = RunsOnGpu(op); }
    bool changed = true;
    while (changed) {
      changed = false;
      for (const OperatorConf& op : job_.op()) {
        for (const std::string& argument :
             OpRegistry::Instance().Get(op.op_type()).mutable_inputs) {
          auto it = op.input().find(argument);
          if (it == op.input().end()) { continue; }
          for (const std::string& lbn : it->second.value()) {
            std::string producer, key;
            ParseLbn(lbn, &producer, &key);
            if (on_gpu_.at(producer) != on_gpu_.at(op.name())) {
              on_gpu_[producer] = on_gpu_[op.name()] = false;
              changed = true;
            }
          }
        }
      }
    }
  }

  void AddOp(const OperatorConf& op) {
    const std::vector<DeviceId> devices = DevicesOf(op);
    const int64_t parallel_num = static_cast<int64_t>(devices.size());
    const bool on_gpu = on_gpu_.at(op.name());
    std::vector<int64_t>& nodes = op_nodes_[op.name()];
    for (int64_t id = 0; id < parallel_num; ++id) {
      TaskNode* node = graph_.AddNode(kComputeNode, devices[id].machine, devices[id].device,
                                      op.name() + "@" + std::to_string(id));
      node->set_device_tag(on_gpu ? "gpu" : "cpu");
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
        BlobLayout wanted{devices, SbpOf(op, key), on_gpu};  // (DevicesOf: on machine 0 if pinned)
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
      const bool one_to_one =
          SamePlacement(before.placement(), op.placement()) && before_nodes.size() == nodes.size();
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

  // An edge whose two nodes are on different machines becomes producer -> send node (on the
  // producer's machine) ... recv node -> consumer (on the consumer's machine): the recv node's
  // register stands for the producer's there. One pair per producer and consuming machine; it
  // carries the blobs if any consumer there reads them, else only the tick of a control edge.
  void LowerCrossMachineEdges() {
    const int64_t node_count = graph_.proto().node_size();
    for (int64_t id = 0; id < node_count; ++id) {
      const int64_t machine = graph_.Node(id)->machine_id();
      for (auto& entry : *graph_.Node(id)->mutable_input()) {
        if (graph_.Node(entry.second.node_id())->machine_id() != machine) {
          entry.second.set_node_id(RecvOf(entry.second.node_id(), machine, true));
        }
      }
      auto* controls = graph_.Node(id)->mutable_control_input();
      for (int64_t i = 0; i < controls->size(); ++i) {
        if (graph_.Node(controls->Get(i))->machine_id() != machine) {
          controls->Set(i, RecvOf(controls->Get(i), machine, false));
        }
      }
    }
  }

  int64_t RecvOf(int64_t producer_id, int64_t machine, bool carries_data) {
    auto [it, inserted] = recvs_.emplace(std::make_pair(producer_id, machine), -1);
    if (inserted) {
      const TaskNode& producer = *graph_.Node(producer_id);  // nodes never move
      const int64_t channel = graph_.NewCollectiveId();
      TaskNode* send = graph_.AddNode(kSendNode, producer.machine_id(), producer.device_id(),
                                      "send(" + producer.name() + ")->" + std::to_string(machine));
      send->add_control_input(producer_id);
      send->mutable_channel()->set_channel_id(channel);
      send->mutable_channel()->set_peer_machine(machine);
      // The consumers' machine runs the recv on its first device's thread.
      TaskNode* recv = graph_.AddNode(kRecvNode, machine, 0,
                                      "recv(" + producer.name() + ")@" + std::to_string(machine));
      recv->set_mirrored_node(producer_id);
      recv->mutable_channel()->set_channel_id(channel);
      recv->mutable_channel()->set_peer_machine(producer.machine_id());
      it->second = recv->node_id();
      send_of_recv_[recv->node_id()] = send->node_id();
    }
    if (carries_data) {
      graph_.Node(it->second)->mutable_channel()->set_carries_data(true);
      graph_.Node(send_of_recv_.at(it->second))->mutable_channel()->set_carries_data(true);
    }
    return it->second;
  }

  // Nodes that read nothing (ops without inputs, a boxing part that is all zeros, the recv end of
  // a transfer) act once per iteration when their machine's source tick does; the recv of machine
  // 0's source tick is what starts another machine's iteration.
  void ConnectSource() {
    for (int64_t id = 0; id < graph_.proto().node_size(); ++id) {
      TaskNode* node = graph_.Node(id);
      if (node->type() == kSourceTickNode || !node->input().empty() ||
          !node->control_input().empty()) {
        continue;
      }
      if (node->type() == kRecvNode &&
          graph_.Node(node->mirrored_node())->type() == kSourceTickNode) {
        continue;
      }
      node->add_control_input(SourceOf(node->machine_id()));
    }
  }

  // The nodes holding `lbn`'s parts in the `wanted` layout, boxing it there once.
  const std::vector<int64_t>& PartsIn(const std::string& lbn, const BlobLayout& wanted) {
    std::string producer_name, producer_key;
    ParseLbn(lbn, &producer_name, &producer_key);
    const OperatorConf& producer = job_graph_.Op(producer_name);
    BlobLayout have{DevicesOf(producer), SbpOf(producer, producer_key), on_gpu_.at(producer_name)};
    const std::string memo_key = lbn + "|" + LayoutToString(wanted);
    auto it = boxed_.find(memo_key);
    if (it != boxed_.end()) { return it->second; }
    const BlobDesc logical = BlobDesc::FromProto(job_.logical_blob_desc().at(lbn));
    const int64_t first_new_node = graph_.proto().node_size();
    try {
      std::vector<int64_t> parts =
          Reshard(graph_, lbn, logical, have, op_nodes_.at(producer_name), wanted);
      PaceInputlessParts(first_new_node, op_nodes_.at(producer_name));
      return boxed_[memo_key] = std::move(parts);
    } catch (Error& error) {
      error.AddContext("while boxing blob '" + lbn + "' from " + LayoutToString(have) + " to " +
                       LayoutToString(wanted));
      throw;
    }
  }

  // A boxing node that reads nothing (a part that is all zeros) acts when a producer of the
  // blob does, the one of its device if there is one, else one of its machine: once per piece of
  // the blob, however many pieces an iteration has (framework/time_shape.h), where the source
  // tick would start it once per iteration.
  void PaceInputlessParts(int64_t first_new_node, const std::vector<int64_t>& producers) {
    for (int64_t id = first_new_node; id < graph_.proto().node_size(); ++id) {
      TaskNode* node = graph_.Node(id);
      if (!node->input().empty() || !node->control_input().empty()) { continue; }
      int64_t pace = producers.front();
      int rank = 0;  // 2: same device, 1: same machine
      for (int64_t producer : producers) {
        const TaskNode& candidate = *graph_.Node(producer);
        if (candidate.machine_id() != node->machine_id()) { continue; }
        const int candidate_rank = candidate.device_id() == node->device_id() ? 2 : 1;
        if (candidate_rank > rank) {
          pace = producer;
          rank = candidate_rank;
        }
      }
      node->add_control_input(pace);
    }
  }

  // A node of an op of several pieces per iteration that nobody reads (a device's part of a
  // blob that boxing takes from another device) ends in a node of an acc_tick op counting its
  // pieces, so the sink tick sees one piece of it per iteration.
  int64_t EndOfPieces(int64_t node_id) {
    const TaskNode& node = *graph_.Node(node_id);
    const int64_t pieces = node.exec().op_conf().pieces_per_iteration();
    if (node.type() != kComputeNode || pieces <= 1) { return node_id; }
    std::string name = "System-AccTick-" + node.name();
    std::replace(name.begin(), name.end(), '@', '-');
    OperatorConf op = OpConfBuilder("acc_tick", name).Attr("max_acc_num", pieces).Build();
    (*op.mutable_output())["out"].add_value(MakeLbn(name, "out", 0));
    op.mutable_placement()->set_device_tag("cpu");
    op.mutable_placement()->add_device_name(std::to_string(node.machine_id()) + ":" +
                                            std::to_string(node.device_id()));
    op.set_created_by_pass("task_graph");
    BlobDesc tick;
    tick.shape = Shape({1});
    tick.data_type = kInt8;
    const int64_t machine = node.machine_id(), device = node.device_id();
    TaskNode* end = graph_.AddNode(kComputeNode, machine, device, name + "@0");
    end->set_device_tag("cpu");
    end->set_parallel_id(0);
    ExecNode* exec = end->mutable_exec();
    *exec->mutable_op_conf() = op;
    exec->mutable_parallel_context()->set_parallel_id(0);
    exec->mutable_parallel_context()->set_parallel_num(1);
    (*exec->mutable_argument_blob_desc())["out_0"] = tick.ToProto();
    (*exec->mutable_logical_blob_desc())["out_0"] = tick.ToProto();
    end->add_control_input(node_id);
    return end->node_id();
  }

  // Each machine's sink tick waits for the nodes of that machine nobody there reads (nobody at
  // all, or only another machine): another machine's sink tick then tells machine 0's, with the
  // errors of that machine's part of the iteration.
  void AddSinks() {
    std::set<int64_t> consumed;  // by a node of the same machine
    for (const TaskNode& node : graph_.proto().node()) {
      auto consume = [&](int64_t producer) {
        if (graph_.Node(producer)->machine_id() == node.machine_id()) { consumed.insert(producer); }
      };
      for (const auto& entry : node.input()) { consume(entry.second.node_id()); }
      for (int64_t control : node.control_input()) { consume(control); }
    }
    const int64_t node_count = graph_.proto().node_size();
    std::map<int64_t, int64_t> sinks;  // machine -> its sink tick
    auto sink_of = [&](int64_t machine) {
      auto it = sinks.find(machine);
      if (it != sinks.end()) { return it->second; }
      const std::string name = machine == 0 ? "sink_tick" : "sink_tick@" + std::to_string(machine);
      return sinks[machine] = graph_.AddNode(kSinkTickNode, machine, 0, name)->node_id();
    };
    sink_of(0);
    for (int64_t id = 0; id < node_count; ++id) {
      const TaskNode& node = *graph_.Node(id);
      if (!consumed.count(id) && node.type() != kSourceTickNode) {
        const int64_t machine = node.machine_id();  // EndOfPieces may move the node
        graph_.Node(sink_of(machine))->add_control_input(EndOfPieces(id));
      }
      if (node.machine_id() != 0) { SourceOf(node.machine_id()); }
    }
    for (const auto& [machine, sink] : sinks) {
      if (machine != 0) { graph_.Node(sinks.at(0))->add_control_input(sink); }
    }
  }

  const Job& job_;
  DeviceResource resource_;
  TaskGraph graph_;
  JobGraph job_graph_;
  bool spans_machines_ = false;
  std::map<int64_t, int64_t> sources_;                    // machine -> its source tick
  std::map<std::pair<int64_t, int64_t>, int64_t> recvs_;  // (producer, machine) -> recv node
  std::map<int64_t, int64_t> send_of_recv_;
  std::map<std::string, std::vector<int64_t>> op_nodes_;  // op -> node per parallel id
  std::map<std::string, bool> on_gpu_;                    // op -> whether it runs on GPUs
  std::map<std::string, std::vector<int64_t>> boxed_;     // blob + layout -> its parts
};

const char* NodeColor(TaskNodeType type) {
  switch (type) {
    case kSliceBoxingNode:
      return "lightsalmon";
    case kCopyHdNode:
      return "plum";
    case kCollectiveNode:
      return "gold";
    case kSourceTickNode:
    case kSinkTickNode:
      return "lightgrey";
    case kSendNode:
    case kRecvNode:
      return "palegreen";
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

TaskGraphProto BuildTaskGraph(const Job& job, int64_t* next_collective_id,
                              const DeviceResource& resource) {
  try {
    return TaskGraphBuilder(job, next_collective_id, resource).Build();
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
