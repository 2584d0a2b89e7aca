#pragma once
// Lowers completed Jobs to one Plan. Each op becomes one compute task (one per device once
// several devices arrive, with boxing tasks between them) producing one register desc that
// holds all its outputs. Each job also gets a source tick task, which starts one iteration per
// launched job instance and feeds every op without inputs, and a sink tick task, which consumes
// every register nobody else reads and finishes the instance.

#include <vector>

#include "proto/job.pb.h"
#include "proto/plan.pb.h"

namespace oneflow {

struct PlanOptions {
  // Registers per data register desc: the pipelining window between producer and consumers.
  int64_t register_num = 2;
};

Plan BuildPlan(const std::vector<const Job*>& jobs, const PlanOptions& options);

}  // namespace oneflow
