#pragma once
// float16 CPU kernels derived from float32 ones. float16 is a storage type on the CPU: an op
// with a float32 CPU kernel and no float16 one computes on float32 copies of its float16 blobs
// (the float32 accumulation the GPU's float16 kernels use too) and rounds its float16 outputs,
// and the mutable inputs it updated, once. This keeps a float16 job that names gpu placements
// runnable on a machine whose gpu placements map to the CPU. The kernel registry hands these
// out for (op, "cpu", float16) where nothing more specific is registered.

#include <string>

#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

// False for ops whose output is state the kernel keeps (variables): a float32 copy of it would
// go stale when other ops update the float16 blob in place.
bool CanComputeHalfViaFloat(const std::string& op_type);

// A float16 kernel factory that wraps `float_factory`, the op's float32 CPU kernel factory.
KernelFactory MakeHalfViaFloatFactory(KernelFactory float_factory);

}  // namespace oneflow
