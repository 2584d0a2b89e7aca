#pragma once
// A Job -> Job rewrite. Passes add ops through the JobBuildContext, so everything they add is
// inferred and checked like ops added from Python. The order in which they run is written in
// one place: compiler/pipeline.cpp.

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

}  // namespace oneflow
