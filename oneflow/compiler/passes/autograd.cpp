// Pass "autograd": appends the backward ops of a train job. Starting from the loss (its diff
// seeded with ones, times the static loss_scale_factor or the dynamic loss scale), it walks the
// ops in reverse topological order and calls each op's registered gradient rule, summing the
// gradients of blobs read by several ops. Only blobs that lie between a trainable variable and
// the loss get gradients. Every blob's gradient is recorded in Job.blob_to_diff (unscaled; the
// optimizer pass scales variable diffs).
#include <set>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/job/job_graph.h"

namespace oneflow {
namespace {

class AutogradState {
 public:
  explicit AutogradState(JobBuildContext& job) : job_(job) {}

  void AddContribution(const std::string& lbn, const std::string& grad_lbn) {
    contributions_[lbn].push_back(grad_lbn);
  }
  bool HasContribution(const std::string& lbn) const { return contributions_.count(lbn) > 0; }

  // The summed gradient of `lbn`, created once; zeros when nothing flows into it.
  std::string Diff(const std::string& lbn, const ParallelConf& placement) {
    auto done = diffs_.find(lbn);
    if (done != diffs_.end()) { return done->second; }
    std::string diff;
    auto it = contributions_.find(lbn);
    if (it == contributions_.end()) {
      OperatorConf zeros = OpConfBuilder("constant_like", "System-Autograd-" + SanitizedLbn(lbn) +
                                                              "-zero_grad")
                               .Input("like", lbn)
                               .Attr("value", 0.0)
                               .Build();
      diff = OutputLbn(Add(zeros, placement), "out");
    } else if (it->second.size() == 1) {
      diff = it->second.front();
    } else {
      OpConfBuilder sum("add_n", "System-Autograd-" + SanitizedLbn(lbn) + "-grad_sum");
      for (const std::string& grad : it->second) { sum.Input("in", grad); }
      diff = OutputLbn(Add(sum.Build(), placement), "out");
    }
    diffs_[lbn] = diff;
    if (it != contributions_.end()) { job_.SetBlobDiff(lbn, diff); }
    return diff;
  }

  const OperatorConf& Add(OperatorConf conf, const ParallelConf& placement) {
    *conf.mutable_placement() = placement;
    conf.set_created_by_pass("autograd");
    return job_.AddOp(std::move(conf));
  }

  JobBuildContext& job() { return job_; }

 private:
  JobBuildContext& job_;
  std::map<std::string, std::vector<std::string>> contributions_;
  std::map<std::string, std::string> diffs_;
};

class OpGradContext final : public GradContext {
 public:
  OpGradContext(AutogradState& state, const OperatorConf& op, const OpDef& def,
                const std::set<std::string>& needs_grad)
      : state_(state), op_(op), def_(def), needs_grad_(needs_grad) {}

  const OperatorConf& op() const override { return op_; }
  const BlobDesc& Desc(const std::string& lbn) const override {
    return state_.job().LogicalBlobDesc(lbn);
  }
  bool NeedInputGrad(const std::string& argument, int64_t index) const override {
    if (def_.no_grad_inputs.count(argument)) { return false; }
    if (index >= InputCount(argument)) { return false; }
    return needs_grad_.count(Input(argument, index)) > 0;
  }
  std::string OutputGrad(const std::string& argument, int64_t index) override {
    return state_.Diff(Output(argument, index), op_.placement());
  }
  std::string AddOp(const std::string& suffix, OpConfBuilder builder,
                    const std::string& out_argument) override {
    OperatorConf conf = builder.Build();
    conf.set_name(op_.name() + "-" + suffix);
    const OperatorConf& added = state_.Add(std::move(conf), op_.placement());
    return out_argument.empty() ? std::string() : OutputLbn(added, out_argument);
  }
  void SetInputGrad(const std::string& argument, int64_t index,
                    const std::string& grad_lbn) override {
    if (!NeedInputGrad(argument, index)) { return; }
    state_.AddContribution(Input(argument, index), grad_lbn);
  }

 private:
  AutogradState& state_;
  const OperatorConf& op_;
  const OpDef& def_;
  const std::set<std::string>& needs_grad_;
};

bool IsTrainableVariable(const OperatorConf& op) {
  return op.op_type() == "variable" && op.attr().at("trainable").bool_value();
}

class AutogradPass final : public Pass {
 public:
  std::string name() const override { return "autograd"; }

  void Apply(JobBuildContext& job) const override {
    if (!job.job().job_conf().is_train()) { return; }
    const Job forward = job.job();  // snapshot: the graph below must not see backward ops
    JobGraph graph(forward);
    const OpRegistry& registry = OpRegistry::Instance();

    // Blobs that depend on a trainable variable through differentiable edges. Floating blobs
    // do; integer blobs only on a path that an explicit cast started (OneFlow 0.3 carries
    // gradients through flow.cast to an integer type and back), so that argmax, comparisons
    // and the like end the path.
    std::set<std::string> depends_on_variable;
    for (const std::string& op_name : graph.TopologicalOrder()) {
      const OperatorConf& op = graph.Op(op_name);
      const OpDef& def = registry.Get(op.op_type());
      bool depends = IsTrainableVariable(op);
      bool integer_path = op.op_type() == "cast";
      if (!def.non_differentiable) {
        for (const auto& entry : op.input()) {
          if (def.no_grad_inputs.count(entry.first)) { continue; }
          for (const std::string& lbn : entry.second.value()) {
            if (depends_on_variable.count(lbn) == 0) { continue; }
            depends = true;
            integer_path =
                integer_path || !IsFloatingOrHalfDataType(job.LogicalBlobDesc(lbn).data_type);
          }
        }
      }
      if (!depends) { continue; }
      for (const auto& entry : op.output()) {
        for (const std::string& lbn : entry.second.value()) {
          if (integer_path || IsFloatingOrHalfDataType(job.LogicalBlobDesc(lbn).data_type)) {
            depends_on_variable.insert(lbn);
          }
        }
      }
    }

    const TrainConf& train = forward.job_conf().train_conf();
    std::set<std::string> needs_grad;  // on a path from a trainable variable to a loss
    for (const std::string& loss : train.loss_lbn()) {
      const BlobDesc& desc = job.LogicalBlobDesc(loss);
      // An integer loss is allowed when it comes from a variable through a cast (OneFlow 0.3
      // trains such losses: its gradient is seeded with integer ones).
      if (desc.data_type == kFloat16 || desc.data_type == kUInt8) {
        throw Error(ErrorKind::kType)
            << "loss '" << loss << "' has dtype " << DataTypeName(desc.data_type)
            << "; a loss must be float32, float64 or an integer type";
      }
      if (!depends_on_variable.count(loss)) {
        throw Error(ErrorKind::kValue)
            << "loss '" << loss << "' does not depend on any trainable variable through "
            << "differentiable ops, so there is nothing to train (create variables with "
            << "flow.get_variable or flow.layers; ops such as sort, argmax and comparisons "
            << "have no gradient)";
      }
      needs_grad.insert(loss);
    }
    const auto& order = graph.TopologicalOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const OperatorConf& op = graph.Op(*it);
      bool active = false;
      for (const auto& entry : op.output()) {
        for (const std::string& lbn : entry.second.value()) {
          active = active || needs_grad.count(lbn) > 0;
        }
      }
      if (!active) { continue; }
      const OpDef& def = registry.Get(op.op_type());
      if (def.non_differentiable) { continue; }
      for (const auto& entry : op.input()) {
        if (def.no_grad_inputs.count(entry.first)) { continue; }
        for (const std::string& lbn : entry.second.value()) {
          if (depends_on_variable.count(lbn)) { needs_grad.insert(lbn); }
        }
      }
    }

    AutogradState state(job);
    double seed = train.loss_scale_factor() == 0 ? 1.0 : train.loss_scale_factor();
    for (const std::string& loss : train.loss_lbn()) {
      const OperatorConf& producer = graph.Op(graph.Producer(loss));
      const std::string seed_name = "System-Autograd-" + SanitizedLbn(loss) + "-loss_seed";
      OperatorConf seed_op =
          train.has_dynamic_loss_scale()
              ? OpConfBuilder("loss_scale_seed", seed_name)
                    .Input("like", loss)
                    .Input("loss_scale", MakeLbn(LossScaleVariableName(TrainStateName(job.job().job_conf())), "out"))
                    .Build()
              : OpConfBuilder("constant_like", seed_name).Input("like", loss).Attr("value", seed).Build();
      state.AddContribution(loss, OutputLbn(state.Add(seed_op, producer.placement()), "out"));
    }

    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const OperatorConf& op = graph.Op(*it);
      if (op.op_type() == "variable") { continue; }
      bool has_output_grad = false;
      for (const auto& entry : op.output()) {
        for (const std::string& lbn : entry.second.value()) {
          has_output_grad = has_output_grad || (needs_grad.count(lbn) && state.HasContribution(lbn));
        }
      }
      if (!has_output_grad) { continue; }
      const OpDef& def = registry.Get(op.op_type());
      if (def.non_differentiable) { continue; }
      if (!def.grad) {
        throw Error(ErrorKind::kNotImplemented)
            << "op '" << op.name() << "' (" << op.op_type() << ") has no gradient rule";
      }
      OpGradContext context(state, op, def, needs_grad);
      try {
        def.grad(context);
      } catch (Error& error) {
        error.AddContext("while generating the gradient of op '" + op.name() + "' (" +
                         op.op_type() + ")");
        throw;
      }
      // Record the diff of every output, so watch_diff can find it.
      for (const auto& entry : op.output()) {
        for (const std::string& lbn : entry.second.value()) {
          if (state.HasContribution(lbn)) { state.Diff(lbn, op.placement()); }
        }
      }
    }
    for (const OperatorConf& op : forward.op()) {
      if (!IsTrainableVariable(op)) { continue; }
      const std::string lbn = OutputLbn(op, "out");
      if (state.HasContribution(lbn)) { state.Diff(lbn, op.placement()); }
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeAutogradPass() { return std::make_unique<AutogradPass>(); }

}  // namespace oneflow
