// Pass "optimizer": one update op per trainable variable that received a gradient, of the type
// its optimizer (TrainConf.optimizer) names. Generic: the update op's declaration says what it
// needs. Every mutable input besides "model" is optimizer state, held in a zero-initialised
// non-trainable variable "<variable>-<argument>" (so it persists across iterations and jobs and
// is saved with the checkpoint); an op that declares "train_step" reads the step counter.
//
// The gradient an update uses is scale * diff + l1 * sign(model) + l2 * model, where scale is
// 1 / (element count of the loss) as in OneFlow 0.3 (a non-scalar loss is averaged) divided by
// the loss scale (static: folded into scale; dynamic: 1 / the loss-scale variable, given as the
// update's scale_by_tensor), and l1/l2 come from the variable's regularizer. Dynamic loss
// scaling also counts the non-finite gradient elements: the updates skip the step when there
// are any, and the loss scale shrinks or grows (dynamic_loss_scale_schedule). Clipping by global
// norm makes each gradient explicit (scale_regularize_gradient), sums their squares, and gives
// the updates the clip factor as scale_by_tensor instead.
//
// Sparse updates (TrainConf.indexed_slices_variable, OneFlow's indexed_slices_optimizer_conf): a
// listed variable whose gradient is gather's (unsorted_segment_sum_like on axis 0, possibly
// scaled, cast or re-laid out on the way) gets an update_mask counting how often each row was
// looked up; its update leaves the rows with a zero count, and their state, untouched. Any
// other gradient, or an update op that needs whole-variable norms, stays dense, as in OneFlow.
#include <regex>
#include <set>

#include "oneflow/common/error.h"
#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/framework/op_registry.h"

namespace oneflow {
namespace {

// A zero-initialised, non-trainable variable "<variable>-<suffix>" shaped like `variable`,
// created once per job; returns its blob. A user's variable of that name is refused.
std::string StateVariable(JobBuildContext& job, const OperatorConf& variable,
                          const std::string& suffix) {
  const std::string name = variable.name() + "-" + suffix;
  if (job.HasOp(name) && job.Op(name).created_by_pass() != "optimizer") {
    throw Error(ErrorKind::kValue)
        << "job '" << job.job_name() << "': the variable '" << name << "' has the name of the "
        << "optimizer's " << suffix << " state of variable '" << variable.name()
        << "' (<variable>-<state>); rename it";
  }
  if (!job.HasOp(name)) {
    OperatorConf state = OpConfBuilder("variable", name)
                             .Attr("shape", Shape(variable.attr().at("shape").shape_value()))
                             .Attr("dtype", variable.attr().at("dtype").data_type_value())
                             .Attr("initializer", "constant")
                             .Attr("initializer_args", std::vector<double>{0.0})
                             .Attr("trainable", false)
                             .Attr("split_axis", variable.attr().at("split_axis").int64_value())
                             .Build();
    *state.mutable_placement() = variable.placement();
    state.set_created_by_pass("optimizer");
    job.AddOp(std::move(state));
  }
  return MakeLbn(name, "out");
}

bool MatchesAny(const std::string& name,
                const google::protobuf::RepeatedPtrField<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    if (std::regex_search(name, std::regex(pattern))) { return true; }
  }
  return false;
}

double WeightDecayOf(const OptimizerConf& optimizer, const std::string& variable) {
  if (optimizer.weight_decay_rate() == 0.0) { return 0.0; }
  if (optimizer.weight_decay_includes_size() > 0) {
    return MatchesAny(variable, optimizer.weight_decay_includes()) ? optimizer.weight_decay_rate()
                                                                   : 0.0;
  }
  return MatchesAny(variable, optimizer.weight_decay_excludes()) ? 0.0
                                                                 : optimizer.weight_decay_rate();
}

// One variable's gradient as the optimizer sees it.
struct VariableGradient {
  OperatorConf variable;
  std::string diff;
  double l1 = 0.0, l2 = 0.0;
  std::string update_mask;  // sparse update: the rows to update (non-zero), or empty
};

// The gather gradient (unsorted_segment_sum_like on axis 0) `diff` comes from, through ops
// that only scale, cast or re-lay out their input; nullptr when there is none.
const OperatorConf* GatherGradientOf(const JobBuildContext& job, std::string diff) {
  static const std::set<std::string> kPassThrough = {"scalar_mul", "cast", "identity",
                                                     "parallel_cast"};
  for (;;) {
    const OperatorConf& op = job.Op(OpNameOfLbn(diff));
    if (op.op_type() == "unsorted_segment_sum_like") {
      const bool rows =
          op.attr().at("axis").int64_value() == 0 && op.attr().at("batch_dims").int64_value() == 0;
      return rows ? &op : nullptr;
    }
    if (kPassThrough.count(op.op_type()) == 0) { return nullptr; }
    diff = InputLbn(op, "in");
  }
}

// For a sparsely updated variable: a blob shaped like it whose rows count the lookups of each
// row (built as a segment sum of ones over the gather's indices); empty when its gradient does
// not come from a gather.
std::string SparseUpdateMask(JobBuildContext& job, const VariableGradient& gradient) {
  const OperatorConf* segment_sum = GatherGradientOf(job, gradient.diff);
  if (segment_sum == nullptr) { return ""; }
  const std::string name = gradient.variable.name() + "-update_mask";
  const std::string data = InputLbn(*segment_sum, "data");
  const std::string indices = InputLbn(*segment_sum, "segment_ids");
  const std::string model = OutputLbn(gradient.variable, "out");
  auto placed = [&](OperatorConf conf) {
    *conf.mutable_placement() = gradient.variable.placement();
    conf.set_created_by_pass("optimizer");
    return OutputLbn(job.AddOp(std::move(conf)), "out");
  };
  std::string ones = placed(OpConfBuilder("constant_like", name + "-ones")
                                .Input("like", data)
                                .Attr("value", 1.0)
                                .Build());
  const DataType model_type = job.LogicalBlobDesc(model).data_type;
  if (job.LogicalBlobDesc(ones).data_type != model_type) {
    ones = placed(
        OpConfBuilder("cast", name + "-cast").Input("in", ones).Attr("dtype", model_type).Build());
  }
  return placed(OpConfBuilder("unsorted_segment_sum_like", name)
                    .Input("data", ones)
                    .Input("segment_ids", indices)
                    .Input("like", model)
                    .Build());
}

class OptimizerPass final : public Pass {
 public:
  std::string name() const override { return "optimizer"; }

  void Apply(JobBuildContext& job) const override {
    const JobConf& job_conf = job.job().job_conf();
    if (!job_conf.is_train()) { return; }
    const TrainConf train = job_conf.train_conf();
    const double static_scale = train.loss_scale_factor() == 0 ? 1.0 : train.loss_scale_factor();
    const double scale =
        1.0 / (static_cast<double>(job.LogicalBlobDesc(train.loss_lbn(0)).shape.elem_count()) *
               (train.has_dynamic_loss_scale() ? 1.0 : static_scale));
    std::vector<std::vector<VariableGradient>> groups = GroupByOptimizer(job, train);
    const std::set<std::string> sparse(train.indexed_slices_variable().begin(),
                                       train.indexed_slices_variable().end());
    for (int64_t i = 0; i < train.optimizer_size(); ++i) {
      const OpDef& def = OpRegistry::Instance().Get(train.optimizer(i).update_op_type());
      if (def.FindInput("update_mask") == nullptr) { continue; }
      for (VariableGradient& gradient : groups[i]) {
        if (sparse.count(gradient.variable.name()) > 0) {
          gradient.update_mask = SparseUpdateMask(job, gradient);
        }
      }
    }

    std::string inverse_loss_scale, skip_if;
    if (train.has_dynamic_loss_scale()) {
      inverse_loss_scale = AddDynamicLossScale(job, train, groups, &skip_if);
    }
    for (int64_t i = 0; i < train.optimizer_size(); ++i) {
      const OptimizerConf& optimizer = train.optimizer(i);
      const std::string learning_rate = optimizer.learning_rate_lbn().empty()
                                            ? LearningRateLbn(job.job_name(), i)
                                            : optimizer.learning_rate_lbn();
      std::string clip_factor;
      if (optimizer.clip_norm() > 0.0 && !groups[i].empty()) {
        clip_factor = ClipByGlobalNorm(job, optimizer, i, scale, inverse_loss_scale, &groups[i]);
      }
      for (const VariableGradient& gradient : groups[i]) {
        AddUpdate(job, optimizer, gradient, learning_rate, clip_factor.empty() ? scale : 1.0,
                  clip_factor.empty() ? inverse_loss_scale : clip_factor, skip_if);
      }
    }
  }

 private:
  // The variables each optimizer trains: those it names, else the trainable ones no optimizer
  // names. Variables without a gradient (not on the loss's path) are left alone.
  static std::vector<std::vector<VariableGradient>> GroupByOptimizer(JobBuildContext& job,
                                                                     const TrainConf& train) {
    std::map<std::string, int64_t> named;
    int64_t default_optimizer = -1;
    for (int64_t i = 0; i < train.optimizer_size(); ++i) {
      const OptimizerConf& optimizer = train.optimizer(i);
      OpRegistry::Instance().Get(optimizer.update_op_type());  // NotImplementedError if unknown
      if (optimizer.variables_size() == 0) {
        if (default_optimizer >= 0) {
          throw Error(ErrorKind::kValue)
              << "two optimizers of job '" << job.job_name()
              << "' train all variables; give each one its variables=[...]";
        }
        default_optimizer = i;
      }
      for (const std::string& variable : optimizer.variables()) {
        if (!named.emplace(variable, i).second) {
          throw Error(ErrorKind::kValue)
              << "variable '" << variable << "' is given to two optimizers of job '"
              << job.job_name() << "'";
        }
      }
    }
    std::vector<std::vector<VariableGradient>> groups(train.optimizer_size());
    for (const OperatorConf& op : job.job().op()) {
      if (op.op_type() != "variable" || !op.attr().at("trainable").bool_value()) { continue; }
      auto diff = job.job().blob_to_diff().find(OutputLbn(op, "out"));
      if (diff == job.job().blob_to_diff().end()) { continue; }
      auto owner = named.find(op.name());
      const int64_t index = owner != named.end() ? owner->second : default_optimizer;
      if (index < 0) { continue; }
      VariableGradient gradient{op, diff->second};
      gradient.l1 = op.attr().count("l1") ? op.attr().at("l1").double_value() : 0.0;
      gradient.l2 = op.attr().count("l2") ? op.attr().at("l2").double_value() : 0.0;
      groups[index].push_back(gradient);
    }
    for (const auto& entry : named) {
      if (!job.HasOp(entry.first) || job.Op(entry.first).op_type() != "variable") {
        throw Error(ErrorKind::kValue)
            << "optimizer of job '" << job.job_name() << "' names variable '" << entry.first
            << "', which the job does not have";
      }
    }
    return groups;
  }

  static OperatorConf Placed(OperatorConf conf, const OperatorConf& like) {
    *conf.mutable_placement() = like.placement();
    conf.set_created_by_pass("optimizer");
    return conf;
  }

  // Sum of (1,) blobs (the first when there is one).
  static std::string Sum(JobBuildContext& job, const std::string& name,
                         const std::vector<std::string>& blobs) {
    if (blobs.size() == 1) { return blobs[0]; }
    OpConfBuilder add("add_n", name);
    for (const std::string& blob : blobs) { add.Input("in", blob); }
    OperatorConf conf = add.Build();
    conf.set_created_by_pass("optimizer");
    return OutputLbn(job.AddOp(std::move(conf)), "out");
  }

  // Adds the non-finite count and the loss-scale schedule; returns 1 / loss scale and sets
  // *skip_if to the count.
  static std::string AddDynamicLossScale(JobBuildContext& job, const TrainConf& train,
                                         const std::vector<std::vector<VariableGradient>>& groups,
                                         std::string* skip_if) {
    const std::string prefix = "System-Train-DynamicLossScale-" + job.job_name();
    const std::string loss_scale = MakeLbn(LossScaleVariableName(TrainStateName(job.job().job_conf())), "out");
    std::vector<std::string> counts;
    for (const auto& group : groups) {
      for (const VariableGradient& gradient : group) {
        counts.push_back(OutputLbn(
            job.AddOp(Placed(
                OpConfBuilder("count_not_finite", gradient.variable.name() + "-count_not_finite")
                    .Input("x", gradient.diff)
                    .Build(),
                gradient.variable)),
            "out"));
      }
    }
    if (counts.empty()) { return ""; }
    *skip_if = Sum(job, prefix + "-CountNotFinite", counts);
    const DynamicLossScaleConf& conf = train.dynamic_loss_scale();
    OperatorConf schedule =
        OpConfBuilder("dynamic_loss_scale_schedule", prefix + "-Schedule")
            .Input("count_not_finite", *skip_if)
            .Input("loss_scale", loss_scale)
            .Input("good_step_counter", MakeLbn(GoodStepCounterVariableName(TrainStateName(job.job().job_conf())), "out"))
            .Attr("increment_period", conf.increment_period())
            .Attr("multiplier", conf.multiplier())
            .Build();
    schedule.set_created_by_pass("optimizer");
    job.AddOp(std::move(schedule));
    OperatorConf inverse = OpConfBuilder("loss_scale_inverse", prefix + "-Inverse")
                               .Input("loss_scale", loss_scale)
                               .Build();
    inverse.set_created_by_pass("optimizer");
    return OutputLbn(job.AddOp(std::move(inverse)), "out");
  }

  // Replaces each gradient's diff by its explicit scaled and regularized gradient and returns
  // the clip factor clip_norm / max(global norm, clip_norm).
  static std::string ClipByGlobalNorm(JobBuildContext& job, const OptimizerConf& optimizer,
                                      int64_t index, double scale,
                                      const std::string& inverse_loss_scale,
                                      std::vector<VariableGradient>* gradients) {
    std::vector<std::string> square_sums;
    for (VariableGradient& gradient : *gradients) {
      const std::string& name = gradient.variable.name();
      OpConfBuilder explicit_gradient("scale_regularize_gradient", name + "-clip_gradient");
      explicit_gradient.Input("diff", gradient.diff)
          .Input("model", OutputLbn(gradient.variable, "out"))
          .Attr("scale", scale)
          .Attr("l1", gradient.l1)
          .Attr("l2", gradient.l2);
      if (!inverse_loss_scale.empty()) {
        explicit_gradient.Input("scale_by_tensor", inverse_loss_scale);
      }
      gradient.diff =
          OutputLbn(job.AddOp(Placed(explicit_gradient.Build(), gradient.variable)), "out");
      gradient.l1 = gradient.l2 = 0.0;
      square_sums.push_back(OutputLbn(
          job.AddOp(Placed(
              OpConfBuilder("square_sum", name + "-square_sum").Input("x", gradient.diff).Build(),
              gradient.variable)),
          "out"));
    }
    const std::string prefix =
        "System-Train-ClipGradient-" + job.job_name() + "-" + std::to_string(index);
    OperatorConf factor = OpConfBuilder("global_norm_clip_factor", prefix + "-Factor")
                              .Input("square_sum", Sum(job, prefix + "-SquareSum", square_sums))
                              .Attr("clip_norm", optimizer.clip_norm())
                              .Build();
    factor.set_created_by_pass("optimizer");
    return OutputLbn(job.AddOp(std::move(factor)), "out");
  }

  static void AddUpdate(JobBuildContext& job, const OptimizerConf& optimizer,
                        const VariableGradient& gradient, const std::string& learning_rate,
                        double scale, const std::string& scale_by_tensor,
                        const std::string& skip_if) {
    const OperatorConf& variable = gradient.variable;
    const OpDef& def = OpRegistry::Instance().Get(optimizer.update_op_type());
    OpConfBuilder update(optimizer.update_op_type(), variable.name() + "-update");
    update.Input("model", OutputLbn(variable, "out"))
        .Input("model_diff", gradient.diff)
        .Input("learning_rate", learning_rate)
        .Attr("scale", scale)
        .Attr("l1", gradient.l1)
        .Attr("l2", gradient.l2)
        .Attr("weight_decay", WeightDecayOf(optimizer, variable.name()));
    for (const std::string& state : def.mutable_inputs) {
      if (state != "model") { update.Input(state, StateVariable(job, variable, state)); }
    }
    if (def.FindInput("train_step") != nullptr) {
      update.Input("train_step", MakeLbn(TrainStepVariableName(TrainStateName(job.job().job_conf())), "out"));
    }
    if (!scale_by_tensor.empty()) { update.Input("scale_by_tensor", scale_by_tensor); }
    if (!skip_if.empty()) { update.Input("skip_if", skip_if); }
    if (!gradient.update_mask.empty()) { update.Input("update_mask", gradient.update_mask); }
    OperatorConf conf = update.Build();
    for (const auto& attr : optimizer.update_attr()) {
      (*conf.mutable_attr())[attr.first] = attr.second;
    }
    job.AddOp(Placed(std::move(conf), variable));
  }
};

}  // namespace

std::unique_ptr<Pass> MakeOptimizerPass() { return std::make_unique<OptimizerPass>(); }

}  // namespace oneflow
