#include "oneflow/api/python/conversion.h"

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "oneflow/framework/attr.h"

namespace py = pybind11;

namespace oneflow {

PythonError::PythonError(py::error_already_set& error) : message_(error.what()) {
  value_ = std::shared_ptr<py::object>(new py::object(error.value()), [](py::object* pointer) {
    py::gil_scoped_acquire gil;
    delete pointer;
  });
}

void PythonError::Restore() const {
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(value_->ptr())), value_->ptr());
}

DataType DataTypeFromNumpy(const py::dtype& dtype) {
  switch (dtype.num()) {
    case py::detail::npy_api::NPY_FLOAT_: return kFloat;
    case py::detail::npy_api::NPY_DOUBLE_: return kDouble;
    case py::detail::npy_api::NPY_BYTE_: return kInt8;
    case py::detail::npy_api::NPY_UBYTE_: return kUInt8;
    case 23: return kFloat16;  // NPY_HALF, which pybind11 does not name
    case py::detail::npy_api::NPY_INT_: return kInt32;
    case py::detail::npy_api::NPY_LONG_: return kInt64;
    case py::detail::npy_api::NPY_LONGLONG_: return kInt64;
    default: break;
  }
  throw Error(ErrorKind::kType) << "numpy dtype " << py::repr(static_cast<const py::handle&>(dtype)).cast<std::string>()
                                << " is not supported (use float32, float64, int8, int32, int64 "
                                   "uint8 or float16)";
}

namespace {

py::dtype NumpyDataType(DataType data_type) {
  switch (data_type) {
    case kFloat: return py::dtype::of<float>();
    case kDouble: return py::dtype::of<double>();
    case kInt8: return py::dtype::of<int8_t>();
    case kInt32: return py::dtype::of<int32_t>();
    case kInt64: return py::dtype::of<int64_t>();
    case kUInt8: return py::dtype::of<uint8_t>();
    case kFloat16: return py::dtype("float16");
    default: break;
  }
  throw Error(ErrorKind::kType) << "no numpy dtype for " << DataTypeName(data_type);
}

}  // namespace

HostTensor HostTensorFromNumpy(const py::array& array) {
  OF_CHECK(array.flags() & py::array::c_style) << "array must be C-contiguous";
  HostTensor tensor;
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  tensor.desc = BlobDesc{Shape(dims), DataTypeFromNumpy(array.dtype())};
  tensor.data = const_cast<void*>(array.data());
  auto* owner = new py::object(array);
  tensor.holder = std::shared_ptr<void>(owner, [](void* pointer) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(pointer);
  });
  return tensor;
}

py::array NumpyFromHostTensor(const HostTensor& tensor) {
  auto* keep = new std::shared_ptr<void>(tensor.holder);
  py::capsule owner(keep, [](void* pointer) { delete static_cast<std::shared_ptr<void>*>(pointer); });
  const auto& dims = tensor.desc.shape.dims();
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  return py::array(NumpyDataType(tensor.desc.data_type), shape, tensor.data, owner);
}

namespace {

// Strict checks: a string or a float must never silently become an int or a bool.
bool IsBool(const py::handle& value) {
  return py::isinstance<py::bool_>(value) ||
         py::isinstance(value, py::module_::import("numpy").attr("bool_"));
}

bool IsInteger(const py::handle& value) {
  return !IsBool(value) &&
         (py::isinstance<py::int_>(value) ||
          py::isinstance(value, py::module_::import("numpy").attr("integer")));
}

bool IsFloat(const py::handle& value) {
  return py::isinstance<py::float_>(value) ||
         py::isinstance(value, py::module_::import("numpy").attr("floating"));
}

}  // namespace

AttrValue AttrValueFromPython(const py::handle& value, const AttrValue& prototype,
                              const std::string& what) {
  AttrValue attr;
  auto fail = [&](const char* expected) {
    return Error(ErrorKind::kType) << what << " expects " << expected
                                   << ", got " << py::repr(value).cast<std::string>();
  };
  try {
    switch (prototype.value_case()) {
      case AttrValue::kInt64Value:
        if (!IsInteger(value)) { throw fail("an int"); }
        attr.set_int64_value(value.cast<int64_t>());
        break;
      case AttrValue::kDoubleValue:
        if (!IsInteger(value) && !IsFloat(value)) { throw fail("a number"); }
        attr.set_double_value(value.cast<double>());
        break;
      case AttrValue::kBoolValue:
        if (!IsBool(value)) { throw fail("a bool"); }
        attr.set_bool_value(value.cast<bool>());
        break;
      case AttrValue::kStringValue: attr.set_string_value(value.cast<std::string>()); break;
      case AttrValue::kShapeValue:
        attr.mutable_shape_value();  // set the oneof even for a 0-d shape
        for (auto item : value) {
          if (!IsInteger(item)) { throw fail("a sequence of ints"); }
          attr.mutable_shape_value()->add_dim(item.cast<int64_t>());
        }
        break;
      case AttrValue::kDataTypeValue:
        attr.set_data_type_value(static_cast<DataType>(value.cast<int>()));
        break;
      case AttrValue::kListInt64Value:
        attr.mutable_list_int64_value();
        for (auto item : value) {
          if (!IsInteger(item)) { throw fail("a sequence of ints"); }
          attr.mutable_list_int64_value()->add_value(item.cast<int64_t>());
        }
        break;
      case AttrValue::kListDoubleValue:
        attr.mutable_list_double_value();
        for (auto item : value) {
          if (!IsInteger(item) && !IsFloat(item)) { throw fail("a sequence of numbers"); }
          attr.mutable_list_double_value()->add_value(item.cast<double>());
        }
        break;
      case AttrValue::kListStringValue:
        attr.mutable_list_string_value();
        for (auto item : value) {
          attr.mutable_list_string_value()->add_value(item.cast<std::string>());
        }
        break;
      case AttrValue::kListShapeValue:
        attr.mutable_list_shape_value();
        for (auto item : value) {
          if (!py::isinstance<py::sequence>(item)) {
            throw fail("a sequence of shapes (sequences of ints)");
          }
          ShapeProto* shape = attr.mutable_list_shape_value()->add_value();
          for (auto dim : item) {
            if (!IsInteger(dim)) { throw fail("a sequence of shapes (sequences of ints)"); }
            shape->add_dim(dim.cast<int64_t>());
          }
        }
        break;
      case AttrValue::kListDataTypeValue:
        attr.mutable_list_data_type_value();
        for (auto item : value) {
          if (!IsInteger(item)) { throw fail("a sequence of dtypes (flow.float32, ...)"); }
          attr.mutable_list_data_type_value()->add_value(static_cast<DataType>(item.cast<int>()));
        }
        break;
      default: OF_CHECK(false) << what << " has no declared type";
    }
  } catch (const py::cast_error&) {
    throw fail(AttrTypeName(prototype.value_case()).c_str());
  }
  return attr;
}

}  // namespace oneflow
