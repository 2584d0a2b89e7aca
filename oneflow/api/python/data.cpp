// Data loading helpers for python/oneflow/framework/ofrecord_reader.py: decoding OFRecord
// features in C++ (oneflow/data/ofrecord_decoder.h).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "oneflow/api/python/conversion.h"
#include "oneflow/data/ofrecord_decoder.h"

namespace py = pybind11;

namespace oneflow {

void BindData(py::module_& module) {
  module.def(
      "decode_raw_ofrecords",
      [](const py::list& records, const std::string& feature, const std::vector<int64_t>& shape,
         const py::dtype& dtype, bool dim1_varying_length, bool auto_zero_padding) {
        RawDecodeOptions options;
        options.feature = feature;
        options.count = 1;
        for (int64_t dim : shape) { options.count *= dim; }
        options.data_type = DataTypeFromNumpy(dtype);
        options.dim1_varying_length = dim1_varying_length;
        options.auto_zero_padding = auto_zero_padding;
        // Views of the bytes objects, which `records` keeps alive while the GIL is released.
        std::vector<std::string_view> views;
        views.reserve(records.size());
        for (const py::handle& record : records) {
          char* data = nullptr;
          Py_ssize_t size = 0;
          if (PyBytes_AsStringAndSize(record.ptr(), &data, &size) != 0) {
            throw py::error_already_set();
          }
          views.emplace_back(data, static_cast<size_t>(size));
        }
        std::vector<py::ssize_t> dims = {static_cast<py::ssize_t>(views.size())};
        dims.insert(dims.end(), shape.begin(), shape.end());
        py::array out(dtype, dims);
        void* target = out.mutable_data();
        {
          py::gil_scoped_release release;
          DecodeRawFeature(views, options, target);
        }
        return out;
      },
      py::arg("records"), py::arg("feature"), py::arg("shape"), py::arg("dtype"),
      py::arg("dim1_varying_length") = false, py::arg("auto_zero_padding") = false,
      "Feature `feature` of each serialized OFRecord in `records` (a list of bytes) as an array "
      "of shape (len(records),) + shape and numpy dtype `dtype`.");
}

}  // namespace oneflow
