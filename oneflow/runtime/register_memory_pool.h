#pragma once
// Memory for the registers of one runtime thread that only need it while they hold a piece.
//
// A register of a CPU compute task takes a block when its producer acts and gives it back when
// its last consumer has returned it, so memory follows the blobs that are alive: a training step
// holds the forward activations its backward still reads plus a few gradients, not every blob of
// the job at once (and not register_num copies of each). Blocks are kept for reuse, by exact
// size: every iteration asks for the same sizes, so after the first one no call allocates, and
// pages once touched stay mapped. Used only by the thread that owns it (producers act and get
// their registers back on their own thread), so it needs no lock.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace oneflow {

class RegisterMemoryPool {
 public:
  // A block of `bytes` (64-byte aligned). Throws Error(kRuntime) "out of memory: ... for
  // <what>" when none can be had.
  void* Acquire(int64_t bytes, const std::string& what);
  // Gives back a block Acquire returned for the same `bytes`.
  void Release(void* memory, int64_t bytes);

  int64_t reserved_bytes() const { return reserved_bytes_; }    // all blocks it holds
  int64_t in_use_bytes() const { return in_use_bytes_; }        // blocks lent out now
  int64_t peak_in_use_bytes() const { return peak_in_use_bytes_; }

 private:
  std::unordered_map<int64_t, std::vector<void*>> free_;  // rounded size -> free blocks
  std::vector<std::shared_ptr<void>> blocks_;
  int64_t reserved_bytes_ = 0;
  int64_t in_use_bytes_ = 0;
  int64_t peak_in_use_bytes_ = 0;
};

}  // namespace oneflow
