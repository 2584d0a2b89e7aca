// Pass "variable_ordering": an op that updates a blob in place (an optimizer's model, the step
// counter) must run after every other reader of that blob in the same iteration. Adds control
// inputs from each reader to the updating op. Since a variable's register count is 1, the next
// iteration's readers in turn wait for the update. Several flow.assign / logical_slice_assign
// of one variable run in job order, as do several batch normalizations (or min-max observers)
// sharing moving statistics; any other second in-place writer (an assign to a variable the
// optimizer trains) is refused: each would have to run after the other.
#include <algorithm>
#include <map>

#include "oneflow/common/error.h"
#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/job/job_graph.h"

namespace oneflow {
namespace {

// Whether `op` updates the blob `lbn` in place (takes it as a mutable input).
bool UpdatesInPlace(const OperatorConf& op, const std::string& lbn) {
  for (const std::string& argument : OpRegistry::Instance().Get(op.op_type()).mutable_inputs) {
    auto it = op.input().find(argument);
    if (it == op.input().end()) { continue; }
    const auto& lbns = it->second.value();
    if (std::find(lbns.begin(), lbns.end(), lbn) != lbns.end()) { return true; }
  }
  return false;
}

// flow.assign and flow.experimental.logical_slice_assign: several may write one variable.
bool IsUserAssign(const OperatorConf& op) {
  return op.op_type() == "assign" || op.op_type() == "logical_slice_assign";
}

// Whether `a` and `b` may both update one blob, taking turns in job order: assignments, and one
// layer's moving statistics updated by each of its applications (a GAN's discriminator applied
// to fake and to real images in one train step, as OneFlow-Benchmark's pix2pix does).
bool TakeTurns(const OperatorConf& a, const OperatorConf& b) {
  if (IsUserAssign(a) && IsUserAssign(b)) { return true; }
  return a.op_type() == b.op_type() && (a.op_type() == "normalization_train" ||
                                        a.op_type() == "moving_average_min_max_observer");
}

class VariableOrderingPass final : public Pass {
 public:
  std::string name() const override { return "variable_ordering"; }

  void Apply(JobBuildContext& job) const override {
    const Job snapshot = job.job();
    JobGraph graph(snapshot);
    std::map<std::string, int> job_order;
    for (int i = 0; i < snapshot.op_size(); ++i) { job_order[snapshot.op(i).name()] = i; }
    for (const OperatorConf& op : snapshot.op()) {
      const OpDef& def = OpRegistry::Instance().Get(op.op_type());
      for (const std::string& argument : def.mutable_inputs) {
        auto it = op.input().find(argument);
        if (it == op.input().end()) { continue; }
        for (const std::string& lbn : it->second.value()) {
          for (const std::string& reader : graph.Consumers(lbn)) {
            if (reader == op.name()) { continue; }
            if (UpdatesInPlace(graph.Op(reader), lbn)) {
              if (!TakeTurns(op, graph.Op(reader))) {
                throw Error(ErrorKind::kValue)
                    << "job '" << snapshot.job_conf().job_name() << "': '" << graph.Producer(lbn)
                    << "' is written in place by two ops, '" << op.name() << "' (" << op.op_type()
                    << ") and '" << reader << "' (" << graph.Op(reader).op_type()
                    << "); a variable the optimizer or batch normalization updates takes no "
                    << "flow.assign or logical_slice_assign";
              }
              // Updates of one variable take turns in the order the job made them.
              if (job_order.at(reader) > job_order.at(op.name())) { continue; }
            }
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
