#pragma once
// OneFlow 0.3's CropMirrorNormalize for one image: a window cut from a height x width x channels
// uint8 image, mirrored left to right on request, normalized per channel into floats.

#include <cstdint>
#include <vector>

#include "oneflow/data/image_resize.h"

namespace oneflow {

struct CropMirrorNormalizeOptions {
  int64_t crop_height = 0, crop_width = 0;     // the window; it must fit the image
  float crop_pos_y = 0.5f, crop_pos_x = 0.5f;  // its top-left corner at pos * (size - crop)
  std::vector<float> mean, inv_std;            // one per channel: out = (pixel - mean) * inv_std
  bool channels_first = true;  // out is C x crop_h x crop_w ("NCHW"), else crop_h x crop_w x C
};

// Writes the window of `in` (mirrored when `mirror`) to `out`. `what` names the image in the
// ValueError raised when the window does not fit.
void CropMirrorNormalize(const ImageView& in, bool mirror,
                         const CropMirrorNormalizeOptions& options, const char* what, float* out);

}  // namespace oneflow
