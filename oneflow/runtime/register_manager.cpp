#include "oneflow/runtime/register_manager.h"

#include <string>

#include "oneflow/common/error.h"
#include "oneflow/device/memory.h"
#include "oneflow/device/memory_copy.h"
#include "oneflow/session/variable_store.h"

namespace oneflow {

namespace {

// Whether the registers of `desc` (produced by `task`) take pooled memory: host registers of
// compute tasks on CPU threads, written and read only by acts (no work completing later on
// another thread, as a collective's or a transfer's does).
bool UsesPool(const Plan& plan, const TaskProto& task, const RegstDescProto& desc) {
  if (task.task_type() != kCompute || !desc.variable_name().empty() || desc.byte_size() == 0 ||
      desc.memory_case().kind() != kHostMemory) {
    return false;
  }
  const int64_t thread = task.thread_id();
  return thread >= plan.thread_size() || plan.thread(thread).device_tag() != "gpu";
}

}  // namespace

RegisterManager::RegisterManager(const Plan& plan, VariableStore& variables, int64_t machine_id) {
  std::map<void*, void*> device_copy;  // a variable part's host memory -> its GPU copy
  std::map<int64_t, std::pair<int64_t, std::string>> largest_pooled;  // thread -> (bytes, what)
  for (const TaskProto& task : plan.task()) {
    if (task.machine_id() != machine_id) { continue; }
    for (const RegstDescProto& desc : task.produced_regst_desc()) {
      std::vector<std::unique_ptr<Regst>>& registers = registers_[desc.regst_desc_id()];
      const std::string what =
          "a register of task " + std::to_string(task.task_id()) +
          (task.exec_node_size() ? " (op '" + task.exec_node(0).op_conf().name() + "')"
                                 : std::string());
      if (UsesPool(plan, task, desc)) {
        std::unique_ptr<RegisterMemoryPool>& pool = pools_[task.thread_id()];
        if (!pool) { pool = std::make_unique<RegisterMemoryPool>(); }
        pool_of_[desc.regst_desc_id()] = pool.get();
        auto& largest = largest_pooled[task.thread_id()];
        if (desc.byte_size() > largest.first) { largest = {desc.byte_size(), what}; }
        for (int64_t i = 0; i < desc.register_num(); ++i) {
          registers.push_back(std::make_unique<Regst>(desc, nullptr));
        }
        continue;
      }
      for (int64_t i = 0; i < desc.register_num(); ++i) {
        void* memory = nullptr;
        if (!desc.variable_name().empty()) {
          HostTensor& part = variables.Part(desc.variable_name(), desc.variable_parallel_id());
          memory = part.data;
          if (desc.memory_case().kind() == kDeviceMemory) {
            // One device copy per part, shared by the jobs that use the variable.
            auto [it, inserted] = device_copy.emplace(part.data, nullptr);
            if (inserted) {
              const int64_t bytes = part.desc.byte_size();
              memory_.push_back(AllocateMemory(desc.memory_case(), bytes, what));
              it->second = memory_.back().get();
              device_variables_.push_back(
                  DeviceVariable{part.data, it->second, bytes, desc.memory_case()});
              CopyMemory(it->second, desc.memory_case(), part.data, MemoryCase(), bytes);
            }
            memory = it->second;
          }
        } else if (desc.byte_size() > 0) {
          memory_.push_back(AllocateMemory(desc.memory_case(), desc.byte_size(), what));
          memory = memory_.back().get();
          fixed_bytes_ += desc.byte_size();
        }
        registers.push_back(std::make_unique<Regst>(desc, memory));
      }
    }
  }
  // Address space for the largest pooled register of each thread: an impossible size fails now,
  // when the Plan starts, rather than at its first act (untouched pages cost nothing).
  for (const auto& entry : largest_pooled) {
    AllocateMemory(MemoryCase(), entry.second.first, entry.second.second);
  }
}

RegisterMemoryPool* RegisterManager::Pool(int64_t regst_desc_id) const {
  auto it = pool_of_.find(regst_desc_id);
  return it == pool_of_.end() ? nullptr : it->second;
}

int64_t RegisterManager::pooled_reserved_bytes() const {
  int64_t bytes = 0;
  for (const auto& entry : pools_) { bytes += entry.second->reserved_bytes(); }
  return bytes;
}

int64_t RegisterManager::pooled_peak_in_use_bytes() const {
  int64_t bytes = 0;
  for (const auto& entry : pools_) { bytes += entry.second->peak_in_use_bytes(); }
  return bytes;
}

void RegisterManager::PullVariables() {
  for (const DeviceVariable& variable : device_variables_) {
    CopyMemory(variable.host, MemoryCase(), variable.device, variable.memory_case, variable.bytes);
  }
}

void RegisterManager::PushVariables() {
  for (const DeviceVariable& variable : device_variables_) {
    CopyMemory(variable.device, variable.memory_case, variable.host, MemoryCase(), variable.bytes);
  }
}

void RegisterManager::LeakMemory() {
  // Deliberately never deleted.
  new std::vector<std::shared_ptr<void>>(std::move(memory_));
  new std::map<int64_t, std::unique_ptr<RegisterMemoryPool>>(std::move(pools_));
  memory_.clear();
  pools_.clear();
}

std::vector<Regst*> RegisterManager::Registers(int64_t regst_desc_id) const {
  std::vector<Regst*> result;
  for (const auto& regst : registers_.at(regst_desc_id)) { result.push_back(regst.get()); }
  return result;
}

}  // namespace oneflow
