// Pass "train_step": gives a train job its step counter (a persistent int64 variable), one
// learning-rate op per optimizer that reads it, the op that advances it once per iteration, and
// with dynamic loss scaling the loss-scale variables (the loss gradient seed reads the scale).
#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"

namespace oneflow {

std::string TrainStateName(const JobConf& conf) {
  return conf.train_state_name().empty() ? conf.job_name() : conf.train_state_name();
}

std::string TrainStepVariableName(const std::string& job_name) {
  return "System-Train-TrainStep-" + job_name;
}

std::string LearningRateLbn(const std::string& job_name, int64_t optimizer_index) {
  std::string name = "System-Train-LearningRate-" + job_name;
  if (optimizer_index > 0) { name += "-" + std::to_string(optimizer_index); }
  return MakeLbn(name, "out");
}

std::string LossScaleVariableName(const std::string& job_name) {
  return "System-Train-LossScale-" + job_name;
}

std::string GoodStepCounterVariableName(const std::string& job_name) {
  return "System-Train-GoodStepCounter-" + job_name;
}

OperatorConf SystemVariable(const std::string& name, const Shape& shape, DataType data_type,
                            double initial_value) {
  return OpConfBuilder("variable", name)
      .Attr("shape", shape)
      .Attr("dtype", data_type)
      .Attr("initializer", "constant")
      .Attr("initializer_args", std::vector<double>{initial_value})
      .Attr("trainable", false)
      .Build();
}

namespace {

OperatorConf ScalarVariable(const std::string& name, DataType data_type, double initial_value) {
  return SystemVariable(name, Shape({1}), data_type, initial_value);
}

class TrainStepPass final : public Pass {
 public:
  std::string name() const override { return "train_step"; }

  void Apply(JobBuildContext& job) const override {
    const JobConf& job_conf = job.job().job_conf();
    if (!job_conf.is_train()) { return; }
    const TrainConf& train = job_conf.train_conf();
    if (train.loss_lbn_size() == 0 || train.optimizer_size() == 0) {
      throw Error(ErrorKind::kValue)
          << "train job '" << job.job_name()
          << "' has no optimizer: call flow.optimizer.SGD(...).minimize(loss) inside the job "
             "function";
    }
    const std::string step_name = TrainStepVariableName(TrainStateName(job.job().job_conf()));
    job.AddOp(ScalarVariable(step_name, kInt64, 0.0));
    const std::string step_lbn = MakeLbn(step_name, "out");
    for (int64_t i = 0; i < train.optimizer_size(); ++i) {
      const OptimizerConf& optimizer = train.optimizer(i);
      if (!optimizer.learning_rate_lbn().empty()) { continue; }  // CustomScheduler
      OperatorConf schedule =
          OpConfBuilder("learning_rate_schedule", OpNameOfLbn(LearningRateLbn(job.job_name(), i)))
              .Input("train_step", step_lbn)
              .Build();
      for (const auto& attr : optimizer.learning_rate_attr()) {
        (*schedule.mutable_attr())[attr.first] = attr.second;
      }
      job.AddOp(std::move(schedule));
    }
    job.AddOp(OpConfBuilder("increment_counter", "System-Train-IncrementStep-" + job.job_name())
                  .Input("counter", step_lbn)
                  .Build());
    if (train.has_dynamic_loss_scale()) {
      const double initial = train.dynamic_loss_scale().initial_loss_scale();
      job.AddOp(ScalarVariable(LossScaleVariableName(TrainStateName(job.job().job_conf())), kFloat, initial));
      job.AddOp(ScalarVariable(GoodStepCounterVariableName(TrainStateName(job.job().job_conf())), kInt64, 0.0));
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeTrainStepPass() { return std::make_unique<TrainStepPass>(); }

}  // namespace oneflow
