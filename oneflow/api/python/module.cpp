// The extension module `oneflow._oneflow_internal`: maps library errors to Python exceptions and
// registers the bindings of each area (session.cpp).
#include <pybind11/pybind11.h>

#include "oneflow/common/error.h"

namespace py = pybind11;

namespace oneflow {
void BindSession(py::module_& module);
void BindCluster(py::module_& module);
void BindBuildInfo(py::module_& module);
void BindData(py::module_& module);
}  // namespace oneflow

PYBIND11_MODULE(_oneflow_internal, module) {
  module.doc() = "C++ core of the oneflow package";
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) { std::rethrow_exception(error); }
    } catch (const oneflow::Error& e) {
      switch (e.kind()) {
        case oneflow::ErrorKind::kValue: PyErr_SetString(PyExc_ValueError, e.what()); break;
        case oneflow::ErrorKind::kType: PyErr_SetString(PyExc_TypeError, e.what()); break;
        case oneflow::ErrorKind::kNotImplemented:
          PyErr_SetString(PyExc_NotImplementedError, e.what());
          break;
        default: PyErr_SetString(PyExc_RuntimeError, e.what()); break;
      }
    }
  });
  oneflow::BindSession(module);
  oneflow::BindCluster(module);
  oneflow::BindBuildInfo(module);
  oneflow::BindData(module);
}
