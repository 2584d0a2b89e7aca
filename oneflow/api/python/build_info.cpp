// What the library was built with and what it finds on this machine: flow.sysconfig.
#include <pybind11/pybind11.h>

#include "oneflow/device/cuda_info.h"
#include "oneflow/job/placement.h"

namespace py = pybind11;

namespace oneflow {

void BindBuildInfo(py::module_& module) {
  module.def(
      "cuda_info",
      [] {
        const CudaInfo& info = GetCudaInfo();
        py::dict result;
        result["built_with_cuda"] = info.built_with_cuda;
        result["runtime_version"] = info.runtime_version;
        result["driver_version"] = info.driver_version;
        result["device_count"] = info.device_count;
        result["reason"] = info.reason;
        result["allow_tf32"] = info.allow_tf32;
        return result;
      },
      "CUDA build and device facts (queried once per process).");
  module.attr("max_cpu_devices") = kMaxCpuDevices;  // CPU devices per machine (placement.h)
}

}  // namespace oneflow
