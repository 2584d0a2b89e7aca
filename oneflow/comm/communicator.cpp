#include "oneflow/comm/communicator.h"

namespace oneflow {

const char* CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case kAllReduce:
      return "all_reduce";
    case kReduceScatter:
      return "reduce_scatter";
    case kAllGather:
      return "all_gather";
    case kAllToAll:
      return "all_to_all";
    default:
      break;
  }
  return "invalid_collective";
}

}  // namespace oneflow
