#pragma once
// Conversions between Python objects and the C++ core: numpy arrays <-> HostTensor (without
// copies), Python attribute values -> AttrValue of the type the op registry declares.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "oneflow/framework/host_tensor.h"
#include "proto/attr_value.pb.h"

namespace oneflow {

// A Python exception raised by a Python callback on a runtime thread. It keeps the exception
// object (not pybind11's one-shot error state), so every wait on the failed call can raise it.
class PythonError : public std::exception {
 public:
  explicit PythonError(pybind11::error_already_set& error);
  const char* what() const noexcept override { return message_.c_str(); }
  // Sets the Python error indicator to this exception (needs the GIL).
  void Restore() const;

 private:
  std::shared_ptr<pybind11::object> value_;  // released under the GIL
  std::string message_;
};

// Calls `fn` (which may call into Python) and turns a Python exception into a PythonError.
template <typename Fn>
void CallPython(Fn&& fn) {
  try {
    fn();
  } catch (pybind11::error_already_set& error) {
    throw PythonError(error);
  }
}

// Wraps a C-contiguous numpy array; the tensor keeps the array alive (releasing it takes the GIL).
HostTensor HostTensorFromNumpy(const pybind11::array& array);
// A numpy array viewing the tensor's memory; the array keeps the memory alive.
pybind11::array NumpyFromHostTensor(const HostTensor& tensor);
DataType DataTypeFromNumpy(const pybind11::dtype& dtype);
// Converts `value` to an AttrValue of the same kind as `prototype`; `what` names the attribute
// (and its op) in errors.
AttrValue AttrValueFromPython(const pybind11::handle& value, const AttrValue& prototype,
                              const std::string& what);

}  // namespace oneflow
