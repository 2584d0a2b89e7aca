// GPU kernels against the CPU kernels (see cuda_kernel_test_util.h). CUDA
// builds only; every test skips without a GPU.

#ifdef ONEFLOW_WITH_CUDA

#include "tests/cpp/kernels/cuda_kernel_test_util.h"

namespace oneflow {
namespace test {
namespace {

TEST(CudaKernels, Cast) {
  SKIP_WITHOUT_GPU();
  const Shape shape({3, 37});
  for (DataType to : {kFloat, kDouble, kInt8, kInt32, kInt64, kFloat16}) {
    const OperatorConf conf = MakeOpConf("cast", {{"in", 1}}, {MakeAttr("dtype", to)});
    CompareWithCpu(conf, {{"in_0", Random<float>(shape, 1, -100, 100)}});
    CompareWithCpu(conf, {{"in_0", Random<double>(shape, 2, -100, 100)}});
    CompareWithCpu(conf, {{"in_0", Random<int32_t>(shape, 3, -100, 100)}});
    CompareWithCpu(conf, {{"in_0", Random<int64_t>(shape, 4, -100, 100)}});
    CompareWithCpu(conf, {{"in_0", ToHalf(Random<float>(shape, 5, -100, 100))}});
  }
  const OperatorConf to_uint8 = MakeOpConf("cast", {{"in", 1}}, {MakeAttr("dtype", kUInt8)});
  CompareWithCpu(to_uint8, {{"in_0", Random<int32_t>(shape, 6, 0, 250)}});
}

TEST(CudaKernels, CopiesAndConstants) {
  SKIP_WITHOUT_GPU();
  CompareWithCpu(MakeOpConf("identity", {{"in", 1}}), {{"in_0", Random<float>(Shape({5, 3}), 1)}});
  CompareWithCpu(MakeOpConf("reshape", {{"in", 1}}, {MakeAttr("shape", Shape({3, -1}))}),
                 {{"in_0", Random<int64_t>(Shape({6, 2}), 2, -9, 9)}});
  for (DataType data_type : {kFloat, kDouble, kInt32, kInt64, kInt8}) {
    CompareWithCpu(MakeOpConf("constant", {},
                              {MakeAttr("dtype", data_type), MakeAttr("shape", Shape({3, 1001})),
                               MakeAttr("floating_value", 2.5)}),
                   {});
  }
  CompareWithCpu(
      MakeOpConf("constant", {},
                 {MakeAttr("dtype", kInt64), MakeAttr("shape", Shape({9})),
                  MakeAttr("is_floating_value", false), MakeAttr<int64_t>("integer_value", -7)}),
      {});
  CompareWithCpu(MakeOpConf("constant_like", {{"like", 1}}, {MakeAttr("value", -1.5)}),
                 {{"like_0", Random<double>(Shape({4, 5}), 3)}});
}

TEST(CudaKernels, ScalarMath) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : ElementwiseShapes()) {
    for (const char* op_type : {"scalar_add", "scalar_mul"}) {
      const OperatorConf conf = MakeOpConf(op_type, {{"in", 1}}, {MakeAttr("operand", 2.5)});
      CompareWithCpu(conf, {{"in_0", Random<float>(shape, 1)}});
      CompareWithCpu(conf, {{"in_0", Random<double>(shape, 2)}});
      // Integer inputs take integral scalars only.
      const OperatorConf integral = MakeOpConf(op_type, {{"in", 1}}, {MakeAttr("operand", 3.0)});
      CompareWithCpu(integral, {{"in_0", Random<int32_t>(shape, 3, -50, 50)}});
      CompareWithCpu(integral, {{"in_0", Random<int64_t>(shape, 4, -50, 50)}});
      CompareHalfWithCpu(conf, {{"in_0", Random<float>(shape, 5)}});
    }
    const OperatorConf pow = MakeOpConf("scalar_pow", {{"in", 1}}, {MakeAttr("exponent", 1.7)});
    CompareWithCpu(pow, {{"in_0", Random<float>(shape, 6, 0.1, 3)}});
    CompareWithCpu(pow, {{"in_0", Random<double>(shape, 7, 0.1, 3)}});
  }
}

// Forward and gradient of the math unary family, with inputs inside each
// function's domain.
TEST(CudaKernels, MathUnary) {
  SKIP_WITHOUT_GPU();
  struct Case {
    const char* op_type;
    double low, high;
    bool has_grad;
  };
  const std::vector<Case> cases = {
      {"abs", -2, 2, true},         {"acos", -0.9, 0.9, true},
      {"acosh", 1.1, 4, true},      {"asin", -0.9, 0.9, true},
      {"asinh", -3, 3, true},       {"atan", -3, 3, true},
      {"atanh", -0.9, 0.9, true},   {"ceil", -3, 3, false},
      {"cos", -3, 3, true},         {"cosh", -3, 3, true},
      {"erf", -3, 3, true},         {"erfc", -3, 3, true},
      {"exp", -5, 5, true},         {"expm1", -2, 2, true},
      {"floor", -3, 3, false},      {"lgamma", 0.2, 6, true},
      {"log", 0.1, 5, true},        {"log1p", -0.5, 3, true},
      {"log_sigmoid", -8, 8, true}, {"negative", -2, 2, true},
      {"reciprocal", 0.5, 3, true}, {"reciprocal_no_nan", 0.5, 3, true},
      {"rint", -3, 3, false},       {"round", -3, 3, false},
      {"rsqrt", 0.2, 4, true},      {"sigmoid_v2", -8, 8, true},
      {"sign", -2, 2, false},       {"sin", -3, 3, true},
      {"sinh", -3, 3, true},        {"softplus", -8, 8, true},
      {"sqrt", 0.1, 4, true},       {"tan", -1.2, 1.2, true},
      {"gelu", -4, 4, true},        {"hardsigmoid", -5, 5, true},
      {"hardswish", -5, 5, true},   {"hardtanh", -3, 3, true},
      {"leaky_relu", -3, 3, true},  {"elu", -3, 3, true},
  };
  // float32 transcendental functions differ by a few ulps between CUDA and
  // fast_math.h.
  const Tolerance float_tolerance{1e-5, 2e-5};
  for (const Case& c : cases) {
    for (const Shape& shape : {Shape({5}), Shape({33, 31})}) {
      const OperatorConf forward = MakeOpConf(c.op_type, {{"x", 1}});
      CompareWithCpu(forward, {{"x_0", Random<float>(shape, 1, c.low, c.high)}}, float_tolerance);
      CompareWithCpu(forward, {{"x_0", Random<double>(shape, 2, c.low, c.high)}}, {1e-12, 1e-12});
      CompareHalfWithCpu(forward, {{"x_0", Random<float>(shape, 3, c.low, c.high)}});
      if (!c.has_grad) { continue; }
      const OperatorConf grad = MakeOpConf(std::string(c.op_type) + "_grad", {{"x", 1}, {"dy", 1}});
      CompareWithCpu(
          grad,
          {{"x_0", Random<float>(shape, 4, c.low, c.high)}, {"dy_0", Random<float>(shape, 5)}},
          float_tolerance);
      CompareWithCpu(
          grad,
          {{"x_0", Random<double>(shape, 6, c.low, c.high)}, {"dy_0", Random<double>(shape, 7)}},
          {1e-12, 1e-10});
    }
  }
  const OperatorConf logical_not = MakeOpConf("logical_not", {{"x", 1}});
  CompareWithCpu(logical_not, {{"x_0", Random<int32_t>(Shape({50}), 8, -2, 2)}});
  for (const char* op_type : {"abs", "negative", "sign"}) {
    CompareWithCpu(MakeOpConf(op_type, {{"x", 1}}),
                   {{"x_0", Random<int64_t>(Shape({50}), 9, -20, 20)}});
  }
}

TEST(CudaKernels, Activations) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : ElementwiseShapes()) {
    for (const char* op_type : {"relu", "sigmoid", "tanh", "square"}) {
      const OperatorConf forward = MakeOpConf(op_type, {{"x", 1}});
      CompareWithCpu(forward, {{"x_0", Random<float>(shape, 1, -4, 4)}});
      CompareWithCpu(forward, {{"x_0", Random<double>(shape, 2, -4, 4)}}, {1e-12, 1e-12});
      CompareHalfWithCpu(forward, {{"x_0", Random<float>(shape, 3, -4, 4)}});
      if (std::string(op_type) == "square") { continue; }
      const OperatorConf grad = MakeOpConf(std::string(op_type) + "_grad", {{"y", 1}, {"dy", 1}});
      CompareWithCpu(grad, {{"y_0", Random<float>(shape, 4)}, {"dy_0", Random<float>(shape, 5)}});
      CompareHalfWithCpu(grad,
                         {{"y_0", Random<float>(shape, 6)}, {"dy_0", Random<float>(shape, 7)}});
    }
  }
}

TEST(CudaKernels, BroadcastBinary) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {Shape({4, 5}), Shape({4, 5})},          {Shape({1001}), Shape({1})},
      {Shape({3, 1, 5}), Shape({4, 1})},       {Shape({2, 3, 4, 5}), Shape({5})},
      {Shape({2, 1, 4, 1}), Shape({3, 1, 6})}, {Shape({1}), Shape({6, 7})},
  };
  const std::vector<const char*> all_types = {
      "broadcast_add",     "broadcast_sub",       "broadcast_mul",     "broadcast_maximum",
      "broadcast_minimum", "broadcast_floor_mod", "broadcast_floordiv"};
  const std::vector<const char*> floating = {"broadcast_div", "broadcast_pow", "broadcast_atan2",
                                             "broadcast_xdivy", "broadcast_xlogy"};
  const std::vector<const char*> compare = {
      "broadcast_equal", "broadcast_not_equal",  "broadcast_greater",     "broadcast_greater_equal",
      "broadcast_less",  "broadcast_less_equal", "broadcast_logical_and", "broadcast_logical_or"};
  for (const auto& [x_shape, y_shape] : shapes) {
    SCOPED_TRACE(x_shape.ToString() + " and " + y_shape.ToString());
    auto run = [&](const char* op_type, bool integers, double low) {
      const OperatorConf conf = MakeOpConf(op_type, {{"x", 1}, {"y", 1}});
      CompareWithCpu(conf, {{"x_0", Random<float>(x_shape, 1, low, 3)},
                            {"y_0", Random<float>(y_shape, 2, 0.5, 3)}});
      CompareWithCpu(conf,
                     {{"x_0", Random<double>(x_shape, 3, low, 3)},
                      {"y_0", Random<double>(y_shape, 4, 0.5, 3)}},
                     {1e-12, 1e-12});
      CompareHalfWithCpu(conf, {{"x_0", Random<float>(x_shape, 5, low, 3)},
                                {"y_0", Random<float>(y_shape, 6, 0.5, 3)}});
      if (!integers) { return; }
      // Integers with zeros in y: floor_mod / floordiv by zero give 0.
      CompareWithCpu(conf, {{"x_0", Random<int32_t>(x_shape, 7, -9, 9)},
                            {"y_0", Random<int32_t>(y_shape, 8, -3, 3)}});
      CompareWithCpu(conf, {{"x_0", Random<int64_t>(x_shape, 9, -9, 9)},
                            {"y_0", Random<int64_t>(y_shape, 10, -3, 3)}});
    };
    for (const char* op_type : all_types) { run(op_type, true, -3); }
    for (const char* op_type : floating) { run(op_type, false, 0.1); }
    for (const char* op_type : compare) {
      run(op_type, true, -3);
      const OperatorConf conf = MakeOpConf(op_type, {{"x", 1}, {"y", 1}});
      CompareWithCpu(conf, {{"x_0", Random<int8_t>(x_shape, 11, -2, 2)},
                            {"y_0", Random<int8_t>(y_shape, 12, -2, 2)}});
    }
  }
}

TEST(CudaKernels, AddNAndBiasAdd) {
  SKIP_WITHOUT_GPU();
  for (int64_t count : {1, 2, 3, 8, 11}) {
    std::map<std::string, HostTensor> inputs, int_inputs;
    for (int64_t index = 0; index < count; ++index) {
      inputs[ArgumentKey("in", index)] = Random<float>(Shape({37, 3}), index);
      int_inputs[ArgumentKey("in", index)] = Random<int64_t>(Shape({37, 3}), index, -50, 50);
    }
    const OperatorConf conf = MakeOpConf("add_n", {{"in", count}});
    CompareWithCpu(conf, inputs);
    CompareWithCpu(conf, int_inputs);
    CompareHalfWithCpu(conf, inputs, {5e-3, 5e-3});
  }
  for (int64_t axis : {1, -1}) {
    for (const Shape& shape : {Shape({8, 16}), Shape({4, 6, 5})}) {
      const int64_t channels = shape.At(axis < 0 ? shape.num_axes() - 1 : axis);
      const OperatorConf conf =
          MakeOpConf("bias_add", {{"a", 1}, {"b", 1}}, {MakeAttr<int64_t>("axis", axis)});
      std::map<std::string, HostTensor> inputs = {{"a_0", Random<float>(shape, 1)},
                                                  {"b_0", Random<float>(Shape({channels}), 2)}};
      CompareWithCpu(conf, inputs);
      CompareHalfWithCpu(conf, inputs);
    }
  }
}

TEST(CudaKernels, Matmul) {
  SKIP_WITHOUT_GPU();
  struct Case {
    Shape a, b;
    bool transpose_a, transpose_b;
    double alpha;
  };
  const std::vector<Case> cases = {
      {Shape({5, 7}), Shape({7, 3}), false, false, 1.0},
      {Shape({7, 5}), Shape({7, 3}), true, false, 1.0},
      {Shape({5, 7}), Shape({3, 7}), false, true, 0.5},
      {Shape({7, 5}), Shape({3, 7}), true, true, 2.0},
      {Shape({2, 3, 4, 5}), Shape({2, 3, 5, 6}), false, false, 1.0},
      {Shape({2, 5, 4}), Shape({2, 6, 5}), true, true, 1.0},
      {Shape({2, 3, 4}), Shape({4, 5}), false, false, 1.0},
      {Shape({64, 129}), Shape({129, 33}), false, false, 1.0},
  };
  for (const Case& c : cases) {
    const OperatorConf conf =
        MakeOpConf("matmul", {{"a", 1}, {"b", 1}},
                   {MakeAttr("transpose_a", c.transpose_a), MakeAttr("transpose_b", c.transpose_b),
                    MakeAttr("alpha", c.alpha)});
    std::map<std::string, HostTensor> inputs = {{"a_0", Random<float>(c.a, 1)},
                                                {"b_0", Random<float>(c.b, 2)}};
    CompareWithCpu(conf, inputs, {1e-5, 1e-5});
    CompareWithCpu(conf, {{"a_0", Random<double>(c.a, 3)}, {"b_0", Random<double>(c.b, 4)}},
                   {1e-12, 1e-12});
    CompareHalfWithCpu(conf, inputs, {2e-2, 1e-2});
  }
}

TEST(CudaKernels, Reductions) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {Shape({1000}), {}},      {Shape({6, 300}), {1}},        {Shape({300, 6}), {0}},
      {Shape({4, 50, 7}), {1}}, {Shape({4, 5, 6, 7}), {0, 2}}, {Shape({4, 5, 6, 7}), {1, 3}},
      {Shape({3, 1, 5}), {1}},  {Shape({2, 3}), {0, 1}},
      // Columns of many rows, split among blocks (a bias gradient; 31 and 10 splits), and few
      // outputs of many elements (12 and 4 blocks per output).
      {Shape({2000, 70}), {0}}, {Shape({3, 700, 33}), {1}},
      {Shape({50000}), {}},     {Shape({4, 20000}), {1}},
  };
  for (const auto& [shape, axes] : cases) {
    SCOPED_TRACE(shape.ToString());
    for (bool keepdims : {false, true}) {
      for (const char* op_type :
           {"reduce_sum", "reduce_max", "reduce_min", "reduce_any", "reduce_all"}) {
        const OperatorConf conf =
            MakeOpConf(op_type, {{"input_tensor", 1}},
                       {MakeAttr("axis", axes), MakeAttr("keepdims", keepdims)});
        CompareWithCpu(conf, {{"input_tensor_0", Random<float>(shape, 1, 0, 1)}}, {1e-5, 1e-5});
        CompareWithCpu(conf, {{"input_tensor_0", Random<double>(shape, 2)}}, {1e-12, 1e-12});
        CompareWithCpu(conf, {{"input_tensor_0", Random<int32_t>(shape, 3, -3, 3)}});
        CompareHalfWithCpu(conf, {{"input_tensor_0", Random<float>(shape, 4, 0, 1)}}, {1e-2, 5e-3});
      }
      const OperatorConf prod =
          MakeOpConf("reduce_prod", {{"input_tensor", 1}},
                     {MakeAttr("axis", axes), MakeAttr("keepdims", keepdims)});
      CompareWithCpu(prod, {{"input_tensor_0", Random<double>(shape, 5, 0.99, 1.01)}},
                     {1e-12, 1e-10});
    }
  }
  // reduce_sum_like: a bias gradient and a broadcast gradient.
  CompareWithCpu(
      MakeOpConf("reduce_sum_like", {{"x", 1}, {"like", 1}}),
      {{"x_0", Random<float>(Shape({64, 10}), 1)}, {"like_0", Random<float>(Shape({10}), 2)}},
      {1e-5, 1e-5});
  CompareWithCpu(MakeOpConf("reduce_sum_like", {{"x", 1}, {"like", 1}}),
                 {{"x_0", Random<double>(Shape({3, 4, 5}), 3)},
                  {"like_0", Random<double>(Shape({3, 1, 5}), 4)}},
                 {1e-12, 1e-12});
}

TEST(CudaKernels, Softmax) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : {Shape({4, 10}), Shape({3, 1000}), Shape({2, 5, 3, 4})}) {
    for (int64_t axis : {-1, 1}) {
      for (const char* op_type : {"softmax", "log_softmax"}) {
        const OperatorConf forward = MakeOpConf(op_type, {{"in", 1}}, {MakeAttr("axis", axis)});
        CompareWithCpu(forward, {{"in_0", Random<float>(shape, 1, -5, 5)}});
        CompareWithCpu(forward, {{"in_0", Random<double>(shape, 2, -5, 5)}}, {1e-12, 1e-12});
        CompareHalfWithCpu(forward, {{"in_0", Random<float>(shape, 3, -5, 5)}});
        const OperatorConf grad = MakeOpConf(std::string(op_type) + "_grad", {{"y", 1}, {"dy", 1}},
                                             {MakeAttr("axis", axis)});
        CompareWithCpu(grad,
                       {{"y_0", Random<float>(shape, 4, 0, 1)}, {"dy_0", Random<float>(shape, 5)}});
      }
    }
  }
}

TEST(CudaKernels, SparseSoftmaxCrossEntropy) {
  SKIP_WITHOUT_GPU();
  for (int64_t classes : {3, 10, 1000}) {
    const Shape prediction({16, classes});
    const OperatorConf forward =
        MakeOpConf("sparse_softmax_cross_entropy", {{"prediction", 1}, {"label", 1}});
    const OperatorConf grad =
        MakeOpConf("sparse_softmax_cross_entropy_grad", {{"prob", 1}, {"label", 1}, {"dy", 1}});
    for (bool wide_labels : {false, true}) {
      HostTensor label = wide_labels ? Random<int64_t>(Shape({16}), 1, 0, classes)
                                     : Random<int32_t>(Shape({16}), 1, 0, classes);
      CompareWithCpu(forward,
                     {{"prediction_0", Random<float>(prediction, 2, -5, 5)}, {"label_0", label}});
      CompareWithCpu(forward,
                     {{"prediction_0", Random<double>(prediction, 3, -5, 5)}, {"label_0", label}},
                     {1e-12, 1e-12});
      CompareHalfWithCpu(
          forward, {{"prediction_0", Random<float>(prediction, 4, -5, 5)}, {"label_0", label}});
      CompareWithCpu(grad, {{"prob_0", Random<float>(prediction, 5, 0, 1)},
                            {"label_0", label},
                            {"dy_0", Random<float>(Shape({16}), 6)}});
    }
  }
}

TEST(CudaKernels, ModelUpdates) {
  SKIP_WITHOUT_GPU();
  const Shape shape({1001});
  const HostTensor learning_rate = MakeTensor<float>(Shape({1}), {0.1f});
  const HostTensor train_step = MakeTensor<int64_t>(Shape({1}), {4});
  const std::vector<std::pair<std::string, double>> common = {
      {"scale", 2.0}, {"l1", 0.01}, {"l2", 0.02}, {"weight_decay", 0.5}};
  auto attrs = [&](std::map<std::string, AttrValue> extra) {
    for (const auto& [name, value] : common) { extra[name] = ToAttrValue<double>(value); }
    return extra;
  };
  const OperatorConf sgd =
      MakeOpConf("sgd_update", {{"model", 1}, {"model_diff", 1}, {"learning_rate", 1}}, attrs({}));
  const OperatorConf momentum = MakeOpConf(
      "momentum_update", {{"model", 1}, {"model_diff", 1}, {"momentum", 1}, {"learning_rate", 1}},
      attrs({MakeAttr("beta", 0.9)}));
  const OperatorConf adam = MakeOpConf("adam_update",
                                       {{"model", 1},
                                        {"model_diff", 1},
                                        {"m", 1},
                                        {"v", 1},
                                        {"learning_rate", 1},
                                        {"train_step", 1}},
                                       attrs({MakeAttr("do_bias_correction", true)}));
  CompareWithCpu(sgd, {{"model_0", Random<float>(shape, 1)},
                       {"model_diff_0", Random<float>(shape, 2)},
                       {"learning_rate_0", learning_rate}});
  CompareWithCpu(momentum,
                 {{"model_0", Random<double>(shape, 3)},
                  {"model_diff_0", Random<double>(shape, 4)},
                  {"momentum_0", Random<double>(shape, 5)},
                  {"learning_rate_0", learning_rate}},
                 {1e-12, 1e-12});
  std::map<std::string, HostTensor> adam_inputs = {
      {"model_0", Random<float>(shape, 6)}, {"model_diff_0", Random<float>(shape, 7)},
      {"m_0", Random<float>(shape, 8)},     {"v_0", Random<float>(shape, 9, 0, 1)},
      {"learning_rate_0", learning_rate},   {"train_step_0", train_step}};
  CompareWithCpu(adam, adam_inputs);
  CompareHalfWithCpu(adam, adam_inputs, {2e-3, 5e-3}, {"model_0", "model_diff_0", "m_0", "v_0"});
  // LazyAdam skips the elements whose gradient is zero.
  std::map<std::string, HostTensor> lazy_inputs = adam_inputs;
  lazy_inputs["model_diff_0"] = Clone(adam_inputs.at("model_diff_0"));
  for (int64_t i = 0; i < shape.elem_count(); i += 3) {
    static_cast<float*>(lazy_inputs["model_diff_0"].data)[i] = 0.0f;
  }
  const OperatorConf lazy_adam =
      MakeOpConf("lazy_adam_update",
                 {{"model", 1},
                  {"model_diff", 1},
                  {"m", 1},
                  {"v", 1},
                  {"learning_rate", 1},
                  {"train_step", 1}},
                 {MakeAttr("beta1", 0.8), MakeAttr("beta2", 0.9), MakeAttr("epsilon", 1e-6)});
  CompareWithCpu(lazy_adam, lazy_inputs);
  // Sparse updates: elements whose update_mask is zero keep their model and state.
  HostTensor mask = MakeTensor<float>(shape, std::vector<float>(shape.elem_count(), 0.0f));
  for (int64_t i = 0; i < shape.elem_count(); i += 4) { static_cast<float*>(mask.data)[i] = 2.0f; }
  std::map<std::string, HostTensor> masked_adam = adam_inputs;
  masked_adam["update_mask_0"] = mask;
  CompareWithCpu(MakeOpConf("adam_update",
                            {{"model", 1},
                             {"model_diff", 1},
                             {"m", 1},
                             {"v", 1},
                             {"learning_rate", 1},
                             {"train_step", 1},
                             {"update_mask", 1}},
                            attrs({MakeAttr("do_bias_correction", true)})),
                 masked_adam);
  CompareWithCpu(MakeOpConf("momentum_update",
                            {{"model", 1},
                             {"model_diff", 1},
                             {"momentum", 1},
                             {"learning_rate", 1},
                             {"update_mask", 1}},
                            attrs({MakeAttr("beta", 0.9)})),
                 {{"model_0", Random<float>(shape, 3)},
                  {"model_diff_0", Random<float>(shape, 4)},
                  {"momentum_0", Random<float>(shape, 5)},
                  {"learning_rate_0", learning_rate},
                  {"update_mask_0", mask}});
  for (const char* op_type : {"rmsprop_update", "centered_rmsprop_update"}) {
    const bool centered = std::string(op_type) == "centered_rmsprop_update";
    std::map<std::string, int64_t> counts = {
        {"model", 1}, {"model_diff", 1}, {"mean_square", 1}, {"learning_rate", 1}};
    std::map<std::string, HostTensor> inputs = {{"model_0", Random<float>(shape, 10)},
                                                {"model_diff_0", Random<float>(shape, 11)},
                                                {"mean_square_0", Random<float>(shape, 12, 1, 2)},
                                                {"learning_rate_0", learning_rate}};
    if (centered) {
      counts["mean_gradient"] = 1;
      inputs["mean_gradient_0"] = Random<float>(shape, 13, -0.1, 0.1);
    }
    CompareWithCpu(MakeOpConf(op_type, counts, attrs({MakeAttr("decay_rate", 0.9)})), inputs,
                   {1e-5, 1e-5});
  }
  CompareWithCpu(
      MakeOpConf(
          "adagrad_update",
          {{"model", 1}, {"model_diff", 1}, {"sum", 1}, {"learning_rate", 1}, {"train_step", 1}},
          attrs({MakeAttr("lr_decay", 0.1), MakeAttr("initial_accumulator_value", 0.1)})),
      {{"model_0", Random<double>(shape, 14)},
       {"model_diff_0", Random<double>(shape, 15)},
       {"sum_0", Random<double>(shape, 16, 0, 1)},
       {"learning_rate_0", MakeTensor<float>(Shape({1}), {0.1f})},
       {"train_step_0", train_step}},
      {1e-12, 1e-12});
}

// conv forward, data gradient and filter gradient (cuDNN) against the CPU kernels (oneDNN /
// im2col): valid and symmetric padding, strides, dilations, groups, both data formats, 1-3 D.
TEST(CudaKernels, Convolution) {
  SKIP_WITHOUT_GPU();
  struct Case {
    Shape in, weight;
    std::string data_format, padding;
    std::vector<int64_t> strides, dilations, padding_before, padding_after;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {Shape({2, 3, 9, 8}),
       Shape({4, 3, 3, 3}),
       "channels_first",
       "valid",
       {1, 1},
       {1, 1},
       {},
       {},
       1},
      {Shape({2, 3, 9, 8}),
       Shape({5, 3, 3, 2}),
       "channels_first",
       "customized",
       {2, 1},
       {1, 2},
       {1, 1},
       {1, 1},
       1},
      {Shape({2, 6, 7, 7}),
       Shape({6, 2, 3, 3}),
       "channels_first",
       "customized",
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       3},
      {Shape({2, 7, 7, 3}),
       Shape({4, 3, 3, 3}),
       "channels_last",
       "customized",
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       1},
      {Shape({2, 3, 10}), Shape({4, 3, 3}), "channels_first", "valid", {2}, {1}, {}, {}, 1},
      {Shape({1, 2, 5, 6, 4}),
       Shape({3, 2, 3, 3, 3}),
       "channels_first",
       "customized",
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       1},
      // Uneven padding (cuDNN pads symmetrically: the kernels pad into a wide activation):
      // "SAME" 3x3 stride 2 on even sizes pads 0 before and 1 after (same_upper), or the reverse.
      {Shape({2, 3, 8, 6}),
       Shape({4, 3, 3, 3}),
       "channels_first",
       "same_upper",
       {2, 2},
       {1, 1},
       {},
       {},
       1},
      {Shape({2, 8, 6, 3}),
       Shape({4, 3, 3, 3}),
       "channels_last",
       "same_lower",
       {2, 2},
       {1, 1},
       {},
       {},
       1},
      {Shape({1, 4, 7, 6}),
       Shape({4, 2, 2, 3}),
       "channels_first",
       "customized",
       {1, 2},
       {2, 1},
       {2, 0},
       {0, 1},
       2},
      {Shape({1, 2, 4, 5, 4}),
       Shape({3, 2, 3, 3, 2}),
       "channels_first",
       "same_upper",
       {2, 1, 2},
       {1, 1, 1},
       {},
       {},
       1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in.ToString() + " * " + c.weight.ToString() + " " + c.data_format);
    const int64_t spatial_axes = c.in.num_axes() - 2;
    std::vector<int64_t> kernel_size;
    for (int64_t axis = 0; axis < spatial_axes; ++axis) {
      kernel_size.push_back(c.weight.At((c.data_format == "channels_first" ? 2 : 1) + axis));
    }
    std::map<std::string, AttrValue> attrs = {MakeAttr("data_format", c.data_format),
                                              MakeAttr("padding", c.padding),
                                              MakeAttr("strides", c.strides),
                                              MakeAttr("dilation_rate", c.dilations),
                                              MakeAttr("padding_before", c.padding_before),
                                              MakeAttr("padding_after", c.padding_after),
                                              MakeAttr("groups", c.groups)};
    const OperatorConf forward =
        MakeOpConf("conv" + std::to_string(spatial_axes) + "d", {{"in", 1}, {"weight", 1}}, attrs);
    const Shape out =
        Infer(forward, {{"in_0", BlobDesc{c.in, kFloat}}, {"weight_0", BlobDesc{c.weight, kFloat}}})
            .at("out_0")
            .shape;
    attrs["num_spatial_dims"] = ToAttrValue<int64_t>(spatial_axes);
    attrs["kernel_size"] = ToAttrValue<std::vector<int64_t>>(kernel_size);
    const OperatorConf data_grad =
        MakeOpConf("conv_data_grad", {{"dy", 1}, {"weight", 1}, {"x_like", 1}}, attrs);
    const OperatorConf filter_grad = MakeOpConf("conv_filter_grad", {{"dy", 1}, {"x", 1}}, attrs);
    std::map<std::string, HostTensor> forward_inputs = {{"in_0", Random<float>(c.in, 1)},
                                                        {"weight_0", Random<float>(c.weight, 2)}};
    CompareWithCpu(forward, forward_inputs, {1e-5, 1e-5});
    CompareWithCpu(forward,
                   {{"in_0", Random<double>(c.in, 3)}, {"weight_0", Random<double>(c.weight, 4)}},
                   {1e-12, 1e-12});
    CompareHalfWithCpu(forward, forward_inputs, {1e-2, 1e-2});
    CompareWithCpu(data_grad,
                   {{"dy_0", Random<float>(out, 5)},
                    {"weight_0", Random<float>(c.weight, 6)},
                    {"x_like_0", Random<float>(c.in, 7)}},
                   {1e-5, 1e-5});
    CompareWithCpu(filter_grad, {{"dy_0", Random<float>(out, 8)}, {"x_0", Random<float>(c.in, 9)}},
                   {1e-4, 1e-5});
    CompareWithCpu(filter_grad,
                   {{"dy_0", Random<double>(out, 10)}, {"x_0", Random<double>(c.in, 11)}},
                   {1e-12, 1e-12});
  }
}

TEST(CudaKernels, Pooling) {
  SKIP_WITHOUT_GPU();
  struct Case {
    Shape x;
    std::vector<int64_t> pool_size, strides;
    std::string padding, data_format;
    bool ceil_mode;
  };
  const std::vector<Case> cases = {
      {Shape({2, 3, 9, 8}), {3, 3}, {2, 2}, "valid", "channels_first", false},
      {Shape({2, 3, 9, 8}), {2, 2}, {2, 2}, "same_upper", "channels_first", false},
      {Shape({2, 7, 6, 5}), {3, 2}, {1, 2}, "same_lower", "channels_last", false},
      {Shape({2, 3, 9, 8}), {3, 3}, {2, 2}, "valid", "channels_first", true},
      {Shape({2, 4, 11}), {3}, {2}, "same_upper", "channels_first", false},
      {Shape({1, 2, 5, 6, 7}), {2, 3, 2}, {2, 1, 2}, "valid", "channels_first", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.ToString() + " " + c.padding + " " + c.data_format);
    const int64_t spatial_axes = c.x.num_axes() - 2;
    const std::map<std::string, AttrValue> attrs = {
        MakeAttr("pool_size", c.pool_size), MakeAttr("strides", c.strides),
        MakeAttr("padding", c.padding), MakeAttr("data_format", c.data_format),
        MakeAttr("ceil_mode", c.ceil_mode)};
    for (const char* kind : {"max", "avg"}) {
      const std::string op_type = std::string(kind) + "_pool_" + std::to_string(spatial_axes) + "d";
      const OperatorConf forward = MakeOpConf(op_type, {{"x", 1}}, attrs);
      const Shape y = Infer(forward, {{"x_0", BlobDesc{c.x, kFloat}}}).at("y_0").shape;
      const OperatorConf grad = MakeOpConf(op_type + "_grad", {{"x", 1}, {"dy", 1}}, attrs);
      CompareWithCpu(forward, {{"x_0", Random<float>(c.x, 1)}});
      CompareWithCpu(forward, {{"x_0", Random<double>(c.x, 2)}}, {1e-12, 1e-12});
      CompareHalfWithCpu(forward, {{"x_0", Random<float>(c.x, 3)}});
      CompareWithCpu(grad, {{"x_0", Random<float>(c.x, 4)}, {"dy_0", Random<float>(y, 5)}});
      CompareWithCpu(grad, {{"x_0", Random<double>(c.x, 6)}, {"dy_0", Random<double>(y, 7)}},
                     {1e-12, 1e-12});
    }
  }
}

TEST(CudaKernels, BatchNormalization) {
  SKIP_WITHOUT_GPU();
  for (const auto& [shape, axis] : std::vector<std::pair<Shape, int64_t>>{
           {Shape({4, 3, 5, 6}), 1}, {Shape({64, 10}), 1}, {Shape({2, 5, 3}), -1},
           // Channels of many elements, split among blocks (4 and 2 splits).
           {Shape({16, 4, 32, 32}), 1}, {Shape({8192, 3}), 1}}) {
    SCOPED_TRACE(shape.ToString());
    const int64_t channels = shape.At(axis < 0 ? shape.num_axes() - 1 : axis);
    const Shape channel_shape({channels});
    auto with_attrs = [&](const std::string& op_type,
                          const std::map<std::string, int64_t>& inputs) {
      std::map<std::string, AttrValue> attrs = {MakeAttr("axis", axis)};
      if (op_type != "batch_norm_mean" && op_type != "batch_norm_variance") {
        attrs["epsilon"] = ToAttrValue<double>(1e-3);
      }
      if (op_type == "normalization_train") { attrs["momentum"] = ToAttrValue<double>(0.9); }
      return MakeOpConf(op_type, inputs, attrs);
    };
    auto check = [&](auto tag, Tolerance tolerance) {
      using T = decltype(tag);
      std::map<std::string, HostTensor> all = {
          {"x_0", Random<T>(shape, 1, -2, 3)},
          {"dy_0", Random<T>(shape, 2)},
          {"mean_0", Random<T>(channel_shape, 3)},
          {"variance_0", Random<T>(channel_shape, 4, 0.5, 2)},
          {"gamma_0", Random<T>(channel_shape, 5)},
          {"beta_0", Random<T>(channel_shape, 6)},
          {"moving_mean_0", Random<T>(channel_shape, 7)},
          {"moving_variance_0", Random<T>(channel_shape, 8, 0.5, 2)},
          {"sum_dy_0", Random<T>(channel_shape, 9)},
          {"sum_dy_xhat_0", Random<T>(channel_shape, 10)}};
      auto pick = [&](const std::vector<std::string>& names) {
        std::map<std::string, HostTensor> inputs;
        for (const std::string& name : names) { inputs[name + "_0"] = all.at(name + "_0"); }
        return inputs;
      };
      auto counts = [](const std::vector<std::string>& names) {
        std::map<std::string, int64_t> result;
        for (const std::string& name : names) { result[name] = 1; }
        return result;
      };
      const std::vector<std::pair<std::string, std::vector<std::string>>> ops = {
          {"batch_norm_mean", {"x"}},
          {"batch_norm_variance", {"x", "mean"}},
          {"normalization", {"x", "mean", "variance", "gamma", "beta"}},
          {"normalization_train",
           {"x", "mean", "variance", "gamma", "beta", "moving_mean", "moving_variance"}},
          {"normalization_train_grad_stats", {"x", "dy", "mean", "variance"}},
          {"normalization_train_grad",
           {"x", "dy", "mean", "variance", "gamma", "sum_dy", "sum_dy_xhat"}},
          {"normalization_grad", {"x", "dy", "mean", "variance", "gamma"}},
      };
      for (const auto& [op_type, names] : ops) {
        const OperatorConf conf = with_attrs(op_type, counts(names));
        if constexpr (std::is_same_v<T, float>) {
          // Mixed precision: float16 x and dy, float32 per-channel blobs.
          CompareHalfWithCpu(conf, pick(names), {2e-2, 1e-2}, {"x_0", "dy_0"},
                             /*infer_gpu_dtypes=*/true);
        }
        CompareWithCpu(conf, pick(names), tolerance);
      }
    };
    check(float{}, {1e-5, 1e-5});
    check(double{}, {1e-12, 1e-12});
  }
}

TEST(CudaKernels, TransposeAndOneHot) {
  SKIP_WITHOUT_GPU();
  for (const auto& [shape, perm] :
       std::vector<std::pair<Shape, std::vector<int64_t>>>{{Shape({5, 7}), {1, 0}},
                                                           {Shape({2, 3, 4, 5}), {0, 2, 3, 1}},
                                                           {Shape({2, 1, 3, 4}), {3, 1, 0, 2}},
                                                           {Shape({4, 6}), {0, 1}}}) {
    const OperatorConf conf = MakeOpConf("transpose", {{"in", 1}}, {MakeAttr("perm", perm)});
    CompareWithCpu(conf, {{"in_0", Random<float>(shape, 1)}});
    CompareWithCpu(conf, {{"in_0", Random<double>(shape, 2)}});
    CompareWithCpu(conf, {{"in_0", Random<int8_t>(shape, 3, -100, 100)}});
    CompareWithCpu(conf, {{"in_0", Random<int64_t>(shape, 4, -100, 100)}});
    CompareHalfWithCpu(conf, {{"in_0", Random<float>(shape, 5)}}, {0, 0});
  }
  for (DataType data_type : {kFloat, kInt32, kInt64}) {
    const OperatorConf conf =
        MakeOpConf("one_hot", {{"indices", 1}},
                   {MakeAttr<int64_t>("depth", 7), MakeAttr("dtype", data_type),
                    MakeAttr("floating_on_value", 2.5), MakeAttr<int64_t>("integer_on_value", 3)});
    CompareWithCpu(conf, {{"indices_0", Random<int32_t>(Shape({5, 3}), 1, 0, 7)}});
    CompareWithCpu(conf, {{"indices_0", Random<int64_t>(Shape({11}), 2, 0, 7)}});
  }
}

// Gathers and scatters, with repeated indices (sums collide, the last update wins).
TEST(CudaKernels, GatherAndScatter) {
  SKIP_WITHOUT_GPU();
  const Shape params_shape({5, 6, 7});
  for (const auto& [axis, batch_dims, indices_shape] :
       std::vector<std::tuple<int64_t, int64_t, Shape>>{{0, 0, Shape({4, 3})},
                                                        {1, 0, Shape({9})},
                                                        {2, 0, Shape({2, 2})},
                                                        {1, 1, Shape({5, 4})}}) {
    SCOPED_TRACE("axis " + std::to_string(axis) + ", batch_dims " + std::to_string(batch_dims));
    const int64_t limit = params_shape.At(axis);
    const OperatorConf gather =
        MakeOpConf("gather", {{"in", 1}, {"indices", 1}},
                   {MakeAttr("axis", axis), MakeAttr("batch_dims", batch_dims)});
    const HostTensor indices32 = Random<int32_t>(indices_shape, 1, 0, limit);
    const HostTensor indices64 = Random<int64_t>(indices_shape, 2, 0, limit);
    CompareWithCpu(gather, {{"in_0", Random<float>(params_shape, 3)}, {"indices_0", indices32}});
    CompareWithCpu(
        gather, {{"in_0", Random<int8_t>(params_shape, 4, -100, 100)}, {"indices_0", indices64}});
    CompareWithCpu(gather, {{"in_0", Random<double>(params_shape, 5)}, {"indices_0", indices64}});
    CompareHalfWithCpu(gather, {{"in_0", Random<float>(params_shape, 6)}, {"indices_0", indices32}},
                       {0, 0});
    // The segment sum of the gathered shape back onto params' shape.
    Shape data_dims = params_shape;
    {
      std::vector<int64_t> dims(params_shape.dims().begin(), params_shape.dims().begin() + axis);
      dims.insert(dims.end(), indices_shape.dims().begin() + batch_dims,
                  indices_shape.dims().end());
      dims.insert(dims.end(), params_shape.dims().begin() + axis + 1, params_shape.dims().end());
      data_dims = Shape(dims);
    }
    const OperatorConf segment_sum =
        MakeOpConf("unsorted_segment_sum", {{"data", 1}, {"segment_ids", 1}},
                   {MakeAttr("axis", axis), MakeAttr("batch_dims", batch_dims),
                    MakeAttr<int64_t>("num_segments", limit)});
    CompareWithCpu(segment_sum,
                   {{"data_0", Random<float>(data_dims, 7)}, {"segment_ids_0", indices32}},
                   {1e-5, 1e-5});
    CompareWithCpu(segment_sum,
                   {{"data_0", Random<double>(data_dims, 8)}, {"segment_ids_0", indices64}},
                   {1e-12, 1e-12});
    CompareWithCpu(segment_sum, {{"data_0", Random<int64_t>(data_dims, 9, -50, 50)},
                                 {"segment_ids_0", indices32}});
    CompareWithCpu(segment_sum, {{"data_0", Random<int32_t>(data_dims, 10, -50, 50)},
                                 {"segment_ids_0", indices64}});
    CompareHalfWithCpu(segment_sum,
                       {{"data_0", Random<float>(data_dims, 11)}, {"segment_ids_0", indices32}});
    const OperatorConf segment_sum_like =
        MakeOpConf("unsorted_segment_sum_like", {{"data", 1}, {"segment_ids", 1}, {"like", 1}},
                   {MakeAttr("axis", axis), MakeAttr("batch_dims", batch_dims)});
    CompareWithCpu(segment_sum_like,
                   {{"data_0", Random<float>(data_dims, 12)},
                    {"segment_ids_0", indices64},
                    {"like_0", Random<float>(params_shape, 13)}},
                   {1e-5, 1e-5});
  }
  // Index tuples of depth 1, 2 and 3 into params [5, 6, 7].
  for (int64_t depth : {1, 2, 3}) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    const int64_t rows = 11;
    HostTensor indices = Random<int64_t>(Shape({rows, depth}), 20 + depth, 0, 1);
    for (int64_t row = 0; row < rows; ++row) {
      for (int64_t k = 0; k < depth; ++k) {
        static_cast<int64_t*>(indices.data)[row * depth + k] =
            (row * 7 + k * 3) % params_shape.At(k);
      }
    }
    static_cast<int64_t*>(indices.data)[rows - 1] = static_cast<int64_t*>(indices.data)[0];
    std::vector<int64_t> update_dims = {rows};
    for (int64_t axis = depth; axis < params_shape.num_axes(); ++axis) {
      update_dims.push_back(params_shape.At(axis));
    }
    const Shape updates_shape(update_dims);
    const OperatorConf gather_nd = MakeOpConf("gather_nd", {{"params", 1}, {"indices", 1}});
    CompareWithCpu(gather_nd,
                   {{"params_0", Random<float>(params_shape, 1)}, {"indices_0", indices}});
    CompareWithCpu(gather_nd,
                   {{"params_0", Random<int32_t>(params_shape, 2, -9, 9)}, {"indices_0", indices}});
    CompareHalfWithCpu(
        gather_nd, {{"params_0", Random<float>(params_shape, 3)}, {"indices_0", indices}}, {0, 0});
    const OperatorConf scatter_nd = MakeOpConf("scatter_nd", {{"indices", 1}, {"updates", 1}},
                                               {MakeAttr("shape", params_shape)});
    CompareWithCpu(scatter_nd,
                   {{"indices_0", indices}, {"updates_0", Random<float>(updates_shape, 4)}},
                   {1e-5, 1e-5});
    CompareWithCpu(scatter_nd, {{"indices_0", indices},
                                {"updates_0", Random<int64_t>(updates_shape, 5, -9, 9)}});
    CompareWithCpu(MakeOpConf("scatter_nd_like", {{"indices", 1}, {"updates", 1}, {"like", 1}}),
                   {{"indices_0", indices},
                    {"updates_0", Random<double>(updates_shape, 6)},
                    {"like_0", Random<double>(params_shape, 7)}},
                   {1e-12, 1e-12});
    const OperatorConf update =
        MakeOpConf("tensor_scatter_nd_update", {{"params", 1}, {"indices", 1}, {"updates", 1}});
    CompareWithCpu(update,
                   {{"params_0", Random<float>(params_shape, 8)},
                    {"indices_0", indices},
                    {"updates_0", Random<float>(updates_shape, 9)}},
                   {0, 0});
    CompareWithCpu(update, {{"params_0", Random<uint8_t>(params_shape, 10, 0, 200)},
                            {"indices_0", indices},
                            {"updates_0", Random<uint8_t>(updates_shape, 11, 0, 200)}});
  }
}

// Slices (positive and negative steps), slice updates, concat on each axis and the pads.
TEST(CudaKernels, SliceConcatAndPad) {
  SKIP_WITHOUT_GPU();
  using Int64s = std::vector<int64_t>;
  const Shape shape({4, 6, 9});
  for (const auto& [start, stop, step] :
       std::vector<std::tuple<Int64s, Int64s, Int64s>>{{{0, 0, 0}, {4, 6, 9}, {1, 1, 1}},
                                                       {{1, 0, 2}, {3, 6, 9}, {1, 1, 3}},
                                                       {{3, 5, 8}, {-1, -1, 0}, {-1, -2, -3}},
                                                       {{0, 2, 0}, {4, 3, 9}, {2, 1, 1}}}) {
    const std::map<std::string, AttrValue> attrs = {MakeAttr("start", start),
                                                    MakeAttr("stop", stop), MakeAttr("step", step)};
    const OperatorConf slice = MakeOpConf("slice", {{"x", 1}}, attrs);
    CompareWithCpu(slice, {{"x_0", Random<float>(shape, 1)}});
    CompareWithCpu(slice, {{"x_0", Random<int8_t>(shape, 2, -100, 100)}});
    CompareWithCpu(slice, {{"x_0", Random<int64_t>(shape, 3, -100, 100)}});
    CompareHalfWithCpu(slice, {{"x_0", Random<float>(shape, 4)}}, {0, 0});
    std::vector<int64_t> sliced;
    for (size_t axis = 0; axis < start.size(); ++axis) {
      const int64_t span = step[axis] > 0 ? stop[axis] - start[axis] : start[axis] - stop[axis];
      const int64_t magnitude = std::abs(step[axis]);
      sliced.push_back((span + magnitude - 1) / magnitude);
    }
    const OperatorConf update = MakeOpConf("slice_update", {{"x", 1}, {"update", 1}}, attrs);
    CompareWithCpu(update, {{"x_0", Random<double>(shape, 5)},
                            {"update_0", Random<double>(Shape(sliced), 6)}});
    CompareWithCpu(update, {{"x_0", Random<int32_t>(shape, 7, -9, 9)},
                            {"update_0", Random<int32_t>(Shape(sliced), 8, -9, 9)}});
  }
  for (int64_t axis : {0, 1, 2, -1}) {
    const OperatorConf concat = MakeOpConf("concat", {{"in", 3}}, {MakeAttr("axis", axis)});
    auto part = [&](int64_t dim, int64_t seed) {
      std::vector<int64_t> dims = shape.dims();
      dims[axis < 0 ? axis + 3 : axis] = dim;
      return Random<float>(Shape(dims), seed);
    };
    CompareWithCpu(concat, {{"in_0", part(2, 1)}, {"in_1", part(1, 2)}, {"in_2", part(3, 3)}},
                   {0, 0});
    CompareHalfWithCpu(concat, {{"in_0", part(1, 4)}, {"in_1", part(2, 5)}, {"in_2", part(1, 6)}},
                       {0, 0});
    // split_like: the inverse, sized by likes of sizes 2 and the rest.
    const int64_t dim = shape.At(axis < 0 ? axis + 3 : axis);
    const OperatorConf split =
        MakeOpConf("split_like", {{"in", 1}, {"like", 2}}, {MakeAttr("axis", axis)});
    CompareWithCpu(
        split,
        {{"in_0", Random<float>(shape, 7)}, {"like_0", part(2, 8)}, {"like_1", part(dim - 2, 9)}},
        {0, 0});
  }
  const OperatorConf pad = MakeOpConf(
      "pad", {{"x", 1}},
      {MakeAttr("padding_before", Int64s{1, 0, 2}), MakeAttr("padding_after", Int64s{0, 3, 1}),
       MakeAttr("floating_constant_value", 1.5), MakeAttr<int64_t>("integral_constant_value", -4)});
  CompareWithCpu(pad, {{"x_0", Random<float>(shape, 1)}});
  CompareWithCpu(pad, {{"x_0", Random<double>(shape, 2)}});
  CompareWithCpu(pad, {{"x_0", Random<int8_t>(shape, 3, -100, 100)}});
  CompareWithCpu(pad, {{"x_0", Random<int64_t>(shape, 4, -100, 100)}});
  CompareHalfWithCpu(pad, {{"x_0", Random<float>(shape, 5)}}, {0, 0});
  const Shape image({2, 3, 5, 6});
  for (const char* mode : {"reflection", "replication"}) {
    const Int64s padding = {2, 3, 4, 1};  // left, right, top, bottom
    const OperatorConf forward =
        MakeOpConf(std::string(mode) + "_pad2d", {{"x", 1}}, {MakeAttr("padding", padding)});
    CompareWithCpu(forward, {{"x_0", Random<float>(image, 1)}});
    CompareWithCpu(forward, {{"x_0", Random<double>(image, 2)}});
    CompareHalfWithCpu(forward, {{"x_0", Random<float>(image, 3)}}, {0, 0});
    const Shape padded({2, 3, 10, 11});
    const OperatorConf grad = MakeOpConf(std::string(mode) + "_pad2d_grad",
                                         {{"dy", 1}, {"like", 1}}, {MakeAttr("padding", padding)});
    CompareWithCpu(grad, {{"dy_0", Random<float>(padded, 4)}, {"like_0", Random<float>(image, 5)}},
                   {1e-5, 1e-5});
    CompareWithCpu(grad,
                   {{"dy_0", Random<double>(padded, 6)}, {"like_0", Random<double>(image, 7)}},
                   {1e-12, 1e-12});
    CompareHalfWithCpu(grad,
                       {{"dy_0", Random<float>(padded, 8)}, {"like_0", Random<float>(image, 9)}});
  }
}

// layer_norm and its gradients, with and without gamma / beta, parameters over the normalized
// axes or over fewer of them (applied by flat index modulo their size).
TEST(CudaKernels, LayerNorm) {
  SKIP_WITHOUT_GPU();
  const Shape shape({6, 4, 50});
  for (const auto& [params_axis, param_shape] :
       std::vector<std::pair<int64_t, Shape>>{{1, Shape({4, 50})}, {-1, Shape({50})}}) {
    const std::map<std::string, AttrValue> attrs = {MakeAttr<int64_t>("begin_norm_axis", 1),
                                                    MakeAttr("begin_params_axis", params_axis),
                                                    MakeAttr("epsilon", 1e-3)};
    auto check = [&](auto tag, Tolerance tolerance) {
      using T = decltype(tag);
      const HostTensor x = Random<T>(shape, 1, -2, 3);
      const HostTensor gamma = Random<T>(param_shape, 2);
      const HostTensor beta = Random<T>(param_shape, 3);
      CompareWithCpu(MakeOpConf("layer_norm", {{"x", 1}}, attrs), {{"x_0", x}}, tolerance);
      const OperatorConf forward =
          MakeOpConf("layer_norm", {{"x", 1}, {"gamma", 1}, {"beta", 1}}, attrs);
      CompareWithCpu(forward, {{"x_0", x}, {"gamma_0", gamma}, {"beta_0", beta}}, tolerance);
      CompareWithCpu(MakeOpConf("layer_norm", {{"x", 1}, {"gamma", 1}}, attrs),
                     {{"x_0", x}, {"gamma_0", gamma}}, tolerance);
      KernelRunner statistics(forward, {{"x_0", x}, {"gamma_0", gamma}, {"beta_0", beta}});
      statistics.Run();
      const std::map<std::string, HostTensor> grad_inputs = {
          {"x_0", x},
          {"dy_0", Random<T>(shape, 4)},
          {"mean_0", statistics.output("mean_0")},
          {"inv_variance_0", statistics.output("inv_variance_0")},
          {"gamma_0", gamma}};
      std::map<std::string, HostTensor> without_gamma = grad_inputs;
      without_gamma.erase("gamma_0");
      const std::map<std::string, int64_t> grad_counts = {
          {"x", 1}, {"dy", 1}, {"mean", 1}, {"inv_variance", 1}};
      std::map<std::string, int64_t> with_gamma_counts = grad_counts;
      with_gamma_counts["gamma"] = 1;
      CompareWithCpu(MakeOpConf("layer_norm_grad", with_gamma_counts, attrs), grad_inputs,
                     tolerance);
      CompareWithCpu(MakeOpConf("layer_norm_grad", grad_counts, attrs), without_gamma, tolerance);
      CompareWithCpu(MakeOpConf("layer_norm_param_grad", grad_counts, attrs), without_gamma,
                     tolerance);
    };
    check(float{}, {1e-5, 1e-4});
    check(double{}, {1e-12, 1e-10});
    const std::map<std::string, HostTensor> half_inputs = {
        {"x_0", Random<float>(shape, 5, -2, 3)},
        {"gamma_0", Random<float>(param_shape, 6)},
        {"beta_0", Random<float>(param_shape, 7)}};
    CompareHalfWithCpu(MakeOpConf("layer_norm", {{"x", 1}, {"gamma", 1}, {"beta", 1}}, attrs),
                       half_inputs, {1e-2, 1e-2});
  }
}

// The random ops hash (seed, iteration, logical index) as the CPU kernels do: the same numbers.
// Also: the GPU dropout's mask keeps about 1 - rate of the elements, equals random_mask_like's,
// and dropout_grad with it scales exactly the kept elements.
TEST(CudaKernels, RandomOps) {
  SKIP_WITHOUT_GPU();
  const Shape shape({37, 129});
  const std::map<std::string, AttrValue> mask_attrs = {MakeAttr("rate", 0.3),
                                                       MakeAttr<int64_t>("seed", 11)};
  const OperatorConf dropout = MakeOpConf("dropout", {{"x", 1}}, mask_attrs);
  CompareWithCpu(dropout, {{"x_0", Random<float>(shape, 1)}}, {0, 0});
  CompareWithCpu(dropout, {{"x_0", Random<double>(shape, 2)}}, {0, 0});
  CompareHalfWithCpu(dropout, {{"x_0", Random<float>(shape, 3)}});
  const OperatorConf mask_like = MakeOpConf("random_mask_like", {{"like", 1}}, mask_attrs);
  CompareWithCpu(mask_like, {{"like_0", Random<float>(shape, 4)}});
  const OperatorConf dropout_grad =
      MakeOpConf("dropout_grad", {{"dy", 1}, {"mask", 1}}, {MakeAttr("scale", 1.0 / 0.7)});
  const HostTensor mask = Random<int8_t>(shape, 5, 0, 2);
  CompareWithCpu(dropout_grad, {{"dy_0", Random<float>(shape, 6)}, {"mask_0", mask}});
  CompareWithCpu(dropout_grad, {{"dy_0", Random<double>(shape, 7)}, {"mask_0", mask}});
  CompareHalfWithCpu(dropout_grad, {{"dy_0", Random<float>(shape, 8)}, {"mask_0", mask}});

  // Forward and gradient on the GPU alone.
  const HostTensor x = Random<float>(shape, 9, 0.5, 1.5);
  DescMap descs = {{"x_0", x.desc}};
  for (const auto& entry : Infer(dropout, descs)) { descs[entry.first] = entry.second; }
  std::map<std::string, HostTensor> forward = RunOnGpu(dropout, descs, {{"x_0", x}}, kFloat);
  const HostTensor& y = forward.at("y_0");
  const HostTensor& gpu_mask = forward.at("mask_0");
  DescMap like_descs = {{"like_0", x.desc}, {"out_0", gpu_mask.desc}};
  const HostTensor like_mask = RunOnGpu(mask_like, like_descs, {{"like_0", x}}, kInt8).at("out_0");
  const HostTensor dy = Random<float>(shape, 10);
  DescMap grad_descs = {{"dy_0", dy.desc}, {"mask_0", gpu_mask.desc}, {"dx_0", dy.desc}};
  const HostTensor dx =
      RunOnGpu(dropout_grad, grad_descs, {{"dy_0", dy}, {"mask_0", gpu_mask}}, kFloat).at("dx_0");
  int64_t kept = 0;
  const int64_t n = shape.elem_count();
  for (int64_t i = 0; i < n; ++i) {
    const int8_t bit = static_cast<const int8_t*>(gpu_mask.data)[i];
    ASSERT_TRUE(bit == 0 || bit == 1);
    ASSERT_EQ(bit, static_cast<const int8_t*>(like_mask.data)[i]) << "element " << i;
    kept += bit;
    const float scale = static_cast<float>(1.0 / 0.7);
    const float expected_y = bit ? static_cast<const float*>(x.data)[i] * scale : 0.0f;
    const float expected_dx = bit ? static_cast<const float*>(dy.data)[i] * scale : 0.0f;
    ASSERT_FLOAT_EQ(static_cast<const float*>(y.data)[i], expected_y) << "element " << i;
    ASSERT_FLOAT_EQ(static_cast<const float*>(dx.data)[i], expected_dx) << "element " << i;
  }
  // 4773 draws with p = 0.7: the standard deviation of the kept fraction is 0.0066.
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.035);

  for (DataType data_type : {kFloat, kDouble}) {
    CompareWithCpu(
        MakeOpConf("random_uniform", {},
                   {MakeAttr("shape", shape), MakeAttr("dtype", data_type), MakeAttr("low", -2.0),
                    MakeAttr("high", 3.0), MakeAttr<int64_t>("seed", 5)}),
        {}, {0, 0});
    CompareWithCpu(
        MakeOpConf("random_normal", {},
                   {MakeAttr("shape", shape), MakeAttr("dtype", data_type), MakeAttr("mean", 1.0),
                    MakeAttr("stddev", 2.0), MakeAttr<int64_t>("seed", 6)}),
        {}, {1e-12, 1e-6});
  }
  for (DataType out_type : {kFloat, kInt8, kInt64}) {
    const OperatorConf bernoulli = MakeOpConf(
        "bernoulli", {{"x", 1}}, {MakeAttr("dtype", out_type), MakeAttr<int64_t>("seed", 7)});
    CompareWithCpu(bernoulli, {{"x_0", Random<float>(shape, 11, 0, 1)}});
    CompareWithCpu(bernoulli, {{"x_0", Random<double>(shape, 12, 0, 1)}});
  }
}

// tril / fused_scale_tril on several diagonals, where with broadcasting, the clips.
TEST(CudaKernels, TrilWhereAndClip) {
  SKIP_WITHOUT_GPU();
  const Shape shape({3, 5, 7});
  for (int64_t diagonal : {-9, -2, 0, 3, 10}) {
    const OperatorConf tril = MakeOpConf(
        "tril", {{"in", 1}}, {MakeAttr("diagonal", diagonal), MakeAttr("fill_value", -2.0)});
    CompareWithCpu(tril, {{"in_0", Random<float>(shape, 1)}}, {0, 0});
    CompareWithCpu(tril, {{"in_0", Random<int64_t>(shape, 2, -50, 50)}});
    CompareHalfWithCpu(tril, {{"in_0", Random<float>(shape, 3)}}, {0, 0});
    const OperatorConf scaled = MakeOpConf(
        "fused_scale_tril", {{"in", 1}},
        {MakeAttr("diagonal", diagonal), MakeAttr("fill_value", 0.0), MakeAttr("scale", 0.5)});
    CompareWithCpu(scaled, {{"in_0", Random<double>(shape, 4)}}, {0, 0});
    CompareHalfWithCpu(scaled, {{"in_0", Random<float>(shape, 5)}});
  }
  const OperatorConf where = MakeOpConf("where", {{"condition", 1}, {"x", 1}, {"y", 1}});
  for (const auto& [condition_shape, x_shape, y_shape] :
       std::vector<std::tuple<Shape, Shape, Shape>>{
           {Shape({4, 6}), Shape({4, 6}), Shape({4, 6})},
           {Shape({4, 1}), Shape({6}), Shape({4, 6})},
           {Shape({2, 1, 6}), Shape({1, 5, 1}), Shape({1})}}) {
    CompareWithCpu(where, {{"condition_0", Random<int8_t>(condition_shape, 1, 0, 2)},
                           {"x_0", Random<float>(x_shape, 2)},
                           {"y_0", Random<float>(y_shape, 3)}});
    CompareWithCpu(where, {{"condition_0", Random<int64_t>(condition_shape, 4, 0, 2)},
                           {"x_0", Random<int32_t>(x_shape, 5, -9, 9)},
                           {"y_0", Random<int32_t>(y_shape, 6, -9, 9)}});
    CompareWithCpu(where, {{"condition_0", Random<int32_t>(condition_shape, 7, 0, 2)},
                           {"x_0", Random<double>(x_shape, 8)},
                           {"y_0", Random<double>(y_shape, 9)}});
  }
  const std::map<std::string, AttrValue> bounds = {MakeAttr("has_min", true),
                                                   MakeAttr("has_max", true),
                                                   MakeAttr("floating_min", -0.5),
                                                   MakeAttr("floating_max", 0.25),
                                                   MakeAttr<int64_t>("integral_min", -3),
                                                   MakeAttr<int64_t>("integral_max", 4)};
  const OperatorConf clip = MakeOpConf("clip_by_scalar", {{"x", 1}}, bounds);
  CompareWithCpu(clip, {{"x_0", Random<float>(shape, 1)}});
  CompareWithCpu(clip, {{"x_0", Random<int8_t>(shape, 2, -9, 9)}});
  CompareWithCpu(clip, {{"x_0", Random<int64_t>(shape, 3, -9, 9)}});
  CompareWithCpu(MakeOpConf("clip_by_scalar", {{"x", 1}},
                            {MakeAttr("has_min", true), MakeAttr("floating_min", 0.1)}),
                 {{"x_0", Random<double>(shape, 4)}});
  CompareWithCpu(MakeOpConf("clip_by_scalar_grad", {{"x", 1}, {"dy", 1}}, bounds),
                 {{"x_0", Random<float>(shape, 5)}, {"dy_0", Random<float>(shape, 6)}});
  // prelu with one alpha per channel and with an alpha per element.
  const Shape image({2, 3, 4, 5});
  for (const Shape& alpha_shape : {Shape({3, 1, 1}), Shape({2, 3, 4, 5})}) {
    CompareWithCpu(MakeOpConf("prelu", {{"x", 1}, {"alpha", 1}}),
                   {{"x_0", Random<float>(image, 7)}, {"alpha_0", Random<float>(alpha_shape, 8)}});
    CompareHalfWithCpu(
        MakeOpConf("prelu", {{"x", 1}, {"alpha", 1}}),
        {{"x_0", Random<float>(image, 9)}, {"alpha_0", Random<float>(alpha_shape, 10)}});
    CompareWithCpu(MakeOpConf("prelu_grad", {{"x", 1}, {"alpha", 1}, {"dy", 1}}),
                   {{"x_0", Random<double>(image, 11)},
                    {"alpha_0", Random<double>(alpha_shape, 12)},
                    {"dy_0", Random<double>(image, 13)}});
  }
}

// broadcast_like, the gradient-clipping and the loss-scaling ops.
TEST(CudaKernels, GradientClippingAndLossScale) {
  SKIP_WITHOUT_GPU();
  const OperatorConf like = MakeOpConf("broadcast_like", {{"x", 1}, {"like", 1}});
  CompareWithCpu(like, {{"x_0", Random<float>(Shape({3, 1}), 1)},
                        {"like_0", Random<float>(Shape({2, 3, 4}), 2)}});
  CompareWithCpu(like, {{"x_0", Random<int64_t>(Shape({5}), 3, -9, 9)},
                        {"like_0", Random<int64_t>(Shape({4, 5}), 4, -9, 9)}});
  CompareWithCpu(
      MakeOpConf("broadcast_like", {{"x", 1}, {"like", 1}},
                 {MakeAttr("broadcast_axes", std::vector<int64_t>{0, 2})}),
      {{"x_0", Random<double>(Shape({3}), 5)}, {"like_0", Random<double>(Shape({2, 3, 4}), 6)}});
  for (const Shape& shape : {Shape({1}), Shape({1000}), Shape({300, 700})}) {
    CompareWithCpu(MakeOpConf("square_sum", {{"x", 1}}), {{"x_0", Random<float>(shape, 7)}},
                   {1e-6, 1e-6});
    CompareWithCpu(MakeOpConf("square_sum", {{"x", 1}}), {{"x_0", Random<double>(shape, 8)}},
                   {1e-6, 1e-6});
    HostTensor x = Random<float>(shape, 9);
    static_cast<float*>(x.data)[0] = std::numeric_limits<float>::infinity();
    static_cast<float*>(x.data)[shape.elem_count() - 1] = std::nanf("");
    CompareWithCpu(MakeOpConf("count_not_finite", {{"x", 1}}), {{"x_0", x}});
    CompareWithCpu(MakeOpConf("count_not_finite", {{"x", 1}}),
                   {{"x_0", Random<double>(shape, 10)}});
  }
  for (double square_sum : {0.25, 9.0}) {
    CompareWithCpu(
        MakeOpConf("global_norm_clip_factor", {{"square_sum", 1}}, {MakeAttr("clip_norm", 2.0)}),
        {{"square_sum_0", MakeTensor(Shape({1}), std::vector<float>{float(square_sum)})}});
  }
  const HostTensor loss_scale = MakeTensor(Shape({1}), std::vector<float>{1024.0f});
  CompareWithCpu(MakeOpConf("loss_scale_inverse", {{"loss_scale", 1}}),
                 {{"loss_scale_0", loss_scale}});
  CompareWithCpu(MakeOpConf("loss_scale_seed", {{"like", 1}, {"loss_scale", 1}}),
                 {{"like_0", Random<double>(Shape({4, 3}), 11)}, {"loss_scale_0", loss_scale}});
  // Overflow (scale halves), a good step, and the step that completes the period (scale grows).
  for (const auto& [not_finite, good_steps] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {0, 0}, {0, 2}}) {
    CompareWithCpu(
        MakeOpConf("dynamic_loss_scale_schedule",
                   {{"count_not_finite", 1}, {"loss_scale", 1}, {"good_step_counter", 1}},
                   {MakeAttr<int64_t>("increment_period", 3), MakeAttr("multiplier", 2.0)}),
        {{"count_not_finite_0", MakeTensor(Shape({1}), std::vector<int64_t>{not_finite})},
         {"loss_scale_0", loss_scale},
         {"good_step_counter_0", MakeTensor(Shape({1}), std::vector<int64_t>{good_steps})}});
  }
  const std::map<std::string, AttrValue> regularize = {MakeAttr("scale", 0.5), MakeAttr("l1", 0.01),
                                                       MakeAttr("l2", 0.1)};
  const Shape shape({17, 9});
  CompareWithCpu(MakeOpConf("scale_regularize_gradient", {{"diff", 1}, {"model", 1}}, regularize),
                 {{"diff_0", Random<float>(shape, 12)}, {"model_0", Random<float>(shape, 13)}});
  CompareWithCpu(MakeOpConf("scale_regularize_gradient",
                            {{"diff", 1}, {"model", 1}, {"scale_by_tensor", 1}}, regularize),
                 {{"diff_0", Random<double>(shape, 14)},
                  {"model_0", Random<double>(shape, 15)},
                  {"scale_by_tensor_0", MakeTensor(Shape({1}), std::vector<float>{0.125f})}});
}

// The fused losses and their gradients.
TEST(CudaKernels, Losses) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : {Shape({5, 7}), Shape({3, 300})}) {
    const Shape rows({shape.At(0)});
    auto check = [&](auto tag, Tolerance tolerance) {
      using T = decltype(tag);
      const HostTensor prediction = Random<T>(shape, 1, -6, 6);
      const HostTensor label = Random<T>(shape, 2, 0, 1);
      const HostTensor dy = Random<T>(shape, 3);
      CompareWithCpu(MakeOpConf("softmax_cross_entropy", {{"prediction", 1}, {"label", 1}}),
                     {{"prediction_0", prediction}, {"label_0", label}}, tolerance);
      CompareWithCpu(
          MakeOpConf("softmax_cross_entropy_grad", {{"prob", 1}, {"label", 1}, {"dy", 1}}),
          {{"prob_0", Random<T>(shape, 4, 0, 1)}, {"label_0", label}, {"dy_0", Random<T>(rows, 5)}},
          tolerance);
      for (const char* op_type : {"sigmoid_cross_entropy", "smooth_l1_loss"}) {
        const std::map<std::string, AttrValue> attrs =
            std::string(op_type) == "smooth_l1_loss"
                ? std::map<std::string, AttrValue>{MakeAttr("beta", 0.7)}
                : std::map<std::string, AttrValue>{};
        CompareWithCpu(MakeOpConf(op_type, {{"prediction", 1}, {"label", 1}}, attrs),
                       {{"prediction_0", prediction}, {"label_0", label}}, tolerance);
        CompareWithCpu(MakeOpConf(std::string(op_type) + "_grad",
                                  {{"prediction", 1}, {"label", 1}, {"dy", 1}}, attrs),
                       {{"prediction_0", prediction}, {"label_0", label}, {"dy_0", dy}}, tolerance);
      }
    };
    check(float{}, {1e-5, 2e-5});
    check(double{}, {1e-12, 1e-12});
    CompareHalfWithCpu(MakeOpConf("smooth_l1_loss", {{"prediction", 1}, {"label", 1}}),
                       {{"prediction_0", Random<float>(shape, 6, -3, 3)},
                        {"label_0", Random<float>(shape, 7, -3, 3)}});
    CompareHalfWithCpu(MakeOpConf("sigmoid_cross_entropy", {{"prediction", 1}, {"label", 1}}),
                       {{"prediction_0", Random<float>(shape, 8, -3, 3)},
                        {"label_0", Random<float>(shape, 9, 0, 1)}});
  }
}

// reduce_prod_grad with no zero, one zero and two zeros in a group.
TEST(CudaKernels, ReduceProdGrad) {
  SKIP_WITHOUT_GPU();
  for (const auto& [shape, axes] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
           {Shape({4, 5, 6}), {1}},
           {Shape({4, 5, 6}), {0, 2}},
           {Shape({4, 5, 6}), {2}},
           {Shape({4, 5, 6}), {0, 1, 2}},
           {Shape({300, 4}), {0}},  // columns in 4 splits: scratch after the groups
       }) {
    Shape dy_dims = shape;
    for (int64_t axis : axes) { dy_dims.Set(axis, 1); }
    HostTensor x = Random<double>(shape, 1, 0.5, 1.5);
    static_cast<double*>(x.data)[0] = 0.0;
    static_cast<double*>(x.data)[7] = 0.0;
    static_cast<double*>(x.data)[13] = 0.0;
    const OperatorConf conf = MakeOpConf("reduce_prod_grad", {{"x", 1}, {"dy", 1}},
                                         {MakeAttr("axis", axes), MakeAttr("keepdims", true)});
    CompareWithCpu(conf, {{"x_0", x}, {"dy_0", Random<double>(dy_dims, 2)}}, {1e-12, 1e-12});
    HostTensor x_float = Random<float>(shape, 3, 0.5, 1.5);
    static_cast<float*>(x_float.data)[5] = 0.0f;
    CompareWithCpu(conf, {{"x_0", x_float}, {"dy_0", Random<float>(dy_dims, 4)}}, {1e-6, 1e-5});
  }
}

}  // namespace
}  // namespace test
}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
