#include "oneflow/session/cluster.h"

#include <cstring>
#include <thread>

#include "oneflow/comm/data_plane.h"
#include "oneflow/common/error.h"
#include "oneflow/control/gloo_store.h"
#include "oneflow/session/variable_store.h"

namespace oneflow {

namespace {

std::string Key(const char* kind, int64_t machine, int64_t seq) {
  return std::string(kind) + "/" + std::to_string(machine) + "/" + std::to_string(seq);
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> VariablePartsOn(const Plan& plan, int64_t machine) {
  std::vector<std::pair<std::string, int64_t>> parts;
  for (const TaskProto& task : plan.task()) {
    if (task.machine_id() != machine) { continue; }
    for (const RegstDescProto& regst : task.produced_regst_desc()) {
      if (!regst.variable_name().empty()) {
        parts.emplace_back(regst.variable_name(), regst.variable_parallel_id());
      }
    }
  }
  return parts;
}

VariableValues CollectVariableParts(VariableStore& variables, const Plan& plan, int64_t machine) {
  VariableValues values;
  for (const auto& [name, parallel_id] : VariablePartsOn(plan, machine)) {
    const HostTensor& part = variables.Part(name, parallel_id);
    VariablePartProto* proto = values.add_part();
    proto->set_name(name);
    proto->set_parallel_id(parallel_id);
    proto->set_data(static_cast<const char*>(part.data), part.desc.byte_size());
  }
  return values;
}

void StoreVariableParts(VariableStore& variables, const VariableValues& values) {
  for (const VariablePartProto& proto : values.part()) {
    HostTensor& part = variables.Part(proto.name(), proto.parallel_id());
    OF_CHECK(static_cast<int64_t>(proto.data().size()) == part.desc.byte_size())
        << "variable '" << proto.name() << "' part " << proto.parallel_id() << ": "
        << proto.data().size() << " bytes received, " << part.desc.byte_size() << " expected";
    std::memcpy(part.data, proto.data().data(), proto.data().size());
  }
}

Cluster::Cluster(const ClusterSpec& spec, const std::string& data_address) : spec_(spec) {
  control_ = std::make_unique<ControlPlane>(spec);
  store_ = std::make_unique<GlooStore>(*control_, "gloo/");
  data_plane_ =
      std::make_unique<DataPlane>(*store_, "data", spec.rank, spec.world_size, data_address);
}

Cluster::~Cluster() {
  Halt();
  data_plane_.reset();
  store_.reset();
  control_.reset();
}

int64_t Cluster::SendCommand(int64_t machine, const ClusterCommand& command) {
  int64_t seq;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seq = next_seq_[machine]++;
  }
  control_->Set(Key("cmd", machine, seq), command.SerializeAsString());
  return seq;
}

ClusterReply Cluster::AwaitReply(int64_t machine, int64_t seq) {
  const std::string key = Key("reply", machine, seq);
  const std::string value = control_->Get(key, kForever);
  control_->Erase(key);
  ClusterReply reply;
  OF_CHECK(reply.ParseFromString(value)) << "machine " << machine << " sent a malformed reply";
  if (!reply.error().empty()) {
    throw Error(ErrorKind::kRuntime) << "machine " << machine << ": " << reply.error();
  }
  return reply;
}

std::string Cluster::AwaitAbort(int64_t machine, int64_t generation) {
  const std::string key = "abort/" + std::to_string(machine) + "/" + std::to_string(generation);
  std::string value = control_->Get(key, kForever);
  control_->Erase(key);
  return value;
}

std::string Cluster::AwaitPeerFailure() {
  const auto deadline =
      std::chrono::steady_clock::now() + spec_.heartbeat_timeout + 2 * spec_.heartbeat_interval;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string failure = control_->failure();
    if (!failure.empty()) { return failure; }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

void Cluster::Halt() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (halted_) { return; }
    halted_ = true;
  }
  try {
    if (machine_id() == 0 && control_->failure().empty()) {
      ClusterCommand halt;
      halt.set_halt(true);
      for (int64_t machine = 1; machine < machine_num(); ++machine) {
        int64_t seq;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          seq = next_seq_[machine]++;
        }
        control_->Set(Key("cmd", machine, seq), halt.SerializeAsString());
      }
    }
  } catch (...) {
    // Leaving must not fail: a worker that is gone is gone.
  }
  control_->Shutdown();
}

ClusterCommand Cluster::NextCommand(int64_t* seq) {
  *seq = worker_seq_++;
  const std::string key = Key("cmd", machine_id(), *seq);
  const std::string value = control_->Get(key, kForever);
  control_->Erase(key);
  ClusterCommand command;
  OF_CHECK(command.ParseFromString(value)) << "machine 0 sent a malformed command";
  return command;
}

void Cluster::Reply(int64_t seq, const ClusterReply& reply) {
  control_->Set(Key("reply", machine_id(), seq), reply.SerializeAsString());
}

void Cluster::ReportAbort(int64_t generation, const std::string& error) {
  control_->Set("abort/" + std::to_string(machine_id()) + "/" + std::to_string(generation), error);
}

}  // namespace oneflow
