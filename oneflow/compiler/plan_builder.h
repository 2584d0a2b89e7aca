#pragma once
// Lowers completed Jobs to one Plan, in two steps per job: BuildTaskGraph (task_graph.h: a node
// per op and device, boxing nodes, ticks), then one task per node. Each task produces one
// register desc holding its outputs (physical blobs), consumes the register descs of the nodes
// it reads (each input bound to a register and a blob name), and runs on the thread of its
// device. Variables' registers alias the session's variable parts.

#include <string>
#include <vector>

#include "oneflow/job/placement.h"
#include "proto/job.pb.h"
#include "proto/plan.pb.h"
#include "proto/task_graph.pb.h"

namespace oneflow {

struct PlanOptions {
  // Registers per data register desc: the pipelining window between producer and consumers.
  int64_t register_num = 2;
  // The devices of each machine; gpu_device_num > 0 puts ops that resolve to GPUs on GPU threads
  // (device_resolution.h).
  DeviceResource resource;
};

// `task_graphs`, when given, receives each job's TaskGraph (for debug dumps).
Plan BuildPlan(const std::vector<const Job*>& jobs, const PlanOptions& options,
               std::vector<TaskGraphProto>* task_graphs = nullptr);

}  // namespace oneflow
