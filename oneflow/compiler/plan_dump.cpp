#include "oneflow/compiler/plan_dump.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "google/protobuf/text_format.h"
#include "oneflow/comm/communicator.h"
#include "oneflow/common/error.h"
#include "oneflow/common/shape.h"
#include "oneflow/compiler/task_graph.h"
#include "oneflow/sbp/sbp_inference.h"

namespace oneflow {

namespace {

void WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::ofstream file(path);
  if (!file) { throw Error(ErrorKind::kRuntime) << "cannot write debug dump " << path.string(); }
  file << content;
}

std::string TaskLabel(const TaskProto& task) {
  switch (task.task_type()) {
    case kSourceTick: return "source_tick";
    case kSinkTick: return "sink_tick";
    case kCollective: {
      const CollectiveTaskProto& collective = task.collective();
      return std::string(CollectiveKindName(collective.kind())) + " " + collective.lbn() + "\\nrank " +
             std::to_string(collective.rank()) + " of " +
             std::to_string(collective.rank_device_size());
    }
    default: break;
  }
  if (task.exec_node_size() == 0) { return "task"; }
  const OperatorConf& op = task.exec_node(0).op_conf();
  const ParallelContext& parallel = task.exec_node(0).parallel_context();
  return op.name() + "\\n(" + op.op_type() + ") part " + std::to_string(parallel.parallel_id()) +
         "/" + std::to_string(parallel.parallel_num());
}

std::string DevicesText(const ParallelConf& placement) {
  std::string text;
  for (const std::string& name : placement.device_name()) { text += (text.empty() ? "" : ",") + name; }
  return placement.device_tag() + " " + text;
}

}  // namespace

std::string PlanToDot(const Plan& plan) {
  std::string dot = "digraph plan {\n  node [shape=box, fontsize=10];\n";
  std::map<int64_t, const RegstDescProto*> regsts;
  for (const TaskProto& task : plan.task()) {
    dot += "  task" + std::to_string(task.task_id()) + " [label=\"" + TaskLabel(task) +
           "\\njob " + std::to_string(task.job_id()) + " thread " +
           std::to_string(task.thread_id()) + "\"];\n";
    for (const RegstDescProto& regst : task.produced_regst_desc()) {
      regsts[regst.regst_desc_id()] = &regst;
    }
  }
  for (const auto& entry : regsts) {
    const RegstDescProto& regst = *entry.second;
    for (int64_t consumer : regst.consumer_task_id()) {
      dot += "  task" + std::to_string(regst.producer_task_id()) + " -> task" +
             std::to_string(consumer) + " [label=\"regst " + std::to_string(regst.regst_desc_id()) +
             " x" + std::to_string(regst.register_num()) + "\", fontsize=8" +
             (regst.blob_size() == 0 ? ", style=dashed" : "") + "];\n";
    }
  }
  return dot + "}\n";
}

std::string JobToDot(const Job& job) {
  std::string dot = "digraph job {\n  node [shape=box, fontsize=10];\n";
  std::map<std::string, std::string> producer;
  for (const OperatorConf& op : job.op()) {
    const std::string sbp = SbpSignatureToString(op.sbp_signature());
    dot += "  \"" + op.name() + "\" [label=\"" + op.name() + "\\n(" + op.op_type() + ") " +
           DevicesText(op.placement()) +
           "\\n" + sbp + "\"" + (op.created_by_pass().empty() ? "" : ", style=dashed") + "];\n";
    for (const auto& entry : op.output()) {
      for (const std::string& lbn : entry.second.value()) { producer[lbn] = op.name(); }
    }
  }
  for (const OperatorConf& op : job.op()) {
    for (const auto& entry : op.input()) {
      for (const std::string& lbn : entry.second.value()) {
        auto it = job.logical_blob_desc().find(lbn);
        std::string label = entry.first;
        if (it != job.logical_blob_desc().end()) {
          label += " " + BlobDesc::FromProto(it->second).ToString();
        }
        dot += "  \"" + producer[lbn] + "\" -> \"" + op.name() + "\" [label=\"" + label +
               "\", fontsize=8];\n";
      }
    }
    for (const std::string& control : op.control_input()) {
      dot += "  \"" + control + "\" -> \"" + op.name() + "\" [style=dotted];\n";
    }
  }
  return dot + "}\n";
}

void DumpJob(const std::string& dir, const Job& job, const std::string& stage) {
  std::filesystem::create_directories(dir);
  std::string text;
  google::protobuf::TextFormat::PrintToString(job, &text);
  const std::string base = "job_" + job.job_conf().job_name() + "." + stage;
  WriteFile(std::filesystem::path(dir) / (base + ".prototxt"), text);
  WriteFile(std::filesystem::path(dir) / (base + ".dot"), JobToDot(job));
}

void DumpTaskGraph(const std::string& dir, const TaskGraphProto& graph) {
  std::filesystem::create_directories(dir);
  std::string text;
  google::protobuf::TextFormat::PrintToString(graph, &text);
  const std::string base = "task_graph_" + graph.job_name();
  WriteFile(std::filesystem::path(dir) / (base + ".prototxt"), text);
  WriteFile(std::filesystem::path(dir) / (base + ".dot"), TaskGraphToDot(graph));
}

void DumpPlan(const std::string& dir, const Plan& plan) {
  std::filesystem::create_directories(dir);
  std::string text;
  google::protobuf::TextFormat::PrintToString(plan, &text);
  WriteFile(std::filesystem::path(dir) / "plan.prototxt", text);
  WriteFile(std::filesystem::path(dir) / "plan.dot", PlanToDot(plan));
}

}  // namespace oneflow
