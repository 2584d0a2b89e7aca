#pragma once
// The session's variables: name -> value. Every job that declares a variable of that name reads
// and updates the same memory, and values survive recompiling the job set. A variable placed on
// several devices is stored as one part per device, laid out by its SBP (a broadcast variable has
// a full replica per device, a split one a slice per device); the runtime's registers alias the
// parts, so updates happen in place.

#include <map>
#include <string>
#include <vector>

#include "oneflow/framework/host_tensor.h"
#include "proto/op_conf.pb.h"
#include "proto/sbp.pb.h"

namespace oneflow {

class VariableStore {
 public:
  // Creates the variable of `variable_op` (initialised from its initializer attributes, then
  // laid out over its placement as its chosen SBP says) if absent. If present, checks that shape
  // and dtype agree (ValueError naming both otherwise) and moves the value to the op's layout
  // if that changed.
  void Declare(const OperatorConf& variable_op);
  // Part `parallel_id` of the variable's current layout.
  HostTensor& Part(const std::string& name, int64_t parallel_id);
  // The logical value (a copy when the variable is spread over several devices).
  HostTensor Value(const std::string& name) const;
  // The logical shape and dtype of the variable.
  const BlobDesc& Desc(const std::string& name) const { return Find(name).logical; }
  // Throws ValueError/TypeError naming the variable when `desc` is not its logical shape and dtype.
  void CheckValueDesc(const std::string& name, const BlobDesc& desc) const;
  // Replaces the logical value: checks it (CheckValueDesc), then copies it into the parts of the
  // current layout in place (the runtime's registers alias them). The caller makes sure no job
  // is running (Python syncs first); `value` may be released afterwards.
  void SetValue(const std::string& name, const HostTensor& value);
  // Sets several variables at once: checks every value before writing any, so a bad value
  // leaves all variables as they were.
  void SetValues(const std::map<std::string, HostTensor>& values);
  bool Has(const std::string& name) const { return variables_.count(name) > 0; }
  std::vector<std::string> Names() const;

 private:
  struct Variable {
    BlobDesc logical;
    SbpParallel sbp;
    int64_t parallel_num = 1;
    std::vector<HostTensor> parts;
  };
  const Variable& Find(const std::string& name) const;
  static std::vector<HostTensor> Split(const HostTensor& logical, const SbpParallel& sbp,
                                       int64_t parallel_num);

  std::map<std::string, Variable> variables_;
};

}  // namespace oneflow
