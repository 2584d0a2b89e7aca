#pragma once
// Learning-rate schedules in OneFlow 0.3's closed forms (its learning_rate_schedule kernel).
// `step` is the train step counter, 0 at the first iteration. While a warmup is active
// (step < warmup_batches) it alone decides: constant: base_lr * multiplier; linear:
// base_lr * (m + (1 - m) * step / warmup_batches). Otherwise the decay applies to `step` itself
// (not to step - warmup_batches):
//   none:               base_lr
//   piecewise_constant: values[i], i the first boundary with step <= boundaries[i] (else last)
//   piecewise_scaling:  base_lr * values[i], same i (values are the scales, values[0] = 1)
//   exponential:        base_lr * decay_rate ^ p          p = step / decay_batches (floored
//   inverse_time:       base_lr / (1 + decay_rate * p)      with staircase)
//   natural_exp:        base_lr * exp(-decay_rate * p)
//   polynomial:         (base_lr - end) * (1 - s / d) ^ power + end, s = min(step, d), d =
//                       decay_batches; with cycle s = step (1 at step 0), d = decay_batches *
//                       ceil(s / decay_batches)
//   cosine:             base_lr * ((1 - alpha) * 0.5 (1 + cos(pi s / d)) + alpha), s = min(step, d)
//   linear_cosine:      base_lr * ((alpha + (d - s) / d) * 0.5 (1 + cos(2 pi num_periods s / d))
//                       + beta), s = min(step, d)

#include <cstdint>
#include <string>
#include <vector>

namespace oneflow {

struct LearningRateSchedule {
  double base_lr = 0.0;
  std::string decay = "none";
  std::vector<int64_t> boundaries;
  std::vector<double> values;
  int64_t decay_batches = 0;
  double decay_rate = 0.0;
  bool staircase = false;
  double end_learning_rate = 0.0;
  double power = 1.0;
  bool cycle = false;
  double alpha = 0.0;
  double beta = 0.0;
  double num_periods = 0.0;
  std::string warmup = "none";
  int64_t warmup_batches = 0;
  double warmup_multiplier = 0.0;
};

// Reads the schedule from the attributes of a learning_rate_schedule op (an InferContext or a
// KernelInitContext).
template <typename Context>
LearningRateSchedule LearningRateScheduleFromAttrs(const Context& ctx) {
  LearningRateSchedule schedule;
  schedule.base_lr = ctx.template Attr<double>("base_lr");
  schedule.decay = ctx.template Attr<std::string>("decay");
  schedule.boundaries = ctx.template Attr<std::vector<int64_t>>("boundaries");
  schedule.values = ctx.template Attr<std::vector<double>>("values");
  schedule.decay_batches = ctx.template Attr<int64_t>("decay_batches");
  schedule.decay_rate = ctx.template Attr<double>("decay_rate");
  schedule.staircase = ctx.template Attr<bool>("staircase");
  schedule.end_learning_rate = ctx.template Attr<double>("end_learning_rate");
  schedule.power = ctx.template Attr<double>("power");
  schedule.cycle = ctx.template Attr<bool>("cycle");
  schedule.alpha = ctx.template Attr<double>("alpha");
  schedule.beta = ctx.template Attr<double>("beta");
  schedule.num_periods = ctx.template Attr<double>("num_periods");
  schedule.warmup = ctx.template Attr<std::string>("warmup");
  schedule.warmup_batches = ctx.template Attr<int64_t>("warmup_batches");
  schedule.warmup_multiplier = ctx.template Attr<double>("warmup_multiplier");
  return schedule;
}

// Throws ValueError stating the rule broken (unknown decay or warmup, boundaries not strictly
// increasing, wrong number of values, non-positive decay_batches without a warmup (with one,
// LearningRateAt throws once past it), warmup multiplier outside
// its range).
void CheckLearningRateSchedule(const LearningRateSchedule& schedule);

double LearningRateAt(const LearningRateSchedule& schedule, int64_t step);

}  // namespace oneflow
