#pragma once
// The actor timeline: one record per act (which actor, its task's name, the thread it ran on,
// the iteration, start and end), collected when the session asks for it
// (flow.config.collect_act_event(True) or ONEFLOW_ACT_EVENT_FILE) and written as Chrome trace
// JSON (load it at chrome://tracing or https://ui.perfetto.dev).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace oneflow {

struct ActEvent {
  int64_t actor_id = 0;
  int64_t machine_id = 0;
  int64_t thread_id = 0;
  int64_t piece_id = 0;
  double start_us = 0;  // since the runtime started
  double end_us = 0;
  std::string name;  // "<op>@<parallel id>", a boxing's description, or a tick
};

// Chrome trace JSON ("X" complete events; pid = machine, tid = thread).
std::string ActEventsToChromeTrace(const std::vector<ActEvent>& events);

}  // namespace oneflow
