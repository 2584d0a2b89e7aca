// Pass "optimizer": one update op per trainable variable that received a gradient. The gradient
// is scaled by 1 / (element count of the loss), as OneFlow 0.3 did, so a non-scalar loss is
// effectively averaged. Momentum buffers are variables ("<variable>-momentum"), so they persist
// across iterations and jobs like any other variable.
#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"

namespace oneflow {
namespace {

class OptimizerPass final : public Pass {
 public:
  std::string name() const override { return "optimizer"; }

  void Apply(JobBuildContext& job) const override {
    const JobConf& job_conf = job.job().job_conf();
    if (!job_conf.is_train()) { return; }
    const TrainConf train = job_conf.train_conf();
    const double scale = 1.0 / job.LogicalBlobDesc(train.loss_lbn(0)).shape.elem_count();
    const std::string learning_rate = LearningRateLbn(job.job_name());
    const double momentum = train.sgd().momentum();

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
      OpConfBuilder update(momentum == 0 ? "sgd_update" : "momentum_update",
                           variable.name() + "-update");
      update.Input("model", model)
          .Input("model_diff", diff->second)
          .Input("learning_rate", learning_rate)
          .Attr("scale", scale);
      if (momentum != 0) {
        const std::string buffer = variable.name() + "-momentum";
        OperatorConf buffer_conf = OpConfBuilder("variable", buffer)
                                       .Attr("shape", Shape(variable.attr().at("shape").shape_value()))
                                       .Attr("dtype", variable.attr().at("dtype").data_type_value())
                                       .Attr("initializer", "constant")
                                       .Attr("initializer_args", std::vector<double>{0.0})
                                       .Attr("trainable", false)
                                       .Build();
        *buffer_conf.mutable_placement() = variable.placement();
        if (!job.HasOp(buffer)) { job.AddOp(buffer_conf); }
        update.Input("momentum", MakeLbn(buffer, "out")).Attr("beta", momentum);
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
