// GPU upsample / upsample_grad, deconv2d (and conv_data_grad with uneven padding), lamb_update and
// lars_update against the CPU kernels (see cuda_kernel_test_util.h). CUDA builds only; every
// test skips without a GPU.

#ifdef ONEFLOW_WITH_CUDA

#include "tests/cpp/kernels/cuda_kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

// Nearest and bilinear, both layouts, integer and fractional scales, a 1 x 1 image, an empty
// batch. In every case each input row and column is read by some output: the CPU gradient kernel
// (cpu/upsample.cpp) reads past its tap tables for an input row (or, channels_last, column) that
// no output reads ("nearest" with scale * size just above an integer, e.g. 10 x 1.01), where
// the GPU kernel gives a zero gradient.
TEST(CudaUpdateKernels, Upsample) {
  SKIP_WITHOUT_GPU();
  struct Case {
    Shape x;
    std::string data_format, interpolation;
    double height_scale, width_scale;
  };
  const std::vector<Case> cases = {
      {Shape({2, 3, 5, 7}), "channels_first", "nearest", 2.0, 3.0},
      {Shape({2, 3, 5, 7}), "channels_first", "bilinear", 2.0, 2.0},
      {Shape({2, 3, 5, 4}), "channels_first", "nearest", 1.5, 2.5},
      {Shape({2, 4, 6, 3}), "channels_last", "bilinear", 1.5, 2.5},
      {Shape({1, 2, 3, 4}), "channels_last", "nearest", 3.0, 1.5},
      {Shape({1, 2, 3, 5}), "channels_first", "bilinear", 4.0, 1.0},
      {Shape({1, 1, 1, 1}), "channels_first", "bilinear", 3.0, 2.0},
      {Shape({0, 3, 4, 4}), "channels_last", "bilinear", 2.0, 2.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.ToString() + " " + c.data_format + " " + c.interpolation + " " +
                 std::to_string(c.height_scale) + " x " + std::to_string(c.width_scale));
    const std::map<std::string, AttrValue> attrs = {
        MakeAttr("height_scale", c.height_scale), MakeAttr("width_scale", c.width_scale),
        MakeAttr<std::string>("data_format", c.data_format),
        MakeAttr<std::string>("interpolation", c.interpolation)};
    const OperatorConf forward = MakeOpConf("upsample", {{"x", 1}}, attrs);
    const OperatorConf grad = MakeOpConf("upsample_grad", {{"dy", 1}, {"x", 1}}, attrs);
    const Shape y = Infer(forward, {{"x_0", BlobDesc{c.x, kFloat}}}).at("y_0").shape;
    CompareWithCpu(forward, {{"x_0", Random<float>(c.x, 1)}});
    CompareWithCpu(forward, {{"x_0", Random<double>(c.x, 2)}}, {1e-12, 1e-12});
    CompareHalfWithCpu(forward, {{"x_0", Random<float>(c.x, 3)}});
    CompareWithCpu(grad, {{"dy_0", Random<float>(y, 4)}, {"x_0", Random<float>(c.x, 5)}},
                   {1e-5, 1e-5});
    CompareWithCpu(grad, {{"dy_0", Random<double>(y, 6)}, {"x_0", Random<double>(c.x, 7)}},
                   {1e-12, 1e-12});
    CompareHalfWithCpu(grad, {{"dy_0", Random<float>(y, 8)}, {"x_0", Random<float>(c.x, 9)}},
                       {1e-2, 1e-2});
  }
}

// deconv2d: strides, dilations, groups, output_padding, both layouts, even and uneven padding
// (the latter through the wide buffer and crop); conv_data_grad with "same_upper" padding (uneven
// when the total is odd) takes the same path.
TEST(CudaUpdateKernels, Deconv2d) {
  SKIP_WITHOUT_GPU();
  struct Case {
    Shape in, weight;
    std::string data_format;
    std::vector<int64_t> strides, dilations, padding_before, padding_after, output_padding;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {Shape({2, 4, 5, 6}),
       Shape({4, 3, 3, 3}),
       "channels_first",
       {2, 2},
       {1, 1},
       {0, 0},
       {0, 0},
       {1, 0},
       1},
      {Shape({2, 4, 5, 5}),
       Shape({4, 2, 3, 3}),
       "channels_first",
       {2, 1},
       {1, 2},
       {1, 1},
       {1, 1},
       {1, 0},
       2},
      {Shape({2, 5, 6, 3}),
       Shape({3, 3, 3, 4}),
       "channels_last",
       {2, 2},
       {1, 1},
       {0, 1},
       {1, 0},
       {1, 1},
       1},
      {Shape({1, 3, 4, 5}),
       Shape({3, 2, 4, 3}),
       "channels_first",
       {2, 2},
       {1, 1},
       {2, 0},
       {0, 1},
       {0, 1},
       1},
      {Shape({2, 4, 4, 6}),
       Shape({6, 3, 3, 3}),
       "channels_last",
       {3, 1},
       {1, 1},
       {1, 0},
       {2, 1},
       {2, 0},
       3},
      {Shape({0, 4, 5, 6}),
       Shape({4, 3, 3, 3}),
       "channels_first",
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {0, 0},
       1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in.ToString() + " * " + c.weight.ToString() + " " + c.data_format);
    const OperatorConf deconv = MakeOpConf(
        "deconv2d", {{"in", 1}, {"weight", 1}},
        {MakeAttr<std::string>("data_format", c.data_format), MakeAttr("strides", c.strides),
         MakeAttr("dilation_rate", c.dilations), MakeAttr<std::string>("padding", "customized"),
         MakeAttr("padding_before", c.padding_before), MakeAttr("padding_after", c.padding_after),
         MakeAttr("output_padding", c.output_padding), MakeAttr("groups", c.groups)});
    const std::map<std::string, HostTensor> inputs = {{"in_0", Random<float>(c.in, 1)},
                                                      {"weight_0", Random<float>(c.weight, 2)}};
    CompareWithCpu(deconv, inputs, {1e-5, 1e-5});
    CompareWithCpu(deconv,
                   {{"in_0", Random<double>(c.in, 3)}, {"weight_0", Random<double>(c.weight, 4)}},
                   {1e-12, 1e-12});
    CompareHalfWithCpu(deconv, inputs, {1e-2, 1e-2});
  }
  struct DataGradCase {
    Shape x, weight;
    std::string data_format;
    std::vector<int64_t> strides;
  };
  for (const DataGradCase& c : std::vector<DataGradCase>{
           {Shape({2, 3, 8, 7}), Shape({4, 3, 2, 2}), "channels_first", {1, 1}},
           {Shape({2, 9, 8, 3}), Shape({4, 2, 3, 3}), "channels_last", {2, 2}},
       }) {
    SCOPED_TRACE(c.x.ToString() + " * " + c.weight.ToString() + " same_upper");
    std::map<std::string, AttrValue> attrs = {MakeAttr<std::string>("data_format", c.data_format),
                                              MakeAttr("strides", c.strides),
                                              MakeAttr<std::string>("padding", "same_upper")};
    const OperatorConf forward = MakeOpConf("conv2d", {{"in", 1}, {"weight", 1}}, attrs);
    const Shape out =
        Infer(forward, {{"in_0", BlobDesc{c.x, kFloat}}, {"weight_0", BlobDesc{c.weight, kFloat}}})
            .at("out_0")
            .shape;
    const bool channels_first = c.data_format == "channels_first";
    attrs["num_spatial_dims"] = ToAttrValue<int64_t>(2);
    attrs["kernel_size"] = ToAttrValue<std::vector<int64_t>>(
        {c.weight.At(channels_first ? 2 : 1), c.weight.At(channels_first ? 3 : 2)});
    const OperatorConf data_grad =
        MakeOpConf("conv_data_grad", {{"dy", 1}, {"weight", 1}, {"x_like", 1}}, attrs);
    CompareWithCpu(data_grad,
                   {{"dy_0", Random<float>(out, 5)},
                    {"weight_0", Random<float>(c.weight, 6)},
                    {"x_like_0", Random<float>(c.x, 7)}},
                   {1e-5, 1e-5});
    CompareWithCpu(data_grad,
                   {{"dy_0", Random<double>(out, 8)},
                    {"weight_0", Random<double>(c.weight, 9)},
                    {"x_like_0", Random<double>(c.x, 10)}},
                   {1e-12, 1e-12});
  }
}

// The common attributes of the update ops (gradient scale, regularization, weight decay).
std::map<std::string, AttrValue> UpdateAttrs(std::map<std::string, AttrValue> extra) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, double>>{
           {"scale", 2.0}, {"l1", 0.01}, {"l2", 0.02}, {"weight_decay", 0.5}}) {
    extra[name] = ToAttrValue<double>(value);
  }
  return extra;
}

// LAMB and LARS on one block, on more blocks than the partial sums have (grid-stride), with and
// without scale_by_tensor, at train_step 0 (LARS leaves weight decay out of its denominator) and
// later, with a skipped step, a zero model (LAMB's trust ratio 1, LARS's local rate 0) and an
// empty one.
TEST(CudaUpdateKernels, LambAndLars) {
  SKIP_WITHOUT_GPU();
  const HostTensor learning_rate = MakeTensor<float>(Shape({1}), {0.1f});
  const OperatorConf lamb = MakeOpConf(
      "lamb_update",
      {{"model", 1},
       {"model_diff", 1},
       {"m", 1},
       {"v", 1},
       {"learning_rate", 1},
       {"train_step", 1},
       {"scale_by_tensor", 1}},
      UpdateAttrs({MakeAttr("beta1", 0.8), MakeAttr("beta2", 0.95), MakeAttr("epsilon", 1e-6)}));
  const OperatorConf lamb_skip = MakeOpConf("lamb_update", {{"model", 1},
                                                            {"model_diff", 1},
                                                            {"m", 1},
                                                            {"v", 1},
                                                            {"learning_rate", 1},
                                                            {"train_step", 1},
                                                            {"skip_if", 1}});
  const OperatorConf lars = MakeOpConf(
      "lars_update",
      {{"model", 1}, {"model_diff", 1}, {"momentum", 1}, {"learning_rate", 1}, {"train_step", 1}},
      UpdateAttrs({MakeAttr("momentum_beta", 0.8), MakeAttr("epsilon", 1e-6),
                   MakeAttr("lars_coefficient", 0.01)}));
  const OperatorConf lars_scaled = MakeOpConf("lars_update",
                                              {{"model", 1},
                                               {"model_diff", 1},
                                               {"momentum", 1},
                                               {"learning_rate", 1},
                                               {"train_step", 1},
                                               {"scale_by_tensor", 1},
                                               {"skip_if", 1}},
                                              UpdateAttrs({}));
  for (const Shape& shape : {Shape({1}), Shape({7, 11}), Shape({1001}), Shape({300007})}) {
    SCOPED_TRACE(shape.ToString());
    for (int64_t step : {0, 4}) {
      SCOPED_TRACE("train_step " + std::to_string(step));
      const HostTensor train_step = MakeTensor<int64_t>(Shape({1}), {step});
      std::map<std::string, HostTensor> lamb_inputs = {
          {"model_0", Random<float>(shape, 1)},
          {"model_diff_0", Random<float>(shape, 2)},
          {"m_0", Random<float>(shape, 3)},
          {"v_0", Random<float>(shape, 4, 0, 1)},
          {"learning_rate_0", learning_rate},
          {"train_step_0", train_step},
          {"scale_by_tensor_0", MakeTensor<float>(Shape({1}), {0.25f})}};
      CompareWithCpu(lamb, lamb_inputs, {1e-5, 1e-5});
      CompareHalfWithCpu(lamb, lamb_inputs, {2e-3, 5e-3},
                         {"model_0", "model_diff_0", "m_0", "v_0"});
      CompareWithCpu(lamb,
                     {{"model_0", Random<double>(shape, 5)},
                      {"model_diff_0", Random<double>(shape, 6)},
                      {"m_0", Random<double>(shape, 7)},
                      {"v_0", Random<double>(shape, 8, 0, 1)},
                      {"learning_rate_0", learning_rate},
                      {"train_step_0", train_step},
                      {"scale_by_tensor_0", MakeTensor<float>(Shape({1}), {0.25f})}},
                     {1e-12, 1e-12});
      std::map<std::string, HostTensor> lars_inputs = {{"model_0", Random<float>(shape, 9)},
                                                       {"model_diff_0", Random<float>(shape, 10)},
                                                       {"momentum_0", Random<float>(shape, 11)},
                                                       {"learning_rate_0", learning_rate},
                                                       {"train_step_0", train_step}};
      CompareWithCpu(lars, lars_inputs, {1e-5, 1e-5});
      CompareHalfWithCpu(lars, lars_inputs, {2e-3, 5e-3},
                         {"model_0", "model_diff_0", "momentum_0"});
      CompareWithCpu(lars,
                     {{"model_0", Random<double>(shape, 12)},
                      {"model_diff_0", Random<double>(shape, 13)},
                      {"momentum_0", Random<double>(shape, 14)},
                      {"learning_rate_0", learning_rate},
                      {"train_step_0", train_step}},
                     {1e-12, 1e-12});
      for (int64_t skip : {0, 1}) {
        SCOPED_TRACE("skip_if " + std::to_string(skip));
        const HostTensor skip_if = MakeTensor<int64_t>(Shape({1}), {skip});
        CompareWithCpu(lamb_skip,
                       {{"model_0", Random<float>(shape, 15)},
                        {"model_diff_0", Random<float>(shape, 16)},
                        {"m_0", Random<float>(shape, 17)},
                        {"v_0", Random<float>(shape, 18, 0, 1)},
                        {"learning_rate_0", learning_rate},
                        {"train_step_0", train_step},
                        {"skip_if_0", skip_if}},
                       {1e-5, 1e-5});
        CompareWithCpu(lars_scaled,
                       {{"model_0", Random<float>(shape, 19)},
                        {"model_diff_0", Random<float>(shape, 20)},
                        {"momentum_0", Random<float>(shape, 21)},
                        {"learning_rate_0", learning_rate},
                        {"train_step_0", train_step},
                        {"scale_by_tensor_0", MakeTensor<float>(Shape({1}), {0.5f})},
                        {"skip_if_0", skip_if}},
                       {1e-5, 1e-5});
      }
    }
  }
  // A zero model: LAMB's trust ratio is 1, LARS's local learning rate 0 (only the momentum
  // decays).
  const Shape shape({513});
  const HostTensor zeros = MakeTensor<float>(shape, std::vector<float>(shape.elem_count(), 0.0f));
  const HostTensor train_step = MakeTensor<int64_t>(Shape({1}), {3});
  CompareWithCpu(lamb,
                 {{"model_0", zeros},
                  {"model_diff_0", Random<float>(shape, 22)},
                  {"m_0", Random<float>(shape, 23)},
                  {"v_0", Random<float>(shape, 24, 0, 1)},
                  {"learning_rate_0", learning_rate},
                  {"train_step_0", train_step},
                  {"scale_by_tensor_0", MakeTensor<float>(Shape({1}), {1.0f})}},
                 {1e-5, 1e-5});
  CompareWithCpu(lars,
                 {{"model_0", zeros},
                  {"model_diff_0", Random<float>(shape, 25)},
                  {"momentum_0", Random<float>(shape, 26)},
                  {"learning_rate_0", learning_rate},
                  {"train_step_0", train_step}},
                 {1e-5, 1e-5});
  // A zero gradient and zero moments (no regularization): LAMB's direction is zero, so its
  // trust ratio is 1.
  CompareWithCpu(lamb_skip,
                 {{"model_0", Random<float>(shape, 27)},
                  {"model_diff_0", zeros},
                  {"m_0", zeros},
                  {"v_0", zeros},
                  {"learning_rate_0", learning_rate},
                  {"train_step_0", train_step},
                  {"skip_if_0", MakeTensor<int64_t>(Shape({1}), {0})}},
                 {1e-5, 1e-5});
  const Shape empty({0});
  const HostTensor none = MakeTensor<float>(empty, {});
  CompareWithCpu(lamb, {{"model_0", none},
                        {"model_diff_0", none},
                        {"m_0", none},
                        {"v_0", none},
                        {"learning_rate_0", learning_rate},
                        {"train_step_0", train_step},
                        {"scale_by_tensor_0", MakeTensor<float>(Shape({1}), {1.0f})}});
  CompareWithCpu(lars, {{"model_0", none},
                        {"model_diff_0", none},
                        {"momentum_0", none},
                        {"learning_rate_0", learning_rate},
                        {"train_step_0", train_step}});
}

}  // namespace
}  // namespace test
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
