#pragma once
// Boxing: the one entry point that converts a blob between two layouts (placement + SBP). It
// picks the transfer and adds the TaskGraph nodes that perform it:
//   - the same layout: nothing;
//   - every target part equal to a whole source part (broadcast -> broadcast on any devices,
//     split -> split of the same axis and device count, one device -> broadcast on many): the
//     consumers read the source registers directly (devices of one process share memory);
//   - the same devices, a collective over the communicator, one node per rank:
//     P -> B all-reduce, P -> S reduce-scatter, S -> B all-gather, S(i) -> S(j) all-to-all;
//   - the same devices, a local conversion on each device: B -> S takes its own slice,
//     B -> P and S -> P put the value (or slice) in place among zeros;
//   - otherwise (placements of different sizes or devices): each target part is assembled by a
//     slice-boxing node on its device from the source parts that overlap it (summing partial
//     sums).
// GPU memory: a blob that changes only between host and GPU memory gets a copy node per device
// (H2D or D2H, on the GPU); GPU parts on the same GPU are read directly; on the same GPUs (of any
// machines), the conversions that communicate are NCCL collectives on the GPUs, for any split
// axis and uneven splits too (P -> B all-reduce, P -> S reduce-scatter, S -> B all-gather,
// S(i) -> S(j) grouped send/recv; comm/nccl_communicator.h); the local conversions (B -> S,
// B -> P, S -> P) are slice-boxing nodes on each GPU; conversions between different GPUs go to
// host memory, are done there as above, and come back.

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "oneflow/compiler/task_graph.h"
#include "oneflow/job/placement.h"
#include "proto/sbp.pb.h"

namespace oneflow {

// How a blob is spread: the devices (in parallel-id order) and the SBP over them.
struct BlobLayout {
  std::vector<DeviceId> devices;
  SbpParallel sbp;
  bool on_gpu = false;  // in the memory of GPUs `devices` (else host memory)
};

// Returns, for each parallel id of `dst`, the node whose register holds that part of `lbn`
// (named `lbn` in it). `src_nodes` are the nodes holding the parts of `src`.
std::vector<int64_t> Reshard(TaskGraph& graph, const std::string& lbn, const BlobDesc& logical,
                             const BlobLayout& src, const std::vector<int64_t>& src_nodes,
                             const BlobLayout& dst);

// "cpu 0:0-1 S(0)"-style text of a layout, for names and errors.
std::string LayoutToString(const BlobLayout& layout);

}  // namespace oneflow
