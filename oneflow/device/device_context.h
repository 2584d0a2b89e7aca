#pragma once
// What the kernels of one runtime thread run on: the thread's stream and the device's compute
// resources. Each runtime thread owns one; it is used only from that thread (a kernel, and the
// actor that launched it), so nothing in it needs to be reentrant across threads.

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
};

}  // namespace oneflow
