#pragma once
// Resizing height x width x channels uint8 images, with OpenCV's sampling conventions (pixel
// centers at +0.5, replicated borders), as OneFlow 0.3's image_resize ops do with cv::resize.

#include <cstdint>
#include <string>

namespace oneflow {

enum class Interpolation { kNearest, kBilinear, kBicubic, kArea };

// "bilinear", "nearest_neighbor" (or "nn"), "bicubic", "area", or "auto": bilinear when the
// image grows, area when it shrinks (OneFlow's rule). Anything else is a ValueError.
Interpolation ChooseInterpolation(const std::string& name, int64_t from_width, int64_t from_height,
                                  int64_t to_width, int64_t to_height, const std::string& where);

// Pixels of a height x width x channels uint8 image; `row_stride` bytes between rows (a crop of
// a larger image is a view with its stride).
struct ImageView {
  const uint8_t* pixels = nullptr;
  int64_t height = 0, width = 0, channels = 0, row_stride = 0;
};

// Writes `in` resized to out_height x out_width (same channels, rows packed) to `out`, rounding
// to the nearest uint8.
void ResizeImage(const ImageView& in, int64_t out_height, int64_t out_width,
                 Interpolation interpolation, uint8_t* out);

}  // namespace oneflow
