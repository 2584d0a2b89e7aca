#pragma once
// The compiler's pass pipeline: the readable spec of how a traced Job is completed.

#include <memory>
#include <vector>

#include "oneflow/compiler/pass.h"

namespace oneflow {

std::vector<std::unique_ptr<Pass>> MakeJobPassPipeline();
// Runs the pipeline on `job`; errors get the context "while running pass '<name>' on job '<job>'".
void CompleteJob(JobBuildContext& job);

// Factories, one per pass file.
std::unique_ptr<Pass> MakeTrainStepPass();
std::unique_ptr<Pass> MakeAutogradPass();
std::unique_ptr<Pass> MakeOptimizerPass();
std::unique_ptr<Pass> MakeWatchDiffPass();
std::unique_ptr<Pass> MakeVariableOrderingPass();

}  // namespace oneflow

namespace oneflow {

// Names of what the train-step pass adds; the autograd and optimizer passes read them.
std::string TrainStepVariableName(const std::string& job_name);
// The learning rate of the job's optimizer number `optimizer_index` (train_conf.optimizer).
std::string LearningRateLbn(const std::string& job_name, int64_t optimizer_index = 0);
std::string LossScaleVariableName(const std::string& job_name);
std::string GoodStepCounterVariableName(const std::string& job_name);

}  // namespace oneflow
