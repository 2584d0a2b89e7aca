#pragma once
// The compiler's pass pipeline: the readable spec of how a traced Job is completed.

#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "oneflow/compiler/pass.h"

namespace oneflow {

std::vector<std::unique_ptr<Pass>> MakeJobPassPipeline();
// Runs the pipeline on `job`; errors get the context "while running pass '<name>' on job '<job>'".
void CompleteJob(JobBuildContext& job);

// Factories, one per pass file.
std::unique_ptr<Pass> MakeAutoMixedPrecisionPass();
std::unique_ptr<Pass> MakeTrainStepPass();
std::unique_ptr<Pass> MakeQuantizationAwareTrainingPass();
std::unique_ptr<Pass> MakeAutogradPass();
std::unique_ptr<Pass> MakeOptimizerPass();
std::unique_ptr<Pass> MakeWatchDiffPass();
std::unique_ptr<Pass> MakeVariableOrderingPass();
std::unique_ptr<Pass> MakeTimeShapePass();

}  // namespace oneflow

namespace oneflow {

// Names of what the train-step pass adds; the autograd and optimizer passes read them. The
// variables are named after TrainStateName(job conf): its train_state_name, else the job's name.
std::string TrainStateName(const JobConf& conf);
std::string TrainStepVariableName(const std::string& job_name);
// The learning rate of the job's optimizer number `optimizer_index` (train_conf.optimizer).
std::string LearningRateLbn(const std::string& job_name, int64_t optimizer_index = 0);
std::string LossScaleVariableName(const std::string& job_name);
std::string GoodStepCounterVariableName(const std::string& job_name);
// A persistent variable of the system (not trained), every element `initial_value`.
OperatorConf SystemVariable(const std::string& name, const Shape& shape, DataType data_type,
                            double initial_value);

// The op types of the auto_mixed_precision pass (compiler/passes/auto_mixed_precision.cpp).
struct AutoMixedPrecisionLists {
  std::set<std::string> white;  // float16 whenever they run on GPUs
  std::set<std::string> black;  // float32 always; what they feed through gray ops too
  std::set<std::string> gray;   // float16 between white ops
  std::set<std::string> clear;  // only move data: float16 next to white ops
  // Inputs (op type -> argument names) that stay float32 when their op runs in float16: the
  // per-channel blobs of batch normalization (OneFlow's no-cast registry).
  std::map<std::string, std::set<std::string>> float32_inputs;
};
const AutoMixedPrecisionLists& DefaultAutoMixedPrecisionLists();

}  // namespace oneflow
