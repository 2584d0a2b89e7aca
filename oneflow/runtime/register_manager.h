#pragma once
// Allocates every register of a Plan when the runtime starts, before any actor exists, so that
// a memory planner can later decide how registers share memory. Owns the memory and the Regst
// objects; actors only borrow them. A variable's register aliases its part of the session's
// variable instead of owning memory.

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

 private:
  std::vector<std::shared_ptr<void>> memory_;
  std::map<int64_t, std::vector<std::unique_ptr<Regst>>> registers_;
};

}  // namespace oneflow
