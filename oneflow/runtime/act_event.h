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
  // On a device with its own clock (a GPU): when the work the act enqueued ran there, on the
  // same time axis (the device's first mark is taken as the host time of the act that made it,
  // when the device was idle); -1 where the act's work ran inline, within start_us..end_us.
  double device_start_us = -1;
  double device_end_us = -1;
  // The device's time marks around the act (DeviceContext::MarkTime), until the runtime turns
  // them into the times above.
  int64_t device_begin_mark = -1;
  int64_t device_end_mark = -1;
};

// Chrome trace JSON ("X" complete events; pid = machine, tid = thread; category "act"). An act
// with device times adds a second event, category "device", on the row of its thread's device
// stream: tid = kDeviceRowOffset + thread, named by a thread_name metadata event.
constexpr int64_t kDeviceRowOffset = 1000;
std::string ActEventsToChromeTrace(const std::vector<ActEvent>& events);

}  // namespace oneflow
