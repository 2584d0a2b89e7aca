#pragma once
// The TaskGraph of one completed Job (proto/task_graph.proto): a compute node per op and
// parallel id, with the boxing nodes that convert each blob between its producer's and its
// consumer's layout, and a source and a sink tick. Lowering a Job to a Plan is a sequence of small
// steps; building this graph is the step between the two:
//   1. every op gets one compute node per device of its placement, with the physical blob
//      descriptions of that device (the balanced split of each blob's logical shape);
//   2. every data edge whose two ends lay the blob out differently goes through
//      boxing::Reshard, which adds the boxing nodes (once per blob and target layout);
//   3. control edges connect the nodes of the two ops (one to one on the same devices, all to
//      all otherwise); nodes without inputs wait for the source tick; nodes nobody reads feed
//      the sink tick.

#include <cstdint>
#include <string>

#include "oneflow/job/placement.h"
#include "proto/job.pb.h"
#include "proto/task_graph.pb.h"

namespace oneflow {

// Graph being built: nodes are appended, never removed.
class TaskGraph {
 public:
  explicit TaskGraph(const std::string& job_name) { proto_.set_job_name(job_name); }
  TaskNode* AddNode(TaskNodeType type, int64_t machine_id, int64_t device_id,
                    const std::string& name);
  TaskNode* Node(int64_t node_id) { return proto_.mutable_node(node_id); }
  const TaskGraphProto& proto() const { return proto_; }
  // Collective ids are unique within a Plan, across its jobs.
  int64_t NewCollectiveId() { return (*next_collective_id_)++; }
  void set_collective_id_counter(int64_t* counter) { next_collective_id_ = counter; }

 private:
  TaskGraphProto proto_;
  int64_t* next_collective_id_ = nullptr;
};

// Builds the TaskGraph of `job` (a Job completed by the pass pipeline). `next_collective_id`
// numbers the collectives across every job of one Plan.
// `resource.gpu_device_num` > 0: ops that resolve to GPUs (device_resolution.h) get GPU nodes,
// with copy nodes where blobs cross between host and GPU memory.
TaskGraphProto BuildTaskGraph(const Job& job, int64_t* next_collective_id,
                              const DeviceResource& resource = DeviceResource());

// Graphviz view: nodes by device, boxing nodes highlighted, edges labelled with blob names.
std::string TaskGraphToDot(const TaskGraphProto& graph);

}  // namespace oneflow
