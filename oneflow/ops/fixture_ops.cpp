// OneFlow 0.3's framework-test ops: tiny ops its own tests build with flow.user_op_builder to
// check the user-op machinery (attributes of every type, several outputs, gradients, sources,
// dynamic shapes, placements). They are registered like any op so those tests run unchanged:
//   ccrelu (relu) and ccrelu_grad; TestReshape (same rank) and TestReshape4KeepHeaderOnly (same
//   element count) with TestReshapeLike4KeepHeaderOnly, its gradient; TestSource (0..4, float);
//   TestSourceMultiGpuFixedOutNum (out_num floats split over the devices, each part 0, 1, ...);
//   TestDynamicSource (a dynamic (5,) blob holding 0, 1, 2); TestRandomSource (uniform [0, 1)
//   from std::mt19937 seeded with `seed`, continuing from call to call); TestMultiOutputOrder
//   (out1 = in, out2 zeros twice as wide); TestMultiInput (y = x1) whose gradient op
//   TestMultiInputGrad sets ones for x1 and twos for x2; TestDataTypeAttr and
//   TestListDataTypeAndListShapeAndListStringAttr (outputs typed and shaped by attributes, zeros);
//   test_user_op_attr_auto_type (out = in); cpu_only_relu_test (relu; CPU kernel only).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void CheckFloat(const char* op_type, const char* argument, const BlobDesc& desc) {
  CheckDataTypeIn(op_type, argument, desc.data_type, {kFloat});
}

// A relu-like op: out has in's shape and dtype, split along axis 0 like OneFlow's.
void InferRelu(InferContext& ctx, const char* op_type) {
  const BlobDesc& in = ctx.Input("in");
  CheckFloat(op_type, "in", in);
  ctx.Output("out") = in;
}

// `out` described like input `a`, which input `b` must match in shape and dtype.
void InferMatching(InferContext& ctx, const char* op_type, const char* a, const char* b,
                   const char* out) {
  const BlobDesc& first = ctx.Input(a);
  const BlobDesc& second = ctx.Input(b);
  CheckFloat(op_type, a, first);
  if (!(first.shape == second.shape) || first.data_type != second.data_type) {
    throw Error(ErrorKind::kValue) << op_type << ": " << b << " " << second.ToString()
                                   << " must match " << a << " " << first.ToString();
  }
  ctx.Output(out) = first;
}

// Every argument split along axis 0 when `argument` has more than `min_axes` axes, or along
// any of its axes (every_axis), and all broadcast.
void SplitAlongAxes(SbpContext& ctx, const char* argument, int64_t min_axes, bool every_axis) {
  const int64_t axes = ctx.LogicalInput(argument).shape.num_axes();
  for (int64_t axis = 0; axes > min_axes && axis < (every_axis ? axes : 1); ++axis) {
    ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void SplitFirstAxis(SbpContext& ctx) { SplitAlongAxes(ctx, "in", 0, false); }

void BroadcastOnly(SbpContext& ctx) {
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void SplitSourceOutput(SbpContext& ctx) {
  ctx.NewSignature().SplitAllOutputs(0).Build();
  ctx.NewSignature().BroadcastAllOutputs().Build();
}

void InferReshapeKeepingCount(InferContext& ctx, const char* op_type, const Shape& shape) {
  const BlobDesc& in = ctx.Input("in");
  if (shape.elem_count() != in.shape.elem_count()) {
    throw Error(ErrorKind::kValue) << op_type << ": cannot reshape " << in.shape.ToString()
                                   << " (" << in.shape.elem_count() << " elements) to "
                                   << shape.ToString() << " (" << shape.elem_count()
                                   << " elements)";
  }
  ctx.Output("out") = BlobDesc{shape, in.data_type};
}

}  // namespace

REGISTER_OP("ccrelu")
    .Input("in")
    .Output("out")
    .SetInferFn([](InferContext& ctx) { InferRelu(ctx, "ccrelu"); })
    .SetSbpFn(SplitFirstAxis)
    .SetGradFn([](GradContext& ctx) {
      if (!ctx.NeedInputGrad("in")) { return; }
      ctx.SetInputGrad("in", ctx.AddOp("grad",
                                       OpConfBuilder("ccrelu_grad", "")
                                           .Input("y", ctx.Output("out"))
                                           .Input("dy", ctx.OutputGrad("out")),
                                       "dx"));
    });

REGISTER_OP("ccrelu_grad")
    .Input("y")
    .Input("dy")
    .Output("dx")
    .SetInferFn([](InferContext& ctx) { InferMatching(ctx, "ccrelu_grad", "y", "dy", "dx"); })
    .SetSbpFn([](SbpContext& ctx) { SplitAlongAxes(ctx, "y", 0, false); })
    .NonDifferentiable();

REGISTER_OP("cpu_only_relu_test")
    .Input("in")
    .Output("out")
    .SetInferFn([](InferContext& ctx) { InferRelu(ctx, "cpu_only_relu_test"); })
    .SetSbpFn(SplitFirstAxis)
    .NonDifferentiable();

REGISTER_OP("TestReshape")
    .Input("in")
    .Output("out")
    .RequiredAttr<Shape>("shape")
    .SetInferFn([](InferContext& ctx) {
      const Shape shape = ctx.Attr<Shape>("shape");
      const BlobDesc& in = ctx.Input("in");
      if (shape.num_axes() != in.shape.num_axes()) {
        throw Error(ErrorKind::kValue)
            << "TestReshape: shape " << shape.ToString() << " must have the rank of the input "
            << in.shape.ToString();
      }
      InferReshapeKeepingCount(ctx, "TestReshape", shape);
    })
    .SetSbpFn(BroadcastOnly)
    .NonDifferentiable();

REGISTER_OP("TestReshape4KeepHeaderOnly")
    .Input("in")
    .Output("out")
    .RequiredAttr<Shape>("shape")
    .SetInferFn([](InferContext& ctx) {
      InferReshapeKeepingCount(ctx, "TestReshape4KeepHeaderOnly", ctx.Attr<Shape>("shape"));
    })
    .SetSbpFn(BroadcastOnly)
    .SetGradFn([](GradContext& ctx) {
      if (!ctx.NeedInputGrad("in")) { return; }
      ctx.SetInputGrad("in", ctx.AddOp("grad", OpConfBuilder("TestReshapeLike4KeepHeaderOnly", "")
                                                   .Input("in", ctx.OutputGrad("out"))
                                                   .Input("like", ctx.Input("in"))));
    });

REGISTER_OP("TestReshapeLike4KeepHeaderOnly")
    .Input("in")
    .Input("like")
    .Output("out")
    .NoGradInput("like")
    .SetInferFn([](InferContext& ctx) {
      InferReshapeKeepingCount(ctx, "TestReshapeLike4KeepHeaderOnly", ctx.Input("like").shape);
    })
    .SetSbpFn(BroadcastOnly)
    .NonDifferentiable();

REGISTER_OP("TestSource")
    .Output("out")
    .SetInferFn([](InferContext& ctx) { ctx.Output("out") = BlobDesc{Shape({5}), kFloat}; })
    .SetSbpFn(SplitSourceOutput)
    .NonDifferentiable();

REGISTER_OP("TestSourceMultiGpuFixedOutNum")
    .Output("out")
    .RequiredAttr<int64_t>("out_num")
    .SetInferFn([](InferContext& ctx) {
      const int64_t out_num = ctx.Attr<int64_t>("out_num");
      if (out_num < 0) {
        throw Error(ErrorKind::kValue)
            << "TestSourceMultiGpuFixedOutNum: out_num must be >= 0, got " << out_num;
      }
      ctx.Output("out") = BlobDesc{Shape({out_num}), kFloat};
    })
    .SetSbpFn([](SbpContext& ctx) { ctx.NewSignature().SplitAllOutputs(0).Build(); })
    .NonDifferentiable();

REGISTER_OP("TestDynamicSource")
    .Output("out")
    .InfersDynamic()
    .SetInferFn([](InferContext& ctx) { ctx.Output("out") = BlobDesc{Shape({5}), kFloat, true}; })
    .SetSbpFn(BroadcastOnly)
    .NonDifferentiable();

REGISTER_OP("TestRandomSource")
    .Output("out")
    .Attr<int64_t>("seed", 0)
    .SetInferFn([](InferContext& ctx) { ctx.Output("out") = BlobDesc{Shape({5}), kFloat}; })
    .SetSbpFn(BroadcastOnly)
    .NonDifferentiable();

REGISTER_OP("TestMultiOutputOrder")
    .Input("in")
    .Output("out1")
    .Output("out2")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& in = ctx.Input("in");
      CheckFloat("TestMultiOutputOrder", "in", in);
      if (in.shape.num_axes() == 0) {
        throw Error(ErrorKind::kValue) << "TestMultiOutputOrder: in must have an axis, got "
                                       << in.shape.ToString();
      }
      std::vector<int64_t> dims = in.shape.dims();
      dims.back() *= 2;
      ctx.Output("out1") = in;
      ctx.Output("out2") = BlobDesc{Shape(dims), in.data_type};
    })
    .SetSbpFn([](SbpContext& ctx) { SplitAlongAxes(ctx, "in", 1, false); })
    .NonDifferentiable();

REGISTER_OP("TestMultiInput")
    .Input("x1")
    .Input("x2")
    .Output("y")
    .SetInferFn([](InferContext& ctx) { InferMatching(ctx, "TestMultiInput", "x1", "x2", "y"); })
    .SetSbpFn([](SbpContext& ctx) { SplitAlongAxes(ctx, "x1", 0, true); })
    .SetGradFn([](GradContext& ctx) {
      if (!ctx.NeedInputGrad("x1") && !ctx.NeedInputGrad("x2")) { return; }
      const std::string x1_diff = ctx.AddOp("grad",
                                            OpConfBuilder("TestMultiInputGrad", "")
                                                .Input("x1", ctx.Input("x1"))
                                                .Input("x2", ctx.Input("x2"))
                                                .Input("y_diff", ctx.OutputGrad("y")),
                                            "x1_diff");
      if (ctx.NeedInputGrad("x1")) { ctx.SetInputGrad("x1", x1_diff); }
      if (ctx.NeedInputGrad("x2")) {
        ctx.SetInputGrad("x2", MakeLbn(OpNameOfLbn(x1_diff), "x2_diff"));
      }
    });

REGISTER_OP("TestMultiInputGrad")
    .Input("x1")
    .Input("x2")
    .Input("y_diff")
    .Output("x1_diff")
    .Output("x2_diff")
    .SetInferFn([](InferContext& ctx) {
      ctx.Output("x1_diff") = ctx.Input("x1");
      ctx.Output("x2_diff") = ctx.Input("x2");
    })
    .SetSbpFn([](SbpContext& ctx) { SplitAlongAxes(ctx, "x1", 0, true); })
    .NonDifferentiable();

REGISTER_OP("TestDataTypeAttr")
    .Input("in")
    .Output("out")
    .RequiredAttr<DataType>("output_type")
    .KernelDataTypeFrom("in")
    .SetInferFn([](InferContext& ctx) {
      const DataType output_type = ctx.Attr<DataType>("output_type");
      CheckDataTypeIn("TestDataTypeAttr", "output_type", output_type,
                      {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8});
      ctx.Output("out") = BlobDesc{ctx.Input("in").shape, output_type};
    })
    .SetSbpFn(BroadcastOnly)
    .NonDifferentiable();

REGISTER_OP("TestListDataTypeAndListShapeAndListStringAttr")
    .Input("in")
    .VariadicOutput("out", "out_shapes")
    .RequiredAttr<std::vector<Shape>>("out_shapes")
    .RequiredAttr<std::vector<DataType>>("out_types")
    .RequiredAttr<std::vector<std::string>>("string_list")
    .KernelDataTypeFrom("in")
    .SetInferFn([](InferContext& ctx) {
      const char* op_type = "TestListDataTypeAndListShapeAndListStringAttr";
      const auto shapes = ctx.Attr<std::vector<Shape>>("out_shapes");
      const auto types = ctx.Attr<std::vector<DataType>>("out_types");
      if (shapes.size() != 3 || types.size() != 3) {
        throw Error(ErrorKind::kValue) << op_type << ": out_shapes and out_types must have 3 "
                                       << "entries (one per output), got " << shapes.size()
                                       << " and " << types.size();
      }
      if (ctx.Attr<std::vector<std::string>>("string_list").empty()) {
        throw Error(ErrorKind::kValue) << op_type << ": string_list must not be empty";
      }
      for (size_t i = 0; i < shapes.size(); ++i) {
        CheckDataTypeIn(op_type, "out_types", types[i],
                        {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8});
        ctx.Output("out", static_cast<int64_t>(i)) = BlobDesc{shapes[i], types[i]};
      }
    })
    .SetSbpFn(BroadcastOnly)
    .NonDifferentiable();

REGISTER_OP("test_user_op_attr_auto_type")
    .Input("in")
    .Output("out")
    .Attr<int64_t>("int1", 0)
    .Attr<int64_t>("int2", 0)
    .SetInferFn([](InferContext& ctx) { ctx.Output("out") = ctx.Input("in"); })
    .SetSbpFn(BroadcastOnly)
    .NonDifferentiable();

}  // namespace oneflow
