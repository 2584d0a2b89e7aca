#pragma once
// A worker machine's whole life in a cluster: it runs no user code of its own past the first
// session, but serves the master's commands (proto/cluster.proto) in order: start a Plan (its
// tasks on this machine, with the variable parts they use), launch iterations and report their
// end, exchange variable values, stop the Plan, and finally halt.

namespace oneflow {

class Cluster;

// Returns when the master halts the cluster; throws RuntimeError when the cluster fails (a lost
// peer) or a command cannot be served.
void ServeAsWorker(Cluster& cluster);

}  // namespace oneflow
