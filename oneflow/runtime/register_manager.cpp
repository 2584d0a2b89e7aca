#include "oneflow/runtime/register_manager.h"

#include <string>

#include "oneflow/common/error.h"
#include "oneflow/device/memory.h"
#include "oneflow/device/memory_copy.h"
#include "oneflow/session/variable_store.h"

namespace oneflow {

RegisterManager::RegisterManager(const Plan& plan, VariableStore& variables, int64_t machine_id) {
  std::map<void*, void*> device_copy;  // a variable part's host memory -> its GPU copy
  for (const TaskProto& task : plan.task()) {
    if (task.machine_id() != machine_id) { continue; }
    for (const RegstDescProto& desc : task.produced_regst_desc()) {
      std::vector<std::unique_ptr<Regst>>& registers = registers_[desc.regst_desc_id()];
      const std::string what =
          "a register of task " + std::to_string(task.task_id()) +
          (task.exec_node_size() ? " (op '" + task.exec_node(0).op_conf().name() + "')"
                                 : std::string());
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
        }
        registers.push_back(std::make_unique<Regst>(desc, memory));
      }
    }
  }
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
  new std::vector<std::shared_ptr<void>>(std::move(memory_));  // deliberately never deleted
  memory_.clear();
}

std::vector<Regst*> RegisterManager::Registers(int64_t regst_desc_id) const {
  std::vector<Regst*> result;
  for (const auto& regst : registers_.at(regst_desc_id)) { result.push_back(regst.get()); }
  return result;
}

}  // namespace oneflow
