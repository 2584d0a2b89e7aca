#include "oneflow/job/placement.h"

#include <cstdlib>

#include "oneflow/common/error.h"

namespace oneflow {

namespace {

int64_t ParseNonNegative(const std::string& text, const std::string& device_name) {
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 0) {
    throw Error(ErrorKind::kValue) << "placement: malformed device name '" << device_name
                                   << "', expected 'machine:device' or 'machine:first-last'";
  }
  return value;
}

}  // namespace

std::vector<DeviceId> ParsePlacement(const ParallelConf& conf) {
  if (conf.device_tag() != "cpu" && conf.device_tag() != "gpu") {
    throw Error(ErrorKind::kValue) << "placement: unknown device tag '" << conf.device_tag()
                                   << "', expected 'cpu' or 'gpu'";
  }
  if (conf.device_name_size() == 0) {
    throw Error(ErrorKind::kValue) << "placement: no device names given";
  }
  std::vector<DeviceId> devices;
  for (const std::string& name : conf.device_name()) {
    size_t colon = name.find(':');
    if (colon == std::string::npos) {
      throw Error(ErrorKind::kValue) << "placement: malformed device name '" << name
                                     << "', expected 'machine:device' or 'machine:first-last'";
    }
    int64_t machine = ParseNonNegative(name.substr(0, colon), name);
    std::string range = name.substr(colon + 1);
    size_t dash = range.find('-');
    int64_t first = ParseNonNegative(range.substr(0, dash), name);
    int64_t last = dash == std::string::npos ? first : ParseNonNegative(range.substr(dash + 1), name);
    if (last < first) {
      throw Error(ErrorKind::kValue) << "placement: device range in '" << name
                                     << "' is empty (last < first)";
    }
    for (int64_t device = first; device <= last; ++device) {
      for (const DeviceId& seen : devices) {
        if (seen.machine == machine && seen.device == device) {
          throw Error(ErrorKind::kValue) << "placement " << PlacementToString(conf) << " names device "
                                         << machine << ":" << device << " twice";
        }
      }
      devices.push_back(DeviceId{machine, device});
    }
  }
  return devices;
}

void CheckPlacementDevices(const ParallelConf& conf, const DeviceResource& resource,
                           const std::string& op_name) {
  for (const DeviceId& device : ParsePlacement(conf)) {
    if (device.machine >= resource.machine_num) {
      throw Error(ErrorKind::kValue)
          << "op '" << op_name << "' is placed on " << PlacementToString(conf) << ", which names machine "
          << device.machine << ", but this run has " << resource.machine_num
          << (resource.machine_num == 1
                  ? " machine (machine 0): start one process per machine, e.g. with python -m "
                    "oneflow.distributed.launch --nproc_per_node N script.py"
                  : " machines");
    }
    if (conf.device_tag() == "gpu" && resource.gpu_device_num > 0) {
      if (device.device >= resource.gpu_device_num) {
        throw Error(ErrorKind::kValue)
            << "op '" << op_name << "' is placed on " << PlacementToString(conf)
            << ", which names GPU " << device.device << ", but each machine has "
            << resource.gpu_device_num << " GPU(s) in use (0-" << resource.gpu_device_num - 1
            << ")";
      }
      continue;
    }
    if (device.device >= kMaxCpuDevices) {
      throw Error(ErrorKind::kValue)
          << "op '" << op_name << "' is placed on " << PlacementToString(conf) << ", which names device "
          << device.device << "; CPU device ids must be below " << kMaxCpuDevices
          << " (each CPU device is a thread of its own)";
    }
  }
}

int64_t ParallelNum(const ParallelConf& conf) {
  return static_cast<int64_t>(ParsePlacement(conf).size());
}

bool SamePlacement(const ParallelConf& a, const ParallelConf& b) {
  std::vector<DeviceId> left = ParsePlacement(a);
  std::vector<DeviceId> right = ParsePlacement(b);
  if (left.size() != right.size()) { return false; }
  for (size_t i = 0; i < left.size(); ++i) {
    if (left[i].machine != right[i].machine || left[i].device != right[i].device) { return false; }
  }
  return true;
}

ParallelConf FirstDevicePlacement(const ParallelConf& conf) {
  DeviceId first = ParsePlacement(conf).front();
  ParallelConf result;
  result.set_device_tag(conf.device_tag());
  result.add_device_name(std::to_string(first.machine) + ":" + std::to_string(first.device));
  return result;
}

ParallelConf DefaultPlacement() {
  ParallelConf conf;
  conf.set_device_tag("cpu");
  conf.add_device_name("0:0");
  return conf;
}

std::string PlacementToString(const ParallelConf& conf) {
  std::string text = conf.device_tag() + "[";
  for (int i = 0; i < conf.device_name_size(); ++i) {
    text += (i ? ", \"" : "\"") + conf.device_name(i) + "\"";
  }
  return text + "]";
}

}  // namespace oneflow
