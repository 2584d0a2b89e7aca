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
  // Channel by channel for NCHW, so writes are sequential; each row is read mirrored or not.
  const int64_t step = mirror ? -c : c;
  for (int64_t y = 0; y < h; ++y) {
    const uint8_t* row = in.pixels + (top + y) * in.row_stride + left * c;
    const uint8_t* first = mirror ? row + (w - 1) * c : row;
    if (options.channels_first) {
      for (int64_t k = 0; k < c; ++k) {
        const float mean = options.mean[k], scale = options.inv_std[k];
        const uint8_t* pixel = first + k;
        float* target = out + (k * h + y) * w;
        for (int64_t x = 0; x < w; ++x) {
          target[x] = (static_cast<float>(pixel[x * step]) - mean) * scale;
        }
      }
    } else {
      float* target = out + y * w * c;
      for (int64_t x = 0; x < w; ++x) {
        const uint8_t* pixel = first + x * step;
        for (int64_t k = 0; k < c; ++k) {
          target[x * c + k] = (static_cast<float>(pixel[k]) - options.mean[k]) * options.inv_std[k];
        }
      }
    }
  }
}

}  // namespace oneflow
