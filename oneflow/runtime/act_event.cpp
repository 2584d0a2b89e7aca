#include "oneflow/runtime/act_event.h"

#include <cstdio>
#include <sstream>

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
  for (size_t i = 0; i < events.size(); ++i) {
    const ActEvent& event = events[i];
    json << (i ? ",\n" : "\n") << "{\"name\": " << JsonString(event.name)
         << ", \"cat\": \"act\", \"ph\": \"X\", \"ts\": " << event.start_us
         << ", \"dur\": " << (event.end_us - event.start_us) << ", \"pid\": " << event.machine_id
         << ", \"tid\": " << event.thread_id << ", \"args\": {\"actor\": " << event.actor_id
         << ", \"piece\": " << event.piece_id << "}}";
  }
  json << "\n]}\n";
  return json.str();
}

}  // namespace oneflow
