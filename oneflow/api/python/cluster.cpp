// Bindings of the cluster (oneflow/session/cluster.h): Python's `oneflow.env` creates one per
// process when the script runs on several machines; the master's session runs on it, a worker
// serves it until the master halts.
#include "oneflow/session/cluster.h"

#include <gloo/allreduce.h>
#include <gloo/context.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "oneflow/comm/data_plane.h"
#include "oneflow/session/worker.h"

namespace py = pybind11;

namespace oneflow {

namespace {

// Gloo on its own, for benchmarks/distributed_benchmark.py: every rank all-reduces `elements`
// floats over the cluster's world context; the best seconds of `iterations` (after one warmup).
double GlooAllreduceSeconds(Cluster& cluster, int64_t elements, int64_t iterations) {
  std::vector<float> input(static_cast<size_t>(elements), 1.0f);
  std::vector<float> output(static_cast<size_t>(elements));
  double best = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i <= iterations; ++i) {
    gloo::AllreduceOptions options(cluster.data_plane().world());
    options.setInput(input.data(), input.size());
    options.setOutput(output.data(), output.size());
    options.setReduceFunction([](void* out, const void* a, const void* b, size_t n) {
      for (size_t k = 0; k < n; ++k) {
        static_cast<float*>(out)[k] =
            static_cast<const float*>(a)[k] + static_cast<const float*>(b)[k];
      }
    });
    options.setTag(7);
    const auto start = std::chrono::steady_clock::now();
    gloo::allreduce(options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i > 0) { best = std::min(best, seconds); }
  }
  return best;
}

}  // namespace

void BindCluster(py::module_& module) {
  py::class_<Cluster>(module, "Cluster")
      .def(
          py::init([](int64_t rank, int64_t world_size, const std::string& master_addr,
                      int master_port, const std::string& data_address, double rendezvous_timeout_s,
                      double heartbeat_interval_s, double heartbeat_timeout_s) {
            ClusterSpec spec;
            spec.rank = rank;
            spec.world_size = world_size;
            spec.master_addr = master_addr;
            spec.master_port = master_port;
            auto millis = [](double seconds) {
              return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
            };
            spec.rendezvous_timeout = millis(rendezvous_timeout_s);
            spec.heartbeat_interval = millis(heartbeat_interval_s);
            spec.heartbeat_timeout = millis(heartbeat_timeout_s);
            return std::make_unique<Cluster>(spec, data_address);
          }),
          py::arg("rank"), py::arg("world_size"), py::arg("master_addr"), py::arg("master_port"),
          py::arg("data_address"), py::arg("rendezvous_timeout_s") = 300.0,
          py::arg("heartbeat_interval_s") = 1.0, py::arg("heartbeat_timeout_s") = 30.0,
          py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("machine_id", &Cluster::machine_id)
      .def_property_readonly("machine_num", &Cluster::machine_num)
      .def(
          "failure", [](Cluster& cluster) { return cluster.control().failure(); },
          "Empty while healthy, else what failed (e.g. the lost machine).")
      .def(
          "serve_as_worker", [](Cluster& cluster) { ServeAsWorker(cluster); },
          py::call_guard<py::gil_scoped_release>(),
          "Serves the master's commands until it halts the cluster (workers only).")
      .def("halt", &Cluster::Halt, py::call_guard<py::gil_scoped_release>(),
           "Master: tells every worker to exit; then leaves the cluster. Idempotent.");
  module.def("gloo_allreduce_seconds", &GlooAllreduceSeconds,
             py::call_guard<py::gil_scoped_release>(),
             "Benchmarks only: Gloo's own all-reduce of `elements` floats on every rank of the "
             "cluster; the best seconds of `iterations`.");
}

}  // namespace oneflow
