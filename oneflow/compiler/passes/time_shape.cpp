// Pass "time_shape" (framework/time_shape.h): counts the pieces each op makes per iteration
// (1, times N after each repeat / unpack, divided by N after each acc / pack) and makes every
// edge agree:
//   - an op reading blobs of different counts reads the rarer ones through a repeat (a variable
//     read by a repeated section: the repeat's gradient, an acc, sums the variable's gradient
//     over the section's pieces: gradient accumulation);
//   - a control edge from an op of more pieces waits for every N-th of them (an acc_tick);
// and records each op's count (OperatorConf.pieces_per_iteration): the task graph ends a node of
// more than one piece that nobody reads in an acc_tick, since the sink tick counts one piece per
// iteration.
// A blob that an op of more pieces updates in place (a batch normalization's moving statistics
// in a section) is not repeated: the runtime hands the op the one register for each of its acts.
// Refused with a ValueError: an acc / pack whose input count is not a multiple of N, and a job
// result of more than one piece.
// Runs before autograd (so the forward's repeats get gradients) and again last (for the edges
// the later passes added); a job without repeat / unpack is left as it is.
#include <algorithm>
#include <map>
#include <set>
#include <vector>
#include <utility>

#include "oneflow/common/error.h"
#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/time_shape.h"
#include "oneflow/job/job_graph.h"

namespace oneflow {
namespace {

constexpr const char* kPassName = "time_shape";

bool ChangesTimeShape(const OperatorConf& op) {
  return CycleOfOp(op).kind != CycleKind::kNone;
}

class TimeShapePass final : public Pass {
 public:
  std::string name() const override { return kPassName; }

  void Apply(JobBuildContext& job) const override {
    const Job snapshot = job.job();
    if (std::none_of(snapshot.op().begin(), snapshot.op().end(), ChangesTimeShape)) { return; }
    Rewriter(job, snapshot).Run();
  }

 private:
  class Rewriter {
   public:
      Rewriter(JobBuildContext& job, const Job& snapshot) : job_(job), graph_(snapshot) {}

    void Run() {
      for (const std::string& name : graph_.TopologicalOrder()) { Visit(graph_.Op(name)); }
      for (const auto& [name, pieces] : pieces_) {
        job_.MutableOp(name).set_pieces_per_iteration(pieces > 1 ? pieces : 0);
      }
      MarkHeldPieces();
    }

    // An op of several pieces whose reader also waits for a flow.pack / flow.acc after the op
    // (a gradient op reading a forward activation and the gradient of a loss computed after
    // the pack) would stall with fewer registers than pieces: the reader holds the pieces made
    // so far while the pack waits for the rest. Such an op's registers hold every piece.
    void MarkHeldPieces() {
      const Job& job = job_.job();
      std::map<std::string, std::vector<std::string>> successors;
      for (const OperatorConf& op : job.op()) {
        for (const auto& entry : op.input()) {
          for (const std::string& lbn : entry.second.value()) {
            successors[OpNameOfLbn(lbn)].push_back(op.name());
          }
        }
        for (const std::string& before : op.control_input()) {
          successors[before].push_back(op.name());
        }
      }
      auto reachable = [&](const std::string& from) {
        std::set<std::string> seen;
        std::vector<std::string> stack = {from};
        while (!stack.empty()) {
          const std::string name = stack.back();
          stack.pop_back();
          for (const std::string& next : successors[name]) {
            if (seen.insert(next).second) { stack.push_back(next); }
          }
        }
        return seen;
      };
      std::map<std::string, std::set<std::string>> after_reduce;  // reducing op -> after it
      for (const OperatorConf& op : job.op()) {
        if (CycleOfOp(op).kind == CycleKind::kReduce) {
          after_reduce[op.name()] = reachable(op.name());
        }
      }
      for (const OperatorConf& op : job.op()) {
        const int64_t pieces = pieces_.at(op.name());
        if (pieces <= 1) { continue; }
        const std::set<std::string> after = reachable(op.name());
        bool held = false;
        for (const auto& [reducer, after_reducer] : after_reduce) {
          if (!after.count(reducer)) { continue; }
          for (const std::string& reader : successors[op.name()]) {
            held = held || after_reducer.count(reader) > 0;
          }
        }
        job_.MutableOp(op.name()).set_held_pieces(held ? pieces : 0);
      }
    }

   private:
    void Visit(const OperatorConf& op) {
      int64_t base = 1;
      if (op.op_type() == "acc_tick") {  // counts the acts of the op it waits for
        for (const std::string& before : op.control_input()) {
          base = std::max(base, pieces_.at(before));
        }
      }
      for (const auto& entry : op.input()) {
        for (const std::string& lbn : entry.second.value()) {
          base = std::max(base, pieces_.at(OpNameOfLbn(lbn)));
        }
      }
      const OpDef& def = OpRegistry::Instance().Get(op.op_type());
      for (const auto& entry : op.input()) {
        for (int64_t i = 0; i < entry.second.value_size(); ++i) {
          const std::string& lbn = entry.second.value(i);
          const int64_t count = pieces_.at(OpNameOfLbn(lbn));
          if (count == base) { continue; }
          CheckDivides(op, lbn, count, base);
          // A blob updated in place is not repeated (a repeat would hand out copies): each act
          // of the op reads and updates the one register (TaskProto.consumed_reads), as each
          // micro-batch updates a batch normalization's moving statistics in PyTorch.
          if (def.mutable_inputs.count(entry.first)) { continue; }
          const std::string repeated = RepeatOf(lbn, base / count);
          (*job_.MutableOp(op.name()).mutable_input())[entry.first].set_value(i, repeated);
        }
      }
      for (int64_t i = 0; i < op.control_input_size(); ++i) {
        const std::string& before = op.control_input(i);
        const int64_t count = pieces_.at(before);
        if (count == base) { continue; }
        if (count < base || count % base != 0) {
          throw Error(ErrorKind::kValue)
              << "op '" << op.name() << "' (" << op.op_type() << ", " << base << " piece(s) per "
              << "iteration) waits for op '" << before << "', which makes " << count
              << "; an op may only wait for an op of as many pieces or a multiple of them";
        }
        job_.MutableOp(op.name()).set_control_input(i, AccTickOf(before, count / base));
      }
      const Cycle cycle = CycleOfOp(op);
      int64_t pieces = base;
      if (cycle.kind == CycleKind::kExpand) { pieces = base * cycle.length; }
      if (cycle.kind == CycleKind::kReduce) {
        if (base % cycle.length != 0) {
          throw Error(ErrorKind::kValue)
              << op.op_type() << " (op '" << op.name() << "'): its input has " << base
              << " piece(s) per iteration, not a multiple of " << cycle.length
              << "; it turns " << cycle.length << " pieces made by a flow.repeat or flow.unpack "
              << "of that count into one";
        }
        pieces = base / cycle.length;
      }
      if (op.op_type() == "return" && pieces > 1) {
        throw Error(ErrorKind::kValue)
            << "the job's result '" << InputLbn(op, "in") << "' has " << pieces
            << " pieces per iteration (it follows a flow.repeat or flow.unpack); return "
            << "flow.pack or flow.acc of it, which makes one";
      }
      pieces_[op.name()] = pieces;
    }

    void CheckDivides(const OperatorConf& op, const std::string& lbn, int64_t count,
                      int64_t base) const {
      if (base % count == 0) { return; }
      throw Error(ErrorKind::kValue)
          << "op '" << op.name() << "' (" << op.op_type() << ") reads blobs of " << base
          << " and of " << count << " pieces per iteration ('" << lbn << "'); the counts of "
          << "an op's inputs must divide one another";
    }

    // `lbn` handed on `factor` times per piece: a repeat on the producer's devices.
    std::string RepeatOf(const std::string& lbn, int64_t factor) {
      const std::string key = lbn + "|" + std::to_string(factor);
      auto found = repeats_.find(key);
      if (found != repeats_.end()) { return found->second; }
      const OperatorConf& producer = job_.Op(OpNameOfLbn(lbn));
      const std::string name =
          "System-Repeat-" + SanitizedLbn(lbn) + "-x" + std::to_string(factor);
      if (job_.HasOp(name)) {  // made by the pass's earlier run
        return repeats_[key] = OutputLbn(job_.Op(name), "out");
      }
      OperatorConf conf = OpConfBuilder("repeat", name)
                              .Input("in", lbn)
                              .Attr("repeat_num", factor)
                              .Placement(producer.placement())
                              .Build();
      conf.set_created_by_pass(kPassName);
      const std::string out = OutputLbn(job_.AddOp(std::move(conf)), "out");
      pieces_[name] = pieces_.at(producer.name()) * factor;
      return repeats_[key] = out;
    }

    // An op that acts once per `factor` acts of `op_name`.
    std::string AccTickOf(const std::string& op_name, int64_t factor) {
      const std::string key = op_name + "|" + std::to_string(factor);
      auto found = acc_ticks_.find(key);
      if (found != acc_ticks_.end()) { return found->second; }
      const std::string name = "System-AccTick-" + op_name + "-x" + std::to_string(factor);
      if (job_.HasOp(name)) { return acc_ticks_[key] = name; }
      OperatorConf conf = OpConfBuilder("acc_tick", name)
                              .ControlInput(op_name)
                              .Attr("max_acc_num", factor)
                              .Placement(job_.Op(op_name).placement())
                              .Build();
      conf.set_created_by_pass(kPassName);
      job_.AddOp(std::move(conf));
      pieces_[name] = pieces_.at(op_name) / factor;
      return acc_ticks_[key] = name;
    }

    JobBuildContext& job_;
    JobGraph graph_;
    std::map<std::string, int64_t> pieces_;  // op -> pieces it makes per iteration
    std::map<std::string, std::string> repeats_;    // lbn|factor -> the repeat's output
    std::map<std::string, std::string> acc_ticks_;  // op|factor -> the acc_tick
  };
};

}  // namespace

std::unique_ptr<Pass> MakeTimeShapePass() { return std::make_unique<TimeShapePass>(); }

}  // namespace oneflow
