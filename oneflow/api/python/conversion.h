#pragma once
// Conversions between Python objects and the C++ core: numpy arrays <-> HostTensor (without
// copies), Python attribute values -> AttrValue of the type the op registry declares.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "oneflow/framework/host_tensor.h"
#include "proto/attr_value.pb.h"

namespace oneflow {

// Wraps a C-contiguous numpy array; the tensor keeps the array alive (releasing it takes the GIL).
HostTensor HostTensorFromNumpy(const pybind11::array& array);
// A numpy array viewing the tensor's memory; the array keeps the memory alive.
pybind11::array NumpyFromHostTensor(const HostTensor& tensor);
DataType DataTypeFromNumpy(const pybind11::dtype& dtype);
// Converts `value` to an AttrValue of the same kind as `prototype`.
AttrValue AttrValueFromPython(const pybind11::handle& value, const AttrValue& prototype,
                              const std::string& attr_name);

}  // namespace oneflow
