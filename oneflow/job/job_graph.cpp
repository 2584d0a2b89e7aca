#include "oneflow/job/job_graph.h"

#include <algorithm>
#include <set>

#include "oneflow/common/error.h"

namespace oneflow {

JobGraph::JobGraph(const Job& job) : job_(job) {
  for (int64_t i = 0; i < job.op_size(); ++i) {
    const OperatorConf& op = job.op(i);
    op_index_[op.name()] = i;
    for (const auto& entry : op.output()) {
      for (const std::string& lbn : entry.second.value()) { producer_[lbn] = op.name(); }
    }
  }
  std::map<std::string, std::set<std::string>> predecessors;
  std::map<std::string, std::vector<std::string>> successors;
  for (const OperatorConf& op : job.op()) {
    std::set<std::string>& preds = predecessors[op.name()];
    for (const auto& entry : op.input()) {
      for (const std::string& lbn : entry.second.value()) {
        auto& consumers = consumers_[lbn];
        if (std::find(consumers.begin(), consumers.end(), op.name()) == consumers.end()) {
          consumers.push_back(op.name());
        }
        preds.insert(Producer(lbn));
      }
    }
    for (const std::string& control : op.control_input()) { preds.insert(control); }
    for (const std::string& pred : preds) { successors[pred].push_back(op.name()); }
  }
  // Kahn's algorithm, seeded in job order so the result is stable.
  std::map<std::string, int64_t> pending;
  std::vector<std::string> ready;
  for (const OperatorConf& op : job.op()) {
    pending[op.name()] = static_cast<int64_t>(predecessors[op.name()].size());
    if (pending[op.name()] == 0) { ready.push_back(op.name()); }
  }
  for (size_t head = 0; head < ready.size(); ++head) {
    order_.push_back(ready[head]);
    for (const std::string& next : successors[ready[head]]) {
      if (--pending[next] == 0) { ready.push_back(next); }
    }
  }
  OF_CHECK(order_.size() == static_cast<size_t>(job.op_size()))
      << "job '" << job.job_conf().job_name() << "' has a cycle";
}

const OperatorConf& JobGraph::Op(const std::string& op_name) const {
  return job_.op(op_index_.at(op_name));
}

const std::vector<std::string>& JobGraph::Consumers(const std::string& lbn) const {
  static const std::vector<std::string> kNone;
  auto it = consumers_.find(lbn);
  return it == consumers_.end() ? kNone : it->second;
}

const std::string& JobGraph::Producer(const std::string& lbn) const {
  auto it = producer_.find(lbn);
  OF_CHECK(it != producer_.end()) << "blob '" << lbn << "' has no producer";
  return it->second;
}

}  // namespace oneflow
