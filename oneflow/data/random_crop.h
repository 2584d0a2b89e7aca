#pragma once
// The random crop window of ImageNet-style training (OneFlow's OFRecordImageDecoderRandomCrop
// and image.random_crop): a window covering a random fraction of the image with a random aspect
// ratio.

#include <cstdint>
#include <random>

namespace oneflow {

struct CropWindow {
  int64_t y = 0, x = 0, height = 0, width = 0;
};

struct RandomCropOptions {
  double area_min = 0.08, area_max = 1.0;         // fraction of the image's area
  double ratio_min = 0.75, ratio_max = 1.333333;  // width / height, drawn log-uniformly
  int64_t attempts = 10;
};

// Draws up to options.attempts windows until one fits the image; after that many misses, the
// whole image with its aspect ratio clamped into the range, centered.
CropWindow RandomCropWindow(int64_t height, int64_t width, const RandomCropOptions& options,
                            std::mt19937_64& rng);

}  // namespace oneflow
