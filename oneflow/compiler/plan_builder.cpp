#include "oneflow/compiler/plan_builder.h"

#include <algorithm>
#include <map>

#include "oneflow/common/alignment.h"
#include "oneflow/common/error.h"
#include "oneflow/compiler/task_graph.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/framework/time_shape.h"
#include "oneflow/job/placement.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

// The part of a collective's blob that its rank holds afterwards.
Shape PhysicalShapeOfRank(const CollectiveTaskProto& collective) {
  return PhysicalShape(Shape(collective.logical_blob_desc().shape()), collective.dst_sbp(),
                       collective.rank(), collective.rank_device_size());
}

TaskType TaskTypeOf(TaskNodeType type) {
  switch (type) {
    case kComputeNode:
    case kSliceBoxingNode:
    case kCopyHdNode:
      return kCompute;
    case kCollectiveNode: return kCollective;
    case kSourceTickNode: return kSourceTick;
    case kSinkTickNode: return kSinkTick;
    case kSendNode:
      return kSend;
    case kRecvNode:
      return kRecv;
    default: break;
  }
  OF_CHECK(false) << "unknown task node type " << type;
  return kInvalidTask;
}

// The values a call pushes for input op `op` of blob `out`: its value, of `out`'s shape; for a
// dynamic (mirrored) input, each device's elements and shape (oneflow/kernels/cpu/interface.cpp).
void AddInputInfo(const OperatorConf& op, const BlobDesc& out, JobInfo* info) {
  auto& inputs = *info->mutable_input();
  if (!out.is_dynamic) {
    inputs[op.name()] = out.ToProto();
    return;
  }
  const int64_t devices = ParallelNum(op.placement());
  inputs[op.name()] = BlobDesc{Shape({devices, out.shape.elem_count()}), out.data_type}.ToProto();
  inputs[op.name() + "/shapes"] =
      BlobDesc{Shape({devices, out.shape.num_axes()}), kInt64}.ToProto();
}

// The pieces a compute node's op makes per iteration (OperatorConf.pieces_per_iteration; 0 for
// any other node).
int64_t PiecesOfNode(const TaskNode& node) {
  if (node.type() != kComputeNode) { return 0; }
  return std::max<int64_t>(1, node.exec().op_conf().pieces_per_iteration());
}

// The pieces per iteration a compute node's op reads of each input (its own count, but for a
// repeat / unpack, N times fewer, and an acc / pack, N times more); 0 for any other node.
int64_t InputPiecesOfNode(const TaskNode& node) {
  const int64_t pieces = PiecesOfNode(node);
  if (pieces == 0) { return 0; }
  const Cycle cycle = CycleOfOp(node.exec().op_conf());
  if (cycle.kind == CycleKind::kExpand) { return pieces / cycle.length; }
  if (cycle.kind == CycleKind::kReduce) { return pieces * cycle.length; }
  return pieces;
}

// Per node: the pieces its registers must hold at once (OperatorConf.held_pieces of its op; a
// boxing or copy node takes its inputs'). Producers come before consumers in node order.
std::vector<int64_t> HeldPieces(const TaskGraphProto& graph) {
  std::vector<int64_t> held(graph.node_size(), 0);
  for (const TaskNode& node : graph.node()) {
    int64_t& pieces = held[node.node_id()];
    if (node.type() == kComputeNode) {
      pieces = node.exec().op_conf().held_pieces();
      continue;
    }
    for (const auto& entry : node.input()) {
      if (entry.second.node_id() < node.node_id()) {
        pieces = std::max(pieces, held[entry.second.node_id()]);
      }
    }
  }
  return held;
}

class PlanBuilder {
 public:
  PlanBuilder(Plan* plan, const PlanOptions& options) : plan_(plan), options_(options) {}

  TaskGraphProto AddJob(const Job& job, int64_t job_id) {
    TaskGraphProto graph = BuildTaskGraph(job, &next_collective_id_, options_.resource);
    std::vector<TaskProto*> tasks;
    const std::vector<int64_t> held = HeldPieces(graph);
    // One task and one produced register desc per node.
    for (const TaskNode& node : graph.node()) {
      TaskProto* task = plan_->add_task();
      task->set_task_id(plan_->task_size() - 1);
      task->set_job_id(job_id);
      task->set_machine_id(node.machine_id());
      const bool on_gpu = node.device_tag() == "gpu";
      task->set_thread_id(
          node.device_id());  // GPU threads are numbered after the CPU ones (Finish)
      task->set_task_type(TaskTypeOf(node.type()));
      task->set_device_tag(on_gpu ? "gpu" : "cpu");
      if (node.has_channel()) { *task->mutable_channel() = node.channel(); }
      tasks.push_back(task);
      // The ends produce nothing: machine 0's sink tick, and a send (its register goes out).
      if ((node.type() == kSinkTickNode && node.machine_id() == 0) || node.type() == kSendNode) {
        continue;
      }
      RegstDescProto* regst = task->add_produced_regst_desc();
      regst->set_regst_desc_id(next_regst_id_++);
      if (on_gpu) {
        // A copy to the host writes pinned memory; everything else on a GPU is in its memory.
        const bool to_host = node.type() == kCopyHdNode &&
                             node.exec().op_conf().attr().at("direction").string_value() == "d2h";
        regst->mutable_memory_case()->set_kind(to_host ? kPinnedHostMemory : kDeviceMemory);
        regst->mutable_memory_case()->set_device_id(node.device_id());
      }
      regst->set_producer_task_id(task->task_id());
      regst->set_register_num(std::max<int64_t>(options_.register_num, held[node.node_id()]));
      if (!node.variable_name().empty()) {
        regst->set_register_num(1);
        regst->set_variable_name(node.variable_name());
        regst->set_variable_parallel_id(node.parallel_id());
      }
      int64_t byte_size = 0;
      auto add_blob = [&](const std::string& lbn, const BlobDescProto& desc) {
        LogicalBlobDescPair* blob = regst->add_blob();
        blob->set_lbn(lbn);
        *blob->mutable_blob_desc() = desc;
        byte_size += AlignedSize(BlobDesc::FromProto(desc).byte_size());
      };
      if (node.type() == kRecvNode && node.channel().carries_data()) {
        // The same blobs as the register it stands for (a variable's too: here in memory of its
        // own).
        for (const LogicalBlobDescPair& blob :
             tasks.at(node.mirrored_node())->produced_regst_desc(0).blob()) {
          add_blob(blob.lbn(), blob.blob_desc());
        }
      } else if (node.type() == kCollectiveNode) {
        *task->mutable_collective() = node.collective();
        const CollectiveTaskProto& collective = node.collective();
        BlobDesc physical = BlobDesc::FromProto(collective.logical_blob_desc());
        physical.shape = PhysicalShapeOfRank(collective);
        add_blob(collective.lbn(), physical.ToProto());
      } else if (node.has_exec()) {
        ExecNode* exec = task->add_exec_node();
        *exec = node.exec();
        *task->mutable_parallel_context() = exec->parallel_context();
        for (const auto& entry : exec->op_conf().output()) {
          for (int64_t i = 0; i < entry.second.value_size(); ++i) {
            add_blob(entry.second.value(i),
                     exec->argument_blob_desc().at(ArgumentKey(entry.first, i)));
          }
        }
      }
      regst->set_byte_size(node.variable_name().empty() ? byte_size : 0);
    }
    // Consumed register descs and input bindings.
    auto regst_of = [&](int64_t node_id) {
      return tasks.at(node_id)->produced_regst_desc(0).regst_desc_id();
    };
    for (const TaskNode& node : graph.node()) {
      TaskProto* task = tasks[node.node_id()];
      std::vector<int64_t> producers;
      auto consume = [&](int64_t producer) {
        if (std::find(producers.begin(), producers.end(), producer) == producers.end()) {
          producers.push_back(producer);
        }
      };
      for (const auto& entry : node.input()) {
        consume(entry.second.node_id());
        BlobBinding binding;
        binding.set_regst_desc_id(regst_of(entry.second.node_id()));
        binding.set_lbn(entry.second.lbn());
        if (node.type() == kCollectiveNode) {
          *task->mutable_collective()->mutable_input() = binding;
        } else {
          (*task->mutable_exec_node(0)->mutable_input_binding())[entry.first] = binding;
        }
      }
      for (int64_t control : node.control_input()) { consume(control); }
      // A task that reads nothing would never act, and the job would hang (the sources are
      // source ticks and, on other machines, the receivers of machine 0's source tick).
      OF_CHECK(!producers.empty() || node.type() == kSourceTickNode || node.type() == kRecvNode)
          << "task graph node '" << node.name() << "' of job '" << graph.job_name()
          << "' reads nothing";
      std::sort(producers.begin(), producers.end());
      for (int64_t producer : producers) {
        task->add_consumed_regst_desc_id(regst_of(producer));
        // The time_shape pass repeats every blob of fewer pieces than its reader makes, except
        // one the reader updates in place: that register is read by each of the reader's acts.
        const int64_t reader_pieces = InputPiecesOfNode(node);
        const int64_t producer_pieces = PiecesOfNode(graph.node(producer));
        if (producer_pieces > 0 && reader_pieces > producer_pieces) {
          OF_CHECK(reader_pieces % producer_pieces == 0)
              << "task graph node '" << node.name() << "' makes " << reader_pieces
              << " pieces per iteration and reads one of " << producer_pieces;
          (*task->mutable_consumed_reads())[regst_of(producer)] = reader_pieces / producer_pieces;
        }
        RegstDescProto* produced = tasks[producer]->mutable_produced_regst_desc(0);
        produced->add_consumer_task_id(task->task_id());
        // A host register copied to a GPU is pinned, so the copy runs asynchronously (a
        // variable's aliases the session's memory and stays as it is).
        if (node.type() == kCopyHdNode && produced->memory_case().kind() == kHostMemory &&
            produced->variable_name().empty()) {
          produced->mutable_memory_case()->set_kind(kPinnedHostMemory);
          produced->mutable_memory_case()->set_device_id(node.device_id());
        }
      }
    }
    JobInfo* info = plan_->add_job();
    info->set_job_id(job_id);
    info->set_job_name(job.job_conf().job_name());
    for (const TaskNode& node : graph.node()) {
      const int64_t task_id = tasks[node.node_id()]->task_id();
      if (node.type() == kSourceTickNode) {
        (*info->mutable_machine_source_tick())[node.machine_id()] = task_id;
        if (node.machine_id() == 0) { info->set_source_tick_task_id(task_id); }
      } else if (node.type() == kSinkTickNode) {
        (*info->mutable_machine_sink_tick())[node.machine_id()] = task_id;
        if (node.machine_id() == 0) { info->set_sink_tick_task_id(task_id); }
      }
    }
    for (const OperatorConf& op : job.op()) {
      if (op.op_type() == "input") {
        AddInputInfo(op, BlobDesc::FromProto(job.logical_blob_desc().at(OutputLbn(op, "out"))),
                     info);
      } else if (op.op_type() == "return") {
        (*info->mutable_output())[op.name()] = job.logical_blob_desc().at(InputLbn(op, "in"));
      }
    }
    return graph;
  }

  // Thread ids: CPU device d runs on thread d, GPU device g on thread (CPU threads + g).
  void Finish() {
    int64_t cpu_threads = 1;
    int64_t gpu_threads = 0;
    for (const TaskProto& task : plan_->task()) {
      int64_t& count = task.device_tag() == "gpu" ? gpu_threads : cpu_threads;
      count = std::max(count, task.thread_id() + 1);
      plan_->set_machine_num(std::max(plan_->machine_num(), task.machine_id() + 1));
    }
    for (TaskProto& task : *plan_->mutable_task()) {
      if (task.device_tag() == "gpu") { task.set_thread_id(cpu_threads + task.thread_id()); }
    }
    plan_->set_thread_num(cpu_threads + gpu_threads);
    for (int64_t i = 0; i < cpu_threads + gpu_threads; ++i) {
      ThreadProto* thread = plan_->add_thread();
      thread->set_device_tag(i < cpu_threads ? "cpu" : "gpu");
      thread->set_device_id(i < cpu_threads ? i : i - cpu_threads);
    }
  }

 private:
  Plan* plan_;
  PlanOptions options_;
  int64_t next_regst_id_ = 0;
  int64_t next_collective_id_ = 0;
};

}  // namespace

Plan BuildPlan(const std::vector<const Job*>& jobs, const PlanOptions& options,
               std::vector<TaskGraphProto>* task_graphs) {
  Plan plan;
  PlanBuilder builder(&plan, options);
  for (size_t job_id = 0; job_id < jobs.size(); ++job_id) {
    TaskGraphProto graph = builder.AddJob(*jobs[job_id], static_cast<int64_t>(job_id));
    if (task_graphs != nullptr) { task_graphs->push_back(std::move(graph)); }
  }
  builder.Finish();
  return plan;
}

}  // namespace oneflow
