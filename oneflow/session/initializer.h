#pragma once
// Fills a variable at session start from its op's initializer attributes. Deterministic: the
// same seed gives the same values on every run.

#include "oneflow/framework/host_tensor.h"
#include "proto/op_conf.pb.h"

namespace oneflow {

void InitializeVariable(const OperatorConf& variable_op, HostTensor& tensor);

}  // namespace oneflow
