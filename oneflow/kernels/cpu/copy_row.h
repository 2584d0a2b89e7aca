#pragma once
// CopyRow: the memcpy of the row loops (concat, slice, pad, gather, gather_nd, tensor slice
// copies). Rows of 512 to 2112 bytes are where glibc 2.36's memcpy is weakest here: below its
// rep-movsb threshold (x86_rep_movsb_threshold, 2112 bytes on this machine) it runs an 8-vector
// loop that copies backward whenever destination and source are 4 KiB-aliased, which our
// page-offset-equal buffers often are, and it streams rows of that size from memory at about
// half the speed of a plain forward loop (measured: 1-2 KiB rows of a 32 MiB copy, 6.5 ms
// against 3.0 ms; in cache both are equal). Those rows take CopyRowForward; others memcpy.

#include <cstdint>
#include <cstring>

namespace oneflow {

constexpr int64_t kForwardCopyMinBytes = 512;
constexpr int64_t kForwardCopyMaxBytes = 2112;

// Copies `bytes` from `src` to `dst` (not overlapping) in ascending address order, 64 bytes at
// a time; compiled per vector ISA.
void CopyRowForward(void* dst, const void* src, int64_t bytes);

inline void CopyRow(void* dst, const void* src, int64_t bytes) {
  if (bytes >= kForwardCopyMinBytes && bytes <= kForwardCopyMaxBytes) {
    CopyRowForward(dst, src, bytes);
  } else if (bytes > 0) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
}

}  // namespace oneflow
