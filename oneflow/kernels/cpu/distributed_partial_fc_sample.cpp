// CPU distributed_partial_fc_sample (oneflow/ops/distributed_partial_fc_sample.cpp). Each
// device draws its negative classes from its own std::mt19937, seeded with the op's seed and
// the device's parallel id, continuing from call to call.

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

template <typename T>
class DistributedPartialFcSampleKernel final : public Kernel {
 public:
  explicit DistributedPartialFcSampleKernel(const KernelInitContext& ctx)
      : engine_(static_cast<std::mt19937::result_type>(
            ctx.Attr<int64_t>("seed") * 1000003 + ctx.parallel_context().parallel_id())),
        label_type_(ctx.Desc("label").data_type),
        device_(ctx.parallel_context().parallel_id()) {
    const int64_t id = device_;
    const int64_t devices = ctx.parallel_context().parallel_num();
    classes_ = BalancedPart(ctx.LogicalDesc("weight").shape.At(0), devices, id);
    samples_ = BalancedPart(ctx.Attr<int64_t>("num_sample"), devices, id);
    if (samples_.size() > classes_.size()) {
      throw Error(ErrorKind::kValue)
          << "distributed_partial_fc_sample: device " << id << " would sample "
          << samples_.size() << " of its " << classes_.size() << " classes";
    }
  }

  void Forward(KernelContext& ctx) override {
    if (label_type_ == kInt32) {
      Run<int32_t>(ctx);
    } else {
      Run<int64_t>(ctx);
    }
  }

 private:
  template <typename I>
  void Run(KernelContext& ctx) {
    const Blob& label_blob = ctx.Input("label");
    const I* label = label_blob.data<I>();
    const int64_t batch = label_blob.elem_count();
    // Position of each local class in the sample, -1 if not sampled.
    position_.assign(classes_.size(), -1);
    std::vector<int64_t> sampled;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t value = static_cast<int64_t>(label[b]);
      if (value >= classes_.begin && value < classes_.end) {
        position_[value - classes_.begin] = 0;
      }
    }
    for (int64_t local = 0; local < classes_.size(); ++local) {
      if (position_[local] == 0) { sampled.push_back(local); }
    }
    if (static_cast<int64_t>(sampled.size()) > samples_.size()) {
      throw Error(ErrorKind::kValue)
          << "distributed_partial_fc_sample: the labels hold " << sampled.size()
          << " distinct classes of device " << device_ << "'s range [" << classes_.begin
          << ", " << classes_.end << "), more than the "
          << samples_.size() << " it samples (num_sample / devices)";
    }
    // Negatives: a partial Fisher-Yates shuffle of the classes not among the positives.
    candidates_.clear();
    for (int64_t local = 0; local < classes_.size(); ++local) {
      if (position_[local] != 0) { candidates_.push_back(local); }
    }
    const int64_t needed = samples_.size() - static_cast<int64_t>(sampled.size());
    for (int64_t i = 0; i < needed; ++i) {
      std::uniform_int_distribution<int64_t> pick(i,
                                                  static_cast<int64_t>(candidates_.size()) - 1);
      std::swap(candidates_[i], candidates_[pick(engine_)]);
      sampled.push_back(candidates_[i]);
    }
    I* sampled_label = ctx.Output("sampled_label").mut_data<I>();
    const Blob& weight = ctx.Input("weight");
    const int64_t width = weight.shape().At(1);
    const T* rows = weight.data<T>();
    T* sampled_weight = ctx.Output("sampled_weight").mut_data<T>();
    for (int64_t j = 0; j < samples_.size(); ++j) {
      position_[sampled[j]] = samples_.begin + j;
      sampled_label[j] = static_cast<I>(classes_.begin + sampled[j]);
      std::memcpy(sampled_weight + j * width, rows + sampled[j] * width, width * sizeof(T));
    }
    I* mapped = ctx.Output("mapped_label").mut_data<I>();
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t value = static_cast<int64_t>(label[b]);
      const bool mine = value >= classes_.begin && value < classes_.end;
      mapped[b] = static_cast<I>(mine ? position_[value - classes_.begin] : 0);
    }
  }

  std::mt19937 engine_;
  DataType label_type_;
  int64_t device_;
  Range classes_;  // this device's classes
  Range samples_;  // its part of the sample
  std::vector<int64_t> position_;
  std::vector<int64_t> candidates_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("distributed_partial_fc_sample", DistributedPartialFcSampleKernel);

}  // namespace oneflow
