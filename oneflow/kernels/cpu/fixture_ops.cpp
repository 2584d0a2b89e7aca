// CPU kernels of OneFlow 0.3's framework-test ops (oneflow/ops/fixture_ops.cpp). TestReshape,
// TestReshape4KeepHeaderOnly, TestReshapeLike4KeepHeaderOnly and test_user_op_attr_auto_type
// copy their input (oneflow/kernels/cpu/copy.cpp).

#include <cstring>
#include <random>

#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

namespace {

void Zero(Blob& blob) {
  if (blob.byte_size() > 0) { std::memset(blob.mut_raw(), 0, blob.byte_size()); }
}

void CopyBytes(const Blob& in, Blob& out) {
  if (in.byte_size() > 0 && in.raw() != out.mut_raw()) {
    std::memcpy(out.mut_raw(), in.raw(), in.byte_size());
  }
}

class CcreluKernel final : public Kernel {
 public:
  explicit CcreluKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    const float* x = in.data<float>();
    float* y = ctx.Output("out").mut_data<float>();
    for (int64_t i = 0; i < in.elem_count(); ++i) { y[i] = x[i] > 0.0f ? x[i] : 0.0f; }
  }
};

class CcreluGradKernel final : public Kernel {
 public:
  explicit CcreluGradKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    const Blob& y = ctx.Input("y");
    const float* out = y.data<float>();
    const float* dy = ctx.Input("dy").data<float>();
    float* dx = ctx.Output("dx").mut_data<float>();
    for (int64_t i = 0; i < y.elem_count(); ++i) { dx[i] = out[i] > 0.0f ? dy[i] : 0.0f; }
  }
};

// out[i] = i for each element of this device's part.
class CountingSourceKernel final : public Kernel {
 public:
  explicit CountingSourceKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    float* data = out.mut_data<float>();
    for (int64_t i = 0; i < out.elem_count(); ++i) { data[i] = static_cast<float>(i); }
  }
};

// A dynamic (5,) blob that holds 3 elements, 0, 1 and 2, in every iteration.
class DynamicSourceKernel final : public Kernel {
 public:
  explicit DynamicSourceKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    out.set_shape(Shape({3}));
    float* data = out.mut_data<float>();
    for (int64_t i = 0; i < 3; ++i) { data[i] = static_cast<float>(i); }
  }
};

// Uniform floats in [0, 1) from one std::mt19937 stream per kernel, as OneFlow 0.3's CPU random
// generator drew them: each iteration continues where the last one stopped.
class RandomSourceKernel final : public Kernel {
 public:
  explicit RandomSourceKernel(const KernelInitContext& ctx)
      : engine_(static_cast<std::mt19937::result_type>(ctx.Attr<int64_t>("seed"))) {}
  void Forward(KernelContext& ctx) override {
    Blob& out = ctx.Output("out");
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    float* data = out.mut_data<float>();
    for (int64_t i = 0; i < out.elem_count(); ++i) { data[i] = uniform(engine_); }
  }

 private:
  std::mt19937 engine_;
};

class MultiOutputOrderKernel final : public Kernel {
 public:
  explicit MultiOutputOrderKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    CopyBytes(ctx.Input("in"), ctx.Output("out1"));
    Zero(ctx.Output("out2"));
  }
};

class MultiInputKernel final : public Kernel {
 public:
  explicit MultiInputKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override { CopyBytes(ctx.Input("x1"), ctx.Output("y")); }
};

class MultiInputGradKernel final : public Kernel {
 public:
  explicit MultiInputGradKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    Fill(ctx.Output("x1_diff"), 1.0f);
    Fill(ctx.Output("x2_diff"), 2.0f);
  }

 private:
  static void Fill(Blob& blob, float value) {
    float* data = blob.mut_data<float>();
    for (int64_t i = 0; i < blob.elem_count(); ++i) { data[i] = value; }
  }
};

// Outputs typed and shaped by attributes; OneFlow 0.3 left them uninitialised, they are zeros.
template <typename T>
class ZeroOutputsKernel final : public Kernel {
 public:
  explicit ZeroOutputsKernel(const KernelInitContext& ctx) {}
  void Forward(KernelContext& ctx) override {
    for (int64_t i = 0; ctx.HasOutput("out", i); ++i) { Zero(ctx.Output("out", i)); }
  }
};

}  // namespace

REGISTER_KERNEL("ccrelu", "cpu", kFloat, CcreluKernel);
REGISTER_KERNEL("ccrelu_grad", "cpu", kFloat, CcreluGradKernel);
REGISTER_KERNEL("cpu_only_relu_test", "cpu", kFloat, CcreluKernel);
REGISTER_KERNEL("TestSource", "cpu", kFloat, CountingSourceKernel);
REGISTER_KERNEL("TestSourceMultiGpuFixedOutNum", "cpu", kFloat, CountingSourceKernel);
REGISTER_KERNEL("TestDynamicSource", "cpu", kFloat, DynamicSourceKernel);
REGISTER_KERNEL("TestRandomSource", "cpu", kFloat, RandomSourceKernel);
REGISTER_KERNEL("TestMultiOutputOrder", "cpu", kFloat, MultiOutputOrderKernel);
REGISTER_KERNEL("TestMultiInput", "cpu", kFloat, MultiInputKernel);
REGISTER_KERNEL("TestMultiInputGrad", "cpu", kFloat, MultiInputGradKernel);
REGISTER_CPU_ALL_TYPE_KERNELS("TestDataTypeAttr", ZeroOutputsKernel);
REGISTER_CPU_ALL_TYPE_KERNELS("TestListDataTypeAndListShapeAndListStringAttr", ZeroOutputsKernel);

}  // namespace oneflow
