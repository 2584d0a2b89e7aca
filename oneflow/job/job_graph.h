#pragma once
// Read-only adjacency of a Job: who consumes each blob, which op produces it, and a
// topological order over data and control edges.

#include <map>
#include <string>
#include <vector>

#include "proto/job.pb.h"

namespace oneflow {

class JobGraph {
 public:
  explicit JobGraph(const Job& job);

  const OperatorConf& Op(const std::string& op_name) const;
  // Ops reading `lbn` through a data input (an op reading it twice appears once).
  const std::vector<std::string>& Consumers(const std::string& lbn) const;
  const std::string& Producer(const std::string& lbn) const;
  // Op names, producers before consumers (data and control edges). Throws on a cycle.
  const std::vector<std::string>& TopologicalOrder() const { return order_; }

 private:
  const Job& job_;
  std::map<std::string, int64_t> op_index_;
  std::map<std::string, std::vector<std::string>> consumers_;
  std::map<std::string, std::string> producer_;
  std::vector<std::string> order_;
};

}  // namespace oneflow
