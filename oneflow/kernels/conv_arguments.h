#pragma once
// The three passes of a convolution and the blobs each kernel of the conv family reads and
// writes, by role, for the CPU (cpu/conv.cpp, oneDNN) and GPU (cuda/conv.cu, cuDNN) kernels alike.
// conv1d/2d/3d, conv_data_grad and conv_filter_grad name the blobs after the convolution;
// deconv2d is the backward-data pass of the convolution that maps its output back to its input,
// with its weight as that convolution's weight.

#include <string>

namespace oneflow {

enum class ConvPass { kForward, kBackwardData, kBackwardFilter };

struct ConvArguments {
  std::string activation;  // has the convolution input's shape (in, x_like, x; deconv2d: out)
  std::string weight;      // has the weight's shape (weight, filter_diff)
  std::string output;      // the convolution's output or its gradient (out, dy; deconv2d: in)
  std::string result;      // the kernel's output
};

inline ConvArguments ArgumentsOf(ConvPass pass, const std::string& op_type) {
  if (op_type == "deconv2d") { return {"out", "weight", "in", "out"}; }
  switch (pass) {
    case ConvPass::kForward:
      return {"in", "weight", "out", "out"};
    case ConvPass::kBackwardData:
      return {"x_like", "weight", "dy", "dx"};
    default:
      return {"x", "filter_diff", "dy", "filter_diff"};
  }
}

}  // namespace oneflow
