#pragma once
// Debug dumps: each Job (text), the Plan (text) and the Plan as a Graphviz graph of tasks and
// registers, written to a log folder when debug mode is on (flow.config.enable_debug_mode or
// ONEFLOW_DEBUG_DIR).

#include <string>
#include <vector>

#include "proto/job.pb.h"
#include "proto/plan.pb.h"
#include "proto/task_graph.pb.h"

namespace oneflow {

std::string PlanToDot(const Plan& plan);
// Ops as nodes, blobs and control inputs as edges.
std::string JobToDot(const Job& job);
// Writes <dir>/job_<name>.<stage>.prototxt and .dot; stage is "traced" (as Python built it) or
// "completed" (after the pass pipeline).
void DumpJob(const std::string& dir, const Job& job, const std::string& stage);
// Writes <dir>/task_graph_<job>.prototxt and .dot.
void DumpTaskGraph(const std::string& dir, const TaskGraphProto& graph);
// Writes <dir>/plan.prototxt and <dir>/plan.dot.
void DumpPlan(const std::string& dir, const Plan& plan);

}  // namespace oneflow
