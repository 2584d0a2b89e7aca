#include "oneflow/comm/collective_sequencer.h"

#include <algorithm>

#include "oneflow/common/error.h"

namespace oneflow {

void CollectiveSequencer::Declare(int64_t job, int64_t collective_id) {
  std::vector<int64_t>& order = order_[job];
  if (std::find(order.begin(), order.end(), collective_id) != order.end()) { return; }
  order.insert(std::upper_bound(order.begin(), order.end(), collective_id), collective_id);
  std::map<int64_t, size_t>& position = position_[job];
  for (size_t i = 0; i < order.size(); ++i) { position[order[i]] = i; }
}

void CollectiveSequencer::Submit(int64_t job, int64_t piece, int64_t collective_id,
                                 Release release) {
  auto job_position = position_.find(job);
  OF_CHECK(job_position != position_.end() && job_position->second.count(collective_id))
      << "collective " << collective_id << " of job " << job
      << " was submitted but never declared on this device";
  const size_t index = job_position->second.at(collective_id);
  const bool inserted =
      waiting_.emplace(std::make_tuple(job, piece, index), std::move(release)).second;
  OF_CHECK(inserted) << "collective " << collective_id << " of job " << job << " submitted twice "
                     << "for piece " << piece;
  while (true) {
    if (!in_round_) {
      // The next iteration starts with the earliest waiting first collective (jobs never
      // overlap, and one job's pieces reach a given collective in order).
      auto first = std::find_if(waiting_.begin(), waiting_.end(),
                                [](const auto& entry) { return std::get<2>(entry.first) == 0; });
      if (first == waiting_.end()) { return; }
      in_round_ = true;
      job_ = std::get<0>(first->first);
      piece_ = std::get<1>(first->first);
      next_ = 0;
    }
    auto it = waiting_.find(std::make_tuple(job_, piece_, next_));
    if (it == waiting_.end()) { return; }
    Release ready = std::move(it->second);
    waiting_.erase(it);
    if (++next_ == order_.at(job_).size()) { in_round_ = false; }
    ready();
  }
}

}  // namespace oneflow
