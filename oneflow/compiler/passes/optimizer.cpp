// Pass "optimizer": one update op per trainable variable that received a gradient. The gradient
// is scaled by 1 / (element count of the loss), as OneFlow 0.3 did, so a non-scalar loss is
// effectively averaged. Optimizer state is held in variables ("<variable>-momentum" for SGD with
// momentum, "<variable>-m" and "<variable>-v" for Adam), so it persists across iterations and
// jobs like any other variable.
#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"

namespace oneflow {
namespace {

std::string UpdateOpType(const TrainConf& train) {
  if (train.has_adam()) { return "adam_update"; }
  return train.sgd().momentum() == 0 ? "sgd_update" : "momentum_update";
}

// A zero-initialised, non-trainable variable "<variable>-<suffix>" shaped like `variable`,
// created once per job; returns its blob.
std::string StateVariable(JobBuildContext& job, const OperatorConf& variable,
                          const std::string& suffix) {
  const std::string name = variable.name() + "-" + suffix;
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

class OptimizerPass final : public Pass {
 public:
  std::string name() const override { return "optimizer"; }

  void Apply(JobBuildContext& job) const override {
    const JobConf& job_conf = job.job().job_conf();
    if (!job_conf.is_train()) { return; }
    const TrainConf train = job_conf.train_conf();
    const double scale = 1.0 / job.LogicalBlobDesc(train.loss_lbn(0)).shape.elem_count();
    const std::string learning_rate = LearningRateLbn(job.job_name());
    std::vector<OperatorConf> variables;
    for (const OperatorConf& op : job.job().op()) {
      if (op.op_type() == "variable" && op.attr().at("trainable").bool_value()) {
        variables.push_back(op);
      }
    }
    for (const OperatorConf& variable : variables) {
      const std::string model = OutputLbn(variable, "out");
      auto diff = job.job().blob_to_diff().find(model);
      if (diff == job.job().blob_to_diff().end()) { continue; }
      OpConfBuilder update(UpdateOpType(train), variable.name() + "-update");
      update.Input("model", model)
          .Input("model_diff", diff->second)
          .Input("learning_rate", learning_rate)
          .Attr("scale", scale);
      if (train.has_adam()) {
        const AdamConf& adam = train.adam();
        update.Input("m", StateVariable(job, variable, "m"))
            .Input("v", StateVariable(job, variable, "v"))
            .Attr("beta1", adam.beta1())
            .Attr("beta2", adam.beta2())
            .Attr("epsilon", adam.epsilon())
            .Attr("weight_decay", adam.weight_decay())
            .Attr("do_bias_correction", adam.do_bias_correction());
        if (adam.do_bias_correction()) {
          update.Input("train_step", MakeLbn(TrainStepVariableName(job.job_name()), "out"));
        }
      } else if (train.sgd().momentum() != 0) {
        update.Input("momentum", StateVariable(job, variable, "momentum"))
            .Attr("beta", train.sgd().momentum());
      }
      OperatorConf update_conf = update.Build();
      *update_conf.mutable_placement() = variable.placement();
      update_conf.set_created_by_pass("optimizer");
      job.AddOp(std::move(update_conf));
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeOptimizerPass() { return std::make_unique<OptimizerPass>(); }

}  // namespace oneflow
