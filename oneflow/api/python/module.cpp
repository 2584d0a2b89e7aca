// The extension module `oneflow._oneflow_internal`: maps library errors to Python exceptions and
// registers the bindings of each area (session.cpp).
#include <pybind11/pybind11.h>

#include <cstring>

#include "oneflow/common/error.h"

namespace py = pybind11;

namespace oneflow {
void BindSession(py::module_& module);
void BindCluster(py::module_& module);
void BindBuildInfo(py::module_& module);
void BindData(py::module_& module);
}  // namespace oneflow

namespace {

// Sets a Python exception of `type` whose message is `what`, with bytes that are not UTF-8 (a
// record's key, a file name) written as \xNN escapes instead of losing the whole message.
void SetError(PyObject* type, const char* what) {
  PyObject* message = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)),
                                           "backslashreplace");
  if (message == nullptr) { return; }  // MemoryError is set
  PyErr_SetObject(type, message);
  Py_DECREF(message);
}

}  // namespace

PYBIND11_MODULE(_oneflow_internal, module) {
  module.doc() = "C++ core of the oneflow package";
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) { std::rethrow_exception(error); }
    } catch (const oneflow::Error& e) {
      switch (e.kind()) {
        case oneflow::ErrorKind::kValue: SetError(PyExc_ValueError, e.what()); break;
        case oneflow::ErrorKind::kType: SetError(PyExc_TypeError, e.what()); break;
        case oneflow::ErrorKind::kNotImplemented:
          SetError(PyExc_NotImplementedError, e.what());
          break;
        default: SetError(PyExc_RuntimeError, e.what()); break;
      }
    }
  });
  oneflow::BindSession(module);
  oneflow::BindCluster(module);
  oneflow::BindBuildInfo(module);
  oneflow::BindData(module);
}
