// Pass "variable_ordering": an op that updates a blob in place (an optimizer's model, the step
// counter) must run after every other reader of that blob in the same iteration. Adds control
// inputs from each reader to the updating op. Since a variable's register count is 1, the next
// iteration's readers in turn wait for the update.
#include <algorithm>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/job/job_graph.h"

namespace oneflow {
namespace {

class VariableOrderingPass final : public Pass {
 public:
  std::string name() const override { return "variable_ordering"; }

  void Apply(JobBuildContext& job) const override {
    const Job snapshot = job.job();
    JobGraph graph(snapshot);
    for (const OperatorConf& op : snapshot.op()) {
      const OpDef& def = OpRegistry::Instance().Get(op.op_type());
      for (const std::string& argument : def.mutable_inputs) {
        auto it = op.input().find(argument);
        if (it == op.input().end()) { continue; }
        for (const std::string& lbn : it->second.value()) {
          for (const std::string& reader : graph.Consumers(lbn)) {
            if (reader == op.name()) { continue; }
            OperatorConf& updater = job.MutableOp(op.name());
            const auto& controls = updater.control_input();
            if (std::find(controls.begin(), controls.end(), reader) == controls.end()) {
              updater.add_control_input(reader);
            }
          }
        }
      }
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeVariableOrderingPass() {
  return std::make_unique<VariableOrderingPass>();
}

}  // namespace oneflow
