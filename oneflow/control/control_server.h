#pragma once
// The master's side of the control plane: rank 0's ControlPlane owns one ControlServer, which
// serves proto/control.proto's ControlService over gRPC (synchronous service, gRPC's thread pool)
// and holds the cluster's state: who registered, who left, when each rank was last heard from,
// the key-value store and the barriers. A monitor thread marks a rank lost once it has been silent
// for heartbeat_timeout; the first loss becomes the cluster failure, which wakes every waiting
// call and is reported in every later reply.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "proto/control.grpc.pb.h"

namespace oneflow {

class ControlServer final : public ControlService::Service {
 public:
  // Binds host:port and starts serving; throws Error (kRuntime) naming the port when it cannot.
  ControlServer(const std::string& host, int port, int64_t world_size,
                std::chrono::milliseconds heartbeat_timeout);
  ~ControlServer() override;  // Stop()

  int port() const { return port_; }
  // Waits until every rank other than 0 has left or been lost, or until `timeout`.
  void WaitForWorkersToLeave(std::chrono::milliseconds timeout);
  // Wakes every waiting call and stops the server; calls still running after `grace` are
  // cancelled. Idempotent.
  void Stop(std::chrono::milliseconds grace);

  grpc::Status Register(grpc::ServerContext* context, const RegisterRequest* request,
                        RegisterReply* reply) override;
  grpc::Status Set(grpc::ServerContext* context, const SetRequest* request,
                   SetReply* reply) override;
  grpc::Status Get(grpc::ServerContext* context, const GetRequest* request,
                   GetReply* reply) override;
  grpc::Status Erase(grpc::ServerContext* context, const EraseRequest* request,
                     EraseReply* reply) override;
  grpc::Status Add(grpc::ServerContext* context, const AddRequest* request,
                   AddReply* reply) override;
  grpc::Status Barrier(grpc::ServerContext* context, const BarrierRequest* request,
                       BarrierReply* reply) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const HeartbeatRequest* request,
                         HeartbeatReply* reply) override;
  grpc::Status Leave(grpc::ServerContext* context, const LeaveRequest* request,
                     LeaveReply* reply) override;

 private:
  using Clock = std::chrono::steady_clock;

  // A barrier passes when `arrived` holds every rank; then `generation` grows and `arrived`
  // empties, so the name can be reused.
  struct BarrierState {
    std::set<int64_t> arrived;
    int64_t generation = 0;
  };

  // Waits on `changed_` until `done()` holds, the wait ends, the client cancels, the cluster fails
  // or the server stops. Returns done(). Called with `lock` held.
  template <typename Predicate>
  bool WaitUntil(std::unique_lock<std::mutex>& lock, grpc::ServerContext* context, int64_t wait_ms,
                 Predicate done);
  grpc::Status CheckRank(int64_t rank) const;
  std::vector<int64_t> MissingRegistrations() const;  // mutex_ held
  void MonitorHeartbeats();

  const int64_t world_size_;
  const std::chrono::milliseconds heartbeat_timeout_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::map<int64_t, uint64_t> registered_tokens_;  // rank -> token of the process that registered
  bool rendezvous_complete_ = false;
  std::map<int64_t, Clock::time_point> last_heard_;  // watched ranks: registered, not left or lost
  std::set<int64_t> left_;
  std::set<int64_t> lost_;
  std::string failure_;
  std::map<std::string, std::string> store_;
  std::map<std::string, BarrierState> barriers_;
  std::thread monitor_;
};

// "s" seconds with up to 3 decimals, for messages: 5000 ms -> "5 s", 1500 ms -> "1.5 s".
std::string FormatSeconds(std::chrono::milliseconds duration);
// "machine 1", "machines 2, 3".
std::string FormatMachines(const std::vector<int64_t>& ranks);
// "host:port", with brackets around IPv6 hosts.
std::string FormatAddress(const std::string& host, int port);

}  // namespace oneflow
