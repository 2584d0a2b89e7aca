// Bindings of Session, JobInstance and the op-adding entry point used by the Python frontend.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "google/protobuf/text_format.h"
#include "oneflow/api/python/conversion.h"
#include "oneflow/common/data_type.h"
#include "oneflow/compiler/plan_dump.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/runtime/job_instance.h"
#include "oneflow/sbp/tensor_slice.h"
#include "oneflow/session/cluster.h"
#include "oneflow/session/session.h"

namespace py = pybind11;

namespace oneflow {

namespace {

// Output argument -> [(lbn, shape, dtype, sbp, mirrored, dynamic)] of an op as stored in the
// job; sbp is how the op lays the blob out over its devices ("S(0)", "B", "P"); mirrored: one
// value per device (the mirrored view); dynamic: the shape is an upper bound, each iteration's
// depends on the data.
py::dict DescribeOutputs(const JobBuildContext& job, const OperatorConf& op) {
  py::dict outputs;
  for (const auto& entry : op.output()) {
    py::list blobs;
    for (int64_t i = 0; i < entry.second.value_size(); ++i) {
      const std::string& lbn = entry.second.value(i);
      const BlobDesc& desc = job.LogicalBlobDesc(lbn);
      auto sbp = op.sbp_signature().argument_to_sbp().find(ArgumentKey(entry.first, i));
      blobs.append(py::make_tuple(
          lbn, py::tuple(py::cast(desc.shape.dims())), static_cast<int>(desc.data_type),
          sbp == op.sbp_signature().argument_to_sbp().end() ? std::string("B")
                                                            : SbpToString(sbp->second),
          op.mirrored(), desc.is_dynamic));
    }
    outputs[py::str(entry.first)] = blobs;
  }
  return outputs;
}

// Python attribute values -> AttrValues typed by `def`'s declaration; `owner` names the op in
// errors.
void ConvertAttrs(const OpDef& def, const py::dict& attrs, const std::string& owner,
                  google::protobuf::Map<std::string, AttrValue>* out) {
  for (auto item : attrs) {
    std::string attr_name = item.first.cast<std::string>();
    const AttrDef* attr = def.FindAttr(attr_name);
    if (attr == nullptr) {
      throw Error(ErrorKind::kValue) << owner << " has no attribute '" << attr_name << "'";
    }
    (*out)[attr_name] = AttrValueFromPython(item.second, attr->default_value,
                                            owner + ": attribute '" + attr_name + "'");
  }
}

// One optimizer described by Python (python/oneflow/ops/optimizer.py: Optimizer._conf).
OptimizerConf OptimizerConfFromPython(const py::dict& spec) {
  OptimizerConf conf;
  const std::string op_type = spec["update_op"].cast<std::string>();
  conf.set_update_op_type(op_type);
  ConvertAttrs(OpRegistry::Instance().Get(op_type), spec["update_attrs"].cast<py::dict>(),
               "optimizer update op " + op_type, conf.mutable_update_attr());
  ConvertAttrs(OpRegistry::Instance().Get("learning_rate_schedule"),
               spec["learning_rate_attrs"].cast<py::dict>(), "learning-rate scheduler",
               conf.mutable_learning_rate_attr());
  conf.set_learning_rate_lbn(spec["learning_rate_lbn"].cast<std::string>());
  conf.set_weight_decay_rate(spec["weight_decay_rate"].cast<double>());
  for (auto pattern : spec["weight_decay_includes"]) {
    conf.add_weight_decay_includes(pattern.cast<std::string>());
  }
  for (auto pattern : spec["weight_decay_excludes"]) {
    conf.add_weight_decay_excludes(pattern.cast<std::string>());
  }
  conf.set_clip_norm(spec["clip_norm"].cast<double>());
  for (auto variable : spec["variables"]) { conf.add_variables(variable.cast<std::string>()); }
  return conf;
}

py::dict AddOp(Session& session, const std::string& op_type, const std::string& name,
               const py::dict& inputs, const py::dict& attrs, const std::string& device_tag,
               const std::vector<std::string>& device_names,
               const std::vector<std::string>& control_inputs,
               const std::map<std::string, std::string>& sbp_hints, bool mirrored) {
  JobBuildContext& job = session.CurrentJob();
  const OpDef& def = OpRegistry::Instance().Get(op_type);
  OperatorConf conf;
  conf.set_name(name);
  conf.set_op_type(op_type);
  for (auto item : inputs) {
    ListString& list = (*conf.mutable_input())[item.first.cast<std::string>()];
    for (auto lbn : item.second) { list.add_value(lbn.cast<std::string>()); }
  }
  ConvertAttrs(def, attrs, "op '" + name + "' (" + op_type + ")", conf.mutable_attr());
  if (!device_tag.empty()) {
    conf.mutable_placement()->set_device_tag(device_tag);
    for (const std::string& device : device_names) {
      conf.mutable_placement()->add_device_name(device);
    }
  }
  for (const std::string& control : control_inputs) { conf.add_control_input(control); }
  for (const auto& hint : sbp_hints) {
    (*conf.mutable_sbp_hint())[hint.first] = SbpFromString(hint.second);
  }
  conf.set_mirrored(mirrored);  // for an op without inputs; otherwise its inputs decide
  const OperatorConf& added = job.AddOp(std::move(conf));
  return DescribeOutputs(job, added);
}

// Waits without the GIL; a Python exception from a callback of this call is raised again as
// itself (its original type and traceback), on every wait. The wait wakes every 50 ms to let
// Python handle signals, so Ctrl-C (and a test's timeout alarm) interrupts it.
void WaitForInstance(JobInstance& instance) {
  std::exception_ptr error;
  while (true) {
    bool done = false;
    {
      py::gil_scoped_release release;
      try {
        done = instance.WaitFor(std::chrono::milliseconds(50));
      } catch (...) {
        error = std::current_exception();
        done = true;
      }
    }
    if (done) { break; }
    if (PyErr_CheckSignals() != 0) { throw py::error_already_set(); }
  }
  if (!error) { return; }
  try {
    std::rethrow_exception(error);
  } catch (const PythonError& python_error) {
    python_error.Restore();
    throw py::error_already_set();
  }
}

py::dict Outputs(const JobInstance& instance) {
  py::dict outputs;
  for (const auto& entry : instance.outputs()) {
    outputs[py::str(entry.first)] = NumpyFromHostTensor(entry.second);
  }
  return outputs;
}

}  // namespace

void BindSession(py::module_& module) {
  py::class_<JobInstance, std::shared_ptr<JobInstance>>(module, "JobInstance")
      .def("wait", &WaitForInstance, "Blocks until the call finished; raises its error, if any.")
      .def("done", &JobInstance::done)
      .def("outputs", &Outputs, "Return op name -> numpy array (valid after wait()).")
      .def("on_finish",
           [](JobInstance& instance, py::function callback) {
             auto shared = std::make_shared<py::function>(std::move(callback));
             instance.OnFinish([shared] {
               py::gil_scoped_acquire gil;
               try {
                 (*shared)();
               } catch (py::error_already_set& error) {
                 error.discard_as_unraisable("oneflow job instance callback");
               }
               shared->release().dec_ref();
             });
           },
           "Calls `callback()` (holding the GIL) on the finishing thread.");

  py::class_<Session>(module, "Session")
      .def(py::init([](int64_t cpu_device_num, int64_t compute_threads, int64_t register_num,
                       const std::string& debug_dir, const std::string& act_event_file,
                       Cluster* cluster, int64_t processes_per_host, int64_t gpu_device_num,
                       bool allow_tf32, bool conv_heuristic_search) {
             SessionOptions options;
             options.gpu_device_num = gpu_device_num;
             options.gpu.allow_tf32 = allow_tf32;
             options.gpu.conv_heuristic_search = conv_heuristic_search;
             options.cluster = cluster;
             options.processes_per_host = processes_per_host;
             options.act_event_file = act_event_file;
             options.cpu_device_num = cpu_device_num;
             options.compute_threads = compute_threads;
             options.register_num = register_num;
             options.debug_dir = debug_dir;
             return std::make_unique<Session>(options);
           }),
           py::arg("cpu_device_num") = 0, py::arg("compute_threads") = 0,
           py::arg("register_num") = 2, py::arg("debug_dir") = "", py::arg("act_event_file") = "",
           py::arg("cluster") = nullptr, py::arg("processes_per_host") = 1,
           py::arg("gpu_device_num") = 0, py::arg("allow_tf32") = false,
           py::arg("conv_heuristic_search") = true,
           // The cluster outlives the session (Python's env holds it).
           py::keep_alive<1, 7>())
      .def(
          "open_job",
          [](Session& session, const std::string& job_name, bool is_train, int data_type,
             bool enable_auto_mixed_precision, const std::string& train_state_name,
             const py::object& qat) {
            JobConf conf;
            conf.set_job_name(job_name);
            conf.set_train_state_name(train_state_name);
            conf.set_is_train(is_train);
            conf.set_default_data_type(static_cast<DataType>(data_type));
            conf.set_enable_auto_mixed_precision(enable_auto_mixed_precision);
            if (!qat.is_none()) {
              // FunctionConfig._qat_settings(): every QatConfig field, checked by Python.
              const py::dict settings = qat.cast<py::dict>();
              QatConfig& config = *conf.mutable_qat_config();
              conf.set_enable_qat(true);
              config.set_per_channel_weight_quantization(
                  settings["per_channel_weight_quantization"].cast<bool>());
              config.set_symmetric(settings["symmetric"].cast<bool>());
              config.set_moving_min_max_momentum(
                  settings["moving_min_max_momentum"].cast<double>());
              config.set_moving_min_max_stop_update_after_iters(
                  settings["moving_min_max_stop_update_after_iters"].cast<int64_t>());
              config.set_target_backend(settings["target_backend"].cast<std::string>());
            }
            session.OpenJob(conf);
          },
          py::arg("job_name"), py::arg("is_train"), py::arg("data_type"),
          py::arg("enable_auto_mixed_precision") = false, py::arg("train_state_name") = "",
          py::arg("qat") = py::none())
      .def("close_job", &Session::CloseJob)
      .def(
          "auto_mixed_precision_cast_count",
          [](Session& session, const std::string& job_name) {
            int64_t count = 0;
            for (const OperatorConf& op : session.GetJob(job_name).op()) {
              count += op.created_by_pass() == "auto_mixed_precision" ? 1 : 0;
            }
            return count;
          },
          "The casts the auto_mixed_precision pass added to closed job `job_name` (0: it runs "
          "in float32).")
      .def("abort_job", &Session::AbortJob)
      .def("has_job", &Session::HasJob)
      .def("remove_job", &Session::RemoveJob)
      .def("add_op", &AddOp, py::arg("op_type"), py::arg("name"), py::arg("inputs"),
           py::arg("attrs"), py::arg("device_tag") = "", py::arg("device_names") = py::list(),
           py::arg("control_inputs") = py::list(),
           py::arg("sbp_hints") = std::map<std::string, std::string>(), py::arg("mirrored") = false)
      .def("has_op", [](Session& session,
                        const std::string& name) { return session.CurrentJob().HasOp(name); })
      .def(
          "op_names",
          [](Session& session) {
            std::vector<std::string> names;
            for (const OperatorConf& op : session.CurrentJob().job().op()) {
              names.push_back(op.name());
            }
            return names;
          },
          "Names of the ops of the job being traced, in the order they were added.")
      .def("op_type",
           [](Session& session, const std::string& name) {
             return session.CurrentJob().Op(name).op_type();
           })
      .def(
          "sbp_candidates",
          [](Session& session, const std::string& name) {
            std::vector<std::map<std::string, std::string>> result;
            for (const SbpSignature& signature : session.CurrentJob().ValidSbpSignatures(name)) {
              std::map<std::string, std::string> entries;
              for (const auto& entry : signature.argument_to_sbp()) {
                entries[entry.first] = SbpToString(entry.second);
              }
              result.push_back(entries);
            }
            return result;
          },
          "The SBP signatures (argument key -> 'S(0)'/'B'/'P') that op `name` of the job being "
          "traced declares and that fit its placement.")
      .def(
          "sbp_signature",
          [](Session& session, const std::string& name) {
            std::map<std::string, std::string> entries;
            for (const auto& entry :
                 session.CurrentJob().Op(name).sbp_signature().argument_to_sbp()) {
              entries[entry.first] = SbpToString(entry.second);
            }
            return entries;
          },
          "The SBP signature op `name` chose.")
      .def("op_outputs",
           [](Session& session, const std::string& name) {
             JobBuildContext& job = session.CurrentJob();
             return DescribeOutputs(job, job.Op(name));
           })
      .def(
          "set_train_conf",
          [](Session& session, const std::vector<std::string>& loss_lbns,
             const py::list& optimizers, double loss_scale_factor,
             const py::object& dynamic_loss_scale,
             const std::vector<std::string>& indexed_slices_variables) {
            JobConf& conf = session.CurrentJob().mutable_job_conf();
            conf.set_is_train(true);  // minimize in a predict job trains it (OneFlow 0.3)
            TrainConf train;
            if (conf.train_conf().loss_lbn_size() > 0) {
              throw Error(ErrorKind::kValue)
                  << "optimizer.minimize() called twice in job '" << conf.job_name() << "'";
            }
            for (const std::string& lbn : loss_lbns) {
              session.CurrentJob().LogicalBlobDesc(lbn);
              train.add_loss_lbn(lbn);
            }
            for (auto optimizer : optimizers) {
              *train.add_optimizer() = OptimizerConfFromPython(optimizer.cast<py::dict>());
            }
            train.set_loss_scale_factor(loss_scale_factor);
            if (!dynamic_loss_scale.is_none()) {
              const py::dict policy = dynamic_loss_scale.cast<py::dict>();
              DynamicLossScaleConf* dynamic = train.mutable_dynamic_loss_scale();
              dynamic->set_initial_loss_scale(policy["initial_loss_scale"].cast<double>());
              dynamic->set_increment_period(policy["increment_period"].cast<int64_t>());
              dynamic->set_multiplier(policy["multiplier"].cast<double>());
            }
            for (const std::string& name : indexed_slices_variables) {
              train.add_indexed_slices_variable(name);
            }
            *conf.mutable_train_conf() = std::move(train);
          },
          "Makes the job being traced a training job (optimizer.minimize): its losses, its "
          "optimizers (dicts, see python/oneflow/ops/optimizer.py), loss scaling and the "
          "variables updated sparsely.",
          py::arg("loss_lbns"), py::arg("optimizers"), py::arg("loss_scale_factor"),
          py::arg("dynamic_loss_scale"),
          py::arg("indexed_slices_variables") = std::vector<std::string>())
      .def("add_diff_watch",
           [](Session& session, const std::string& lbn, int64_t handler_id) {
             session.CurrentJob().AddDiffWatch(lbn, handler_id);
           })
      .def("start", &Session::Start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &Session::Stop, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("running", &Session::running)
      .def("launch",
           [](Session& session, const std::string& job_name, const py::dict& inputs) {
             std::map<std::string, HostTensor> tensors;
             for (auto item : inputs) {
               tensors[item.first.cast<std::string>()] =
                   HostTensorFromNumpy(item.second.cast<py::array>());
             }
             py::gil_scoped_release release;
             return session.Launch(job_name, std::move(tensors));
           })
      .def_property_readonly("gpu_options",
                             [](const Session& session) {
                               py::dict result;
                               result["allow_tf32"] = session.options().gpu.allow_tf32;
                               result["conv_heuristic_search"] =
                                   session.options().gpu.conv_heuristic_search;
                               return result;
                             })
      .def("set_watch_handler",
           [](Session& session, py::function handler) {
             auto shared = std::shared_ptr<py::function>(new py::function(std::move(handler)),
                                                         [](py::function* pointer) {
                                                           py::gil_scoped_acquire gil;
                                                           delete pointer;
                                                         });
             session.SetWatchHandler(
                 [shared](int64_t handler_id, int64_t piece_id, const HostTensor& value) {
                   py::gil_scoped_acquire gil;
                   CallPython([&] { (*shared)(handler_id, piece_id, NumpyFromHostTensor(value)); });
                 });
           })
      .def("variable_names", [](Session& session) { return session.variables().Names(); })
      .def("variable_value",
           [](Session& session, const std::string& name) {
             HostTensor tensor;
             {
               py::gil_scoped_release release;
               tensor = session.VariableValue(name);
             }
             return NumpyFromHostTensor(tensor).attr("copy")();
           })
      .def(
          "variable_desc",
          [](Session& session, const std::string& name) {
            const BlobDesc& desc = session.variables().Desc(name);
            return py::make_tuple(py::tuple(py::cast(desc.shape.dims())),
                                  static_cast<int>(desc.data_type));
          },
          "(shape, dtype value) of the variable's logical blob.")
      .def(
          "set_variable_values",
          [](Session& session, const py::dict& values) {
            std::map<std::string, HostTensor> tensors;
            for (auto item : values) {
              tensors[item.first.cast<std::string>()] =
                  HostTensorFromNumpy(item.second.cast<py::array>());
            }
            py::gil_scoped_release release;
            session.SetVariableValues(tensors);
          },
          "Sets variables from name -> C-contiguous numpy array (logical values); checks all "
          "shapes and dtypes before writing any. No job may be running (sync first).")
      .def("job_text",
           [](Session& session, const std::string& name) {
             std::string text;
             google::protobuf::TextFormat::PrintToString(session.GetJob(name), &text);
             return text;
           })
      .def("plan_text",
           [](Session& session) {
             std::string text;
             google::protobuf::TextFormat::PrintToString(session.plan(), &text);
             return text;
           })
      .def("plan_dot", [](Session& session) { return PlanToDot(session.plan()); });

  module.def("registered_op_types", [] { return OpRegistry::Instance().OpTypes(); });
  // What the registries hold for each op type, for the test that every op is complete:
  // {op type: {"has_grad_rule", "non_differentiable", "cpu_dtypes", "gpu_dtypes": [dtype names]}}.
  module.def("op_registry_report", [] {
    py::dict report;
    for (const std::string& op_type : OpRegistry::Instance().OpTypes()) {
      const OpDef& def = OpRegistry::Instance().Get(op_type);
      py::list cpu_dtypes;
      py::list gpu_dtypes;
      for (DataType data_type : {kFloat, kDouble, kInt8, kInt32, kInt64, kUInt8, kFloat16}) {
        if (KernelRegistry::Instance().Has(op_type, "cpu", data_type)) {
          cpu_dtypes.append(DataTypeName(data_type));
        }
        if (KernelRegistry::Instance().Has(op_type, "gpu", data_type)) {
          gpu_dtypes.append(DataTypeName(data_type));
        }
      }
      py::dict entry;
      entry["has_grad_rule"] = static_cast<bool>(def.grad);
      entry["non_differentiable"] = def.non_differentiable;
      entry["cpu_dtypes"] = cpu_dtypes;
      entry["gpu_dtypes"] = gpu_dtypes;
      report[py::str(op_type)] = entry;
    }
    return report;
  });
}

}  // namespace oneflow
