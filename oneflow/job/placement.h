#pragma once
// Placement parsing: ParallelConf {device_tag, ["0:0-3", "1:0-3"]} -> the ordered list of
// (machine, device) pairs. parallel_id enumerates machines in order, then devices.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proto/placement.pb.h"

namespace oneflow {

struct DeviceId {
  int64_t machine = 0;
  int64_t device = 0;
};

// Throws ValueError on a malformed device name ("0:3-1", "x:0", ...) or an unknown device tag.
std::vector<DeviceId> ParsePlacement(const ParallelConf& conf);
int64_t ParallelNum(const ParallelConf& conf);
ParallelConf DefaultPlacement();  // cpu "0:0"
std::string PlacementToString(const ParallelConf& conf);  // cpu["0:0-3"]

}  // namespace oneflow
