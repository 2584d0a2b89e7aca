#pragma once
// A bad value a GPU kernel found (an index out of range), reported without a synchronization.
//
// Each GPU device context owns one report in pinned host memory mapped into the device's address
// space. A kernel that finds a bad value claims the report (atomicCAS of `site` from 0) and fills
// in the rest; the first claim wins. The stream's event poller reads the report each time the
// work before an event has completed and, when it was claimed, turns it into a ValueError that
// stops the runtime as a CPU kernel's ValueError does, so a bad index never yields silent zeros.
// `site` names what reported: an id the context gave out for a message prefix (an op and what it
// checks). Plain data: included by host code and by CUDA kernels (kernels/cuda/index_check.h).

#include <cstdint>

namespace oneflow {

struct DeviceErrorReport {
  int32_t site;  // 0: nothing reported; else an id from CudaDeviceContext::AddErrorSite
  int32_t reserved;
  int64_t value;     // the bad value
  int64_t position;  // its position in the checked blob
  int64_t limit;     // the valid range was [0, limit)
};

}  // namespace oneflow
