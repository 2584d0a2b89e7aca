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
      devices.push_back(DeviceId{machine, device});
    }
  }
  return devices;
}

int64_t ParallelNum(const ParallelConf& conf) {
  return static_cast<int64_t>(ParsePlacement(conf).size());
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
