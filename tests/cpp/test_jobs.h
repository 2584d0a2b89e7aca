#pragma once
// Small hand-built jobs shared by the C++ tests.

#include "oneflow/common/error.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/job/job_build_context.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {
namespace test {

inline JobConf MakeJobConf(const std::string& name, bool is_train) {
  JobConf conf;
  conf.set_job_name(name);
  conf.set_is_train(is_train);
  conf.set_default_data_type(kFloat);
  return conf;
}

// A CPU placement, e.g. CpuPlacement("0:0-3").
inline ParallelConf CpuPlacement(const std::string& devices) {
  ParallelConf conf;
  conf.set_device_tag("cpu");
  conf.add_device_name(devices);
  return conf;
}

inline std::string AddInput(JobBuildContext& job, const std::string& name, const Shape& shape,
                            DataType data_type = kFloat,
                            const std::string& devices = "0:0") {
  job.AddOp(OpConfBuilder("input", name)
                .Attr("shape", shape)
                .Attr("dtype", data_type)
                .Placement(CpuPlacement(devices))
                .Build());
  return MakeLbn(name, "out");
}

// An identity on `devices` whose input and output must be laid out as `sbp` ("S(0)", "B", "P").
inline std::string ForcedIdentity(JobBuildContext& job, const std::string& name,
                                  const std::string& in, const std::string& devices,
                                  const std::string& sbp) {
  OperatorConf conf =
      OpConfBuilder("identity", name).Input("in", in).Placement(CpuPlacement(devices)).Build();
  (*conf.mutable_sbp_hint())["in_0"] = SbpFromString(sbp);
  (*conf.mutable_sbp_hint())["out_0"] = SbpFromString(sbp);
  return OutputLbn(job.AddOp(conf), "out");
}

inline std::string AddVariable(JobBuildContext& job, const std::string& name, const Shape& shape,
                               double value) {
  job.AddOp(OpConfBuilder("variable", name)
                .Attr("shape", shape)
                .Attr("dtype", kFloat)
                .Attr("initializer", "constant")
                .Attr("initializer_args", std::vector<double>{value})
                .Build());
  return MakeLbn(name, "out");
}

}  // namespace test
}  // namespace oneflow
