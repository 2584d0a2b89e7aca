#include "oneflow/framework/time_shape.h"

#include <map>
#include <string>
#include <utility>

#include "oneflow/framework/attr.h"

namespace oneflow {

Cycle CycleOfOp(const OperatorConf& op) {
  // op type -> (its kind, the attribute holding N)
  static const std::map<std::string, std::pair<CycleKind, std::string>> kCycleOps = {
      {"repeat", {CycleKind::kExpand, "repeat_num"}},
      {"unpack", {CycleKind::kExpand, "unpack_num"}},
      {"acc", {CycleKind::kReduce, "max_acc_num"}},
      {"acc_tick", {CycleKind::kReduce, "max_acc_num"}},
      {"pack", {CycleKind::kReduce, "pack_num"}},
  };
  auto found = kCycleOps.find(op.op_type());
  if (found == kCycleOps.end()) { return Cycle(); }
  auto attr = op.attr().find(found->second.second);
  return Cycle{found->second.first,
               attr == op.attr().end() ? 1 : FromAttrValue<int64_t>(attr->second)};
}

}  // namespace oneflow
