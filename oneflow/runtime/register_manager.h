#pragma once
// Makes every register of a Plan when the runtime starts, before any actor exists. Owns the
// memory and the Regst objects; actors only borrow them. Each register desc's MemoryCase says
// where its memory is (host, pinned host, a GPU).
//   - Registers of compute tasks on CPU threads (the bulk: every op's outputs) take their memory
//     from their thread's RegisterMemoryPool while they hold a piece (the producer binds a block
//     when it acts and gives it back when the register comes home), so registers share memory
//     as the blobs' lifetimes allow. The largest of them is tried here, so a register that can
//     never fit fails when the Plan starts, naming its op.
//   - The others get fixed memory, allocated here: registers in GPU or pinned memory, and those
//     of collectives and transfers, whose work completes off the owning thread.
//   - A variable's register aliases its part of the session's variable; on a GPU it is a device
//     copy of that part, filled when the Plan starts and synchronised with the session's copy by
//     PullVariables / PushVariables.

#include <map>
#include <memory>
#include <vector>

#include "oneflow/runtime/register_memory_pool.h"
#include "oneflow/runtime/regst.h"
#include "proto/plan.pb.h"

namespace oneflow {

class VariableStore;

class RegisterManager {
 public:
  // Throws RuntimeError ("out of memory ...") when a register cannot be allocated.
  // Registers of the tasks of machine `machine_id` only.
  RegisterManager(const Plan& plan, VariableStore& variables, int64_t machine_id = 0);
  // Never frees the registers' memory: a transfer left behind after a failure may still write
  // into it (the process is about to end anyway).
  void LeakMemory();
  // The register_num registers of one register desc.
  std::vector<Regst*> Registers(int64_t regst_desc_id) const;
  // The pool the registers of `regst_desc_id` take memory from; nullptr for fixed memory.
  RegisterMemoryPool* Pool(int64_t regst_desc_id) const;
  // Bytes of fixed register memory (variables excluded), and the pools' reserved and peak bytes
  // summed over threads (the pools' figures grow as the runtime runs).
  int64_t fixed_bytes() const { return fixed_bytes_; }
  int64_t pooled_reserved_bytes() const;
  int64_t pooled_peak_in_use_bytes() const;
  // Copies the GPU variables into the session's parts (before Python reads them, and when the
  // runtime ends) / the session's parts into the GPU variables (after Python set them). No job
  // may be running.
  void PullVariables();
  void PushVariables();

 private:
  struct DeviceVariable {
    void* host;
    void* device;
    int64_t bytes;
    MemoryCase memory_case;
  };
  std::vector<std::shared_ptr<void>> memory_;
  std::vector<DeviceVariable> device_variables_;
  std::map<int64_t, std::vector<std::unique_ptr<Regst>>> registers_;
  std::map<int64_t, std::unique_ptr<RegisterMemoryPool>> pools_;  // by thread id
  std::map<int64_t, RegisterMemoryPool*> pool_of_;                 // by register desc id
  int64_t fixed_bytes_ = 0;
};

}  // namespace oneflow
