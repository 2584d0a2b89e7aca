// The auto_mixed_precision pass on small jobs placed on a GPU. The machine running the tests may
// have none, so the session's DeviceResource claims one GPU and this file registers float16
// "gpu" kernels that throw when run: ResolveDeviceTag then says "gpu", and the pass (which only
// compiles) treats the ops as running there. The expected float16 sets are derived by hand from
// OneFlow 0.3's rules (see the pass's header comment), not from the pass's output.
#include <gtest/gtest.h>

#include <set>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/job/job_graph.h"
#include "tests/cpp/test_jobs.h"

namespace oneflow {
namespace {

class UnrunnableGpuKernel final : public Kernel {
 public:
  explicit UnrunnableGpuKernel(const KernelInitContext&) {}
  void Forward(KernelContext&) override {
    throw Error(ErrorKind::kRuntime) << "fake GPU kernel of auto_mixed_precision_test ran";
  }
};

// Float16 GPU kernels for the op types these jobs use, forward and backward.
const bool kFakeGpuKernelsRegistered = [] {
  for (const char* op_type :
       {"matmul", "bias_add", "relu", "relu_grad", "reduce_sum", "cast", "add_n", "transpose",
        "broadcast_add", "broadcast_like", "constant_like", "tanh", "tanh_grad", "conv2d",
        "conv_data_grad", "conv_filter_grad", "batch_norm_mean", "batch_norm_variance",
        "normalization_train", "normalization_train_grad_stats", "normalization_train_grad"}) {
    if (KernelRegistry::Instance().Has(op_type, "gpu", kFloat16)) { continue; }
    KernelRegistry::Instance().Register(op_type, "gpu", kFloat16, [](const KernelInitContext& ctx) {
      return std::make_unique<UnrunnableGpuKernel>(ctx);
    });
  }
  return true;
}();

ParallelConf GpuPlacement() {
  ParallelConf conf;
  conf.set_device_tag("gpu");
  conf.add_device_name("0:0");
  return conf;
}

DeviceResource Resource(int64_t gpu_device_num) {
  DeviceResource resource;
  resource.gpu_device_num = gpu_device_num;
  return resource;
}

JobConf AmpJobConf(bool is_train) {
  JobConf conf = test::MakeJobConf(is_train ? "train" : "predict", is_train);
  conf.set_enable_auto_mixed_precision(true);
  return conf;
}

std::string AddGpuVariable(JobBuildContext& job, const std::string& name, const Shape& shape) {
  job.AddOp(OpConfBuilder("variable", name)
                .Attr("shape", shape)
                .Attr("dtype", kFloat)
                .Attr("initializer", "constant")
                .Attr("initializer_args", std::vector<double>{0.5})
                .Placement(GpuPlacement())
                .Build());
  return MakeLbn(name, "out");
}

std::string AddGpuOp(JobBuildContext& job, OpConfBuilder builder, const std::string& output) {
  return OutputLbn(job.AddOp(builder.Placement(GpuPlacement()).Build()), output);
}

std::string Matmul(JobBuildContext& job, const std::string& name, const std::string& a,
                   const std::string& b) {
  return AddGpuOp(job, OpConfBuilder("matmul", name).Input("a", a).Input("b", b), "out");
}

std::string BiasAdd(JobBuildContext& job, const std::string& name, const std::string& a,
                    const std::string& b) {
  return AddGpuOp(job, OpConfBuilder("bias_add", name).Input("a", a).Input("b", b).Attr("axis", 1),
                  "out");
}

void AddSgd(JobBuildContext& job, const std::string& loss) {
  TrainConf* train = job.mutable_job_conf().mutable_train_conf();
  train->add_loss_lbn(loss);
  OptimizerConf* optimizer = train->add_optimizer();
  optimizer->set_update_op_type("sgd_update");
  (*optimizer->mutable_learning_rate_attr())["base_lr"] = ToAttrValue<double>(0.1);
}

// x (8, 4) -> dense1 (matmul, bias_add) -> relu -> dense2 (matmul, bias_add)
// -> sparse_softmax_cross_entropy with int32 labels: the loss (8,).
JobBuildContext MakeMlpJob(const JobConf& conf, int64_t gpu_device_num) {
  JobBuildContext job(conf, Resource(gpu_device_num));
  std::string x = test::AddInput(job, "x", Shape({8, 4}));
  std::string label = test::AddInput(job, "label", Shape({8}), kInt32);
  std::string w1 = AddGpuVariable(job, "w1", Shape({4, 5}));
  std::string b1 = AddGpuVariable(job, "b1", Shape({5}));
  std::string w2 = AddGpuVariable(job, "w2", Shape({5, 3}));
  std::string b2 = AddGpuVariable(job, "b2", Shape({3}));
  std::string h = BiasAdd(job, "dense1-bias_add", Matmul(job, "dense1-matmul", x, w1), b1);
  std::string r = AddGpuOp(job, OpConfBuilder("relu", "relu").Input("x", h), "y");
  std::string logits = BiasAdd(job, "dense2-bias_add", Matmul(job, "dense2-matmul", r, w2), b2);
  std::string loss = AddGpuOp(job,
                              OpConfBuilder("sparse_softmax_cross_entropy", "loss")
                                  .Input("prediction", logits)
                                  .Input("label", label),
                              "out");
  if (conf.is_train()) { AddSgd(job, loss); }
  return job;
}

DataType OutputType(const JobBuildContext& job, const std::string& op_name,
                    const std::string& output) {
  return job.LogicalBlobDesc(OutputLbn(job.Op(op_name), output)).data_type;
}

// The cast ops the pass added: "<input lbn> -> <dtype>".
std::set<std::string> PassCasts(const Job& job) {
  std::set<std::string> casts;
  for (const OperatorConf& op : job.op()) {
    if (op.created_by_pass() != "auto_mixed_precision") { continue; }
    EXPECT_EQ(op.op_type(), "cast");
    casts.insert(InputLbn(op, "in") + " -> " +
                 DataTypeName(static_cast<DataType>(op.attr().at("dtype").data_type_value())));
  }
  return casts;
}

// The name of the op that produces input `argument` of op `op_name`.
std::string ProducerOf(const JobBuildContext& job, const std::string& op_name,
                       const std::string& argument) {
  return OpNameOfLbn(InputLbn(job.Op(op_name), argument));
}

TEST(AutoMixedPrecision, ListsNameRegisteredOps) {
  const AutoMixedPrecisionLists& lists = DefaultAutoMixedPrecisionLists();
  std::set<std::string> seen;
  for (const auto* list : {&lists.white, &lists.black, &lists.gray, &lists.clear}) {
    for (const std::string& op_type : *list) {
      EXPECT_NE(OpRegistry::Instance().Find(op_type), nullptr) << op_type;
      EXPECT_TRUE(seen.insert(op_type).second) << op_type << " is on two lists";
    }
  }
}

// OneFlow's rules on the MLP: both matmuls are white; dense1's bias_add (gray) and the relu
// (clear) lie between them and join; dense2's bias_add only leads to the black loss, so it
// stays float32 and the cast back sits after dense2's matmul.
TEST(AutoMixedPrecision, MlpForward) {
  JobBuildContext job = MakeMlpJob(AmpJobConf(false), 1);
  CompleteJob(job);
  for (const char* name : {"dense1-matmul", "dense1-bias_add", "dense2-matmul"}) {
    EXPECT_EQ(OutputType(job, name, "out"), kFloat16) << name;
  }
  EXPECT_EQ(OutputType(job, "relu", "y"), kFloat16);
  EXPECT_EQ(OutputType(job, "dense2-bias_add", "out"), kFloat);
  EXPECT_EQ(OutputType(job, "loss", "out"), kFloat);
  for (const char* variable : {"w1", "b1", "w2", "b2"}) {
    EXPECT_EQ(OutputType(job, variable, "out"), kFloat) << variable;
  }
  EXPECT_EQ(
      PassCasts(job.job()),
      (std::set<std::string>{"x/out_0 -> float16", "w1/out_0 -> float16", "b1/out_0 -> float16",
                             "w2/out_0 -> float16", "dense2-matmul/out_0 -> float32"}));
  EXPECT_EQ(ProducerOf(job, "dense2-bias_add", "a"), "dense2-matmul-out_0-cast_h2f");
  EXPECT_EQ(ProducerOf(job, "dense2-bias_add", "b"), "b2");
  EXPECT_EQ(ProducerOf(job, "dense1-matmul", "b"), "w1-out_0-cast_f2h");
  EXPECT_EQ(ProducerOf(job, "relu", "x"), "dense1-bias_add");
  // Predict jobs get no loss scale.
  EXPECT_FALSE(job.job().job_conf().train_conf().has_dynamic_loss_scale());
}

TEST(AutoMixedPrecision, MlpTrainDifferentiatesThroughTheCasts) {
  JobBuildContext job = MakeMlpJob(AmpJobConf(true), 1);
  CompleteJob(job);
  const Job& completed = job.job();
  EXPECT_EQ(OutputType(job, "dense1-matmul", "out"), kFloat16);
  EXPECT_EQ(OutputType(job, "loss", "out"), kFloat);
  // Every variable's gradient is float32 (the casts' gradients cast back) and updated in float32.
  for (const char* variable : {"w1", "b1", "w2", "b2"}) {
    const std::string lbn = MakeLbn(variable, "out");
    ASSERT_TRUE(completed.blob_to_diff().count(lbn)) << variable;
    EXPECT_EQ(job.LogicalBlobDesc(completed.blob_to_diff().at(lbn)).data_type, kFloat) << variable;
  }
  // The float16 blobs got float16 gradients, and a float16 gradient is cast back to float32 at
  // the first cast: w1's gradient comes out of the gradient of the cast w1 -> float16.
  const std::string relu_diff = completed.blob_to_diff().at(MakeLbn("relu", "y"));
  EXPECT_EQ(job.LogicalBlobDesc(relu_diff).data_type, kFloat16);
  const std::string w1_diff = completed.blob_to_diff().at("w1/out_0");
  const OperatorConf& w1_diff_op = job.Op(OpNameOfLbn(w1_diff));
  EXPECT_EQ(w1_diff_op.op_type(), "cast");
  EXPECT_EQ(job.LogicalBlobDesc(InputLbn(w1_diff_op, "in")).data_type, kFloat16);
  std::set<std::string> update_models;
  for (const OperatorConf& op : completed.op()) {
    if (op.op_type() != "sgd_update") { continue; }
    update_models.insert(InputLbn(op, "model"));
    EXPECT_EQ(job.LogicalBlobDesc(InputLbn(op, "model_diff")).data_type, kFloat);
  }
  EXPECT_EQ(update_models, (std::set<std::string>{"w1/out_0", "b1/out_0", "w2/out_0", "b2/out_0"}));
  // No loss scale configured: dynamic loss scaling with PyTorch GradScaler's defaults.
  const TrainConf& train = completed.job_conf().train_conf();
  ASSERT_TRUE(train.has_dynamic_loss_scale());
  EXPECT_DOUBLE_EQ(train.dynamic_loss_scale().initial_loss_scale(), 65536.0);  // GradScaler
  EXPECT_EQ(train.dynamic_loss_scale().increment_period(), 2000);
  EXPECT_DOUBLE_EQ(train.dynamic_loss_scale().multiplier(), 2.0);
  EXPECT_TRUE(job.HasOp(LossScaleVariableName("train")));
  EXPECT_NO_THROW(JobGraph graph(completed));
}

TEST(AutoMixedPrecision, StaticLossScaleIsKept) {
  JobBuildContext job = MakeMlpJob(AmpJobConf(true), 1);
  job.mutable_job_conf().mutable_train_conf()->set_loss_scale_factor(128);
  CompleteJob(job);
  EXPECT_FALSE(job.job().job_conf().train_conf().has_dynamic_loss_scale());
  EXPECT_EQ(OutputType(job, "dense1-matmul", "out"), kFloat16);
}

// Without GPUs (or with AMP off) the completed job is the plain float32 one, op for op.
TEST(AutoMixedPrecision, NoGpuChangesNothing) {
  JobConf off = test::MakeJobConf("train", true);
  for (const auto& [conf, gpus] :
       {std::make_pair(AmpJobConf(true), int64_t{0}), std::make_pair(off, int64_t{1})}) {
    JobBuildContext job = MakeMlpJob(conf, gpus);
    JobBuildContext plain = MakeMlpJob(test::MakeJobConf("train", true), 0);
    CompleteJob(job);
    CompleteJob(plain);
    EXPECT_TRUE(PassCasts(job.job()).empty());
    ASSERT_EQ(job.job().op_size(), plain.job().op_size());
    for (int64_t i = 0; i < plain.job().op_size(); ++i) {
      EXPECT_EQ(job.job().op(i).name(), plain.job().op(i).name());
      EXPECT_EQ(job.job().op(i).op_type(), plain.job().op(i).op_type());
    }
    for (const auto& entry : plain.job().logical_blob_desc()) {
      EXPECT_EQ(job.LogicalBlobDesc(entry.first).data_type, entry.second.data_type())
          << entry.first;
    }
    EXPECT_FALSE(job.job().job_conf().train_conf().has_dynamic_loss_scale());
  }
}

// A black op between two white ones: h = matmul1(x, w1); s = reduce_sum(h, axis 1, keepdims)
// (black); t = h + s (gray, broadcast_add); out = matmul2(t, w2). t has a black producer, so it
// is black too and stays float32 although it sits between white ops: the cast back follows
// matmul1 (one cast for both readers) and t is cast to float16 for matmul2.
TEST(AutoMixedPrecision, BlackProducerKeepsGrayOpFloat32) {
  JobBuildContext job(AmpJobConf(false), Resource(1));
  std::string x = test::AddInput(job, "x", Shape({8, 4}));
  std::string h = Matmul(job, "matmul1", x, AddGpuVariable(job, "w1", Shape({4, 4})));
  std::string s = AddGpuOp(job,
                           OpConfBuilder("reduce_sum", "sum")
                               .Input("input_tensor", h)
                               .Attr("axis", std::vector<int64_t>{1})
                               .Attr("keepdims", true),
                           "output_tensor");
  std::string t =
      AddGpuOp(job, OpConfBuilder("broadcast_add", "add").Input("x", h).Input("y", s), "z");
  Matmul(job, "matmul2", t, AddGpuVariable(job, "w2", Shape({4, 2})));
  CompleteJob(job);
  EXPECT_EQ(OutputType(job, "matmul1", "out"), kFloat16);
  EXPECT_EQ(OutputType(job, "sum", "output_tensor"), kFloat);
  EXPECT_EQ(OutputType(job, "add", "z"), kFloat);
  EXPECT_EQ(OutputType(job, "matmul2", "out"), kFloat16);
  EXPECT_EQ(
      PassCasts(job.job()),
      (std::set<std::string>{"x/out_0 -> float16", "w1/out_0 -> float16", "w2/out_0 -> float16",
                             "matmul1/out_0 -> float32", "add/z_0 -> float16"}));
  EXPECT_EQ(ProducerOf(job, "sum", "input_tensor"), ProducerOf(job, "add", "x"));
}

// The same graph with a gray op instead of the black reduction: t = h + tanh(h). Both are
// downstream of matmul1 and upstream of matmul2, so the whole chain runs in float16.
TEST(AutoMixedPrecision, GrayOpsBetweenWhiteOpsJoin) {
  JobBuildContext job(AmpJobConf(false), Resource(1));
  std::string x = test::AddInput(job, "x", Shape({8, 4}));
  std::string h = Matmul(job, "matmul1", x, AddGpuVariable(job, "w1", Shape({4, 4})));
  std::string s = AddGpuOp(job, OpConfBuilder("tanh", "tanh").Input("x", h), "y");
  std::string t =
      AddGpuOp(job, OpConfBuilder("broadcast_add", "add").Input("x", h).Input("y", s), "z");
  Matmul(job, "matmul2", t, AddGpuVariable(job, "w2", Shape({4, 2})));
  CompleteJob(job);
  EXPECT_EQ(OutputType(job, "tanh", "y"), kFloat16);
  EXPECT_EQ(OutputType(job, "add", "z"), kFloat16);
  EXPECT_EQ(
      PassCasts(job.job()),
      (std::set<std::string>{"x/out_0 -> float16", "w1/out_0 -> float16", "w2/out_0 -> float16"}));
}

// A clear op upstream of a white op joins it (OneFlow's last propagation): the cast to float16
// moves before the transpose. A gray op there would not (its producer is not white).
TEST(AutoMixedPrecision, ClearOpJoinsWhiteConsumer) {
  JobBuildContext job(AmpJobConf(false), Resource(1));
  std::string x = test::AddInput(job, "x", Shape({4, 8}));
  std::string xt = AddGpuOp(job,
                            OpConfBuilder("transpose", "transpose")
                                .Input("in", x)
                                .Attr("perm", std::vector<int64_t>{1, 0}),
                            "out");
  std::string y = AddGpuOp(job, OpConfBuilder("tanh", "tanh").Input("x", xt), "y");
  Matmul(job, "matmul", y, AddGpuVariable(job, "w", Shape({4, 2})));
  CompleteJob(job);
  // tanh is gray with no white producer: float32, so the transpose before it stays float32 too.
  EXPECT_EQ(OutputType(job, "tanh", "y"), kFloat);
  EXPECT_EQ(OutputType(job, "transpose", "out"), kFloat);
  EXPECT_EQ(PassCasts(job.job()),
            (std::set<std::string>{"tanh/y_0 -> float16", "w/out_0 -> float16"}));

  JobBuildContext direct(AmpJobConf(false), Resource(1));
  x = test::AddInput(direct, "x", Shape({4, 8}));
  xt = AddGpuOp(direct,
                OpConfBuilder("transpose", "transpose")
                    .Input("in", x)
                    .Attr("perm", std::vector<int64_t>{1, 0}),
                "out");
  Matmul(direct, "matmul", xt, AddGpuVariable(direct, "w", Shape({4, 2})));
  CompleteJob(direct);
  EXPECT_EQ(OutputType(direct, "transpose", "out"), kFloat16);
  EXPECT_EQ(PassCasts(direct.job()),
            (std::set<std::string>{"x/out_0 -> float16", "w/out_0 -> float16"}));
}

// conv -> batch norm (training: batch_norm_mean, batch_norm_variance, normalization_train) ->
// relu -> conv -> reduce_sum (the loss). The batch norm lies between the white convolutions
// and runs in float16 data with float32 statistics, gamma, beta and moving statistics: none of
// those is cast, and their gradients (sum_dy, sum_dy_xhat) come out float32 without casts.
TEST(AutoMixedPrecision, BatchNormKeepsFloat32PerChannelBlobs) {
  JobBuildContext job(AmpJobConf(true), Resource(1));
  auto conv = [&](const std::string& name, const std::string& in, const std::string& weight,
                  int64_t filters) {
    return AddGpuOp(job,
                    OpConfBuilder("conv2d", name)
                        .Input("in", in)
                        .Input("weight", weight)
                        .Attr("filters", filters)
                        .Attr("kernel_size", std::vector<int64_t>{3, 3})
                        .Attr("strides", std::vector<int64_t>{1, 1})
                        .Attr("dilation_rate", std::vector<int64_t>{1, 1}),
                    "out");
  };
  std::string x = test::AddInput(job, "x", Shape({2, 3, 6, 6}));
  std::string h = conv("conv1", x, AddGpuVariable(job, "w1", Shape({4, 3, 3, 3})), 4);
  std::string mean = AddGpuOp(
      job, OpConfBuilder("batch_norm_mean", "bn-mean").Input("x", h).Attr<int64_t>("axis", 1),
      "mean");
  std::string variance = AddGpuOp(job,
                                  OpConfBuilder("batch_norm_variance", "bn-variance")
                                      .Input("x", h)
                                      .Input("mean", mean)
                                      .Attr<int64_t>("axis", 1),
                                  "variance");
  std::string y = AddGpuOp(job,
                           OpConfBuilder("normalization_train", "bn")
                               .Input("x", h)
                               .Input("mean", mean)
                               .Input("variance", variance)
                               .Input("gamma", AddGpuVariable(job, "gamma", Shape({4})))
                               .Input("beta", AddGpuVariable(job, "beta", Shape({4})))
                               .Input("moving_mean", AddGpuVariable(job, "moving_mean", Shape({4})))
                               .Input("moving_variance",
                                      AddGpuVariable(job, "moving_variance", Shape({4})))
                               .Attr<int64_t>("axis", 1),
                           "y");
  std::string r = AddGpuOp(job, OpConfBuilder("relu", "relu").Input("x", y), "y");
  std::string out = conv("conv2", r, AddGpuVariable(job, "w2", Shape({2, 4, 3, 3})), 2);
  std::string loss = AddGpuOp(job,
                              OpConfBuilder("reduce_sum", "loss")
                                  .Input("input_tensor", out)
                                  .Attr("axis", std::vector<int64_t>{1, 2, 3}),
                              "output_tensor");
  TrainConf* train = job.mutable_job_conf().mutable_train_conf();
  train->add_loss_lbn(loss);
  OptimizerConf* optimizer = train->add_optimizer();
  optimizer->set_update_op_type("sgd_update");
  (*optimizer->mutable_learning_rate_attr())["base_lr"] = ToAttrValue<double>(0.1);
  // Only gamma and beta are trained; the moving statistics are updated in place.
  for (const char* variable : {"w1", "w2", "gamma", "beta"}) {
    optimizer->add_variables(variable);
  }
  CompleteJob(job);

  for (const auto& [op, output] : std::vector<std::pair<std::string, std::string>>{
           {"conv1", "out"}, {"bn", "y"}, {"relu", "y"}, {"conv2", "out"}}) {
    EXPECT_EQ(OutputType(job, op, output), kFloat16) << op;
  }
  EXPECT_EQ(OutputType(job, "bn-mean", "mean"), kFloat);
  EXPECT_EQ(OutputType(job, "bn-variance", "variance"), kFloat);
  EXPECT_EQ(OutputType(job, "loss", "output_tensor"), kFloat);
  EXPECT_EQ(PassCasts(job.job()),
            (std::set<std::string>{"x/out_0 -> float16", "w1/out_0 -> float16",
                                   "w2/out_0 -> float16", "conv2/out_0 -> float32"}));
  for (const char* input : {"mean", "variance", "gamma", "beta", "moving_mean", "moving_variance"}) {
    EXPECT_EQ(job.LogicalBlobDesc(InputLbn(job.Op("bn"), input)).data_type, kFloat) << input;
  }
  EXPECT_EQ(ProducerOf(job, "bn", "gamma"), "gamma");
  EXPECT_EQ(ProducerOf(job, "bn-variance", "mean"), "bn-mean");
  const Job& completed = job.job();
  for (const char* variable : {"gamma", "beta", "w1", "w2"}) {
    const std::string lbn = MakeLbn(variable, "out");
    ASSERT_TRUE(completed.blob_to_diff().count(lbn)) << variable;
    EXPECT_EQ(job.LogicalBlobDesc(completed.blob_to_diff().at(lbn)).data_type, kFloat) << variable;
  }
  for (const char* variable : {"gamma", "beta"}) {
    const OperatorConf& diff_op =
        job.Op(OpNameOfLbn(completed.blob_to_diff().at(MakeLbn(variable, "out"))));
    EXPECT_EQ(diff_op.op_type(), "normalization_train_grad_stats") << variable;
  }
  EXPECT_NO_THROW(JobGraph graph(completed));
}

}  // namespace
}  // namespace oneflow
