#include "oneflow/kernels/cpu/half_via_float_kernel.h"

#include <memory>
#include <utility>
#include <vector>

#include "oneflow/framework/op_conf_util.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/kernels/cpu/half_conversion.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

void HalfToFloatInParallel(KernelContext& ctx, const _Float16* in, float* out, int64_t count) {
  ParallelForElements(ctx, count, kElementwiseGrain, [=](int64_t begin, int64_t end) {
    HalfToFloat(in + begin, out + begin, end - begin);
  });
}

void FloatToHalfInParallel(KernelContext& ctx, const float* in, _Float16* out, int64_t count) {
  ParallelForElements(ctx, count, kElementwiseGrain, [=](int64_t begin, int64_t end) {
    FloatToHalf(in + begin, out + begin, end - begin);
  });
}

class HalfViaFloatKernel final : public Kernel {
 public:
  HalfViaFloatKernel(const KernelFactory& float_factory, const KernelInitContext& ctx)
      : conf_(ctx.conf()) {
    const OpDef& def = OpRegistry::Instance().Get(conf_.op_type());
    std::map<std::string, BlobDesc> descs, logical_descs;
    for (const bool is_input : {true, false}) {
      for (const auto& entry : is_input ? conf_.input() : conf_.output()) {
        for (int64_t index = 0; index < entry.second.value_size(); ++index) {
          if (!ctx.Has(entry.first, index)) { continue; }
          Argument argument;
          argument.name = entry.first;
          argument.index = index;
          argument.is_input = is_input;
          argument.writes_back = !is_input || def.mutable_inputs.count(entry.first) > 0;
          BlobDesc desc = ctx.Desc(entry.first, index);
          BlobDesc logical_desc = ctx.LogicalDesc(entry.first, index);
          argument.half = desc.data_type == kFloat16;
          if (argument.half) {
            desc.data_type = kFloat;
            logical_desc.data_type = kFloat;
            argument.buffer.resize(static_cast<size_t>(desc.shape.elem_count()));
          }
          const std::string key = ArgumentKey(entry.first, index);
          descs[key] = desc;
          logical_descs[key] = logical_desc;
          argument.slot = float_context_.AddBlob(
              key, Blob(argument.half ? argument.buffer.data() : nullptr, desc), is_input);
          arguments_.push_back(std::move(argument));
        }
      }
    }
    float_init_context_ = std::make_unique<KernelInitContext>(
        conf_, std::move(descs), ctx.parallel_context(), std::move(logical_descs));
    float_kernel_ = float_factory(*float_init_context_);
  }

  void Forward(KernelContext& ctx) override {
    float_context_.set_device(&ctx.device());
    float_context_.set_job_instance(ctx.job_instance());
    for (Argument& argument : arguments_) {
      Blob& blob = Outer(ctx, argument);
      if (!argument.half) {
        float_context_.SetBlobData(argument.slot, blob.mut_raw());
      } else if (argument.is_input) {
        HalfToFloatInParallel(ctx, blob.data<_Float16>(), argument.buffer.data(),
                              blob.elem_count());
      }
    }
    float_kernel_->Forward(float_context_);
    for (Argument& argument : arguments_) {
      if (!argument.half || !argument.writes_back) { continue; }
      Blob& blob = Outer(ctx, argument);
      FloatToHalfInParallel(ctx, argument.buffer.data(), blob.mut_data<_Float16>(),
                            blob.elem_count());
    }
  }

 private:
  struct Argument {
    std::string name;
    int64_t index = 0;
    bool is_input = false;
    bool writes_back = false;  // outputs and mutable inputs
    bool half = false;         // a float16 blob, computed on through `buffer`
    std::vector<float> buffer;
    int64_t slot = -1;         // in float_context_
  };

  static Blob& Outer(KernelContext& ctx, const Argument& argument) {
    return argument.is_input ? ctx.MutableInput(argument.name, argument.index)
                             : ctx.Output(argument.name, argument.index);
  }

  OperatorConf conf_;
  std::vector<Argument> arguments_;
  std::unique_ptr<KernelInitContext> float_init_context_;
  std::unique_ptr<Kernel> float_kernel_;
  KernelContext float_context_;
};

}  // namespace

bool CanComputeHalfViaFloat(const std::string& op_type) { return op_type != "variable"; }

KernelFactory MakeHalfViaFloatFactory(KernelFactory float_factory) {
  return [float_factory = std::move(float_factory)](const KernelInitContext& ctx) {
    return std::unique_ptr<Kernel>(new HalfViaFloatKernel(float_factory, ctx));
  };
}

}  // namespace oneflow
