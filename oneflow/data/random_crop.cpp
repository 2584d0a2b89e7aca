#include "oneflow/data/random_crop.h"

#include <algorithm>
#include <cmath>

namespace oneflow {

CropWindow RandomCropWindow(int64_t height, int64_t width, const RandomCropOptions& options,
                            std::mt19937_64& rng) {
  std::uniform_real_distribution<double> area(options.area_min, options.area_max);
  std::uniform_real_distribution<double> log_ratio(std::log(options.ratio_min),
                                                   std::log(options.ratio_max));
  for (int64_t attempt = 0; attempt < options.attempts; ++attempt) {
    const double target = area(rng) * static_cast<double>(height * width);
    const double aspect = std::exp(log_ratio(rng));
    const int64_t w = std::llround(std::sqrt(target * aspect));
    const int64_t h = std::llround(std::sqrt(target / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      CropWindow window{0, 0, h, w};
      window.y = std::uniform_int_distribution<int64_t>(0, height - h)(rng);
      window.x = std::uniform_int_distribution<int64_t>(0, width - w)(rng);
      return window;
    }
  }
  const double aspect = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (aspect < options.ratio_min) {
    h = std::max<int64_t>(1, std::llround(static_cast<double>(width) / options.ratio_min));
  } else if (aspect > options.ratio_max) {
    w = std::max<int64_t>(1, std::llround(static_cast<double>(height) * options.ratio_max));
  }
  return CropWindow{(height - h) / 2, (width - w) / 2, h, w};
}

}  // namespace oneflow
