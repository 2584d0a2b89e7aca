#include "oneflow/comm/nccl_collective_plan.h"

#include <algorithm>
#include <utility>

#include "oneflow/comm/communicator.h"
#include "oneflow/common/error.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

using Dims = std::vector<int64_t>;

int64_t Product(const Dims& dims) {
  int64_t product = 1;
  for (int64_t dim : dims) { product *= dim; }
  return product;
}

std::string DimsText(const Dims& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) { text += ","; }
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

Dims Minus(const Dims& a, const Dims& b) {
  Dims result(a.size());
  for (size_t i = 0; i < a.size(); ++i) { result[i] = a[i] - b[i]; }
  return result;
}

// Fewer axes, the same elements: the kernel's index arithmetic is per axis, and a contiguous
// block becomes one axis. Two rules, to a fixed point: an axis whole in both tensors merges into
// the axis before it; a leading axis of extent 1 moves into the bases (its stride is the product
// of the axes after it, which stay).
void Coalesce(BoxCopy* copy) {
  bool changed = true;
  while (changed && copy->extent.size() > 1) {
    changed = false;
    for (size_t axis = copy->extent.size() - 1; axis > 0; --axis) {
      const int64_t dim = copy->extent[axis];
      if (copy->src_dims[axis] != dim || copy->dst_dims[axis] != dim) { continue; }
      for (Dims* dims :
           {&copy->src_dims, &copy->dst_dims, &copy->src_begin, &copy->dst_begin, &copy->extent}) {
        (*dims)[axis - 1] *= dim;
        dims->erase(dims->begin() + static_cast<std::ptrdiff_t>(axis));
      }
      changed = true;
      break;
    }
    if (!changed && copy->extent.size() > 1 && copy->extent[0] == 1) {
      copy->src_base +=
          copy->src_begin[0] * Product(Dims(copy->src_dims.begin() + 1, copy->src_dims.end()));
      copy->dst_base +=
          copy->dst_begin[0] * Product(Dims(copy->dst_dims.begin() + 1, copy->dst_dims.end()));
      for (Dims* dims :
           {&copy->src_dims, &copy->dst_dims, &copy->src_begin, &copy->dst_begin, &copy->extent}) {
        dims->erase(dims->begin());
      }
      changed = true;
    }
  }
}

BoxCopy MakeCopy(PlanBuffer src, int64_t src_base, const Dims& src_dims, const Dims& src_begin,
                 PlanBuffer dst, int64_t dst_base, const Dims& dst_dims, const Dims& dst_begin,
                 const Dims& extent) {
  BoxCopy copy;
  copy.src = src;
  copy.src_base = src_base;
  copy.src_dims = src_dims;
  copy.src_begin = src_begin;
  copy.dst = dst;
  copy.dst_base = dst_base;
  copy.dst_dims = dst_dims;
  copy.dst_begin = dst_begin;
  copy.extent = extent;
  Coalesce(&copy);
  return copy;
}

// A whole part copied flat between two buffers (the chunk of a staging buffer holds a part in
// the row-major order of the part's own shape).
BoxCopy FlatCopy(PlanBuffer src, int64_t src_base, PlanBuffer dst, int64_t dst_base,
                 int64_t count) {
  return MakeCopy(src, src_base, {count}, {0}, dst, dst_base, {count}, {0}, {count});
}

// Whether the box (begin, extent) of a row-major tensor of `dims` is one contiguous range, and
// where it starts: every axis after the first one of extent > 1 is whole.
bool ContiguousRange(const Dims& dims, const Dims& begin, const Dims& extent, int64_t* offset) {
  size_t first = 0;
  while (first < extent.size() && extent[first] == 1) { ++first; }
  for (size_t axis = first + 1; axis < extent.size(); ++axis) {
    if (extent[axis] != dims[axis]) { return false; }
  }
  *offset = 0;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    *offset = *offset * dims[axis] + begin[axis];
  }
  return true;
}

// Part q of a split along `axis` is one contiguous range of the row-major tensor, at q times
// the part's size, exactly where NCCL puts chunk q: the axes before `axis` have size 1 and the
// split is even.
bool NcclLayout(const Shape& logical, const SbpParallel& split, int64_t ranks) {
  const int64_t axis = split.split_parallel().axis();
  return logical.Count(0, axis) == 1 && logical.At(axis) % ranks == 0;
}

struct Planner {
  const Shape& logical;
  const SbpParallel& src;
  const SbpParallel& dst;
  int64_t ranks;
  int64_t rank;

  TensorSlice Src(int64_t r) const { return SliceOfPart(logical, src, r, ranks); }
  TensorSlice Dst(int64_t r) const { return SliceOfPart(logical, dst, r, ranks); }
  Dims Zeros() const { return Dims(logical.num_axes(), 0); }

  NcclCollectivePlan AllReduce() const {
    NcclCollectivePlan plan;
    plan.primitive = NcclPrimitive::kAllReduce;
    plan.chunk = logical.elem_count();
    plan.send_from_input = plan.recv_into_output = true;
    plan.input_elems = plan.output_elems = logical.elem_count();
    return plan;
  }

  NcclCollectivePlan ReduceScatter() const {
    NcclCollectivePlan plan;
    plan.primitive = NcclPrimitive::kReduceScatter;
    for (int64_t q = 0; q < ranks; ++q) { plan.chunk = std::max(plan.chunk, Dst(q).elem_count()); }
    const TensorSlice mine = Dst(rank);
    plan.input_elems = logical.elem_count();
    plan.output_elems = mine.elem_count();
    if (NcclLayout(logical, dst, ranks)) {
      plan.send_from_input = plan.recv_into_output = true;
      return plan;
    }
    // Chunk q of the send staging: rank q's slice of this rank's addend.
    plan.send_staging = ranks * plan.chunk;
    for (int64_t q = 0; q < ranks; ++q) {
      const TensorSlice theirs = Dst(q);
      if (theirs.empty()) { continue; }
      plan.pack.push_back(MakeCopy(PlanBuffer::kInput, 0, logical.dims(), theirs.begin,
                                   PlanBuffer::kSendStaging, q * plan.chunk, theirs.extent, Zeros(),
                                   theirs.extent));
    }
    // The reduced chunk is the own slice in its own row-major order, then padding: a part of the
    // largest size fills the output exactly.
    plan.recv_into_output = mine.elem_count() == plan.chunk;
    if (!plan.recv_into_output) {
      plan.recv_staging = plan.chunk;
      if (!mine.empty()) {
        plan.unpack.push_back(
            FlatCopy(PlanBuffer::kRecvStaging, 0, PlanBuffer::kOutput, 0, mine.elem_count()));
      }
    }
    return plan;
  }

  NcclCollectivePlan AllGather() const {
    NcclCollectivePlan plan;
    plan.primitive = NcclPrimitive::kAllGather;
    for (int64_t q = 0; q < ranks; ++q) { plan.chunk = std::max(plan.chunk, Src(q).elem_count()); }
    const TensorSlice mine = Src(rank);
    plan.input_elems = mine.elem_count();
    plan.output_elems = logical.elem_count();
    if (NcclLayout(logical, src, ranks)) {
      plan.send_from_input = plan.recv_into_output = true;
      return plan;
    }
    // A part smaller than the chunk is padded (NCCL would read past the input).
    plan.send_from_input = mine.elem_count() == plan.chunk;
    if (!plan.send_from_input) {
      plan.send_staging = plan.chunk;
      if (!mine.empty()) {
        plan.pack.push_back(
            FlatCopy(PlanBuffer::kInput, 0, PlanBuffer::kSendStaging, 0, mine.elem_count()));
      }
    }
    plan.recv_staging = ranks * plan.chunk;
    for (int64_t q = 0; q < ranks; ++q) {
      const TensorSlice theirs = Src(q);
      if (theirs.empty()) { continue; }
      plan.unpack.push_back(MakeCopy(PlanBuffer::kRecvStaging, q * plan.chunk, theirs.extent,
                                     Zeros(), PlanBuffer::kOutput, 0, logical.dims(), theirs.begin,
                                     theirs.extent));
    }
    return plan;
  }

  NcclCollectivePlan AllToAll() const {
    NcclCollectivePlan plan;
    plan.primitive = NcclPrimitive::kSendRecv;
    for (int64_t r = 0; r < ranks; ++r) {
      for (int64_t q = 0; q < ranks; ++q) {
        if (r != q) { plan.chunk = std::max(plan.chunk, Intersect(Src(r), Dst(q)).elem_count()); }
      }
    }
    const TensorSlice in = Src(rank);
    const TensorSlice out = Dst(rank);
    plan.input_elems = in.elem_count();
    plan.output_elems = out.elem_count();
    bool send_staged = false;
    bool recv_staged = false;
    for (int64_t q = 0; q < ranks; ++q) {
      // What this rank holds of rank q's output.
      const TensorSlice block = Intersect(in, Dst(q));
      if (block.empty()) { continue; }
      const Dims corner = Minus(block.begin, in.begin);
      if (q == rank) {
        plan.pack.push_back(MakeCopy(PlanBuffer::kInput, 0, in.extent, corner, PlanBuffer::kOutput,
                                     0, out.extent, Minus(block.begin, out.begin), block.extent));
        continue;
      }
      PeerTransfer send{q, PlanBuffer::kInput, 0, block.elem_count()};
      if (!ContiguousRange(in.extent, corner, block.extent, &send.offset)) {
        send_staged = true;
        send.buffer = PlanBuffer::kSendStaging;
        send.offset = q * plan.chunk;
        plan.pack.push_back(MakeCopy(PlanBuffer::kInput, 0, in.extent, corner,
                                     PlanBuffer::kSendStaging, send.offset, block.extent, Zeros(),
                                     block.extent));
      }
      plan.sends.push_back(send);
    }
    for (int64_t q = 0; q < ranks; ++q) {
      // What rank q holds of this rank's output.
      const TensorSlice block = Intersect(Src(q), out);
      if (block.empty() || q == rank) { continue; }
      const Dims corner = Minus(block.begin, out.begin);
      PeerTransfer recv{q, PlanBuffer::kOutput, 0, block.elem_count()};
      if (!ContiguousRange(out.extent, corner, block.extent, &recv.offset)) {
        recv_staged = true;
        recv.buffer = PlanBuffer::kRecvStaging;
        recv.offset = q * plan.chunk;
        plan.unpack.push_back(MakeCopy(PlanBuffer::kRecvStaging, recv.offset, block.extent, Zeros(),
                                       PlanBuffer::kOutput, 0, out.extent, corner, block.extent));
      }
      plan.recvs.push_back(recv);
    }
    plan.send_staging = send_staged ? ranks * plan.chunk : 0;
    plan.recv_staging = recv_staged ? ranks * plan.chunk : 0;
    plan.send_from_input = !send_staged;
    plan.recv_into_output = !recv_staged;
    return plan;
  }
};

}  // namespace

const char* PlanBufferName(PlanBuffer buffer) {
  switch (buffer) {
    case PlanBuffer::kInput:
      return "input";
    case PlanBuffer::kOutput:
      return "output";
    case PlanBuffer::kSendStaging:
      return "send";
    case PlanBuffer::kRecvStaging:
      return "recv";
  }
  return "invalid_buffer";
}

const char* NcclPrimitiveName(NcclPrimitive primitive) {
  switch (primitive) {
    case NcclPrimitive::kAllReduce:
      return "ncclAllReduce";
    case NcclPrimitive::kReduceScatter:
      return "ncclReduceScatter";
    case NcclPrimitive::kAllGather:
      return "ncclAllGather";
    case NcclPrimitive::kSendRecv:
      return "ncclSend/ncclRecv";
  }
  return "invalid_primitive";
}

int64_t BoxCopy::elem_count() const { return Product(extent); }

std::string BoxCopy::ToString() const {
  return std::string(PlanBufferName(src)) + "+" + std::to_string(src_base) + " " +
         DimsText(src_dims) + " @" + DimsText(src_begin) + " -> " + PlanBufferName(dst) + "+" +
         std::to_string(dst_base) + " " + DimsText(dst_dims) + " @" + DimsText(dst_begin) +
         " extent " + DimsText(extent);
}

std::string NcclCollectivePlan::ToString() const {
  std::string text = std::string(NcclPrimitiveName(primitive)) + " chunk " + std::to_string(chunk) +
                     ", input " + std::to_string(input_elems) + ", output " +
                     std::to_string(output_elems) + ", staging send " +
                     std::to_string(send_staging) + " recv " + std::to_string(recv_staging) +
                     (send_from_input ? ", sends from input" : "") +
                     (recv_into_output ? ", receives into output" : "");
  for (const BoxCopy& copy : pack) { text += "\n  pack " + copy.ToString(); }
  for (const PeerTransfer& send : sends) {
    text += "\n  send " + std::to_string(send.count) + " to " + std::to_string(send.peer) +
            " from " + PlanBufferName(send.buffer) + "+" + std::to_string(send.offset);
  }
  for (const PeerTransfer& recv : recvs) {
    text += "\n  recv " + std::to_string(recv.count) + " from " + std::to_string(recv.peer) +
            " into " + PlanBufferName(recv.buffer) + "+" + std::to_string(recv.offset);
  }
  for (const BoxCopy& copy : unpack) { text += "\n  unpack " + copy.ToString(); }
  return text;
}

NcclCollectivePlan PlanNcclCollective(CollectiveKind kind, const Shape& logical,
                                      const SbpParallel& src, const SbpParallel& dst, int64_t ranks,
                                      int64_t rank) {
  OF_CHECK(ranks >= 1 && rank >= 0 && rank < ranks)
      << "NCCL plan for rank " << rank << " of " << ranks;
  const bool fits =
      kind == kAllReduce       ? src.has_partial_sum_parallel() && dst.has_broadcast_parallel()
      : kind == kReduceScatter ? src.has_partial_sum_parallel() && dst.has_split_parallel()
      : kind == kAllGather     ? src.has_split_parallel() && dst.has_broadcast_parallel()
      : kind == kAllToAll      ? src.has_split_parallel() && dst.has_split_parallel()
                               : false;
  OF_CHECK(fits) << "no NCCL plan for " << CollectiveKindName(kind) << " from " << SbpToString(src)
                 << " to " << SbpToString(dst) << " of shape " << logical.ToString();
  OF_CHECK(kind == kAllReduce || (logical.num_axes() >= 1 && logical.num_axes() <= kMaxBoxCopyAxes))
      << CollectiveKindName(kind) << " of shape " << logical.ToString()
      << " on GPUs: split blobs of 1 to " << kMaxBoxCopyAxes << " axes only";
  const Planner planner{logical, src, dst, ranks, rank};
  switch (kind) {
    case kAllReduce:
      return planner.AllReduce();
    case kReduceScatter:
      return planner.ReduceScatter();
    case kAllGather:
      return planner.AllGather();
    default:
      return planner.AllToAll();
  }
}

}  // namespace oneflow
