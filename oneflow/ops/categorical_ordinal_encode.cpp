// categorical_ordinal_encode (OneFlow 0.3's flow.categorical_ordinal_encode): maps each value of
// `in` (an int32/int64 hash of a category) to a small ordinal, 1, 2, 3, ... in the order values
// are first seen, remembered across calls in the variables `table` (capacity * 2 entries:
// open-addressing (key, ordinal) pairs, key 0 marking a free slot) and `size` (the ordinals
// given so far), both of in's dtype and updated in place. 0 always maps to 0. The whole input
// goes through one table in order, so every device holds the same (broadcast) table.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

REGISTER_OP("categorical_ordinal_encode")
    .Input("in")
    .Input("table")
    .Input("size")
    .MutableInput("table")
    .MutableInput("size")
    .Output("out")
    .Attr<bool>("hash_precomputed", true)
    .KernelDataTypeFrom("in")
    .SetInferFn([](InferContext& ctx) {
      const std::string op_type = "categorical_ordinal_encode";
      const BlobDesc& in = ctx.Input("in");
      const BlobDesc& table = ctx.Input("table");
      const BlobDesc& size = ctx.Input("size");
      CheckDataTypeIn(op_type, "in", in.data_type, {kInt32, kInt64});
      if (!ctx.Attr<bool>("hash_precomputed")) {
        throw Error(ErrorKind::kNotImplemented)
            << op_type << ": only hash_precomputed=True is supported (the input holds hashes)";
      }
      if (table.data_type != in.data_type || size.data_type != in.data_type) {
        throw Error(ErrorKind::kValue)
            << op_type << ": table and size must have in's dtype " << DataTypeName(in.data_type)
            << ", got " << DataTypeName(table.data_type) << " and "
            << DataTypeName(size.data_type);
      }
      if (table.shape.num_axes() != 1 || table.shape.At(0) < 2 || table.shape.At(0) % 2 != 0) {
        throw Error(ErrorKind::kValue) << op_type << ": table must be 1-D with an even number "
                                       << "(2 * capacity) of entries, got "
                                       << table.shape.ToString();
      }
      if (size.shape != Shape({1})) {
        throw Error(ErrorKind::kValue) << op_type << ": size must have shape (1,), got "
                                       << size.shape.ToString();
      }
      ctx.Output("out") = in;
    })
    .SetSbpFn([](SbpContext& ctx) {
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
