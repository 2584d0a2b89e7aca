// CPU ctc_greedy_decoder (float32, float64 log_probs; int32 or int64 input_lengths): one batch
// element per work item. Lengths are validated serially first, so that an error is raised on
// the calling thread and names the element (its logical index when the batch is split).

#include <algorithm>
#include <vector>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

template <typename T>
class CtcGreedyDecoderKernel final : public Kernel {
 public:
  explicit CtcGreedyDecoderKernel(const KernelInitContext& ctx)
      : merge_repeated_(ctx.Attr<bool>("merge_repeated")), op_name_(ctx.conf().name()) {
    const SbpParallel sbp = ctx.Sbp("input_lengths");
    if (sbp.has_split_parallel()) {
      batch_begin_ =
          SliceOfPart(ctx.LogicalDesc("input_lengths").shape, sbp,
                      ctx.parallel_context().parallel_id(), ctx.parallel_context().parallel_num())
              .begin[0];
    }
  }

  void Forward(KernelContext& ctx) override {
    const Blob& log_probs_blob = ctx.Input("log_probs");
    const Blob& lengths_blob = ctx.Input("input_lengths");
    const int64_t steps = log_probs_blob.shape().At(0);
    const int64_t batch_size = log_probs_blob.shape().At(1);
    const int64_t classes = log_probs_blob.shape().At(2);
    std::vector<int64_t> lengths(batch_size);
    for (int64_t b = 0; b < batch_size; ++b) {
      lengths[b] = lengths_blob.data_type() == kInt32
                       ? static_cast<int64_t>(lengths_blob.data<int32_t>()[b])
                       : lengths_blob.data<int64_t>()[b];
      if (lengths[b] < 0 || lengths[b] > steps) {
        throw Error(ErrorKind::kValue)
            << "ctc_greedy_decoder (op '" << op_name_ << "'): input_lengths[" << batch_begin_ + b
            << "] = " << lengths[b] << " is out of range [0, " << steps
            << "] (T, the length of log_probs' time axis)";
      }
    }
    const T* log_probs = log_probs_blob.data<T>();
    int64_t* decoded = ctx.Output("decoded").mut_data<int64_t>();
    T* neg_sum_logits = ctx.Output("neg_sum_logits").mut_data<T>();
    const int64_t blank = classes - 1;
    const bool merge_repeated = merge_repeated_;
    ParallelForRows(ctx, batch_size, steps * classes, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        int64_t* out = decoded + b * steps;
        std::fill(out, out + steps, int64_t{0});
        int64_t emitted = 0;
        int64_t previous = -1;
        T sum = T(0);
        for (int64_t t = 0; t < lengths[b]; ++t) {
          const T* row = log_probs + (t * batch_size + b) * classes;
          const int64_t best = std::max_element(row, row + classes) - row;
          sum += row[best];
          if (best != blank && !(merge_repeated && best == previous)) { out[emitted++] = best; }
          previous = best;
        }
        neg_sum_logits[b] = -sum;
      }
    });
  }

 private:
  bool merge_repeated_;
  std::string op_name_;
  int64_t batch_begin_ = 0;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("ctc_greedy_decoder", CtcGreedyDecoderKernel);

}  // namespace oneflow
