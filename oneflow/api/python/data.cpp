// Data loading helpers for python/oneflow/framework/ofrecord_reader.py and image_pipeline.py:
// decoding OFRecord features (oneflow/data/ofrecord_decoder.h), decoding and resizing images
// (oneflow/data/image_decoder.h, image_resize.h) in C++ with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tuple>

#include "oneflow/api/python/conversion.h"
#include "oneflow/data/crop_mirror_normalize.h"
#include "oneflow/data/image_decoder.h"
#include "oneflow/data/image_resize.h"
#include "oneflow/data/ofrecord_decoder.h"
#include "oneflow/data/random_crop.h"

namespace py = pybind11;

namespace oneflow {

namespace {

// Views of the bytes objects in `records`, which the caller keeps alive (also while the GIL is
// released).
std::vector<std::string_view> BytesViews(const py::list& records) {
  std::vector<std::string_view> views;
  views.reserve(records.size());
  for (const py::handle& record : records) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(record.ptr(), &data, &size) != 0) { throw py::error_already_set(); }
    views.emplace_back(data, static_cast<size_t>(size));
  }
  return views;
}

// The decoded image as a numpy array that owns its pixel vector (no copy).
py::array ImageToArray(Image&& image) {
  auto* pixels = new std::vector<uint8_t>(std::move(image.pixels));
  py::capsule owner(pixels, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  return py::array_t<uint8_t>({image.height, image.width, image.channels}, pixels->data(), owner);
}

// A view of a height x width x channels uint8 array whose pixels are packed along each row (a
// crop made by slicing rows and columns is); others are copied into `keep` first.
ImageView ViewOf(const py::handle& object, const std::string& where, std::vector<py::array>* keep) {
  py::array array = py::reinterpret_borrow<py::object>(object);
  if (!py::isinstance<py::array>(object) || array.ndim() != 3 ||
      !array.dtype().is(py::dtype::of<uint8_t>())) {
    throw Error(ErrorKind::kValue) << where << ": an image must be a height x width x channels "
                                   << "uint8 array";
  }
  if (array.strides(2) != 1 || array.strides(1) != array.shape(2) || array.strides(0) < 0) {
    array = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>::ensure(array);
  }
  keep->push_back(array);
  ImageView view;
  view.pixels = static_cast<const uint8_t*>(array.data());
  view.height = array.shape(0);
  view.width = array.shape(1);
  view.channels = array.shape(2);
  view.row_stride = array.strides(0);
  return view;
}

std::vector<ImageView> ViewsOf(const py::sequence& images, const std::string& where,
                               std::vector<py::array>* keep) {
  std::vector<ImageView> views;
  views.reserve(images.size());
  for (const py::handle& image : images) { views.push_back(ViewOf(image, where, keep)); }
  return views;
}

RandomCropOptions CropOptions(std::pair<double, double> area, std::pair<double, double> ratio,
                              int64_t attempts) {
  RandomCropOptions options;
  options.area_min = area.first;
  options.area_max = area.second;
  options.ratio_min = ratio.first;
  options.ratio_max = ratio.second;
  options.attempts = attempts;
  return options;
}

// Decodes each image of `encoded` (a random crop of it when `crop` is given, image i's draws
// seeded by seeds[i]) without the GIL.
py::list DecodeBatch(const py::list& encoded, const std::string& color_space,
                     const std::string& where, const RandomCropOptions* crop,
                     const std::vector<uint64_t>& seeds) {
  const ColorSpace space = ParseColorSpace(color_space, where);
  std::vector<std::string_view> views = BytesViews(encoded);
  if (crop != nullptr && seeds.size() != views.size()) {
    throw Error(ErrorKind::kInternal)
        << where << ": " << views.size() << " images but " << seeds.size() << " seeds";
  }
  std::vector<Image> images(views.size());
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < views.size(); ++i) {
      ChooseWindow choose;
      if (crop != nullptr) {
        choose = [crop, seed = seeds[i]](int64_t height, int64_t width) {
          std::mt19937_64 rng(seed);
          return RandomCropWindow(height, width, *crop, rng);
        };
      }
      images[i] = DecodeImage(views[i], space, where + ": image " + std::to_string(i), choose);
    }
  }
  py::list out;
  for (Image& image : images) { out.append(ImageToArray(std::move(image))); }
  return out;
}

}  // namespace

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
        std::vector<std::string_view> views = BytesViews(records);
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

  module.def(
      "ofrecord_bytes_features",
      [](const py::list& records, const std::string& feature, const std::string& where) {
        std::vector<std::string_view> views = BytesViews(records);
        std::vector<std::string> values;
        {
          py::gil_scoped_release release;
          values = BytesFeature(views, feature, where);
        }
        py::list out;
        for (const std::string& value : values) { out.append(py::bytes(value)); }
        return out;
      },
      py::arg("records"), py::arg("feature"), py::arg("where"),
      "The one byte string of bytes_list feature `feature` of each serialized OFRecord.");
  module.def("image_decoding_available", &ImageDecodingAvailable,
             "Whether this build decodes JPEG images (libjpeg was found).");
  module.def(
      "decode_images",
      [](const py::list& encoded, const std::string& color_space, const std::string& where) {
        return DecodeBatch(encoded, color_space, where, nullptr, {});
      },
      py::arg("encoded"), py::arg("color_space"), py::arg("where"),
      "Each encoded (JPEG) image of `encoded` as a height x width x channels uint8 array in "
      "`color_space` (\"RGB\", \"BGR\" or \"GRAY\").");
  module.def(
      "decode_images_random_crop",
      [](const py::list& encoded, const std::string& color_space, const std::string& where,
         std::pair<double, double> area, std::pair<double, double> ratio, int64_t attempts,
         const std::vector<uint64_t>& seeds) {
        const RandomCropOptions options = CropOptions(area, ratio, attempts);
        return DecodeBatch(encoded, color_space, where, &options, seeds);
      },
      py::arg("encoded"), py::arg("color_space"), py::arg("where"), py::arg("random_area"),
      py::arg("random_aspect_ratio"), py::arg("num_attempts"), py::arg("seeds"),
      "decode_images, decoding only a random crop window of each image (random_crop_windows' "
      "rule; seeds[i] seeds image i's draws).");
  module.def(
      "random_crop_windows",
      [](const std::vector<std::pair<int64_t, int64_t>>& sizes, std::pair<double, double> area,
         std::pair<double, double> ratio, int64_t attempts, const std::vector<uint64_t>& seeds) {
        const RandomCropOptions options = CropOptions(area, ratio, attempts);
        std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> windows;
        for (size_t i = 0; i < sizes.size(); ++i) {
          std::mt19937_64 rng(seeds.at(i));
          const CropWindow w = RandomCropWindow(sizes[i].first, sizes[i].second, options, rng);
          windows.emplace_back(w.y, w.x, w.height, w.width);
        }
        return windows;
      },
      py::arg("sizes"), py::arg("random_area"), py::arg("random_aspect_ratio"),
      py::arg("num_attempts"), py::arg("seeds"),
      "(y, x, height, width) of a random crop of each (height, width) image: a fraction in "
      "random_area of it with aspect ratio (width / height) drawn log-uniformly in "
      "random_aspect_ratio, up to num_attempts draws, else the centered whole image with its "
      "aspect ratio clamped into the range; seeds[i] seeds image i's draws.");
  module.def(
      "resize_images",
      [](const py::sequence& images, const std::vector<std::pair<int64_t, int64_t>>& sizes,
         const std::string& interpolation_type, const std::string& where) {
        if (sizes.size() != images.size()) {
          throw Error(ErrorKind::kInternal) << where << ": " << images.size() << " images but "
                                            << sizes.size() << " target sizes";
        }
        std::vector<py::array> keep;
        std::vector<ImageView> views = ViewsOf(images, where, &keep);
        py::list out;
        std::vector<uint8_t*> targets;
        for (size_t i = 0; i < views.size(); ++i) {
          py::array_t<uint8_t> array({sizes[i].second, sizes[i].first, views[i].channels});
          targets.push_back(array.mutable_data());
          out.append(array);
        }
        {
          py::gil_scoped_release release;
          for (size_t i = 0; i < views.size(); ++i) {
            const auto [width, height] = sizes[i];
            ResizeImage(views[i], height, width,
                        ChooseInterpolation(interpolation_type, views[i].width, views[i].height,
                                            width, height, where),
                        targets[i]);
          }
        }
        return out;
      },
      py::arg("images"), py::arg("sizes"), py::arg("interpolation_type"), py::arg("where"),
      "Each height x width x channels uint8 image resized to its (width, height) in `sizes`.");
  module.def(
      "crop_mirror_normalize",
      [](const py::sequence& images, py::array_t<float, py::array::c_style> out,
         const std::vector<bool>& mirror, float crop_pos_y, float crop_pos_x,
         const std::vector<float>& mean, const std::vector<float>& inv_std, bool channels_first,
         const std::string& where) {
        std::vector<py::array> keep;
        std::vector<ImageView> views = ViewsOf(images, where, &keep);
        CropMirrorNormalizeOptions options;
        options.crop_height = out.shape(channels_first ? 2 : 1);
        options.crop_width = out.shape(channels_first ? 3 : 2);
        options.crop_pos_y = crop_pos_y;
        options.crop_pos_x = crop_pos_x;
        options.mean = mean;
        options.inv_std = inv_std;
        options.channels_first = channels_first;
        const int64_t channels = out.shape(channels_first ? 1 : 3);
        if (out.ndim() != 4 || out.shape(0) != static_cast<py::ssize_t>(views.size()) ||
            static_cast<int64_t>(mean.size()) != channels ||
            static_cast<int64_t>(inv_std.size()) != channels ||
            (!mirror.empty() && mirror.size() != views.size())) {
          throw Error(ErrorKind::kInternal) << where << ": inconsistent crop_mirror_normalize call";
        }
        for (size_t i = 0; i < views.size(); ++i) {
          if (views[i].channels != channels) {
            throw Error(ErrorKind::kValue)
                << where << ": image " << i << " has " << views[i].channels
                << " channels, expected " << channels;
          }
        }
        float* target = out.mutable_data();
        const int64_t per_image = out.size() / std::max<py::ssize_t>(out.shape(0), 1);
        py::gil_scoped_release release;
        for (size_t i = 0; i < views.size(); ++i) {
          const std::string what = "image " + std::to_string(i);
          CropMirrorNormalize(views[i], !mirror.empty() && mirror[i], options, what.c_str(),
                              target + i * per_image);
        }
      },
      py::arg("images"), py::arg("out"), py::arg("mirror"), py::arg("crop_pos_y"),
      py::arg("crop_pos_x"), py::arg("mean"), py::arg("inv_std"), py::arg("channels_first"),
      py::arg("where"),
      "Writes each image's crop (out's spatial size, at crop_pos * (size - crop)), mirrored where "
      "mirror[i], as (pixel - mean) * inv_std into the float32 batch `out` (NCHW or NHWC).");
}

}  // namespace oneflow
