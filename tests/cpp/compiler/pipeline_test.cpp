#include "oneflow/compiler/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "oneflow/compiler/plan_builder.h"
#include "oneflow/job/job_graph.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

// One optimizer with learning rate 0.1 whose update op is `update_op_type`.
OptimizerConf* AddOptimizer(TrainConf* train, const std::string& update_op_type) {
  OptimizerConf* optimizer = train->add_optimizer();
  optimizer->set_update_op_type(update_op_type);
  (*optimizer->mutable_learning_rate_attr())["base_lr"] = ToAttrValue<double>(0.1);
  return optimizer;
}

// loss = x + v, x: (4,), v: (4,) variable; SGD (with momentum unless it is 0).
JobBuildContext MakeTrainJob(double momentum) {
  JobBuildContext job(test::MakeJobConf("train", true));
  std::string x = test::AddInput(job, "x", Shape({4}));
  std::string v = test::AddVariable(job, "v", Shape({4}), 1.0);
  const OperatorConf& add =
      job.AddOp(OpConfBuilder("broadcast_add", "loss").Input("x", x).Input("y", v).Build());
  TrainConf* train = job.mutable_job_conf().mutable_train_conf();
  train->add_loss_lbn(OutputLbn(add, "z"));
  if (momentum == 0) {
    AddOptimizer(train, "sgd_update");
  } else {
    (*AddOptimizer(train, "momentum_update")->mutable_update_attr())["beta"] =
        ToAttrValue<double>(momentum);
  }
  return job;
}

const OperatorConf* FindOpOfType(const Job& job, const std::string& type) {
  for (const OperatorConf& op : job.op()) {
    if (op.op_type() == type) { return &op; }
  }
  return nullptr;
}

TEST(Pipeline, AutogradAndOptimizerOnHandBuiltJob) {
  JobBuildContext job = MakeTrainJob(0.0);
  CompleteJob(job);
  const Job& completed = job.job();
  // The loss diff is seeded with ones and the variable got a gradient.
  const OperatorConf* seed = FindOpOfType(completed, "constant_like");
  ASSERT_NE(seed, nullptr);
  EXPECT_DOUBLE_EQ(seed->attr().at("value").double_value(), 1.0);
  ASSERT_TRUE(completed.blob_to_diff().count("v/out_0"));
  // One SGD update scaled by 1 / (element count of the loss).
  const OperatorConf* update = FindOpOfType(completed, "sgd_update");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(InputLbn(*update, "model"), "v/out_0");
  EXPECT_DOUBLE_EQ(update->attr().at("scale").double_value(), 0.25);
  // The update waits for every other reader of v (variable_ordering).
  ASSERT_EQ(update->control_input_size(), 1);
  EXPECT_EQ(update->control_input(0), "loss");
  // The step counter is advanced after the learning rate is read.
  const OperatorConf* increment = FindOpOfType(completed, "increment_counter");
  ASSERT_NE(increment, nullptr);
  EXPECT_EQ(increment->control_input(0), "System-Train-LearningRate-train");
  EXPECT_NO_THROW(JobGraph graph(completed));
}

TEST(Pipeline, MomentumBufferIsAVariable) {
  JobBuildContext job = MakeTrainJob(0.9);
  CompleteJob(job);
  EXPECT_TRUE(job.HasOp("v-momentum"));
  const OperatorConf* update = FindOpOfType(job.job(), "momentum_update");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(InputLbn(*update, "momentum"), "v-momentum/out_0");
}

TEST(Pipeline, AdamStateVariablesAndTrainStepOrdering) {
  JobBuildContext job = MakeTrainJob(0.0);
  TrainConf* train = job.mutable_job_conf().mutable_train_conf();
  train->clear_optimizer();
  (*AddOptimizer(train, "adam_update")->mutable_update_attr())["do_bias_correction"] =
      ToAttrValue<bool>(true);
  CompleteJob(job);
  EXPECT_TRUE(job.HasOp("v-m"));
  EXPECT_TRUE(job.HasOp("v-v"));
  const OperatorConf* update = FindOpOfType(job.job(), "adam_update");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(InputLbn(*update, "train_step"), "System-Train-TrainStep-train/out_0");
  // The step counter advances only after the update has read it.
  const OperatorConf* increment = FindOpOfType(job.job(), "increment_counter");
  ASSERT_NE(increment, nullptr);
  const auto& controls = increment->control_input();
  EXPECT_NE(std::find(controls.begin(), controls.end(), update->name()), controls.end());
}

TEST(Pipeline, LossWithoutVariableIsAClearError) {
  JobBuildContext job(test::MakeJobConf("train", true));
  std::string x = test::AddInput(job, "x", Shape({4}));
  const OperatorConf& relu = job.AddOp(OpConfBuilder("relu", "r").Input("x", x).Build());
  TrainConf* train = job.mutable_job_conf().mutable_train_conf();
  train->add_loss_lbn(OutputLbn(relu, "y"));
  AddOptimizer(train, "sgd_update");
  try {
    CompleteJob(job);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(error.what()).find("does not depend on any trainable variable"),
              std::string::npos);
    EXPECT_NE(std::string(error.what()).find("pass 'autograd'"), std::string::npos);
  }
}

TEST(PlanBuilder, TasksRegistersAndTicks) {
  JobBuildContext job = MakeTrainJob(0.0);
  CompleteJob(job);
  PlanOptions options;
  options.register_num = 2;
  Plan plan = BuildPlan({&job.job()}, options);
  ASSERT_EQ(plan.job_size(), 1);
  // One compute task per op, plus source and sink ticks.
  EXPECT_EQ(plan.task_size(), job.job().op_size() + 2);
  std::map<int64_t, const RegstDescProto*> regsts;
  for (const TaskProto& task : plan.task()) {
    for (const RegstDescProto& regst : task.produced_regst_desc()) {
      regsts[regst.regst_desc_id()] = &regst;
      EXPECT_GT(regst.consumer_task_id_size(), 0) << "every register is consumed";
    }
  }
  for (const TaskProto& task : plan.task()) {
    if (task.task_type() != kCompute) { continue; }
    const OperatorConf& op = task.exec_node(0).op_conf();
    const RegstDescProto& out = task.produced_regst_desc(0);
    if (op.op_type() == "variable") {
      EXPECT_EQ(out.register_num(), 1);
      EXPECT_EQ(out.variable_name(), op.name());
    } else {
      EXPECT_EQ(out.register_num(), 2);
    }
    if (op.name() == "x") {
      EXPECT_EQ(out.byte_size(), 64);  // (4,) float32 rounded up to the 64-byte alignment
      EXPECT_EQ(task.consumed_regst_desc_id_size(), 1);  // the source tick
    }
  }
  EXPECT_EQ(plan.job(0).input().count("x"), 1);
}

}  // namespace
}  // namespace oneflow
