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

// Names of the ops the train-step pass adds; the optimizer pass reads the learning rate.
std::string TrainStepVariableName(const std::string& job_name);
std::string LearningRateLbn(const std::string& job_name);

}  // namespace oneflow
