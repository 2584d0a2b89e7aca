#pragma once
// The session's variables: name -> memory. Every job that declares a variable of that name
// reads and updates the same memory, and values survive recompiling the job set.

#include <map>
#include <string>
#include <vector>

#include "oneflow/framework/host_tensor.h"
#include "proto/op_conf.pb.h"

namespace oneflow {

class VariableStore {
 public:
  // Creates and initialises the variable of `variable_op` if absent; if present, checks that
  // its shape and dtype agree (ValueError naming both otherwise).
  void Declare(const OperatorConf& variable_op);
  HostTensor& Get(const std::string& name);
  bool Has(const std::string& name) const { return variables_.count(name) > 0; }
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, HostTensor> variables_;
};

}  // namespace oneflow
