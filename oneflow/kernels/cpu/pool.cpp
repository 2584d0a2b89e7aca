// CPU pooling kernels (ops in oneflow/ops/pool.cpp).
//
// float32 forward and average-pool backward: oneDNN pooling primitives on the framework's plain
// layout, created on the kernel's first call and reused (onednn_util.h). Forward uses
// forward_inference (no workspace). Its max drops NaN and starts from -FLT_MAX; when x holds a NaN
// or -inf, the direct loop redoes the forward so a NaN is its window's maximum and a window of
// -inf gives -inf, as in PyTorch.
// Max-pool backward, float32 and float64: direct loops (MaxPoolGradKernel). oneDNN's needs the
// workspace (argmax) of a forward_training pass, which our separate gradient op, fed with x, had
// to recompute first; docs/kernels.md ("Convolution and pooling") has the measurements.
// Other float64 kernels (no f64 in oneDNN): direct loops over each (batch, channel) plane's
// windows.

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/window_geometry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/onednn_util.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

bool IsMaxPool(const std::string& op_type) { return op_type.rfind("max_pool", 0) == 0; }

WindowGeometry MakePoolGeometry(const KernelInitContext& ctx) {
  const Shape& x = ctx.Desc("x").shape;
  return ComputeWindowGeometry(ctx.conf().op_type(), x, x.num_axes() - 2,
                               PoolWindowAttributes(ctx.conf()));
}

// ---------------------------------------------------------------------------------------------
// Direct loops (float64; float32 max pooling over a NaN). The geometry is widened to three spatial axes (leading axes of size 1);
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

// Pools every window of x into y. A NaN in a max-pool window is its maximum, as in PyTorch.
template <typename T>
void DirectPoolForward(const Pool3D& pool, bool max, const T* x, T* y) {
  std::vector<int64_t> offsets;
  for (int64_t n = 0; n < pool.batch; ++n) {
    for (int64_t c = 0; c < pool.channels; ++c) {
      ForEachWindow(pool, n, c, offsets, [&](int64_t out, const std::vector<int64_t>& in) {
        T result = max ? -std::numeric_limits<T>::infinity() : T(0);
        for (int64_t offset : in) {
          const T value = x[offset];
          result = !max ? result + value : (value > result || value != value) ? value : result;
        }
        y[out] = max ? result : result / static_cast<T>(in.size());
      });
    }
  }
}

// Average-pool gradient: each dy element is shared equally by its window's x elements.
template <typename T>
void DirectAvgPoolGrad(const Pool3D& pool, const T* dy, T* dx, int64_t dx_count) {
  std::fill(dx, dx + dx_count, T(0));
  std::vector<int64_t> offsets;
  for (int64_t n = 0; n < pool.batch; ++n) {
    for (int64_t c = 0; c < pool.channels; ++c) {
      ForEachWindow(pool, n, c, offsets, [&](int64_t out, const std::vector<int64_t>& in) {
        if (in.empty()) { return; }
        const T share = dy[out] / static_cast<T>(in.size());
        for (int64_t offset : in) { dx[offset] += share; }
      });
    }
  }
}

// A window longer than the input along some axis: oneDNN walks every position of every window,
// padding included (a (4, 4) input with a window of 65536 took 39 s), while the direct loops
// visit only the input elements each window covers. Global pooling (window == input) stays on
// oneDNN.
bool WindowExceedsInput(const Pool3D& pool) {
  for (int axis = 0; axis < 3; ++axis) {
    if (pool.window[axis] > pool.input[axis]) { return true; }
  }
  return false;
}

// Whether x holds a NaN or -inf (oneDNN's max starts from the lowest finite float, so a window of
// -inf gave -FLT_MAX).
bool ContainsNaNOrMinusInf(KernelContext& ctx, const float* x, int64_t count) {
  constexpr float kLowest = -std::numeric_limits<float>::max();
  std::atomic<bool> found{false};
  ParallelForElements(ctx, count, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    bool special = false;
    for (int64_t i = begin; i < end; ++i) { special |= !(x[i] >= kLowest); }
    if (special) { found = true; }
  });
  return found;
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
        pool_(WidenTo3D(geometry_)),
        max_(IsMaxPool(ctx.conf().op_type())),
        direct_(WindowExceedsInput(pool_)),
        x_count_(ctx.Desc("x").shape.elem_count()),
        y_count_(ctx.Desc("y").shape.elem_count()) {}

  void Forward(KernelContext& ctx) override {
    float* y = ctx.Output("y").mut_data<float>();
    if (y_count_ == 0) { return; }
    if (direct_) {
      DirectPoolForward(pool_, max_, ctx.Input("x").data<float>(), y);
      return;
    }
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
    const float* x = ctx.Input("x").data<float>();
    primitive_.Run(ctx.cpu_device(), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
    // oneDNN's max drops NaN and turns a window of -inf into -FLT_MAX; PyTorch (and the gradient
    // kernel below) take NaN as the maximum and keep -inf.
    if (max_ && ContainsNaNOrMinusInf(ctx, x, x_count_)) { DirectPoolForward(pool_, true, x, y); }
  }

 private:
  WindowGeometry geometry_;
  Pool3D pool_;
  bool max_, direct_;
  int64_t x_count_, y_count_;
  OneDnnPrimitive primitive_;
};

// Average-pool gradient (max pooling: MaxPoolGradKernel below).
class OneDnnAvgPoolGradKernel final : public Kernel {
 public:
  explicit OneDnnAvgPoolGradKernel(const KernelInitContext& ctx)
      : geometry_(MakePoolGeometry(ctx)),
        pool_(WidenTo3D(geometry_)),
        direct_(WindowExceedsInput(pool_)),
        dy_count_(ctx.Desc("dy").shape.elem_count()),
        dx_count_(ctx.Desc("dx").shape.elem_count()) {}

  void Forward(KernelContext& ctx) override {
    float* dx = ctx.Output("dx").mut_data<float>();
    if (dy_count_ == 0 || dx_count_ == 0 || direct_) {
      DirectAvgPoolGrad(pool_, ctx.Input("dy").data<float>(), dx, dx_count_);
      return;
    }
    if (!backward_.built()) {
      try {
        PoolDescs d = MakePoolDescs(geometry_, false);
        auto forward_pd = PoolForwardPrimitiveDesc(d, dnnl::prop_kind::forward_training);
        dnnl::pooling_backward::desc desc(d.algorithm, d.src, d.dst, d.strides, d.kernel,
                                          d.padding_before, d.padding_after);
        dnnl::pooling_backward::primitive_desc pd(desc, UserScratchpadAttr(), OneDnnCpuEngine(),
                                                  forward_pd);
        backward_ = OneDnnPrimitive(dnnl::pooling_backward(pd), pd.scratchpad_desc(),
                                    {{DNNL_ARG_DIFF_DST, d.dst}, {DNNL_ARG_DIFF_SRC, d.src}});
      } catch (const dnnl::error& error) { ThrowOneDnnError("pooling backward", error); }
    }
    backward_.Run(ctx.cpu_device(),
                  {{DNNL_ARG_DIFF_DST, ctx.Input("dy").data<float>()}, {DNNL_ARG_DIFF_SRC, dx}});
  }

 private:
  WindowGeometry geometry_;
  Pool3D pool_;
  bool direct_;
  int64_t dy_count_, dx_count_;
  OneDnnPrimitive backward_;
};

template <typename T>
class DirectPoolForwardKernel final : public Kernel {
 public:
  explicit DirectPoolForwardKernel(const KernelInitContext& ctx)
      : pool_(WidenTo3D(MakePoolGeometry(ctx))), max_(IsMaxPool(ctx.conf().op_type())) {}

  void Forward(KernelContext& ctx) override {
    DirectPoolForward(pool_, max_, ctx.Input("x").data<T>(), ctx.Output("y").mut_data<T>());
  }

 private:
  Pool3D pool_;
  bool max_;
};

// Average-pool gradient, float64.
template <typename T>
class DirectAvgPoolGradKernel final : public Kernel {
 public:
  explicit DirectAvgPoolGradKernel(const KernelInitContext& ctx)
      : pool_(WidenTo3D(MakePoolGeometry(ctx))) {}

  void Forward(KernelContext& ctx) override {
    DirectAvgPoolGrad(pool_, ctx.Input("dy").data<T>(), ctx.Output("dx").mut_data<T>(),
                      ctx.Output("dx").elem_count());
  }

 private:
  Pool3D pool_;
};

// Max-pool gradient, float32 and float64: each dy element goes to the first maximum of x in its
// window (a NaN counts as the maximum, as in PyTorch). Direct loops: oneDNN's backward needs the
// forward pass's workspace (argmax), which this separate gradient op, fed with x, would have to
// recompute first; finding the maximum here is the same single pass over x (docs/kernels.md).
template <typename T>
class MaxPoolGradKernel final : public Kernel {
 public:
  explicit MaxPoolGradKernel(const KernelInitContext& ctx)
      : pool_(WidenTo3D(MakePoolGeometry(ctx))), disjoint_2x2_(IsDisjoint2x2(pool_)) {
    for (int axis = 0; axis < 3; ++axis) {
      for (int64_t o = 0; o < pool_.output[axis]; ++o) {
        const int64_t start = o * pool_.strides[axis] - pool_.padding[axis];
        ranges_[axis].push_back(
            {std::max<int64_t>(start, 0), std::min(start + pool_.window[axis], pool_.input[axis])});
      }
    }
  }

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("dx").mut_data<T>();
    const int64_t in_size = pool_.InputSize(), out_size = pool_.OutputSize();
    if (pool_.channels_first) {
      // One (batch, channel) plane per unit: windows overlap only within a plane.
      ParallelForRows(ctx, pool_.batch * pool_.channels, in_size, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          PlaneGrad(x + plane * in_size, dy + plane * out_size, dx + plane * in_size);
        }
      });
      return;
    }
    // channels_last: one batch element per unit; each window position is a row of channels, and
    // the running maximum is kept per channel so the inner loops run along contiguous rows.
    const int64_t channels = pool_.channels;
    ParallelForRows(ctx, pool_.batch, in_size * channels, [&](int64_t begin, int64_t end) {
      std::vector<T> best_value(channels);
      std::vector<int64_t> best(channels);
      for (int64_t n = begin; n < end; ++n) {
        RowsGrad(x + n * in_size * channels, dy + n * out_size * channels,
                 dx + n * in_size * channels, best_value.data(), best.data());
      }
    });
  }

 private:
  struct Range {
    int64_t begin, end;  // a window clipped to the input, along one axis
  };

  // Whether every window is a whole 2x2 square of a 2D input at stride 2 (LeNet's and most CNNs'
  // max pools): then each input element is in at most one window and PlaneGrad2x2 applies.
  static bool IsDisjoint2x2(const Pool3D& p) {
    return p.input[0] == 1 && p.window == std::array<int64_t, 3>{1, 2, 2} &&
           p.strides == std::array<int64_t, 3>{1, 2, 2} &&
           p.padding == std::array<int64_t, 3>{0, 0, 0} && 2 * p.output[1] <= p.input[1] &&
           2 * p.output[2] <= p.input[2];
  }

  // PlaneGrad for disjoint 2x2 windows: every element of a window is written once (the gradient or 0),
  // with no zero fill first and no read-modify-write (4-10x faster than the general loops).
  void PlaneGrad2x2(const T* x, const T* dy, T* dx) const {
    const Pool3D& p = pool_;
    const int64_t width = p.input[2];
    if (2 * p.output[1] < p.input[1] || 2 * p.output[2] < p.input[2]) {
      std::fill(dx, dx + p.InputSize(), T(0));  // rows or columns no window covers
    }
    for (int64_t oy = 0; oy < p.output[1]; ++oy) {
      const T* x0 = x + 2 * oy * width;
      const T* x1 = x0 + width;
      T* dx0 = dx + 2 * oy * width;
      T* dx1 = dx0 + width;
      const T* dy_row = dy + oy * p.output[2];
      for (int64_t ox = 0; ox < p.output[2]; ++ox) {
        const T v0 = x0[2 * ox], v1 = x0[2 * ox + 1], v2 = x1[2 * ox], v3 = x1[2 * ox + 1];
        int which = 0;
        T best = v0;
        bool take = (v1 > best) | (v1 != v1);
        which = take ? 1 : which;
        best = take ? v1 : best;
        take = (v2 > best) | (v2 != v2);
        which = take ? 2 : which;
        best = take ? v2 : best;
        take = (v3 > best) | (v3 != v3);
        which = take ? 3 : which;
        const T gradient = dy_row[ox];
        dx0[2 * ox] = which == 0 ? gradient : T(0);
        dx0[2 * ox + 1] = which == 1 ? gradient : T(0);
        dx1[2 * ox] = which == 2 ? gradient : T(0);
        dx1[2 * ox + 1] = which == 3 ? gradient : T(0);
      }
    }
  }

  // One (batch, channel) plane of channels_first data.
  ONEFLOW_CPU_DISPATCH void PlaneGrad(const T* x, const T* dy, T* dx) const {
    const Pool3D& p = pool_;
    if (disjoint_2x2_) {
      PlaneGrad2x2(x, dy, dx);
      return;
    }
    std::fill(dx, dx + p.InputSize(), T(0));
    const int64_t width = p.input[2], area = p.input[1] * p.input[2];
    int64_t out = 0;
    for (const Range& rz : ranges_[0]) {
      for (const Range& ry : ranges_[1]) {
        for (const Range& rx : ranges_[2]) {
          const T gradient = dy[out++];
          if (rz.begin >= rz.end || ry.begin >= ry.end || rx.begin >= rx.end) { continue; }
          int64_t best = (rz.begin * p.input[1] + ry.begin) * width + rx.begin;
          T best_value = x[best];
          for (int64_t z = rz.begin; z < rz.end; ++z) {
            for (int64_t y = ry.begin; y < ry.end; ++y) {
              const int64_t row = z * area + y * width;
              for (int64_t i = row + rx.begin; i < row + rx.end; ++i) {
                const T value = x[i];
                const bool take = value > best_value || value != value;  // selects, no branch
                best = take ? i : best;
                best_value = take ? value : best_value;
              }
            }
          }
          dx[best] += gradient;
        }
      }
    }
  }

  // One batch element of channels_last data: best_value and best are scratch rows of channels.
  ONEFLOW_CPU_DISPATCH void RowsGrad(const T* x, const T* dy, T* dx, T* best_value,
                                     int64_t* best) const {
    const Pool3D& p = pool_;
    const int64_t channels = p.channels;
    std::fill(dx, dx + p.InputSize() * channels, T(0));
    int64_t out = 0;
    for (const Range& rz : ranges_[0]) {
      for (const Range& ry : ranges_[1]) {
        for (const Range& rx : ranges_[2]) {
          const T* dy_row = dy + (out++) * channels;
          if (rz.begin >= rz.end || ry.begin >= ry.end || rx.begin >= rx.end) { continue; }
          bool first = true;
          for (int64_t z = rz.begin; z < rz.end; ++z) {
            for (int64_t y = ry.begin; y < ry.end; ++y) {
              for (int64_t i = rx.begin; i < rx.end; ++i) {
                const int64_t spatial = (z * p.input[1] + y) * p.input[2] + i;
                const T* row = x + spatial * channels;
                if (first) {
                  std::copy(row, row + channels, best_value);
                  std::fill(best, best + channels, spatial);
                  first = false;
                  continue;
                }
                for (int64_t c = 0; c < channels; ++c) {
                  const T value = row[c];
                  const bool take = value > best_value[c] || value != value;
                  best_value[c] = take ? value : best_value[c];
                  best[c] = take ? spatial : best[c];
                }
              }
            }
          }
          for (int64_t c = 0; c < channels; ++c) { dx[best[c] * channels + c] += dy_row[c]; }
        }
      }
    }
  }

  Pool3D pool_;
  bool disjoint_2x2_;
  std::array<std::vector<Range>, 3> ranges_;
};

}  // namespace

#define REGISTER_POOL_FORWARD_KERNELS(op_type)                      \
  REGISTER_KERNEL(op_type, "cpu", kFloat, OneDnnPoolForwardKernel); \
  REGISTER_KERNEL(op_type, "cpu", kDouble, DirectPoolForwardKernel<double>)
#define REGISTER_MAX_POOL_KERNELS(op_type)                                   \
  REGISTER_POOL_FORWARD_KERNELS(op_type);                                    \
  REGISTER_KERNEL(op_type "_grad", "cpu", kFloat, MaxPoolGradKernel<float>); \
  REGISTER_KERNEL(op_type "_grad", "cpu", kDouble, MaxPoolGradKernel<double>)
#define REGISTER_AVG_POOL_KERNELS(op_type)                                  \
  REGISTER_POOL_FORWARD_KERNELS(op_type);                                   \
  REGISTER_KERNEL(op_type "_grad", "cpu", kFloat, OneDnnAvgPoolGradKernel); \
  REGISTER_KERNEL(op_type "_grad", "cpu", kDouble, DirectAvgPoolGradKernel<double>)

REGISTER_MAX_POOL_KERNELS("max_pool_1d");
REGISTER_MAX_POOL_KERNELS("max_pool_2d");
REGISTER_MAX_POOL_KERNELS("max_pool_3d");
REGISTER_AVG_POOL_KERNELS("avg_pool_1d");
REGISTER_AVG_POOL_KERNELS("avg_pool_2d");
REGISTER_AVG_POOL_KERNELS("avg_pool_3d");

}  // namespace oneflow
