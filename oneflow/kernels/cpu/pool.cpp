// CPU pooling kernels (ops in oneflow/ops/pool.cpp).
//
// float32: oneDNN pooling primitives on the framework's plain layout, created on the kernel's
// first call and reused (onednn_util.h). Forward uses forward_inference (no workspace). oneDNN's
// max-pool backward needs the workspace (argmax) of a forward_training pass, and our gradient op
// is a separate op fed with x, so the gradient kernel reruns the forward pass into its own
// buffers first; the cost is measured in docs/kernels.md ("Convolution and pooling").
// float64 (no f64 in oneDNN): direct loops over each (batch, channel) plane's windows.

#include <algorithm>
#include <array>
#include <limits>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/window_geometry.h"
#include "oneflow/kernels/cpu/onednn_util.h"

namespace oneflow {

namespace {

bool IsMaxPool(const std::string& op_type) { return op_type.rfind("max_pool", 0) == 0; }

WindowGeometry MakePoolGeometry(const KernelInitContext& ctx) {
  const Shape& x = ctx.Desc("x").shape;
  return ComputeWindowGeometry(ctx.conf().op_type(), x, x.num_axes() - 2,
                               PoolWindowAttributes(ctx.conf()));
}

// ---------------------------------------------------------------------------------------------
// float32: oneDNN.

struct PoolDescs {
  dnnl::memory::desc src, dst;
  dnnl::memory::dims strides, kernel, padding_before, padding_after;
  dnnl::algorithm algorithm;
};

PoolDescs MakePoolDescs(const WindowGeometry& g, bool max) {
  const auto f32 = dnnl::memory::data_type::f32;
  PoolDescs d;
  d.src = ActivationDesc(g.batch, g.channels, g.input, g.channels_first, f32);
  d.dst = ActivationDesc(g.batch, g.channels, g.output, g.channels_first, f32);
  d.strides = g.strides;
  d.kernel = g.window;
  d.padding_before = g.padding_before;
  d.padding_after = g.padding_after;
  d.algorithm = max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  return d;
}

dnnl::pooling_forward::primitive_desc PoolForwardPrimitiveDesc(const PoolDescs& d,
                                                               dnnl::prop_kind kind) {
  dnnl::pooling_forward::desc desc(kind, d.algorithm, d.src, d.dst, d.strides, d.kernel,
                                   d.padding_before, d.padding_after);
  return dnnl::pooling_forward::primitive_desc(desc, UserScratchpadAttr(), OneDnnCpuEngine());
}

class OneDnnPoolForwardKernel final : public Kernel {
 public:
  explicit OneDnnPoolForwardKernel(const KernelInitContext& ctx)
      : geometry_(MakePoolGeometry(ctx)),
        max_(IsMaxPool(ctx.conf().op_type())),
        y_count_(ctx.Desc("y").shape.elem_count()) {}

  void Forward(KernelContext& ctx) override {
    float* y = ctx.Output("y").mut_data<float>();
    if (y_count_ == 0) { return; }
    if (!primitive_.built()) {
      try {
        PoolDescs d = MakePoolDescs(geometry_, max_);
        auto pd = PoolForwardPrimitiveDesc(d, dnnl::prop_kind::forward_inference);
        primitive_ = OneDnnPrimitive(dnnl::pooling_forward(pd), pd.scratchpad_desc(),
                                     {{DNNL_ARG_SRC, d.src}, {DNNL_ARG_DST, d.dst}});
      } catch (const dnnl::error& error) {
        ThrowOneDnnError("pooling forward", error);
      }
    }
    primitive_.Run({{DNNL_ARG_SRC, ctx.Input("x").data<float>()}, {DNNL_ARG_DST, y}});
  }

 private:
  WindowGeometry geometry_;
  bool max_;
  int64_t y_count_;
  OneDnnPrimitive primitive_;
};

class OneDnnPoolGradKernel final : public Kernel {
 public:
  explicit OneDnnPoolGradKernel(const KernelInitContext& ctx)
      : geometry_(MakePoolGeometry(ctx)),
        max_(IsMaxPool(ctx.conf().op_type())),
        dy_count_(ctx.Desc("dy").shape.elem_count()),
        dx_count_(ctx.Desc("dx").shape.elem_count()) {}

  void Forward(KernelContext& ctx) override {
    float* dx = ctx.Output("dx").mut_data<float>();
    if (dy_count_ == 0 || dx_count_ == 0) {
      std::fill(dx, dx + dx_count_, 0.0f);
      return;
    }
    if (!backward_.built()) { Build(); }
    if (max_) {
      forward_.Run({{DNNL_ARG_SRC, ctx.Input("x").data<float>()},
                    {DNNL_ARG_DST, y_.data()},
                    {DNNL_ARG_WORKSPACE, workspace_.data()}});
      backward_.Run({{DNNL_ARG_DIFF_DST, ctx.Input("dy").data<float>()},
                     {DNNL_ARG_DIFF_SRC, dx},
                     {DNNL_ARG_WORKSPACE, workspace_.data()}});
    } else {
      backward_.Run({{DNNL_ARG_DIFF_DST, ctx.Input("dy").data<float>()}, {DNNL_ARG_DIFF_SRC, dx}});
    }
  }

 private:
  void Build() {
    try {
      PoolDescs d = MakePoolDescs(geometry_, max_);
      auto forward_pd = PoolForwardPrimitiveDesc(d, dnnl::prop_kind::forward_training);
      dnnl::pooling_backward::desc desc(d.algorithm, d.src, d.dst, d.strides, d.kernel,
                                        d.padding_before, d.padding_after);
      dnnl::pooling_backward::primitive_desc pd(desc, UserScratchpadAttr(), OneDnnCpuEngine(),
                                                forward_pd);
      std::vector<std::pair<int, dnnl::memory::desc>> backward_arguments{
          {DNNL_ARG_DIFF_DST, d.dst}, {DNNL_ARG_DIFF_SRC, d.src}};
      if (max_) {
        const dnnl::memory::desc workspace = forward_pd.workspace_desc();
        workspace_ = OneDnnBuffer(workspace.get_size());
        y_ = OneDnnBuffer(d.dst.get_size());
        forward_ = OneDnnPrimitive(dnnl::pooling_forward(forward_pd),
                                   forward_pd.scratchpad_desc(),
                                   {{DNNL_ARG_SRC, d.src},
                                    {DNNL_ARG_DST, d.dst},
                                    {DNNL_ARG_WORKSPACE, workspace}});
        backward_arguments.push_back({DNNL_ARG_WORKSPACE, workspace});
      }
      backward_ = OneDnnPrimitive(dnnl::pooling_backward(pd), pd.scratchpad_desc(),
                                  backward_arguments);
    } catch (const dnnl::error& error) {
      ThrowOneDnnError("pooling backward", error);
    }
  }

  WindowGeometry geometry_;
  bool max_;
  int64_t dy_count_, dx_count_;
  OneDnnPrimitive forward_;   // max pooling: recomputes the workspace
  OneDnnPrimitive backward_;
  OneDnnBuffer y_;
  OneDnnBuffer workspace_;
};

// ---------------------------------------------------------------------------------------------
// float64: direct loops. The geometry is widened to three spatial axes (leading axes of size 1);
// each (batch, channel) plane is independent.

struct Pool3D {
  bool channels_first;
  int64_t batch, channels;
  std::array<int64_t, 3> input, window, strides, padding, output;
  int64_t InputSize() const { return input[0] * input[1] * input[2]; }
  int64_t OutputSize() const { return output[0] * output[1] * output[2]; }
};

Pool3D WidenTo3D(const WindowGeometry& geometry) {
  const WindowGeometry g = geometry.WidenedTo3D();
  Pool3D p;
  p.channels_first = g.channels_first;
  p.batch = g.batch;
  p.channels = g.channels;
  std::copy_n(g.input.begin(), 3, p.input.begin());
  std::copy_n(g.window.begin(), 3, p.window.begin());
  std::copy_n(g.strides.begin(), 3, p.strides.begin());
  std::copy_n(g.padding_before.begin(), 3, p.padding.begin());
  std::copy_n(g.output.begin(), 3, p.output.begin());
  return p;
}

// Calls fn(output_offset, window_offsets, count) for every output element of plane (n, c):
// offsets of x / dx elements in the window (padding excluded), in row-major window order.
template <typename Fn>
void ForEachWindow(const Pool3D& p, int64_t n, int64_t c, std::vector<int64_t>& offsets, Fn fn) {
  // Element (n, c, z, y, x) is at base + spatial * step.
  const int64_t step = p.channels_first ? 1 : p.channels;
  const int64_t in_base = p.channels_first ? (n * p.channels + c) * p.InputSize()
                                           : n * p.InputSize() * p.channels + c;
  const int64_t out_base = p.channels_first ? (n * p.channels + c) * p.OutputSize()
                                            : n * p.OutputSize() * p.channels + c;
  for (int64_t oz = 0; oz < p.output[0]; ++oz) {
    for (int64_t oy = 0; oy < p.output[1]; ++oy) {
      for (int64_t ox = 0; ox < p.output[2]; ++ox) {
        offsets.clear();
        const int64_t z0 = oz * p.strides[0] - p.padding[0];
        const int64_t y0 = oy * p.strides[1] - p.padding[1];
        const int64_t x0 = ox * p.strides[2] - p.padding[2];
        for (int64_t z = std::max<int64_t>(z0, 0); z < std::min(z0 + p.window[0], p.input[0]); ++z) {
          for (int64_t y = std::max<int64_t>(y0, 0); y < std::min(y0 + p.window[1], p.input[1]);
               ++y) {
            for (int64_t x = std::max<int64_t>(x0, 0);
                 x < std::min(x0 + p.window[2], p.input[2]); ++x) {
              offsets.push_back(in_base + ((z * p.input[1] + y) * p.input[2] + x) * step);
            }
          }
        }
        const int64_t out = out_base + ((oz * p.output[1] + oy) * p.output[2] + ox) * step;
        fn(out, offsets);
      }
    }
  }
}

template <typename T>
class DirectPoolForwardKernel final : public Kernel {
 public:
  explicit DirectPoolForwardKernel(const KernelInitContext& ctx)
      : pool_(WidenTo3D(MakePoolGeometry(ctx))), max_(IsMaxPool(ctx.conf().op_type())) {}

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    T* y = ctx.Output("y").mut_data<T>();
    std::vector<int64_t> offsets;
    for (int64_t n = 0; n < pool_.batch; ++n) {
      for (int64_t c = 0; c < pool_.channels; ++c) {
        ForEachWindow(pool_, n, c, offsets, [&](int64_t out, const std::vector<int64_t>& in) {
          T result = max_ ? -std::numeric_limits<T>::infinity() : T(0);
          for (int64_t offset : in) {
            result = max_ ? std::max(result, x[offset]) : result + x[offset];
          }
          y[out] = max_ ? result : result / static_cast<T>(in.size());
        });
      }
    }
  }

 private:
  Pool3D pool_;
  bool max_;
};

template <typename T>
class DirectPoolGradKernel final : public Kernel {
 public:
  explicit DirectPoolGradKernel(const KernelInitContext& ctx)
      : pool_(WidenTo3D(MakePoolGeometry(ctx))), max_(IsMaxPool(ctx.conf().op_type())) {}

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("dx").mut_data<T>();
    std::fill(dx, dx + ctx.Output("dx").elem_count(), T(0));
    std::vector<int64_t> offsets;
    for (int64_t n = 0; n < pool_.batch; ++n) {
      for (int64_t c = 0; c < pool_.channels; ++c) {
        ForEachWindow(pool_, n, c, offsets, [&](int64_t out, const std::vector<int64_t>& in) {
          if (in.empty()) { return; }
          if (max_) {
            int64_t best = in[0];
            for (int64_t offset : in) {
              if (x[offset] > x[best]) { best = offset; }  // the first maximum wins ties
            }
            dx[best] += dy[out];
          } else {
            const T share = dy[out] / static_cast<T>(in.size());
            for (int64_t offset : in) { dx[offset] += share; }
          }
        });
      }
    }
  }

 private:
  Pool3D pool_;
  bool max_;
};

}  // namespace

#define REGISTER_POOL_KERNELS(op_type)                                                  \
  REGISTER_KERNEL(op_type, "cpu", kFloat, OneDnnPoolForwardKernel);                     \
  REGISTER_KERNEL(op_type, "cpu", kDouble, DirectPoolForwardKernel<double>);            \
  REGISTER_KERNEL(op_type "_grad", "cpu", kFloat, OneDnnPoolGradKernel);                \
  REGISTER_KERNEL(op_type "_grad", "cpu", kDouble, DirectPoolGradKernel<double>)

REGISTER_POOL_KERNELS("max_pool_1d");
REGISTER_POOL_KERNELS("max_pool_2d");
REGISTER_POOL_KERNELS("max_pool_3d");
REGISTER_POOL_KERNELS("avg_pool_1d");
REGISTER_POOL_KERNELS("avg_pool_2d");
REGISTER_POOL_KERNELS("avg_pool_3d");

}  // namespace oneflow
