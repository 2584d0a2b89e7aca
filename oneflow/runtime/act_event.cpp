#include "oneflow/runtime/act_event.h"

#include <cstdio>
#include <set>
#include <sstream>
#include <utility>

namespace oneflow {

namespace {

std::string JsonString(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      quoted += escaped;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

}  // namespace

std::string ActEventsToChromeTrace(const std::vector<ActEvent>& events) {
  std::ostringstream json;
  json.precision(3);
  json << std::fixed << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [";
  bool first = true;
  auto write = [&](const ActEvent& event, const char* category, double start, double end,
                   int64_t row) {
    json << (first ? "\n" : ",\n") << "{\"name\": " << JsonString(event.name)
         << ", \"cat\": \"" << category << "\", \"ph\": \"X\", \"ts\": " << start
         << ", \"dur\": " << (end - start) << ", \"pid\": " << event.machine_id
         << ", \"tid\": " << row << ", \"args\": {\"actor\": " << event.actor_id
         << ", \"piece\": " << event.piece_id << "}}";
    first = false;
  };
  std::set<std::pair<int64_t, int64_t>> device_rows;  // (machine, thread)
  for (const ActEvent& event : events) {
    write(event, "act", event.start_us, event.end_us, event.thread_id);
    if (event.device_start_us >= 0) {
      write(event, "device", event.device_start_us, event.device_end_us,
            kDeviceRowOffset + event.thread_id);
      device_rows.emplace(event.machine_id, event.thread_id);
    }
  }
  for (const auto& [machine, thread] : device_rows) {
    json << (first ? "\n" : ",\n") << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": "
         << machine << ", \"tid\": " << kDeviceRowOffset + thread
         << ", \"args\": {\"name\": \"device stream of thread " << thread << "\"}}";
    first = false;
  }
  json << "\n]}\n";
  return json.str();
}

}  // namespace oneflow
