#pragma once
// Decoding encoded images (JPEG, through libjpeg) into height x width x channels uint8 pixels, as
// OneFlow 0.3's OFRecordImageDecoder does with OpenCV. Used by python/oneflow/framework/
// image_pipeline.py through the binding in oneflow/api/python/data.cpp.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "oneflow/data/random_crop.h"

namespace oneflow {

enum class ColorSpace { kRGB, kBGR, kGray };

// "RGB", "BGR" or "GRAY" (any case); anything else is a ValueError naming `where`.
ColorSpace ParseColorSpace(const std::string& name, const std::string& where);
int64_t ColorSpaceChannels(ColorSpace color_space);

struct Image {
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 0;
  std::vector<uint8_t> pixels;  // row-major height x width x channels
};

// True when libjpeg was found at build time (otherwise DecodeImage throws NotImplementedError).
bool ImageDecodingAvailable();

// Chooses the window of an image (given its height and width) to decode.
using ChooseWindow = std::function<CropWindow(int64_t height, int64_t width)>;

// The image `bytes` encodes, in `color_space` channel order; only the window `crop` chooses when
// given (rows outside it are skipped and columns mostly too, so a crop decodes faster). `what`
// names the image in errors ("image 3"); bytes that are not a JPEG, or a corrupt one, are a
// ValueError.
Image DecodeImage(std::string_view bytes, ColorSpace color_space, const std::string& what,
                  const ChooseWindow& crop = nullptr);

}  // namespace oneflow
