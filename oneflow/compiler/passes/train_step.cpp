// Pass "train_step": gives a train job its step counter (a persistent int64 variable), the
// learning-rate op that reads it, and the op that advances it once per iteration.
#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"

namespace oneflow {

std::string TrainStepVariableName(const std::string& job_name) {
  return "System-Train-TrainStep-" + job_name;
}

std::string LearningRateLbn(const std::string& job_name) {
  return MakeLbn("System-Train-LearningRate-" + job_name, "out");
}

namespace {

class TrainStepPass final : public Pass {
 public:
  std::string name() const override { return "train_step"; }

  void Apply(JobBuildContext& job) const override {
    const JobConf& job_conf = job.job().job_conf();
    if (!job_conf.is_train()) { return; }
    const TrainConf& train = job_conf.train_conf();
    if (train.loss_lbn_size() == 0 || !train.has_learning_rate()) {
      throw Error(ErrorKind::kValue)
          << "train job '" << job.job_name()
          << "' has no optimizer: call flow.optimizer.SGD(...).minimize(loss) inside the job "
             "function";
    }
    const std::string step_name = TrainStepVariableName(job.job_name());
    job.AddOp(OpConfBuilder("variable", step_name)
                  .Attr("shape", Shape({1}))
                  .Attr("dtype", kInt64)
                  .Attr("initializer", "constant")
                  .Attr("initializer_args", std::vector<double>{0.0})
                  .Attr("trainable", false)
                  .Build());
    const std::string step_lbn = MakeLbn(step_name, "out");
    const PiecewiseConstantSchedule& schedule = train.learning_rate().piecewise_constant();
    job.AddOp(OpConfBuilder("learning_rate_schedule", OpNameOfLbn(LearningRateLbn(job.job_name())))
                  .Input("train_step", step_lbn)
                  .Attr("boundaries", std::vector<int64_t>(schedule.boundaries().begin(),
                                                           schedule.boundaries().end()))
                  .Attr("values",
                        std::vector<double>(schedule.values().begin(), schedule.values().end()))
                  .Build());
    job.AddOp(OpConfBuilder("increment_counter", "System-Train-IncrementStep-" + job.job_name())
                  .Input("counter", step_lbn)
                  .Build());
  }
};

}  // namespace

std::unique_ptr<Pass> MakeTrainStepPass() { return std::make_unique<TrainStepPass>(); }

}  // namespace oneflow
