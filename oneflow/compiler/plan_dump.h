#pragma once
// Debug dumps: each Job (text), the Plan (text) and the Plan as a Graphviz graph of tasks and
// registers, written to a log folder when debug mode is on (flow.config.enable_debug_mode or
// ONEFLOW_DEBUG_DIR).

#include <string>
#include <vector>

#include "proto/job.pb.h"
#include "proto/plan.pb.h"

namespace oneflow {

std::string PlanToDot(const Plan& plan);
// Writes <dir>/job_<name>.prototxt, <dir>/plan.prototxt and <dir>/plan.dot.
void DumpJobsAndPlan(const std::string& dir, const std::vector<const Job*>& jobs,
                     const Plan& plan);

}  // namespace oneflow
