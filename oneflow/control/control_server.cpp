#include "oneflow/control/control_server.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <sstream>

#include "oneflow/common/error.h"

namespace oneflow {

namespace {

// Server-side waits wake this often to notice a client that cancelled its call.
constexpr std::chrono::milliseconds kCancellationPoll{100};

grpc::Status ShuttingDown() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the master (rank 0) is shutting down");
}

}  // namespace

std::string FormatSeconds(std::chrono::milliseconds duration) {
  std::ostringstream stream;
  stream << static_cast<double>(duration.count()) / 1000.0 << " s";
  return stream.str();
}

std::string FormatMachines(const std::vector<int64_t>& ranks) {
  std::string text = ranks.size() == 1 ? "machine " : "machines ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

std::string FormatAddress(const std::string& host, int port) {
  bool is_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return (is_ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

ControlServer::ControlServer(const std::string& host, int port, int64_t world_size,
                             std::chrono::milliseconds heartbeat_timeout)
    : world_size_(world_size), heartbeat_timeout_(heartbeat_timeout) {
  std::string address = FormatAddress(host, port);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port_);
  // gRPC sets SO_REUSEPORT by default: a second server would then share a port in use instead of
  // failing, and the ranks would meet at two different masters.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(INT_MAX);
  builder.SetMaxSendMessageSize(INT_MAX);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    if (server_ != nullptr) server_->Shutdown();
    server_.reset();
    throw Error(ErrorKind::kRuntime)
        << "control plane: rank 0 cannot serve at " << address << ": port " << port
        << " is in use, or " << host
        << " is not an address of this machine (choose another MASTER_PORT/MASTER_ADDR)";
  }
  monitor_ = std::thread([this] { MonitorHeartbeats(); });
}

ControlServer::~ControlServer() { Stop(std::chrono::milliseconds(0)); }

void ControlServer::WaitForWorkersToLeave(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    for (const auto& [rank, token] : registered_tokens_) {
      if (rank != 0 && !left_.count(rank) && !lost_.count(rank)) return false;
    }
    return true;
  });
}

void ControlServer::Stop(std::chrono::milliseconds grace) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (monitor_.joinable()) monitor_.join();
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + grace);
    server_->Wait();
    server_.reset();
  }
}

template <typename Predicate>
bool ControlServer::WaitUntil(std::unique_lock<std::mutex>& lock, grpc::ServerContext* context,
                              int64_t wait_ms, Predicate done) {
  auto deadline = Clock::now() + std::chrono::milliseconds(std::max<int64_t>(wait_ms, 0));
  while (!done()) {
    if (stopping_ || !failure_.empty() || context->IsCancelled()) return false;
    auto now = Clock::now();
    if (now >= deadline) return false;
    changed_.wait_until(lock, std::min(deadline, now + kCancellationPoll));
  }
  return true;
}

grpc::Status ControlServer::CheckRank(int64_t rank) const {
  if (rank >= 0 && rank < world_size_) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      "rank " + std::to_string(rank) +
                          " is out of range: the master has world size " +
                          std::to_string(world_size_) + " (RANK/WORLD_SIZE must agree)");
}

std::vector<int64_t> ControlServer::MissingRegistrations() const {
  std::vector<int64_t> missing;
  for (int64_t rank = 0; rank < world_size_; ++rank) {
    if (!registered_tokens_.count(rank)) missing.push_back(rank);
  }
  return missing;
}

grpc::Status ControlServer::Register(grpc::ServerContext* context, const RegisterRequest* request,
                                     RegisterReply* reply) {
  if (grpc::Status status = CheckRank(request->rank()); !status.ok()) return status;
  if (request->world_size() != world_size_) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "rank " + std::to_string(request->rank()) + " has world size " +
                            std::to_string(request->world_size()) + " but the master has " +
                            std::to_string(world_size_) + " (WORLD_SIZE must agree)");
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return ShuttingDown();
  auto [entry, inserted] = registered_tokens_.emplace(request->rank(), request->token());
  if (!inserted && entry->second != request->token()) {
    return grpc::Status(grpc::StatusCode::ALREADY_EXISTS,
                        "rank " + std::to_string(request->rank()) +
                            " was already registered by another process (two processes have "
                            "RANK=" +
                            std::to_string(request->rank()) + ")");
  }
  if (!rendezvous_complete_ && static_cast<int64_t>(registered_tokens_.size()) == world_size_) {
    rendezvous_complete_ = true;
    // Heartbeats start now: a rank waiting for a late peer is not silent.
    auto now = Clock::now();
    for (const auto& [rank, token] : registered_tokens_) last_heard_[rank] = now;
    changed_.notify_all();
  }
  // A master that gives up stops while workers wait here: they still learn who is missing.
  WaitUntil(lock, context, request->wait_ms(), [&] { return rendezvous_complete_; });
  reply->set_complete(rendezvous_complete_);
  for (int64_t rank : MissingRegistrations()) reply->add_missing_ranks(rank);
  return grpc::Status::OK;
}

grpc::Status ControlServer::Set(grpc::ServerContext*, const SetRequest* request, SetReply*) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return ShuttingDown();
    store_[request->key()] = request->value();
  }
  changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status ControlServer::Get(grpc::ServerContext* context, const GetRequest* request,
                                GetReply* reply) {
  std::unique_lock<std::mutex> lock(mutex_);
  bool found = WaitUntil(lock, context, request->wait_ms(),
                         [&] { return store_.count(request->key()) > 0; });
  if (found) {
    reply->set_found(true);
    reply->set_value(store_.at(request->key()));
    return grpc::Status::OK;
  }
  if (stopping_) return ShuttingDown();
  reply->set_failure(failure_);
  return grpc::Status::OK;
}

grpc::Status ControlServer::Erase(grpc::ServerContext*, const EraseRequest* request, EraseReply*) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) return ShuttingDown();
  store_.erase(request->key());
  return grpc::Status::OK;
}

grpc::Status ControlServer::Add(grpc::ServerContext*, const AddRequest* request, AddReply* reply) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return ShuttingDown();
    std::string& text = store_[request->key()];
    int64_t value = 0;
    if (!text.empty()) {
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size()) {
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                            "key '" + request->key() + "' does not hold an integer counter");
      }
    }
    value += request->delta();
    text = std::to_string(value);
    reply->set_value(value);
  }
  changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status ControlServer::Barrier(grpc::ServerContext* context, const BarrierRequest* request,
                                    BarrierReply* reply) {
  if (grpc::Status status = CheckRank(request->rank()); !status.ok()) return status;
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return ShuttingDown();
  BarrierState& barrier = barriers_[request->name()];
  int64_t generation = barrier.generation;
  barrier.arrived.insert(request->rank());
  if (static_cast<int64_t>(barrier.arrived.size()) == world_size_) {
    barrier.arrived.clear();
    ++barrier.generation;
    changed_.notify_all();
  }
  bool passed = WaitUntil(lock, context, request->wait_ms(),
                          [&] { return barrier.generation != generation; });
  if (stopping_ && !passed) return ShuttingDown();
  reply->set_passed(passed);
  if (!passed) {
    for (int64_t rank = 0; rank < world_size_; ++rank) {
      if (!barrier.arrived.count(rank)) reply->add_missing_ranks(rank);
    }
    reply->set_failure(failure_);
  }
  return grpc::Status::OK;
}

grpc::Status ControlServer::Heartbeat(grpc::ServerContext*, const HeartbeatRequest* request,
                                      HeartbeatReply* reply) {
  if (grpc::Status status = CheckRank(request->rank()); !status.ok()) return status;
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) return ShuttingDown();
  auto watched = last_heard_.find(request->rank());
  if (watched != last_heard_.end()) watched->second = Clock::now();
  reply->set_failure(failure_);
  return grpc::Status::OK;
}

grpc::Status ControlServer::Leave(grpc::ServerContext*, const LeaveRequest* request, LeaveReply*) {
  if (grpc::Status status = CheckRank(request->rank()); !status.ok()) return status;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left_.insert(request->rank());
    last_heard_.erase(request->rank());
  }
  changed_.notify_all();
  return grpc::Status::OK;
}

void ControlServer::MonitorHeartbeats() {
  auto tick = std::clamp<std::chrono::milliseconds>(
      heartbeat_timeout_ / 10, std::chrono::milliseconds(10), kCancellationPoll);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, tick);
    auto now = Clock::now();
    bool any_lost = false;
    for (auto it = last_heard_.begin(); it != last_heard_.end();) {
      if (now - it->second <= heartbeat_timeout_) {
        ++it;
        continue;
      }
      int64_t rank = it->first;
      lost_.insert(rank);
      it = last_heard_.erase(it);
      any_lost = true;
      if (failure_.empty()) {
        failure_ = "machine " + std::to_string(rank) + " (rank " + std::to_string(rank) + " of " +
                   std::to_string(world_size_) + ") stopped answering heartbeats for " +
                   FormatSeconds(heartbeat_timeout_) + ": its process died or hangs";
      }
    }
    if (any_lost) changed_.notify_all();
  }
}

}  // namespace oneflow
