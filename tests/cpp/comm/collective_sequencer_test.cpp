// The order in which a device releases its collectives (what NCCL needs to never deadlock):
// submitted in any order, released iteration by iteration, by increasing collective id.
#include "oneflow/comm/collective_sequencer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "oneflow/common/error.h"

namespace oneflow {
namespace {

struct Released {
  int64_t job, piece, id;
  bool operator==(const Released& other) const {
    return job == other.job && piece == other.piece && id == other.id;
  }
};

class Recorder {
 public:
  CollectiveSequencer::Release For(int64_t job, int64_t piece, int64_t id) {
    return [this, job, piece, id] { released.push_back({job, piece, id}); };
  }
  std::vector<Released> released;
};

TEST(CollectiveSequencer, ReleasesByIncreasingIdWhateverTheSubmissionOrder) {
  CollectiveSequencer sequencer;
  for (int64_t id : {7, 3, 5}) { sequencer.Declare(0, id); }
  Recorder recorder;
  sequencer.Submit(0, 0, 7, recorder.For(0, 0, 7));  // ready first, released last
  sequencer.Submit(0, 0, 5, recorder.For(0, 0, 5));
  EXPECT_TRUE(recorder.released.empty());
  EXPECT_EQ(sequencer.waiting(), 2);
  sequencer.Submit(0, 0, 3, recorder.For(0, 0, 3));
  const std::vector<Released> expected = {{0, 0, 3}, {0, 0, 5}, {0, 0, 7}};
  EXPECT_EQ(recorder.released, expected);
  EXPECT_EQ(sequencer.waiting(), 0);
}

TEST(CollectiveSequencer, AnIterationWaitsForThePreviousOne) {
  CollectiveSequencer sequencer;
  sequencer.Declare(0, 1);
  sequencer.Declare(0, 2);
  Recorder recorder;
  sequencer.Submit(0, 0, 1, recorder.For(0, 0, 1));
  sequencer.Submit(0, 1, 1, recorder.For(0, 1, 1));  // piece 1 overtakes piece 0's second
  EXPECT_EQ(recorder.released.size(), 1u);
  sequencer.Submit(0, 1, 2, recorder.For(0, 1, 2));
  EXPECT_EQ(recorder.released.size(), 1u);
  sequencer.Submit(0, 0, 2, recorder.For(0, 0, 2));
  const std::vector<Released> expected = {{0, 0, 1}, {0, 0, 2}, {0, 1, 1}, {0, 1, 2}};
  EXPECT_EQ(recorder.released, expected);
}

TEST(CollectiveSequencer, JobsFollowEachOther) {
  CollectiveSequencer sequencer;
  sequencer.Declare(0, 4);
  sequencer.Declare(1, 9);
  sequencer.Declare(1, 8);
  Recorder recorder;
  sequencer.Submit(0, 0, 4, recorder.For(0, 0, 4));
  sequencer.Submit(1, 0, 9, recorder.For(1, 0, 9));
  sequencer.Submit(1, 0, 8, recorder.For(1, 0, 8));
  const std::vector<Released> expected = {{0, 0, 4}, {1, 0, 8}, {1, 0, 9}};
  EXPECT_EQ(recorder.released, expected);
}

// Two devices sharing collectives: whatever order their inputs become ready in, both release
// the shared ones in the same relative order (so NCCL peers always meet).
TEST(CollectiveSequencer, DevicesAgreeOnTheOrderOfSharedCollectives) {
  const std::vector<int64_t> first_device = {0, 1, 2, 4, 6};   // ids on device 0
  const std::vector<int64_t> second_device = {1, 3, 4, 5, 6};  // ids on device 1; 1, 4, 6 shared
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::vector<Released>> released;
    for (const auto& ids : {first_device, second_device}) {
      CollectiveSequencer sequencer;
      for (int64_t id : ids) { sequencer.Declare(0, id); }
      Recorder recorder;
      // Any order in which each collective's pieces stay in order (one actor per collective
      // acts piece after piece): shuffle the ids, then number each id's occurrences.
      std::vector<int64_t> submissions;
      for (int64_t piece = 0; piece < 3; ++piece) {
        submissions.insert(submissions.end(), ids.begin(), ids.end());
      }
      std::shuffle(submissions.begin(), submissions.end(), rng);
      std::map<int64_t, int64_t> next_piece;
      for (int64_t id : submissions) {
        const int64_t piece = next_piece[id]++;
        sequencer.Submit(0, piece, id, recorder.For(0, piece, id));
      }
      EXPECT_EQ(sequencer.waiting(), 0);
      released.push_back(recorder.released);
    }
    auto shared = [](const std::vector<Released>& all) {
      std::vector<Released> result;
      for (const Released& r : all) {
        if (r.id == 1 || r.id == 4 || r.id == 6) { result.push_back(r); }
      }
      return result;
    };
    ASSERT_EQ(shared(released[0]), shared(released[1])) << "trial " << trial;
    ASSERT_EQ(released[0].size(), 15u);
  }
}

TEST(CollectiveSequencer, UndeclaredOrRepeatedSubmissionsAreInternalErrors) {
  CollectiveSequencer sequencer;
  sequencer.Declare(0, 1);
  sequencer.Declare(0, 2);
  EXPECT_THROW(sequencer.Submit(0, 0, 3, [] {}), Error);
  sequencer.Submit(0, 0, 2, [] {});
  EXPECT_THROW(sequencer.Submit(0, 0, 2, [] {}), Error);
}

}  // namespace
}  // namespace oneflow
