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

// The devices a session may place ops on. CPU placements may name any device id below
// kMaxCpuDevices whatever cpu_device_num says (its thread is created when the Plan starts), as in
// OneFlow 0.3, whose scripts use "0:0-3" without flow.config.cpu_device_num, or place data readers
// on "0:0-1" next to one GPU; cpu_device_num (0: not configured) only sizes the default placement.
// gpu_device_num: the GPUs of each machine that "gpu" placements run on; 0 (no CUDA build, no
// GPU, or GPUs turned off) makes them run on the CPU devices of the same ids
// (device_resolution.h).
struct DeviceResource {
  int64_t machine_num = 1;
  int64_t cpu_device_num = 0;
  int64_t gpu_device_num = 0;
};
constexpr int64_t kMaxCpuDevices = 64;

// Throws ValueError on a malformed device name ("0:3-1", "x:0", ...), an unknown device tag or
// a device named twice.
std::vector<DeviceId> ParsePlacement(const ParallelConf& conf);
// Throws ValueError naming `op_name` and the placement when it names a machine or device that
// `resource` does not have.
void CheckPlacementDevices(const ParallelConf& conf, const DeviceResource& resource,
                           const std::string& op_name);
int64_t ParallelNum(const ParallelConf& conf);
// Same devices in the same order (the device tag is ignored: gpu maps to cpu here).
bool SamePlacement(const ParallelConf& a, const ParallelConf& b);
// The placement's first device alone.
ParallelConf FirstDevicePlacement(const ParallelConf& conf);
ParallelConf DefaultPlacement();  // cpu "0:0"
std::string PlacementToString(const ParallelConf& conf);  // cpu["0:0-3"]

}  // namespace oneflow
