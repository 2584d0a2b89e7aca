#pragma once
// Small helpers for OperatorConf: logical blob names and a builder used by passes and
// gradient rules to create ops.
//
// A logical blob name (lbn) is "<op name>/<argument>_<index>", e.g. "dense1-matmul/out_0".

#include <string>
#include <vector>

#include "oneflow/framework/attr.h"
#include "proto/op_conf.pb.h"

namespace oneflow {

std::string MakeLbn(const std::string& op_name, const std::string& argument, int64_t index = 0);
// Splits an lbn into its op name and "argument_index" key; throws a ValueError when malformed.
void ParseLbn(const std::string& lbn, std::string* op_name, std::string* argument_key);
std::string OpNameOfLbn(const std::string& lbn);
// The lbn with '/' replaced by '-': a part of the name of an op a pass adds for the blob.
std::string SanitizedLbn(const std::string& lbn);
// "a_0": how an argument and index are keyed in SBP signatures and kernel blob maps.
std::string ArgumentKey(const std::string& argument, int64_t index);

// Lbn of the index-th blob of `argument` in `conf` (input or output).
const std::string& InputLbn(const OperatorConf& conf, const std::string& argument,
                            int64_t index = 0);
const std::string& OutputLbn(const OperatorConf& conf, const std::string& argument,
                             int64_t index = 0);
int64_t InputCount(const OperatorConf& conf, const std::string& argument);

// Builds an OperatorConf:
//   OperatorConf conf = OpConfBuilder("matmul", "dense1-matmul")
//       .Input("a", x_lbn).Input("b", w_lbn).Attr("transpose_b", true).Build();
// Outputs are filled from the op registry when the op is added to a job.
class OpConfBuilder {
 public:
  OpConfBuilder(const std::string& op_type, const std::string& name);
  // Appends one blob to `argument` (call repeatedly for variadic inputs).
  OpConfBuilder& Input(const std::string& argument, const std::string& lbn);
  template <typename T>
  OpConfBuilder& Attr(const std::string& name, const T& value) {
    (*conf_.mutable_attr())[name] = ToAttrValue<T>(value);
    return *this;
  }
  OpConfBuilder& Attr(const std::string& name, int value) { return Attr<int64_t>(name, value); }
  OpConfBuilder& Attr(const std::string& name, const char* value) {
    return Attr<std::string>(name, value);
  }
  OpConfBuilder& ControlInput(const std::string& op_name);
  OpConfBuilder& Placement(const ParallelConf& placement);
  OperatorConf Build() const { return conf_; }

 private:
  OperatorConf conf_;
};

}  // namespace oneflow
