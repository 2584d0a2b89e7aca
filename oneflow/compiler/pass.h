#pragma once
// A Job -> Job rewrite. Passes add ops through the JobBuildContext, so everything they add is
// inferred and checked like ops added from Python. The order in which they run is written in
// one place: compiler/pipeline.cpp.

#include <functional>
#include <string>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/job/job_build_context.h"

namespace oneflow {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual void Apply(JobBuildContext& job) const = 0;
};

// The new lbn input (`argument`, `index`) of `op` reads instead of `lbn`, or `lbn`; ops it needs
// (a cast, a fake quantization) it adds to `rewritten` first.
using InputRewrite = std::function<std::string(const OperatorConf& op,
                                               const std::string& argument, int64_t index,
                                               const std::string& lbn,
                                               JobBuildContext& rewritten)>;
// `job` re-added op by op to a fresh context (so every op is inferred again), each input as
// `rewrite` says; the gradient records and watches carried over. An op of `job` the rewrite
// added itself, earlier than its turn (an input-less op its new ops read), is not added again.
JobBuildContext RewriteInputs(const JobBuildContext& job, const InputRewrite& rewrite);

}  // namespace oneflow
