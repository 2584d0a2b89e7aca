// CPU convolution kernels (ops in oneflow/ops/conv.cpp).
//
// float32: oneDNN convolution forward, backward-data and backward-weights primitives, created
// once per kernel on its first call (onednn_util.h) and reused every iteration. They run on the
// framework's plain layouts (NCHW/NHWC activations, OIHW/OHWI weights) unless oneDNN has only its
// im2col + GEMM fallback there and a direct JIT kernel on its blocked layouts; then the blobs are
// reordered around the primitive (BuildConvPrimitive). Measurements: docs/kernels.md,
// "Convolution and pooling".
// float64: oneDNN has no f64 convolution on CPU, so im2col + cblas_dgemm (col2im for the data
// gradient), one batch element and group at a time.
// deconv2d (transposed convolution) runs the backward-data kernels (ArgumentsOf).

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/window_geometry.h"
#include "oneflow/kernels/conv_arguments.h"
#include "oneflow/kernels/cpu/onednn_util.h"

namespace oneflow {

namespace {

// What a convolution kernel needs, from the physical shapes of its task.
struct ConvShape {
  WindowGeometry geometry;  // of the input
  int64_t out_channels = 0;
  int64_t groups = 1;
};

// x: the input (or x_like) shape; weight: the weight (or filter_diff) shape.
ConvShape MakeConvShape(const KernelInitContext& ctx, const std::string& op_type,
                        const Shape& x, const Shape& weight) {
  ConvShape shape;
  const int64_t spatial_axes = x.num_axes() - 2;
  WindowAttributes attributes = ConvWindowAttributes(ctx.conf());
  const bool channels_first = attributes.data_format == "channels_first";
  if (attributes.window.empty()) {
    for (int64_t axis = 0; axis < spatial_axes; ++axis) {
      attributes.window.push_back(weight.At((channels_first ? 2 : 1) + axis));
    }
  }
  shape.geometry = ComputeWindowGeometry(op_type, x, spatial_axes, attributes);
  shape.out_channels = weight.At(0);
  shape.groups = ctx.Attr<int64_t>("groups");
  return shape;
}

// ---------------------------------------------------------------------------------------------
// float32: oneDNN.

struct ConvDescs {
  dnnl::memory::desc src, weights, dst;
  dnnl::memory::dims strides, dilates, padding_before, padding_after;
};

ConvDescs MakeConvDescs(const ConvShape& shape) {
  const WindowGeometry& g = shape.geometry;
  const auto f32 = dnnl::memory::data_type::f32;
  ConvDescs descs;
  descs.src = ActivationDesc(g.batch, g.channels, g.input, g.channels_first, f32);
  descs.weights = ConvWeightDesc(shape.out_channels, g.channels / shape.groups, g.window,
                                 shape.groups, g.channels_first, f32);
  descs.dst = ActivationDesc(g.batch, shape.out_channels, g.output, g.channels_first, f32);
  descs.strides = g.strides;
  for (int64_t dilation : g.dilations) { descs.dilates.push_back(dilation - 1); }
  descs.padding_before = g.padding_before;
  descs.padding_after = g.padding_after;
  return descs;
}

dnnl::convolution_forward::primitive_desc ForwardPrimitiveDesc(const ConvDescs& d,
                                                               dnnl::algorithm algorithm) {
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, algorithm, d.src,
                                       d.weights, d.dst, d.strides, d.dilates, d.padding_before,
                                       d.padding_after);
  return dnnl::convolution_forward::primitive_desc(desc, UserScratchpadAttr(), OneDnnCpuEngine());
}

// One pass's primitive descriptor, before the primitive (JIT code) is created: the layouts it
// chose for the activation, weight and output arguments, and its implementation's name.
struct ConvChoice {
  dnnl::memory::desc src, weights, dst, scratchpad;
  std::string implementation;
  std::function<dnnl::primitive()> create;
};

// `algorithm`: convolution_direct, or convolution_auto (oneDNN may then pick Winograd).
ConvChoice DescribeConv(ConvPass pass, const ConvDescs& d, dnnl::algorithm algorithm) {
  auto forward = ForwardPrimitiveDesc(d, algorithm);
  ConvChoice choice;
  if (pass == ConvPass::kForward) {
    choice = {forward.src_desc(), forward.weights_desc(), forward.dst_desc(),
              forward.scratchpad_desc(), forward.impl_info_str(), nullptr};
    choice.create = [forward] { return dnnl::convolution_forward(forward); };
  } else if (pass == ConvPass::kBackwardData) {
    dnnl::convolution_backward_data::desc desc(algorithm, d.src, d.weights, d.dst, d.strides,
                                               d.dilates, d.padding_before, d.padding_after);
    dnnl::convolution_backward_data::primitive_desc pd(desc, UserScratchpadAttr(),
                                                       OneDnnCpuEngine(), forward);
    choice = {pd.diff_src_desc(), pd.weights_desc(), pd.diff_dst_desc(), pd.scratchpad_desc(),
              pd.impl_info_str(), nullptr};
    choice.create = [pd] { return dnnl::convolution_backward_data(pd); };
  } else {
    dnnl::convolution_backward_weights::desc desc(algorithm, d.src, d.weights, d.dst, d.strides,
                                                  d.dilates, d.padding_before, d.padding_after);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, UserScratchpadAttr(),
                                                          OneDnnCpuEngine(), forward);
    choice = {pd.src_desc(), pd.diff_weights_desc(), pd.diff_dst_desc(), pd.scratchpad_desc(),
              pd.impl_info_str(), nullptr};
    choice.create = [pd] { return dnnl::convolution_backward_weights(pd); };
  }
  return choice;
}

// Which layouts the primitives run on: "plain" (the framework's), "blocked" (oneDNN's choice,
// with reorders around the primitive) or "auto" (default): the first of plain, plain activations
// with oneDNN's weight layout, and blocked on which oneDNN has a direct JIT kernel (not its
// im2col + GEMM fallback nor its reference loops), or blocked when it runs Winograd there
// (ConvMayUseWinograd; docs/kernels.md measures them). ONEFLOW_ONEDNN_CONV_LAYOUT overrides
// it, for benchmarks.
std::string ConvLayoutMode() {
  static const std::string mode = [] {
    const char* value = std::getenv("ONEFLOW_ONEDNN_CONV_LAYOUT");
    return std::string(value == nullptr ? "auto" : value);
  }();
  return mode;
}

// Whether oneDNN may choose Winograd F(4x4, 3x3) (convolution_auto on its blocked layouts; it
// takes it for 3x3 stride-1 convolutions with channel counts that are multiples of 16 and a batch
// over 8). Winograd runs ResNet's layers about 2x faster, but its rounding error is about 3x that
// of the direct algorithm (max |error| 1.2e-4 against 3.8e-5 on outputs of magnitude 80), so it
// is taken only for convolutions of at least kWinogradMinFlops, where it saves milliseconds per
// pass; smaller ones, which save a fraction of a millisecond, stay direct (docs/kernels.md).
// ONEFLOW_ONEDNN_CONV_ALGORITHM=direct turns it off.
constexpr double kWinogradMinFlops = 256e6;

bool ConvMayUseWinograd(const ConvDescs& d) {
  static const bool allowed = [] {
    const char* value = std::getenv("ONEFLOW_ONEDNN_CONV_ALGORITHM");
    return value == nullptr || std::string(value) != "direct";
  }();
  auto elements = [](const dnnl::memory::dims& dims) {
    double count = 1;
    for (int64_t dim : dims) { count *= static_cast<double>(dim); }
    return count;
  };
  const double out_channels = static_cast<double>(d.dst.dims()[1]);
  const double flops = 2 * elements(d.dst.dims()) * elements(d.weights.dims()) / out_channels;
  return allowed && flops >= kWinogradMinFlops;
}

bool IsWinograd(const ConvChoice& choice) {
  return choice.implementation.find("wino") != std::string::npos;
}

// Whether a choice runs one of oneDNN's JIT kernels written for its layouts, not the im2col +
// GEMM fallback ("gemm:jit") or the reference loops ("ref:any", which NHWC activations with
// OHWI weights got: 1000x slower).
bool IsDirectJit(const ConvChoice& choice) {
  return choice.implementation.find("gemm") == std::string::npos &&
         choice.implementation.find("ref") == std::string::npos;
}

// The layouts and algorithm a pass runs with (see ConvLayoutMode and ConvMayUseWinograd).
ConvChoice ChooseConv(ConvPass pass, const ConvDescs& plain) {
  const auto direct = dnnl::algorithm::convolution_direct;
  auto any_of = [](const dnnl::memory::desc& desc) {
    return dnnl::memory::desc(desc.dims(), desc.data_type(), dnnl::memory::format_tag::any);
  };
  // Candidate layouts, fewest reorders first: the framework's own; its activations with
  // oneDNN's weight layout (a small reorder; NHWC runs direct this way); oneDNN's for all.
  ConvDescs any_weights = plain;
  any_weights.weights = any_of(plain.weights);
  ConvDescs any = any_weights;
  any.src = any_of(plain.src);
  any.dst = any_of(plain.dst);
  const std::string mode = ConvLayoutMode();
  if (mode == "plain") { return DescribeConv(pass, plain, direct); }
  if (ConvMayUseWinograd(plain)) {
    // Winograd runs on oneDNN's blocked activations only.
    ConvChoice automatic = DescribeConv(pass, any, dnnl::algorithm::convolution_auto);
    if (IsWinograd(automatic)) { return automatic; }
  }
  if (mode == "blocked") { return DescribeConv(pass, any, direct); }
  for (const ConvDescs* descs : {&plain, static_cast<const ConvDescs*>(&any_weights)}) {
    ConvChoice choice = DescribeConv(pass, *descs, direct);
    if (IsDirectJit(choice)) { return choice; }
  }
  return DescribeConv(pass, any, direct);
}

OneDnnReorderedPrimitive BuildConvPrimitive(ConvPass pass, const ConvDescs& plain) {
  ConvChoice chosen = ChooseConv(pass, plain);
  const bool forward = pass == ConvPass::kForward;
  const bool backward_data = pass == ConvPass::kBackwardData;
  return OneDnnReorderedPrimitive(
      chosen.create(), chosen.scratchpad,
      {{forward         ? DNNL_ARG_SRC
        : backward_data ? DNNL_ARG_DIFF_SRC
                        : DNNL_ARG_SRC,
        !backward_data, plain.src, chosen.src},
       {pass == ConvPass::kBackwardFilter ? DNNL_ARG_DIFF_WEIGHTS : DNNL_ARG_WEIGHTS,
        pass != ConvPass::kBackwardFilter, plain.weights, chosen.weights},
       {forward ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST, !forward, plain.dst, chosen.dst}});
}

const char* ConvPassName(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return "convolution forward";
    case ConvPass::kBackwardData: return "convolution backward data";
    default: return "convolution backward weights";
  }
}

// The float32 kernel of one pass. Arguments (role -> oneDNN argument):
//   forward:          activation -> SRC, weight -> WEIGHTS, result (out) -> DST
//   backward data:    output -> DIFF_DST, weight -> WEIGHTS, result -> DIFF_SRC
//   backward weights: activation (x) -> SRC, output -> DIFF_DST, result -> DIFF_WEIGHTS
template <ConvPass kPass>
class OneDnnConvKernel final : public Kernel {
 public:
  explicit OneDnnConvKernel(const KernelInitContext& ctx)
      : arguments_(ArgumentsOf(kPass, ctx.conf().op_type())),
        shape_(MakeConvShape(ctx, ctx.conf().op_type(), ctx.Desc(arguments_.activation).shape,
                             ctx.Desc(arguments_.weight).shape)) {
    for (const std::string& argument :
         {arguments_.activation, arguments_.weight, arguments_.output}) {
      if (ctx.Desc(argument).shape.elem_count() == 0) { empty_ = true; }
    }
    output_count_ = ctx.Desc(arguments_.result).shape.elem_count();
  }

  void Forward(KernelContext& ctx) override {
    float* output = ctx.Output(arguments_.result).mut_data<float>();
    if (empty_) {
      std::fill(output, output + output_count_, 0.0f);
      return;
    }
    if (!primitive_.built()) {
      try {
        primitive_ = BuildConvPrimitive(kPass, MakeConvDescs(shape_));
      } catch (const dnnl::error& error) {
        ThrowOneDnnError(ConvPassName(kPass), error);
      }
    }
    CpuDeviceContext& device = ctx.cpu_device();
    if (kPass == ConvPass::kForward) {
      primitive_.Run(device, {{DNNL_ARG_SRC, ctx.Input(arguments_.activation).data<float>()},
                              {DNNL_ARG_WEIGHTS, ctx.Input(arguments_.weight).data<float>()},
                              {DNNL_ARG_DST, output}});
    } else if (kPass == ConvPass::kBackwardData) {
      primitive_.Run(device, {{DNNL_ARG_DIFF_DST, ctx.Input(arguments_.output).data<float>()},
                              {DNNL_ARG_WEIGHTS, ctx.Input(arguments_.weight).data<float>()},
                              {DNNL_ARG_DIFF_SRC, output}});
    } else {
      primitive_.Run(device, {{DNNL_ARG_SRC, ctx.Input(arguments_.activation).data<float>()},
                              {DNNL_ARG_DIFF_DST, ctx.Input(arguments_.output).data<float>()},
                              {DNNL_ARG_DIFF_WEIGHTS, output}});
    }
  }

 private:
  ConvArguments arguments_;
  ConvShape shape_;
  bool empty_ = false;
  int64_t output_count_ = 0;
  OneDnnReorderedPrimitive primitive_;
};

using OneDnnConvForwardKernel = OneDnnConvKernel<ConvPass::kForward>;
using OneDnnConvDataGradKernel = OneDnnConvKernel<ConvPass::kBackwardData>;
using OneDnnConvFilterGradKernel = OneDnnConvKernel<ConvPass::kBackwardFilter>;

// ---------------------------------------------------------------------------------------------
// float64: im2col + GEMM. The geometry is widened to three spatial axes (leading axes of size 1).

struct Conv3D {
  bool channels_first;
  int64_t batch, channels, out_channels, groups;
  std::array<int64_t, 3> input, window, strides, dilations, padding, output;
  int64_t InputSize() const { return input[0] * input[1] * input[2]; }
  int64_t OutputSize() const { return output[0] * output[1] * output[2]; }
  int64_t WindowSize() const { return window[0] * window[1] * window[2]; }
  int64_t GroupIn() const { return channels / groups; }
  int64_t GroupOut() const { return out_channels / groups; }
};

Conv3D WidenTo3D(const ConvShape& shape) {
  const WindowGeometry g = shape.geometry.WidenedTo3D();
  Conv3D c;
  c.channels_first = g.channels_first;
  c.batch = g.batch;
  c.channels = g.channels;
  c.out_channels = shape.out_channels;
  c.groups = shape.groups;
  std::copy_n(g.input.begin(), 3, c.input.begin());
  std::copy_n(g.window.begin(), 3, c.window.begin());
  std::copy_n(g.strides.begin(), 3, c.strides.begin());
  std::copy_n(g.dilations.begin(), 3, c.dilations.begin());
  std::copy_n(g.padding_before.begin(), 3, c.padding.begin());
  std::copy_n(g.output.begin(), 3, c.output.begin());
  return c;
}

// Visits every (column row, output position) pair of batch element n's group `group`: calls
// fn(column_index, input_index) where input_index < 0 marks padding. Column layout:
// channels_first (channel, window..., output...), channels_last (output..., window..., channel).
template <typename Fn>
void ForEachColumnEntry(const Conv3D& c, int64_t n, int64_t group, Fn fn) {
  const int64_t group_in = c.GroupIn();
  const int64_t window_size = c.WindowSize();
  const int64_t output_size = c.OutputSize();
  for (int64_t ci = 0; ci < group_in; ++ci) {
    const int64_t channel = group * group_in + ci;
    for (int64_t kz = 0; kz < c.window[0]; ++kz) {
      for (int64_t ky = 0; ky < c.window[1]; ++ky) {
        for (int64_t kx = 0; kx < c.window[2]; ++kx) {
          const int64_t k = (kz * c.window[1] + ky) * c.window[2] + kx;
          for (int64_t oz = 0; oz < c.output[0]; ++oz) {
            const int64_t iz = oz * c.strides[0] - c.padding[0] + kz * c.dilations[0];
            for (int64_t oy = 0; oy < c.output[1]; ++oy) {
              const int64_t iy = oy * c.strides[1] - c.padding[1] + ky * c.dilations[1];
              for (int64_t ox = 0; ox < c.output[2]; ++ox) {
                const int64_t ix = ox * c.strides[2] - c.padding[2] + kx * c.dilations[2];
                const int64_t o = (oz * c.output[1] + oy) * c.output[2] + ox;
                const bool inside = iz >= 0 && iz < c.input[0] && iy >= 0 && iy < c.input[1] &&
                                    ix >= 0 && ix < c.input[2];
                const int64_t spatial = (iz * c.input[1] + iy) * c.input[2] + ix;
                int64_t input_index = -1;
                int64_t column_index;
                if (c.channels_first) {
                  if (inside) { input_index = (n * c.channels + channel) * c.InputSize() + spatial; }
                  column_index = (ci * window_size + k) * output_size + o;
                } else {
                  if (inside) { input_index = (n * c.InputSize() + spatial) * c.channels + channel; }
                  column_index = (o * window_size + k) * group_in + ci;
                }
                fn(column_index, input_index);
              }
            }
          }
        }
      }
    }
  }
}

void Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

class GemmConvKernelBase : public Kernel {
 protected:
  explicit GemmConvKernelBase(const ConvShape& shape)
      : c_(WidenTo3D(shape)),
        columns_(static_cast<size_t>(c_.GroupIn() * c_.WindowSize() * c_.OutputSize())) {}

  void Im2Col(const double* x, int64_t n, int64_t group) {
    double* columns = columns_.data();
    ForEachColumnEntry(c_, n, group, [&](int64_t column, int64_t input) {
      columns[column] = input >= 0 ? x[input] : 0.0;
    });
  }
  void Col2Im(double* dx, int64_t n, int64_t group) const {
    const double* columns = columns_.data();
    ForEachColumnEntry(c_, n, group, [&](int64_t column, int64_t input) {
      if (input >= 0) { dx[input] += columns[column]; }
    });
  }

  Conv3D c_;
  std::vector<double> columns_;
};

class GemmConvForwardKernel final : public GemmConvKernelBase {
 public:
  explicit GemmConvForwardKernel(const KernelInitContext& ctx)
      : GemmConvKernelBase(MakeConvShape(ctx, ctx.conf().op_type(), ctx.Desc("in").shape,
                                         ctx.Desc("weight").shape)) {}

  void Forward(KernelContext& ctx) override {
    const double* x = ctx.Input("in").data<double>();
    const double* weight = ctx.Input("weight").data<double>();
    double* out = ctx.Output("out").mut_data<double>();
    const int64_t og = c_.GroupOut(), rows = c_.GroupIn() * c_.WindowSize(), os = c_.OutputSize();
    if (rows == 0) {
      std::fill(out, out + c_.batch * c_.out_channels * os, 0.0);
      return;
    }
    for (int64_t n = 0; n < c_.batch; ++n) {
      for (int64_t g = 0; g < c_.groups; ++g) {
        Im2Col(x, n, g);
        const double* weight_g = weight + g * og * rows;
        if (c_.channels_first) {
          Gemm(false, false, og, os, rows, weight_g, rows, columns_.data(), os, 0.0,
               out + (n * c_.out_channels + g * og) * os, os);
        } else {
          Gemm(false, true, os, og, rows, columns_.data(), rows, weight_g, rows, 0.0,
               out + n * os * c_.out_channels + g * og, c_.out_channels);
        }
      }
    }
  }
};

class GemmConvDataGradKernel final : public GemmConvKernelBase {
 public:
  explicit GemmConvDataGradKernel(const KernelInitContext& ctx)
      : GemmConvDataGradKernel(ctx, ArgumentsOf(ConvPass::kBackwardData, ctx.conf().op_type())) {}

  void Forward(KernelContext& ctx) override {
    const double* dy = ctx.Input(arguments_.output).data<double>();
    const double* weight = ctx.Input(arguments_.weight).data<double>();
    double* dx = ctx.Output(arguments_.result).mut_data<double>();
    std::fill(dx, dx + c_.batch * c_.channels * c_.InputSize(), 0.0);
    const int64_t og = c_.GroupOut(), rows = c_.GroupIn() * c_.WindowSize(), os = c_.OutputSize();
    if (rows == 0 || og == 0) { return; }
    for (int64_t n = 0; n < c_.batch; ++n) {
      for (int64_t g = 0; g < c_.groups; ++g) {
        const double* weight_g = weight + g * og * rows;
        if (c_.channels_first) {
          Gemm(true, false, rows, os, og, weight_g, rows, dy + (n * c_.out_channels + g * og) * os,
               os, 0.0, columns_.data(), os);
        } else {
          Gemm(false, false, os, rows, og, dy + n * os * c_.out_channels + g * og,
               c_.out_channels, weight_g, rows, 0.0, columns_.data(), rows);
        }
        Col2Im(dx, n, g);
      }
    }
  }

 private:
  GemmConvDataGradKernel(const KernelInitContext& ctx, ConvArguments arguments)
      : GemmConvKernelBase(MakeConvShape(ctx, ctx.conf().op_type(),
                                         ctx.Desc(arguments.activation).shape,
                                         ctx.Desc(arguments.weight).shape)),
        arguments_(std::move(arguments)) {}

  ConvArguments arguments_;
};

class GemmConvFilterGradKernel final : public GemmConvKernelBase {
 public:
  explicit GemmConvFilterGradKernel(const KernelInitContext& ctx)
      : GemmConvKernelBase(MakeConvShape(ctx, "conv_filter_grad", ctx.Desc("x").shape,
                                         ctx.Desc("filter_diff").shape)) {}

  void Forward(KernelContext& ctx) override {
    const double* dy = ctx.Input("dy").data<double>();
    const double* x = ctx.Input("x").data<double>();
    double* diff = ctx.Output("filter_diff").mut_data<double>();
    const int64_t og = c_.GroupOut(), rows = c_.GroupIn() * c_.WindowSize(), os = c_.OutputSize();
    std::fill(diff, diff + c_.out_channels * rows, 0.0);
    if (rows == 0 || og == 0) { return; }
    for (int64_t n = 0; n < c_.batch; ++n) {
      for (int64_t g = 0; g < c_.groups; ++g) {
        Im2Col(x, n, g);
        double* diff_g = diff + g * og * rows;
        if (c_.channels_first) {
          Gemm(false, true, og, rows, os, dy + (n * c_.out_channels + g * og) * os, os,
               columns_.data(), os, 1.0, diff_g, rows);
        } else {
          Gemm(true, false, og, rows, os, dy + n * os * c_.out_channels + g * og,
               c_.out_channels, columns_.data(), rows, 1.0, diff_g, rows);
        }
      }
    }
  }
};

}  // namespace

#define REGISTER_CONV_KERNELS(op_type, FloatKernel, DoubleKernel) \
  REGISTER_KERNEL(op_type, "cpu", kFloat, FloatKernel);           \
  REGISTER_KERNEL(op_type, "cpu", kDouble, DoubleKernel)

REGISTER_CONV_KERNELS("conv1d", OneDnnConvForwardKernel, GemmConvForwardKernel);
REGISTER_CONV_KERNELS("conv2d", OneDnnConvForwardKernel, GemmConvForwardKernel);
REGISTER_CONV_KERNELS("conv3d", OneDnnConvForwardKernel, GemmConvForwardKernel);
REGISTER_CONV_KERNELS("conv_data_grad", OneDnnConvDataGradKernel, GemmConvDataGradKernel);
REGISTER_CONV_KERNELS("conv_filter_grad", OneDnnConvFilterGradKernel, GemmConvFilterGradKernel);
REGISTER_CONV_KERNELS("deconv2d", OneDnnConvDataGradKernel, GemmConvDataGradKernel);

}  // namespace oneflow
