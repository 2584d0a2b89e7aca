#pragma once
// The layout half of a GPU collective: what one rank of an NCCL collective copies and sends, as
// plain host data. NCCL moves rank-major chunks of equal size; our parts are boxes of the logical
// tensor (SliceOfPart: balanced splits along any axis, so uneven sizes and boxes that are not
// contiguous). The plan packs each rank's boxes into chunks of a staging buffer (padded to the
// largest), runs the NCCL primitive, and unpacks the received chunks into the output. Every rank
// computes its own plan from the same (kind, logical shape, SBPs, rank count), so the counts
// agree on all ranks without any exchange.
//
// This file has no CUDA in it and is compiled in every build: the layout logic is tested on the
// host (tests/cpp/comm/nccl_collective_plan_test.cpp, a simulator of all ranks), and the GPU side
// (nccl_communicator.cpp, kernels/cuda/box_copy.h) only executes a plan.
//
// Plans by kind (chunks in elements; "axis-0-like": every axis before the split axis has size 1,
// so each part is one contiguous range of the row-major tensor):
//   - all-reduce (P -> B): one ncclAllReduce of the whole blob, input to output;
//   - reduce-scatter (P -> S(k)): an axis-0-like even split is NCCL's own layout (input to output,
//     no copies); otherwise each rank's slice of the input is packed into chunk q of the send
//     staging, reduce-scattered into the receive staging, and the own (unpadded) part unpacked;
//   - all-gather (S(k) -> B): the own part, padded to the largest, is gathered into the receive
//     staging and each rank's chunk unpacked into its box of the output (axis-0-like and even:
//     straight from input to output);
//   - all-to-all (S(i) -> S(j)): grouped ncclSend/ncclRecv; the block r -> q is
//     Intersect(src slice r, dst slice q). A block contiguous in the input is sent from it, one
//     contiguous in the output is received into it; the others go through chunk q (send) or chunk
//     r (receive) of the staging buffers. Empty blocks are neither sent nor received (both sides
//     see the same empty intersection), and the own block is a local copy.

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "proto/plan.pb.h"
#include "proto/sbp.pb.h"

namespace oneflow {

// The most axes a box copy has (the GPU kernel's fixed-size index arrays). The compiler keeps
// split blobs of more axes off NCCL (reshard.cpp).
constexpr int64_t kMaxBoxCopyAxes = 8;

// The buffers a plan reads and writes on one rank.
enum class PlanBuffer {
  kInput,        // this rank's part before the collective (read only)
  kOutput,       // this rank's part after it
  kSendStaging,  // scratch of send_staging elements
  kRecvStaging,  // scratch of recv_staging elements
};
const char* PlanBufferName(PlanBuffer buffer);

enum class NcclPrimitive { kAllReduce, kReduceScatter, kAllGather, kSendRecv };
const char* NcclPrimitiveName(NcclPrimitive primitive);

// Copies the box `extent` from a row-major tensor of `src_dims` at element `src_base` of buffer
// `src` (corner `src_begin`) into one of `dst_dims` at `dst_base` of `dst` (corner `dst_begin`).
// All four vectors of one copy have the same length (1 to kMaxBoxCopyAxes); plans hold no empty
// copies, and merge axes that are whole in both tensors (a contiguous block is one axis).
struct BoxCopy {
  PlanBuffer src = PlanBuffer::kInput;
  int64_t src_base = 0;
  std::vector<int64_t> src_dims;
  std::vector<int64_t> src_begin;
  PlanBuffer dst = PlanBuffer::kOutput;
  int64_t dst_base = 0;
  std::vector<int64_t> dst_dims;
  std::vector<int64_t> dst_begin;
  std::vector<int64_t> extent;

  int64_t elem_count() const;
  std::string ToString() const;  // "input+0 [2,6] @[0,3] -> send+12 [2,3] @[0,0] extent [2,3]"
};

// One ncclSend (or ncclRecv) of a send/recv plan: `count` elements at `offset` of `buffer`
// (input or send staging for a send, output or receive staging for a receive). Never empty.
struct PeerTransfer {
  int64_t peer = 0;
  PlanBuffer buffer = PlanBuffer::kSendStaging;
  int64_t offset = 0;
  int64_t count = 0;
};

struct NcclCollectivePlan {
  NcclPrimitive primitive = NcclPrimitive::kAllReduce;
  // The NCCL count, the same on every rank: all-reduce, the whole blob; reduce-scatter, what
  // each rank receives; all-gather, what each rank sends; send/recv, the stride between the
  // chunks of the staging buffers (the largest block). Chunk q starts at element q * chunk.
  int64_t chunk = 0;
  // Staging sizes in elements (0: not used).
  int64_t send_staging = 0;
  int64_t recv_staging = 0;
  // The direct paths of all-reduce, reduce-scatter and all-gather: NCCL reads the input (else
  // the send staging) and writes the output (else the receive staging). Send/recv plans name the
  // buffer of each transfer instead.
  bool send_from_input = false;
  bool recv_into_output = false;
  // Element counts of this rank's input and output parts.
  int64_t input_elems = 0;
  int64_t output_elems = 0;
  // In this order, all on the rank's stream: `pack` (input -> send staging, and the own block of
  // an all-to-all input -> output), the primitive, `unpack` (receive staging -> output).
  std::vector<BoxCopy> pack;
  std::vector<BoxCopy> unpack;
  // Send/recv only, all in one NCCL group.
  std::vector<PeerTransfer> sends;
  std::vector<PeerTransfer> recvs;

  std::string ToString() const;  // for errors and debugging
};

// The plan of rank `rank` of `ranks` for the collective `kind` converting a blob of `logical`
// shape from `src` to `dst` (SBPs over the `ranks` devices). The compiler picks the kind, so a
// kind that does not fit the SBPs (all-reduce: P -> B; reduce-scatter: P -> S; all-gather:
// S -> B; all-to-all: S -> S) or a split blob of more than kMaxBoxCopyAxes axes fails OF_CHECK.
NcclCollectivePlan PlanNcclCollective(CollectiveKind kind, const Shape& logical,
                                      const SbpParallel& src, const SbpParallel& dst, int64_t ranks,
                                      int64_t rank);

}  // namespace oneflow
