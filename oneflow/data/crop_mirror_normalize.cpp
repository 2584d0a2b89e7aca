#include "oneflow/data/crop_mirror_normalize.h"

#include "oneflow/common/error.h"

namespace oneflow {

void CropMirrorNormalize(const ImageView& in, bool mirror,
                         const CropMirrorNormalizeOptions& options, const char* what, float* out) {
  const int64_t h = options.crop_height, w = options.crop_width, c = in.channels;
  if (h > in.height || w > in.width) {
    throw Error(ErrorKind::kValue)
        << "image.CropMirrorNormalize: a " << h << "x" << w << " crop does not fit " << what << " ("
        << in.height << "x" << in.width << ")";
  }
  const int64_t top = static_cast<int64_t>((in.height - h) * options.crop_pos_y);
  const int64_t left = static_cast<int64_t>((in.width - w) * options.crop_pos_x);
  for (int64_t y = 0; y < h; ++y) {
    const uint8_t* row = in.pixels + (top + y) * in.row_stride + left * c;
    for (int64_t x = 0; x < w; ++x) {
      const uint8_t* pixel = row + (mirror ? w - 1 - x : x) * c;
      for (int64_t k = 0; k < c; ++k) {
        const float value = (static_cast<float>(pixel[k]) - options.mean[k]) * options.inv_std[k];
        if (options.channels_first) {
          out[(k * h + y) * w + x] = value;
        } else {
          out[(y * w + x) * c + k] = value;
        }
      }
    }
  }
}

}  // namespace oneflow
