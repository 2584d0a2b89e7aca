#pragma once
// What the kernels of one runtime thread run on: the thread's stream and the device's compute
// resources. Each runtime thread owns one; it is used only from that thread (a kernel, and the
// actor that launched it), so nothing in it needs to be reentrant across threads.

#include <cstdint>
#include <string>

#include "oneflow/device/stream.h"

namespace oneflow {

class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  virtual const std::string& device_tag() const = 0;
  virtual Stream& stream() = 0;
  // Called first on the runtime thread that owns the context.
  virtual void BindCurrentThread() {}
  // Waits until the work enqueued on the stream is done and its callbacks have run (the CPU's
  // inline stream has nothing pending).
  virtual void Synchronize() {}

  // Device time, for the actor timeline. MarkTime enqueues a timestamp on the stream and returns
  // its id, numbered from 0 (-1 on a device whose work runs inline on the host, as the CPU's:
  // the host's clock times it). MicrosecondsBetween(from, to) waits until the device has reached
  // both marks and returns the device time between them.
  virtual int64_t MarkTime() { return -1; }
  virtual double MicrosecondsBetween(int64_t from, int64_t to) { return 0; }
};

}  // namespace oneflow
