#include "oneflow/runtime/register_manager.h"

#include <cstdlib>

#include "oneflow/common/error.h"
#include "oneflow/session/variable_store.h"

namespace oneflow {

RegisterManager::RegisterManager(const Plan& plan, VariableStore& variables, int64_t machine_id) {
  for (const TaskProto& task : plan.task()) {
    if (task.machine_id() != machine_id) { continue; }
    for (const RegstDescProto& desc : task.produced_regst_desc()) {
      std::vector<std::unique_ptr<Regst>>& registers = registers_[desc.regst_desc_id()];
      for (int64_t i = 0; i < desc.register_num(); ++i) {
        void* memory = nullptr;
        if (!desc.variable_name().empty()) {
          memory = variables.Part(desc.variable_name(), desc.variable_parallel_id()).data;
        } else if (desc.byte_size() > 0) {
          memory = std::aligned_alloc(64, desc.byte_size());
          if (memory == nullptr) {
            throw Error(ErrorKind::kRuntime)
                << "out of memory: cannot allocate " << desc.byte_size()
                << " bytes for a register of task " << task.task_id()
                << (task.exec_node_size() ? " (op '" + task.exec_node(0).op_conf().name() + "')"
                                          : std::string());
          }
          memory_.emplace_back(memory, [](void* pointer) { std::free(pointer); });
        }
        registers.push_back(std::make_unique<Regst>(desc, memory));
      }
    }
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
