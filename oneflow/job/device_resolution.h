#pragma once
// Which kind of device an op runs on. A "gpu" placement runs on GPUs when the session has them
// (DeviceResource::gpu_device_num > 0) and a GPU kernel exists for the op's type and kernel
// dtype; otherwise on the CPU devices of the same ids (the build has no CUDA, the machine no GPU,
// or the op no GPU kernel yet). The compiler then copies blobs between host and device where
// consecutive ops resolve to different kinds. Ops that exchange values with the caller (input,
// return, watch) always run on the host.

#include <string>

#include "oneflow/common/data_type.h"
#include "oneflow/job/placement.h"
#include "proto/op_conf.pb.h"

namespace oneflow {

// "cpu" or "gpu".
std::string ResolveDeviceTag(const OperatorConf& op, DataType kernel_data_type,
                             const DeviceResource& resource);

// True for the op types that exchange values with the caller and so run on the host.
bool IsHostOnlyOp(const std::string& op_type);

}  // namespace oneflow
