// CPU ctc_loss and ctc_loss_grad (float32, float64; int32 or int64 targets and lengths). Both
// run the CTC recursions in log space, one batch element per work item, split over the compute
// threads. Lengths and target values are validated serially first so that an error is raised on
// the calling thread and names the batch element (its logical index when the batch is split).
//
// With l' the target with blanks around and between its labels (length L = 2 * target_length
// + 1) and y = log_probs[t, b, :]:
//   alpha[t][s] = logsumexp(alpha[t-1][s], alpha[t-1][s-1], alpha[t-1][s-2] if l'[s] is not
//                 blank and differs from l'[s-2]) + y[l'[s]]
//   loss = -logsumexp(alpha[T'-1][L-1], alpha[T'-1][L-2])      (T' = input_length)
// beta is the same recursion run backwards from T'-1, so alpha[t][s] + beta[t][s] - y[l'[s]]
// is log of the probability of the alignments through (t, s). The diff is PyTorch's:
//   diff[t, b, c] = dy[b] * (exp(y[c]) - exp(logsumexp_{s: l'[s]=c}(alpha + beta)[t][s] + loss
//                   - y[c]))
// that is the true d loss / d y plus exp(y[c]) * dy[b]. The extra term is PyTorch's convention
// (the gradient as if y were logits fed to log_softmax); it vanishes in log_softmax's backward,
// since the subtracted term sums to 1 over c, so logits upstream get the same gradient either
// way. Rows t >= T' get 0. With zero_infinity an impossible alignment (loss = inf) gives loss 0
// and an all-zero diff; without it the diff of that element is NaN (as in PyTorch).

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

// Reads element `index` of an int32 or int64 blob as int64.
int64_t IndexAt(const Blob& blob, int64_t index) {
  return blob.data_type() == kInt32 ? static_cast<int64_t>(blob.data<int32_t>()[index])
                                    : blob.data<int64_t>()[index];
}

// Shapes and attributes both kernels read at init.
struct CtcGeometry {
  int64_t max_input_length = 0;   // T
  int64_t batch_size = 0;         // N, of this device's part
  int64_t num_classes = 0;        // C
  int64_t max_target_length = 0;  // S
  int64_t blank = 0;
  int64_t batch_begin = 0;  // logical index of this part's first batch element
  std::string op_type;
  std::string op_name;

  int64_t alpha_width() const { return 2 * max_target_length + 1; }

  CtcGeometry(const KernelInitContext& ctx, const std::string& type) : op_type(type) {
    const Shape& log_probs = ctx.Desc("log_probs").shape;
    max_input_length = log_probs.At(0);
    batch_size = log_probs.At(1);
    num_classes = log_probs.At(2);
    max_target_length = ctx.Desc("targets").shape.At(1);
    blank = ctx.Attr<int64_t>("blank");
    op_name = ctx.conf().name();
    const SbpParallel sbp = ctx.Sbp("input_lengths");
    if (sbp.has_split_parallel()) {
      batch_begin =
          SliceOfPart(ctx.LogicalDesc("input_lengths").shape, sbp,
                      ctx.parallel_context().parallel_id(), ctx.parallel_context().parallel_num())
              .begin[0];
    }
  }
};

// One batch element's lengths and labels (the target without blanks), validated.
struct CtcSample {
  int64_t input_length;
  int64_t target_length;
  std::vector<int64_t> labels;
};

// Reads and checks every batch element: 0 <= input_length <= T, 0 <= target_length <= S and
// each of the first target_length targets in [0, C). ValueError naming the op and element.
std::vector<CtcSample> ReadSamples(const CtcGeometry& geometry, const KernelContext& ctx) {
  const Blob& input_lengths = ctx.Input("input_lengths");
  const Blob& target_lengths = ctx.Input("target_lengths");
  const Blob& targets = ctx.Input("targets");
  std::vector<CtcSample> samples(geometry.batch_size);
  for (int64_t b = 0; b < geometry.batch_size; ++b) {
    const int64_t element = geometry.batch_begin + b;
    CtcSample& sample = samples[b];
    sample.input_length = IndexAt(input_lengths, b);
    sample.target_length = IndexAt(target_lengths, b);
    if (sample.input_length < 0 || sample.input_length > geometry.max_input_length) {
      throw Error(ErrorKind::kValue)
          << geometry.op_type << " (op '" << geometry.op_name << "'): input_lengths[" << element
          << "] = " << sample.input_length << " is out of range [0, " << geometry.max_input_length
          << "] (T, the length of log_probs' time axis)";
    }
    if (sample.target_length < 0 || sample.target_length > geometry.max_target_length) {
      throw Error(ErrorKind::kValue)
          << geometry.op_type << " (op '" << geometry.op_name << "'): target_lengths[" << element
          << "] = " << sample.target_length << " is out of range [0, " << geometry.max_target_length
          << "] (S, the length of targets' axis 1)";
    }
    sample.labels.resize(sample.target_length);
    for (int64_t i = 0; i < sample.target_length; ++i) {
      const int64_t label = IndexAt(targets, b * geometry.max_target_length + i);
      if (label < 0 || label >= geometry.num_classes) {
        throw Error(ErrorKind::kValue)
            << geometry.op_type << " (op '" << geometry.op_name << "'): targets[" << element << ", "
            << i << "] = " << label << " is out of range [0, " << geometry.num_classes
            << ") (C, the number of classes of log_probs)";
      }
      sample.labels[i] = label;
    }
  }
  return samples;
}

template <typename T>
constexpr T kNegativeInfinity = -std::numeric_limits<T>::infinity();

// log(exp(a) + exp(b) + exp(c)), -inf when all three are.
template <typename T>
T LogSumExp3(T a, T b, T c) {
  T maximum = std::max(a, std::max(b, c));
  if (maximum == kNegativeInfinity<T>) { return maximum; }
  return std::log(std::exp(a - maximum) + std::exp(b - maximum) + std::exp(c - maximum)) + maximum;
}

template <typename T>
T LogSumExp2(T a, T b) {
  return LogSumExp3(a, b, kNegativeInfinity<T>);
}

// l'[s]: blank at even s, label s / 2 at odd s.
inline int64_t ExtendedLabel(const CtcSample& sample, int64_t blank, int64_t s) {
  return s % 2 == 0 ? blank : sample.labels[s / 2];
}

// Whether alpha may skip from s - 2 to s (and beta from s + 2 to s): l'[s] is a label that
// differs from the label two places before it.
inline bool CanSkip(const CtcSample& sample, int64_t s) {
  return s >= 2 && s % 2 == 1 && sample.labels[s / 2] != sample.labels[s / 2 - 1];
}

// -log likelihood from the last row of alpha; inf when no alignment exists.
template <typename T>
T NegativeLogLikelihood(const CtcSample& sample, const T* alpha, int64_t alpha_width) {
  if (sample.input_length == 0) {
    return sample.target_length == 0 ? T(0) : std::numeric_limits<T>::infinity();
  }
  const T* last = alpha + (sample.input_length - 1) * alpha_width;
  const int64_t width = 2 * sample.target_length + 1;
  if (sample.target_length == 0) { return -last[0]; }
  return -LogSumExp2(last[width - 1], last[width - 2]);
}

template <typename T>
class CtcLossKernel final : public Kernel {
 public:
  explicit CtcLossKernel(const KernelInitContext& ctx)
      : geometry_(ctx, "ctc_loss"), zero_infinity_(ctx.Attr<bool>("zero_infinity")) {}

  void Forward(KernelContext& ctx) override {
    const std::vector<CtcSample> samples = ReadSamples(geometry_, ctx);
    const T* log_probs = ctx.Input("log_probs").data<T>();
    T* loss = ctx.Output("loss").mut_data<T>();
    T* alpha = ctx.Output("alpha").mut_data<T>();
    const bool zero_infinity = zero_infinity_;
    const CtcGeometry& g = geometry_;
    const int64_t width = g.alpha_width();
    const int64_t stride_t = g.batch_size * g.num_classes;  // log_probs' time stride
    ParallelForRows(ctx, g.batch_size, g.max_input_length * width, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const CtcSample& sample = samples[b];
        const T* y = log_probs + b * g.num_classes;  // y[t * stride_t + c]
        T* a = alpha + b * g.max_input_length * width;
        std::fill(a, a + g.max_input_length * width, kNegativeInfinity<T>);
        const int64_t used = 2 * sample.target_length + 1;
        if (sample.input_length > 0) {
          a[0] = y[g.blank];
          if (sample.target_length > 0) { a[1] = y[sample.labels[0]]; }
        }
        for (int64_t t = 1; t < sample.input_length; ++t) {
          const T* previous = a + (t - 1) * width;
          T* current = a + t * width;
          const T* y_t = y + t * stride_t;
          for (int64_t s = 0; s < used; ++s) {
            const T stay = previous[s];
            const T advance = s > 0 ? previous[s - 1] : kNegativeInfinity<T>;
            const T skip = CanSkip(sample, s) ? previous[s - 2] : kNegativeInfinity<T>;
            current[s] = LogSumExp3(stay, advance, skip) + y_t[ExtendedLabel(sample, g.blank, s)];
          }
        }
        T nll = NegativeLogLikelihood(sample, a, width);
        if (zero_infinity && nll == std::numeric_limits<T>::infinity()) { nll = T(0); }
        loss[b] = nll;
      }
    });
  }

 private:
  CtcGeometry geometry_;
  bool zero_infinity_;
};

template <typename T>
class CtcLossGradKernel final : public Kernel {
 public:
  explicit CtcLossGradKernel(const KernelInitContext& ctx)
      : geometry_(ctx, "ctc_loss_grad"), zero_infinity_(ctx.Attr<bool>("zero_infinity")) {}

  void Forward(KernelContext& ctx) override {
    const std::vector<CtcSample> samples = ReadSamples(geometry_, ctx);
    const T* log_probs = ctx.Input("log_probs").data<T>();
    const T* alpha = ctx.Input("alpha").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* diff = ctx.Output("log_probs_diff").mut_data<T>();
    const bool zero_infinity = zero_infinity_;
    const CtcGeometry& g = geometry_;
    const int64_t width = g.alpha_width();
    const int64_t stride_t = g.batch_size * g.num_classes;
    ParallelForRows(ctx, g.batch_size, g.max_input_length * width, [&](int64_t begin, int64_t end) {
      // beta of steps t + 1 and t, and logsumexp of alpha + beta per class at step t.
      std::vector<T> beta_next(width), beta(width), class_sum(g.num_classes);
      for (int64_t b = begin; b < end; ++b) {
        const CtcSample& sample = samples[b];
        const T* y = log_probs + b * g.num_classes;
        T* d = diff + b * g.num_classes;
        const T* a = alpha + b * g.max_input_length * width;
        const T nll = NegativeLogLikelihood(sample, a, width);
        int64_t zero_from = sample.input_length;  // rows t >= zero_from get 0
        if (zero_infinity && nll == std::numeric_limits<T>::infinity()) { zero_from = 0; }
        for (int64_t t = zero_from; t < g.max_input_length; ++t) {
          std::fill(d + t * stride_t, d + t * stride_t + g.num_classes, T(0));
        }
        const int64_t used = 2 * sample.target_length + 1;
        const T scale = dy[b];
        for (int64_t t = zero_from - 1; t >= 0; --t) {
          const T* y_t = y + t * stride_t;
          if (t == sample.input_length - 1) {
            std::fill(beta.begin(), beta.begin() + used, kNegativeInfinity<T>);
            beta[used - 1] = y_t[g.blank];
            if (used > 1) { beta[used - 2] = y_t[sample.labels[sample.target_length - 1]]; }
          } else {
            for (int64_t s = 0; s < used; ++s) {
              const T stay = beta_next[s];
              const T advance = s + 1 < used ? beta_next[s + 1] : kNegativeInfinity<T>;
              const T skip =
                  s + 2 < used && CanSkip(sample, s + 2) ? beta_next[s + 2] : kNegativeInfinity<T>;
              beta[s] = LogSumExp3(stay, advance, skip) + y_t[ExtendedLabel(sample, g.blank, s)];
            }
          }
          std::fill(class_sum.begin(), class_sum.end(), kNegativeInfinity<T>);
          const T* a_t = a + t * width;
          for (int64_t s = 0; s < used; ++s) {
            T& sum = class_sum[ExtendedLabel(sample, g.blank, s)];
            sum = LogSumExp2(sum, a_t[s] + beta[s]);
          }
          T* d_t = d + t * stride_t;
          for (int64_t c = 0; c < g.num_classes; ++c) {
            d_t[c] = (std::exp(y_t[c]) - std::exp(class_sum[c] + nll - y_t[c])) * scale;
          }
          std::swap(beta, beta_next);
        }
      }
    });
  }

 private:
  CtcGeometry geometry_;
  bool zero_infinity_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("ctc_loss", CtcLossKernel);
REGISTER_CPU_FLOATING_KERNELS("ctc_loss_grad", CtcLossGradKernel);

}  // namespace oneflow
