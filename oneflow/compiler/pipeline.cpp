#include "oneflow/compiler/pipeline.h"

namespace oneflow {

std::vector<std::unique_ptr<Pass>> MakeJobPassPipeline() {
  std::vector<std::unique_ptr<Pass>> passes;
  // Jobs with enable_auto_mixed_precision, before autograd differentiates the forward:
  passes.push_back(MakeAutoMixedPrecisionPass());  // float16 casts around GPU matmuls/convs
  // Jobs with flow.repeat / flow.unpack: repeats where piece counts differ (again last).
  passes.push_back(MakeTimeShapePass());
  // Train jobs only (each pass checks job_conf.is_train):
  passes.push_back(MakeTrainStepPass());    // train step counter + learning rate op
  // Jobs with enable_qat, on the forward ops (observers of train jobs read the train step):
  passes.push_back(MakeQuantizationAwareTrainingPass());  // fake quantization around int8 ops
  // Train jobs only:
  passes.push_back(MakeAutogradPass());     // backward ops from each op's gradient rule
  passes.push_back(MakeOptimizerPass());    // one update op per trainable variable
  passes.push_back(MakeWatchDiffPass());    // watch ops on the gradients Python asked for
  // All jobs:
  passes.push_back(MakeVariableOrderingPass());  // in-place updates wait for every reader
  passes.push_back(MakeTimeShapePass());  // the later passes' edges, waits on repeated ops
  return passes;
}

void CompleteJob(JobBuildContext& job) {
  for (const auto& pass : MakeJobPassPipeline()) {
    try {
      pass->Apply(job);
    } catch (Error& error) {
      error.AddContext("while running pass '" + pass->name() + "' on job '" + job.job_name() +
                       "'");
      throw;
    }
  }
}

}  // namespace oneflow
