// The in-process communicator: each collective over 2-4 ranks, the ranks submitting from their
// own threads in any order, equals the reference computed here from the ranks' inputs. Also runs
// under ThreadSanitizer (scripts/run_tsan.sh).
#include "oneflow/comm/in_process_communicator.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {
namespace {

// A worker thread per device running posted work in order (stands in for the runtime threads).
class DeviceThreads {
 public:
  explicit DeviceThreads(int64_t count) : queues_(count) {
    for (int64_t device = 0; device < count; ++device) {
      threads_.emplace_back([this, device] { Loop(device); });
    }
  }
  ~DeviceThreads() {
    for (size_t device = 0; device < queues_.size(); ++device) { Post(device, nullptr); }
    for (std::thread& thread : threads_) { thread.join(); }
  }
  void Post(int64_t device, std::function<void()> work) {
    Queue& queue = queues_[device];
    {
      std::lock_guard<std::mutex> lock(queue.mutex);
      queue.work.push_back(std::move(work));
    }
    queue.ready.notify_one();
  }

 private:
  struct Queue {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::function<void()>> work;
  };
  void Loop(int64_t device) {
    Queue& queue = queues_[device];
    while (true) {
      std::unique_lock<std::mutex> lock(queue.mutex);
      queue.ready.wait(lock, [&] { return !queue.work.empty(); });
      std::function<void()> work = std::move(queue.work.front());
      queue.work.pop_front();
      lock.unlock();
      if (!work) { return; }
      work();
    }
  }
  std::deque<Queue> queues_;
  std::vector<std::thread> threads_;
};

struct Case {
  CollectiveKind kind;
  SbpParallel src;
  SbpParallel dst;
};

CollectiveTaskProto Task(const Case& c, int64_t ranks, int64_t rank, const Shape& shape) {
  CollectiveTaskProto task;
  task.set_collective_id(7);
  task.set_kind(c.kind);
  task.set_rank(rank);
  for (int64_t r = 0; r < ranks; ++r) {
    task.add_rank_machine(0);
    task.add_rank_device(r);
  }
  task.set_lbn("x/out_0");
  *task.mutable_logical_blob_desc() = BlobDesc{shape, kDouble}.ToProto();
  *task.mutable_src_sbp() = c.src;
  *task.mutable_dst_sbp() = c.dst;
  return task;
}

// Value of element `index` (row-major in the logical shape) of rank r's input.
double InputValue(const Case& c, int64_t rank, int64_t index) {
  return c.src.has_partial_sum_parallel() ? (rank + 1) * 1000.0 + index : 1.0 * index;
}

class Collectives : public ::testing::TestWithParam<int64_t> {};

TEST_P(Collectives, EveryKindEqualsTheReference) {
  const int64_t ranks = GetParam();
  const Shape shape({7, 5});  // uneven over 2, 3 and 4 ranks
  const std::vector<Case> cases = {
      {kAllReduce, PartialSumSbp(), BroadcastSbp()}, {kReduceScatter, PartialSumSbp(), SplitSbp(1)},
      {kAllGather, SplitSbp(0), BroadcastSbp()},     {kAllToAll, SplitSbp(0), SplitSbp(1)},
      {kAllToAll, SplitSbp(1), SplitSbp(0)},
  };
  DeviceThreads threads(ranks);
  InProcessCommunicator communicator(
      [&](int64_t, int64_t device, std::function<void()> work) { threads.Post(device, work); });
  for (const Case& c : cases) {
    for (int64_t piece = 0; piece < 3; ++piece) {
      std::vector<CollectiveTaskProto> tasks;
      std::vector<std::vector<double>> inputs(ranks), outputs(ranks);
      for (int64_t r = 0; r < ranks; ++r) {
        tasks.push_back(Task(c, ranks, r, shape));
        const TensorSlice in_slice = SliceOfPart(shape, c.src, r, ranks);
        const TensorSlice out_slice = SliceOfPart(shape, c.dst, r, ranks);
        for (int64_t i = 0; i < in_slice.extent[0]; ++i) {
          for (int64_t j = 0; j < in_slice.extent[1]; ++j) {
            const int64_t index = (in_slice.begin[0] + i) * 5 + in_slice.begin[1] + j;
            inputs[r].push_back(InputValue(c, r, index) + 0.5 * piece);
          }
        }
        outputs[r].assign(out_slice.elem_count(), -1.0);
      }
      std::vector<std::promise<void>> done(ranks);
      // Ranks submit from their own device threads, last rank first.
      for (int64_t r = ranks - 1; r >= 0; --r) {
        threads.Post(r, [&, r] {
          CollectiveCall call{&tasks[r], piece, inputs[r].data(), outputs[r].data()};
          communicator.Submit(call, [&done, r](std::exception_ptr error) {
            EXPECT_FALSE(error);
            done[r].set_value();
          });
        });
      }
      for (auto& promise : done) { promise.get_future().wait(); }
      for (int64_t r = 0; r < ranks; ++r) {
        const TensorSlice out_slice = SliceOfPart(shape, c.dst, r, ranks);
        int64_t position = 0;
        for (int64_t i = 0; i < out_slice.extent[0]; ++i) {
          for (int64_t j = 0; j < out_slice.extent[1]; ++j) {
            const int64_t index = (out_slice.begin[0] + i) * 5 + out_slice.begin[1] + j;
            double expected = 0;
            if (c.src.has_partial_sum_parallel()) {
              for (int64_t s = 0; s < ranks; ++s) {
                expected += InputValue(c, s, index) + 0.5 * piece;
              }
            } else {
              expected = InputValue(c, 0, index) + 0.5 * piece;
            }
            EXPECT_EQ(outputs[r][position++], expected)
                << CollectiveKindName(c.kind) << " " << SbpToString(c.src) << "->"
                << SbpToString(c.dst) << " rank " << r << " of " << ranks << " element " << index;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, Collectives, ::testing::Values(2, 3, 4));

}  // namespace
}  // namespace oneflow
