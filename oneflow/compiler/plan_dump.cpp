#include "oneflow/compiler/plan_dump.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "google/protobuf/text_format.h"
#include "oneflow/common/error.h"

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
    default: break;
  }
  if (task.exec_node_size() == 0) { return "task"; }
  const OperatorConf& op = task.exec_node(0).op_conf();
  return op.name() + "\\n(" + op.op_type() + ")";
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

void DumpJobsAndPlan(const std::string& dir, const std::vector<const Job*>& jobs,
                     const Plan& plan) {
  std::filesystem::create_directories(dir);
  std::string text;
  for (const Job* job : jobs) {
    google::protobuf::TextFormat::PrintToString(*job, &text);
    WriteFile(std::filesystem::path(dir) / ("job_" + job->job_conf().job_name() + ".prototxt"),
              text);
  }
  google::protobuf::TextFormat::PrintToString(plan, &text);
  WriteFile(std::filesystem::path(dir) / "plan.prototxt", text);
  WriteFile(std::filesystem::path(dir) / "plan.dot", PlanToDot(plan));
}

}  // namespace oneflow
