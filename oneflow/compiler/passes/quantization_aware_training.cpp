// Pass "quantization_aware_training" (FunctionConfig.enable_qat): OneFlow's QuantAwareTraining
// job rewrite. The job then computes as its int8 deployment would: the float32 blobs that enter
// and leave the int8-able ops are rounded to the values 8 bits can hold (fake_quantization,
// whose gradient passes straight through), so training learns weights that survive the
// rounding. It runs on the forward ops, after the train step exists and before autograd.
//
// Which ops (target_backend "" or "tensorrt7"; "cambricon" in brackets):
//   int8 ops: add_n, matmul, batch_matmul, conv2d, avg_pool_2d, max_pool_2d (conv2d, matmul);
//   a conv2d's sole reader chain bias_add -> batch normalization -> relu (each optional) is
//   fused with it in deployment, so it joins it, and the chain's last op gives its output;
//   transparent ops: reshape (none) joins when its input comes from the set, and its output
//   keeps its input's scale.
// Which blobs get fake quantization: each input of the set made outside it, and ([cambricon]
// instead: every input of an int8 op) every reader of an int8 op's output; not the inputs of
// a batch normalization (it folds into the convolution), and only float32 blobs.
// Each quantized blob gets its scale and zero point from an observer named after it:
//   a variable (a weight): min_max_observer, per output channel (axis 0) with
//   qat.per_channel_weight_quantization;
//   a convolution's bias: in_scale * weight_scale (their exponents added for cambricon's
//   power-of-two scales), zero point 0, rounded to a signed 32-bit level as the int32 bias of
//   an int8 convolution (OneFlow's pass rounds it to 8 bits in the job's scheme, which clips
//   any bias beyond 127 accumulator steps, and every negative one with the affine scheme);
//   anything else: moving_average_min_max_observer with the variables
//   <blob>-fake-quant-observer-fake-quant-moving-max / -min, updated by train jobs while the
//   train step is at most qat.moving_min_max_stop_update_after_iters, read by other jobs.
// The names follow OneFlow's ("conv1/out_0" -> "conv1-out_0-fake-quant"), so a predict job with
// the same layers reads the moving ranges a train job learnt, and checkpoints carry them.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "oneflow/compiler/pipeline.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/job/job_graph.h"
#include "oneflow/job/placement.h"

namespace oneflow {
namespace {

const char kPassName[] = "quantization_aware_training";

// What target_backend decides.
struct QatRules {
  std::set<std::string> int8_ops;
  std::set<std::string> transparent_ops;
  bool quantize_int8_outputs;  // else: the int8 ops' inputs
  std::string formula;         // the quantization_formula attribute
};

QatRules RulesOf(const QatConfig& config) {
  const std::string& backend = config.target_backend();
  if (backend.empty() || backend == "tensorrt7") {
    return {{"add_n", "matmul", "batch_matmul", "conv2d", "avg_pool_2d", "max_pool_2d"},
            {"reshape"},
            true,
            "google"};
  }
  if (backend == "cambricon") { return {{"conv2d", "matmul"}, {}, false, "cambricon"}; }
  throw Error(ErrorKind::kValue) << "enable_qat: qat.target_backend must be \"\", \"tensorrt7\" "
                                 << "or \"cambricon\", got \"" << backend << "\"";
}

bool IsBatchNorm(const std::string& op_type) {
  return op_type == "normalization" || op_type == "normalization_train";
}

bool IsBatchNormStatistic(const std::string& op_type) {
  return op_type == "batch_norm_mean" || op_type == "batch_norm_variance";
}

// Batch normalization folds into the convolution before it: its inputs stay as they are.
bool IsBatchNormInput(const std::string& op_type) {
  return IsBatchNorm(op_type) || IsBatchNormStatistic(op_type);
}

// One input of one op: (op name, argument, index).
using InputSlot = std::tuple<std::string, std::string, int64_t>;

class QatPlanner {
 public:
  QatPlanner(const Job& job, const QatRules& rules) : graph_(job), rules_(rules) {}

  // The input slots to quantize, and for each blob the blob whose observer gives its scale.
  void Plan() {
    const std::set<std::string> white = WhiteSet();
    for (const std::string& name : graph_.TopologicalOrder()) {
      if (!white.count(name)) { continue; }
      const OperatorConf& op = graph_.Op(name);
      ForEachInput(op, [&](const std::string& argument, int64_t index, const std::string& lbn) {
        if (!white.count(graph_.Producer(lbn))) { Quantize({name, argument, index}, lbn); }
      });
      if (rules_.int8_ops.count(op.op_type())) {
        if (rules_.quantize_int8_outputs) {
          for (const std::string& lbn : OutputLbns(graph_.Op(InferenceOutput(name)))) {
            for (const std::string& reader : graph_.Consumers(lbn)) {
              ForEachInput(graph_.Op(reader), [&](const std::string& argument, int64_t index,
                                                  const std::string& read) {
                if (read == lbn) { Quantize({reader, argument, index}, lbn); }
              });
            }
          }
        } else {
          ForEachInput(op, [&](const std::string& argument, int64_t index,
                               const std::string& lbn) { Quantize({name, argument, index}, lbn); });
        }
      } else if (rules_.transparent_ops.count(op.op_type())) {
        const std::string& in = InputLbn(op, "in");
        if (!scale_source_.count(in)) { continue; }
        for (const std::string& out : OutputLbns(op)) { scale_source_[out] = scale_source_[in]; }
      }
    }
  }

  const std::set<InputSlot>& slots() const { return slots_; }
  // The blob whose observer's scale `lbn` was quantized with, if any.
  std::optional<std::string> ScaleSource(const std::string& lbn) const {
    auto found = scale_source_.find(lbn);
    if (found == scale_source_.end()) { return std::nullopt; }
    return found->second;
  }

 private:
  template <typename F>
  static void ForEachInput(const OperatorConf& op, const F& f) {
    for (const auto& entry : op.input()) {
      for (int64_t i = 0; i < entry.second.value_size(); ++i) {
        f(entry.first, i, entry.second.value(static_cast<int>(i)));
      }
    }
  }

  static std::vector<std::string> OutputLbns(const OperatorConf& op) {
    std::vector<std::string> lbns;
    for (const auto& entry : op.output()) {
      lbns.insert(lbns.end(), entry.second.value().begin(), entry.second.value().end());
    }
    return lbns;
  }

  void Quantize(const InputSlot& slot, const std::string& lbn) {
    slots_.insert(slot);
    scale_source_[lbn] = lbn;
  }

  std::set<std::string> Readers(const std::string& name) const {
    std::set<std::string> readers;
    for (const std::string& lbn : OutputLbns(graph_.Op(name))) {
      for (const std::string& reader : graph_.Consumers(lbn)) { readers.insert(reader); }
    }
    return readers;
  }

  // The op's only reader, if it has one. A batch normalization in training reads its input
  // three times (its mean, its variance and the normalization itself): that counts as one.
  std::optional<std::string> SoleReader(const std::string& name) const {
    const std::set<std::string> all = Readers(name);
    std::set<std::string> readers;
    for (const std::string& reader : all) {
      const std::set<std::string> theirs = Readers(reader);
      const bool folds = IsBatchNormStatistic(graph_.Op(reader).op_type()) &&
                         std::includes(all.begin(), all.end(), theirs.begin(), theirs.end());
      if (!folds) { readers.insert(reader); }
    }
    if (readers.size() != 1) { return std::nullopt; }
    return *readers.begin();
  }

  // The ops a conv2d fuses with: its sole reader chain bias_add -> batch norm -> relu.
  std::vector<std::string> ConvChain(const std::string& conv) const {
    std::vector<std::string> chain;
    std::optional<std::string> next = SoleReader(conv);
    if (!next) { return chain; }
    auto take = [&](const auto& is_type) {
      if (!is_type(graph_.Op(*next).op_type())) { return; }
      chain.push_back(*next);
      if (auto after = SoleReader(*next)) { next = after; }
    };
    take([](const std::string& type) { return type == "bias_add"; });
    take(IsBatchNorm);
    take([](const std::string& type) { return type == "relu"; });
    return chain;
  }

  // The op whose output an int8 op's result leaves the fused group from.
  std::string InferenceOutput(const std::string& name) const {
    if (graph_.Op(name).op_type() != "conv2d") { return name; }
    const std::vector<std::string> chain = ConvChain(name);
    return chain.empty() ? name : chain.back();
  }

  std::set<std::string> WhiteSet() const {
    std::set<std::string> white;
    for (const std::string& name : graph_.TopologicalOrder()) {
      const OperatorConf& op = graph_.Op(name);
      if (rules_.int8_ops.count(op.op_type())) {
        white.insert(name);
        if (op.op_type() == "conv2d") {
          for (const std::string& fused : ConvChain(name)) { white.insert(fused); }
        }
        continue;
      }
      if (!rules_.transparent_ops.count(op.op_type())) { continue; }
      for (const auto& entry : op.input()) {
        for (const std::string& lbn : entry.second.value()) {
          if (white.count(graph_.Producer(lbn))) { white.insert(name); }
        }
      }
    }
    return white;
  }

  JobGraph graph_;
  const QatRules& rules_;
  std::set<InputSlot> slots_;
  std::map<std::string, std::string> scale_source_;
};

// Adds the observers and fake quantizations to the rewritten job, each once.
class QatBuilder {
 public:
  QatBuilder(const JobBuildContext& job, const QatPlanner& plan, const QatRules& rules,
             JobBuildContext& rewritten)
      : job_(job), plan_(plan), rules_(rules), config_(job.job().job_conf().qat_config()),
        rewritten_(rewritten) {}

  // The fake-quantized `lbn` that `reader` reads.
  std::string Quantized(const OperatorConf& reader, const std::string& lbn) {
    const std::optional<std::pair<std::string, std::string>> bias =
        ConvScaleSources(reader, lbn);
    const std::string key = bias ? lbn + " bias" : lbn;
    auto found = quantized_.find(key);
    if (found != quantized_.end()) { return found->second; }
    auto [scale, zero_point] = bias ? BiasParameters(lbn, *bias) : Observer(lbn);
    if (Producer(lbn).mirrored()) {  // every device gets the whole parameters
      scale = ToMirrored(scale, PlacementOf(lbn));
      zero_point = ToMirrored(zero_point, PlacementOf(lbn));
    }
    std::string name = SanitizedLbn(lbn) + "-fake-quant";
    if (bias && quantized_.count(lbn)) { name += "-bias"; }
    // A bias is an int32 of the accumulator's scale: signed, zero point 0, 32 bits.
    const OperatorConf& op = Add(OpConfBuilder("fake_quantization", name)
                                     .Input("in", lbn)
                                     .Input("scale", scale)
                                     .Input("zero_point", zero_point)
                                     .Attr("quantization_bit", bias ? 32 : 8)
                                     .Attr("quantization_scheme", bias ? "symmetric" : Scheme())
                                     .Attr("quantization_formula", rules_.formula)
                                     .Placement(PlacementOf(lbn))
                                     .Build());
    return quantized_[key] = OutputLbn(op, "out");
  }

 private:
  std::string Scheme() const { return config_.symmetric() ? "symmetric" : "affine"; }
  // The op making `lbn`, as re-added (producers come before their readers). A copy: adding
  // ops may move the ones stored.
  OperatorConf Producer(const std::string& lbn) const {
    return rewritten_.Op(OpNameOfLbn(lbn));
  }
  ParallelConf PlacementOf(const std::string& lbn) const { return Producer(lbn).placement(); }

  const OperatorConf& Add(OperatorConf conf) {
    conf.set_created_by_pass(kPassName);
    return rewritten_.AddOp(std::move(conf));
  }

  std::string ZeroVariable(const std::string& name, int64_t length, const ParallelConf& where) {
    OperatorConf conf = SystemVariable(name, Shape({length}), kFloat, 0.0);
    *conf.mutable_placement() = where;
    return OutputLbn(Add(std::move(conf)), "out");
  }

  // In the mirrored view the observers see the devices' values as one consistent blob (a
  // variable read through cast_to_mirrored, or the values concatenated), so every device
  // quantizes with the same parameters, as in the consistent view.
  std::string Consistent(const std::string& lbn) {
    const OperatorConf producer = Producer(lbn);
    if (!producer.mirrored()) { return lbn; }
    if (producer.op_type() == "cast_to_mirrored") { return InputLbn(producer, "in"); }
    return Cast("cast_from_mirrored", "concat", lbn, producer.placement());
  }

  std::string ToMirrored(const std::string& lbn, const ParallelConf& where) {
    return Cast("cast_to_mirrored", "broadcast", lbn, where);
  }

  std::string Cast(const std::string& type, const std::string& mode, const std::string& lbn,
                   const ParallelConf& where) {
    const std::string key = type + " " + lbn + " " + PlacementToString(where);
    auto found = casts_.find(key);
    if (found != casts_.end()) { return found->second; }
    const OperatorConf& op = Add(OpConfBuilder(type, SanitizedLbn(lbn) + "-fake-quant-" + type)
                                     .Input("in", lbn)
                                     .Attr("mode", mode)
                                     .Attr("parts", ParallelNum(where))
                                     .Placement(where)
                                     .Build());
    return casts_[key] = OutputLbn(op, "out");
  }

  // (scale, zero point) of the observer of `lbn`, consistent blobs.
  std::pair<std::string, std::string> Observer(const std::string& lbn) {
    const std::string observed = Consistent(lbn);
    auto found = observers_.find(observed);
    if (found != observers_.end()) { return found->second; }
    // Named after the blob, or after the consistent blob a mirrored one is a view of (an input,
    // a variable), as in the consistent view.
    const bool viewed = Producer(lbn).op_type() == "cast_to_mirrored";
    const std::string name = SanitizedLbn(viewed ? observed : lbn) + "-fake-quant-observer";
    const ParallelConf where = PlacementOf(observed);
    OperatorConf conf;
    if (Producer(observed).op_type() == "variable") {
      conf = OpConfBuilder("min_max_observer", name)
                 .Input("in", observed)
                 .Attr("per_layer_quantization", !config_.per_channel_weight_quantization())
                 .Build();
    } else {
      const bool training = job_.job().job_conf().is_train();
      conf = OpConfBuilder("moving_average_min_max_observer", name)
                 .Input("in", observed)
                 .Input("current_train_step", TrainStep(where))
                 .Input("moving_max", ZeroVariable(name + "-fake-quant-moving-max", 1, where))
                 .Input("moving_min", ZeroVariable(name + "-fake-quant-moving-min", 1, where))
                 .Attr("training", training)
                 .Attr("stop_update_after_iters",
                       config_.moving_min_max_stop_update_after_iters())
                 .Attr("momentum", config_.moving_min_max_momentum())
                 .Build();
    }
    (*conf.mutable_attr())["quantization_scheme"] = ToAttrValue<std::string>(Scheme());
    (*conf.mutable_attr())["quantization_formula"] = ToAttrValue<std::string>(rules_.formula);
    *conf.mutable_placement() = where;
    const OperatorConf& op = Add(std::move(conf));
    return observers_[observed] = {OutputLbn(op, "scale"), OutputLbn(op, "zero_point")};
  }

  // The train step a train job's observers read; other jobs read a constant 0 (they do not
  // update their ranges).
  std::string TrainStep(const ParallelConf& where) {
    const JobConf& conf = job_.job().job_conf();
    if (conf.is_train()) {
      // The train_step pass added the step variable last: it moves up to its first reader.
      const std::string step = TrainStepVariableName(TrainStateName(conf));
      if (!rewritten_.HasOp(step)) { rewritten_.AddOp(job_.Op(step)); }
      return MakeLbn(step, "out");
    }
    if (!zero_step_.empty()) { return zero_step_; }
    OperatorConf step = OpConfBuilder("constant", "System-Qat-ZeroStep-" + job_.job_name())
                            .Attr("dtype", kInt64)
                            .Attr("shape", Shape({1}))
                            .Attr("is_floating_value", false)
                            .Placement(where)
                            .Build();
    return zero_step_ = OutputLbn(Add(std::move(step)), "out");
  }

  // For the bias of a convolution (`lbn` read by the bias_add after a conv2d): the blobs whose
  // observers give the convolution's input and weight scales; nothing when the reader is no
  // such bias_add or the convolution's input or weight is not quantized.
  std::optional<std::pair<std::string, std::string>> ConvScaleSources(
      const OperatorConf& reader, const std::string& lbn) const {
    if (reader.op_type() != "bias_add") { return std::nullopt; }
    for (const auto& entry : reader.input()) {
      for (const std::string& read : entry.second.value()) {
        const OperatorConf& conv = job_.Op(OpNameOfLbn(read));
        if (read == lbn || conv.op_type() != "conv2d") { continue; }
        const std::optional<std::string> in = plan_.ScaleSource(InputLbn(conv, "in"));
        const std::optional<std::string> weight = plan_.ScaleSource(InputLbn(conv, "weight"));
        if (!in || !weight) { return std::nullopt; }
        return std::make_pair(*in, *weight);
      }
    }
    return std::nullopt;
  }

  // The bias's scale, the scale of the convolution's int32 accumulator: in_scale *
  // weight_scale (per output channel with per-channel weights), and a zero zero point.
  std::pair<std::string, std::string> BiasParameters(
      const std::string& lbn, const std::pair<std::string, std::string>& sources) {
    const std::string in_scale = Observer(sources.first).first;
    const std::string weight_scale = Observer(sources.second).first;
    const int64_t length = rewritten_.LogicalBlobDesc(weight_scale).shape.elem_count();
    const ParallelConf where = PlacementOf(in_scale);
    // Power-of-two scales (cambricon) are stored as exponents: the product adds them.
    const std::string combine = rules_.formula == "cambricon" ? "broadcast_add" : "broadcast_mul";
    const OperatorConf& product =
        Add(OpConfBuilder(combine, SanitizedLbn(lbn) + "-fake-quant-mul-bias")
                .Input("x", in_scale)
                .Input("y", weight_scale)
                .Placement(where)
                .Build());
    return {OutputLbn(product, "z"),
            ZeroVariable(SanitizedLbn(lbn) + "-fake-quant-zp", length, where)};
  }

  const JobBuildContext& job_;
  const QatPlanner& plan_;
  const QatRules& rules_;
  const QatConfig& config_;
  JobBuildContext& rewritten_;
  std::map<std::string, std::pair<std::string, std::string>> observers_;
  std::map<std::string, std::string> quantized_;
  std::map<std::string, std::string> casts_;
  std::string zero_step_;
};

class QuantizationAwareTrainingPass final : public Pass {
 public:
  std::string name() const override { return kPassName; }

  void Apply(JobBuildContext& job) const override {
    if (!job.job().job_conf().enable_qat()) { return; }
    const QatRules rules = RulesOf(job.job().job_conf().qat_config());
    QatPlanner plan(job.job(), rules);
    plan.Plan();
    std::optional<QatBuilder> builder;
    job = RewriteInputs(job, [&](const OperatorConf& op, const std::string& argument,
                                 int64_t index, const std::string& lbn,
                                 JobBuildContext& rewritten) {
      if (!plan.slots().count(InputSlot{op.name(), argument, index}) ||
          IsBatchNormInput(op.op_type()) || job.LogicalBlobDesc(lbn).data_type != kFloat) {
        return lbn;
      }
      if (!builder) { builder.emplace(job, plan, rules, rewritten); }
      return builder->Quantized(op, lbn);
    });
  }
};

}  // namespace

std::unique_ptr<Pass> MakeQuantizationAwareTrainingPass() {
  return std::make_unique<QuantizationAwareTrainingPass>();
}

}  // namespace oneflow
