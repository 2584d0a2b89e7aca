#include "oneflow/compiler/plan_builder.h"

#include <algorithm>
#include <map>

#include "oneflow/common/error.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/job/job_graph.h"
#include "oneflow/job/placement.h"

namespace oneflow {

namespace {

constexpr int64_t kBlobAlignment = 64;

int64_t AlignUp(int64_t bytes) { return (bytes + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment; }

class PlanBuilder {
 public:
  PlanBuilder(Plan* plan, const PlanOptions& options) : plan_(plan), options_(options) {}

  void AddJob(const Job& job, int64_t job_id) {
    JobGraph graph(job);
    JobInfo* info = plan_->add_job();
    info->set_job_id(job_id);
    info->set_job_name(job.job_conf().job_name());

    TaskProto* source = NewTask(job_id, kSourceTick, /*thread_id=*/0);
    RegstDescProto* source_regst = NewRegst(source, options_.register_num);
    info->set_source_tick_task_id(source->task_id());
    const int64_t source_regst_id = source_regst->regst_desc_id();

    std::map<std::string, int64_t> op_to_regst;
    for (const std::string& op_name : graph.TopologicalOrder()) {
      const OperatorConf& op = graph.Op(op_name);
      std::vector<DeviceId> devices = ParsePlacement(op.placement());
      OF_CHECK(devices.size() == 1) << "op '" << op_name << "' on several devices";
      TaskProto* task = NewTask(job_id, kCompute, devices.front().device);
      task->set_device_tag("cpu");
      ExecNode* exec = task->add_exec_node();
      *exec->mutable_op_conf() = op;
      exec->mutable_parallel_context()->set_parallel_num(1);
      *task->mutable_parallel_context() = exec->parallel_context();
      auto& argument_descs = *exec->mutable_argument_blob_desc();
      for (const auto& entry : op.input()) {
        for (int64_t i = 0; i < entry.second.value_size(); ++i) {
          argument_descs[ArgumentKey(entry.first, i)] =
              job.logical_blob_desc().at(entry.second.value(i));
        }
      }
      const bool is_variable = op.op_type() == "variable";
      RegstDescProto* regst = NewRegst(task, is_variable ? 1 : options_.register_num);
      if (is_variable) { regst->set_variable_name(op.name()); }
      int64_t byte_size = 0;
      for (const auto& entry : op.output()) {
        for (int64_t i = 0; i < entry.second.value_size(); ++i) {
          const std::string& lbn = entry.second.value(i);
          const BlobDescProto& desc = job.logical_blob_desc().at(lbn);
          argument_descs[ArgumentKey(entry.first, i)] = desc;
          LogicalBlobDescPair* blob = regst->add_blob();
          blob->set_lbn(lbn);
          *blob->mutable_blob_desc() = desc;
          byte_size += AlignUp(BlobDesc::FromProto(desc).byte_size());
        }
      }
      regst->set_byte_size(is_variable ? 0 : byte_size);
      op_to_regst[op_name] = regst->regst_desc_id();

      std::vector<int64_t> consumed;
      auto consume = [&](int64_t regst_id) {
        if (std::find(consumed.begin(), consumed.end(), regst_id) == consumed.end()) {
          consumed.push_back(regst_id);
        }
      };
      for (const auto& entry : op.input()) {
        for (const std::string& lbn : entry.second.value()) {
          consume(op_to_regst.at(graph.Producer(lbn)));
        }
      }
      for (const std::string& control : op.control_input()) { consume(op_to_regst.at(control)); }
      if (consumed.empty()) { consume(source_regst_id); }
      for (int64_t regst_id : consumed) {
        task->add_consumed_regst_desc_id(regst_id);
        regsts_.at(regst_id)->add_consumer_task_id(task->task_id());
      }

      if (op.op_type() == "input") {
        (*info->mutable_input())[op_name] = job.logical_blob_desc().at(OutputLbn(op, "out"));
      } else if (op.op_type() == "return") {
        (*info->mutable_output())[op_name] = job.logical_blob_desc().at(InputLbn(op, "in"));
      }
    }

    TaskProto* sink = NewTask(job_id, kSinkTick, /*thread_id=*/0);
    info->set_sink_tick_task_id(sink->task_id());
    for (const auto& entry : op_to_regst) {
      RegstDescProto* regst = regsts_.at(entry.second);
      if (regst->consumer_task_id_size() == 0) {
        sink->add_consumed_regst_desc_id(regst->regst_desc_id());
        regst->add_consumer_task_id(sink->task_id());
      }
    }
    if (sink->consumed_regst_desc_id_size() == 0) {  // a job without ops
      sink->add_consumed_regst_desc_id(source_regst_id);
      source_regst->add_consumer_task_id(sink->task_id());
    }
  }

 private:
  TaskProto* NewTask(int64_t job_id, TaskType type, int64_t thread_id) {
    TaskProto* task = plan_->add_task();
    task->set_task_id(plan_->task_size() - 1);
    task->set_job_id(job_id);
    task->set_machine_id(0);
    task->set_thread_id(thread_id);
    task->set_task_type(type);
    plan_->set_thread_num(std::max(plan_->thread_num(), thread_id + 1));
    return task;
  }

  RegstDescProto* NewRegst(TaskProto* task, int64_t register_num) {
    RegstDescProto* regst = task->add_produced_regst_desc();
    regst->set_regst_desc_id(next_regst_id_++);
    regst->set_producer_task_id(task->task_id());
    regst->set_register_num(register_num);
    regsts_[regst->regst_desc_id()] = regst;
    return regst;
  }

  Plan* plan_;
  PlanOptions options_;
  int64_t next_regst_id_ = 0;
  // Pointers into plan_ stay valid: repeated message fields own their elements.
  std::map<int64_t, RegstDescProto*> regsts_;
};

}  // namespace

Plan BuildPlan(const std::vector<const Job*>& jobs, const PlanOptions& options) {
  Plan plan;
  PlanBuilder builder(&plan, options);
  for (size_t job_id = 0; job_id < jobs.size(); ++job_id) {
    builder.AddJob(*jobs[job_id], static_cast<int64_t>(job_id));
  }
  return plan;
}

}  // namespace oneflow
