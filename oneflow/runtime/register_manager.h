#pragma once
// Allocates every register of a Plan when the runtime starts, before any actor exists, so that
// a memory planner can later decide how registers share memory. Owns the memory and the Regst
// objects; actors only borrow them. Each register desc's MemoryCase says where its memory is
// (host, pinned host, a GPU). A variable's register aliases its part of the session's variable
// instead of owning memory; on a GPU it is a device copy of that part, filled when the Plan
// starts and synchronised with the session's copy by PullVariables / PushVariables.

#include <map>
#include <memory>
#include <vector>

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
};

}  // namespace oneflow
