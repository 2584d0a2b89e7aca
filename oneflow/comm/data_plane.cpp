#include "oneflow/comm/data_plane.h"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include "oneflow/common/error.h"

namespace oneflow {

DataPlane::DataPlane(gloo::rendezvous::Store& store, const std::string& prefix, int64_t machine_id,
                     int64_t machine_num, const std::string& hostname)
    : store_(store),
      prefix_(prefix),
      machine_id_(machine_id),
      machine_num_(machine_num),
      hostname_(hostname) {
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    device_ = gloo::transport::tcp::CreateDevice(attr);
  } catch (std::exception& error) {
    throw Error(ErrorKind::kRuntime)
        << "machine " << machine_id << ": cannot open the data plane (Gloo TCP) on address '"
        << hostname << "': " << error.what();
  }
  world_ = ConnectGroup("world", machine_id, machine_num);
}

DataPlane::~DataPlane() = default;

std::shared_ptr<gloo::Context> DataPlane::ConnectGroup(const std::string& key, int64_t rank,
                                                       int64_t size) {
  auto context =
      std::make_shared<gloo::rendezvous::Context>(static_cast<int>(rank), static_cast<int>(size));
  context->setTimeout(kTransferTimeout);
  try {
    gloo::rendezvous::PrefixStore store(prefix_ + "/" + key, store_);
    context->connectFullMesh(store, device_);
  } catch (Error&) { throw; } catch (std::exception& error) {
    throw Error(ErrorKind::kRuntime) << "machine " << machine_id_ << " (address " << hostname_
                                     << "): connecting the data plane group '" << key << "' (rank "
                                     << rank << " of " << size << ") failed: " << error.what();
  }
  return context;
}

}  // namespace oneflow
