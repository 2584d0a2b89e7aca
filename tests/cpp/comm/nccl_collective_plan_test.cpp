// The plans of the NCCL collectives (comm/nccl_collective_plan.h), run for every rank by a host
// simulator: the box copies with memcpy (host_box_copy.h) and the NCCL primitives with NCCL's
// semantics (all-reduce sums, reduce-scatter sums chunk r into rank r, all-gather concatenates
// the chunks, grouped sends meet the receives of the same pair and count). Each rank's output
// must equal its part (SliceOfPart, cut by the CPU boxing's CopyTensorSlice) of a random logical
// tensor, or for a partial-sum source of the sum of the ranks' random addends. The simulator also
// checks what NCCL would not: counts that differ between ranks, buffers too small for the count,
// copies outside their buffers, a written input. Staging and outputs start as garbage (NaN for
// floats), so a chunk that is read but never written shows.
#include "oneflow/comm/nccl_collective_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "oneflow/comm/communicator.h"
#include "oneflow/common/error.h"
#include "oneflow/kernels/cpu/tensor_slice_copy.h"
#include "oneflow/sbp/tensor_slice.h"
#include "tests/cpp/comm/host_box_copy.h"

namespace oneflow {
namespace {

template <typename T>
constexpr DataType DataTypeOf() {
  if constexpr (std::is_same_v<T, float>) { return kFloat; }
  if constexpr (std::is_same_v<T, double>) { return kDouble; }
  return kInt64;
}

// What staging and outputs hold before anything writes them.
template <typename T>
T Garbage() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return static_cast<T>(0x5EADBEEF5EADBEEFll);
  }
}

template <typename T>
bool SameValue(T a, T b) {
  return a == b;  // NaN (garbage) never equals anything
}

// All ranks' buffers, and the plans run on them.
template <typename T>
class Simulator {
 public:
  Simulator(const std::vector<NcclCollectivePlan>& plans, std::vector<std::vector<T>> inputs,
            const std::vector<int64_t>& output_sizes)
      : plans_(plans), ranks_(static_cast<int64_t>(plans.size())) {
    buffers_.resize(ranks_);
    for (int64_t r = 0; r < ranks_; ++r) {
      buffers_[r][PlanBuffer::kInput] = std::move(inputs[r]);
      buffers_[r][PlanBuffer::kOutput].assign(output_sizes[r], Garbage<T>());
      buffers_[r][PlanBuffer::kSendStaging].assign(std::max<int64_t>(0, plans[r].send_staging),
                                                   Garbage<T>());
      buffers_[r][PlanBuffer::kRecvStaging].assign(std::max<int64_t>(0, plans[r].recv_staging),
                                                   Garbage<T>());
    }
  }

  // Runs the plans; "" when every step was legal, else the first illegal step.
  std::string Run() {
    std::vector<std::vector<T>> inputs;
    for (int64_t r = 0; r < ranks_; ++r) {
      const NcclCollectivePlan& plan = plans_[r];
      if (plan.primitive != plans_[0].primitive) { return "ranks run different primitives"; }
      if (plan.input_elems != Size(r, PlanBuffer::kInput) ||
          plan.output_elems != Size(r, PlanBuffer::kOutput)) {
        return "rank " + std::to_string(r) + ": plan sizes input " +
               std::to_string(plan.input_elems) + ", output " + std::to_string(plan.output_elems) +
               " for buffers of " + std::to_string(Size(r, PlanBuffer::kInput)) + " and " +
               std::to_string(Size(r, PlanBuffer::kOutput));
      }
      inputs.push_back(buffers_[r][PlanBuffer::kInput]);
    }
    std::string error;
    for (int64_t r = 0; r < ranks_ && error.empty(); ++r) { error = Copies(r, plans_[r].pack); }
    if (error.empty()) { error = Primitive(); }
    for (int64_t r = 0; r < ranks_ && error.empty(); ++r) { error = Copies(r, plans_[r].unpack); }
    for (int64_t r = 0; r < ranks_ && error.empty(); ++r) {
      if (buffers_[r][PlanBuffer::kInput] != inputs[r]) {
        error = "rank " + std::to_string(r) + " wrote its input";
      }
    }
    return error;
  }

  const std::vector<T>& output(int64_t rank) const {
    return buffers_[rank].at(PlanBuffer::kOutput);
  }

 private:
  int64_t Size(int64_t rank, PlanBuffer buffer) const {
    return static_cast<int64_t>(buffers_[rank].at(buffer).size());
  }

  std::string Copies(int64_t rank, const std::vector<BoxCopy>& copies) {
    for (const BoxCopy& copy : copies) {
      const std::string where = "rank " + std::to_string(rank) + " copy " + copy.ToString() + ": ";
      const size_t axes = copy.extent.size();
      if (axes < 1 || axes > static_cast<size_t>(kMaxBoxCopyAxes) || copy.src_dims.size() != axes ||
          copy.src_begin.size() != axes || copy.dst_dims.size() != axes ||
          copy.dst_begin.size() != axes) {
        return where + "bad rank";
      }
      if (copy.dst == PlanBuffer::kInput || copy.src == copy.dst) {
        return where + "writes the input, or copies within one buffer";
      }
      for (size_t axis = 0; axis < axes; ++axis) {
        if (copy.extent[axis] <= 0) { return where + "empty or negative extent"; }
        if (copy.src_begin[axis] < 0 ||
            copy.src_begin[axis] + copy.extent[axis] > copy.src_dims[axis] ||
            copy.dst_begin[axis] < 0 ||
            copy.dst_begin[axis] + copy.extent[axis] > copy.dst_dims[axis]) {
          return where + "box outside its tensor";
        }
      }
      int64_t src_count = 1;
      int64_t dst_count = 1;
      for (size_t axis = 0; axis < axes; ++axis) {
        src_count *= copy.src_dims[axis];
        dst_count *= copy.dst_dims[axis];
      }
      if (copy.src_base < 0 || copy.src_base + src_count > Size(rank, copy.src) ||
          copy.dst_base < 0 || copy.dst_base + dst_count > Size(rank, copy.dst)) {
        return where + "tensor outside its buffer";
      }
      test::HostBoxCopy(sizeof(T), copy.extent, Data(rank, copy.src) + copy.src_base, copy.src_dims,
                        copy.src_begin, Data(rank, copy.dst) + copy.dst_base, copy.dst_dims,
                        copy.dst_begin);
    }
    return "";
  }

  T* Data(int64_t rank, PlanBuffer buffer) { return buffers_[rank][buffer].data(); }

  // NCCL's send and receive buffer of rank `rank`, and whether they hold `send`/`recv` elements.
  std::string Endpoints(int64_t rank, int64_t send, int64_t recv, const T** from, T** to) {
    const NcclCollectivePlan& plan = plans_[rank];
    const PlanBuffer in = plan.send_from_input ? PlanBuffer::kInput : PlanBuffer::kSendStaging;
    const PlanBuffer out = plan.recv_into_output ? PlanBuffer::kOutput : PlanBuffer::kRecvStaging;
    if (Size(rank, in) < send || Size(rank, out) < recv) {
      return "rank " + std::to_string(rank) + ": " + NcclPrimitiveName(plan.primitive) +
             " of chunk " + std::to_string(plan.chunk) + " on buffers of " +
             std::to_string(Size(rank, in)) + " and " + std::to_string(Size(rank, out));
    }
    *from = Data(rank, in);
    *to = Data(rank, out);
    return "";
  }

  std::string Primitive() {
    const NcclPrimitive primitive = plans_[0].primitive;
    if (primitive == NcclPrimitive::kSendRecv) { return SendRecv(); }
    const int64_t chunk = plans_[0].chunk;
    for (const NcclCollectivePlan& plan : plans_) {
      if (plan.chunk != chunk) { return "ranks call NCCL with different counts"; }
    }
    if (chunk == 0) { return ""; }  // the communicator calls nothing
    std::vector<const T*> from(ranks_);
    std::vector<T*> to(ranks_);
    for (int64_t r = 0; r < ranks_; ++r) {
      const int64_t send = primitive == NcclPrimitive::kReduceScatter ? ranks_ * chunk : chunk;
      const int64_t recv = primitive == NcclPrimitive::kAllGather ? ranks_ * chunk : chunk;
      const std::string error = Endpoints(r, send, recv, &from[r], &to[r]);
      if (!error.empty()) { return error; }
    }
    for (int64_t r = 0; r < ranks_; ++r) {
      for (int64_t i = 0; i < chunk; ++i) {
        if (primitive == NcclPrimitive::kAllGather) {
          for (int64_t q = 0; q < ranks_; ++q) { to[r][q * chunk + i] = from[q][i]; }
          continue;
        }
        // All-reduce: element i of every send buffer; reduce-scatter: of chunk r.
        const int64_t at = primitive == NcclPrimitive::kReduceScatter ? r * chunk + i : i;
        T sum = from[0][at];
        for (int64_t q = 1; q < ranks_; ++q) { sum += from[q][at]; }
        to[r][i] = sum;
      }
    }
    return "";
  }

  // The k-th send from r to q meets the k-th receive of q from r, with the same count.
  std::string SendRecv() {
    std::map<std::tuple<int64_t, int64_t>, std::vector<PeerTransfer>> sends;  // (from, to)
    std::map<std::tuple<int64_t, int64_t>, std::vector<PeerTransfer>> recvs;  // (from, to)
    for (int64_t r = 0; r < ranks_; ++r) {
      const std::string who = "rank " + std::to_string(r) + ": ";
      for (const PeerTransfer& send : plans_[r].sends) {
        if (send.peer < 0 || send.peer >= ranks_ || send.peer == r || send.count <= 0 ||
            (send.buffer != PlanBuffer::kInput && send.buffer != PlanBuffer::kSendStaging) ||
            send.offset < 0 || send.offset + send.count > Size(r, send.buffer)) {
          return who + "bad send of " + std::to_string(send.count) + " to " +
                 std::to_string(send.peer);
        }
        sends[{r, send.peer}].push_back(send);
      }
      for (const PeerTransfer& recv : plans_[r].recvs) {
        if (recv.peer < 0 || recv.peer >= ranks_ || recv.peer == r || recv.count <= 0 ||
            (recv.buffer != PlanBuffer::kOutput && recv.buffer != PlanBuffer::kRecvStaging) ||
            recv.offset < 0 || recv.offset + recv.count > Size(r, recv.buffer)) {
          return who + "bad receive of " + std::to_string(recv.count) + " from " +
                 std::to_string(recv.peer);
        }
        recvs[{recv.peer, r}].push_back(recv);
      }
    }
    for (const auto& [pair, list] : sends) {
      const auto [from, to] = pair;
      const std::vector<PeerTransfer>& matching = recvs[pair];
      if (matching.size() != list.size()) {
        return std::to_string(from) + " sends " + std::to_string(list.size()) + " times to " +
               std::to_string(to) + ", which receives " + std::to_string(matching.size());
      }
      for (size_t k = 0; k < list.size(); ++k) {
        if (list[k].count != matching[k].count) {
          return std::to_string(from) + " sends " + std::to_string(list[k].count) + " to " +
                 std::to_string(to) + ", which receives " + std::to_string(matching[k].count);
        }
        std::copy_n(Data(from, list[k].buffer) + list[k].offset, list[k].count,
                    Data(to, matching[k].buffer) + matching[k].offset);
      }
    }
    for (const auto& [pair, list] : recvs) {
      if (!list.empty() && sends.count(pair) == 0) {
        return std::to_string(std::get<1>(pair)) + " receives from " +
               std::to_string(std::get<0>(pair)) + ", which sends nothing";
      }
    }
    return "";
  }

  const std::vector<NcclCollectivePlan>& plans_;
  int64_t ranks_;
  std::vector<std::map<PlanBuffer, std::vector<T>>> buffers_;
};

struct Case {
  CollectiveKind kind;
  Shape shape;
  SbpParallel src;
  SbpParallel dst;
  int64_t ranks;

  std::string ToString() const {
    return std::string(CollectiveKindName(kind)) + " " + shape.ToString() + " " + SbpToString(src) +
           "->" + SbpToString(dst) + " over " + std::to_string(ranks);
  }
};

std::vector<NcclCollectivePlan> PlansOf(const Case& c) {
  std::vector<NcclCollectivePlan> plans;
  for (int64_t r = 0; r < c.ranks; ++r) {
    plans.push_back(PlanNcclCollective(c.kind, c.shape, c.src, c.dst, c.ranks, r));
  }
  return plans;
}

// `slice` of `whole` (a tensor of `shape`), cut by the CPU boxing.
template <typename T>
std::vector<T> Part(const std::vector<T>& whole, const Shape& shape, const TensorSlice& slice) {
  std::vector<T> part(slice.elem_count());
  if (!part.empty()) {
    CopyTensorSlice(DataTypeOf<T>(), slice, whole.data(), FullSlice(shape), part.data(), slice,
                    false);
  }
  return part;
}

// Runs `plans` (those of `c`, or broken ones) on random data: "" when every rank ends with its
// part, else what went wrong.
template <typename T>
std::string Verify(const Case& c, const std::vector<NcclCollectivePlan>& plans, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> values(-20, 20);
  const int64_t count = c.shape.elem_count();
  auto random_tensor = [&] {
    std::vector<T> tensor(count);
    for (T& value : tensor) { value = static_cast<T>(values(rng)); }
    return tensor;
  };
  std::vector<std::vector<T>> inputs;
  std::vector<T> logical;
  if (c.src.has_partial_sum_parallel()) {
    logical.assign(count, T(0));
    for (int64_t r = 0; r < c.ranks; ++r) {
      inputs.push_back(random_tensor());
      for (int64_t i = 0; i < count; ++i) {
        logical[i] = r == 0 ? inputs[r][i] : logical[i] + inputs[r][i];
      }
    }
  } else {
    logical = random_tensor();
    for (int64_t r = 0; r < c.ranks; ++r) {
      inputs.push_back(Part(logical, c.shape, SliceOfPart(c.shape, c.src, r, c.ranks)));
    }
  }
  std::vector<std::vector<T>> expected;
  std::vector<int64_t> output_sizes;
  for (int64_t r = 0; r < c.ranks; ++r) {
    expected.push_back(Part(logical, c.shape, SliceOfPart(c.shape, c.dst, r, c.ranks)));
    output_sizes.push_back(static_cast<int64_t>(expected.back().size()));
  }
  Simulator<T> simulator(plans, inputs, output_sizes);
  const std::string error = simulator.Run();
  if (!error.empty()) { return error; }
  for (int64_t r = 0; r < c.ranks; ++r) {
    for (size_t i = 0; i < expected[r].size(); ++i) {
      if (!SameValue(simulator.output(r)[i], expected[r][i])) {
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + ": " +
               std::to_string(simulator.output(r)[i]) + ", expected " +
               std::to_string(expected[r][i]);
      }
    }
  }
  return "";
}

std::string PlansText(const std::vector<NcclCollectivePlan>& plans) {
  std::string text;
  for (size_t r = 0; r < plans.size(); ++r) {
    text += "rank " + std::to_string(r) + ": " + plans[r].ToString() + "\n";
  }
  return text;
}

// Every conversion the GPUs do by NCCL, of `shape` over `ranks`.
std::vector<Case> CasesOf(const Shape& shape, int64_t ranks) {
  std::vector<Case> cases;
  cases.push_back({kAllReduce, shape, PartialSumSbp(), BroadcastSbp(), ranks});
  for (int64_t axis = 0; axis < shape.num_axes(); ++axis) {
    cases.push_back({kReduceScatter, shape, PartialSumSbp(), SplitSbp(axis), ranks});
    cases.push_back({kAllGather, shape, SplitSbp(axis), BroadcastSbp(), ranks});
    for (int64_t to = 0; to < shape.num_axes(); ++to) {
      if (to != axis) { cases.push_back({kAllToAll, shape, SplitSbp(axis), SplitSbp(to), ranks}); }
    }
  }
  return cases;
}

const std::vector<Shape>& Shapes() {
  // Even and uneven, axes shorter than the rank count (empty parts), leading axes of size 1,
  // empty tensors.
  static const std::vector<Shape> shapes = {
      Shape({1}),       Shape({2}),          Shape({5}),          Shape({12}),
      Shape({0}),       Shape({3, 5}),       Shape({5, 4}),       Shape({4, 6}),
      Shape({1, 7}),    Shape({2, 1}),       Shape({1, 6, 4}),    Shape({5, 1, 3}),
      Shape({3, 4, 5}), Shape({2, 3, 1, 5}), Shape({4, 2, 3, 2}), Shape({1, 1, 9, 2}),
      Shape({3, 0, 2})};
  return shapes;
}

template <typename T>
void CheckEveryCase() {
  int64_t checked = 0;
  for (int64_t ranks = 2; ranks <= 4; ++ranks) {
    for (const Shape& shape : Shapes()) {
      for (const Case& c : CasesOf(shape, ranks)) {
        const std::vector<NcclCollectivePlan> plans = PlansOf(c);
        const std::string error = Verify<T>(c, plans, 1000 + checked);
        EXPECT_EQ(error, "") << c.ToString() << "\n" << PlansText(plans);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 400);
}

TEST(NcclCollectivePlan, EveryRankEndsWithItsPartInFloat) { CheckEveryCase<float>(); }
TEST(NcclCollectivePlan, EveryRankEndsWithItsPartIn8ByteElements) {
  CheckEveryCase<int64_t>();
  CheckEveryCase<double>();
}

TEST(NcclCollectivePlan, UnevenSplitsFollowSliceOfPart) {
  // 5 rows over 2 ranks are 3 + 2 (tensor_slice.h): chunks of 3 rows, the second padded.
  const Case gather{kAllGather, Shape({5, 4}), SplitSbp(0), BroadcastSbp(), 2};
  const std::vector<NcclCollectivePlan> plans = PlansOf(gather);
  EXPECT_EQ(plans[0].chunk, 12);
  EXPECT_TRUE(plans[0].send_from_input);  // 3 rows: a whole chunk
  EXPECT_TRUE(plans[0].pack.empty());
  EXPECT_FALSE(plans[1].send_from_input);  // 2 rows, padded into the send staging
  ASSERT_EQ(plans[1].pack.size(), 1u);
  EXPECT_EQ(plans[1].pack[0].elem_count(), 8);
  EXPECT_EQ(plans[1].send_staging, 12);
  EXPECT_EQ(plans[1].recv_staging, 24);
  ASSERT_EQ(plans[1].unpack.size(), 2u);
  EXPECT_EQ(plans[1].unpack[1].dst_base + plans[1].unpack[1].dst_begin[0], 12);  // row 3
  EXPECT_EQ(Verify<float>(gather, plans, 1), "");
  // Reduce-scatter of 5 rows over 2: rank 0 receives its whole chunk straight into its output.
  const Case scatter{kReduceScatter, Shape({5, 4}), PartialSumSbp(), SplitSbp(0), 2};
  const std::vector<NcclCollectivePlan> scatters = PlansOf(scatter);
  EXPECT_TRUE(scatters[0].recv_into_output);
  EXPECT_TRUE(scatters[0].unpack.empty());
  EXPECT_FALSE(scatters[1].recv_into_output);
  EXPECT_EQ(scatters[1].output_elems, 8);
  EXPECT_EQ(Verify<float>(scatter, scatters, 2), "");
}

TEST(NcclCollectivePlan, NcclLayoutsNeedNoCopies) {
  // Even splits along axis 0, or after leading axes of size 1: NCCL's own layout.
  for (const Case& c : {Case{kReduceScatter, Shape({8, 3}), PartialSumSbp(), SplitSbp(0), 2},
                        Case{kAllGather, Shape({8, 3}), SplitSbp(0), BroadcastSbp(), 4},
                        Case{kReduceScatter, Shape({1, 6, 4}), PartialSumSbp(), SplitSbp(1), 3},
                        Case{kAllGather, Shape({1, 1, 9, 2}), SplitSbp(2), BroadcastSbp(), 3},
                        Case{kAllReduce, Shape({5, 3}), PartialSumSbp(), BroadcastSbp(), 3}}) {
    for (const NcclCollectivePlan& plan : PlansOf(c)) {
      EXPECT_TRUE(plan.send_from_input && plan.recv_into_output) << c.ToString();
      EXPECT_TRUE(plan.pack.empty() && plan.unpack.empty()) << c.ToString();
      EXPECT_EQ(plan.send_staging + plan.recv_staging, 0) << c.ToString();
    }
  }
  // The same split along axis 1 of a taller tensor: packed, though the parts are even (so each
  // rank receives its chunk straight into its output).
  for (const NcclCollectivePlan& plan :
       PlansOf({kReduceScatter, Shape({4, 6, 5}), PartialSumSbp(), SplitSbp(1), 2})) {
    EXPECT_FALSE(plan.send_from_input);
    EXPECT_TRUE(plan.recv_into_output);
    ASSERT_EQ(plan.pack.size(), 2u);
    // Axis 2 is whole in both tensors: merged into axis 1 (3 rows of 5 -> 15).
    EXPECT_EQ(plan.pack[1].extent, (std::vector<int64_t>{4, 15}));
    EXPECT_EQ(plan.pack[1].src_dims, (std::vector<int64_t>{4, 30}));
    EXPECT_EQ(plan.pack[1].src_begin, (std::vector<int64_t>{0, 15}));
    EXPECT_EQ(plan.pack[1].dst_base, 60);  // chunk 1
  }
}

TEST(NcclCollectivePlan, AllToAllSendsAndReceivesContiguousBlocksDirectly) {
  // S(0) -> S(1) of (4, 6) over 2: rank r's rows [2r, 2r+2) of columns [3q, 3q+3) go to q: not
  // contiguous in the input (packed), contiguous in q's output (received in place).
  const Case rows_to_columns{kAllToAll, Shape({4, 6}), SplitSbp(0), SplitSbp(1), 2};
  for (const NcclCollectivePlan& plan : PlansOf(rows_to_columns)) {
    EXPECT_EQ(plan.primitive, NcclPrimitive::kSendRecv);
    ASSERT_EQ(plan.sends.size(), 1u);
    ASSERT_EQ(plan.recvs.size(), 1u);
    EXPECT_EQ(plan.sends[0].buffer, PlanBuffer::kSendStaging);
    EXPECT_EQ(plan.recvs[0].buffer, PlanBuffer::kOutput);
    EXPECT_EQ(plan.pack.size(), 2u);  // the block for the peer, and the own block
    EXPECT_TRUE(plan.unpack.empty());
    EXPECT_EQ(plan.recv_staging, 0);
  }
  const Case columns_to_rows{kAllToAll, Shape({4, 6}), SplitSbp(1), SplitSbp(0), 2};
  for (const NcclCollectivePlan& plan : PlansOf(columns_to_rows)) {
    EXPECT_EQ(plan.sends[0].buffer, PlanBuffer::kInput);
    EXPECT_EQ(plan.recvs[0].buffer, PlanBuffer::kRecvStaging);
    EXPECT_EQ(plan.pack.size(), 1u);  // the own block only
    EXPECT_EQ(plan.unpack.size(), 1u);
    EXPECT_EQ(plan.send_staging, 0);
  }
  // 2 rows over 3 ranks: rank 2 holds no rows, so it sends nothing, and nobody receives from it.
  const std::vector<NcclCollectivePlan> plans =
      PlansOf({kAllToAll, Shape({2, 6}), SplitSbp(0), SplitSbp(1), 3});
  EXPECT_TRUE(plans[2].sends.empty());
  for (const NcclCollectivePlan& plan : plans) {
    for (const PeerTransfer& recv : plan.recvs) { EXPECT_NE(recv.peer, 2); }
  }
}

// A plan that is wrong in any one way must fail the simulator, else the simulator proves nothing.
TEST(NcclCollectivePlan, BrokenPlansFailTheSimulator) {
  struct Breakage {
    Case c;
    std::string what;
    std::function<void(std::vector<NcclCollectivePlan>&)> broken;
  };
  const Case scatter{kReduceScatter, Shape({5, 7}), PartialSumSbp(), SplitSbp(1), 3};
  const Case gather{kAllGather, Shape({5, 7}), SplitSbp(0), BroadcastSbp(), 3};
  const Case all_to_all{kAllToAll, Shape({5, 7}), SplitSbp(0), SplitSbp(1), 3};
  const std::vector<Breakage> breakages = {
      {scatter, "pack corner", [](auto& p) { p[1].pack[0].src_begin.back() += 1; }},
      {scatter, "pack chunk", [](auto& p) { p[0].pack[2].dst_base -= 1; }},
      {scatter, "count", [](auto& p) { p[2].chunk += 1; }},
      {scatter, "all counts",
       [](auto& p) {
         for (auto& plan : p) { plan.chunk -= 1; }
       }},
      {scatter, "no unpack", [](auto& p) { p[2].unpack.clear(); }},
      {scatter, "recv in place", [](auto& p) { p[2].recv_into_output = true; }},
      {gather, "unpack corner", [](auto& p) { p[0].unpack[1].dst_begin[0] -= 1; }},
      {gather, "padding read", [](auto& p) { p[2].send_from_input = true; }},
      {gather, "no pack", [](auto& p) { p[2].pack.clear(); }},
      {gather, "direct",
       [](auto& p) {
         for (auto& plan : p) { plan.recv_into_output = true; }
       }},
      {all_to_all, "send count", [](auto& p) { p[0].sends[0].count -= 1; }},
      {all_to_all, "send peer", [](auto& p) { p[0].sends[0].peer = 2; }},
      {all_to_all, "recv offset", [](auto& p) { p[1].recvs[0].offset += 1; }},
      {all_to_all, "last pack", [](auto& p) { p[1].pack.pop_back(); }},
      {all_to_all, "own block", [](auto& p) { p[1].pack.erase(p[1].pack.begin() + 1); }},
      {all_to_all, "no send", [](auto& p) { p[2].sends.pop_back(); }},
  };
  for (const Breakage& breakage : breakages) {
    std::vector<NcclCollectivePlan> plans = PlansOf(breakage.c);
    ASSERT_EQ(Verify<float>(breakage.c, plans, 5), "") << breakage.c.ToString();
    breakage.broken(plans);
    EXPECT_NE(Verify<float>(breakage.c, plans, 5), "")
        << breakage.what << " of " << breakage.c.ToString() << " passed:\n"
        << PlansText(plans);
  }
}

TEST(NcclCollectivePlan, KindsThatDoNotFitTheSbpsAreRejected) {
  EXPECT_THROW(PlanNcclCollective(kAllGather, Shape({4, 4}), PartialSumSbp(), BroadcastSbp(), 2, 0),
               Error);
  EXPECT_THROW(PlanNcclCollective(kAllToAll, Shape({4, 4}), SplitSbp(0), BroadcastSbp(), 2, 0),
               Error);
  EXPECT_THROW(PlanNcclCollective(kAllReduce, Shape({4}), PartialSumSbp(), BroadcastSbp(), 2, 2),
               Error);
  const Shape nine_axes(std::vector<int64_t>(9, 2));
  EXPECT_THROW(PlanNcclCollective(kAllGather, nine_axes, SplitSbp(0), BroadcastSbp(), 2, 0), Error);
}

TEST(NcclCollectivePlan, HostBoxCopyAgreesWithTheCpuBoxing) {
  // The simulator's box copy against the CPU boxing's, on a 3-D box of a 3-D tensor.
  const Shape shape({4, 5, 6});
  std::vector<float> whole(shape.elem_count());
  for (size_t i = 0; i < whole.size(); ++i) { whole[i] = static_cast<float>(i); }
  TensorSlice box;
  box.begin = {1, 2, 3};
  box.extent = {2, 3, 2};
  const std::vector<float> expected = Part(whole, shape, box);
  std::vector<float> actual(expected.size(), -1.0f);
  test::HostBoxCopy(sizeof(float), box.extent, whole.data(), shape.dims(), box.begin, actual.data(),
                    box.extent, {0, 0, 0});
  EXPECT_EQ(actual, expected);
}

}  // namespace
}  // namespace oneflow
