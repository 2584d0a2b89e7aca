#include "oneflow/control/control_plane.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <climits>
#include <iostream>
#include <random>

#include "oneflow/common/error.h"
#include "oneflow/control/control_server.h"
#include "proto/control.grpc.pb.h"

namespace oneflow {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Rendezvous asks the master for news this often, so a worker can say who is still missing.
constexpr milliseconds kRegisterPoll{1000};
// Extra time a call's gRPC deadline gives the reply beyond the master's own wait.
constexpr milliseconds kReplyMargin{250};
// After the master stopped answering a blocking call, it is asked again this often.
constexpr milliseconds kRetryPause{50};
// How long rank 0's Shutdown waits for the other ranks to leave, and how long calls still running
// on its server then get to finish.
constexpr milliseconds kWaitForWorkers{5000};
constexpr milliseconds kServerGrace{500};
// Leave is a courtesy: a master that does not answer quickly is not waited for.
constexpr milliseconds kLeaveDeadline{1000};

std::chrono::system_clock::time_point DeadlineIn(milliseconds duration) {
  return std::chrono::system_clock::now() + duration;
}

milliseconds Remaining(Clock::time_point deadline) {
  return std::max(milliseconds(0),
                  std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
}

std::string Quote(const std::string& key) { return "'" + key + "'"; }

// The master stopped (or its connection broke) while serving a blocking call: worth asking again
// until the heartbeat declares it lost.
bool MasterWentAway(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::CANCELLED;
}

}  // namespace

struct ControlPlane::StubHolder {
  std::unique_ptr<ControlService::Stub> stub;
};

ControlPlane::ControlPlane(const ClusterSpec& spec) : spec_(spec) {
  if (spec.world_size < 1 || spec.rank < 0 || spec.rank >= spec.world_size) {
    throw Error(ErrorKind::kValue) << "ClusterSpec: rank " << spec.rank
                                   << " is out of range for world size " << spec.world_size;
  }
  if (spec.master_port < 0 || spec.master_port > 65535 ||
      (spec.master_port == 0 && spec.world_size > 1)) {
    throw Error(ErrorKind::kValue) << "ClusterSpec: master_port " << spec.master_port
                                   << " is not a port the other ranks can connect to (1..65535)";
  }
  if (spec.heartbeat_interval.count() <= 0 || spec.heartbeat_interval >= spec.heartbeat_timeout) {
    throw Error(ErrorKind::kValue)
        << "ClusterSpec: heartbeat_interval (" << FormatSeconds(spec.heartbeat_interval)
        << ") must be positive and shorter than heartbeat_timeout ("
        << FormatSeconds(spec.heartbeat_timeout) << ")";
  }
  token_ = std::random_device()() * (uint64_t(1) << 32) + std::random_device()();

  int port = spec.master_port;
  if (spec.rank == 0) {
    server_ = std::make_unique<ControlServer>(spec.master_addr, spec.master_port, spec.world_size,
                                              spec.heartbeat_timeout);
    port = server_->port();
  }
  master_address_ = FormatAddress(spec.master_addr, port);

  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(INT_MAX);
  arguments.SetMaxSendMessageSize(INT_MAX);
  // The master is reached directly, never through an http_proxy from the environment.
  arguments.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  // Channels to the same address would otherwise share one connection process-wide (several ranks
  // in one process, as in the tests), so a crashed rank could not drop its own.
  arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // A worker started before the master retries connecting every 0.1-1 s, not up to 2 minutes.
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ =
      grpc::CreateCustomChannel(master_address_, grpc::InsecureChannelCredentials(), arguments);
  stub_ = std::make_unique<StubHolder>();
  stub_->stub = ControlService::NewStub(channel_);

  try {
    Rendezvous();
  } catch (...) {
    if (server_ != nullptr) server_->Stop(kServerGrace);
    throw;
  }
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
}

ControlPlane::~ControlPlane() {
  Shutdown();
  // Shutdown may have run earlier on the heartbeat thread itself (from the failure handler),
  // which cannot join itself: join it now, or, when this destructor runs on that thread, let it
  // go, since a joinable std::thread destroyed here would end the process (std::terminate).
  StopHeartbeat();
  if (heartbeat_thread_.joinable()) { heartbeat_thread_.detach(); }
}

template <typename Invoke>
auto ControlPlane::CallMaster(std::chrono::system_clock::time_point deadline, Invoke&& invoke) {
  grpc::ClientContext context;
  context.set_deadline(deadline);
  // Waits for the connection too: the master may start after this rank, or be reconnecting.
  context.set_wait_for_ready(true);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty() || crashed_ || shut_down_) return grpc::Status::CANCELLED;
    calls_in_flight_.insert(&context);
  }
  grpc::Status status = invoke(*stub_->stub, &context);
  std::lock_guard<std::mutex> lock(mutex_);
  calls_in_flight_.erase(&context);
  return status;
}

void ControlPlane::Rendezvous() {
  auto deadline = Clock::now() + spec_.rendezvous_timeout;
  bool reached_master = false;
  std::vector<int64_t> missing;
  std::string last_error;
  for (milliseconds remaining = Remaining(deadline); remaining.count() > 0;
       remaining = Remaining(deadline)) {
    RegisterRequest request;
    request.set_rank(spec_.rank);
    request.set_world_size(spec_.world_size);
    request.set_token(token_);
    request.set_wait_ms(std::min(remaining, kRegisterPoll).count());
    RegisterReply reply;
    grpc::Status status = CallMaster(DeadlineIn(std::min(remaining, kRegisterPoll) + kReplyMargin),
                                     [&](ControlService::Stub& stub, grpc::ClientContext* context) {
                                       return stub.Register(context, request, &reply);
                                     });
    if (status.ok()) {
      reached_master = true;
      if (reply.complete()) return;
      missing.assign(reply.missing_ranks().begin(), reply.missing_ranks().end());
      continue;
    }
    if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
        status.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
        status.error_code() == grpc::StatusCode::ALREADY_EXISTS) {
      throw Error(ErrorKind::kRuntime)
          << "rendezvous at " << master_address_ << ": the master "
          << "refused rank " << spec_.rank << ": " << status.error_message();
    }
    last_error = status.error_message();
    // A master that is not up yet fails at once only after its connection attempt: do not spin.
    std::this_thread::sleep_for(std::min(Remaining(deadline), kRetryPause));
  }
  if (!reached_master) {
    throw Error(ErrorKind::kRuntime)
        << "rendezvous: rank " << spec_.rank << " could not reach the master (rank 0) at "
        << master_address_ << " within " << FormatSeconds(spec_.rendezvous_timeout)
        << " (last error: " << last_error
        << "; is rank 0 running? MASTER_ADDR/MASTER_PORT must agree on every rank)";
  }
  throw Error(ErrorKind::kRuntime)
      << "rendezvous at " << master_address_ << " timed out after "
      << FormatSeconds(spec_.rendezvous_timeout) << ": " << FormatMachines(missing) << " of "
      << spec_.world_size
      << " never registered (is their process running? RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT "
         "must agree)";
}

bool ControlPlane::CancelledHere() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !failure_.empty() || crashed_ || shut_down_;
}

void ControlPlane::ThrowFailure(const std::string& what) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Error error(ErrorKind::kRuntime);
  error << what << " on rank " << spec_.rank << ": ";
  if (!failure_.empty()) {
    error << "the cluster failed: " << failure_;
  } else if (crashed_) {
    error << "this rank crashed (simulated for a test)";
  } else {
    error << "the control plane was shut down";
  }
  throw error;
}

namespace {

[[noreturn]] void ThrowCallError(const std::string& what, int64_t rank, const std::string& address,
                                 const grpc::Status& status) {
  throw Error(ErrorKind::kRuntime)
      << what << " on rank " << rank << ": the control service at " << address
      << " answered: " << status.error_message() << " (gRPC code "
      << static_cast<int>(status.error_code()) << ")";
}

}  // namespace

template <typename Invoke>
grpc::Status ControlPlane::CallMasterPatiently(const std::string& what, Clock::time_point deadline,
                                               bool may_repeat, Invoke&& invoke) {
  while (true) {
    milliseconds remaining = Remaining(deadline);
    grpc::Status status = CallMaster(DeadlineIn(remaining + kReplyMargin),
                                     [&](ControlService::Stub& stub, grpc::ClientContext* context) {
                                       return invoke(stub, context, remaining);
                                     });
    if (status.ok()) return status;
    if (CancelledHere()) ThrowFailure(what);
    if (!MasterWentAway(status) || Remaining(deadline).count() == 0) return status;
    // The master went away (a broken connection, or it stopped): ask again, or (for a call that
    // must not run twice) only wait, until the heartbeat declares it lost or time runs out.
    {
      std::unique_lock<std::mutex> lock(mutex_);
      heartbeat_wakeup_.wait_for(lock, std::min(Remaining(deadline), kRetryPause),
                                 [&] { return !failure_.empty(); });
    }
    if (CancelledHere()) ThrowFailure(what);
    if (!may_repeat && Remaining(deadline).count() > 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      heartbeat_wakeup_.wait_for(lock, Remaining(deadline), [&] { return !failure_.empty(); });
      if (!failure_.empty()) {
        lock.unlock();
        ThrowFailure(what);
      }
      return status;
    }
  }
}

void ControlPlane::Set(const std::string& key, const std::string& value) {
  std::string what = "Set(" + Quote(key) + ")";
  SetRequest request;
  request.set_key(key);
  request.set_value(value);
  SetReply reply;
  // Large values (a Plan, variables) get 1 s more per 64 MiB.
  auto deadline = Clock::now() + spec_.heartbeat_timeout + milliseconds(value.size() >> 16);
  grpc::Status status = CallMasterPatiently(
      what, deadline, true,
      [&](auto& stub, auto* context, milliseconds) { return stub.Set(context, request, &reply); });
  if (!status.ok()) ThrowCallError(what, spec_.rank, master_address_, status);
}

std::string ControlPlane::Get(const std::string& key, milliseconds timeout) {
  std::string what = "Get(" + Quote(key) + ")";
  GetRequest request;
  request.set_key(key);
  GetReply reply;
  grpc::Status status = CallMasterPatiently(
      what, Clock::now() + timeout, true, [&](auto& stub, auto* context, milliseconds remaining) {
        request.set_wait_ms(remaining.count());  // the master waits for the key
        return stub.Get(context, request, &reply);
      });
  if (status.ok() && reply.found()) return std::move(*reply.mutable_value());
  if (status.ok() && !reply.failure().empty()) {
    RecordFailure(reply.failure());
    ThrowFailure(what);
  }
  if (!status.ok() && status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    ThrowCallError(what, spec_.rank, master_address_, status);
  }
  throw Error(ErrorKind::kRuntime) << what << " on rank " << spec_.rank << " timed out after "
                                   << FormatSeconds(timeout) << ": no rank set the key";
}

bool ControlPlane::TryGet(const std::string& key, std::string* value) {
  std::string what = "TryGet(" + Quote(key) + ")";
  GetRequest request;
  request.set_key(key);
  request.set_wait_ms(0);
  GetReply reply;
  grpc::Status status = CallMasterPatiently(
      what, Clock::now() + spec_.heartbeat_timeout, true,
      [&](auto& stub, auto* context, milliseconds) { return stub.Get(context, request, &reply); });
  if (!status.ok()) ThrowCallError(what, spec_.rank, master_address_, status);
  if (!reply.found()) return false;
  *value = std::move(*reply.mutable_value());
  return true;
}

void ControlPlane::Erase(const std::string& key) {
  std::string what = "Erase(" + Quote(key) + ")";
  EraseRequest request;
  request.set_key(key);
  EraseReply reply;
  grpc::Status status = CallMasterPatiently(what, Clock::now() + spec_.heartbeat_timeout, true,
                                            [&](auto& stub, auto* context, milliseconds) {
                                              return stub.Erase(context, request, &reply);
                                            });
  if (!status.ok()) ThrowCallError(what, spec_.rank, master_address_, status);
}

int64_t ControlPlane::Add(const std::string& key, int64_t delta) {
  std::string what = "Add(" + Quote(key) + ")";
  AddRequest request;
  request.set_key(key);
  request.set_delta(delta);
  AddReply reply;
  // Not repeated: the lost reply may belong to an addition the master did.
  grpc::Status status = CallMasterPatiently(
      what, Clock::now() + spec_.heartbeat_timeout, false,
      [&](auto& stub, auto* context, milliseconds) { return stub.Add(context, request, &reply); });
  if (!status.ok()) ThrowCallError(what, spec_.rank, master_address_, status);
  return reply.value();
}

void ControlPlane::Barrier(const std::string& name, milliseconds timeout) {
  std::string what = "Barrier(" + Quote(name) + ")";
  BarrierRequest request;
  request.set_name(name);
  request.set_rank(spec_.rank);
  BarrierReply reply;
  grpc::Status status = CallMasterPatiently(
      what, Clock::now() + timeout, true, [&](auto& stub, auto* context, milliseconds remaining) {
        request.set_wait_ms(remaining.count());  // the master waits for the other ranks
        return stub.Barrier(context, request, &reply);
      });
  if (status.ok() && reply.passed()) return;
  if (status.ok() && !reply.failure().empty()) {
    RecordFailure(reply.failure());
    ThrowFailure(what);
  }
  if (!status.ok() && status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    ThrowCallError(what, spec_.rank, master_address_, status);
  }
  Error error(ErrorKind::kRuntime);
  error << what << " on rank " << spec_.rank << " timed out after " << FormatSeconds(timeout);
  if (reply.missing_ranks_size() > 0) {
    std::vector<int64_t> missing(reply.missing_ranks().begin(), reply.missing_ranks().end());
    error << ": " << FormatMachines(missing) << " of " << spec_.world_size << " did not arrive";
  }
  throw error;
}

void ControlPlane::SetFailureHandler(std::function<void(const std::string& message)> handler) {
  std::lock_guard<std::mutex> lock(mutex_);
  failure_handler_ = std::move(handler);
}

std::string ControlPlane::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

void ControlPlane::HeartbeatLoop() {
  auto last_answer = Clock::now();
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      heartbeat_wakeup_.wait_for(lock, spec_.heartbeat_interval, [&] {
        return stop_heartbeat_ || (!failure_.empty() && !failure_handled_);
      });
      if (stop_heartbeat_) return;
    }
    // A failure may also come in the reply to another call (a Get woken by the master).
    RunFailureHandlerOnce();
    HeartbeatRequest request;
    request.set_rank(spec_.rank);
    HeartbeatReply reply;
    // One heartbeat may take until the master would be declared lost; a master that is down
    // fails it at once (no wait for the connection).
    milliseconds patience = spec_.heartbeat_timeout -
                            std::chrono::duration_cast<milliseconds>(Clock::now() - last_answer);
    grpc::ClientContext context;
    context.set_deadline(DeadlineIn(std::max(patience, milliseconds(1))));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_heartbeat_) return;
      calls_in_flight_.insert(&context);
    }
    grpc::Status status = stub_->stub->Heartbeat(&context, request, &reply);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      calls_in_flight_.erase(&context);
      if (stop_heartbeat_) return;
    }
    if (status.ok()) {
      last_answer = Clock::now();
      if (!reply.failure().empty()) RecordFailure(reply.failure());
    } else if (Clock::now() - last_answer >= spec_.heartbeat_timeout) {
      RecordFailure("machine 0 (rank 0 of " + std::to_string(spec_.world_size) +
                    ", the master) stopped answering heartbeats for " +
                    FormatSeconds(spec_.heartbeat_timeout) +
                    ": its process died or hangs (last error: " + status.error_message() + ")");
    }
    RunFailureHandlerOnce();
  }
}

void ControlPlane::RecordFailure(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty()) return;
    failure_ = message;
    for (grpc::ClientContext* context : calls_in_flight_) context->TryCancel();
  }
  heartbeat_wakeup_.notify_all();
}

void ControlPlane::RunFailureHandlerOnce() {
  std::function<void(const std::string&)> handler;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty() || failure_handled_) return;
    failure_handled_ = true;
    handler = failure_handler_;
    message = failure_;
  }
  if (!handler) return;
  try {
    handler(message);
  } catch (const std::exception& error) {
    // Exceptions never cross threads: the failure itself stays readable through failure().
    std::cerr << "oneflow: the control plane's failure handler threw: " << error.what() << "\n";
  } catch (...) { std::cerr << "oneflow: the control plane's failure handler threw\n"; }
}

void ControlPlane::StopHeartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_heartbeat_ = true;
    for (grpc::ClientContext* context : calls_in_flight_) context->TryCancel();
  }
  heartbeat_wakeup_.notify_all();
  if (heartbeat_thread_.joinable() && heartbeat_thread_.get_id() != std::this_thread::get_id()) {
    heartbeat_thread_.join();
  }
}

void ControlPlane::Shutdown() {
  try {
    bool crashed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (shut_down_) return;
      shut_down_ = true;
      crashed = crashed_;
    }
    StopHeartbeat();
    if (!crashed) {
      // Every rank, rank 0 too, leaves so that its silence from now on is not a loss.
      LeaveRequest request;
      request.set_rank(spec_.rank);
      LeaveReply reply;
      grpc::ClientContext context;
      context.set_deadline(DeadlineIn(kLeaveDeadline));
      stub_->stub->Leave(&context, request, &reply);
    }
    if (server_ != nullptr) {
      if (!crashed) server_->WaitForWorkersToLeave(kWaitForWorkers);
      server_->Stop(kServerGrace);
    }
  } catch (const std::exception& error) {
    std::cerr << "oneflow: control plane shutdown on rank " << spec_.rank << ": " << error.what()
              << "\n";
  } catch (...) {}
}

void ControlPlane::SimulateCrashForTesting() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    crashed_ = true;
  }
  StopHeartbeat();
  if (server_ != nullptr) server_->Stop(milliseconds(0));
}

}  // namespace oneflow
