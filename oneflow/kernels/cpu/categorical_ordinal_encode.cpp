// CPU categorical_ordinal_encode (semantics in oneflow/ops/categorical_ordinal_encode.cpp): one
// pass over the input in order, linear probing from key % capacity.

#include <string>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"

namespace oneflow {

namespace {

template <typename T>
class CategoricalOrdinalEncodeKernel final : public Kernel {
 public:
  explicit CategoricalOrdinalEncodeKernel(const KernelInitContext& ctx)
      : op_name_(ctx.conf().name()) {}

  void Forward(KernelContext& ctx) override {
    const Blob& in = ctx.Input("in");
    Blob& table_blob = ctx.MutableInput("table");
    T* table = table_blob.mut_data<T>();
    T* size = ctx.MutableInput("size").mut_data<T>();
    const uint64_t capacity = static_cast<uint64_t>(table_blob.elem_count() / 2);
    const T* keys = in.data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    for (int64_t i = 0; i < in.elem_count(); ++i) {
      const T key = keys[i];
      out[i] = key == T(0) ? T(0) : Lookup(table, size, capacity, key);
    }
  }

 private:
  T Lookup(T* table, T* size, uint64_t capacity, T key) const {
    const uint64_t start = static_cast<uint64_t>(key) % capacity;
    for (uint64_t probe = 0; probe < capacity; ++probe) {
      T* slot = table + 2 * ((start + probe) % capacity);
      if (slot[0] == key) { return slot[1]; }
      if (slot[0] == T(0)) {
        slot[0] = key;
        slot[1] = ++*size;
        return slot[1];
      }
    }
    throw Error(ErrorKind::kValue)
        << "categorical_ordinal_encode (op '" << op_name_ << "'): the table is full: all "
        << capacity << " slots hold categories; make the encoder's capacity larger";
  }

  std::string op_name_;
};

}  // namespace

REGISTER_KERNEL("categorical_ordinal_encode", "cpu", kInt32, CategoricalOrdinalEncodeKernel<int32_t>);
REGISTER_KERNEL("categorical_ordinal_encode", "cpu", kInt64, CategoricalOrdinalEncodeKernel<int64_t>);

}  // namespace oneflow
