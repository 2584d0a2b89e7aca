#include "oneflow/train/learning_rate_schedule.h"

#include <algorithm>
#include <cmath>

#include "oneflow/common/error.h"

namespace oneflow {
namespace {

constexpr double kPi = 3.14159265358979323846;

size_t PieceIndex(const std::vector<int64_t>& boundaries, int64_t step) {
  size_t index = 0;
  while (index < boundaries.size() && step > boundaries[index]) { ++index; }
  return index;
}

double DecayExponent(const LearningRateSchedule& schedule, int64_t step) {
  double p = static_cast<double>(step) / static_cast<double>(schedule.decay_batches);
  return schedule.staircase ? std::floor(p) : p;
}

double Decayed(const LearningRateSchedule& s, int64_t step) {
  const double lr = s.base_lr;
  const std::string& decay = s.decay;
  if (decay == "none") { return lr; }
  if (decay == "piecewise_constant") { return s.values[PieceIndex(s.boundaries, step)]; }
  if (decay == "piecewise_scaling") { return lr * s.values[PieceIndex(s.boundaries, step)]; }
  if (decay == "exponential") { return lr * std::pow(s.decay_rate, DecayExponent(s, step)); }
  if (decay == "inverse_time") { return lr / (1.0 + s.decay_rate * DecayExponent(s, step)); }
  if (decay == "natural_exp") { return lr * std::exp(-s.decay_rate * DecayExponent(s, step)); }
  double batch = static_cast<double>(step);
  double batches = static_cast<double>(s.decay_batches);
  if (decay == "polynomial") {
    if (s.cycle) {
      if (step == 0) { batch = 1.0; }
      batches *= std::ceil(batch / batches);
    } else {
      batch = std::min(batch, batches);
    }
    return (lr - s.end_learning_rate) * std::pow(1.0 - batch / batches, s.power) +
           s.end_learning_rate;
  }
  batch = std::min(batch, batches);
  if (decay == "cosine") {
    const double cosine = 0.5 * (1.0 + std::cos(kPi * batch / batches));
    return lr * ((1.0 - s.alpha) * cosine + s.alpha);
  }
  // linear_cosine
  const double linear = (batches - batch) / batches;
  const double cosine = 0.5 * (1.0 + std::cos(kPi * 2.0 * s.num_periods * batch / batches));
  return lr * ((s.alpha + linear) * cosine + s.beta);
}

}  // namespace

void CheckLearningRateSchedule(const LearningRateSchedule& s) {
  static const std::vector<std::string> kDecays = {
      "none",         "piecewise_constant", "piecewise_scaling", "exponential",
      "inverse_time", "natural_exp",        "polynomial",        "cosine",
      "linear_cosine"};
  if (std::find(kDecays.begin(), kDecays.end(), s.decay) == kDecays.end()) {
    throw Error(ErrorKind::kValue) << "learning_rate_schedule: unknown decay '" << s.decay << "'";
  }
  if (s.decay == "piecewise_constant" || s.decay == "piecewise_scaling") {
    if (s.values.size() != s.boundaries.size() + 1) {
      throw Error(ErrorKind::kValue)
          << "learning_rate_schedule (" << s.decay << "): needs len(boundaries) + 1 values, got "
          << s.values.size() << " values and " << s.boundaries.size() << " boundaries";
    }
    for (size_t i = 1; i < s.boundaries.size(); ++i) {
      if (s.boundaries[i] <= s.boundaries[i - 1]) {
        throw Error(ErrorKind::kValue)
            << "learning_rate_schedule (" << s.decay << "): boundaries must be strictly increasing";
      }
    }
  } else if (s.decay != "none" && s.decay_batches <= 0 && s.warmup == "none") {
    // With a warmup, steps <= 0 is an error only once the warmup is over (LearningRateAt).
    throw Error(ErrorKind::kValue)
        << "learning_rate_schedule (" << s.decay << "): steps (decay_batches) must be > 0, got "
        << s.decay_batches;
  }
  if (s.warmup == "none") { return; }
  if (s.warmup != "constant" && s.warmup != "linear") {
    throw Error(ErrorKind::kValue) << "learning_rate_schedule: unknown warmup '" << s.warmup << "'";
  }
  if (s.warmup_batches < 0) {
    throw Error(ErrorKind::kValue)
        << "warmup." << s.warmup << ": steps must be >= 0, got " << s.warmup_batches;
  }
  const double m = s.warmup_multiplier;
  const bool constant_ok = m > 0.0 && m < 1.0;
  const bool linear_ok = m >= 0.0 && m < 1.0;
  if (s.warmup == "constant" ? !constant_ok : !linear_ok) {
    throw Error(ErrorKind::kValue)
        << "warmup." << s.warmup << ": the multiplier must be in "
        << (s.warmup == "constant" ? "(0, 1)" : "[0, 1)") << ", got " << m;
  }
}

double LearningRateAt(const LearningRateSchedule& s, int64_t step) {
  if (s.warmup != "none" && step < s.warmup_batches) {
    if (s.warmup == "constant") { return s.base_lr * s.warmup_multiplier; }
    const double m = s.warmup_multiplier;
    return s.base_lr *
           (m + (1.0 - m) * static_cast<double>(step) / static_cast<double>(s.warmup_batches));
  }
  const bool uses_steps = s.decay != "none" && s.decay != "piecewise_constant" &&
                          s.decay != "piecewise_scaling";
  if (uses_steps && s.decay_batches <= 0) {
    throw Error(ErrorKind::kValue)
        << "learning_rate_schedule (" << s.decay << "): training reached step " << step
        << ", past the warmup of " << s.warmup_batches << " steps, and the decay's steps "
        << "(decay_batches) = " << s.decay_batches << " is not > 0";
  }
  return Decayed(s, step);
}

}  // namespace oneflow
