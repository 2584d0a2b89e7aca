#pragma once
// The order in which one device enqueues its collectives, for transports whose collectives wait
// for their peers on the device (NCCL): if two devices enqueued two shared collectives in
// opposite orders, each would wait for one the other has queued behind. Every device follows one
// global order: iteration by iteration, and within an iteration its collectives by increasing
// collective id (ids grow in the topological order of the boxing that made them, and only one
// job runs at a time). A collective submitted before its turn (its input was ready early) waits
// here until the ones before it have been released. Device-neutral; used from the device's own
// runtime thread only, so it needs no lock.

#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

namespace oneflow {

class CollectiveSequencer {
 public:
  using Release = std::function<void()>;

  // `job` has collective `collective_id` on this device (once per id; ids of one job, any order).
  void Declare(int64_t job, int64_t collective_id);
  // Collective `collective_id` of `job`, iteration `piece`, is ready: `release` runs (here, or in
  // a later Submit) once every collective before it in the order has been released.
  void Submit(int64_t job, int64_t piece, int64_t collective_id, Release release);
  // Collectives submitted and not yet released.
  int64_t waiting() const { return static_cast<int64_t>(waiting_.size()); }

 private:
  std::map<int64_t, std::vector<int64_t>> order_;          // job -> its collective ids, sorted
  std::map<int64_t, std::map<int64_t, size_t>> position_;  // job -> id -> index in order
  std::map<std::tuple<int64_t, int64_t, size_t>, Release> waiting_;  // (job, piece, index)
  bool in_round_ = false;  // releasing one iteration's collectives
  int64_t job_ = 0;
  int64_t piece_ = 0;
  size_t next_ = 0;
};

}  // namespace oneflow
