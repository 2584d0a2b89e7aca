// distributed_partial_fc_sample (OneFlow 0.3, partial FC for classifiers with very many
// classes): the weight (num_classes, D) is split over the devices along its classes (S(0)); each
// device keeps num_sample / devices of its classes: first the distinct labels that fall in its
// range (ascending), then random other classes of its range to fill the rest.
//   sampled_label (num_sample,)    the kept class ids, device after device (S(0))
//   sampled_weight (num_sample, D) their weight rows (S(0)); its gradient is scattered back into
//                                  the weight's rows (unsorted_segment_sum_like)
//   mapped_label (batch,)          each label's position in sampled_label: every device writes
//                                  the positions of the labels in its range and 0 elsewhere, so
//                                  the devices' outputs add up to it (P)
// On one device all classes are that device's range.

#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

REGISTER_OP("distributed_partial_fc_sample")
    .Input("weight")
    .Input("label")
    .Output("mapped_label")
    .Output("sampled_label")
    .Output("sampled_weight")
    .RequiredAttr<int64_t>("num_sample")
    .Attr<int64_t>("seed", 0)
    .NoGradInput("label")
    .KernelDataTypeFrom("weight")
    .SetInferFn([](InferContext& ctx) {
      const char* op = "distributed_partial_fc_sample";
      const BlobDesc& weight = ctx.Input("weight");
      const BlobDesc& label = ctx.Input("label");
      CheckDataTypeIn(op, "weight", weight.data_type, {kFloat, kDouble});
      CheckDataTypeIn(op, "label", label.data_type, IndexDataTypes());
      if (weight.shape.num_axes() != 2) {
        throw Error(ErrorKind::kValue) << op << ": weight must be (num_classes, width), got "
                                       << weight.shape.ToString();
      }
      if (label.shape.num_axes() != 1) {
        throw Error(ErrorKind::kValue) << op << ": label must be (batch,), got "
                                       << label.shape.ToString();
      }
      const int64_t num_sample = ctx.Attr<int64_t>("num_sample");
      if (num_sample < 1 || num_sample > weight.shape.At(0)) {
        throw Error(ErrorKind::kValue) << op << ": num_sample " << num_sample
                                       << " must be in [1, num_classes " << weight.shape.At(0)
                                       << "]";
      }
      ctx.Output("mapped_label") = label;
      ctx.Output("sampled_label") = BlobDesc{Shape({num_sample}), label.data_type};
      ctx.Output("sampled_weight") =
          BlobDesc{Shape({num_sample, weight.shape.At(1)}), weight.data_type};
    })
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature()
          .Split("weight", 0)
          .Broadcast("label")
          .PartialSum("mapped_label")
          .Split("sampled_label", 0)
          .Split("sampled_weight", 0)
          .Build();
    })
    .SetGradFn([](GradContext& ctx) {
      if (!ctx.NeedInputGrad("weight")) { return; }
      ctx.SetInputGrad("weight", ctx.AddOp("weight_grad",
                                           OpConfBuilder("unsorted_segment_sum_like", "")
                                               .Input("data", ctx.OutputGrad("sampled_weight"))
                                               .Input("segment_ids", ctx.Output("sampled_label"))
                                               .Input("like", ctx.Input("weight"))));
    });

}  // namespace oneflow
