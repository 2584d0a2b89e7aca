#include "oneflow/compiler/boxing/reshard.h"

#include "oneflow/comm/communicator.h"
#include "oneflow/comm/nccl_collective_plan.h"
#include "oneflow/common/error.h"
#include "oneflow/framework/attr.h"
#include "oneflow/framework/op_conf_util.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

int64_t Count(const BlobLayout& layout) { return static_cast<int64_t>(layout.devices.size()); }

SbpParallel Normalized(const BlobLayout& layout) {
  return SbpOverDevices(layout.sbp, Count(layout));
}

bool SameDevice(const DeviceId& a, const DeviceId& b) {
  return a.machine == b.machine && a.device == b.device;
}

bool SameDevices(const BlobLayout& a, const BlobLayout& b) {
  if (a.devices.size() != b.devices.size()) { return false; }
  for (size_t i = 0; i < a.devices.size(); ++i) {
    if (!SameDevice(a.devices[i], b.devices[i])) { return false; }
  }
  return true;
}

std::string DeviceText(const DeviceId& device) {
  return std::to_string(device.machine) + ":" + std::to_string(device.device);
}

void AppendSlice(std::vector<int64_t>* values, const TensorSlice& slice) {
  values->insert(values->end(), slice.begin.begin(), slice.begin.end());
  values->insert(values->end(), slice.extent.begin(), slice.extent.end());
}

// One part of the target layout and how it is assembled.
struct Assembly {
  std::vector<int64_t> sources;  // source parallel ids, in order
  bool sum = false;              // add the sources (partial sums)
  bool zero_fill = false;        // zero what the sources do not cover
};

class Resharder {
 public:
  Resharder(TaskGraph& graph, const std::string& lbn, const BlobDesc& logical,
            const BlobLayout& src, const std::vector<int64_t>& src_nodes, const BlobLayout& dst)
      : graph_(graph),
        lbn_(lbn),
        logical_(logical),
        src_(src),
        src_nodes_(src_nodes),
        dst_(dst),
        src_sbp_(Normalized(src)),
        dst_sbp_(Normalized(dst)) {}

  // GPU blobs on the same GPUs (of any machines): every conversion that communicates is an NCCL
  // collective on the GPUs, whatever the split axes and however uneven (the communicator packs
  // parts into NCCL's equal chunks: nccl_collective_plan.h). False for the local conversions
  // (B -> S, B -> P, S -> P) and split blobs of more axes than the GPU's box copies index, which
  // the host boxes.
  bool NcclCollective(std::vector<int64_t>* nodes) {
    if (!SameDevices(src_, dst_) || Count(src_) < 2) { return false; }
    CollectiveKind kind = kInvalidCollective;
    if (src_sbp_.has_partial_sum_parallel() && dst_sbp_.has_broadcast_parallel()) {
      kind = kAllReduce;
    } else if (src_sbp_.has_partial_sum_parallel() && dst_sbp_.has_split_parallel()) {
      kind = kReduceScatter;
    } else if (src_sbp_.has_split_parallel() && dst_sbp_.has_broadcast_parallel()) {
      kind = kAllGather;
    } else if (src_sbp_.has_split_parallel() && dst_sbp_.has_split_parallel()) {
      kind = kAllToAll;
    } else {
      return false;
    }
    const int64_t axes = logical_.shape.num_axes();
    if (kind != kAllReduce && (axes < 1 || axes > kMaxBoxCopyAxes)) { return false; }
    *nodes = Collective(kind, /*on_gpu=*/true);
    return true;
  }

  // GPU blobs on the same GPUs whose conversion needs no communication (B -> S, B -> P, S -> P):
  // each GPU converts its own part with a slice_boxing node on the GPU; false otherwise.
  bool LocalConversionOnGpu(std::vector<int64_t>* nodes) {
    if (!SameDevices(src_, dst_) || src_sbp_.has_partial_sum_parallel()) { return false; }
    const bool local = src_sbp_.has_broadcast_parallel() ||
                       (src_sbp_.has_split_parallel() && dst_sbp_.has_partial_sum_parallel());
    if (!local || logical_.shape.num_axes() > kMaxBoxCopyAxes) { return false; }
    on_gpu_ = true;
    *nodes = LocalConversion();
    return true;
  }

  std::vector<int64_t> Run() {
    if (SameDevices(src_, dst_) && SameSbp(src_sbp_, dst_sbp_)) { return src_nodes_; }
    std::vector<int64_t> direct;
    if (DirectReads(&direct)) { return direct; }
    if (SameDevices(src_, dst_)) {
      if (src_sbp_.has_partial_sum_parallel()) {
        return Collective(dst_sbp_.has_broadcast_parallel() ? kAllReduce : kReduceScatter);
      }
      if (src_sbp_.has_split_parallel() && dst_sbp_.has_broadcast_parallel()) {
        return Collective(kAllGather);
      }
      if (src_sbp_.has_split_parallel() && dst_sbp_.has_split_parallel()) {
        return Collective(kAllToAll);
      }
      return LocalConversion();
    }
    return General();
  }

 private:
  TensorSlice SrcSlice(int64_t id) const {
    return SliceOfPart(logical_.shape, src_sbp_, id, Count(src_));
  }
  TensorSlice DstSlice(int64_t id) const {
    return SliceOfPart(logical_.shape, dst_sbp_, id, Count(dst_));
  }

  // Each target part is a whole source part (prefer the one on the same device): the consumer
  // reads that register as it is.
  bool DirectReads(std::vector<int64_t>* nodes) const {
    if (src_sbp_.has_partial_sum_parallel() || dst_sbp_.has_partial_sum_parallel()) {
      return false;
    }
    for (int64_t d = 0; d < Count(dst_); ++d) {
      const TensorSlice wanted = DstSlice(d);
      int64_t found = -1;
      for (int64_t s = 0; s < Count(src_); ++s) {
        if (!(SrcSlice(s) == wanted)) { continue; }
        if (found < 0 || SameDevice(src_.devices[s], dst_.devices[d])) { found = s; }
      }
      if (found < 0) { return false; }
      nodes->push_back(src_nodes_[found]);
    }
    return true;
  }

  // One node per rank; `on_gpu`: on the GPUs, over NCCL (else the host's communicator).
  std::vector<int64_t> Collective(CollectiveKind kind, bool on_gpu = false) {
    const int64_t collective_id = graph_.NewCollectiveId();
    std::vector<int64_t> nodes;
    for (int64_t rank = 0; rank < Count(dst_); ++rank) {
      const DeviceId& device = dst_.devices[rank];
      TaskNode* node = graph_.AddNode(
          kCollectiveNode, device.machine, device.device,
          std::string(on_gpu ? "nccl_" : "") + CollectiveKindName(kind) + "(" + lbn_ + " " +
              SbpToString(src_sbp_) + "->" + SbpToString(dst_sbp_) + ")@" + std::to_string(rank));
      if (on_gpu) { node->set_device_tag("gpu"); }
      CollectiveTaskProto* collective = node->mutable_collective();
      collective->set_collective_id(collective_id);
      collective->set_kind(kind);
      collective->set_rank(rank);
      for (const DeviceId& member : dst_.devices) {
        collective->add_rank_machine(member.machine);
        collective->add_rank_device(member.device);
      }
      collective->set_lbn(lbn_);
      *collective->mutable_logical_blob_desc() = logical_.ToProto();
      *collective->mutable_src_sbp() = src_sbp_;
      *collective->mutable_dst_sbp() = dst_sbp_;
      TaskInput& input = (*node->mutable_input())["in_0"];
      input.set_node_id(src_nodes_[rank]);
      input.set_lbn(lbn_);
      nodes.push_back(node->node_id());
    }
    return nodes;
  }

  // Same devices, no communication: each device converts its own part.
  std::vector<int64_t> LocalConversion() {
    std::vector<int64_t> nodes;
    for (int64_t id = 0; id < Count(dst_); ++id) {
      Assembly assembly;
      if (dst_sbp_.has_partial_sum_parallel()) {
        // B -> P: the first device holds the value, the others zeros; S -> P: each its slice.
        const bool holds = src_sbp_.has_split_parallel() || id == 0;
        if (holds) { assembly.sources.push_back(id); }
        assembly.zero_fill = !holds || src_sbp_.has_split_parallel();
      } else {
        assembly.sources.push_back(id);  // B -> S: its own slice of its own copy
      }
      nodes.push_back(SliceBoxing(id, assembly));
    }
    return nodes;
  }

  // Any layouts: each target part gathers (or sums) what overlaps it.
  std::vector<int64_t> General() {
    std::vector<int64_t> nodes;
    for (int64_t d = 0; d < Count(dst_); ++d) {
      Assembly assembly;
      const TensorSlice wanted = DstSlice(d);
      if (dst_sbp_.has_partial_sum_parallel() && d > 0) {
        assembly.zero_fill = true;  // the first part carries the whole value
      } else if (src_sbp_.has_partial_sum_parallel()) {
        for (int64_t s = 0; s < Count(src_); ++s) { assembly.sources.push_back(s); }
        assembly.sum = true;
      } else if (src_sbp_.has_broadcast_parallel()) {
        int64_t chosen = 0;
        for (int64_t s = 0; s < Count(src_); ++s) {
          if (SameDevice(src_.devices[s], dst_.devices[d])) { chosen = s; }
          if (src_.devices[s].machine == dst_.devices[d].machine &&
              src_.devices[chosen].machine != dst_.devices[d].machine) {
            chosen = s;
          }
        }
        assembly.sources.push_back(chosen);
        if (src_.devices[chosen].machine != dst_.devices[d].machine) {
          // Cut the part where the whole value is, so only the part crosses machines.
          nodes.push_back(SliceBoxing(d, assembly, &src_.devices[chosen]));
          continue;
        }
      } else {
        for (int64_t s = 0; s < Count(src_); ++s) {
          if (!Intersect(SrcSlice(s), wanted).empty()) { assembly.sources.push_back(s); }
        }
      }
      nodes.push_back(SliceBoxing(d, assembly));
    }
    return nodes;
  }

  // Assembles target part `dst_id` on `at` (its own device unless given).
  int64_t SliceBoxing(int64_t dst_id, const Assembly& assembly, const DeviceId* at = nullptr) {
    const DeviceId& device = at != nullptr ? *at : dst_.devices[dst_id];
    const TensorSlice out_slice = DstSlice(dst_id);
    const std::string name = "slice_boxing(" + lbn_ + " " + LayoutToString(src_) + "->" +
                             LayoutToString(dst_) + ")@" + std::to_string(dst_id);
    TaskNode* node = graph_.AddNode(kSliceBoxingNode, device.machine, device.device, name);
    if (on_gpu_) { node->set_device_tag("gpu"); }
    std::vector<int64_t> in_slices;
    std::vector<int64_t> out_values;
    AppendSlice(&out_values, out_slice);
    OpConfBuilder builder("slice_boxing", name);
    ExecNode* exec = node->mutable_exec();
    for (size_t k = 0; k < assembly.sources.size(); ++k) {
      const int64_t s = assembly.sources[k];
      const TensorSlice slice = SrcSlice(s);
      AppendSlice(&in_slices, slice);
      builder.Input("in", lbn_);
      const std::string key = ArgumentKey("in", static_cast<int64_t>(k));
      (*exec->mutable_argument_blob_desc())[key] =
          BlobDesc{slice.shape(), logical_.data_type}.ToProto();
      TaskInput& input = (*node->mutable_input())[key];
      input.set_node_id(src_nodes_[s]);
      input.set_lbn(lbn_);
    }
    OperatorConf conf = builder.Attr("logical_shape", logical_.shape)
                            .Attr("dtype", logical_.data_type)
                            .Attr("in_slices", in_slices)
                            .Attr("out_slice", out_values)
                            .Attr("sum", assembly.sum)
                            .Attr("zero_fill", assembly.zero_fill)
                            .Build();
    (*conf.mutable_output())["out"].add_value(lbn_);
    conf.mutable_placement()->set_device_tag(on_gpu_ ? "gpu" : "cpu");
    conf.mutable_placement()->add_device_name(DeviceText(device));
    *exec->mutable_op_conf() = conf;
    (*exec->mutable_argument_blob_desc())["out_0"] =
        BlobDesc{out_slice.shape(), logical_.data_type}.ToProto();
    exec->mutable_parallel_context()->set_parallel_id(0);
    exec->mutable_parallel_context()->set_parallel_num(1);
    return node->node_id();
  }

  TaskGraph& graph_;
  const std::string& lbn_;
  const BlobDesc& logical_;
  const BlobLayout& src_;
  const std::vector<int64_t>& src_nodes_;
  const BlobLayout& dst_;
  SbpParallel src_sbp_;
  SbpParallel dst_sbp_;
  bool on_gpu_ = false;  // slice_boxing nodes on the GPUs (LocalConversionOnGpu)
};

}  // namespace

namespace {

// One copy node per device of `layout`, on that device's GPU: `nodes[i]`'s part of `lbn` into
// (h2d) or out of (d2h) that GPU's memory.
std::vector<int64_t> CopyNodes(TaskGraph& graph, const std::string& lbn, const BlobDesc& logical,
                               const BlobLayout& layout, const std::vector<int64_t>& nodes,
                               bool to_gpu) {
  const SbpParallel sbp = Normalized(layout);
  const std::string direction = to_gpu ? "h2d" : "d2h";
  std::vector<int64_t> copies;
  for (int64_t id = 0; id < Count(layout); ++id) {
    const DeviceId& device = layout.devices[id];
    const std::string name = "copy_" + direction + "(" + lbn + ")@" + DeviceText(device);
    TaskNode* node = graph.AddNode(kCopyHdNode, device.machine, device.device, name);
    node->set_device_tag("gpu");
    BlobDesc part = logical;
    part.shape = PhysicalShape(logical.shape, sbp, id, Count(layout));
    OperatorConf conf =
        OpConfBuilder("copy_hd", name).Input("in", lbn).Attr("direction", direction).Build();
    (*conf.mutable_output())["out"].add_value(lbn);
    conf.mutable_placement()->set_device_tag("gpu");
    conf.mutable_placement()->add_device_name(DeviceText(device));
    ExecNode* exec = node->mutable_exec();
    *exec->mutable_op_conf() = conf;
    (*exec->mutable_argument_blob_desc())["in_0"] = part.ToProto();
    (*exec->mutable_argument_blob_desc())["out_0"] = part.ToProto();
    exec->mutable_parallel_context()->set_parallel_id(0);
    exec->mutable_parallel_context()->set_parallel_num(1);
    TaskInput& input = (*node->mutable_input())["in_0"];
    input.set_node_id(nodes[id]);
    input.set_lbn(lbn);
    copies.push_back(node->node_id());
  }
  return copies;
}

// Each target part is a whole source part on the same device (a GPU reads only its own memory).
bool SameDeviceParts(const BlobDesc& logical, const BlobLayout& src,
                     const std::vector<int64_t>& src_nodes, const BlobLayout& dst,
                     std::vector<int64_t>* nodes) {
  const SbpParallel src_sbp = Normalized(src);
  const SbpParallel dst_sbp = Normalized(dst);
  if (src_sbp.has_partial_sum_parallel() || dst_sbp.has_partial_sum_parallel()) { return false; }
  for (int64_t d = 0; d < Count(dst); ++d) {
    const TensorSlice wanted = SliceOfPart(logical.shape, dst_sbp, d, Count(dst));
    int64_t found = -1;
    for (int64_t s = 0; s < Count(src) && found < 0; ++s) {
      if (SameDevice(src.devices[s], dst.devices[d]) &&
          SliceOfPart(logical.shape, src_sbp, s, Count(src)) == wanted) {
        found = s;
      }
    }
    if (found < 0) { return false; }
    nodes->push_back(src_nodes[found]);
  }
  return true;
}

BlobLayout OnHost(BlobLayout layout) {
  layout.on_gpu = false;
  return layout;
}

}  // namespace

std::vector<int64_t> Reshard(TaskGraph& graph, const std::string& lbn, const BlobDesc& logical,
                             const BlobLayout& src, const std::vector<int64_t>& src_nodes,
                             const BlobLayout& dst) {
  OF_CHECK(src.devices.size() == src_nodes.size() && !src.devices.empty() && !dst.devices.empty())
      << "reshard of '" << lbn << "': " << src.devices.size() << " devices, " << src_nodes.size()
      << " nodes";
  if (!src.on_gpu && !dst.on_gpu) {
    return Resharder(graph, lbn, logical, src, src_nodes, dst).Run();
  }
  const bool same_layout = SameDevices(src, dst) && SameSbp(Normalized(src), Normalized(dst));
  if (src.on_gpu && dst.on_gpu) {
    if (same_layout) { return src_nodes; }
    std::vector<int64_t> direct;
    if (SameDeviceParts(logical, src, src_nodes, dst, &direct)) { return direct; }
    if (Resharder(graph, lbn, logical, src, src_nodes, dst).NcclCollective(&direct) ||
        Resharder(graph, lbn, logical, src, src_nodes, dst).LocalConversionOnGpu(&direct)) {
      return direct;
    }
  }
  if (src.on_gpu != dst.on_gpu && same_layout) {
    return CopyNodes(graph, lbn, logical, dst, src_nodes, dst.on_gpu);
  }
  // Any other conversion happens in host memory.
  const std::vector<int64_t> host_src =
      src.on_gpu ? CopyNodes(graph, lbn, logical, src, src_nodes, false) : src_nodes;
  const std::vector<int64_t> host_dst =
      Resharder(graph, lbn, logical, OnHost(src), host_src, OnHost(dst)).Run();
  return dst.on_gpu ? CopyNodes(graph, lbn, logical, dst, host_dst, true) : host_dst;
}

std::string LayoutToString(const BlobLayout& layout) {
  std::string text = layout.on_gpu ? "gpu " : "";
  for (size_t i = 0; i < layout.devices.size(); ++i) {
    if (i > 0) { text += ','; }
    text += DeviceText(layout.devices[i]);
  }
  text += ' ';
  text += SbpToString(Normalized(layout));
  return text;
}

}  // namespace oneflow
