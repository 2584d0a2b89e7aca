// Pass "auto_mixed_precision" (FunctionConfig.enable_auto_mixed_precision): OneFlow 0.3's
// AutoMixedPrecision job rewrite. It runs on the forward ops, before autograd, so the backward
// ops follow the forward's dtypes and the casts' gradients cast back. Ops are sorted by type into
// four lists:
//   white: compute-bound ops that gain from float16 (matmul, conv2d);
//   black: ops that must stay float32 (reductions and losses); OneFlow 0.3's own list was empty;
//   gray: elementwise ops, float16 when between white ops (bias_add, add_n, tanh, softmax, ...);
//   clear: ops that only move data (reshape, transpose, relu, gather, concat, ...);
// and the inputs that stay float32 when their op runs in float16 (batch normalization's
// statistics, gamma and beta: float16 data, float32 per-channel blobs, as cuDNN computes it).
// Only ops that run on GPUs in float16 take part (ResolveDeviceTag(op, float16) == "gpu"); on a
// session without GPUs the pass changes nothing. The sets, each built in one sweep over the
// graph in topological order (or reverse), as OneFlow builds them:
//   1. black-or-gray reach: black and gray ops, and clear ops some consumer of which is in it;
//      black: black ops, and ops of that reach a producer of which is black;
//   2. white reach: white ops, gray/clear ops without consumers, and non-black gray/clear ops
//      some consumer of which is in it; white: white ops, and ops of that reach a producer of
//      which is white;
//   3. clear ops next to white ones (downstream first, then upstream) join white.
// White ops then read float16: a cast to float16 sits between each float32 blob produced
// outside the set and its white readers (one per blob and placement; variables stay float32 and
// the optimizer updates them in float32), and a cast back to float32 between each float16 blob
// produced in the set and its readers outside it (or its float32 inputs). An op that produces a
// loss is never made float16. A train job with float16 ops and no loss scale gets dynamic loss
// scaling with PyTorch GradScaler's defaults (docs/training.md).
#include <functional>
#include <set>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/job/device_resolution.h"
#include "oneflow/job/job_graph.h"

namespace oneflow {

const AutoMixedPrecisionLists& DefaultAutoMixedPrecisionLists() {
  static const AutoMixedPrecisionLists lists = {
      /*white=*/{"matmul", "conv2d"},
      /*black=*/
      {"reduce_sum", "square_sum", "sparse_softmax_cross_entropy", "softmax_cross_entropy",
       "sigmoid_cross_entropy", "smooth_l1_loss", "ctc_loss"},
      /*gray=*/
      {"add_n", "avg_pool_1d", "avg_pool_2d", "avg_pool_3d", "bias_add", "sigmoid", "tanh", "sqrt",
       "scalar_mul", "scalar_add", "broadcast_add", "broadcast_sub", "broadcast_mul",
       "broadcast_div", "layer_norm", "dropout", "softmax", "gelu", "normalization",
       "normalization_train", "batch_norm_mean", "batch_norm_variance"},
      /*clear=*/
      {"gather", "max_pool_1d", "max_pool_2d", "max_pool_3d", "reshape", "relu", "transpose",
       "random_mask_like", "concat", "pad", "tril", "slice", "fused_scale_tril", "identity",
       "parallel_cast"},
      /*float32_inputs=*/
      {{"normalization", {"mean", "variance", "gamma", "beta"}},
       {"normalization_train",
        {"mean", "variance", "gamma", "beta", "moving_mean", "moving_variance"}},
       {"batch_norm_variance", {"mean"}}},
  };
  return lists;
}

namespace {

const char kPassName[] = "auto_mixed_precision";
// The dynamic loss scale a job gets when it names none: PyTorch's GradScaler's (initial 2^16,
// doubled after 2000 good steps, halved at an overflow). OneFlow 0.3's dynamic_loss_scale()
// starts at 2^30: float16 gradients overflowed from there, and the first ~15 steps of an
// ImageNet ResNet-50 on an H200 were all skipped (the loss did not move).
constexpr double kDefaultInitialLossScale = 65536.0;  // 2^16
constexpr int64_t kDefaultIncrementPeriod = 2000;
constexpr double kDefaultMultiplier = 2.0;

using OpSet = std::set<std::string>;
using OpPredicate = std::function<bool(const std::string&)>;

// Data-edge adjacency between op names and a topological order.
struct OpAdjacency {
  std::vector<std::string> order;
  std::map<std::string, OpSet> producers;
  std::map<std::string, OpSet> consumers;
};

OpAdjacency MakeAdjacency(const JobGraph& graph) {
  OpAdjacency adjacency;
  adjacency.order = graph.TopologicalOrder();
  for (const std::string& name : adjacency.order) {
    adjacency.producers[name];
    adjacency.consumers[name];
    for (const auto& entry : graph.Op(name).input()) {
      for (const std::string& lbn : entry.second.value()) {
        const std::string producer = OpNameOfLbn(lbn);
        adjacency.producers[name].insert(producer);
        adjacency.consumers[producer].insert(name);
      }
    }
  }
  return adjacency;
}

// One sweep in topological order (reverse when `upward`): an op joins `marked` when it is a
// start op, or when it may join and one of its neighbours on the side the sweep comes from
// (producers going down, consumers going up) is marked already.
void Sweep(const OpAdjacency& adjacency, bool upward, const OpPredicate& is_start,
           const OpPredicate& may_join, OpSet& marked) {
  auto visit = [&](const std::string& name) {
    if (is_start(name)) {
      marked.insert(name);
      return;
    }
    if (!may_join(name)) { return; }
    const OpSet& fathers = upward ? adjacency.consumers.at(name) : adjacency.producers.at(name);
    for (const std::string& father : fathers) {
      if (marked.count(father)) {
        marked.insert(name);
        return;
      }
    }
  };
  if (upward) {
    for (auto it = adjacency.order.rbegin(); it != adjacency.order.rend(); ++it) { visit(*it); }
  } else {
    for (const std::string& name : adjacency.order) { visit(name); }
  }
}

// Ops that may compute in float16: on GPUs with a float16 kernel, with outputs, and with no
// float64 blob (OneFlow's pass requires float32 jobs).
OpPredicate MakeRunsInHalf(const JobBuildContext& job) {
  OpSet allowed;
  for (const OperatorConf& op : job.job().op()) {
    if (op.output().empty()) { continue; }
    if (ResolveDeviceTag(op, kFloat16, job.resource()) != "gpu") { continue; }
    bool has_double = false;
    for (const auto* blobs : {&op.input(), &op.output()}) {
      for (const auto& entry : *blobs) {
        for (const std::string& lbn : entry.second.value()) {
          has_double = has_double || job.LogicalBlobDesc(lbn).data_type == kDouble;
        }
      }
    }
    if (!has_double) { allowed.insert(op.name()); }
  }
  return [allowed](const std::string& name) { return allowed.count(name) > 0; };
}

OpSet ComputeWhiteSet(const JobBuildContext& job, const AutoMixedPrecisionLists& lists) {
  const JobGraph graph(job.job());
  const OpAdjacency adjacency = MakeAdjacency(graph);
  auto in_list = [&graph](const std::set<std::string>& list) {
    return [&graph, &list](const std::string& name) {
      return list.count(graph.Op(name).op_type()) > 0;
    };
  };
  const OpPredicate is_white = in_list(lists.white);
  const OpPredicate is_black = in_list(lists.black);
  const OpPredicate is_gray = in_list(lists.gray);
  const OpPredicate is_clear = in_list(lists.clear);
  const OpPredicate runs_in_half = MakeRunsInHalf(job);
  OpSet loss_producers;
  for (const std::string& loss : job.job().job_conf().train_conf().loss_lbn()) {
    loss_producers.insert(OpNameOfLbn(loss));
  }
  // A loss is read by the gradient seed, so its producer is no sink.
  auto is_sink = [&](const std::string& name) {
    return adjacency.consumers.at(name).empty() && !loss_producers.count(name);
  };

  OpSet black_or_gray_reach;
  Sweep(
      adjacency, /*upward=*/true,
      [&](const std::string& name) { return is_black(name) || is_gray(name); }, is_clear,
      black_or_gray_reach);
  OpSet black;
  Sweep(
      adjacency, /*upward=*/false, is_black,
      [&](const std::string& name) { return black_or_gray_reach.count(name) > 0; }, black);

  OpSet white_reach;
  Sweep(
      adjacency, /*upward=*/true,
      [&](const std::string& name) {
        return runs_in_half(name) &&
               (is_white(name) || (is_sink(name) && (is_gray(name) || is_clear(name))));
      },
      [&](const std::string& name) {
        return !black.count(name) && runs_in_half(name) && (is_gray(name) || is_clear(name));
      },
      white_reach);
  OpSet white;
  Sweep(
      adjacency, /*upward=*/false,
      [&](const std::string& name) { return runs_in_half(name) && is_white(name); },
      [&](const std::string& name) { return white_reach.count(name) > 0; }, white);

  for (const bool upward : {false, true}) {
    Sweep(
        adjacency, upward, [](const std::string&) { return false; },
        [&](const std::string& name) {
          return !white.count(name) && !black.count(name) && is_clear(name) && runs_in_half(name);
        },
        white);
  }
  for (const std::string& name : loss_producers) { white.erase(name); }
  return white;
}

// Re-adds the job's ops to a fresh context, with float16 casts in front of the white set and
// float32 casts behind it; every op is inferred again, so the white ops' outputs become float16
// (but for the per-channel outputs their infer functions keep float32).
JobBuildContext Rewrite(const JobBuildContext& job, const OpSet& white,
                        const AutoMixedPrecisionLists& lists) {
  std::map<std::string, std::string> casts;  // (lbn, dtype, placement) key -> cast output
  auto cast = [&](const std::string& lbn, DataType data_type, const ParallelConf& placement,
                  JobBuildContext& rewritten) {
    const std::string suffix = data_type == kFloat16 ? "-cast_f2h" : "-cast_h2f";
    std::string key = lbn + suffix + " " + PlacementToString(placement);
    auto found = casts.find(key);
    if (found != casts.end()) { return found->second; }
    std::string name = SanitizedLbn(lbn) + suffix;
    for (int64_t i = 1; rewritten.HasOp(name) || job.HasOp(name); ++i) {
      name = SanitizedLbn(lbn) + suffix + "-" + std::to_string(i);
    }
    OperatorConf conf = OpConfBuilder("cast", name)
                            .Input("in", lbn)
                            .Attr("dtype", data_type)
                            .Placement(placement)
                            .Build();
    conf.set_created_by_pass(kPassName);
    const std::string out = OutputLbn(rewritten.AddOp(std::move(conf)), "out");
    casts[key] = out;
    return out;
  };
  return RewriteInputs(job, [&](const OperatorConf& op, const std::string& argument, int64_t,
                                const std::string& lbn, JobBuildContext& rewritten) {
    const auto float32_inputs = lists.float32_inputs.find(op.op_type());
    const bool keeps_float32 = float32_inputs != lists.float32_inputs.end() &&
                               float32_inputs->second.count(argument) > 0;
    const DataType wanted = white.count(op.name()) && !keeps_float32 ? kFloat16 : kFloat;
    if (job.LogicalBlobDesc(lbn).data_type != kFloat) { return lbn; }
    if (rewritten.LogicalBlobDesc(lbn).data_type == wanted) { return lbn; }
    const OperatorConf& producer = job.Op(OpNameOfLbn(lbn));
    if (wanted == kFloat16) {
      // On the reader's GPUs, unless the blob is mirrored (it stays on its devices).
      return cast(lbn, kFloat16, producer.mirrored() ? producer.placement() : op.placement(),
                  rewritten);
    }
    return cast(lbn, kFloat, producer.placement(), rewritten);
  });
}

class AutoMixedPrecisionPass final : public Pass {
 public:
  std::string name() const override { return kPassName; }

  void Apply(JobBuildContext& job) const override {
    if (!job.job().job_conf().enable_auto_mixed_precision()) { return; }
    const AutoMixedPrecisionLists& lists = DefaultAutoMixedPrecisionLists();
    const OpSet white = ComputeWhiteSet(job, lists);
    if (white.empty()) { return; }
    job = Rewrite(job, white, lists);
    JobConf& conf = job.mutable_job_conf();
    TrainConf& train = *conf.mutable_train_conf();
    if (conf.is_train() && train.loss_scale_factor() == 0 && !train.has_dynamic_loss_scale()) {
      DynamicLossScaleConf& dynamic = *train.mutable_dynamic_loss_scale();
      dynamic.set_initial_loss_scale(kDefaultInitialLossScale);
      dynamic.set_increment_period(kDefaultIncrementPeriod);
      dynamic.set_multiplier(kDefaultMultiplier);
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeAutoMixedPrecisionPass() {
  return std::make_unique<AutoMixedPrecisionPass>();
}

}  // namespace oneflow
